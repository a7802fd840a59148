"""Retries on tenacity that follow the harness answer, always bounded.

Needs the ``tenacity`` extra (``pip install normalize-errors[tenacity]``):

```python
from normalize_errors.retry import retrying

completion = retrying(attempts=4, total=60)(
    client.chat.completions.create, model="gpt-4o-mini", messages=messages
)
```

* ``retry_if_retryable``: a tenacity retry condition; it normalizes any exception and
  retries only when the answer is ``retryable``.
* ``wait_retry_after(cap=..., initial=..., maximum=..., jitter=...)``: waits the error's
  ``retry_after`` (capped), else exponential backoff with jitter.
* ``retrying(...)`` / ``async_retrying(...)``: a ``Retrying`` / ``AsyncRetrying`` made of
  those parts whose stop is always bounded in attempts and in total time (draft section 10:
  a producer's hints never cause unbounded retries). Call it with any callable (a wrapped or
  plain SDK method, a framework's ``run``) and its arguments, or decorate with ``.wraps``.
  What it raises is always a ``HarnessError`` (the original exception as ``__cause__``):

    - an error that is not retryable is raised at once;
    - a ``retry_after`` longer than ``cap`` is not slept: the error is raised at once, with
      its ``retry_after``, for the caller to schedule;
    - when the attempts or the time run out, the last error is raised with ``attempts`` and
      ``max_attempts`` counting this helper's own attempts and the earlier errors in
      ``causes``; when every failure was an output error, it is ``output.retries_exhausted``
      with the individual errors in ``causes`` (most recent first).

* ``repair(call, ...)`` / ``async_repair(call, ...)``: the repair loop for errors the model
  can fix (``model_recoverable``): ``call(feedback)`` is called with ``None``, then with the
  last error's ``feedback_for_model()`` for the caller to re-prompt with, bounded the same
  way, ending in ``output.retries_exhausted``.

* ``budget=`` (a ``normalize_errors.resilience.Budget``, else the one made current with
  ``with budget:``) bounds the attempts, time and cost of a whole run, shared with
  ``fallback()`` and the circuit breaker: it ends in ``loop.budget_exceeded``.
* Replay safety: a stream that already delivered output is never retried, and a request that
  may have run on the server (a read timeout after sending) only with ``idempotent=True``;
  a call marked ``non_idempotent=True`` is retried only when its request surely reached no
  server (a connection never made, a circuit breaker's refusal, a 429). Such an error is
  raised not retryable, its ``detail`` saying why.
* Every attempt is on the error raised (``attempt_log``: code, provider, status, seconds,
  whether output reached the caller), and a span of its own under the current one when
  OpenTelemetry records (``normalize_errors.resilience._attempts``).

**SDK retries multiply.** The openai and anthropic clients retry on their own
(``max_retries``, default 2): with ``retrying(attempts=4)`` around a default client one call
can make 4 x 3 = 12 requests, and the SDK sleeps without seeing ``cap``. Build the client
with ``max_retries=0`` when you use these helpers, so the waits and the bound are all here;
the SDK's own retry facts (e.g. a retry-count header) stay in each error's ``upstream``.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, NoReturn, TypeVar

import tenacity
from tenacity import RetryCallState

from ._facade import normalize
from ._model._code_classes import BudgetExceededError, class_for_code
from ._model._dropin import copy_dropin
from ._model._exceptions import HarnessError
from .resilience._attempts import Tracker
from .resilience._budget import Budget, attempt, chosen
from .resilience._common import marking, refused, replay_refusal

__all__ = [
    "ATTEMPTS",
    "CAP",
    "TOTAL",
    "AsyncHarnessRetrying",
    "HarnessRetrying",
    "async_repair",
    "async_retrying",
    "repair",
    "retry_if_retryable",
    "retrying",
    "wait_retry_after",
]

_T = TypeVar("_T")

ATTEMPTS: Final = 4
"""Default bound on attempts (the first call included)."""
TOTAL: Final = 120.0
"""Default bound on the total time in seconds: no sleep that would end past it is started."""
CAP: Final = 60.0
"""Default longest wait in seconds; a longer ``retry_after`` is raised, not slept."""


def _retryable(exc: BaseException) -> bool:
    return normalize(exc).retryable


retry_if_retryable: Final = tenacity.retry_if_exception(_retryable)
"""Retry when the harness answer for the exception is ``retryable`` (any exception)."""


class _WaitRetryAfter(tenacity.wait.wait_base):
    """The wait ``wait_retry_after`` returns."""

    def __init__(self, cap: float, initial: float, maximum: float, jitter: float) -> None:
        self.cap = cap
        self.backoff = tenacity.wait_exponential_jitter(
            initial=initial, max=min(maximum, cap), jitter=jitter
        )

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = None if outcome is None else outcome.exception()
        after = None if exc is None else normalize(exc).retry_after
        if after is not None:
            return min(after, self.cap)
        return min(float(self.backoff(retry_state)), self.cap)


def wait_retry_after(
    *, cap: float = CAP, initial: float = 1.0, maximum: float = 30.0, jitter: float = 1.0
) -> tenacity.wait.wait_base:
    """A tenacity wait: the error's ``retry_after`` up to ``cap`` seconds, else backoff.

    The backoff is exponential from ``initial`` seconds, at most ``maximum`` (and ``cap``),
    plus up to ``jitter`` random seconds. Used alone it caps a long ``retry_after``;
    ``retrying()`` raises such an error instead of waiting.
    """
    return _WaitRetryAfter(cap, initial, maximum, jitter)


def _worth_retrying(cap: float) -> tenacity.retry_base:
    def worth(exc: BaseException) -> bool:
        err = normalize(exc)
        return err.retryable and (err.retry_after is None or err.retry_after <= cap)

    return tenacity.retry_if_exception(worth)


class _Run:
    """One call of a retrying object: its budget, and the budget's error once it stops it."""

    __slots__ = ("budget", "error")

    def __init__(self, budget: Budget | None) -> None:
        self.budget = budget
        self.error: BudgetExceededError | None = None


_RUN: Final[contextvars.ContextVar[_Run | None]] = contextvars.ContextVar(
    "normalize_errors_retry_run", default=None
)
"""The run of the innermost retrying call in this context (a retrying object may be called
from several threads or tasks at once: each has its own)."""


class _BudgetStop(tenacity.stop.stop_base):
    """Stop when the run's budget cannot afford the next attempt or the wait before it."""

    def __call__(self, retry_state: RetryCallState) -> bool:
        run = _RUN.get()
        if run is None or run.budget is None:
            return False
        budget = run.budget
        run.error = budget.exceeded() or budget.exceeded_by_wait(retry_state.upcoming_sleep)
        return run.error is not None


def _options(attempts: int, total: float, cap: float, sleep: Any, wait: Any) -> dict[str, Any]:
    if attempts < 1 or not total > 0 or not cap >= 0:
        raise ValueError("attempts must be >= 1, total > 0 and cap >= 0")
    options: dict[str, Any] = {
        "stop": tenacity.stop_after_attempt(attempts)
        | tenacity.stop_before_delay(total)
        | _BudgetStop(),
        "wait": wait if wait is not None else wait_retry_after(cap=cap),
        "retry": _worth_retrying(cap),
    }
    if sleep is not None:
        options["sleep"] = sleep
    return options


def _is_output(err: HarnessError) -> bool:
    return err.problem.code.startswith("output.")


def _exhausted(errors: list[HarnessError], max_attempts: int) -> HarnessError:
    """The error raised when ``errors`` (one per attempt, oldest first) used up the bound.

    Every failure an output error: ``output.retries_exhausted`` with them all in ``causes``,
    most recent first. Otherwise a copy of the last error (of a drop-in, a drop-in) with
    ``attempts`` and ``max_attempts`` set and the earlier errors after its own ``causes``:
    the caller's error objects are never changed, even when the call raised the same object
    on every attempt (a ``Mock(side_effect=err)``, a circuit breaker's stored error).
    """
    last = errors[-1]
    earlier = list(reversed(errors[:-1]))
    if all(_is_output(err) for err in errors):
        top = class_for_code("output.retries_exhausted")(
            f"{len(errors)} attempts gave output errors; the last: {last.problem.code}"
            + (f": {last.detail}" if last.detail else ""),
            attempts=len(errors),
            max_attempts=max_attempts,
            causes=[last, *earlier],
        )
    elif last.problem is not last:  # a drop-in from wrap(): a copy of the drop-in, so that
        top = copy_dropin(last)  # `except openai.InternalServerError` still catches it
        top.attempts = len(errors)
        top.max_attempts = max_attempts
        top.causes = _others(top, [*last.causes, *earlier])
        return top  # with the vendor exception's own chain, as the copy of a drop-in has it
    else:
        top = last._clone()
        top.attempts = len(errors)
        top.max_attempts = max_attempts
        top.causes = _others(top, [*last.causes, *earlier])
    top.__cause__ = last.__cause__ if last.__cause__ is not None else last
    return top


def _others(top: HarnessError, causes: list[HarnessError]) -> list[HarnessError]:
    """``causes`` without ``top`` itself (nor its harness view), which would make the error
    its own cause and ``to_dict`` recurse without end."""
    return [cause for cause in causes if cause is not top and cause.problem is not top.problem]


def _typed(exc: BaseException) -> HarnessError:
    """The harness error for ``exc``; a drop-in (already a harness error) stays itself."""
    return exc if isinstance(exc, HarnessError) else normalize(exc)


def _failed(
    exc: Exception, errors: list[HarnessError], idempotent: bool, non_idempotent: bool
) -> HarnessError:
    """The error an attempt raises: typed, and not retryable when it may not be replayed."""
    err = _typed(exc)
    errors.append(err)
    why = (
        replay_refusal(err, idempotent=idempotent, non_idempotent=non_idempotent)
        if err.retryable
        else None
    )
    return err if why is None else refused(err, why)


def _raise_logged(err: HarnessError, tracker: Tracker) -> NoReturn:
    """Raise ``err`` with the run's ``attempt_log`` (a copy: a drop-in keeps its chain)."""
    top = tracker.logged(err)
    if top.problem is not top:  # a drop-in: its cause is the vendor exception's own
        raise top
    raise top from top.__cause__


class HarnessRetrying(tenacity.Retrying):
    """A ``tenacity.Retrying`` that raises harness errors (what ``retrying()`` returns)."""

    max_attempts: int = ATTEMPTS
    budget: Budget | None = None
    """The run's budget (``retrying(budget=...)``); ``None``: the current one, if any."""
    idempotent: bool = False
    """Whether a request that may have run on the server may be sent again."""
    non_idempotent: bool = False
    """Whether the call is never sent again once its request may have reached a server."""

    def __call__(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        errors: list[HarnessError] = []
        budget = chosen(self.budget)
        run = _Run(budget)
        tracker = Tracker("retry")
        token = _RUN.set(run)
        with marking(self.non_idempotent, self.idempotent) as non_idempotent:

            def one(*a: Any, **k: Any) -> _T:
                with attempt(budget) as frame, tracker.attempt() as step:
                    try:
                        return fn(*a, **k)
                    except Exception as exc:
                        err = _failed(exc, errors, self.idempotent, non_idempotent)
                        frame.failed(err)
                        step.failed(err)
                        if err is exc:  # a drop-in from wrap(): as it was raised
                            raise
                        raise err from err.problem.__cause__

            try:
                return super().__call__(one, *args, **kwargs)
            except tenacity.RetryError:
                if run.error is not None:
                    spent = tracker.logged(run.error)
                    raise spent from errors[-1] if errors else None
                _raise_logged(_exhausted(errors, self.max_attempts), tracker)
            except HarnessError as err:  # not retried: raised at once, with its attempts
                _raise_logged(err, tracker)
            finally:
                _RUN.reset(token)


class AsyncHarnessRetrying(tenacity.AsyncRetrying):
    """A ``tenacity.AsyncRetrying`` that raises harness errors (``async_retrying()``)."""

    max_attempts: int = ATTEMPTS
    budget: Budget | None = None
    idempotent: bool = False
    non_idempotent: bool = False

    async def __call__(  # type: ignore[override]
        self, fn: Callable[..., Awaitable[_T]], *args: Any, **kwargs: Any
    ) -> _T:
        errors: list[HarnessError] = []
        budget = chosen(self.budget)
        run = _Run(budget)
        tracker = Tracker("retry")
        token = _RUN.set(run)
        with marking(self.non_idempotent, self.idempotent) as non_idempotent:

            async def one(*a: Any, **k: Any) -> _T:
                with attempt(budget) as frame, tracker.attempt() as step:
                    try:
                        return await fn(*a, **k)
                    except Exception as exc:
                        err = _failed(exc, errors, self.idempotent, non_idempotent)
                        frame.failed(err)
                        step.failed(err)
                        if err is exc:  # a drop-in from wrap(): as it was raised
                            raise
                        raise err from err.problem.__cause__

            try:
                result: _T = await super().__call__(one, *args, **kwargs)
            except tenacity.RetryError:
                if run.error is not None:
                    spent = tracker.logged(run.error)
                    raise spent from errors[-1] if errors else None
                _raise_logged(_exhausted(errors, self.max_attempts), tracker)
            except HarnessError as err:  # not retried: raised at once, with its attempts
                _raise_logged(err, tracker)
            finally:
                _RUN.reset(token)
        return result


def retrying(
    *,
    attempts: int = ATTEMPTS,
    total: float = TOTAL,
    cap: float = CAP,
    wait: tenacity.wait.wait_base | None = None,
    sleep: Callable[[float], None] | None = None,
    budget: Budget | None = None,
    idempotent: bool = False,
    non_idempotent: bool = False,
) -> HarnessRetrying:
    """A bounded ``Retrying``: call it as ``retrying(...)(fn, *args, **kwargs)``.

    Args:
        attempts: most calls of ``fn``, the first included (>= 1).
        total: seconds; a wait that would end past this since the first call is not started.
        cap: longest wait; an error whose ``retry_after`` is longer is raised at once.
        wait: a tenacity wait instead of ``wait_retry_after(cap=cap)``.
        sleep: what sleeps (default ``time.sleep``); tests pass a recorder.
        budget: the run's ``Budget`` (default: the one made current with ``with budget:``);
            each call of ``fn`` is one of its attempts, and no attempt or wait starts that
            it cannot afford (``loop.budget_exceeded``).
        idempotent: the call may be sent again after a failure that may have run on the
            server (a read timeout after sending). A stream that already delivered output
            is never replayed (``err.stream`` says, whatever ``wrap(check=...)`` said): its
            error is raised, not retryable, its ``detail`` saying why; one that failed
            before its first output may be.
        non_idempotent: the call must not run twice (it has side effects): it is sent again
            only when its request surely reached no server (a connection never made, a
            circuit breaker's refusal, a 429); helpers nested inside honour the mark too.

    Raises:
        ValueError: a bound is not positive.
    """
    if idempotent and non_idempotent:
        raise ValueError("a call is idempotent or non_idempotent, not both")
    made = HarnessRetrying(**_options(attempts, total, cap, sleep, wait))
    made.max_attempts = attempts
    made.budget = budget
    made.idempotent = idempotent
    made.non_idempotent = non_idempotent
    return made


def async_retrying(
    *,
    attempts: int = ATTEMPTS,
    total: float = TOTAL,
    cap: float = CAP,
    wait: tenacity.wait.wait_base | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    budget: Budget | None = None,
    idempotent: bool = False,
    non_idempotent: bool = False,
) -> AsyncHarnessRetrying:
    """``retrying()`` for coroutines: ``await async_retrying(...)(fn, *args, **kwargs)``."""
    if idempotent and non_idempotent:
        raise ValueError("a call is idempotent or non_idempotent, not both")
    made = AsyncHarnessRetrying(**_options(attempts, total, cap, sleep, wait))
    made.max_attempts = attempts
    made.budget = budget
    made.idempotent = idempotent
    made.non_idempotent = non_idempotent
    return made


def _repairable(err: HarnessError) -> bool:
    return err.model_recoverable and err.feedback_for_model() is not None


def _repair_step(
    exc: Exception, errors: list[HarnessError], attempts: int, started: float, total: float
) -> str:
    """Record a failed attempt; the feedback for the next, or raise what ends the loop."""
    err = _typed(exc)
    if not _repairable(err):
        if err is exc:
            raise err
        raise err from exc
    errors.append(err)
    if len(errors) >= attempts or time.monotonic() - started >= total:
        top = _exhausted(errors, attempts)
        if top.problem.code != "output.retries_exhausted":
            top = class_for_code("output.retries_exhausted")(
                f"{len(errors)} attempts; the model did not fix: {err.problem.code}",
                attempts=len(errors),
                max_attempts=attempts,
                causes=list(reversed(errors)),
            )
        raise top from exc
    feedback = err.feedback_for_model()
    assert feedback is not None  # _repairable checked it
    return feedback


def repair(
    call: Callable[[str | None], _T],
    *,
    attempts: int = 3,
    total: float = TOTAL,
    budget: Budget | None = None,
) -> _T:
    """Call ``call(feedback)`` until it returns, re-prompting the model on its own mistakes.

    ``call`` gets ``None`` first, then the last error's ``feedback_for_model()``: add it to
    the conversation and ask again. Only errors the model can fix (``model_recoverable``,
    with ``model_feedback``) are repaired; any other error is raised at once as a
    ``HarnessError``. After ``attempts`` calls (or ``total`` seconds) it raises
    ``output.retries_exhausted`` with every failure in ``causes``, most recent first.
    Combine with ``retrying()`` inside ``call`` for transient failures. ``budget`` (default:
    the current one) counts each call as an attempt of the run.
    """
    errors: list[HarnessError] = []
    feedback: str | None = None
    started = time.monotonic()
    run = chosen(budget)
    while True:
        with attempt(run) as frame:
            try:
                return call(feedback)
            except Exception as exc:
                frame.failed(exc)
                feedback = _repair_step(exc, errors, attempts, started, total)


async def async_repair(
    call: Callable[[str | None], Awaitable[_T]],
    *,
    attempts: int = 3,
    total: float = TOTAL,
    budget: Budget | None = None,
) -> _T:
    """``repair()`` for a coroutine function."""
    errors: list[HarnessError] = []
    feedback: str | None = None
    started = time.monotonic()
    run = chosen(budget)
    while True:
        with attempt(run) as frame:
            try:
                return await call(feedback)
            except Exception as exc:
                frame.failed(exc)
                feedback = _repair_step(exc, errors, attempts, started, total)
