"""pydantic-ai's exceptions, produced by running real agents offline: its FunctionModel and
TestModel, and its OpenAI model over a real openai client answering from shipped cassettes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

import openai
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import UsageLimits

from normalize_errors import HarnessError, normalize
from normalize_errors._wrapping._replay_calls import http_library

from ..support import raised, recorded, valid


def cassette_model(provider: str, name: str) -> OpenAIChatModel:
    """pydantic-ai's OpenAI model over a real AsyncOpenAI answering with a cassette."""
    http = http_library("openai")
    status, headers, body = recorded(provider, name)

    async def answer(request: Any) -> Any:
        return http.Response(status, headers=headers, content=body)

    client = openai.AsyncOpenAI(
        api_key="sk-test",
        max_retries=0,
        http_client=http.AsyncClient(transport=http.MockTransport(answer)),
    )
    return OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client))


def sync(agent: Agent[Any, Any], **options: Any) -> Any:
    """``agent.run`` in a fresh event loop that is closed afterwards (``run_sync`` leaves its
    loop open, and the warnings errors make of its unclosed sockets land in later tests)."""
    return asyncio.run(agent.run("hi", **options))


def run(agent: Agent[Any, Any], **options: Any) -> HarnessError:
    exc = raised(lambda: sync(agent, **options))
    err = valid(normalize(exc))
    assert err.__cause__ is exc
    return err


def test_http_errors_read_through_the_openai_exception() -> None:
    """429 retry-after-ms, spent quota, context overflow, 500: the provider adapter's answer."""
    err = run(Agent(cassette_model("openai", "rate_limit_tpm_ms_429")))
    assert (err.code, err.retryable, err.retry_after) == ("upstream.rate_limited", True, 0.976)
    assert err.upstream["status"] == 429
    quota = run(Agent(cassette_model("openai", "insufficient_quota_429")))
    assert (quota.code, quota.retryable, quota.upstream["code"]) == (
        "upstream.rate_limited",
        False,
        "insufficient_quota",
    )
    window = run(Agent(cassette_model("openai", "context_length_exceeded_400")))
    assert window.code == "context.window_exceeded"
    server = run(Agent(cassette_model("openai", "server_error_500")))
    assert (server.code, server.retryable) == ("upstream.unavailable", True)


def test_without_a_cause_the_status_and_body_decide() -> None:
    """A ModelHTTPError raised by pydantic-ai itself (no SDK cause) is read from its fields."""
    exc = raised(lambda: sync(Agent(cassette_model("openai", "overloaded_503"))))
    exc.__cause__ = None
    err = normalize(exc)
    assert (err.code, err.upstream["status"]) == ("upstream.overloaded", 503)


def agent_with_tool(**options: Any) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(TestModel(), **options)

    @agent.tool_plain
    def double(x: int) -> int:
        return 2 * x

    return agent


def test_usage_limits_give_turn_and_budget_limits() -> None:
    """request_limit is the turn limit; tool-call and token limits are budgets, with observed."""
    turns = run(agent_with_tool(), usage_limits=UsageLimits(request_limit=1))
    assert turns.code == "loop.max_turns_exceeded"
    assert turns.limit == {"name": "requests", "value": 1.0}
    tools = run(agent_with_tool(), usage_limits=UsageLimits(tool_calls_limit=0))
    assert tools.code == "loop.budget_exceeded"
    assert tools.limit == {"name": "tool_calls", "value": 0.0, "observed": 1.0}
    tokens = run(agent_with_tool(), usage_limits=UsageLimits(total_tokens_limit=1))
    assert tokens.code == "loop.budget_exceeded"
    assert tokens.limit is not None
    assert tokens.limit["name"] == "total_tokens"
    assert tokens.limit["observed"] > 1


class Person(BaseModel):
    age: int


def test_output_retries_exhausted_keeps_the_last_failure_with_its_pointer() -> None:
    """A structured output that never validates: attempts N+1 and a schema cause at /age."""

    def bad(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"age": "old"})])

    err = run(Agent(FunctionModel(bad), output_type=Person, retries=1))
    assert (err.code, err.attempts, err.max_attempts) == ("output.retries_exhausted", 2, 2)
    (cause,) = err.causes
    assert cause.code == "output.schema_violation"
    assert cause.location == {"pointer": "/age"}
    assert "/age" in (cause.model_feedback or "")

    def not_json(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("not json")])

    malformed = run(Agent(FunctionModel(not_json), output_type=Person, retries=1))
    assert [c.code for c in malformed.causes] == ["output.malformed"]


def calling(tool: str, args: dict[str, Any]) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(tool, args)])

    return FunctionModel(respond)


def test_tool_retries_exhausted_are_decided_by_the_cause() -> None:
    """Unknown tool, bad arguments, a tool timeout and a tool's own ModelRetry."""
    unknown = run(Agent(calling("nope", {}), retries=1))
    assert unknown.code == "output.retries_exhausted"
    assert [c.code for c in unknown.causes] == ["output.unknown_tool"]
    assert unknown.location == {"tool_name": "nope"}

    bad_args: Agent[None, str] = Agent(calling("double", {"x": "zz"}), retries=1)

    @bad_args.tool_plain
    def double(x: int) -> int:
        return 2 * x

    err = run(bad_args)
    assert [c.code for c in err.causes] == ["output.invalid_tool_arguments"]
    assert err.causes[0].location == {"tool_name": "double", "pointer": "/x"}

    slow: Agent[None, str] = Agent(calling("wait", {}), retries=1)

    @slow.tool_plain(timeout=0.01)
    async def wait() -> int:
        await asyncio.sleep(1)
        return 1

    timeout = run(slow)
    assert (timeout.code, timeout.attempts) == ("tool.timeout", 2)
    assert timeout.limit == {"name": "tool_timeout", "value": 0.01, "unit": "s"}

    failing: Agent[None, str] = Agent(calling("fails", {}), retries=1)

    @failing.tool_plain
    def fails() -> int:
        raise ModelRetry("the database is read-only")

    failed = run(failing)
    assert (failed.code, failed.model_feedback) == (
        "tool.execution_failed",
        "the database is read-only",
    )


def test_content_filter_refusal_and_truncation() -> None:
    """finish_reason content_filter / refusal / length on an empty response."""

    def finishing(reason: Any, details: dict[str, Any] | None = None) -> FunctionModel:
        return FunctionModel(
            lambda m, i: ModelResponse(parts=[], finish_reason=reason, provider_details=details)
        )

    assert run(Agent(finishing("content_filter"))).code == "policy.content_filtered"
    refusal = Agent(finishing("content_filter", {"finish_reason": "refusal"}))
    assert run(refusal).code == "policy.model_refusal"
    assert run(Agent(finishing("length"))).code == "output.truncated"


def test_fallback_group_picks_the_most_telling_attempt_and_keeps_all() -> None:
    """503 overload then 429 spent quota: the quota (not retryable) wins; both in causes."""
    model = FallbackModel(
        cassette_model("openai", "overloaded_503"),
        cassette_model("openai", "insufficient_quota_429"),
    )
    err = run(Agent(model))
    assert (err.code, err.retryable) == ("upstream.rate_limited", False)
    assert [c.code for c in err.causes] == ["upstream.overloaded"]


def test_a_run_timeout_is_the_loop_timeout() -> None:
    """Agent.run(timeout=...) over a slow model: loop.timeout."""

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(1)
        return ModelResponse(parts=[TextPart("late")])

    err = run(Agent(FunctionModel(slow)), timeout=0.01)
    assert err.code == "loop.timeout"


def test_a_users_own_validation_error_is_not_the_models() -> None:
    """Person.model_validate in user code: harness.internal_error, not an output error."""
    exc = raised(lambda: Person.model_validate({"age": "x"}))
    assert normalize(exc).code == "harness.internal_error"


def test_fallback_on_falls_back_on_provider_failures_only() -> None:
    """A spent quota falls back to the next model; a content filter or a bug does not."""
    from normalize_errors.frameworks.pydantic_ai import fallback_on

    model = FallbackModel(
        cassette_model("openai", "insufficient_quota_429"),
        cassette_model("openai", "finish_length_200"),
        fallback_on=fallback_on,
    )
    assert sync(Agent(model)).output
    filtered = FunctionModel(lambda m, i: ModelResponse(parts=[], finish_reason="content_filter"))
    exc = raised(lambda: sync(Agent(filtered)))
    assert fallback_on(exc) is False
    assert fallback_on(ValueError("bug")) is False
    window = raised(lambda: sync(Agent(cassette_model("openai", "context_length_exceeded_400"))))
    assert fallback_on(window) is True


def test_a_cancelled_run_is_harness_cancelled() -> None:
    """CancellationToken.cancel() while the model works: RunCancelled -> harness.cancelled."""
    from pydantic_ai import CancellationToken

    token = CancellationToken()

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        token.cancel()
        await asyncio.sleep(1)
        return ModelResponse(parts=[TextPart("late")])

    err = run(Agent(FunctionModel(slow)), cancellation_token=token)
    assert (err.code, err.retryable) == ("harness.cancelled", False)


# Categorized API errors pydantic-ai raises itself (no HTTP status, no SDK cause), as its
# streaming and non-HTTP model classes do: the class decides.
CATEGORIZED = [
    ("ModelContextWindowExceededError", "context.window_exceeded", False),
    ("ModelAuthenticationError", "upstream.authentication_failed", False),
    ("ModelNotFoundError", "upstream.invalid_request", False),
    ("ModelQuotaExceededError", "upstream.rate_limited", False),
    ("ModelRateLimitError", "upstream.rate_limited", True),
    ("ModelOverloadedError", "upstream.overloaded", True),
    ("ModelServerError", "upstream.unavailable", True),
    ("ModelConnectionError", "upstream.unavailable", True),
]


@pytest.mark.parametrize(("name", "code", "retryable"), CATEGORIZED)
def test_categorized_api_errors_without_a_status_are_read_by_class(
    name: str, code: str, retryable: bool
) -> None:
    """The class gives the code; a ``retry_after`` pydantic-ai states is kept."""
    from pydantic_ai import exceptions

    exc = getattr(exceptions, name)("gpt-4o", "the model said no", retry_after=4.0)
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == (code, retryable)
    assert err.retry_after == 4.0
    assert err.upstream["framework"] == "pydantic_ai"


def test_a_request_timeout_is_unavailable_and_retryable() -> None:
    """pydantic-ai's own request timeout: the upstream did not answer in time."""
    from pydantic_ai.exceptions import ModelRequestTimeout

    err = valid(normalize(ModelRequestTimeout("gpt-4o", 30.0)))
    assert (err.code, err.retryable, err.advice) == ("upstream.unavailable", True, "retry")


def test_run_bookkeeping_errors() -> None:
    """A concurrency cap is a retryable harness problem, an expired suspended response an
    invalid request, a tool's own failure a failed tool execution."""
    from pydantic_ai.exceptions import (
        ConcurrencyLimitExceeded,
        SuspendedResponseExpired,
        ToolFailed,
    )

    err = valid(normalize(ConcurrencyLimitExceeded("too many runs at once")))
    assert (err.code, err.retryable) == ("harness.internal_error", True)
    err = valid(normalize(SuspendedResponseExpired("the response expired")))
    assert err.code == "upstream.invalid_request"
    err = valid(normalize(ToolFailed("the lookup service is down")))
    assert (err.code, err.detail) == ("tool.execution_failed", "the lookup service is down")


def test_a_usage_limit_without_numbers_is_a_budget() -> None:
    """A usage-limit message that states no limit is still a spent budget, without ``limit``."""
    from pydantic_ai.exceptions import UsageLimitExceeded

    err = valid(normalize(UsageLimitExceeded("The run went over its budget")))
    assert (err.code, err.limit) == ("loop.budget_exceeded", None)


def test_unexpected_behaviour_that_is_an_empty_answer() -> None:
    """ "did not produce" or "empty" in the message: output.empty; otherwise an invalid response."""
    from pydantic_ai.exceptions import UnexpectedModelBehavior

    err = valid(normalize(UnexpectedModelBehavior("Received empty model response")))
    assert err.code == "output.empty"
    err = valid(normalize(UnexpectedModelBehavior("Invalid response from the model: {")))
    assert err.code == "upstream.invalid_response"


def test_an_output_validator_that_keeps_asking_gives_its_feedback_as_the_cause() -> None:
    """The user's validator raises ModelRetry every time: retries exhausted, and the cause
    carries the validator's words as the feedback the model was given."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("Bonjour")])

    agent = Agent(FunctionModel(answer), retries=1)

    @agent.output_validator
    def english_only(text: str) -> str:
        raise ModelRetry("Answer in English.")

    err = valid(normalize(raised(lambda: sync(agent))))
    assert (err.code, err.attempts) == ("output.retries_exhausted", 2)
    assert [(c.code, c.model_feedback) for c in err.causes] == [
        ("output.schema_violation", "Answer in English.")
    ]


def test_a_model_that_keeps_answering_nothing_ends_in_an_empty_output() -> None:
    """An empty response every time: pydantic-ai asks for text, then gives up; the cause is
    ``output.empty`` with the words it gave the model."""

    def nothing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[])

    err = run(Agent(FunctionModel(nothing), retries=1))
    assert err.code == "output.retries_exhausted"
    assert [(c.code, c.model_feedback) for c in err.causes] == [
        ("output.empty", "Please return text.")
    ]


def test_a_page_kept_as_the_body_is_read_as_the_page() -> None:
    """A gateway's HTML page (Cloudflare's 502, recorded), which pydantic-ai keeps as a text
    ``body``: without the SDK cause, the status and the page decide (its title, the gateway)."""
    exc = raised(lambda: sync(Agent(cassette_model("openai", "cloudflare_502_html"))))
    assert isinstance(getattr(exc, "body", None), str)
    exc.__cause__ = None
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.unavailable", True)
    assert err.upstream["status"] == 502
    assert (err.upstream["title"], err.upstream["gateway"]) == ("502 Bad Gateway", "cloudflare")


def test_output_retries_exhausted_by_what_pydantic_ai_kept_as_the_cause() -> None:
    """``Exceeded maximum output retries`` (pydantic-ai's own class and message) with each
    cause it can keep: none (no cause), a ``ModelRetry`` from an output validator (its words
    are the feedback), or the ``UnexpectedModelBehavior`` it wraps as it is (read as itself)."""
    from pydantic_ai.exceptions import UnexpectedModelBehavior

    bare = valid(normalize(UnexpectedModelBehavior("Exceeded maximum output retries (2)")))
    assert (bare.code, bare.attempts, bare.max_attempts, bare.causes) == (
        "output.retries_exhausted",
        3,
        3,
        [],
    )

    asked = UnexpectedModelBehavior("Exceeded maximum output retries (1)")
    asked.__cause__ = ModelRetry("Answer in English.")
    err = valid(normalize(asked))
    assert [(c.code, c.model_feedback) for c in err.causes] == [
        ("output.schema_violation", "Answer in English.")
    ]

    wrapped = UnexpectedModelBehavior("Exceeded maximum output retries (1)")
    wrapped.__cause__ = UnexpectedModelBehavior("Received empty model response")
    err = valid(normalize(wrapped))
    assert [(c.code, c.detail) for c in err.causes] == [
        ("output.empty", "Received empty model response")
    ]


def test_other_pydantic_ai_exceptions_are_left_to_the_general_path() -> None:
    """pydantic-ai's ``UserError`` (a mistake in the harness's own code) is no failure the
    reader knows: it declines, and the answer is the library's internal error, named."""
    from pydantic_ai.exceptions import UserError

    from normalize_errors.frameworks.pydantic_ai import _read

    exc = UserError("Unknown keyword argument")
    assert _read(exc) is None
    err = valid(normalize(exc))
    assert (err.code, err.upstream["exception"]) == (
        "harness.internal_error",
        "pydantic_ai.exceptions.UserError",
    )
