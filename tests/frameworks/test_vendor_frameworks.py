"""Frameworks that read the vendor's exception behave the same over a wrapped client.

pydantic-ai maps an OpenAI status error to its own classes by the vendor's ``code`` and
``type``; the OpenAI Agents SDK's retry runtime reads ``status_code``, ``code``, ``body``,
``request_id`` and ``str()`` along the cause chain. Each runs here over a real
``AsyncOpenAI`` client whose in-memory transport answers with a shipped cassette's recorded
response, once raw and once through ``wrap()``; what the framework does must be the same.

Needs the ``test-frameworks`` extra (pydantic-ai-slim, openai-agents: openai 3.x only); in an
environment without them (the older SDK lines of CI) this module is skipped.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import openai
import pytest

from normalize_errors import HarnessError, normalize, redact, wrap
from normalize_errors._wrapping._replay_calls import http_library

from ..support import is_instance, recorded

pytest.importorskip("pydantic_ai", reason="needs the test-frameworks extra (pydantic-ai-slim)")
pytest.importorskip("agents", reason="needs the test-frameworks extra (openai-agents)")

from agents import (
    Agent,
    ModelRetrySettings,
    ModelSettings,
    Runner,
    retry_policies,
    set_tracing_disabled,
)
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.retry import RetryDecision, RetryPolicyContext
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.exceptions import ModelAPIError, ModelQuotaExceededError
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

set_tracing_disabled(True)  # nothing leaves the machine

# OpenAI chat-completions cassettes that fail with an HTTP error (what both frameworks read).
STATUS_CASSETTES = [
    "insufficient_quota_429",
    "rate_limit_tpm_429",
    "request_too_large_tpm_429",
    "context_length_exceeded_400",
    "invalid_api_key_401",
    "model_not_found_404",
    "overloaded_503",
    "server_error_500",
    "unsupported_country_403",
]


class Served:
    """A real ``AsyncOpenAI`` client whose transport answers every request with a recording."""

    def __init__(self, name: str) -> None:
        self.status, self.headers, self.body = recorded("openai", name)
        self.requests = 0

    def client(self) -> openai.AsyncOpenAI:
        httpx = http_library("openai")

        def handler(request: Any) -> Any:
            self.requests += 1
            return httpx.Response(self.status, headers=self.headers, content=self.body)

        transport = httpx.MockTransport(handler)
        return openai.AsyncOpenAI(
            api_key="sk-test", max_retries=0, http_client=httpx.AsyncClient(transport=transport)
        )


# -- pydantic-ai ----------------------------------------------------------------------------


async def pydantic_ai_error(client: openai.AsyncOpenAI) -> BaseException:
    """What a pydantic-ai agent over ``client`` raises for one run."""
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client))
    agent = PydanticAgent(model)
    try:
        with pytest.raises(ModelAPIError) as info:
            await agent.run("Hello")
    finally:
        await client.close()
    return info.value


def described(exc: BaseException) -> dict[str, Any]:
    """The members of a pydantic-ai model error a program reads."""
    names = ("status_code", "body", "provider_error_code", "provider_error_type", "retry_after")
    return {
        "classes": [f"{k.__module__}.{k.__qualname__}" for k in type(exc).__mro__],
        "str": str(exc),
        **{name: getattr(exc, name, None) for name in names},
    }


async def test_pydantic_ai_reports_a_spent_quota_as_quota_exceeded_through_wrap() -> None:
    """The issue's case: raw and wrapped, the same ``ModelQuotaExceededError``."""
    served = Served("insufficient_quota_429")
    raw = await pydantic_ai_error(served.client())
    wrapped = await pydantic_ai_error(wrap(served.client()))
    assert isinstance(raw, ModelQuotaExceededError)
    assert isinstance(wrapped, ModelQuotaExceededError)
    assert described(wrapped) == described(raw)
    cause = wrapped.__cause__  # the drop-in, carrying the harness view
    assert is_instance(cause, openai.RateLimitError)
    assert isinstance(cause, HarnessError)
    assert cause.code == "insufficient_quota"  # the vendor's member, as pydantic-ai read it
    assert cause.problem.code == "upstream.rate_limited"
    assert cause.retryable is False


@pytest.mark.parametrize("name", STATUS_CASSETTES)
async def test_pydantic_ai_maps_every_status_error_the_same_through_wrap(name: str) -> None:
    """For each recorded status error, the class and members pydantic-ai gives are unchanged."""
    served = Served(name)
    raw = await pydantic_ai_error(served.client())
    wrapped = await pydantic_ai_error(wrap(served.client()))
    assert described(wrapped) == described(raw)
    assert isinstance(wrapped.__cause__, HarnessError)


async def test_pydantic_ai_with_plain_harness_errors_loses_the_vendor_mapping() -> None:
    """``dropin=False`` is for code that wants no vendor semantics: pydantic-ai then does not
    recognise the error as OpenAI's (what the default drop-ins avoid)."""
    client = wrap(Served("insufficient_quota_429").client(), dropin=False)
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client))
    try:
        with pytest.raises(HarnessError) as info:
            await PydanticAgent(model).run("Hello")
    finally:
        await client.close()
    err = info.value
    assert not is_instance(err, openai.APIError)
    assert err.code == "upstream.rate_limited"
    assert isinstance(err.__cause__, openai.RateLimitError)


# -- OpenAI Agents SDK ----------------------------------------------------------------------


async def agents_run(client: openai.AsyncOpenAI) -> tuple[list[dict[str, Any]], BaseException]:
    """Run an Agents SDK agent with runner-managed retries over ``client``.

    The policy records what the runtime normalized from the error and what the SDK's
    ``provider_suggested`` policy decided, then answers that decision without a delay.
    """
    seen: list[dict[str, Any]] = []
    suggested = retry_policies.provider_suggested()

    def policy(context: RetryPolicyContext) -> RetryDecision:
        decision = suggested(context)
        assert isinstance(decision, (bool, RetryDecision))
        retry = decision if isinstance(decision, bool) else decision.retry
        advice = context.provider_advice
        seen.append(
            {
                "normalized": dataclasses.asdict(context.normalized),
                "advice": None if advice is None else dataclasses.asdict(advice),
                "retry": retry,
            }
        )
        return RetryDecision(retry=retry, delay=0.0)

    settings = ModelSettings(retry=ModelRetrySettings(max_retries=2, policy=policy))
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
    agent = Agent(name="probe", model=model, model_settings=settings)
    try:
        with pytest.raises(Exception) as info:  # noqa: PT011 - the class is what is compared
            await Runner.run(agent, "Hello")
    finally:
        await client.close()
    return seen, info.value


@pytest.mark.parametrize("name", STATUS_CASSETTES)
async def test_agents_sdk_retry_decisions_are_the_same_through_wrap(name: str) -> None:
    """Same normalized error, same provider advice, same decisions, same number of attempts."""
    raw_served, wrapped_served = Served(name), Served(name)
    raw_seen, raw_exc = await agents_run(raw_served.client())
    wrapped_seen, wrapped_exc = await agents_run(wrap(wrapped_served.client()))
    assert raw_seen, "the retry policy was consulted"
    assert wrapped_served.requests == raw_served.requests
    assert isinstance(wrapped_exc, type(raw_exc))
    assert isinstance(wrapped_exc, HarnessError)
    assert normalize(wrapped_exc).code == normalize(raw_exc).code
    # str() of a drop-in is the vendor's text with credentials redacted: the only difference
    for entry in raw_seen:
        entry["normalized"]["message"] = redact(entry["normalized"]["message"])
        if entry["advice"] is not None and entry["advice"]["reason"] is not None:
            entry["advice"]["reason"] = redact(entry["advice"]["reason"])
            entry["advice"]["normalized"]["message"] = entry["normalized"]["message"]
    assert wrapped_seen == raw_seen


async def test_agents_sdk_retries_a_spent_quota_as_it_does_without_wrap() -> None:
    """The issue's case, spelled out: the runtime reads the vendor's code along the chain."""
    served = Served("insufficient_quota_429")
    seen, exc = await agents_run(wrap(served.client()))
    assert seen[0]["normalized"]["error_code"] == "insufficient_quota"
    assert seen[0]["normalized"]["status_code"] == 429
    assert isinstance(exc, openai.RateLimitError)
    assert served.requests == 1 + sum(entry["retry"] for entry in seen)


# -- stop reasons under a framework: wrap(client, check=False) (issue 24) ---------------------

STOP_CASSETTES = {
    "finish_length_200": "output.truncated",
    "refusal_structured_output_200": "policy.model_refusal",
}
"""Successful chat completions a framework judges itself: cut at the token limit (both
frameworks return the truncated text) and refused (both raise their own refusal class)."""


async def outcome(framework: str, client: Any) -> tuple[str, Any, BaseException | None]:
    """What one run of ``framework`` over ``client`` gives: its output, or what it raised."""
    try:
        if framework == "pydantic-ai":
            model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client))
            return "output", (await PydanticAgent(model).run("Hello")).output, None
        chat = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
        result = await Runner.run(Agent(name="probe", model=chat), "Hello")
        return "output", result.final_output, None
    except Exception as exc:  # the outcome is what is compared
        # pydantic-ai's text ends with the messages, timestamps included: compare what is before
        return "raised", (type(exc), str(exc).partition(", body:")[0]), exc
    finally:
        await client.close()


@pytest.mark.parametrize("framework", ["pydantic-ai", "agents"])
@pytest.mark.parametrize("name", sorted(STOP_CASSETTES))
async def test_a_framework_over_wrap_check_false_does_as_over_the_raw_client(
    name: str, framework: str
) -> None:
    """``wrap(client, check=False)`` under a framework: the same outcome as the raw client
    (the truncated text returned, the framework's own refusal class raised), and
    ``normalize()`` at the framework's boundary gives the harness code of the stop reason."""
    kind, raw, raw_exc = await outcome(framework, Served(name).client())
    unchecked = await outcome(framework, wrap(Served(name).client(), check=False))
    assert unchecked[:2] == (kind, raw)
    if name == "finish_length_200":
        assert kind == "output"
        assert isinstance(raw, str)
        assert raw.startswith("Certainly!")
    else:
        assert kind == "raised"
        assert raw_exc is not None
        assert not isinstance(raw_exc, HarnessError)
        assert unchecked[2] is not None
        assert normalize(unchecked[2]).problem.code == STOP_CASSETTES[name]


@pytest.mark.parametrize("framework", ["pydantic-ai", "agents"])
@pytest.mark.parametrize("name", sorted(STOP_CASSETTES))
async def test_a_framework_over_the_default_wrap_raises_the_harness_stop_reason(
    name: str, framework: str
) -> None:
    """The documented difference: with the default ``check=True`` the wrapper judges the
    result before the framework sees it, and its typed error comes out of the framework."""
    kind, _, exc = await outcome(framework, wrap(Served(name).client()))
    assert kind == "raised"
    assert isinstance(exc, HarnessError)
    assert exc.problem.code == STOP_CASSETTES[name]
    assert exc.result is not None  # the completion the framework never saw
