"""The OpenAI adapter: every SDK exception class, failures only a real client can produce,
and the same failures given as raw HTTP responses and plain JSON results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

from normalize_errors import HarnessError, check, diagnose, from_response, normalize, wrap
from normalize_errors._wrapping._replay_calls import http_library
from normalize_errors.replay import load, run

from ..support import cassette, cassettes, needed, raised, valid

CASSETTES = [item.path for item in cassettes("openai")]
HTTP = http_library("openai")


def client(handler: Any, **options: Any) -> openai.OpenAI:
    """A real client whose transport is ``handler``."""
    return openai.OpenAI(
        api_key="sk-test",
        max_retries=0,
        http_client=HTTP.Client(transport=HTTP.MockTransport(handler)),
        **options,
    )


MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]


def test_connection_errors_and_timeouts() -> None:
    """The SDK wraps transport failures; the harness error names them and keeps the cause."""

    def refuse(request: Any) -> Any:
        raise HTTP.ConnectError("connection refused", request=request)

    def stall(request: Any) -> Any:
        raise HTTP.ReadTimeout("timed out", request=request)

    refused = raised(lambda: client(refuse).chat.completions.create(model="m", messages=MESSAGES))
    assert isinstance(refused, openai.APIConnectionError)
    err = valid(normalize(refused))
    assert (err.code, err.retryable, err.upstream["code"]) == (
        "upstream.unavailable",
        True,
        "connection_error",
    )
    assert err.upstream["cause"].endswith("ConnectError")
    slow = raised(lambda: client(stall).chat.completions.create(model="m", messages=MESSAGES))
    assert isinstance(slow, openai.APITimeoutError)
    assert valid(normalize(slow)).upstream["code"] == "timeout"


# -- rows no shipped cassette decides ------------------------------------------------------------


def status_529() -> HarnessError:
    """A 529 whose message does not say "overloaded", raised by the real client.

    The body is constructed (an OpenAI-compatible server behind Anthropic-style capacity
    signalling answers 529; no recording of one with this SDK was found): only the status
    can decide.
    """
    body = {"error": {"message": "Service at capacity", "type": "server_error"}}
    exc = raised(
        lambda: client(lambda _: HTTP.Response(529, json=body)).chat.completions.create(
            model="m", messages=MESSAGES
        )
    )
    assert isinstance(exc, openai.InternalServerError)
    return normalize(exc)


def quota_message() -> HarnessError:
    """A body with no quota code whose message says the balance ran out.

    DeepSeek's wording ("Insufficient Balance", ``code: invalid_request_error``, from the
    ``http/deepseek_insufficient_balance_402`` cassette's source), as a status-less stream
    error event carries it (constructed: the status is dropped, so the 402 row cannot decide).
    """
    event = {"error": {"message": "Insufficient Balance", "code": "invalid_request_error"}}
    return from_response(None, {}, event, provider="openai")


def vector_store_timeout() -> HarnessError:
    """A failed Responses result whose ``error.code`` is ``vector_store_timeout``.

    The code is one of the documented values of a Response's ``error.code`` (API reference,
    the Response object); the result around it is the ``responses_failed_200`` cassette's,
    with that code and a message of ours (constructed).
    """
    result = recorded_json("responses_failed_200")
    result["error"] = {"code": "vector_store_timeout", "message": "File search timed out."}
    err = diagnose(result, provider="openai")
    assert err is not None
    return err


def missing_key() -> HarnessError:
    """The real client built without a key (and no ``OPENAI_API_KEY``) raises OpenAIError."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("OPENAI_API_KEY", raising=False)
        exc = raised(openai.OpenAI)
    assert type(exc) is openai.OpenAIError
    return normalize(exc)


def counted_context_message() -> HarnessError:
    """Gemini's context overflow, with counts inside the words, read through the OpenAI SDK.

    The body is the ``google/context_window_exceeded_400`` cassette's, verbatim, as a user of
    the OpenAI SDK pointed at Gemini's OpenAI-compatible endpoint gets it (constructed: that
    the endpoint passes the native body on unchanged); no code or status says "context".
    """
    recorded = cassette("google/context_window_exceeded_400")
    exc = raised(
        lambda: client(
            lambda _: HTTP.Response(recorded.status, content=recorded.content)
        ).chat.completions.create(model="gemini-2.5-flash", messages=MESSAGES)
    )
    assert isinstance(exc, openai.BadRequestError)
    return normalize(exc)


def payment_required() -> HarnessError:
    """A 402 whose message names no quota or credits (constructed: the bare reason phrase);
    the status alone says the account must be paid for before waiting can help."""
    body = {"error": {"message": "Payment Required", "code": 402}}
    return from_response(402, {"content-type": "application/json"}, body, provider="openai")


def fastchat(number: int) -> Any:
    """FastChat's error body (``ErrorResponse``: object, message, code) with one of its
    ``ErrorCode`` numbers (fastchat/constants.py), sent with the 400 its
    ``create_error_response`` uses; constructed, the message a placeholder."""

    def case() -> HarnessError:
        body = {"object": "error", "message": "m", "code": number}
        return from_response(400, {"content-type": "application/json"}, body)

    case.__name__ = f"fastchat_{number}"
    return case


FASTCHAT = {
    40303: ("context.window_exceeded", False, "adjust"),
    40302: ("upstream.invalid_request", False, "fix"),
    40101: ("upstream.authentication_failed", False, "credentials"),
    42902: ("upstream.rate_limited", False, "human"),
    42901: ("upstream.rate_limited", True, "retry"),
    42903: ("upstream.overloaded", True, "retry"),
}
FASTCHAT_CASES = [fastchat(number) for number in FASTCHAT]

TABLE_CASES = [
    status_529,
    quota_message,
    vector_store_timeout,
    missing_key,
    counted_context_message,
    payment_required,
    *FASTCHAT_CASES,
]
"""Calls for the rows no shipped cassette decides (inputs of ``test_completeness.py``)."""
SDK_MODULES = ("openai", "openai._exceptions")
"""Where the SDK defines and exports its exception classes."""


@pytest.mark.parametrize(
    ("case", "code", "retryable", "advice"),
    [
        (status_529, "upstream.overloaded", True, "retry"),
        (quota_message, "upstream.rate_limited", False, "human"),
        (vector_store_timeout, "tool.timeout", True, "retry"),
        (missing_key, "upstream.authentication_failed", False, "credentials"),
        (counted_context_message, "context.window_exceeded", False, "adjust"),
        (payment_required, "upstream.rate_limited", False, "human"),
        *((case, *answer) for case, answer in zip(FASTCHAT_CASES, FASTCHAT.values(), strict=True)),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_rows_no_cassette_decides(case: Any, code: str, retryable: bool, advice: str) -> None:
    """Each focused case gives its row's code, ``retryable`` and advice."""
    err = valid(case())
    assert (err.code, err.retryable, err.advice) == (code, retryable, advice)
    assert err.upstream["provider"] == "openai"


def recorded_json(name: str) -> Any:
    """The body of a shipped OpenAI cassette, parsed (a fresh copy each call)."""
    return cassette(f"openai/{name}").json()


def test_parse_raises_length_finish_reason_error_read_from_its_completion() -> None:
    """chat.completions.parse() raises LengthFinishReasonError; its completion tells why."""
    found = cassette("openai/finish_length_200")

    def answer(request: Any) -> Any:
        return HTTP.Response(found.status, headers=found.headers, content=found.content)

    request: dict[str, Any] = {"response_format": {"type": "json_object"}}
    exc = raised(
        lambda: client(answer).chat.completions.parse(model="gpt-4o", messages=MESSAGES, **request)
    )
    assert isinstance(exc, openai.LengthFinishReasonError)
    err = valid(normalize(exc))
    assert (err.code, err.upstream["stop_reason"]) == ("output.truncated", "length")
    assert err.upstream["exception"].endswith("LengthFinishReasonError")


def _openrouter_error(native: str | None) -> dict[str, Any]:
    """OpenRouter's failed choice, as in ``openrouter_stream_malformed_function_call_200``."""
    choice: dict[str, Any] = {"index": 0, "finish_reason": "error", "message": {"content": ""}}
    if native is not None:
        choice["native_finish_reason"] = native
    return {"object": "chat.completion", "choices": [choice]}


@pytest.mark.parametrize(
    ("native", "code", "reason"),
    [
        ("MALFORMED_FUNCTION_CALL", "output.invalid_tool_arguments", "MALFORMED_FUNCTION_CALL"),
        ("SAFETY", "policy.content_filtered", "SAFETY"),
        ("MAX_TOKENS", "output.truncated", "MAX_TOKENS"),
        ("network_error", "upstream.unavailable", "network_error"),
        (None, "upstream.unavailable", "error"),
        ("STOP", "upstream.unavailable", "error"),  # naming no failure: OpenRouter's "error" stands
    ],
)
def test_openrouter_error_finish_gives_way_to_a_native_reason_naming_a_failure(
    native: str | None, code: str, reason: str
) -> None:
    """``finish_reason: error`` is read through ``native_finish_reason`` when that names one."""
    err = diagnose(_openrouter_error(native), provider="openai")
    assert err is not None
    assert (valid(err).code, err.upstream["stop_reason"]) == (code, reason)


def test_openrouter_numeric_429_in_a_stream_event_is_a_rate_limit() -> None:
    """OpenRouter's error ``code`` is the HTTP status: 429 inside a 200 stream is a rate limit."""
    event = {"error": {"message": "Rate limit exceeded: free-models-per-day", "code": 429}}
    err = valid(from_response(None, {}, event, provider="openai"))
    assert (err.code, err.retryable) == ("upstream.rate_limited", True)
    event = {"error": {"message": "Provider returned error", "code": 502}}
    other = valid(from_response(None, {}, event, provider="openai"))
    assert other.code != "upstream.rate_limited"


def test_a_problem_document_gives_its_detail_else_its_title() -> None:
    """NVIDIA NIM answers with RFC 9457 documents: ``detail`` (else ``title``) is the message."""
    detail = "Function 'f': Not found for account 'a'"
    body = {"status": 404, "title": "Not Found", "detail": detail}
    assert valid(from_response(404, {}, body, provider="openai")).upstream["message"] == detail
    problem = {"status": 429, "title": "Too Many Requests"}
    titled = valid(from_response(429, {}, problem, provider="openai"))
    assert (titled.code, titled.upstream["message"]) == ("upstream.rate_limited", problem["title"])
    google = {"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}}
    found = valid(from_response(429, {}, google, provider="openai"))
    assert found.upstream["message"] == "Quota exceeded."  # a string status is no problem document


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.stem)
def test_raw_responses_read_like_the_sdk_path(path: Path) -> None:
    """from_response on the recorded body (bytes, text, parsed) agrees with the SDK replay."""
    scenario = load(path)
    needed(scenario)  # a native SDK's scenario: replayed only where that SDK is installed
    recorded = cassette(path)
    status, headers, body = recorded.status, recorded.headers, recorded.body
    if status >= 400 and not scenario.stream:
        expected = run(scenario).error
        assert expected is not None
        given: list[Any] = [body.encode(), body]
        if body.lstrip()[:1] in ("{", "["):
            given.append(json.loads(body))
        for raw in given:
            found = valid(from_response(status, headers, raw))
            assert (found.code, found.retryable) == (expected.code, expected.retryable)
            assert found.retry_after == expected.retry_after
    elif status == 200 and not scenario.stream:
        try:
            result: Any = json.loads(body)
        except ValueError:  # a page where a result should be: the SDK hands over the text
            result = body
        problem = diagnose(result, provider="openai", tools=scenario.tools)
        assert problem is not None
        assert problem.code == scenario.expect["code"]
        with pytest.raises(type(problem)):
            check(result, provider="openai", tools=scenario.tools)


def test_successful_results_pass_through_untouched() -> None:
    """A normal completion and a normal Responses result give no error; check returns them."""
    completion = {
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "Hi"}}],
    }
    response = {
        "object": "response",
        "status": "completed",
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "Hi"}]}],
    }
    for result in (completion, response):
        assert diagnose(result) is None
        assert check(result) is result


# -- streamed failures, folded from their chunks -------------------------------------------------


def chunk_of(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """One chat completion chunk (the shape of the API reference's streaming example)."""
    return {
        "id": "chatcmpl-CONSTRUCTED",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-4.1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def streaming(chunks: list[dict[str, Any]]) -> openai.OpenAI:
    """A real client whose server streams ``chunks`` as server-sent events."""
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"

    def handler(request: Any) -> Any:
        return HTTP.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return client(handler)


def test_a_streamed_tool_call_cut_mid_arguments_is_invalid_arguments() -> None:
    """The recorded cut-off arguments (cassette ``tool_call_arguments_truncated_json``, a
    report about streamed calls) arriving in pieces, the way a stream sends a tool call: the
    folded call is ``output.invalid_tool_arguments`` for the tool the first piece named."""
    recorded = json.loads(cassette("openai/tool_call_arguments_truncated_json").content)
    call = recorded["choices"][0]["message"]["tool_calls"][0]
    arguments = call["function"]["arguments"]
    half = len(arguments) // 2
    first = {"index": 0, "id": call["id"], "type": "function"}
    chunks = [
        chunk_of({"role": "assistant", "content": None}),
        chunk_of({"tool_calls": [{**first, "function": {"name": call["function"]["name"]}}]}),
        chunk_of({"tool_calls": [{"index": 0, "function": {"arguments": arguments[:half]}}]}),
        chunk_of({"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]}),
        chunk_of({}, "tool_calls"),
    ]
    stream = wrap(streaming(chunks)).chat.completions.create(
        model="gpt-4.1", messages=MESSAGES, stream=True
    )
    err = raised(lambda: list(stream))
    assert isinstance(err, HarnessError)
    assert err.code == "output.invalid_tool_arguments"
    assert err.location == {"tool_name": call["function"]["name"], "tool_call_id": call["id"]}
    assert err.stream is not None
    assert (err.stream["chunks"], err.stream["terminal"]) == (5, True)


def test_a_streamed_refusal_is_a_model_refusal() -> None:
    """The refusal of the structured-outputs guide (cassette
    ``refusal_structured_output_200``) sent in ``delta.refusal`` pieces."""
    recorded = json.loads(cassette("openai/refusal_structured_output_200").content)
    refusal = recorded["choices"][0]["message"]["refusal"]
    chunks = [
        chunk_of({"role": "assistant", "content": None, "refusal": ""}),
        chunk_of({"refusal": refusal[:10]}),
        chunk_of({"refusal": refusal[10:]}),
        chunk_of({}, "stop"),
    ]
    stream = wrap(streaming(chunks)).chat.completions.create(
        model="gpt-4.1", messages=MESSAGES, stream=True
    )
    err = raised(lambda: list(stream))
    assert isinstance(err, HarnessError)
    assert err.code == "policy.model_refusal"
    assert refusal in (err.detail or "") + str(err.upstream)


def responses_result(status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    """A Responses API ``response`` object, in the shape of the API reference's example
    (ids, times and texts constructed)."""
    return {
        "id": "resp_CONSTRUCTED",
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": "gpt-4.1",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def answering(body: dict[str, Any]) -> openai.OpenAI:
    def handler(request: Any) -> Any:
        return HTTP.Response(200, json=body)

    return client(handler)


WEATHER_TOOL: list[Any] = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    }
]


def test_responses_results_with_tool_calls_and_other_items() -> None:
    """A function_call naming a tool the request did not offer is output.unknown_tool; a
    valid call, a hosted tool's item (web search) and a response still in progress are no
    failure."""
    unknown = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_stock_price",
        "arguments": '{"symbol": "ACME"}',
        "status": "completed",
    }
    wrapped = wrap(answering(responses_result("completed", [unknown])))
    err = raised(lambda: wrapped.responses.create(model="gpt-4.1", input="hi", tools=WEATHER_TOOL))
    assert isinstance(err, HarnessError)
    assert err.code == "output.unknown_tool"
    assert err.location == {"tool_name": "get_stock_price", "tool_call_id": "call_1"}
    valid_call = {**unknown, "name": "get_weather", "arguments": '{"location": "Paris"}'}
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    for output, status in (([valid_call], "completed"), ([search], "completed"), ([], "queued")):
        fine = answering(responses_result(status, output))
        result = wrap(fine).responses.create(model="gpt-4.1", input="hi", tools=WEATHER_TOOL)
        assert result.status == status


def test_tools_the_sdk_consumed_and_tools_in_a_namespace_are_no_unknown_tool() -> None:
    """The wrapper never reads an argument the SDK has used up: tools offered as a one-shot
    iterator are not checked against (the SDK read them; nothing false is raised). The
    functions of a Responses ``namespace`` tool are offered; a name outside it is not."""
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "namespace": "weather",
        "arguments": '{"location": "Paris"}',
        "status": "completed",
    }
    fine = wrap(answering(responses_result("completed", [call])))
    result = fine.responses.create(model="gpt-4.1", input="hi", tools=iter(WEATHER_TOOL))
    assert result.status == "completed"
    namespace: list[Any] = [
        {"type": "namespace", "name": "weather", "description": "Weather", "tools": WEATHER_TOOL}
    ]
    result = fine.responses.create(model="gpt-4.1", input="hi", tools=namespace)
    item: Any = result.output[0]
    assert item.name == "get_weather"
    other = {**call, "name": "get_stock_price"}
    wrapped = wrap(answering(responses_result("completed", [other])))
    err = raised(lambda: wrapped.responses.create(model="gpt-4.1", input="hi", tools=namespace))
    assert isinstance(err, HarnessError)
    assert err.code == "output.unknown_tool"
    assert "get_weather" in str(err.upstream) + str(err.detail) + str(err.model_feedback)


@pytest.mark.parametrize(
    ("body", "message", "vendor_code"),
    [
        # Cloudflare's envelope whose first entry is no object: nothing read from it
        ({"success": False, "errors": ["Bad gateway"]}, None, None),
        # an entry with a code and no message, and one with a message and no code
        ({"success": False, "errors": [{"code": 7003}]}, None, "7003"),
        (
            {"success": False, "errors": [{"message": "No route for that URI"}]},
            "No route for that URI",
            None,
        ),
        # a problem document whose detail is no text
        ({"status": 404, "detail": {"why": "gone"}}, None, None),
    ],
)
def test_error_envelopes_with_members_missing(
    body: dict[str, Any], message: str | None, vendor_code: str | None
) -> None:
    """Bodies of the shapes the adapter reads (Cloudflare's ``errors`` list, RFC 9457), with
    members missing or of another type (constructed): what is there is read, nothing else,
    and the status decides."""
    err = valid(from_response(404, {}, body, provider="openai"))
    assert err.code == "upstream.invalid_request"
    assert err.upstream.get("code") == vendor_code
    assert err.upstream.get("message") == message


@pytest.mark.parametrize(
    ("inner", "code"),
    [
        ({"code": "ResponsibleAIPolicyViolation"}, "policy.content_filtered"),
        ({"code": 17, "content_filter_result": {}}, "upstream.invalid_request"),
        ({"content_filter_result": {"hate": {"filtered": False}}}, "upstream.invalid_request"),
        ({"code": ["ResponsibleAIPolicyViolation"]}, "upstream.invalid_request"),
    ],
)
def test_an_azure_innererror_code_counts_only_when_it_is_text(
    inner: dict[str, Any], code: str
) -> None:
    """Azure's ``innererror.code`` is one more vendor id (``ResponsibleAIPolicyViolation``
    decides on its own); a number, a list or no code at all adds none, and the 400 decides.
    Constructed bodies with a neutral message; each read twice, as the second read takes the
    kept ids."""
    body = {"error": {"message": "Bad request.", "code": None, "innererror": inner}}
    for _ in range(2):
        err = valid(from_response(400, {}, body, provider="openai"))
        assert err.code == code
        assert err.upstream["innererror"] == inner


class APIConnectionError(openai.APIConnectionError):
    """A class of another package named as the SDK's and subclassing it (litellm's own
    exceptions do so: ``litellm.exceptions.APIConnectionError``)."""


def test_a_subclass_named_as_the_sdk_class_reads_as_the_sdk_class() -> None:
    """The adapter looks for the class names of its table among the SDK's own modules: the
    subclass of another module, named ``APIConnectionError`` too, is passed over for
    openai's, and reads as openai's does."""
    request = HTTP.Request("POST", "https://api.openai.com/v1/chat/completions")
    own = APIConnectionError(message="Connection error.", request=request)
    sdk = openai.APIConnectionError(message="Connection error.", request=request)
    err, expected = valid(normalize(own)), valid(normalize(sdk))
    assert (err.code, err.retryable) == ("upstream.unavailable", True)
    assert err.upstream["code"] == "connection_error"
    assert err.upstream["exception"] == f"{__name__}.APIConnectionError"  # the class raised
    mine, theirs = err.to_dict(), expected.to_dict()
    del mine["upstream"]["exception"], theirs["upstream"]["exception"]
    assert mine == theirs
    assert err.__cause__ is own


def test_an_error_given_as_a_string_keeps_the_message_the_sdk_read() -> None:
    """A body ``{"error": "text"}`` (constructed) through the real client: the SDK's
    exception and the raw response give the text as the message."""

    def handler(request: Any) -> Any:
        return HTTP.Response(429, json={"error": "Too many requests, slow down"})

    exc = raised(lambda: client(handler).chat.completions.create(model="m", messages=MESSAGES))
    assert isinstance(exc, openai.RateLimitError)
    err = valid(normalize(exc))
    assert (err.code, err.upstream["message"]) == (
        "upstream.rate_limited",
        "Too many requests, slow down",
    )
    body = {"error": "Too many requests, slow down"}
    raw = valid(from_response(429, {}, body, provider="openai"))
    assert raw.upstream["message"] == "Too many requests, slow down"


def test_a_message_part_without_text_is_no_output() -> None:
    """A completed Responses message whose only part has empty text (constructed) produced
    nothing: ``output.empty``; a tool-call delta without a function is skipped in a stream."""
    part = {"type": "output_text", "text": "", "annotations": []}
    message = {"type": "message", "id": "msg_1", "role": "assistant", "content": [part]}
    found = diagnose(responses_result("completed", [message]), provider="openai")
    assert found is not None
    assert valid(found).code == "output.empty"
    chunks = [
        chunk_of({"role": "assistant", "content": None}),
        chunk_of({"tool_calls": [{"index": 0, "id": "call_1", "type": "function"}]}),
        chunk_of({"tool_calls": [{"index": 0, "function": {"name": "get_weather"}}]}),
        chunk_of({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
        chunk_of({}, "tool_calls"),
    ]
    from normalize_errors.providers import openai as adapter

    chat_tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    assert adapter.diagnose_stream(chunks, chat_tools) is None
    chunks[3] = chunk_of({"tool_calls": [{"index": 0, "function": {"arguments": "{"}}]})
    cut = adapter.diagnose_stream(chunks, chat_tools)
    assert cut is not None
    assert (cut.code, cut.location) == (
        "output.invalid_tool_arguments",
        {"tool_name": "get_weather", "tool_call_id": "call_1"},
    )


def test_reasoning_alone_is_no_output_and_an_empty_body_is_no_result() -> None:
    """A completed Responses result with only a reasoning item produced nothing the caller
    can use: ``output.empty``; with a message after it, no failure. A JSON object with no
    members at all is not judged (constructed shapes)."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    text = {"type": "output_text", "text": "Paris.", "annotations": []}
    message = {"type": "message", "id": "msg_1", "role": "assistant", "content": [text]}
    alone = diagnose(responses_result("completed", [reasoning]), provider="openai")
    assert alone is not None
    assert valid(alone).code == "output.empty"
    assert diagnose(responses_result("completed", [reasoning, message]), provider="openai") is None
    assert diagnose({}, provider="openai") is None


def test_a_result_of_several_choices_fails_only_when_every_choice_fails() -> None:
    """``n=2``: one usable choice is an answer, whatever the other one is; when every choice
    fails, the error is the first one's (``upstream.choice`` says which)."""
    fine = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hi"}}
    empty = {"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": ""}}
    cut = {"index": 1, "finish_reason": "length", "message": {"role": "assistant", "content": "H"}}
    body: dict[str, Any] = {
        "id": "chatcmpl-CONSTRUCTED",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
    }
    messages: list[Any] = [{"role": "user", "content": "hi"}]
    for choices in ([fine, empty], [{**empty, "index": 0}, {**fine, "index": 1}], [fine, cut]):
        wrapped = wrap(answering({**body, "choices": choices}))
        result = wrapped.chat.completions.create(model="gpt-4o-mini", messages=messages, n=2)
        assert len(result.choices) == 2
    failing = [{**cut, "index": 0}, empty]
    wrapped = wrap(answering({**body, "choices": failing}))
    err = raised(
        lambda: wrapped.chat.completions.create(model="gpt-4o-mini", messages=messages, n=2)
    )
    assert isinstance(err, HarnessError)
    assert (err.code, err.upstream["choice"]) == ("output.truncated", 0)
