"""The breaker, the fallback predicate and budgets in the frameworks' own machinery.

Each hook imports its framework only when it is called. None of them makes a Redis round trip
on the event loop: a closed breaker is decided from the process's local copy, and whatever
needs Redis (a stale copy, a failure, a half-open trial) runs in a worker thread.

* **pydantic-ai**: ``breaker_model(model, breaker)`` is a model whose requests go through the
  breaker; in ``FallbackModel(breaker_model(a, breaker), b, fallback_on=fails_over)`` a model
  whose breaker is open fails at once, and the fallback skips it to the next.
* **OpenAI Agents SDK**: ``agents_retry_policy(breaker=..., key=..., budget=...)`` for
  ``ModelRetrySettings(policy=...)``: it counts each failure on the breaker and stops retrying
  once the breaker is open, the run's budget is spent, or the call may not be replayed.
* **LangChain**: ``with_fallbacks`` takes exception types, not a predicate: ``FAILS_OVER``
  are the classes of the codes ``fails_over`` accepts, and ``guarded(runnable, breaker, key)``
  runs a runnable through the breaker and raises its failures as harness errors, so that
  ``guarded(a, breaker, "a").with_fallbacks([b], exceptions_to_handle=FAILS_OVER)`` works
  whatever client ``a`` was built on.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from .._model._code_classes import (
    BudgetExceededError,
    UpstreamAuthenticationFailedError,
    UpstreamOverloadedError,
    UpstreamRateLimitedError,
    UpstreamUnavailableError,
)
from .._model._exceptions import HarnessError
from ._breaker import CircuitBreaker
from ._budget import Budget, chosen
from ._common import harness, replay_refusal

__all__ = ["FAILS_OVER", "agents_retry_policy", "breaker_model", "guarded"]

FAILS_OVER: Final[tuple[type[HarnessError], ...]] = (
    UpstreamRateLimitedError,
    UpstreamOverloadedError,
    UpstreamUnavailableError,
    UpstreamAuthenticationFailedError,
)
"""The classes of the codes after which another provider may succeed (``fails_over``), for
APIs that take exception types (LangChain's ``with_fallbacks(exceptions_to_handle=...)``)."""


# -- pydantic-ai ---------------------------------------------------------------------------------


@functools.cache
def _breaker_model_class() -> type[Any]:
    from pydantic_ai.models.wrapper import WrapperModel

    class BreakerModel(WrapperModel):
        """A pydantic-ai model whose requests go through a circuit breaker."""

        def __init__(self, wrapped: Any, breaker: CircuitBreaker, key: str) -> None:
            super().__init__(wrapped)
            self.breaker = breaker
            self.key = key

        async def request(self, *args: Any, **kwargs: Any) -> Any:
            return await self.breaker.acall(self.key, self.wrapped.request, *args, **kwargs)

        @asynccontextmanager
        async def request_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            breaker = self.breaker
            mode = await breaker.abefore(self.key)
            started = breaker.clock()
            try:
                async with self.wrapped.request_stream(*args, **kwargs) as stream:
                    yield stream
            except Exception as exc:
                await breaker.afailure(self.key, exc, mode, breaker.clock() - started)
                raise
            await breaker.asuccess(self.key, mode, breaker.clock() - started)

    return BreakerModel


def breaker_model(model: Any, breaker: CircuitBreaker, key: str | None = None) -> Any:
    """``model`` (a pydantic-ai ``Model``) with its requests through ``breaker``.

    ``key`` defaults to ``"<system>:<model_name>"``. While the breaker is open, a request
    raises the breaker's ``UpstreamUnavailableError`` at once; ``fails_over`` (or the
    ``fallback_on`` of ``normalize_errors.frameworks.pydantic_ai``) makes ``FallbackModel``
    move to its next model on it.
    """
    if key is None:
        key = f"{getattr(model, 'system', 'model')}:{getattr(model, 'model_name', '')}"
    return _breaker_model_class()(model, breaker, key)


# -- OpenAI Agents SDK --------------------------------------------------------------------------


def agents_retry_policy(
    *,
    breaker: CircuitBreaker | None = None,
    key: str = "agents",
    budget: Budget | None = None,
    cap: float = 60.0,
    idempotent: bool = False,
    non_idempotent: bool = False,
) -> Any:
    """An Agents SDK retry policy (``ModelRetrySettings(policy=...)``) fed by the harness answer.

    The policy is a coroutine function (the SDK awaits it), so counting a failure on a
    breaker shared through Redis never blocks the event loop.

    Each failure is counted on ``breaker`` under ``key``; it retries what is ``retryable``,
    waiting its ``retry_after`` (a longer one than ``cap`` is not retried), and stops once
    the breaker is open, ``budget`` (else the current one) cannot afford one more attempt,
    or the call may not be replayed (a stream that already yielded output, or whose response
    the SDK says had started; a request that may have run, unless ``idempotent``, which also
    approves the SDK's own replay check: ``approve_unsafe_replay``; with ``non_idempotent``,
    any request that may have reached the server).
    """
    from agents.retry import RetryDecision

    if idempotent and non_idempotent:
        raise ValueError("a call is idempotent or non_idempotent, not both")

    async def policy(context: Any) -> Any:
        err = harness(context.error)
        if breaker is not None:
            await breaker.afailure(key, err)
            if (await breaker.astate(key)).name in ("open", "forced_open"):
                return RetryDecision(retry=False, reason=f"circuit open: {breaker.name(key)}")
        run = chosen(budget)
        if run is not None:
            run.record(err)
            try:
                with run.attempt():
                    pass  # the attempt that just failed, counted as one of the run's
            except BudgetExceededError as spent:
                return RetryDecision(retry=False, reason=spent.detail)
            spent_now = run.exceeded()  # may one more start?
            if spent_now is not None:
                return RetryDecision(retry=False, reason=spent_now.detail)
        advice = getattr(context, "provider_advice", None)
        why = replay_refusal(err, idempotent=idempotent, non_idempotent=non_idempotent)
        if why is None and getattr(advice, "response_started", False):
            why = "not replayed: the response had already started"
        if why is not None:
            return RetryDecision(retry=False, reason=why)
        after = err.problem.retry_after
        if not err.problem.retryable or (after is not None and after > cap):
            return RetryDecision(retry=False, reason=err.problem.code)
        return RetryDecision(
            retry=True, delay=after, reason=err.problem.code, approve_unsafe_replay=idempotent
        )

    return policy


# -- LangChain -----------------------------------------------------------------------------------


def guarded(runnable: Any, breaker: CircuitBreaker | None = None, key: str = "runnable") -> Any:
    """A LangChain runnable that runs ``runnable`` through ``breaker`` (when given) and raises
    its failures as harness errors (the original as ``__cause__``), for ``FAILS_OVER``."""
    from langchain_core.runnables import RunnableLambda

    def invoke(value: Any, config: Any = None) -> Any:
        try:
            if breaker is None:
                return runnable.invoke(value, config)
            return breaker.call(key, runnable.invoke, value, config)
        except HarnessError:
            raise
        except Exception as exc:
            raise harness(exc) from exc

    async def ainvoke(value: Any, config: Any = None) -> Any:
        try:
            if breaker is None:
                return await runnable.ainvoke(value, config)
            return await breaker.acall(key, runnable.ainvoke, value, config)
        except HarnessError:
            raise
        except Exception as exc:
            raise harness(exc) from exc

    return RunnableLambda(invoke, afunc=ainvoke, name=f"guarded({key})")
