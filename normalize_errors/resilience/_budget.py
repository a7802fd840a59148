"""Run budgets: one bound on attempts, time and cost over every helper of a run.

The draft's section 10: a consumer that retries automatically MUST enforce its own limits on
attempts, time and cost. A ``Budget`` is made for one run and handed to (or made current for)
``retrying()``, ``repair()``, ``fallback()`` and ``CircuitBreaker.call``; each request sent to
an upstream is one attempt, however the helpers are nested (see ``Budget.attempt``). A call a
circuit breaker refused sent nothing: it is no attempt.

One budget may be shared by several asyncio tasks or threads at once (the branches of one
run): its counts are kept under a lock, and ``with budget:`` makes it current in the context
that entered it only (each task and thread has its own).
"""

from __future__ import annotations

import contextvars
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from .._facade import normalize
from .._model._code_classes import BudgetExceededError
from .._model._exceptions import HarnessError
from ._common import refused_by_breaker

__all__ = ["Budget", "attempt", "chosen", "current_budget"]

_CURRENT: Final[contextvars.ContextVar[Budget | None]] = contextvars.ContextVar(
    "normalize_errors_budget", default=None
)
_FRAMES: Final[contextvars.ContextVar[tuple[_Frame, ...]]] = contextvars.ContextVar(
    "normalize_errors_budget_frames", default=()
)
_ENTERED: Final[contextvars.ContextVar[tuple[contextvars.Token[Budget | None], ...]]] = (
    contextvars.ContextVar("normalize_errors_budget_entered", default=())
)
"""The tokens of the ``with budget:`` blocks open in this context, innermost last: each
task and thread leaves its own blocks, whatever the others do meanwhile."""
MAX_KEPT: Final = 64
"""Most failed attempts a budget keeps for ``causes`` (the error bounds them again)."""


def current_budget() -> Budget | None:
    """The budget made current by ``with budget:`` in this context, if any."""
    return _CURRENT.get()


class _Frame:
    """One attempt of a budget, as the helper that opened it sees it."""

    __slots__ = ("budget", "nested", "owns")

    def __init__(self, budget: Budget | None, owns: bool = False) -> None:
        self.budget = budget
        self.nested = False
        """An attempt was opened inside this one (it counts, not this one)."""
        self.owns = owns
        """This frame holds one of the budget's counted attempts."""

    def failed(self, exc: BaseException) -> None:
        """Keep the attempt's error for the budget's ``causes`` (the innermost attempt's);
        give its count back when a circuit breaker refused it (no request was sent)."""
        if self.budget is None or self.nested:
            return
        err = exc if isinstance(exc, HarnessError) else normalize(exc)
        if self.owns and refused_by_breaker(err):
            self.owns = False
            self.budget.refund()
        if err.problem.code != "loop.budget_exceeded":
            self.budget.record(err)


def _number(value: object) -> float | None:
    """``value`` as a float when it is a real number (not a bool, not NaN), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


def _limit(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if _number(value) is None:
        raise ValueError(f"{name} must be a number, not {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, not {value!r}")
    return float(value)


class Budget:
    """Limits on the attempts, seconds and cost of one run, shared by every helper in it.

    Args:
        attempts: most calls of an upstream in the run (retries and fallbacks together).
        seconds: most seconds from the budget's making; no attempt starts past them and no
            wait is started that would end past them.
        cost: most cost, in the caller's own unit, reported with ``charge(cost)``.
        clock: what tells the time (``time.monotonic``); tests pass their own.

    Pass it as ``budget=`` to the helpers, or make it current for a block: ``with budget:``.
    When it runs out the helper raises ``loop.budget_exceeded`` (``BudgetExceededError``)
    whose ``limit`` names the limit (``name``, ``value``, ``observed``) and whose ``causes``
    are the failed attempts of the run, most recent first.
    """

    def __init__(
        self,
        *,
        attempts: int | None = None,
        seconds: float | None = None,
        cost: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if attempts is not None and type(attempts) is not int:
            raise ValueError(f"attempts must be an int, not {attempts!r}")
        self.max_attempts = None if attempts is None else int(_limit("attempts", attempts) or 0)
        self.max_seconds = _limit("seconds", seconds)
        self.max_cost = _limit("cost", cost)
        self.clock = clock
        self.started = clock()
        self.attempts = 0
        """Attempts started so far."""
        self.cost = 0.0
        """Cost reported so far with ``charge``."""
        self.errors: list[HarnessError] = []
        """The failed attempts' errors, oldest first (at most ``MAX_KEPT``, the newest)."""
        self._lock = threading.Lock()

    # -- reading ---------------------------------------------------------------------------

    @property
    def elapsed(self) -> float:
        """Seconds since the budget was made."""
        return max(self.clock() - self.started, 0.0)

    def exceeded(self, *, starting: bool = True) -> BudgetExceededError | None:
        """The error to raise if the run may not go on, else ``None``.

        ``starting`` asks about starting one more attempt: with ``attempts=5`` the sixth is
        refused, and its ``limit.observed`` is 6 (the attempts the run asked for).
        """
        with self._lock:
            return self._refusal(starting)

    def _refusal(self, starting: bool = True) -> BudgetExceededError | None:
        """``exceeded``, the lock held (so that a check and a count are one step)."""
        if self.max_attempts is not None and starting and self.attempts >= self.max_attempts:
            return self._error("attempts", self.max_attempts, self.attempts + 1)
        if self.max_cost is not None and self.cost >= self.max_cost:
            return self._error("cost", self.max_cost, self.cost)
        if self.max_seconds is not None:
            elapsed = self.elapsed
            if elapsed >= self.max_seconds:
                return self._error("seconds", self.max_seconds, round(elapsed, 3))
        return None

    def exceeded_by_wait(self, seconds: float) -> BudgetExceededError | None:
        """The error to raise if a wait of ``seconds`` would end past the time left."""
        if self.max_seconds is None or not seconds > 0:
            return None
        elapsed = self.elapsed
        if elapsed + seconds < self.max_seconds:
            return None
        with self._lock:
            return self._error("seconds", self.max_seconds, round(elapsed + seconds, 3))

    def _error(self, name: str, value: float, observed: float) -> BudgetExceededError:
        shown = int(value) if name == "attempts" else value
        made = int(observed) if name == "attempts" else observed
        last = self.errors[-1].problem.code if self.errors else None
        detail = f"the run's budget of {shown} {name} is spent ({made} asked for)"
        if last is not None:
            detail += f"; the last attempt failed with {last}"
        unit = {"attempts": "attempts", "seconds": "s"}.get(name)
        limit: dict[str, Any] = {"name": name, "value": shown, "observed": made}
        if unit is not None:
            limit["unit"] = unit
        return BudgetExceededError(
            detail,
            attempts=self.attempts,
            max_attempts=self.max_attempts,
            limit=limit,
            causes=list(reversed(self.errors)),
        )

    # -- spending --------------------------------------------------------------------------

    def charge(self, cost: float) -> None:
        """Add the cost of an attempt, in the budget's unit (NaN and negatives are refused)."""
        number = _number(cost)
        if number is None or number < 0 or math.isinf(number):
            raise ValueError(f"cost must be a finite number >= 0, not {cost!r}")
        with self._lock:
            self.cost += number

    def refund(self) -> None:
        """Give back one attempt that sent no request (a circuit breaker refused it)."""
        with self._lock:
            self.attempts = max(self.attempts - 1, 0)

    def record(self, err: HarnessError) -> None:
        """Keep a failed attempt's error for the ``causes`` of the budget's error."""
        with self._lock:
            if any(kept is err for kept in self.errors[-4:]):
                return
            self.errors.append(err)
            del self.errors[:-MAX_KEPT]

    def check(self) -> None:
        """Raise ``BudgetExceededError`` if the cost or the time is spent."""
        error = self.exceeded(starting=False)
        if error is not None:
            raise error

    @contextmanager
    def attempt(self) -> Iterator[_Frame]:
        """One call of an upstream: raises ``BudgetExceededError`` when none may start.

        Helpers nest (a fallback over ``retrying()`` around ``CircuitBreaker.call``): only the
        innermost counts. The first attempt opened inside another takes over its count; each
        further one counts one more. An attempt a circuit breaker refused gives its count
        back (``_Frame.failed``).
        """
        frames = _FRAMES.get()
        parent = next((f for f in reversed(frames) if f.budget is self), None)
        if parent is not None and not parent.nested:
            parent.nested = True  # the parent's count is this attempt's
            frame = _Frame(self, owns=parent.owns)
            parent.owns = False
        else:
            with self._lock:
                error = self._refusal()
                if error is None:
                    self.attempts += 1
            if error is not None:
                raise error
            frame = _Frame(self, owns=True)
        token = _FRAMES.set((*frames, frame))
        try:
            yield frame
        finally:
            _FRAMES.reset(token)

    # -- current ---------------------------------------------------------------------------

    def __enter__(self) -> Budget:
        _ENTERED.set((*_ENTERED.get(), _CURRENT.set(self)))
        return self

    def __exit__(self, *exc: object) -> None:
        entered = _ENTERED.get()
        if not entered:  # pragma: no cover - a misuse: __exit__ without __enter__
            raise RuntimeError("leaving a 'with budget:' block this context did not enter")
        _ENTERED.set(entered[:-1])
        _CURRENT.reset(entered[-1])

    def __repr__(self) -> str:
        return (
            f"Budget(attempts={self.attempts}/{self.max_attempts}, "
            f"seconds={self.elapsed:.3f}/{self.max_seconds}, cost={self.cost}/{self.max_cost})"
        )


def chosen(budget: Budget | None) -> Budget | None:
    """``budget`` when given, else the current one."""
    return budget if budget is not None else _CURRENT.get()


@contextmanager
def attempt(budget: Budget | None) -> Iterator[_Frame]:
    """``budget.attempt()``, or a frame that keeps nothing when there is no budget."""
    if budget is None:
        yield _Frame(None)
    else:
        with budget.attempt() as frame:
            yield frame
