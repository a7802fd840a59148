"""The OpenAI Agents SDK's exceptions, produced by running real agents offline over a fake
model (a ``Model`` subclass answering with scripted Responses output items)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    GuardrailFunctionOutput,
    Runner,
    function_tool,
    input_guardrail,
)
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
)
from pydantic import BaseModel

from normalize_errors import HarnessError, normalize

from ..support import raised, valid


class Scripted(Model):
    """A model that answers every turn with the same output items."""

    def __init__(self, *items: Any) -> None:
        self.items = list(items)

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return ModelResponse(output=self.items, usage=Usage(), response_id="resp_1")

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def call(name: str, arguments: str = "{}") -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        arguments=arguments, call_id="call_1", name=name, type="function_call", id="fc_1"
    )


def message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg_1",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[])],
        role="assistant",
        status="completed",
        type="message",
    )


def run(agent: Agent[Any], **options: Any) -> HarnessError:
    exc = raised(lambda: asyncio.run(Runner.run(agent, "hi", **options)))
    err = valid(normalize(exc))
    assert err.__cause__ is exc
    return err


@function_tool
def double(x: int) -> int:
    """Double x."""
    return 2 * x


def test_max_turns_gives_the_limit() -> None:
    """A model that always calls a tool, max_turns=2: loop.max_turns_exceeded, limit 2."""
    agent = Agent(name="a", model=Scripted(call("double", '{"x": 1}')), tools=[double])
    err = run(agent, max_turns=2)
    assert err.code == "loop.max_turns_exceeded"
    assert err.limit == {"name": "turns", "value": 2.0}


def test_unknown_tool_and_invalid_tool_json() -> None:
    """ModelBehaviorError decided by its message."""
    unknown = run(Agent(name="a", model=Scripted(call("nope")), tools=[double]))
    assert unknown.code == "output.unknown_tool"
    assert unknown.location == {"tool_name": "nope"}

    @function_tool(failure_error_function=None)
    def strict(x: int) -> int:
        """Strict."""
        return x

    bad = run(Agent(name="a", model=Scripted(call("strict", "{not json")), tools=[strict]))
    assert bad.code == "output.invalid_tool_arguments"
    assert bad.location == {"tool_name": "strict"}


class Person(BaseModel):
    age: int


def test_invalid_final_output_is_malformed_output() -> None:
    """Structured output that is not JSON (the SDK redacts the details by default)."""
    agent = Agent(name="a", model=Scripted(message("not json")), output_type=Person)
    err = run(agent)
    assert err.code == "output.malformed"
    assert err.model_recoverable is True


def test_refusal() -> None:
    """A refusal item with structured output: ModelRefusalError -> policy.model_refusal."""
    refusal = ResponseOutputMessage(
        id="msg_1",
        content=[ResponseOutputRefusal(refusal="I can't help with that.", type="refusal")],
        role="assistant",
        status="completed",
        type="message",
    )
    err = run(Agent(name="a", model=Scripted(refusal), output_type=Person))
    assert (err.code, err.detail) == ("policy.model_refusal", "I can't help with that.")


def test_input_guardrail_tripwire() -> None:
    """A tripped input guardrail: policy.guardrail_triggered, the guardrail named."""

    @input_guardrail
    async def no_secrets(ctx: Any, agent: Any, text: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info={"why": "secret"}, tripwire_triggered=True)

    agent = Agent(name="a", model=Scripted(message("ok")), input_guardrails=[no_secrets])
    err = run(agent)
    assert err.code == "policy.guardrail_triggered"
    assert err.upstream["guardrail"] == "no_secrets"
    assert err.upstream["stage"] == "input"


def test_tool_timeout_raised() -> None:
    """timeout_behavior='raise_exception': ToolTimeoutError -> tool.timeout with the limit."""

    @function_tool(timeout=0.01, timeout_behavior="raise_exception")
    async def slow() -> int:
        """Slow."""
        await asyncio.sleep(1)
        return 1

    err = run(Agent(name="a", model=Scripted(call("slow")), tools=[slow]))
    assert err.code == "tool.timeout"
    assert err.limit == {"name": "tool_timeout", "value": 0.01, "unit": "s"}
    assert err.location == {"tool_name": "slow"}


def test_a_failing_tool_without_error_function_is_a_tool_failure() -> None:
    """failure_error_function=None: UserError 'Error running tool' -> tool.execution_failed."""

    @function_tool(failure_error_function=None)
    def broken() -> int:
        """Broken."""
        raise RuntimeError("disk full")

    err = run(Agent(name="a", model=Scripted(call("broken")), tools=[broken]))
    assert err.code == "tool.execution_failed"
    assert err.location == {"tool_name": "broken"}


def chat_model(*names: tuple[str, str]) -> tuple[Any, list[int]]:
    """The SDK's chat-completions model over a real AsyncOpenAI serving cassettes in order."""
    import openai
    from agents import OpenAIChatCompletionsModel

    from normalize_errors._wrapping._replay_calls import http_library

    from ..support import recorded

    http = http_library("openai")
    responses = [recorded(provider, name) for provider, name in names]
    count = [0]

    async def answer(request: Any) -> Any:
        status, headers, body = responses[min(count[0], len(responses) - 1)]
        count[0] += 1
        return http.Response(status, headers=headers, content=body)

    client = openai.AsyncOpenAI(
        api_key="sk-test",
        max_retries=0,
        http_client=http.AsyncClient(transport=http.MockTransport(answer)),
    )
    return OpenAIChatCompletionsModel("gpt-4o-mini", openai_client=client), count


def test_the_retry_policy_follows_the_harness_answer() -> None:
    """ModelRetrySettings(policy=retry_policy()): an overload is retried, a spent quota is not."""
    from agents import ModelSettings
    from agents.retry import ModelRetrySettings

    from normalize_errors.frameworks.agents import retry_policy

    settings = ModelSettings(
        retry=ModelRetrySettings(
            max_retries=3, backoff={"initial_delay": 0.0, "jitter": False}, policy=retry_policy()
        )
    )
    models = [
        chat_model(("openai", "overloaded_503"), ("openai", "finish_length_200")),
        chat_model(("openai", "insufficient_quota_429")),
        chat_model(("http", "azure_token_rate_limit_429")),
    ]

    async def main() -> list[Any]:  # one event loop for the three runs and their clients
        outcomes: list[Any] = []
        for model, _ in models:
            agent = Agent(name="a", model=model, model_settings=settings)
            try:
                outcomes.append(await Runner.run(agent, "hi"))
            except Exception as exc:
                outcomes.append(exc)
        return outcomes

    done, quota, day = asyncio.run(main())
    assert done.final_output
    assert models[0][1] == [2]
    err = valid(normalize(quota))
    assert (err.code, err.retryable, models[1][1]) == ("upstream.rate_limited", False, [1])
    err = valid(normalize(day))
    assert (err.retry_after, models[2][1]) == (86400.0, [1])


def streamed(name: str) -> HarnessError:
    """Runner.run_streamed over the SDK's Responses model, a real AsyncOpenAI serving an SSE
    cassette; the stream's terminal failure as the harness error."""
    import openai
    from agents import OpenAIResponsesModel

    from normalize_errors._wrapping._replay_calls import http_library

    from ..support import recorded

    http = http_library("openai")
    status, headers, body = recorded("openai", name)

    async def answer(request: Any) -> Any:
        return http.Response(status, headers=headers, content=body)

    client = openai.AsyncOpenAI(
        api_key="sk-test",
        max_retries=0,
        http_client=http.AsyncClient(transport=http.MockTransport(answer)),
    )
    agent = Agent(name="a", model=OpenAIResponsesModel("gpt-4o", openai_client=client))

    async def main() -> None:
        result = Runner.run_streamed(agent, "hi")
        async for _ in result.stream_events():
            pass

    exc = raised(lambda: asyncio.run(main()))
    return valid(normalize(exc))


def test_a_stream_that_ends_incomplete_or_on_an_error_event() -> None:
    """response.incomplete (max_output_tokens) -> output.truncated; an error event's code."""
    assert streamed("responses_stream_incomplete").code == "output.truncated"
    failed = streamed("responses_stream_failed_server_error")
    assert (failed.code, failed.retryable) == ("upstream.unavailable", True)


def test_output_and_tool_guardrails() -> None:
    """An output guardrail and a tool input guardrail that trip (raise_exception)."""
    from agents import (
        ToolGuardrailFunctionOutput,
        output_guardrail,
        tool_input_guardrail,
    )

    @output_guardrail
    async def no_pii(ctx: Any, agent: Any, output: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered=True)

    out = run(Agent(name="a", model=Scripted(message("ok")), output_guardrails=[no_pii]))
    assert out.code == "policy.guardrail_triggered"
    assert (out.upstream["guardrail"], out.upstream["stage"]) == ("no_pii", "output")

    @tool_input_guardrail
    def deny(data: Any) -> ToolGuardrailFunctionOutput:
        return ToolGuardrailFunctionOutput.raise_exception(output_info="no")

    @function_tool(tool_input_guardrails=[deny])
    def guarded(x: int) -> int:
        """Guarded."""
        return x

    tool = run(Agent(name="a", model=Scripted(call("guarded", '{"x": 1}')), tools=[guarded]))
    assert tool.code == "policy.guardrail_triggered"
    assert (tool.upstream["guardrail"], tool.upstream["stage"]) == ("deny", "tool_input")


class Slow(Scripted):
    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        await asyncio.sleep(1)
        return await super().get_response(*args, **kwargs)


def test_a_model_call_timeout() -> None:
    """ModelSettings(timeout=...) over a slow model: ModelTimeoutError -> upstream.unavailable."""
    from agents import ModelSettings

    agent = Agent(name="a", model=Slow(message("late")), model_settings=ModelSettings(timeout=0.01))
    err = run(agent)
    assert (err.code, err.retryable, err.upstream["code"]) == (
        "upstream.unavailable",
        True,
        "timeout",
    )


async def test_sandbox_errors_by_kind() -> None:
    """The SDK's local Unix sandbox (``UnixLocalSandboxClient``: a temporary workspace on the
    host, no container) raising its own errors: a command past its timeout, a path escaping
    the workspace root, an absolute path, and a listing of a missing directory."""
    from agents.sandbox.errors import (
        ExecNonZeroError,
        ExecTimeoutError,
        InvalidManifestPathError,
    )
    from agents.sandbox.sandboxes.unix_local import UnixLocalSandboxClient

    client = UnixLocalSandboxClient()
    session = await client.create()
    await session.start()
    try:
        timeout = await failure(session.exec("sleep 1", timeout=0.2))
        escape = await failure(session.read(Path("../../etc/passwd")))
        absolute = await failure(session.read(Path("/etc/passwd")))
        missing = await failure(session.ls("no-such-directory"))
    finally:
        await client.delete(session)
        # The SDK leaves the timed-out command's process to end on its own: let it end and
        # be reaped here, so its pipes are not collected (and warned about) in a later test.
        await asyncio.sleep(1.2)
        gc.collect()

    assert isinstance(timeout, ExecTimeoutError)
    assert isinstance(escape, InvalidManifestPathError)
    assert isinstance(absolute, InvalidManifestPathError)
    assert isinstance(missing, ExecNonZeroError)
    answers = [valid(normalize(exc)) for exc in (timeout, escape, absolute, missing)]
    assert [(a.code, a.upstream["code"]) for a in answers] == [
        ("tool.timeout", "exec_timeout"),
        ("tool.sandbox_violation", "invalid_manifest_path"),
        ("tool.sandbox_violation", "invalid_manifest_path"),
        ("tool.execution_failed", "exec_nonzero"),
    ]
    assert [a.retryable for a in answers] == [
        exc.retryable for exc in (timeout, escape, absolute, missing)
    ]


async def failure(call: Awaitable[object]) -> BaseException:
    """The exception awaiting ``call`` raises (the test fails if it raises none)."""
    try:
        await call
    except Exception as exc:
        return exc
    raise AssertionError("no exception was raised")


def test_invalid_final_output_with_model_data_logging_keeps_the_pointer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OPENAI_AGENTS_DONT_LOG_MODEL_DATA=0 (read at import, so patched here): the SDK keeps
    the ValidationError, and the answer is a schema violation at /age."""
    from agents import _debug

    monkeypatch.setattr(_debug, "DONT_LOG_MODEL_DATA", False)
    agent = Agent(name="a", model=Scripted(message('{"age": "old"}')), output_type=Person)
    err = run(agent)
    assert err.code == "output.schema_violation"
    assert err.location == {"pointer": "/age"}
    assert "/age" in (err.model_feedback or "")


@pytest.mark.parametrize(
    ("message", "code"),
    [
        (
            "Responses stream ended with an error event: code=rate_limit_exceeded; "
            "message=Rate limit reached for gpt-4o.",
            "upstream.rate_limited",
        ),
        ("The stream ended before the response completed: max_output_tokens", "output.truncated"),
        ("The stream ended: incomplete (content_filter)", "policy.content_filtered"),
        ("The stream ended without a response.completed event", "upstream.unavailable"),
        ("Model did not produce a final response!", "output.empty"),
        # what the SDK's run loop raises for a custom tool call the model sent without an id
        ("Custom tool call is missing call_id.", "upstream.invalid_response"),
    ],
)
def test_model_behaviour_of_a_stream_that_ended_early(message: str, code: str) -> None:
    """How a Responses stream ended decides: an error event is read like the provider's error
    body (its code), else the reason the message names. The messages are built here in the
    shape the SDK's stream handling uses (``code=...; message=...``)."""
    from agents.exceptions import ModelBehaviorError

    err = valid(normalize(ModelBehaviorError(message)))
    assert err.code == code
    assert err.upstream["framework"] == "agents"


def test_user_errors_and_cancelled_mcp_tools() -> None:
    """A UserError not about a tool is the harness's own mistake; a cancelled MCP tool call
    means the tool is not available."""
    from agents.exceptions import MCPToolCancellationError, UserError

    err = valid(normalize(UserError("Hosted tools are not supported with the ChatCompletions API")))
    assert (err.code, err.retryable) == ("harness.internal_error", False)
    err = valid(normalize(MCPToolCancellationError("the MCP server cancelled the call")))
    assert err.code == "tool.not_available"


def test_a_guardrail_whose_name_cannot_be_read_is_still_a_guardrail() -> None:
    """A tripwire exception (the SDK's own class) whose guardrail has no name and whose
    function has no ``__name__`` (a ``functools.partial``): its ``get_name()`` raises, so
    the answer names no guardrail, and keeps the stage."""
    import functools

    from agents import InputGuardrail
    from agents.exceptions import InputGuardrailTripwireTriggered
    from agents.guardrail import InputGuardrailResult

    async def check(ctx: Any, agent: Any, text: Any, *, word: str) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered=True)

    guardrail: InputGuardrail[Any] = InputGuardrail(
        guardrail_function=functools.partial(check, word="secret")
    )
    output = GuardrailFunctionOutput(output_info={"why": "secret"}, tripwire_triggered=True)
    exc = InputGuardrailTripwireTriggered(InputGuardrailResult(guardrail=guardrail, output=output))
    err = valid(normalize(exc))
    assert err.code == "policy.guardrail_triggered"
    assert err.upstream["stage"] == "input"
    assert err.upstream["guardrail"] is None


def test_other_sandbox_errors_are_tool_failures_with_the_sdks_code() -> None:
    """A sandbox error that is neither a timeout, a failed command nor an escaping path (the
    SDK's WorkspaceStopError): tool.execution_failed, keeping the SDK's code and retryable."""
    from agents.sandbox.errors import WorkspaceStopError

    exc = WorkspaceStopError(path=Path("/workspace"), retryable=True)
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("tool.execution_failed", True)
    assert err.upstream["code"] == "workspace_stop_error"
    assert err.detail == "failed to stop session"


def test_the_sdks_base_exception_is_left_to_the_general_path() -> None:
    """``AgentsException`` itself names no failure: the reader declines, and the answer is the
    general one for an unknown exception (the library's internal error, named)."""
    from agents.exceptions import AgentsException

    from normalize_errors.frameworks.agents import _read

    exc = AgentsException("something else went wrong")
    assert _read(exc) is None
    err = valid(normalize(exc))
    assert (err.code, err.upstream["exception"]) == (
        "harness.internal_error",
        "agents.exceptions.AgentsException",
    )


def test_an_error_event_the_provider_reader_cannot_read_falls_back_to_the_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If reading a stream's error event as the provider's body fails (the provider reader's
    last-resort internal error, made here on purpose), the reason the message names decides."""
    from agents.exceptions import ModelBehaviorError

    from normalize_errors.frameworks import agents as reader

    def broken(*args: Any, **kwargs: Any) -> HarnessError:
        return HarnessError.from_code("harness.internal_error", "normalize-errors could not read")

    monkeypatch.setattr(reader, "from_response", broken)
    message = (
        "Responses stream ended with an error event: code=response_incomplete; "
        "message=stopped at max_output_tokens."
    )
    err = valid(normalize(ModelBehaviorError(message)))
    assert err.code == "output.truncated"
    assert err.upstream["framework"] == "agents"
