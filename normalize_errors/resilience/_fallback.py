"""Fallbacks over callables: where a failed call goes next, decided by the harness code.

``fallback(*calls)`` tries each in turn while the error says another provider may succeed.
``FallbackPlan`` declares, as data, where each kind of failure goes: a context overflow to a
model with a larger window, a content filter to another vendor, a spent quota to a quota
fallback, an overload to the next provider, a wrong request to nobody (LiteLLM's
``context_window_fallbacks`` and ``content_policy_fallbacks``, keyed here on the harness
code). Both share one run (``_Run``): budgets, replay safety, the attempt log, the rule of
which error surfaces.

**Which error surfaces when every attempt failed:** the last attempt's error, whole (its
code, detail, status, ``upstream`` and vendor class together, never one attempt's status with
another's message), with the earlier attempts' errors in ``causes`` (most recent first),
``attempts`` the number of calls made, and ``attempt_log``. Two exceptions: a run its budget
stopped raises ``loop.budget_exceeded``; a call that may not be replayed raises its own error,
not retryable, its ``detail`` saying why.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Generic, TypeVar

from .._facade import diagnose
from .._model._exceptions import HarnessError
from .._model._registry import CODES
from ._attempts import Tracker
from ._budget import Budget, attempt, chosen
from ._common import fails_over, harness, marking, refused, replay_refusal, with_causes

__all__ = ["RESULT_FAILURES", "FallbackPlan", "afallback", "fallback", "moves_on"]

_T = TypeVar("_T")

RESULT_FAILURES: Final = frozenset(
    {"policy.model_refusal", "policy.content_filtered", "output.empty"}
)
"""Codes of a successful response that means failure, after which another model may answer
(with ``check_results``); ``output.truncated`` too when the result holds nothing usable."""

_QUALIFIERS: Final = {"retryable": True, "not_retryable": False}


def moves_on(err: BaseException, check_results: bool = False) -> bool:
    """Whether a fallback goes on to the next target after ``err`` when no plan says where.

    ``fails_over(err)``; with ``check_results`` also a response that means failure: a
    refusal, a content filter, empty output, or a length stop with nothing usable.
    """
    problem = harness(err).problem
    if fails_over(problem):
        return True
    if not check_results:
        return False
    if problem.code in RESULT_FAILURES:
        return True
    return problem.code == "output.truncated" and problem.upstream.get("usable_output") is False


def _checked_key(key: str) -> str:
    """``key`` if it names failures: a code (``:retryable``/``:not_retryable`` may follow),
    a category (``policy.*``) or ``*``."""
    if key == "*":
        return key
    code, _, qualifier = key.partition(":")
    if qualifier and qualifier not in _QUALIFIERS:
        raise ValueError(f"{key!r}: the qualifier is ':retryable' or ':not_retryable'")
    if code.endswith(".*"):
        if qualifier or not any(known.startswith(code[:-1]) for known in CODES):
            raise ValueError(f"{key!r} is not a category of the registered codes")
        return key
    if code not in CODES:
        raise ValueError(f"{key!r} is not a registered harness code")
    return key


class FallbackPlan:
    """Where a failed call goes next, by the harness code of its failure, declared as data.

    ``order`` names the targets tried in turn when the failure says another provider may
    succeed (``moves_on``); ``on`` maps kinds of failure to the targets that fit them, in
    order: a key is a harness code (``"context.window_exceeded"``), a code qualified by its
    ``retryable`` (``"upstream.rate_limited:not_retryable"``: a spent quota), a category
    (``"policy.*"``) or ``"*"``; the most specific key that matches wins (qualified code,
    code, category, ``*``). ``[]`` sends that kind to nobody. Each target is tried at most
    once per run; a failure whose targets were all tried, or that no key sends anywhere and
    that does not move on, ends the run (see the module doc for the error it raises):

    ```python
    plan = FallbackPlan(
        ["gpt", "claude"],
        on={
            "context.window_exceeded": ["gpt-long"],
            "policy.content_filtered": ["claude"],
            "upstream.rate_limited:not_retryable": ["gpt-quota"],
            "upstream.authentication_failed": [],
        },
    )
    answer = plan.call({"gpt": ..., "claude": ..., "gpt-long": ..., "gpt-quota": ...})
    ```

    Args:
        order: the targets tried in turn, the first one first.
        on: kinds of failure and the targets they go to.
        check_results: also check each call's result (``check``) and treat one that means
            failure as a failure: a refusal, a content filter, empty output, a length stop
            with nothing usable; with no ``on`` key for it, such a failure moves on.
        idempotent: a request that may have run on the server may be sent to the next.
        non_idempotent: once a request may have reached a server, nothing is sent again.
    """

    def __init__(
        self,
        order: Sequence[str],
        on: Mapping[str, Sequence[str]] | None = None,
        *,
        check_results: bool = False,
        idempotent: bool = False,
        non_idempotent: bool = False,
    ) -> None:
        if not order:
            raise ValueError("a FallbackPlan needs at least one target in order")
        if idempotent and non_idempotent:
            raise ValueError("a call is idempotent or non_idempotent, not both")
        self.order: tuple[str, ...] = tuple(order)
        self.on: dict[str, tuple[str, ...]] = {
            _checked_key(key): tuple(targets) for key, targets in (on or {}).items()
        }
        self.check_results = check_results
        self.idempotent = idempotent
        self.non_idempotent = non_idempotent
        self.targets: frozenset[str] = frozenset(self.order).union(*self.on.values())
        """Every target the plan may call."""

    def __repr__(self) -> str:
        return f"FallbackPlan({list(self.order)!r}, on={dict(self.on)!r})"

    def route(self, err: BaseException) -> tuple[str, ...] | None:
        """The targets the plan names for ``err`` (``None``: no key matches)."""
        problem = harness(err).problem
        code = problem.code
        qualified = f"{code}:{'retryable' if problem.retryable else 'not_retryable'}"
        category = code.partition(".")[0] + ".*"
        for key in (qualified, code, category, "*"):
            if key in self.on:
                return self.on[key]
        return None

    def next(self, err: BaseException, tried: Iterable[str]) -> str | None:
        """The target to call after ``err``, or ``None`` when the run ends there."""
        done = set(tried)
        targets = self.route(err)
        if targets is None:
            targets = self.order if moves_on(err, self.check_results) else ()
        return next((target for target in targets if target not in done), None)

    def call(self, calls: Mapping[str, Callable[[], _T]], *, budget: Budget | None = None) -> _T:
        """Call ``calls[order[0]]``, then wherever each failure sends the run; its result.

        ``calls`` maps every target the plan names to a callable of no argument; ``budget``
        (else the current one) bounds the run.
        """
        return _run(self, calls, budget, positions=False)

    async def acall(
        self, calls: Mapping[str, Callable[[], Awaitable[_T]]], *, budget: Budget | None = None
    ) -> _T:
        """``call`` for coroutine functions."""
        return await _arun(self, calls, budget, positions=False)


class _Run(Generic[_T]):
    """One run of a plan: the targets tried, their errors, the attempt log."""

    def __init__(
        self, plan: FallbackPlan, calls: Mapping[str, Any], budget: Any, positions: bool
    ) -> None:
        missing = sorted(plan.targets - set(calls))
        if missing:
            raise ValueError(f"the plan names targets with no callable: {missing}")
        for name in plan.targets:
            if not callable(calls[name]):
                raise TypeError(f"fallback targets are callables, not {calls[name]!r}")
        self.plan = plan
        self.budget = chosen(budget)
        self.tracker = Tracker("fallback")
        self.tried: list[str] = []
        self.errors: list[HarnessError] = []
        self.positions = positions

    def label(self, target: str) -> str | int:
        """The target as the attempt log shows it: its name, or ``fallback()``'s position."""
        self.tried.append(target)
        return int(target) + 1 if self.positions else target

    def checked(self, result: _T) -> _T:
        if self.plan.check_results:
            found = diagnose(result)
            if found is not None:
                raise found
        return result

    def after(self, exc: Exception, non_idempotent: bool) -> str:
        """Record a failed call; the next target, or raise what ends the run."""
        err = harness(exc)
        if err.problem.code == "loop.budget_exceeded":
            top = self.tracker.logged(err)  # spent inside the call: it holds the attempts
            raise top from top.__cause__
        self.errors.append(err)
        earlier = list(reversed(self.errors[:-1]))
        plan = self.plan
        why = replay_refusal(err, idempotent=plan.idempotent, non_idempotent=non_idempotent)
        if why is not None:
            raise self.tracker.logged(with_causes(refused(err, why), earlier)) from exc
        following = plan.next(err, self.tried)
        if following is not None:
            return following
        top = with_causes(err, earlier, attempts=len(self.errors)) if earlier else err
        raise self.tracker.logged(top) from exc


def _run(
    plan: FallbackPlan, calls: Mapping[str, Callable[[], _T]], budget: Any, positions: bool
) -> _T:
    run: _Run[_T] = _Run(plan, calls, budget, positions)
    with marking(plan.non_idempotent, plan.idempotent) as non_idempotent:
        target: str | None = plan.order[0]
        while target is not None:
            with attempt(run.budget) as frame, run.tracker.attempt(run.label(target)) as step:
                try:
                    return run.checked(calls[target]())
                except Exception as exc:
                    frame.failed(exc)
                    step.failed(exc)
                    failure = exc
            target = run.after(failure, non_idempotent)
    raise AssertionError("unreachable")  # pragma: no cover - after() raises at the end


async def _arun(
    plan: FallbackPlan,
    calls: Mapping[str, Callable[[], Awaitable[_T]]],
    budget: Any,
    positions: bool,
) -> _T:
    run: _Run[_T] = _Run(plan, calls, budget, positions)
    with marking(plan.non_idempotent, plan.idempotent) as non_idempotent:
        target: str | None = plan.order[0]
        while target is not None:
            with attempt(run.budget) as frame, run.tracker.attempt(run.label(target)) as step:
                try:
                    return run.checked(await calls[target]())
                except Exception as exc:
                    frame.failed(exc)
                    step.failed(exc)
                    failure = exc
            target = run.after(failure, non_idempotent)
    raise AssertionError("unreachable")  # pragma: no cover - after() raises at the end


def _positions(
    calls: tuple[object, ...], check_results: bool, idempotent: bool, non_idempotent: bool
) -> FallbackPlan:
    """The plan of ``fallback(*calls)``: each target in turn, named by its position."""
    if not calls:
        raise ValueError("fallback() needs at least one callable")
    for call in calls:
        if not callable(call):
            raise TypeError(f"fallback() takes callables, not {call!r}")
    return FallbackPlan(
        [str(i) for i in range(len(calls))],
        check_results=check_results,
        idempotent=idempotent,
        non_idempotent=non_idempotent,
    )


def fallback(
    *calls: Callable[[], _T],
    budget: Budget | None = None,
    idempotent: bool = False,
    non_idempotent: bool = False,
    check_results: bool = False,
) -> _T:
    """Call each of ``calls`` in turn until one returns; give its result.

    It moves on when the error says another provider may succeed (``fails_over``: a rate
    limit or spent quota, an overloaded or unavailable upstream, an open breaker, a refused
    credential), and raises at once a request that is wrong wherever it goes. It does not
    replay what may not be replayed: a stream that already delivered output, a request that
    may have run (a read timeout after sending) unless ``idempotent``, and with
    ``non_idempotent`` any request that may have reached a server. ``check_results`` also
    moves on from a response that means failure (``FallbackPlan``). What it raises when all
    fail is the last error with every earlier attempt's error in ``causes``, most recent
    first, and ``attempt_log``. For a target per kind of failure, use ``FallbackPlan``.

    ``budget`` (else the current one) bounds the run: no further call starts once it is
    spent (``loop.budget_exceeded``). Wrap each call in ``retrying()`` for retries first:

    ```python
    fallback(
        lambda: retrying(attempts=3, budget=budget)(gpt.chat.completions.create, **q),
        lambda: claude.messages.create(**q2),
        budget=budget,
    )
    ```
    """
    plan = _positions(calls, check_results, idempotent, non_idempotent)
    return _run(plan, {str(i): call for i, call in enumerate(calls)}, budget, positions=True)


async def afallback(
    *calls: Callable[[], Awaitable[_T]],
    budget: Budget | None = None,
    idempotent: bool = False,
    non_idempotent: bool = False,
    check_results: bool = False,
) -> _T:
    """``fallback()`` for coroutine functions: ``await afallback(lambda: ..., ...)``."""
    plan = _positions(calls, check_results, idempotent, non_idempotent)
    named = {str(i): call for i, call in enumerate(calls)}
    return await _arun(plan, named, budget, positions=True)
