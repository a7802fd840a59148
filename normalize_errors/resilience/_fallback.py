"""Fallbacks over callables: the next provider when the answer says it may succeed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from .._exceptions import HarnessError
from ._budget import Budget, attempt, chosen
from ._common import fails_over, harness, refused, replay_refusal, with_causes

__all__ = ["afallback", "fallback"]

_T = TypeVar("_T")


def _step(exc: Exception, errors: list[HarnessError], last: bool, idempotent: bool) -> None:
    """Record a failed call; raise what ends the fallback, or return to try the next."""
    err = harness(exc)
    if err.problem.code == "loop.budget_exceeded":
        raise exc  # the run's budget, spent inside the call: it holds the attempts already
    errors.append(err)
    why = replay_refusal(err, idempotent=idempotent)
    if why is not None:
        top = refused(err, why)
        raise with_causes(top, list(reversed(errors[:-1]))) from exc
    if last or not fails_over(err):
        if len(errors) == 1:
            if err is exc:
                raise err
            raise err from exc
        top = with_causes(err, list(reversed(errors[:-1])), attempts=len(errors))
        raise top from exc


def _checked(calls: tuple[object, ...]) -> None:
    if not calls:
        raise ValueError("fallback() needs at least one callable")
    for call in calls:
        if not callable(call):
            raise TypeError(f"fallback() takes callables, not {call!r}")


def fallback(
    *calls: Callable[[], _T], budget: Budget | None = None, idempotent: bool = False
) -> _T:
    """Call each of ``calls`` in turn until one returns; give its result.

    It moves on when the error says another provider may succeed (``fails_over``: a rate
    limit or spent quota, an overloaded or unavailable upstream, an open breaker, a refused
    credential), and raises at once a request that is wrong wherever it goes. It does not
    replay what may not be replayed: a stream that already delivered output, or a request that
    may have run (a read timeout after sending) unless ``idempotent``. What it raises is a
    ``HarnessError`` whose ``causes`` hold every earlier attempt's error, most recent first.

    ``budget`` (else the current one) bounds the run: no further call starts once it is
    spent (``loop.budget_exceeded``). Wrap each call in ``retrying()`` for retries first::

        fallback(
            lambda: retrying(attempts=3, budget=budget)(gpt.chat.completions.create, **q),
            lambda: claude.messages.create(**q2),
            budget=budget,
        )
    """
    _checked(calls)
    errors: list[HarnessError] = []
    budget = chosen(budget)
    for index, call in enumerate(calls):
        with attempt(budget) as frame:
            try:
                return call()
            except Exception as exc:
                frame.failed(exc)
                _step(exc, errors, index == len(calls) - 1, idempotent)
    raise AssertionError("unreachable")  # pragma: no cover - the last step raises


async def afallback(
    *calls: Callable[[], Awaitable[_T]], budget: Budget | None = None, idempotent: bool = False
) -> _T:
    """``fallback()`` for coroutine functions: ``await afallback(lambda: ..., ...)``."""
    _checked(calls)
    errors: list[HarnessError] = []
    budget = chosen(budget)
    for index, call in enumerate(calls):
        with attempt(budget) as frame:
            try:
                return await call()
            except Exception as exc:
                frame.failed(exc)
                _step(exc, errors, index == len(calls) - 1, idempotent)
    raise AssertionError("unreachable")  # pragma: no cover - the last step raises
