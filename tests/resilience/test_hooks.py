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

from normalize_errors import HarnessError
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
