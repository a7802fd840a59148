"""Cut streams raise, whole streams do not: google-genai (sync and async), Cohere v2 (sync and
async) and Bedrock's ConverseStream and InvokeModelWithResponseStream (boto3), through the
real SDK clients (issue 37, items 2 and 3; OpenAI and Anthropic are in
``tests/test_stream_cuts.py``). Cohere's SDK and boto3 are imported by the tests that use them
(they skip where those SDKs are not installed, as in CI's older SDK lines; google-genai's run).

The streams are recorded ones (``tests/recorded_streams/``); their framing, and each cut
(the recorded events up to a point, then a clean end or a connection closed mid-body), are
constructed: see ``tests/stream_shapes``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, NamedTuple

import httpx
import pytest
from google import genai

from normalize_errors import UpstreamInvalidResponseError, UpstreamUnavailableError, wrap

from .stream_shapes import bedrock_frames, first, lines, serve_bedrock, sse, transport
from .support import is_instance, stream_of, valid

MODES = ["sync", "async"]

# -- google-genai ------------------------------------------------------------------------------

GOOGLE_TEXT = lines("google-text")
GOOGLE_TOOL = lines("google-tool-call")


def gemini(pieces: list[bytes], *, broken: bool = False) -> Any:
    """A real google-genai client whose sync and async transports stream ``pieces``."""
    made = transport(httpx, pieces, broken=broken)
    options: Any = {
        "httpx_client": httpx.Client(transport=made),
        "httpx_async_client": httpx.AsyncClient(transport=made),
        "api_version": "v1beta",
    }
    return genai.Client(api_key="test-key", http_options=options)


def gemini_read(c: Any, mode: str, seen: list[Any]) -> None:
    if mode == "sync":
        for chunk in c.models.generate_content_stream(model="gemini-2.5-flash", contents="Hi"):
            seen.append(chunk)
        return

    async def drain() -> None:
        stream = await c.aio.models.generate_content_stream(model="gemini-2.5-flash", contents="Hi")
        async for chunk in stream:
            seen.append(chunk)

    asyncio.run(drain())


# -- cohere ------------------------------------------------------------------------------------

COHERE_TEXT = lines("cohere-text")
COHERE_TOOL = lines("cohere-tool-call")
COHERE_MESSAGES: Any = [{"role": "user", "content": "Hello"}]


def cohere_client(pieces: list[bytes], mode: str, *, broken: bool = False) -> Any:
    cohere = pytest.importorskip("cohere", reason="needs the cohere SDK")
    made = transport(httpx, pieces, broken=broken)
    if mode == "async":
        return cohere.AsyncClientV2(
            api_key="test-key", httpx_client=httpx.AsyncClient(transport=made)
        )
    return cohere.ClientV2(api_key="test-key", httpx_client=httpx.Client(transport=made))


def cohere_read(c: Any, mode: str, seen: list[Any]) -> None:
    if mode == "sync":
        for event_ in c.chat_stream(model="command-a-03-2025", messages=COHERE_MESSAGES):
            seen.append(event_)
        return

    async def drain() -> None:
        async for event_ in c.chat_stream(model="command-a-03-2025", messages=COHERE_MESSAGES):
            seen.append(event_)

    asyncio.run(drain())


class Case(NamedTuple):
    """A provider's recorded stream, and how its client is made and read."""

    name: str
    make: Any  # (pieces, mode, broken) -> client
    read: Any  # (client, mode, seen) -> None
    whole: list[bytes]
    text_cut: list[bytes]


CASES = [
    Case(
        "google",
        lambda pieces, mode, broken=False: gemini(pieces, broken=broken),
        gemini_read,
        sse(GOOGLE_TEXT),
        sse(GOOGLE_TEXT[:1]),  # the first text chunk, no finishReason yet
    ),
    Case(
        "cohere",
        cohere_client,
        cohere_read,
        sse(COHERE_TEXT, named=True),
        sse(COHERE_TEXT[: first(COHERE_TEXT, '"text":" France"') + 1], named=True),
    ),
]
IDS = [case.name for case in CASES]


def through(
    case: Case, pieces: list[bytes], mode: str, *, broken: bool = False, wrapped: bool = True
) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    c = case.make(pieces, mode, broken=broken)
    try:
        case.read(wrap(c) if wrapped else c, mode, seen)
    except Exception as exc:
        return seen, exc
    return seen, None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_whole_streams_end_quietly(case: Case, mode: str) -> None:
    """The recorded streams, whole: the same chunks as the plain client, no error."""
    extra = [sse(GOOGLE_TOOL)] if case.name == "google" else [sse(COHERE_TOOL, named=True)]
    for pieces in (case.whole, *extra):
        seen, err = through(case, pieces, mode)
        assert err is None, err
        plain, _ = through(case, pieces, mode, wrapped=False)
        assert len(seen) == len(plain) > 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_stream_cut_in_its_text_raises_at_its_end(case: Case, mode: str) -> None:
    """Cut with a clean end before the terminal event (Gemini's ``finishReason``, Cohere's
    ``message-end``): the plain client ends quietly; the wrapped one yields the same chunks,
    then raises ``upstream.invalid_response`` saying what reached the caller."""
    plain, plain_err = through(case, case.text_cut, mode, wrapped=False)
    assert plain_err is None
    seen, err = through(case, case.text_cut, mode)
    assert isinstance(err, UpstreamInvalidResponseError), repr(err)
    assert len(seen) == len(plain) > 0
    summary = stream_of(valid(err.problem))
    assert (summary["chunks"], summary["phase"], summary["terminal"]) == (len(seen), "text", False)
    assert summary["output_chars"] > 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_connection_lost_mid_stream_is_upstream_unavailable(case: Case, mode: str) -> None:
    """google-genai and Cohere's SDK do not wrap httpx's ``RemoteProtocolError``: the
    wrapped client raises it as ``upstream.unavailable`` (a drop-in of httpx's class) with
    what reached the caller; after the terminal event the same loss ends the stream whole."""
    seen, err = through(case, case.text_cut, mode, broken=True)
    assert isinstance(err, UpstreamUnavailableError), repr(err)
    assert is_instance(err, httpx.RemoteProtocolError)
    assert stream_of(err)["chunks"] == len(seen) > 0
    _, plain_err = through(case, case.whole, mode, broken=True, wrapped=False)
    assert isinstance(plain_err, httpx.RemoteProtocolError)  # the plain SDK fails a whole answer
    seen, err = through(case, case.whole, mode, broken=True)
    assert err is None, err
    assert seen


def test_a_cohere_stream_cut_inside_a_tool_call() -> None:
    """Cut inside the second tool call's arguments: ``upstream.invalid_response`` naming
    that call, never ``output.invalid_tool_arguments``."""
    cut = sse(COHERE_TOOL[: first(COHERE_TOOL, '"arguments":"city"') + 1], named=True)
    seen, err = through(CASES[1], cut, "sync")
    assert isinstance(err, UpstreamInvalidResponseError), repr(err)
    summary = stream_of(err)
    assert summary["phase"] == "tool_call"
    assert summary["tool_call"]["name"] == "cityAttractions"
    assert summary["chunks"] == len(seen)


def test_a_gemini_function_call_comes_whole() -> None:
    """A Gemini function call comes whole in one part (there is no inside to be cut in): a
    stream cut after it and before the finish reason is cut in its output, with the call
    counted as output."""
    seen, err = through(CASES[0], sse(GOOGLE_TOOL[:1]), "sync")
    assert isinstance(err, UpstreamInvalidResponseError), repr(err)
    assert seen[0].function_calls[0].name == "weather"
    assert stream_of(err)["output_chars"] == len("weather")


def test_a_blocked_gemini_prompt_ends_its_stream() -> None:
    """``promptFeedback.blockReason`` is a terminal event: the prompt's block is raised, not
    a cut (the shape of the shipped google/stream_prompt_blocked_prohibited_content)."""
    blocked = json.dumps({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}})
    _, err = through(CASES[0], sse([blocked]), "sync")
    assert err is not None
    assert valid(getattr(err, "problem", err)).code == "policy.content_filtered"


# -- bedrock -------------------------------------------------------------------------------------

BEDROCK_TEXT = lines("bedrock-converse-text")
BEDROCK_TOOL = lines("bedrock-converse-tool")


def bedrock_client() -> Any:
    pytest.importorskip("boto3", reason="needs boto3")
    from .providers.test_bedrock import client

    return client()


def converse(frames: list[bytes], *, broken: bool = False, wrapped: bool = True) -> Any:
    from .providers.test_bedrock import MESSAGES, MODEL

    bedrock = bedrock_client()
    serve_bedrock(bedrock, frames, broken=broken)
    used = wrap(bedrock) if wrapped else bedrock
    return used.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"]


def drained(stream: Any) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    try:
        for item in stream:
            seen.append(item)
    except Exception as exc:
        return seen, exc
    return seen, None


def test_a_whole_converse_stream_ends_quietly() -> None:
    """The recorded ConverseStreams (text; a tool call) end quietly, wrapped as plain."""
    for data in (BEDROCK_TEXT, BEDROCK_TOOL):
        seen, err = drained(converse(bedrock_frames(data)))
        assert err is None, err
        assert len(seen) == len(data)


def test_a_converse_stream_cut_before_message_stop_raises_at_its_end() -> None:
    """Cut after some text (a clean end of the event stream): botocore ends quietly; the
    wrapped stream yields every event, then raises ``upstream.invalid_response``."""
    frames = bedrock_frames(BEDROCK_TEXT[:5])
    plain, plain_err = drained(converse(frames, wrapped=False))
    assert plain_err is None
    seen, err = drained(converse(frames))
    assert isinstance(err, UpstreamInvalidResponseError), repr(err)
    assert len(seen) == len(plain) == 5
    summary = stream_of(valid(err.problem))
    assert (summary["api"], summary["phase"], summary["chunks"]) == ("converse", "text", 5)


def test_a_converse_stream_cut_inside_a_tool_use() -> None:
    """Cut after the first piece of a ``toolUse`` input: the transport's failure
    (``upstream.invalid_response``), inside the tool call, never the model's."""
    seen, err = drained(converse(bedrock_frames(BEDROCK_TOOL[:2])))
    assert isinstance(err, UpstreamInvalidResponseError), repr(err)
    summary = stream_of(err)
    assert summary["phase"] == "tool_call"
    assert summary["tool_call"] == {
        "name": "get-weather",
        "id": "toolu_01PQjhxo3eirCdKNvCJrKc8f",
        "arguments_chars": len('{"location":'),
    }
    assert len(seen) == 2


def test_a_converse_connection_lost_mid_body() -> None:
    """urllib3's ``ProtocolError`` (``IncompleteRead``) while botocore reads the event
    stream: ``upstream.unavailable`` with what arrived; after ``messageStop`` the same loss
    ends the stream whole (the plain client raises it)."""
    seen, err = drained(converse(bedrock_frames(BEDROCK_TEXT[:5]), broken=True))
    assert isinstance(err, UpstreamUnavailableError), repr(err)
    assert type(err.problem.__cause__).__name__ == "ProtocolError"
    assert stream_of(err)["chunks"] == len(seen) == 5
    whole = bedrock_frames(BEDROCK_TEXT)
    _, plain_err = drained(converse(whole, broken=True, wrapped=False))
    assert plain_err is not None
    assert type(plain_err).__name__ == "ProtocolError"  # urllib3's, not an EventStreamError
    seen, err = drained(converse(whole, broken=True))
    assert err is None, err
    assert len(seen) == len(BEDROCK_TEXT)


def test_an_invoke_model_stream_of_claude_events_cut_and_whole() -> None:
    """InvokeModelWithResponseStream carries Anthropic's events in ``chunk``s (the recorded
    anthropic-text stream, each event put in a chunk as Bedrock does: constructed): whole
    (Bedrock's ``amazon-bedrock-invocationMetrics`` on the last) it ends quietly; cut before
    the stop reason it raises."""
    from .providers.test_bedrock import MODEL, _b64, event

    events_ = [json.loads(text) for text in lines("anthropic-text") if '"ping"' not in text]
    events_[-1]["amazon-bedrock-invocationMetrics"] = {"inputTokenCount": 12}
    frames = [event("chunk", {"bytes": _b64(item)}) for item in events_]

    def invoke(chosen: list[bytes]) -> Any:
        bedrock = bedrock_client()
        serve_bedrock(bedrock, chosen)
        return wrap(bedrock).invoke_model_with_response_stream(modelId=MODEL, body=b"{}")["body"]

    seen, err = drained(invoke(frames))
    assert err is None, err
    assert len(seen) == len(frames)
    seen, err = drained(invoke(frames[:5]))
    assert isinstance(err, UpstreamInvalidResponseError), repr(err)
    assert (stream_of(err)["api"], stream_of(err)["chunks"]) == ("invoke", 5)
