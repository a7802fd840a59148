"""Hypothesis profiles for the hostile suite, and a report of the slowest input seen.

``pytest tests/hostile`` runs the CI profile (a few hundred inputs per property);
``HYPOTHESIS_PROFILE=hostile pytest tests/hostile`` runs many more. Either way the run ends
with the number of inputs tried and the slowest single call, per function.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "hostile",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

HANG: float = 1.0
"""A call slower than this is a hang (a pathological pattern), not a slow machine."""

_T = TypeVar("_T")
SLOWEST: dict[str, tuple[float, int]] = {}


def timed(name: str, func: Callable[[], _T]) -> _T:
    """Call ``func``, remember the slowest call per ``name``, and fail on a hang."""
    start = time.perf_counter()
    result = func()
    elapsed = time.perf_counter() - start
    worst, count = SLOWEST.get(name, (0.0, 0))
    SLOWEST[name] = (max(worst, elapsed), count + 1)
    assert elapsed < HANG, f"{name} took {elapsed:.3f} s on one input"
    return result


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print how many hostile inputs each function took, and its slowest single call."""
    if not SLOWEST:
        return
    terminalreporter.section("hostile inputs: slowest single call per function")
    for name, (worst, count) in sorted(SLOWEST.items()):
        terminalreporter.write_line(f"{name:<28} {count:>7} inputs, slowest {worst * 1000:8.3f} ms")


def run(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Shorthand: ``timed(func.__name__, lambda: func(*args, **kwargs))``."""
    return timed(func.__name__, lambda: func(*args, **kwargs))
