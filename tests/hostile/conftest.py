"""The hostile suite: every leak, crash, hang and never-raise test, and their timing.

``pytest tests/hostile`` runs the ``dev`` profile (100 inputs per property; CI runs ``ci``, a
few hundred); ``HYPOTHESIS_PROFILE=hostile pytest tests/hostile`` runs 5000 and
``HYPOTHESIS_PROFILE=hostile-100k pytest tests/hostile`` 100,000 per property (hours on two
cores; the profiles are registered in ``tests/conftest.py``; ``kill -INT`` stops such a run
early, with its summary, when it runs in one process: ``-n 0``). Either way the run ends with
the number of inputs tried and the slowest single call, per function, the pytest-xdist
workers' tables merged.
``benchmarks/hostile_growth.py`` reports how the worst inputs grow with size.
"""

from __future__ import annotations

import gc
import os
import signal
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

if os.environ.get("HYPOTHESIS_PROFILE", "dev") not in ("dev", "ci"):
    # A long run is best started in the background, where a non-interactive shell starts it
    # with SIGINT ignored: restore it, so `kill -INT PID` stops the run early and pytest still
    # prints the summary below (the inputs tried so far per function).
    signal.signal(signal.SIGINT, signal.default_int_handler)

HANG: float = 1.0
"""A call that works the CPU longer than this is a hang (a pathological pattern), not a slow
machine."""
STALL: float = 10.0
"""A call that takes longer than this by the clock is a hang too (a wait on something), however
little CPU it used: the backstop for what CPU time cannot see."""

_T = TypeVar("_T")
SLOWEST: dict[str, tuple[float, int, str]] = {}


def timed(name: str, func: Callable[[], _T], *shown: object) -> _T:
    """Call ``func``, remember the slowest call per ``name`` (and ``shown``, its input), and
    fail on a hang.

    The call's time is the CPU time of this thread, so a long run can share a busy machine
    (at a low priority) without a time slice spent waiting being taken for a slow input; a
    call that takes ``STALL`` seconds by the clock fails as well. The garbage collector is
    paused during the call: a collection of the whole test process's heap can land in any
    call, and its pause belongs to the process, not to the input being timed.
    """
    gc.disable()
    try:
        start, wall = time.thread_time(), time.perf_counter()
        result = func()
        elapsed, waited = time.thread_time() - start, time.perf_counter() - wall
    finally:
        gc.enable()
    worst, count, what = SLOWEST.get(name, (0.0, 0, ""))
    if elapsed > worst:
        worst, what = elapsed, ", ".join(_short(item) for item in shown)
    SLOWEST[name] = (worst, count + 1, what)
    assert elapsed < HANG, f"{name} worked {elapsed:.3f} s of CPU on one input"
    assert waited < STALL, f"{name} took {waited:.3f} s on one input"
    return result


def _short(item: object) -> str:
    text = repr(item)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} chars)"


@pytest.fixture(scope="session", autouse=True)
def _warm() -> None:
    """Load the adapters and compile their patterns before any input is timed.

    The first call of a process imports the provider adapters and compiles their rules;
    that is a one-off cost of the process, not of the input that happened to come first.
    """
    from normalize_errors import diagnose, from_response, normalize

    for provider in (None, "openai", "anthropic", "google", "http"):
        from_response(502, {"retry-after": "1"}, '{"error": {"message": "x"}}', provider=provider)
        from_response(502, {}, "<html><title>x</title></html>", provider=provider)
        diagnose({"choices": []}, provider=provider)
    normalize(TimeoutError())


def report(terminalreporter: Any) -> None:
    """Print how many hostile inputs each function took, and its slowest single call (called
    by ``tests/conftest.py``'s ``pytest_terminal_summary``, which runs in the process that
    prints the summary, also under pytest-xdist)."""
    if not SLOWEST:
        return
    terminalreporter.section("hostile inputs: slowest single call per function (CPU time)")
    for name, (worst, count, what) in sorted(SLOWEST.items()):
        terminalreporter.write_line(
            f"{name:<16} {count:>6} inputs, slowest {worst * 1000:8.3f} ms  ({what})"
        )


def merge(table: dict[str, Any]) -> None:
    """Add a pytest-xdist worker's ``SLOWEST`` (sent at its end) to this process's."""
    for name, (worst, count, what) in table.items():
        mine, total, shown = SLOWEST.get(name, (0.0, 0, ""))
        if worst > mine:
            mine, shown = worst, what
        SLOWEST[name] = (mine, total + count, shown)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker, hand this worker's table to the controller, which merges the
    workers' tables (``tests/conftest.py``, ``pytest_testnodedown``)."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None and SLOWEST:
        output["hostile_slowest"] = {name: list(row) for name, row in SLOWEST.items()}


def run(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Shorthand: ``timed(func.__name__, lambda: func(*args, **kwargs))``."""
    return timed(func.__name__, lambda: func(*args, **kwargs))
