"""Cut streams raise, whole streams do not: OpenAI (chat and Responses, raw and helpers) and
Anthropic (raw and ``messages.stream()``), sync and async, through the real SDK clients over
an in-memory transport (issue 37, items 2 and 3).

Every stream here is a recorded one (``tests/recorded_streams/``; framing constructed, see
``tests/stream_shapes``). A *cut* shape is constructed from it: the recorded events up to a
point, then a clean end of the body, or httpx's ``RemoteProtocolError`` for a connection the
peer closed mid-body. For each, the wrapped client must yield every chunk the plain client
yields, then raise the typed error (``upstream.invalid_response`` for a clean end,
``upstream.unavailable`` for the lost connection; never ``output.invalid_tool_arguments`` for
arguments the transport lost), whose ``err.stream`` says what reached the caller; a whole
shape must end quietly.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, NamedTuple

import anthropic
import openai
import pytest

from normalize_errors import (
    HarnessError,
    UpstreamInvalidResponseError,
    UpstreamUnavailableError,
    wrap,
)
from normalize_errors._wrapping._replay_calls import http_library

from .stream_shapes import first, lines, sse, transport
from .support import is_instance, stream_of, valid

MESSAGES: Any = [{"role": "user", "content": "Hello"}]


class Api(NamedTuple):
    """One streaming API of an SDK (``api_iter`` and ``collect`` read it as a caller would)."""

    name: str
    sdk: str


def client(
    sdk: str, pieces: list[bytes], *, asynchronous: bool = False, broken: bool = False
) -> Any:
    """A real client of ``sdk`` whose every answer is a 200 stream of ``pieces``."""
    http = http_library(sdk)
    made = transport(http, pieces, broken=broken)
    module: Any = openai if sdk == "openai" else anthropic
    name = ("Async" if asynchronous else "") + ("OpenAI" if sdk == "openai" else "Anthropic")
    http_client = (http.AsyncClient if asynchronous else http.Client)(transport=made)
    return getattr(module, name)(api_key="test-key", max_retries=0, http_client=http_client)


CHAT = Api("chat.completions.create", "openai")
CHAT_HELPER = Api("chat.completions.stream", "openai")
RESPONSES = Api("responses.create", "openai")
RESPONSES_HELPER = Api("responses.stream", "openai")
MESSAGES_API = Api("messages.create", "anthropic")
MESSAGES_HELPER = Api("messages.stream", "anthropic")
RAW_OF = {CHAT_HELPER: CHAT, RESPONSES_HELPER: RESPONSES, MESSAGES_HELPER: MESSAGES_API}
"""The raw API under each helper: what the plain client yields of a cut stream is read
there (the plain helpers' final reads have nothing whole to give)."""
FINAL = {
    CHAT_HELPER: "get_final_completion",
    RESPONSES_HELPER: "get_final_response",
    MESSAGES_HELPER: "get_final_message",
}


class Shape(NamedTuple):
    """A recorded stream, and where a cut inside its text and inside a tool call falls."""

    api: Api
    whole: list[bytes]
    text_cut: list[bytes]
    tool_whole: list[bytes]
    tool_cut: list[bytes]
    tool_name: str


CHAT_TEXT = lines("openai-chat-azure-text")  # Azure's prompt_filter_results chunk first
CHAT_TOOL = lines("openai-chat-deepseek-tool-call")
RESPONSES_TEXT = lines("openai-responses-azure-text")
RESPONSES_TOOL = lines("openai-responses-azure-tool-call")
ANTHROPIC_TEXT = lines("anthropic-text")
ANTHROPIC_TOOL = lines("anthropic-tool")


def chat_shape(api: Api) -> Shape:
    # the text cut after " of" (two content chunks); the tool cut after the arguments'
    # " Francisco" piece, before their closing quote and brace
    return Shape(
        api,
        sse(CHAT_TEXT, done=True),
        sse(CHAT_TEXT[: first(CHAT_TEXT, '"content":" of"') + 1]),
        sse(CHAT_TOOL, done=True),
        sse(CHAT_TOOL[: first(CHAT_TOOL, '"arguments":" Francisco"') + 1]),
        "weather",
    )


def responses_shape(api: Api) -> Shape:
    delta = first(RESPONSES_TOOL, "function_call_arguments.delta")
    return Shape(
        api,
        sse(RESPONSES_TEXT, named=True),
        sse(RESPONSES_TEXT[: first(RESPONSES_TEXT, "output_text.delta") + 1], named=True),
        sse(RESPONSES_TOOL, named=True),
        sse(RESPONSES_TOOL[: delta + 3], named=True),
        "weather",
    )


def messages_shape(api: Api) -> Shape:
    return Shape(
        api,
        sse(ANTHROPIC_TEXT, named=True),
        sse(ANTHROPIC_TEXT[: first(ANTHROPIC_TEXT, '"text":"! I"') + 1], named=True),
        sse(ANTHROPIC_TOOL, named=True),
        sse(ANTHROPIC_TOOL[: first(ANTHROPIC_TOOL, "San Francisco") + 1], named=True),
        "json",
    )


SHAPES = [
    chat_shape(CHAT),
    chat_shape(CHAT_HELPER),
    responses_shape(RESPONSES),
    responses_shape(RESPONSES_HELPER),
    messages_shape(MESSAGES_API),
    messages_shape(MESSAGES_HELPER),
]
IDS = [shape.api.name for shape in SHAPES]
MODES = ["sync", "async"]


def read(api: Api, c: Any, mode: str) -> list[Any]:
    """Everything ``api`` yields on ``c`` (the helpers' final read after it)."""
    if mode == "async":

        async def drain() -> list[Any]:
            seen: list[Any] = []
            await collect(api, c, seen)
            return seen

        return asyncio.run(drain())
    return list(api_iter(api, c))


def plain_events(api: Api, pieces: list[bytes], mode: str) -> list[Any]:
    """What the plain client yields of ``pieces`` (a helper's events, without its final
    read: the plain helpers have nothing whole to give of a cut stream)."""
    c = client(api.sdk, pieces, asynchronous=mode == "async")
    if api not in RAW_OF:
        return read(api, c, mode)
    if mode == "sync":
        with manager(api, c) as stream:
            return list(stream)

    async def drain() -> list[Any]:
        async with manager(api, c) as helper:
            return [event async for event in helper]

    return asyncio.run(drain())


def wrapped_until_error(
    api: Api, pieces: list[bytes], mode: str, *, broken: bool = False, check: Any = True
) -> tuple[list[Any], BaseException | None]:
    """What the wrapped client yields of ``pieces`` before it raises, and what it raises."""
    seen: list[Any] = []
    c = wrap(client(api.sdk, pieces, asynchronous=mode == "async", broken=broken), check=check)
    try:
        if mode == "async":
            asyncio.run(collect(api, c, seen))
        else:
            for event in api_iter(api, c):
                seen.append(event)
    except Exception as exc:
        return seen, exc
    return seen, None


def manager(api: Api, c: Any) -> Any:
    """The stream manager a helper API returns."""
    if api is CHAT_HELPER:
        return c.chat.completions.stream(model="m", messages=MESSAGES)
    if api is RESPONSES_HELPER:
        return c.responses.stream(model="m", input="Hello")
    return c.messages.stream(model="m", max_tokens=64, messages=MESSAGES)


def api_iter(api: Api, c: Any) -> Any:
    """The events of ``api`` on ``c``, one by one (the helpers' final read after them)."""
    if api is CHAT:
        yield from c.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    elif api is RESPONSES:
        yield from c.responses.create(model="m", input="Hello", stream=True)
    elif api is MESSAGES_API:
        yield from c.messages.create(model="m", max_tokens=64, messages=MESSAGES, stream=True)
    else:
        with manager(api, c) as stream:
            yield from stream
            getattr(stream, FINAL[api])()


async def collect(api: Api, c: Any, seen: list[Any]) -> None:
    """``api_iter``'s async twin, appending to ``seen`` as the events come."""
    if api in RAW_OF:
        async with manager(api, c) as helper:
            async for event in helper:
                seen.append(event)
            await getattr(helper, FINAL[api])()
        return
    if api is CHAT:
        stream = await c.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    elif api is RESPONSES:
        stream = await c.responses.create(model="m", input="Hello", stream=True)
    else:
        stream = await c.messages.create(model="m", max_tokens=64, messages=MESSAGES, stream=True)
    async for event in stream:
        seen.append(event)


# -- whole streams never raise ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_a_whole_stream_ends_quietly(shape: Shape, mode: str) -> None:
    """The recorded streams, whole (text, and a tool call), through the wrapped client: the
    same events as the plain client, no error, the helpers' final reads included."""
    for pieces in (shape.whole, shape.tool_whole):
        seen, err = wrapped_until_error(shape.api, pieces, mode)
        assert err is None, err
        assert len(seen) == len(plain_events(shape.api, pieces, mode))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", [CHAT, CHAT_HELPER], ids=["create", "stream"])
def test_a_chat_stream_without_done_or_with_usage_after_its_finish_reason_is_whole(
    api: Api, mode: str
) -> None:
    """OpenAI-compatible servers: the finish reason is enough (no ``[DONE]``), and a usage
    chunk after it (the recorded Azure stream's last) changes nothing."""
    seen, err = wrapped_until_error(api, sse(CHAT_TEXT), mode)
    assert err is None, err
    assert seen


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_a_connection_closed_after_the_terminal_event_ends_the_stream_whole(
    shape: Shape, mode: str
) -> None:
    """The terminal event came (chat: its finish reason and usage chunk, without the
    ``[DONE]`` the SDK would stop at), then the connection broke: the plain client raises
    the transport's error; the wrapped one ends the stream as whole (``check=False`` leaves
    the judgment out and raises the SDK's error, typed, saying the terminal event came)."""
    pieces = [p for p in shape.whole if p != b"data: [DONE]\n\n"]
    seen, err = wrapped_until_error(shape.api, pieces, mode, broken=True)
    assert err is None, err
    assert seen
    plain = client(shape.api.sdk, pieces, asynchronous=mode == "async", broken=True)
    with pytest.raises(Exception) as raised:  # noqa: PT011 - the SDK's own connection error
        read(shape.api, plain, mode)
    assert "Connection" in type(raised.value).__name__ or "Protocol" in type(raised.value).__name__
    _, unchecked = wrapped_until_error(shape.api, pieces, mode, broken=True, check=False)
    assert isinstance(unchecked, UpstreamUnavailableError)  # unchecked: as the SDK ends it
    assert stream_of(unchecked)["terminal"] is True


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_a_caller_that_stops_early_or_closes_the_stream_gets_no_error(
    shape: Shape, mode: str
) -> None:
    """Two events read, then ``break`` and close (or leave the helper's ``with``), on a cut
    stream: nothing is raised; the end that was never reached is not judged."""
    c = wrap(client(shape.api.sdk, shape.text_cut, asynchronous=mode == "async"))

    async def early_async() -> int:
        taken = 0
        if shape.api in RAW_OF:
            async with manager(shape.api, c) as helper:
                async for _ in helper:
                    taken += 1
                    if taken == 2:
                        break
            return taken
        if shape.api is CHAT:
            stream = await c.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        elif shape.api is RESPONSES:
            stream = await c.responses.create(model="m", input="Hi", stream=True)
        else:
            stream = await c.messages.create(
                model="m", max_tokens=8, messages=MESSAGES, stream=True
            )
        async for _ in stream:
            taken += 1
            if taken == 2:
                break
        await stream.close()
        return taken

    if mode == "async":
        assert asyncio.run(early_async()) == 2
        return
    iterator = api_iter(shape.api, c)
    assert [next(iterator), next(iterator)]
    iterator.close()  # leaves the helper's ``with`` too


# -- cut streams raise at their end ----------------------------------------------------------


def check_cut(err: BaseException | None, seen: list[Any], plain: list[Any], shape: Shape) -> Any:
    """``err`` is the cut's ``upstream.invalid_response``, raised after every chunk."""
    assert isinstance(err, UpstreamInvalidResponseError), repr(err)
    problem = valid(err.problem)
    assert problem.retryable is True
    assert len(seen) == len(plain)  # every chunk reached the caller first
    summary = stream_of(problem)
    assert summary["chunks"] == len(seen)
    assert summary["terminal"] is False
    assert summary["output_chars"] > 0
    assert problem.upstream["in_stream"] is True
    assert "ended before its terminal event" in (problem.detail or "")
    return summary


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_a_stream_cut_in_its_text_raises_at_its_end(shape: Shape, mode: str) -> None:
    """Cut after a few text deltas, with a clean end of the body: the plain client ends as
    if the answer were whole; the wrapped one yields the same events, then raises."""
    seen, err = wrapped_until_error(shape.api, shape.text_cut, mode)
    summary = check_cut(err, seen, plain_events(shape.api, shape.text_cut, mode), shape)
    assert summary["phase"] == "text"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_a_stream_cut_inside_a_tool_call_is_the_transports_failure(shape: Shape, mode: str) -> None:
    """Cut inside a tool call's arguments: ``upstream.invalid_response``, never
    ``output.invalid_tool_arguments`` (the model made whole arguments; the transport lost
    them), naming the tool call it was inside."""
    seen, err = wrapped_until_error(shape.api, shape.tool_cut, mode)
    summary = check_cut(err, seen, plain_events(shape.api, shape.tool_cut, mode), shape)
    assert summary["phase"] == "tool_call"
    assert summary["tool_call"]["name"] == shape.tool_name
    assert summary["tool_call"]["arguments_chars"] > 0
    assert err is not None
    assert "inside the tool call" in str(err)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_a_connection_lost_mid_stream_is_upstream_unavailable_with_what_arrived(
    shape: Shape, mode: str
) -> None:
    """The peer closes the connection mid-body: the SDK raises its connection error (openai
    3.x and anthropic 2.x turn httpx's ``RemoteProtocolError`` into ``APIConnectionError``;
    older lines let it through); the wrapped client raises it as ``upstream.unavailable``, a
    drop-in of the class the plain client raises, with what reached the caller."""
    seen, err = wrapped_until_error(shape.api, shape.text_cut, mode, broken=True)
    assert isinstance(err, UpstreamUnavailableError), repr(err)
    plain = client(shape.api.sdk, shape.text_cut, asynchronous=mode == "async", broken=True)
    with pytest.raises(Exception) as raised:  # noqa: PT011 - the SDK's own connection error
        read(shape.api, plain, mode)
    assert is_instance(err, type(raised.value))
    assert "Connection" in type(raised.value).__name__ or "Protocol" in type(raised.value).__name__
    summary = stream_of(err)
    assert (summary["phase"], summary["terminal"]) == ("text", False)
    assert summary["chunks"] == len(seen) > 0
    valid(err.problem)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_unchecked_a_cut_stream_ends_as_it_ends_but_its_errors_still_count(
    shape: Shape, mode: str
) -> None:
    """``wrap(check=False)``: a clean cut ends as the SDK ends it; a lost connection still
    raises, saying what reached the caller (what the retry helpers read)."""
    _, err = wrapped_until_error(shape.api, shape.text_cut, mode, check=False)
    assert err is None or not isinstance(err, HarnessError), err  # the plain SDK's own way
    _, lost = wrapped_until_error(shape.api, shape.text_cut, mode, broken=True, check=False)
    assert isinstance(lost, UpstreamUnavailableError)
    assert stream_of(lost)["phase"] == "text"


# -- a resumed Responses stream with nothing left --------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_resumed_responses_stream_with_nothing_left_is_whole(mode: str) -> None:
    """``responses.retrieve(id, stream=True, starting_after=N)`` past the last event sends
    nothing: that is the whole of it, not a stream cut before its first chunk (which
    ``responses.create(stream=True)`` with the same empty body is)."""
    c = wrap(client("openai", [], asynchronous=mode == "async"))

    async def aresumed() -> list[Any]:
        stream = await c.responses.retrieve("resp_1", stream=True, starting_after=11)
        return [event async for event in stream]

    if mode == "async":
        assert asyncio.run(aresumed()) == []
    else:
        assert list(c.responses.retrieve("resp_1", stream=True, starting_after=11)) == []
        with c.responses.stream(response_id="resp_1", starting_after=11) as stream:
            assert list(stream) == []
    with pytest.raises(UpstreamInvalidResponseError):
        read(RESPONSES, c, mode)
    resumed_cut = sse(RESPONSES_TEXT[: first(RESPONSES_TEXT, "output_text.delta") + 1], named=True)
    cut = wrap(client("openai", resumed_cut, asynchronous=mode == "async"))
    if mode == "sync":  # a resumed stream cut before its end is still cut
        with pytest.raises(UpstreamInvalidResponseError):
            list(cut.responses.retrieve("resp_1", stream=True, starting_after=0))


# -- the helpers' own reads raise too --------------------------------------------------------


def test_anthropic_text_stream_and_get_final_message_raise_the_cut() -> None:
    """``messages.stream()``: ``text_stream`` yields the text that came, then raises;
    ``get_final_message()`` alone (which reads the stream to its end) raises too, rather than
    return a message whose ``stop_reason`` is ``None`` (what the plain helper does)."""
    cut = messages_shape(MESSAGES_HELPER).text_cut
    plain = client("anthropic", cut)
    with plain.messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream:
        assert stream.get_final_message().stop_reason is None  # the lie the issue shows
    c = wrap(client("anthropic", cut))
    texts: list[str] = []
    with (
        pytest.raises(UpstreamInvalidResponseError) as info,
        c.messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream,
    ):
        texts.extend(stream.text_stream)
    assert "".join(texts) == "Hello! I"
    assert stream_of(info.value)["output_chars"] == len("Hello! I")
    with (
        pytest.raises(UpstreamInvalidResponseError),
        c.messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream,
    ):
        stream.get_final_message()


def test_openai_helpers_final_reads_raise_the_cut() -> None:
    """``chat.completions.stream().get_final_completion()`` and
    ``responses.stream().get_final_response()`` read the stream to its end: they raise the
    cut as iterating does."""
    chat_cut = chat_shape(CHAT_HELPER).text_cut
    with (
        pytest.raises(UpstreamInvalidResponseError),
        wrap(client("openai", chat_cut)).chat.completions.stream(
            model="m", messages=MESSAGES
        ) as chat,
    ):
        chat.get_final_completion()
    responses_cut = responses_shape(RESPONSES_HELPER).text_cut
    with (
        pytest.raises(UpstreamInvalidResponseError),
        wrap(client("openai", responses_cut)).responses.stream(model="m", input="Hi") as resp,
    ):
        resp.get_final_response()


ANTHROPIC_THINKING = lines("anthropic-thinking")


@pytest.mark.parametrize("mode", MODES)
def test_a_thinking_stream_whole_and_cut_in_its_thinking(mode: str) -> None:
    """The recorded extended-thinking stream (a ``thinking`` block, an empty thinking delta,
    its ``signature_delta``, then a text block that opens empty): whole, it ends quietly (the
    connection lost after ``message_stop`` too); cut after the thinking block, before the
    text, it is the cut, and the thinking that came is counted as output that reached the
    caller (the signature is not output)."""
    pieces = sse(ANTHROPIC_THINKING, named=True)
    seen, err = wrapped_until_error(MESSAGES_API, pieces, mode, broken=True)
    assert err is None, repr(err)
    assert len(seen) == len(plain_events(MESSAGES_API, pieces, mode))
    deltas = [json.loads(text)["delta"] for text in ANTHROPIC_THINKING if "_delta" in text]
    thinking = "".join(delta.get("thinking", "") for delta in deltas)
    cut = first(ANTHROPIC_THINKING, '"signature_delta"') + 2  # up to the thinking block's stop
    seen, err = wrapped_until_error(MESSAGES_API, sse(ANTHROPIC_THINKING[:cut], named=True), mode)
    assert isinstance(err, UpstreamInvalidResponseError), repr(err)
    summary = stream_of(err)
    assert (summary["output_chars"], summary["terminal"]) == (len(thinking), False)
    assert summary["chunks"] == len(seen)
