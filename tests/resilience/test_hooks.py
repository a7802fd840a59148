"""The hooks in the real frameworks: pydantic-ai's FallbackModel, the Agents SDK's retry
policy and LangChain's with_fallbacks, over real openai clients answering from cassettes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("agents")
pytest.importorskip("langchain_openai")

import openai

from normalize_errors import HarnessError, UpstreamOverloadedError, UpstreamUnavailableError
from normalize_errors.resilience import Budget, CircuitBreaker, fails_over
from normalize_errors.resilience.hooks import (
    FAILS_OVER,
    agents_retry_policy,
    breaker_model,
    guarded,
)
from normalize_errors.testing import Faults

from .helpers import Clock


def test_fails_over_classes_match_the_predicate() -> None:
    from normalize_errors.resilience._common import ANOTHER_MAY_SUCCEED

    assert {klass.code for klass in FAILS_OVER} == ANOTHER_MAY_SUCCEED - {"upstream.timeout"}


def test_pydantic_ai_fallback_model_skips_a_model_whose_breaker_is_open(clock: Clock) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.fallback import FallbackModel
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    breaker = CircuitBreaker(threshold=1, clock=clock)

    async def main() -> list[str]:
        def model(name: str) -> OpenAIChatModel:
            client = openai.AsyncOpenAI(api_key="sk-offline", max_retries=0)
            return OpenAIChatModel(name, provider=OpenAIProvider(openai_client=client))

        primary = breaker_model(model("gpt-4o"), breaker)
        agent = Agent(FallbackModel(primary, model("gpt-4o-mini"), fallback_on=fails_over))
        return [str((await agent.run("hi")).output) for _ in range(2)]

    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        assert asyncio.run(main()) == ["Hello!", "Hello!"]
        models = [request.json()["model"] for request in faults.requests]
    # the 503 opened gpt-4o's breaker: the second run went straight to gpt-4o-mini
    assert models == ["gpt-4o", "gpt-4o-mini", "gpt-4o-mini"]
    assert breaker.state("openai:gpt-4o").name == "open"


def test_the_agents_retry_policy_stops_once_the_breaker_opens(clock: Clock) -> None:
    from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner
    from agents.retry import ModelRetrySettings

    breaker = CircuitBreaker(threshold=2, clock=clock)
    policy = agents_retry_policy(breaker=breaker, key="openai:gpt-4o-mini")
    settings = ModelSettings(
        retry=ModelRetrySettings(
            max_retries=5, backoff={"initial_delay": 0.0, "jitter": False}, policy=policy
        )
    )

    async def main() -> Any:
        client = openai.AsyncOpenAI(api_key="sk-offline", max_retries=0)
        model = OpenAIChatCompletionsModel("gpt-4o-mini", openai_client=client)
        agent = Agent(name="a", model=model, model_settings=settings)
        try:
            return await Runner.run(agent, "hi")
        except Exception as exc:
            return exc

    with Faults() as faults:
        faults.fail("openai/overloaded_503", times=None)
        outcome = asyncio.run(main())
        assert faults.calls == 2  # 5 retries allowed; the breaker opened after the second 503
    assert isinstance(outcome, openai.InternalServerError)
    assert breaker.is_open("openai:gpt-4o-mini")


def test_the_agents_retry_policy_keeps_to_the_budget() -> None:
    from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner
    from agents.retry import ModelRetrySettings

    budget = Budget(attempts=3)
    settings = ModelSettings(
        retry=ModelRetrySettings(
            max_retries=10,
            backoff={"initial_delay": 0.0, "jitter": False},
            policy=agents_retry_policy(budget=budget),
        )
    )

    async def main() -> Any:
        client = openai.AsyncOpenAI(api_key="sk-offline", max_retries=0)
        model = OpenAIChatCompletionsModel("gpt-4o-mini", openai_client=client)
        try:
            return await Runner.run(Agent(name="a", model=model, model_settings=settings), "hi")
        except Exception as exc:
            return exc

    with Faults() as faults:
        faults.fail("openai/server_error_500", times=None)
        asyncio.run(main())
        assert faults.calls == 3
    assert [cause.code for cause in budget.errors] == ["upstream.unavailable"] * 3


def test_langchain_with_fallbacks_on_the_harness_classes(clock: Clock) -> None:
    from langchain_openai import ChatOpenAI

    breaker = CircuitBreaker(threshold=1, clock=clock)

    def chat(name: str) -> Any:
        return ChatOpenAI(model=name, api_key="sk-offline", max_retries=0)  # type: ignore[arg-type]

    chain = guarded(chat("gpt-4o"), breaker, "openai:gpt-4o").with_fallbacks(
        [chat("gpt-4o-mini")], exceptions_to_handle=FAILS_OVER
    )
    with Faults() as faults:
        faults.fail("openai/insufficient_quota_429")  # not counted: a spent quota
        assert chain.invoke("hi").content == "Hello!"
        faults.fail("openai/overloaded_503")  # counted: opens the breaker
        assert chain.invoke("hi").content == "Hello!"
        assert chain.invoke("hi").content == "Hello!"  # open: the fallback at once
        models = [request.json()["model"] for request in faults.requests]
    assert models == ["gpt-4o", "gpt-4o-mini", "gpt-4o", "gpt-4o-mini", "gpt-4o-mini"]

    plain = guarded(chat("gpt-4o"))
    with Faults() as faults:
        faults.fail("openai/context_length_exceeded_400")
        with pytest.raises(HarnessError) as caught:
            plain.invoke("hi")
    assert caught.value.code == "context.window_exceeded"
    assert not isinstance(caught.value, FAILS_OVER)
    assert isinstance(caught.value.__cause__, openai.BadRequestError)


def test_a_pydantic_ai_stream_goes_through_the_breaker(clock: Clock) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    breaker = CircuitBreaker(threshold=1, clock=clock)

    async def main() -> list[Any]:
        client = openai.AsyncOpenAI(api_key="sk-offline", max_retries=0)
        model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
        agent = Agent(breaker_model(model, breaker, key="gpt"))
        outcomes: list[Any] = []
        for _ in range(3):
            try:
                async with agent.run_stream("hi") as result:
                    outcomes.append(await result.get_output())
            except Exception as exc:
                outcomes.append(exc)
        return outcomes

    with Faults() as faults:
        faults.succeed().fail("openai/overloaded_503")
        ok, overloaded, fast = asyncio.run(main())
        assert faults.calls == 2  # the third stream never left: the breaker was open
    assert ok == "Hello!"
    assert normalize_code(overloaded) == "upstream.overloaded"
    assert isinstance(fast, UpstreamUnavailableError)
    assert fast.upstream["breaker"] == "gpt"


def normalize_code(exc: BaseException) -> str:
    from normalize_errors import normalize

    return normalize(exc).code


def _context(exc: Exception, *, started: bool = False) -> Any:
    from agents.retry import ModelRetryAdvice, ModelRetryNormalizedError, RetryPolicyContext

    return RetryPolicyContext(
        error=exc,
        attempt=1,
        max_retries=3,
        stream=True,
        normalized=ModelRetryNormalizedError(),
        provider_advice=ModelRetryAdvice(response_started=started),
    )


def test_the_agents_retry_policy_decisions() -> None:
    """The SDK's own context objects: each reason the policy gives for not retrying."""
    busy = UpstreamOverloadedError("busy")
    policy = agents_retry_policy()

    def decide(policy: Any, exc: Exception, started: bool = False) -> Any:
        return asyncio.run(policy(_context(exc, started=started)))  # the SDK awaits it

    assert decide(policy, busy).retry is True
    assert decide(policy, busy, started=True).reason == (
        "not replayed: the response had already started"
    )
    quota = HarnessError.from_code("upstream.rate_limited", "quota", retryable=False)
    assert decide(policy, quota).reason == "upstream.rate_limited"
    long_wait = UpstreamOverloadedError("busy", retry_after=3600)
    assert decide(policy, long_wait).retry is False

    spent = Budget(attempts=1)
    with spent.attempt():
        pass  # the run already used its one attempt
    decision = decide(agents_retry_policy(budget=spent), busy)
    assert decision.retry is False
    assert "budget of 1 attempts" in decision.reason

    idempotent = decide(agents_retry_policy(idempotent=True), busy)
    assert (idempotent.retry, idempotent.approve_unsafe_replay) == (True, True)


def test_guarded_ainvoke(clock: Clock) -> None:
    from langchain_openai import ChatOpenAI

    breaker = CircuitBreaker(threshold=1, clock=clock)
    chat = ChatOpenAI(model="gpt-4o", api_key="sk-offline", max_retries=0)  # type: ignore[arg-type]

    async def main() -> list[Any]:
        outcomes: list[Any] = []
        for runnable in (guarded(chat, breaker, "gpt"), guarded(chat)):
            for _ in range(2):
                try:
                    outcomes.append((await runnable.ainvoke("hi")).content)
                except Exception as exc:
                    outcomes.append(exc)
        return outcomes

    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        opened, fast, plain, again = asyncio.run(main())
        assert faults.calls == 3
    assert isinstance(opened, HarnessError)
    assert opened.code == "upstream.overloaded"
    assert isinstance(opened.__cause__, openai.InternalServerError)
    assert isinstance(fast, UpstreamUnavailableError)
    assert (plain, again) == ("Hello!", "Hello!")
