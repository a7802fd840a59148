"""The paths of a wrapped stream the other stream tests do not take, each through a real SDK
client over an in-memory transport: a stream used as a context manager (mistralai's
``EventStream``, which the wrapper proxies), an event no state machine can read, an exception
of the application's own raised while a stream is read, a connection lost after a terminal
event that states a failure, a stream read past its end, and a stream with no chunk at all.

The streams are the recorded ones of ``tests/recorded_streams/`` (framing constructed, see
``tests/stream_shapes``), except Mistral's: its chunks carry the id, creation time and model
of a streamed ``open-mixtral-8x7b`` answer published with its response at
developers.qodex.ai (“Chat (Mistral AI - open-mixtral-8x7b)”), with its first two deltas; the
last chunk, with ``finish_reason``, is constructed (the page cuts the stream before it).
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import pytest

from normalize_errors import (
    HarnessError,
    OutputTruncatedError,
    UpstreamInvalidResponseError,
    UpstreamUnavailableError,
    wrap,
)
from normalize_errors._wrapping._replay_calls import http_library

from .stream_shapes import lines, sse, transport
from .support import stream_of

MODES = ["sync", "async"]
MESSAGES: Any = [{"role": "user", "content": "Hello"}]


class AppError(Exception):
    """An exception of the application's own (raised by its custom transport)."""


def failing_transport(http: Any, pieces: list[bytes], exc: BaseException) -> Any:
    """An in-memory transport whose 200 event stream gives ``pieces``, then raises ``exc``
    from the application's own code (a custom transport of the caller's)."""

    class Body(http.SyncByteStream, http.AsyncByteStream):  # type: ignore[misc]
        def __iter__(self) -> Iterator[bytes]:
            yield from pieces
            raise exc

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for piece in pieces:
                yield piece
            raise exc

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

    return http.MockTransport(handler)


# -- mistralai: a proxied stream, used with ``with`` -------------------------------------------

MISTRAL_ID = {
    "id": "25430aa7c3b64746baf46c2ed8c8e6b7",
    "object": "chat.completion.chunk",
    "created": 1711929876,
    "model": "open-mixtral-8x7b",
}


def mistral_chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return json.dumps({**MISTRAL_ID, "choices": [choice], "usage": None})


MISTRAL = [
    mistral_chunk({"role": "assistant", "content": ""}),
    mistral_chunk({"role": None, "content": "Low latency large language"}),
    mistral_chunk({"role": None, "content": " models (LLMs) are important in the field of"}),
]
MISTRAL_STOP = mistral_chunk({"role": None, "content": ""}, "stop")  # constructed
MISTRAL_LENGTH = mistral_chunk({"role": None, "content": ""}, "length")  # constructed


def mistral(made: Any) -> Any:
    """A real ``mistralai.Mistral`` whose sync and async clients use the transport ``made``."""
    client = pytest.importorskip("mistralai.client", reason="needs the mistralai SDK")
    http = importlib.import_module("httpx2")
    return client.Mistral(
        api_key="test-key",
        client=http.Client(transport=made),
        async_client=http.AsyncClient(transport=made),
    )


def mistral_pieces(pieces: list[bytes], *, broken: bool = False) -> Any:
    return mistral(transport(importlib.import_module("httpx2"), pieces, broken=broken))


def mistral_read(client: Any, mode: str, seen: list[Any]) -> Any:
    """Read a wrapped Mistral chat stream as its README does (``with ... as stream``), each
    event's text into ``seen``; returns the stream."""
    if mode == "sync":
        with client.chat.stream(model="open-mixtral-8x7b", messages=MESSAGES) as stream:
            for event in stream:
                seen.append(event.data.choices[0].delta.content)
        return stream

    async def drain() -> Any:
        made = await client.chat.stream_async(model="open-mixtral-8x7b", messages=MESSAGES)
        async with made as stream:
            async for event in stream:
                seen.append(event.data.choices[0].delta.content)
        return stream

    return asyncio.run(drain())


def mistral_left_early(client: Any, mode: str) -> Any:
    """A wrapped Mistral chat stream whose ``with`` block is left after its first event."""
    if mode == "sync":
        with client.chat.stream(model="open-mixtral-8x7b", messages=MESSAGES) as stream:
            next(stream)
            assert not stream.response.is_closed
        return stream

    async def leave() -> Any:
        made = await client.chat.stream_async(model="open-mixtral-8x7b", messages=MESSAGES)
        async with made as stream:
            await stream.__anext__()
            assert not stream.response.is_closed
        assert stream.response.is_closed  # before the event loop closes what is left
        return stream

    return asyncio.run(leave())


def caught(read: Any) -> BaseException | None:
    try:
        read()
    except Exception as exc:
        return exc
    return None


@pytest.mark.parametrize("mode", MODES)
def test_a_mistral_stream_in_a_with_block_yields_its_events_and_closes(mode: str) -> None:
    """``with wrapped.chat.stream(...) as stream`` (a proxied ``EventStream``): the block gets
    the wrapped stream, every event comes, and leaving the block closes the SDK's response."""
    seen: list[Any] = []
    client = wrap(mistral_pieces(sse([*MISTRAL, MISTRAL_STOP], done=True)))
    stream = mistral_read(client, mode, seen)
    assert type(stream).__name__ == ("_Stream" if mode == "sync" else "_AsyncStream")
    texts = [json.loads(chunk)["choices"][0]["delta"]["content"] for chunk in MISTRAL]
    assert seen == [*texts, ""]
    left = mistral_left_early(client, mode)  # the block left after one event
    assert left.response.is_closed  # the SDK's __exit__ closed it: the wrapper passed it on


@pytest.mark.parametrize("mode", MODES)
def test_a_cut_mistral_stream_raises_in_the_with_block(mode: str) -> None:
    """Cut before its finish reason (no ``[DONE]`` either), the stream raises at its end,
    inside the ``with`` block, after every event came; the response is closed."""
    seen: list[Any] = []
    err = caught(lambda: mistral_read(wrap(mistral_pieces(sse(MISTRAL))), mode, seen))
    assert isinstance(err, UpstreamInvalidResponseError), repr(err)
    assert len(seen) == len(MISTRAL)
    assert stream_of(err)["chunks"] == len(MISTRAL)


def test_a_proxied_stream_read_past_its_end_raises_its_cut_once() -> None:
    """The cut is raised at the end once; reading again ends the stream (``StopIteration``),
    as an exhausted iterator does, instead of raising the same failure again."""
    client = wrap(mistral_pieces(sse(MISTRAL)))
    stream = client.chat.stream(model="open-mixtral-8x7b", messages=MESSAGES)
    assert len([next(stream) for _ in MISTRAL]) == len(MISTRAL)
    with pytest.raises(UpstreamInvalidResponseError):
        next(stream)
    with pytest.raises(StopIteration):
        next(stream)


@pytest.mark.parametrize("mode", MODES)
def test_a_connection_lost_after_a_truncating_finish_reason_raises_the_truncation(
    mode: str,
) -> None:
    """The terminal chunk came (``finish_reason: length``), then the connection closed before
    ``[DONE]``: the stream was whole, so the error is what its stop reason means
    (``output.truncated``), not the transport's ``upstream.unavailable``."""
    seen: list[Any] = []
    client = wrap(mistral_pieces(sse([*MISTRAL, MISTRAL_LENGTH]), broken=True))
    err = caught(lambda: mistral_read(client, mode, seen))
    assert isinstance(err, OutputTruncatedError), repr(err)
    assert len(seen) == len(MISTRAL) + 1
    assert stream_of(err)["terminal"] is True
    plain = caught(lambda: mistral_read(client._ne_target, mode, []))
    assert type(plain).__name__ == "RemoteProtocolError"  # what the SDK alone raises


@pytest.mark.parametrize("mode", MODES)
def test_the_applications_own_error_in_a_proxied_stream_passes_through(mode: str) -> None:
    """An exception the caller's own transport raises mid-stream is neither the SDK's nor its
    HTTP library's: the wrapped stream raises that same object, untyped."""
    mine = AppError("the application's transport failed")
    made = failing_transport(importlib.import_module("httpx2"), sse(MISTRAL[:2]), mine)
    seen: list[Any] = []
    err = caught(lambda: mistral_read(wrap(mistral(made)), mode, seen))
    assert err is mine
    assert not isinstance(err, HarnessError)
    assert len(seen) == 2


# -- openai and anthropic: streams watched in place --------------------------------------------


def openai_client(made: Any, mode: str) -> Any:
    http = http_library("openai")
    cls = http.AsyncClient if mode == "async" else http.Client
    maker = "AsyncOpenAI" if mode == "async" else "OpenAI"
    return getattr(importlib.import_module("openai"), maker)(
        api_key="test-key", max_retries=0, http_client=cls(transport=made)
    )


def drain(stream: Any, mode: str, seen: list[Any]) -> None:
    if mode == "sync":
        for chunk in stream:
            seen.append(chunk)
        return

    async def read() -> None:
        async for chunk in await stream:
            seen.append(chunk)

    asyncio.run(read())


@pytest.mark.parametrize("mode", MODES)
def test_the_applications_own_error_in_an_sdk_stream_passes_through(mode: str) -> None:
    """The same for a stream watched in place (openai's ``Stream``/``AsyncStream``)."""
    mine = AppError("the application's transport failed")
    chat = lines("openai-chat-azure-text")
    made = failing_transport(http_library("openai"), sse(chat[:3]), mine)
    client = wrap(openai_client(made, mode))
    seen: list[Any] = []
    create = client.chat.completions.create
    err = caught(lambda: drain(create(model="m", messages=MESSAGES, stream=True), mode, seen))
    assert err is mine
    assert len(seen) == 3


def unreadable_anthropic() -> list[str]:
    """The recorded anthropic-text stream, its ``content_block_stop`` giving its ``index`` as
    a list (constructed: an event no machine can key a block by)."""
    events = [json.loads(text) for text in lines("anthropic-text")]
    for event in events:
        if event["type"] == "content_block_stop":
            event["index"] = [0]
    return [json.dumps(event) for event in events]


def anthropic_client(pieces: list[bytes], mode: str, *, broken: bool = False) -> Any:
    http = http_library("anthropic")
    made = transport(http, pieces, broken=broken)
    if mode == "async":
        return anthropic.AsyncAnthropic(
            api_key="test-key", max_retries=0, http_client=http.AsyncClient(transport=made)
        )
    return anthropic.Anthropic(
        api_key="test-key", max_retries=0, http_client=http.Client(transport=made)
    )


@pytest.mark.parametrize("mode", MODES)
def test_an_event_no_machine_can_read_is_counted_and_the_stream_goes_on(mode: str) -> None:
    """An event the Messages machine cannot read (an unhashable block index) is yielded as
    the SDK gives it and counted; from there on the stream is counted by the plain machine,
    what had reached the caller carried over: a connection lost later raises the transport's
    error with every chunk and character counted."""
    events = unreadable_anthropic()
    stop = next(i for i, text in enumerate(events) if '"content_block_stop"' in text)
    pieces = sse(events[: stop + 1], named=True)
    plain: list[Any] = []
    drain(
        anthropic_client(pieces, mode).messages.create(
            model="m", max_tokens=64, messages=MESSAGES, stream=True
        ),
        mode,
        plain,
    )
    client = wrap(anthropic_client(pieces, mode, broken=True))
    seen: list[Any] = []
    create = client.messages.create
    err = caught(
        lambda: drain(create(model="m", max_tokens=64, messages=MESSAGES, stream=True), mode, seen)
    )
    assert isinstance(err, UpstreamUnavailableError), repr(err)
    assert [event.type for event in seen] == [event.type for event in plain]
    summary = stream_of(err)
    assert summary["api"] == "stream"  # the plain machine's, after the unreadable event
    assert summary["chunks"] == len(seen)
    text = "".join(e.delta.text for e in seen if e.type == "content_block_delta")
    assert summary["output_chars"] == len(text)  # carried over from the Messages machine


def test_an_unreadable_event_in_a_proxied_bedrock_stream_is_counted() -> None:
    """The same in a proxied stream: InvokeModelWithResponseStream's Claude events (the
    recorded anthropic-text stream in Bedrock ``chunk``s: constructed), one unreadable, then
    urllib3's lost connection: the chunks all came, all counted."""
    pytest.importorskip("boto3", reason="needs boto3")
    from .providers.test_bedrock import MODEL, _b64, client, event
    from .stream_shapes import serve_bedrock

    events = [json.loads(text) for text in unreadable_anthropic() if '"ping"' not in text]
    stop = next(i for i, item in enumerate(events) if item["type"] == "content_block_stop")
    frames = [event("chunk", {"bytes": _b64(item)}) for item in events[: stop + 1]]
    bedrock = client()
    serve_bedrock(bedrock, frames, broken=True)
    body = wrap(bedrock).invoke_model_with_response_stream(modelId=MODEL, body=b"{}")["body"]
    seen: list[Any] = []
    err = caught(lambda: seen.extend(body))
    assert isinstance(err, UpstreamUnavailableError), repr(err)
    assert len(seen) == len(frames)
    assert stream_of(err)["api"] == "stream"
    assert stream_of(err)["chunks"] == len(frames)


# -- a stream with no chunk --------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_gemini_stream_with_no_chunk_is_an_invalid_response(mode: str) -> None:
    """google-genai's stream (a generator, proxied) of an empty 200 body: no answer and no
    error, ``upstream.invalid_response`` at its end (a generator is no resumed stream)."""
    import httpx
    from google import genai

    from .test_stream_cuts_more import gemini_read

    made = transport(httpx, [])
    options: Any = {
        "httpx_client": httpx.Client(transport=made),
        "httpx_async_client": httpx.AsyncClient(transport=made),
        "api_version": "v1beta",
    }
    plain: list[Any] = []
    gemini_read(genai.Client(api_key="test-key", http_options=options), mode, plain)
    assert plain == []  # the SDK alone ends quietly
    client = wrap(genai.Client(api_key="test-key", http_options=options))
    err = caught(lambda: gemini_read(client, mode, []))
    assert isinstance(err, UpstreamInvalidResponseError), repr(err)
    assert "before its first chunk" in str(err)
    assert stream_of(err)["chunks"] == 0


def test_stream_text_keeps_the_first_bytes_of_a_cut_streams_text() -> None:
    """``wrap(client, stream_text=N)``: the cut stream's error keeps the first N bytes of the
    output text that reached the caller, nothing after them; by default none. The stream is
    the recorded Anthropic text one, cut in its text (framing constructed)."""
    events = [text for text in lines("anthropic-text") if '"message_delta"' not in text]
    pieces = sse(events[:-1], named=True)  # no stop reason, no message_stop
    said = "".join(
        json.loads(text)["delta"].get("text", "")
        for text in events
        if '"content_block_delta"' in text
    )
    assert len(said.encode()) > 16

    def cut_error(client: Any) -> BaseException | None:
        create = client.messages.create
        return caught(
            lambda: list(create(model="m", max_tokens=64, messages=MESSAGES, stream=True))
        )

    kept = cut_error(wrap(anthropic_client(pieces, "sync"), stream_text=16))
    assert isinstance(kept, UpstreamInvalidResponseError), repr(kept)
    assert stream_of(kept)["text"] == said.encode()[:16].decode()
    assert stream_of(kept)["output_chars"] == len(said)
    quiet = cut_error(wrap(anthropic_client(pieces, "sync")))
    assert isinstance(quiet, UpstreamInvalidResponseError)
    assert "text" not in stream_of(quiet)
