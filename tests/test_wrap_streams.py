"""What a wrapped stream keeps: none of its chunks, whether a byte, text or line stream
(issue 22, finding 4) or a checked generating stream (issue 37: its state machine's counts).

The bodies here are constructed (zero bytes in 64 KiB pieces): only their size matters.
"""

from __future__ import annotations

import asyncio
import importlib
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest

from normalize_errors import wrap
from normalize_errors._reading._stream_state import StreamState
from normalize_errors._wrapping._replay_calls import http_library

PIECE = 64 * 1024
PIECES = 1024  # 64 MiB in all
LIMIT = 8 * 1024 * 1024  # the wrapper may hold a few pieces at a time, never the body


def pieces(count: int = PIECES) -> Iterator[bytes]:
    """A body of ``count`` fresh 64 KiB pieces (each its own object, as a network read is)."""
    for _ in range(count):
        yield bytes(PIECE)


def peak_while(consume: Callable[[], int]) -> tuple[int, int]:
    """The bytes ``consume()`` reports having read, and the peak traced memory meanwhile."""
    tracemalloc.start()
    try:
        read = consume()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return read, peak


def assert_counts_only(stream: Any) -> None:
    """``stream`` (a proxied stream) is watched by the plain state machine: it counts what
    passed, and holds no chunk (it has no member that could)."""
    state = stream._ne_watch.state
    assert type(state) is StreamState, type(state)
    assert state.chunks > 0
    assert state.output_chars >= state.chunks  # each piece's bytes, or lines' characters


HTTP_LIBRARIES = [name for name in ("httpx", "httpx2") if importlib.util.find_spec(name)]


@pytest.mark.parametrize("library", HTTP_LIBRARIES)
def test_a_wrapped_http_clients_byte_stream_keeps_nothing(library: str) -> None:
    """``wrap(httpx.Client()).stream(...).iter_bytes()`` of 64 MiB: the wrapper holds none of
    it (peak memory a few pieces), and ``iter_text``/``iter_lines`` keep nothing either."""
    http = importlib.import_module(library)

    def handler(request: Any) -> Any:
        return http.Response(200, content=pieces())

    client = wrap(http.Client(transport=http.MockTransport(handler)))

    def consume() -> int:
        read = 0
        with client.stream("GET", "https://example.test/big") as response:
            stream = response.iter_bytes()
            for chunk in stream:
                read += len(chunk)
            assert_counts_only(stream)  # nothing kept, at the end either
        return read

    read, peak = peak_while(consume)
    assert read == PIECE * PIECES
    assert peak < LIMIT, f"the wrapped stream held {peak} bytes"
    with client.stream("GET", "https://example.test/big") as response:
        lines = response.iter_lines()
        assert sum(len(line) for line in lines) == PIECE * PIECES
        assert_counts_only(lines)


@pytest.mark.parametrize("library", HTTP_LIBRARIES)
def test_a_wrapped_async_http_clients_byte_stream_keeps_nothing(library: str) -> None:
    """The async twin: ``aiter_bytes()`` through a wrapped ``AsyncClient`` keeps nothing."""
    http = importlib.import_module(library)

    async def body() -> Any:
        for piece in pieces():
            yield piece

    def handler(request: Any) -> Any:
        return http.Response(200, content=body())

    client = wrap(http.AsyncClient(transport=http.MockTransport(handler)))

    async def consume() -> int:
        read = 0
        async with client.stream("GET", "https://example.test/big") as response:
            stream = response.aiter_bytes()
            async for chunk in stream:
                read += len(chunk)
            assert_counts_only(stream)
        return read

    read, peak = peak_while(lambda: asyncio.run(consume()))
    assert read == PIECE * PIECES
    assert peak < LIMIT, f"the wrapped stream held {peak} bytes"


def openai_bytes_client(count: int) -> Any:
    """A real OpenAI client whose transport streams ``count`` 64 KiB pieces for any request."""
    http = http_library("openai")

    def handler(request: Any) -> Any:
        return http.Response(
            200, content=pieces(count), headers={"content-type": "application/octet-stream"}
        )

    transport = http.MockTransport(handler)
    http_client = http.Client(transport=transport)
    return openai.OpenAI(api_key="sk-test", max_retries=0, http_client=http_client)


def test_openai_speech_streaming_response_keeps_nothing() -> None:
    """``audio.speech.with_streaming_response.create(...)``'s ``iter_bytes()``: 64 MiB read,
    none of it held by the wrapper (the response is the SDK's own)."""
    client = wrap(openai_bytes_client(PIECES))

    def consume() -> int:
        read = 0
        with client.audio.speech.with_streaming_response.create(
            model="gpt-4o-mini-tts", voice="alloy", input="Hello"
        ) as response:
            stream = response.iter_bytes()
            for chunk in stream:
                read += len(chunk)
            assert type(response).__module__.startswith("openai.")  # the SDK's own, unwatched
        return read

    read, peak = peak_while(consume)
    assert read == PIECE * PIECES
    assert peak < LIMIT, f"the wrapped stream held {peak} bytes"


def test_openai_file_content_iter_bytes_adds_nothing_to_what_the_sdk_holds() -> None:
    """``files.content(...)`` reads the whole body (the SDK holds it, wrapped or not);
    iterating it through the wrapper adds no second copy."""
    count = 256  # 16 MiB: the SDK holds all of it, so keep it smaller

    def consume(client: Any) -> Callable[[], int]:
        def run() -> int:
            content = client.files.content("file-abc123")
            stream = content.iter_bytes(PIECE)
            read = sum(len(chunk) for chunk in stream)
            if hasattr(stream, "_ne_watch"):
                assert_counts_only(stream)
            return read

        return run

    read, raw_peak = peak_while(consume(openai_bytes_client(count)))
    assert read == PIECE * count
    read, wrapped_peak = peak_while(consume(wrap(openai_bytes_client(count))))
    assert read == PIECE * count
    assert wrapped_peak < raw_peak + LIMIT, (raw_peak, wrapped_peak)


ANTHROPIC_EVENTS = [  # constructed: two events of a message stream, then the connection stays open
    b'event: message_start\ndata: {"type": "message_start", "message": {"id": "msg_1", "type": '
    b'"message", "role": "assistant", "model": "m", "content": [], "stop_reason": null, '
    b'"stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}\n\n',
    b'event: ping\ndata: {"type": "ping"}\n\n',
]


def dropped_stream_closes(wrapped: bool) -> int:
    """How often a stream's body is closed when the stream is dropped after one event, with
    the garbage collector off: 1 when dropping it frees it (no reference cycle holds it)."""
    import gc

    import anthropic

    http = http_library("anthropic")

    class CountedBody(http.SyncByteStream):  # type: ignore[misc, name-defined]
        """The SSE lines, counting how often the body is closed."""

        closes = 0

        def __iter__(self) -> Iterator[bytes]:
            yield from ANTHROPIC_EVENTS

        def close(self) -> None:
            self.closes += 1

    body = CountedBody()

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    client = anthropic.Anthropic(
        api_key="sk-ant-test", http_client=http.Client(transport=http.MockTransport(handler))
    )
    used = wrap(client) if wrapped else client
    enabled = gc.isenabled()
    gc.disable()
    try:
        stream = used.messages.create(
            model="m", max_tokens=1, messages=[{"role": "user", "content": "hi"}], stream=True
        )
        next(iter(stream))
        del stream
        closes = body.closes
    finally:
        if enabled:
            gc.enable()
    return closes


def test_a_dropped_watched_stream_is_freed_as_the_sdks_own() -> None:
    """The generator that watches an SDK stream in place holds the stream weakly: a dropped
    stream is freed (and its response closed) at once, wrapped as plain, never left to the
    garbage collector by a cycle through the watcher."""
    pytest.importorskip("anthropic")
    assert dropped_stream_closes(wrapped=True) == dropped_stream_closes(wrapped=False)


def dropped_async_stream_closes(wrapped: bool) -> int:
    """``dropped_stream_closes`` for the async client: the body's ``aclose`` calls, after the
    event loop has run what dropping the stream scheduled."""
    import gc

    import anthropic

    http = http_library("anthropic")

    class CountedBody(http.AsyncByteStream):  # type: ignore[misc, name-defined]
        """The SSE lines, counting how often the body is closed."""

        closes = 0

        async def __aiter__(self) -> Any:
            for line in ANTHROPIC_EVENTS:
                yield line

        async def aclose(self) -> None:
            self.closes += 1

    body = CountedBody()

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    async def run() -> int:
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-test",
            http_client=http.AsyncClient(transport=http.MockTransport(handler)),
        )
        used = wrap(client) if wrapped else client
        stream = await used.messages.create(
            model="m", max_tokens=1, messages=[{"role": "user", "content": "hi"}], stream=True
        )
        await anext(aiter(stream))
        del stream
        for _ in range(20):
            await asyncio.sleep(0)
        return body.closes

    enabled = gc.isenabled()
    gc.disable()
    try:
        return asyncio.run(run())
    finally:
        if enabled:
            gc.enable()


def test_a_dropped_watched_async_stream_is_freed_as_the_sdks_own() -> None:
    """The async twin: the watcher of an ``AsyncStream`` holds it weakly too."""
    pytest.importorskip("anthropic")
    assert dropped_async_stream_closes(wrapped=True) == dropped_async_stream_closes(wrapped=False)


def _watch_of(stream: Any) -> Any:
    """The ``_Watch`` of a stream watched in place, from the wrapper's generator's frame."""
    inner = stream._iterator
    frame = getattr(inner, "gi_frame", None) or inner.ag_frame
    return frame.f_locals["watch"]


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_stream_read_to_its_end_keeps_no_chunk(sdk: str, mode: str) -> None:
    """Once a checked stream has ended, nothing of it stays alive with the stream: the tap
    on the SDK's decoder holds the watch (and its chunks) weakly."""
    import gc
    import weakref

    from normalize_errors.replay import shipped
    from tests.support import cassette

    name = "openai/stream_finish_length" if sdk == "openai" else "anthropic/stream_max_tokens"
    recorded = cassette(shipped() / f"{name}.yaml")
    http = http_library(sdk)
    body = recorded.content

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    module = pytest.importorskip(sdk, reason=f"needs the {sdk} SDK")
    prefix = "Async" if mode == "async" else ""
    cls = getattr(module, prefix + ("OpenAI" if sdk == "openai" else "Anthropic"))
    library = http.AsyncClient if mode == "async" else http.Client
    made = cls(
        api_key="test", max_retries=0, http_client=library(transport=http.MockTransport(handler))
    )
    client = wrap(made, check=["upstream.unavailable"])  # checked; the stop reason raises nothing
    kwargs: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}
    if sdk == "anthropic":
        kwargs["max_tokens"] = 16
    create = client.chat.completions.create if sdk == "openai" else client.messages.create

    async def read_async() -> Any:
        stream = await create(stream=True, **kwargs)
        await anext(aiter(stream))
        watch = weakref.ref(_watch_of(stream))
        assert _watch_of(stream).state.chunks == 1  # counted while the stream runs
        async for _ in stream:
            pass
        return stream, watch

    if mode == "async":
        stream, watch = asyncio.run(read_async())
    else:
        stream = create(stream=True, **kwargs)
        next(iter(stream))
        watch = weakref.ref(_watch_of(stream))
        assert _watch_of(stream).state.chunks == 1
        for _ in stream:
            pass
    gc.collect()
    assert watch() is None
    assert stream is not None


def closed_runner_closes(wrapped: bool) -> int:
    """How often the body of a streaming tool runner's first turn is closed by the time
    ``await runner.close()`` returns, the runner left after its first item (anthropic's
    ``beta.messages.tool_runner(..., stream=True)``, whose turn holds its response open)."""
    import anthropic

    http = http_library("anthropic")

    class CountedBody(http.AsyncByteStream):  # type: ignore[misc, name-defined]
        """The SSE lines, counting how often the body is closed."""

        closes = 0

        async def __aiter__(self) -> Any:
            for line in ANTHROPIC_EVENTS:
                yield line

        async def aclose(self) -> None:
            self.closes += 1

    body = CountedBody()

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    @anthropic.beta_async_tool
    async def weather(city: str) -> str:
        """The weather in ``city``."""
        return "sunny"

    async def run() -> int:
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-test",
            http_client=http.AsyncClient(transport=http.MockTransport(handler)),
        )
        used = wrap(client) if wrapped else client
        runner = used.beta.messages.tool_runner(
            model="m",
            max_tokens=1,
            tools=[weather],
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        )
        async for _ in runner:
            break
        await runner.close()
        return body.closes

    return asyncio.run(run())


def test_closing_a_watched_async_tool_runner_closes_its_turn_at_once() -> None:
    """An async tool runner is watched in place: closing it (``runner.close()``, which
    closes the generator in its ``_iterator``) closes the SDK's loop inside at once, as the
    plain runner's close does: its turn's response is closed (and its span ended) before
    ``close()`` returns, not when the event loop finalises a dropped generator later."""
    anthropic = pytest.importorskip("anthropic")
    if not hasattr(anthropic, "beta_async_tool"):
        pytest.skip(f"anthropic {anthropic.__version__} has no tool runner")
    assert closed_runner_closes(wrapped=False) == 1
    assert closed_runner_closes(wrapped=True) == 1


def chat_stream_client(chunks: int) -> Any:
    """A real OpenAI client whose every answer is a chat stream of ``chunks`` text chunks and
    a finish chunk, each a fresh piece of the body (constructed: only their count matters)."""
    http = http_library("openai")
    base = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
    piece = f'data: {base}[{{"index":0,"delta":{{"content":"x"}}}}]}}\n\n'.encode()
    last = f'data: {base}[{{"index":0,"delta":{{}},"finish_reason":"stop"}}]}}\n\n'.encode()

    def body() -> Iterator[bytes]:
        for _ in range(chunks):
            yield piece
        yield last + b"data: [DONE]\n\n"

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    transport = http.MockTransport(handler)
    return openai.OpenAI(
        api_key="sk-test", max_retries=0, http_client=http.Client(transport=transport)
    )


def test_a_checked_chat_stream_read_chunk_by_chunk_takes_the_memory_of_the_raw_one() -> None:
    """Issue 37, item 4: a checked generating stream holds no chunk after yielding it. Read
    and dropped chunk by chunk, 5,000 chunks peak at what the raw SDK's stream peaks at
    (within a few KiB: the watch and its state machine); before, the wrapper kept them all
    (about 14 MiB here, 254 MiB for 100,000)."""
    messages = [{"role": "user", "content": "Hi"}]

    def reader(client: Any) -> Callable[[], int]:
        def read() -> int:
            count = 0
            for _ in client.chat.completions.create(model="m", messages=messages, stream=True):
                count += 1
            return count

        return read

    for warm in (chat_stream_client(20), wrap(chat_stream_client(20))):
        reader(warm)()  # imports and first-use caches belong to no stream
    count, raw_peak = peak_while(reader(chat_stream_client(5000)))
    assert count == 5001
    count, wrapped_peak = peak_while(reader(wrap(chat_stream_client(5000))))
    assert count == 5001
    assert wrapped_peak < raw_peak + 64 * 1024, (raw_peak, wrapped_peak)
