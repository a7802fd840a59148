"""Helpers of the resilience tests."""

from __future__ import annotations

from collections.abc import Callable

from normalize_errors import HarnessError


def failed(call: Callable[[], object]) -> HarnessError:
    """The harness error ``call`` raises (the test fails if it raises none or another)."""
    try:
        call()
    except HarnessError as err:
        return err
    raise AssertionError("no harness error was raised")


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
