"""An error inside a 200 stream reads like its HTTP twin, through every SDK's own stream
reader (issue 25 part 3).

Each test drives the real SDK client over an in-memory transport (httpx/httpx2
``MockTransport``; for botocore, a stubbed 200 response whose body is real event-stream
framing). The stream sends ordinary chunks, then an error frame. The client is used twice:
wrapped (``wrap(client)``: the error is typed as the SDK raises it, and says how many
chunks, and how much output, reached the caller before it: ``err.stream``) and plain (the
SDK's own exception, passed to ``normalize``). Both must give the code and retryability of
the same error object sent as an HTTP error (its "twin"), and keep the frame's facts in
``upstream``.

Where the SDK reader takes a stream apart:

* openai: a data event whose JSON has an ``error`` member raises ``APIError`` with that
  member as ``body`` and no status;
* anthropic: ``event: error`` raises ``APIStatusError`` with the 200 response;
* google-genai: a chunk whose first member is ``error`` (an SSE ``data:`` event or raw
  JSON lines) raises ``ClientError``/``ServerError`` chosen by the chunk's ``code``, with
  the 200 response;
* botocore: an event-stream message of type ``exception`` raises ``EventStreamError``.

Where the frames come from is said next to each one. The ordinary chunks are taken
verbatim from shipped cassettes (their sources are named in them). Putting those chunks
in front of a frame from another source, the SSE framing (``data:`` lines, an
``event: error`` line where the source shows only the JSON) and the twin's status are
constructed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, NamedTuple

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors

from normalize_errors import HarnessError, class_for_code, from_response, normalize, wrap
from normalize_errors._wrapping._replay_calls import http_library

# the event-stream framing and the boto3 client of the Bedrock adapter's tests
from .providers.test_bedrock import MESSAGES as BEDROCK_MESSAGES
from .providers.test_bedrock import MODEL, ORIGINAL, START, Stubber, _b64, serve
from .providers.test_bedrock import client as bedrock_client
from .providers.test_bedrock import event as bedrock_event
from .providers.test_bedrock import exception as bedrock_exception
from .support import is_instance, recorded, stream_of, valid


class Frame(NamedTuple):
    """One error frame and what it must give."""

    name: str
    event: bytes  # the frame as the stream sends it
    error: dict[str, Any]  # the error object it carries, as an HTTP error body would
    twin_status: int  # the HTTP status that body comes with outside a stream (constructed)
    code: str
    retryable: bool
    upstream: dict[str, Any]  # members upstream must have


def events(body: bytes) -> list[bytes]:
    """The SSE events of a stream body, each with its blank-line end."""
    return [part.strip(b"\n") + b"\n\n" for part in body.split(b"\n\n") if part.strip()]


def error_event(provider: str, name: str) -> bytes:
    """The (only) error event of a shipped stream cassette."""
    _, _, body = recorded(provider, name)
    found = [event for event in events(body) if b'"error"' in event]
    assert len(found) == 1, found
    return found[0]


def body_of(event: bytes) -> dict[str, Any]:
    """The JSON of an SSE event's data line."""
    for line in event.decode().splitlines():
        if line.startswith("data:"):
            data: dict[str, Any] = json.loads(line[5:])
            return data
    raise AssertionError(event)


def twin(frame: Frame, provider: str) -> HarnessError:
    """The frame's error object sent as an HTTP error with its twin status."""
    headers = {"content-type": "application/json"}
    return from_response(frame.twin_status, headers, frame.error, provider=provider)


def check_error(err: HarnessError, frame: Frame, provider: str) -> None:
    """``err`` reads as ``frame`` must, and as its HTTP twin does."""
    valid(err)
    assert (err.code, err.retryable) == (frame.code, frame.retryable), err.upstream
    assert isinstance(err, class_for_code(frame.code))
    assert err.upstream["provider"] == provider
    assert err.upstream["in_stream"] is True
    for key, value in frame.upstream.items():
        assert err.upstream.get(key) == value, (key, err.upstream)
    other = twin(frame, provider)
    assert (other.code, other.retryable) == (err.code, err.retryable), other.upstream


def same_error(plain: HarnessError, wrapped: HarnessError, retries: bool = True) -> None:
    """The plain client's error, normalized, is the wrapped one's, but for ``max_attempts``
    and ``upstream.stream``: only ``wrap()`` knows the client's ``max_retries`` (0 here: one
    attempt), and gives it to an ``upstream.*`` error of a client that has one
    (``retries``); only ``wrap()`` watched what the stream delivered."""
    assert plain.max_attempts is None
    assert plain.stream is None
    data = plain.to_dict()
    if retries and plain.code.startswith("upstream."):
        assert wrapped.max_attempts == 1
        data["max_attempts"] = 1
    else:
        assert wrapped.max_attempts is None
    theirs = wrapped.to_dict()
    assert theirs["upstream"].pop("stream")["chunks"] >= 0
    assert data == theirs


def raised(consume: Callable[[], Any]) -> Exception:
    try:
        consume()
    except Exception as exc:
        return exc
    raise AssertionError("the stream ended without an error")


# -- openai ------------------------------------------------------------------------------------

# Two ordinary chat completion chunks, verbatim from the shipped cassette
# openai/chat_stream_error_midstream (coder/coder's aibridge fixture, pinned there).
CHAT_CHUNKS = events(recorded("openai", "chat_stream_error_midstream")[2])[:2]
# The first two events of a Responses stream, verbatim from the shipped cassette
# openai/responses_stream_incomplete (Mirascope's recorded cassette, pinned there).
RESPONSES_EVENTS = events(recorded("openai", "responses_stream_incomplete")[2])[:2]

# https://github.com/anomalyco/opencode/issues/25731 (description, 2026-05-04): the SSE error
# chunk of an overloaded OpenAI Responses stream, verbatim; the "event: error" line is
# constructed (the issue shows the JSON only; the Responses API names its events so).
OVERLOADED = (
    '{"type":"error","sequence_number":2,"error":{"type":"service_unavailable_error",'
    '"code":"server_is_overloaded","message":"Our servers are currently overloaded. Please '
    'try again later.","param":null}}'
)


def openai_frame(
    name: str, event: bytes, status: int, code: str, retryable: bool, **facts: Any
) -> Frame:
    """A frame whose ``upstream`` keeps its message and ``facts`` (``code_`` is ``code``)."""
    error = body_of(event)["error"]
    upstream = {"message": error["message"]}
    upstream.update({key.rstrip("_"): value for key, value in facts.items()})
    return Frame(name, event, error, status, code, retryable, upstream)


OPENAI_FRAMES = [
    # llama-server's context overflow (unsloth PR 9390, see the cassette)
    openai_frame(
        "llamacpp_context",
        error_event("openai", "llamacpp_stream_error_context_200"),
        400,
        "context.window_exceeded",
        False,
    ),
    # vLLM's API (llm-d inference simulator issue 596, see the cassette)
    openai_frame(
        "vllm_context",
        error_event("openai", "llmd_sim_stream_context_error_200"),
        400,
        "context.window_exceeded",
        False,
        type="BadRequestError",
    ),
    # OpenRouter's free-tier limit (aider issue 3550, see the cassette)
    openai_frame(
        "openrouter_rate_limit",
        error_event("openai", "openrouter_stream_error_chunk_rate_limit_200"),
        429,
        "upstream.rate_limited",
        True,
        code_="429",
    ),
    openai_frame(
        "openai_overloaded",
        b"event: error\ndata: " + OVERLOADED.encode() + b"\n\n",
        503,
        "upstream.overloaded",
        True,
        code_="server_is_overloaded",
        type="service_unavailable_error",
    ),
]
OPENAI_IDS = [frame.name for frame in OPENAI_FRAMES]
LIMITS = {"llamacpp_context": (2048, 2358), "vllm_context": (1024, 1029)}


def openai_client(body: bytes, asynchronous: bool = False) -> Any:
    """A real (async) OpenAI client whose every request gets a 200 stream of ``body``."""
    http = http_library("openai")

    def answer(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    transport = http.MockTransport(answer)
    if asynchronous:
        return openai.AsyncOpenAI(
            api_key="sk-test", max_retries=0, http_client=http.AsyncClient(transport=transport)
        )
    return openai.OpenAI(
        api_key="sk-test", max_retries=0, http_client=http.Client(transport=transport)
    )


def chat(client: Any) -> list[Any]:
    seen: list[Any] = []
    stream = client.chat.completions.create(
        model="gpt-4.1", messages=[{"role": "user", "content": "Hello"}], stream=True
    )
    seen.extend(stream)
    return seen


def check_openai_vendor_error(exc: Exception, frame: Frame) -> None:
    """The SDK's own exception: an ``APIError`` with the frame's error and no status."""
    assert type(exc) is openai.APIError, type(exc)
    assert exc.body == frame.error
    assert exc.message == frame.error["message"]


@pytest.mark.parametrize("frame", OPENAI_FRAMES, ids=OPENAI_IDS)
def test_openai_chat_stream_error_frames(frame: Frame) -> None:
    """Two chunks, then the frame: the wrapped stream raises the twin's code with both chunks
    kept; the plain client's ``APIError`` (no status) normalizes to the same error."""
    body = b"".join(CHAT_CHUNKS) + frame.event
    seen: list[Any] = []

    def consume() -> None:
        for chunk in wrap(openai_client(body)).chat.completions.create(
            model="gpt-4.1", messages=[{"role": "user", "content": "Hello"}], stream=True
        ):
            seen.append(chunk)

    err = raised(consume)
    assert isinstance(err, HarnessError)
    assert is_instance(err, openai.APIError)  # a drop-in: except openai.APIError still works
    check_openai_vendor_error(err.problem.__cause__, frame)  # type: ignore[arg-type]
    check_error(err.problem, frame, "openai")
    assert len(seen) == 2
    assert stream_of(err)["chunks"] == len(seen)
    assert (stream_of(err)["phase"], stream_of(err)["output_chars"]) == ("text", 3)
    assert [c.choices[0].delta.content for c in seen] == ["", "The"]
    if frame.name in LIMITS:
        limit = err.problem.limit
        assert limit is not None
        assert (limit["name"], limit["value"], limit["observed"]) == (
            "context_tokens",
            *LIMITS[frame.name],
        )

    exc = raised(lambda: chat(openai_client(body)))
    check_openai_vendor_error(exc, frame)
    plain = normalize(exc)
    check_error(plain, frame, "openai")
    assert plain.stream is None  # no watch counted it
    same_error(plain, err.problem)


@pytest.mark.parametrize("frame", OPENAI_FRAMES, ids=OPENAI_IDS)
def test_openai_async_chat_stream_error_frames(frame: Frame) -> None:
    """The async client's ``AsyncStream`` reads the frame the same way."""
    body = b"".join(CHAT_CHUNKS) + frame.event

    async def consume(client: Any) -> list[Any]:
        seen: list[Any] = []
        stream = await client.chat.completions.create(
            model="gpt-4.1", messages=[{"role": "user", "content": "Hello"}], stream=True
        )
        async for chunk in stream:
            seen.append(chunk)
        return seen

    err = raised(lambda: asyncio.run(consume(wrap(openai_client(body, asynchronous=True)))))
    assert isinstance(err, HarnessError)
    check_error(err.problem, frame, "openai")
    assert stream_of(err)["chunks"] == 2
    exc = raised(lambda: asyncio.run(consume(openai_client(body, asynchronous=True))))
    check_openai_vendor_error(exc, frame)
    check_error(normalize(exc), frame, "openai")


def test_openai_responses_stream_error_event() -> None:
    """The overloaded frame in the Responses stream it came from: after ``response.created``
    and ``response.in_progress``, ``event: error`` raises ``APIError`` in the SDK too."""
    frame = OPENAI_FRAMES[-1]
    body = b"".join(RESPONSES_EVENTS) + frame.event
    seen: list[Any] = []

    def consume(client: Any) -> None:
        seen.clear()
        for event in client.responses.create(model="gpt-4o", input="Hello", stream=True):
            seen.append(event)

    err = raised(lambda: consume(wrap(openai_client(body))))
    assert isinstance(err, HarnessError)
    check_error(err.problem, frame, "openai")
    assert [event.type for event in seen] == ["response.created", "response.in_progress"]
    assert stream_of(err) == {
        "api": "responses",
        "chunks": 2,
        "phase": "before_output",
        "output_chars": 0,
        "terminal": False,
    }
    exc = raised(lambda: consume(openai_client(body)))
    check_openai_vendor_error(exc, frame)
    check_error(normalize(exc), frame, "openai")


# -- anthropic ---------------------------------------------------------------------------------

# The two shipped cassettes whose stream ends in `event: error` with overloaded_error after
# ordinary events: Anthropic's streaming docs, and a payload a user captured (gptel PR 1512,
# with details and request_id); see the cassettes.
ANTHROPIC_STREAMS = ["stream_error_overloaded", "stream_error_overloaded_with_request_id"]


def anthropic_frame(name: str) -> Frame:
    data = body_of(error_event("anthropic", name))
    upstream = {"status": 200, "code": "overloaded_error", "type": "overloaded_error"}
    if "request_id" in data:
        upstream["request_id"] = data["request_id"]
    # Anthropic sends overloaded_error with HTTP status 529 outside a stream (its errors page)
    return Frame(name, b"", data, 529, "upstream.overloaded", True, upstream)


def anthropic_client(name: str, asynchronous: bool = False) -> Any:
    http = http_library("anthropic")
    status, headers, body = recorded("anthropic", name)

    def answer(request: Any) -> Any:
        return http.Response(status, headers=headers, content=body)

    transport = http.MockTransport(answer)
    if asynchronous:
        return anthropic.AsyncAnthropic(
            api_key="sk-ant-test", max_retries=0, http_client=http.AsyncClient(transport=transport)
        )
    return anthropic.Anthropic(
        api_key="sk-ant-test", max_retries=0, http_client=http.Client(transport=transport)
    )


MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]


def text_of(events_seen: list[Any]) -> str:
    return "".join(
        e.delta.text
        for e in events_seen
        if e.type == "content_block_delta" and e.delta.type == "text_delta"
    )


@pytest.mark.parametrize("name", ANTHROPIC_STREAMS)
@pytest.mark.parametrize("helper", [False, True], ids=["create", "stream_helper"])
def test_anthropic_error_event(name: str, helper: bool) -> None:
    """``event: error`` with overloaded_error: the wrapped stream (``create(stream=True)`` and
    the ``messages.stream()`` helper) raises upstream.overloaded with the events before it;
    the plain client's ``APIStatusError`` (status 200) normalizes to the same error."""
    frame = anthropic_frame(name)
    seen: list[Any] = []

    def consume(client: Any) -> None:
        seen.clear()
        if helper:
            with client.messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream:
                seen.extend(stream)
        else:
            seen.extend(
                client.messages.create(model="m", max_tokens=64, messages=MESSAGES, stream=True)
            )

    err = raised(lambda: consume(wrap(anthropic_client(name))))
    assert isinstance(err, HarnessError)
    assert is_instance(err, anthropic.APIStatusError)
    check_error(err.problem, frame, "anthropic")
    assert stream_of(err)["chunks"] == len(seen)
    assert stream_of(err)["output_chars"] == len(text_of(seen))
    assert text_of(seen).startswith("Hello")  # the output already seen stays readable

    exc = raised(lambda: consume(anthropic_client(name)))
    assert type(exc) is anthropic.APIStatusError
    assert exc.status_code == 200
    assert exc.body == frame.error
    plain = normalize(exc)
    check_error(plain, frame, "anthropic")
    same_error(plain, err.problem)


@pytest.mark.parametrize("name", ANTHROPIC_STREAMS)
def test_anthropic_async_error_event(name: str) -> None:
    """The async client's stream reads the error event the same way."""
    frame = anthropic_frame(name)

    async def consume(client: Any) -> None:
        stream = await client.messages.create(
            model="m", max_tokens=64, messages=MESSAGES, stream=True
        )
        async for _ in stream:
            pass

    err = raised(lambda: asyncio.run(consume(wrap(anthropic_client(name, asynchronous=True)))))
    assert isinstance(err, HarnessError)
    check_error(err.problem, frame, "anthropic")
    assert stream_of(err)["chunks"] > 0
    exc = raised(lambda: asyncio.run(consume(anthropic_client(name, asynchronous=True))))
    check_error(normalize(exc), frame, "anthropic")


# -- google-genai ------------------------------------------------------------------------------

# https://github.com/vercel/ai/issues/5217 (description, 2025-03-14): a Gemini stream as
# received, verbatim: two SSE chunks, then the error as raw JSON lines (not an SSE event).
GEMINI_OVERLOADED_STREAM = (
    b'data: {"candidates": [{"content": {"parts": [{"text": "Okay"}],"role": "model"}}],'
    b'"usageMetadata": {"promptTokenCount": 2304,"totalTokenCount": 2304,'
    b'"promptTokensDetails": [{"modality": "TEXT","tokenCount": 2304}]},'
    b'"modelVersion": "gemini-2.0-flash"}\n\n'
    b'data: {"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},'
    b'"finishReason": "STOP"}],"usageMetadata": {"promptTokenCount": 2301,'
    b'"candidatesTokenCount": 1,"totalTokenCount": 2302,"promptTokensDetails": '
    b'[{"modality": "TEXT","tokenCount": 2301}],"candidatesTokensDetails": '
    b'[{"modality": "TEXT","tokenCount": 1}]},"modelVersion": "gemini-2.0-flash"}\n\n'
    b"{\n"
    b'  "error": {\n'
    b'    "code": 503,\n'
    b'    "message": "The model is overloaded. Please try again later.",\n'
    b'    "status": "UNAVAILABLE"\n'
    b"  }\n"
    b"}\n"
)
# https://github.com/googleapis/python-genai/issues/2604 (description, 2026-06-15): the
# in-stream payload of a Vertex AI shared-capacity 429, verbatim; sent here as one SSE data
# event after the first chunk of the stream above (constructed).
GEMINI_RATE_LIMIT = {
    "error": {"code": 429, "message": "Resource exhausted.", "status": "RESOURCE_EXHAUSTED"}
}
GEMINI_RATE_LIMITED_STREAM = (
    GEMINI_OVERLOADED_STREAM.split(b"\n\n")[0]
    + b"\n\ndata: "
    + json.dumps(GEMINI_RATE_LIMIT).encode()
    + b"\n\n"
)


def gemini_frame(name: str, error: dict[str, Any], code: str) -> Frame:
    inner = error["error"]
    upstream = {"status": 200, "code": inner["status"], "message": inner["message"]}
    return Frame(name, b"", error, inner["code"], code, True, upstream)


GEMINI_CASES = [
    (
        GEMINI_OVERLOADED_STREAM,
        2,
        gemini_frame(
            "raw_json_overloaded",
            json.loads(GEMINI_OVERLOADED_STREAM.split(b"\n\n")[2]),
            "upstream.overloaded",
        ),
        genai_errors.ServerError,
    ),
    (
        GEMINI_RATE_LIMITED_STREAM,
        1,
        gemini_frame("sse_rate_limited", GEMINI_RATE_LIMIT, "upstream.rate_limited"),
        genai_errors.ClientError,
    ),
]
GEMINI_IDS = [case[2].name for case in GEMINI_CASES]


def gemini_client(body: bytes) -> Any:
    """A real google-genai client whose sync and async transports stream ``body`` with 200."""

    def answer(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    options: Any = {
        "httpx_client": httpx.Client(transport=httpx.MockTransport(answer)),
        "httpx_async_client": httpx.AsyncClient(transport=httpx.MockTransport(answer)),
        "api_version": "v1beta",
    }
    return genai.Client(api_key="test-key", http_options=options)


@pytest.mark.parametrize(("body", "before", "frame", "vendor"), GEMINI_CASES, ids=GEMINI_IDS)
def test_gemini_stream_error_chunks(body: bytes, before: int, frame: Frame, vendor: type) -> None:
    """The error chunk after ordinary chunks: google-genai raises it (its first member is
    ``error``), the wrapped stream types it with the chunks before it, sync and async."""
    seen: list[Any] = []

    def consume(client: Any) -> None:
        seen.clear()
        stream = client.models.generate_content_stream(model="gemini-2.0-flash", contents="Hi")
        seen.extend(stream)

    err = raised(lambda: consume(wrap(gemini_client(body))))
    assert isinstance(err, HarnessError)
    assert isinstance(err, vendor)
    check_error(err.problem, frame, "google")
    assert len(seen) == before
    assert stream_of(err)["chunks"] == len(seen)
    assert seen[0].text == "Okay"

    exc = raised(lambda: consume(gemini_client(body)))
    assert type(exc) is vendor
    assert getattr(exc, "code", None) == frame.error["error"]["code"]
    plain = normalize(exc)
    check_error(plain, frame, "google")
    same_error(plain, err.problem, retries=False)  # a genai client has no max_retries

    async def consume_async(client: Any) -> None:
        stream = await client.aio.models.generate_content_stream(
            model="gemini-2.0-flash", contents="Hi"
        )
        async for _ in stream:
            pass

    err = raised(lambda: asyncio.run(consume_async(wrap(gemini_client(body)))))
    assert isinstance(err, HarnessError)
    check_error(err.problem, frame, "google")
    assert stream_of(err)["chunks"] == before
    exc = raised(lambda: asyncio.run(consume_async(gemini_client(body))))
    check_error(normalize(exc), frame, "google")


# -- bedrock (botocore) ------------------------------------------------------------------------


class BedrockFrame(NamedTuple):
    """An exception event of a Bedrock stream and what it must give."""

    kind: str
    message: str
    source: str
    code: str
    retryable: bool
    http: tuple[str, int]  # the HTTP twin's error code and status


# The twins' statuses are the ConverseStream/InvokeModelWithResponseStream API
# references' (section "Errors"); where a message is the reference's description of the
# error, said so.
BEDROCK_FRAMES = [
    BedrockFrame(
        "throttlingException",
        "Too many requests, please wait before trying again. You have sent too many requests. "
        "Wait before trying again.",
        "https://github.com/aws-samples/aws-genai-llm-chatbot/issues/220",
        "upstream.rate_limited",
        True,
        ("ThrottlingException", 429),
    ),
    BedrockFrame(
        "modelStreamErrorException",
        str(ORIGINAL["message"]),  # the API reference's description (see ORIGINAL)
        "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html",
        "upstream.unavailable",
        True,
        ("ModelStreamErrorException", 424),
    ),
    BedrockFrame(
        "serviceUnavailableException",
        "The service isn't currently available.",  # the API reference's description
        "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html",
        "upstream.unavailable",
        True,
        ("ServiceUnavailableException", 503),
    ),
    BedrockFrame(
        "validationException",
        "Input is too long for requested model.",
        "https://github.com/aws-samples/bedrock-chat/issues/95",
        "context.window_exceeded",
        False,
        ("ValidationException", 400),
    ),
]
BEDROCK_IDS = [frame.kind for frame in BEDROCK_FRAMES]

# An Anthropic text delta as InvokeModelWithResponseStream carries it (a chunk event whose
# bytes are the model's own event; the shape of Anthropic's streaming docs, constructed).
DELTA = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}
OPERATIONS = {
    "converse_stream": ("ConverseStream", "stream", START),
    "invoke_model_with_response_stream": (
        "InvokeModelWithResponseStream",
        "body",
        [bedrock_event("chunk", {"bytes": _b64(DELTA)})],
    ),
}


def bedrock_call(bedrock: Any, operation: str) -> Any:
    if operation == "converse_stream":
        return bedrock.converse_stream(modelId=MODEL, messages=BEDROCK_MESSAGES)
    return bedrock.invoke_model_with_response_stream(modelId=MODEL, body=b"{}")


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("frame", BEDROCK_FRAMES, ids=BEDROCK_IDS)
def test_bedrock_exception_frames(operation: str, frame: BedrockFrame) -> None:
    """Ordinary events, then an exception message of the event stream: the wrapped client's
    stream raises its twin's code with the events before it; the plain client's
    ``EventStreamError`` normalizes to the same error; the HTTP twin (botocore's
    ``ClientError`` of the same error code) gives the same code."""
    kind, message, code, retryable = frame.kind, frame.message, frame.code, frame.retryable
    name, key, before = OPERATIONS[operation]
    frames = [*before, bedrock_exception(kind, {"message": message})]
    seen: list[Any] = []

    def consume(bedrock: Any) -> None:
        seen.clear()
        seen.extend(bedrock_call(bedrock, operation)[key])

    real = bedrock_client()
    serve(real, frames)
    err = raised(lambda: consume(wrap(real)))
    assert isinstance(err, HarnessError)
    assert type(err.problem.__cause__).__name__ == "EventStreamError"
    assert isinstance(err, type(err.problem.__cause__))  # a drop-in
    problem = valid(err.problem)
    assert (problem.code, problem.retryable) == (code, retryable)
    expected = {"code": kind, "message": message, "operation": name, "in_stream": True}
    assert {k: problem.upstream.get(k) for k in expected} == expected
    assert len(seen) == len(before)
    assert stream_of(problem)["chunks"] == len(seen)

    plain_client = bedrock_client()
    serve(plain_client, frames)
    exc = raised(lambda: consume(plain_client))
    assert type(exc).__name__ == "EventStreamError"
    same_error(valid(normalize(exc)), problem, retries=False)  # boto3 has no max_retries

    twin_client = bedrock_client()
    with Stubber(twin_client) as stub:
        stub.add_client_error(operation, frame.http[0], message, frame.http[1])
        twin_exc = raised(lambda: bedrock_call(twin_client, operation))
    other = valid(normalize(twin_exc))
    assert (other.code, other.retryable) == (code, retryable), other.upstream
    assert "in_stream" not in other.upstream
