"""The paths of ``wrap()`` the other wrap tests do not take, through real SDK clients over an
in-memory transport: ``stream_text`` refused out of its range, an SDK client reached through
an object of the application's (no SDK named: each result read by its own type), raw
responses whose ``parse()`` fails or gives a stream (sync and async), the application's own
exception from an async call and from entering a stream manager, and a proxy class called.

Answers are the shipped cassettes (``cassettes/``, each naming its source) or, where a test
says so, a constructed body (a non-JSON body: only that it is not JSON matters).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai

from normalize_errors import HarnessError, OutputTruncatedError, wrap
from normalize_errors._wrapping._replay_calls import http_library

from .stream_shapes import lines, sse
from .support import recorded
from .test_stream_cuts import client as stream_client

MESSAGES: Any = [{"role": "user", "content": "Hello"}]


class AppError(Exception):
    """An exception of the application's own."""


def openai_client(handler: Any, *, asynchronous: bool = False) -> Any:
    http = http_library("openai")
    if asynchronous:
        return openai.AsyncOpenAI(
            api_key="test-key",
            max_retries=0,
            http_client=http.AsyncClient(transport=http.MockTransport(handler)),
        )
    return openai.OpenAI(
        api_key="test-key",
        max_retries=0,
        http_client=http.Client(transport=http.MockTransport(handler)),
    )


def not_json(request: Any) -> Any:
    """A 200 whose body says it is JSON and is not (constructed)."""
    module = __import__(type(request).__module__.partition(".")[0])
    return module.Response(200, headers={"content-type": "application/json"}, content=b"{not json")


def app_failure(request: Any) -> Any:
    """A custom transport of the application's that fails with its own exception."""
    raise AppError("the application's transport refused the request")


@pytest.mark.parametrize("stream_text", [-1, 4097, True, 1.5])
def test_stream_text_out_of_its_range_is_refused(stream_text: Any) -> None:
    """``stream_text`` is a number of bytes from 0 to 4096: anything else is refused at
    ``wrap()``, naming the range, before any call is made."""
    with pytest.raises(ValueError, match="from 0 to 4096"):
        wrap(openai_client(not_json), stream_text=stream_text)


def test_an_sdk_client_held_by_an_application_object_reads_results_by_their_type() -> None:
    """``wrap(app)`` of an object of the application's holding a google-genai client (which
    has no ``max_retries``, so the app's options carry on, with no SDK named): a generating
    call's result is read by the adapter its type routes to. The answer is the shipped
    ``google/finish_max_tokens_thinking_200`` cassette: ``output.truncated``."""
    status, headers, body = recorded("google", "finish_max_tokens_thinking_200")

    def answer(request: Any) -> Any:
        return httpx.Response(status, headers=headers, content=body)

    class App:
        def __init__(self) -> None:
            transport = httpx.MockTransport(answer)
            options: Any = {"httpx_client": httpx.Client(transport=transport)}
            self.gemini = genai.Client(api_key="test-key", http_options=options)

    plain = App().gemini.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    assert plain.candidates is not None
    assert str(plain.candidates[0].finish_reason) == "FinishReason.MAX_TOKENS"  # a result
    wrapped = wrap(App())
    with pytest.raises(OutputTruncatedError) as caught:
        wrapped.gemini.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    assert caught.value.problem.upstream["provider"] == "google"


def test_a_raw_response_whose_parse_fails_is_the_callers_to_parse() -> None:
    """``with_raw_response`` of a 200 that is not JSON: the wrapper's check cannot parse it and
    returns the raw response as the SDK does; the caller's own ``parse()`` raises what the
    SDK's raises."""
    raw = wrap(openai_client(not_json)).chat.completions.with_raw_response.create(
        model="m", messages=MESSAGES
    )
    assert type(raw).__name__ == "LegacyAPIResponse"
    with pytest.raises(json.JSONDecodeError) as wrapped_error:
        raw.parse()
    plain = openai_client(not_json).chat.completions.with_raw_response.create(
        model="m", messages=MESSAGES
    )
    with pytest.raises(json.JSONDecodeError) as plain_error:
        plain.parse()
    assert type(wrapped_error.value) is type(plain_error.value)


def anthropic_async(handler: Any) -> Any:
    http = http_library("anthropic")
    return anthropic.AsyncAnthropic(
        api_key="test-key",
        max_retries=0,
        http_client=http.AsyncClient(transport=http.MockTransport(handler)),
    )


async def parsed(raw: Any) -> Any:
    """``raw.parse()``, awaited where it is a coroutine (anthropic 2.x's ``AsyncAPIResponse``;
    the older lines give a ``LegacyAPIResponse`` whose ``parse()`` is not)."""
    value = raw.parse()
    return await value if inspect.isawaitable(value) else value


def test_an_async_raw_response_whose_parse_fails_is_the_callers_to_parse() -> None:
    """The async twin (anthropic's async client; from anthropic 2.x its ``parse()`` is a
    coroutine): the raw response comes back; the caller's parse raises as the SDK's."""

    async def run(client: Any) -> BaseException:
        raw = await client.messages.with_raw_response.create(
            model="m", max_tokens=64, messages=MESSAGES
        )
        with pytest.raises(json.JSONDecodeError) as caught:
            await parsed(raw)
        return caught.value

    wrapped = asyncio.run(run(wrap(anthropic_async(not_json))))
    plain = asyncio.run(run(anthropic_async(not_json)))
    assert type(wrapped) is type(plain)


def test_an_unchecked_async_raw_response_is_not_parsed() -> None:
    """``check=False``: an async raw response is returned as it came, its body left to the
    caller's ``parse()``: the shipped ``anthropic/finish_max_tokens`` answer raises nothing."""
    status, headers, body = recorded("anthropic", "finish_max_tokens")

    def answer(request: Any) -> Any:
        return http_library("anthropic").Response(status, headers=headers, content=body)

    async def run(check: bool) -> Any:
        client = wrap(anthropic_async(answer), check=check)
        raw = await client.messages.with_raw_response.create(
            model="m", max_tokens=64, messages=MESSAGES
        )
        return await parsed(raw)

    assert asyncio.run(run(False)).stop_reason == "max_tokens"
    with pytest.raises(OutputTruncatedError):  # checked, the same answer raises at the call
        asyncio.run(run(True))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_streamed_raw_response_is_returned_unchecked(mode: str) -> None:
    """``with_raw_response.create(stream=True)``: ``parse()`` gives a stream, which is not a
    result to check; the raw response comes back as the SDK's, its stream whole (openai's
    sync client; anthropic's async one). The streams are the recorded ones of
    tests/recorded_streams (framing constructed: tests/stream_shapes)."""
    if mode == "sync":
        pieces = sse(lines("openai-chat-azure-text"), done=True)
        create = wrap(stream_client("openai", pieces)).chat.completions.with_raw_response.create
        chunks = list(create(model="m", messages=MESSAGES, stream=True).parse())
        assert len(chunks) == len(lines("openai-chat-azure-text"))
        return
    recorded_events = [text for text in lines("anthropic-text") if '"ping"' not in text]
    pieces = sse(recorded_events, named=True)
    client = wrap(stream_client("anthropic", pieces, asynchronous=True))

    async def aread() -> list[Any]:
        raw = await client.messages.with_raw_response.create(
            model="m", max_tokens=64, messages=MESSAGES, stream=True
        )
        return [event async for event in await parsed(raw)]

    events = asyncio.run(aread())
    assert [event.type for event in events][-1] == "message_stop"
    assert len(events) == len(recorded_events)


def as_the_sdk_lets_it(run: Any) -> None:
    """``run(wrapped)`` raises what ``run(plain)`` raises, read as the wrapper reads it: the
    application's own exception, when the SDK lets it through (openai 2.x and later), comes
    out untouched; turned by the SDK into its own error (openai 1.x's
    ``APIConnectionError``), it comes out typed, as that error's drop-in."""
    plain = caught(lambda: run(lambda made: made))
    wrapped = caught(lambda: run(wrap))
    assert plain is not None
    if isinstance(plain, AppError):
        assert isinstance(wrapped, AppError), repr(wrapped)
        assert not isinstance(wrapped, HarnessError)
    else:
        assert isinstance(wrapped, HarnessError), repr(wrapped)
        assert isinstance(wrapped, type(plain))


def caught(call: Any) -> BaseException | None:
    try:
        call()
    except Exception as exc:
        return exc
    return None


def test_the_applications_own_error_from_an_async_call_passes_through() -> None:
    """An async call whose transport (the application's) raises its own exception: the same
    exception comes out as without the wrapper (as sync calls do, see tests/test_wrap.py),
    through a method that returns an awaitable (``create``) and a coroutine function
    (``models.retrieve``)."""

    def create(wrapper: Any) -> None:
        client = wrapper(openai_client(app_failure, asynchronous=True))
        asyncio.run(client.chat.completions.create(model="m", messages=MESSAGES))

    def retrieve(wrapper: Any) -> None:
        asyncio.run(wrapper(openai_client(app_failure, asynchronous=True)).models.retrieve("m"))

    as_the_sdk_lets_it(create)
    as_the_sdk_lets_it(retrieve)


def test_an_async_openai_raw_response_is_checked_when_awaited() -> None:
    """openai's async ``with_raw_response.create`` gives a raw response whose ``parse()`` is
    no coroutine: the wrapper parses and checks it when the call is awaited.
    The answer is the shipped ``openai/finish_length_200`` cassette: ``output.truncated``."""
    status, headers, body = recorded("openai", "finish_length_200")

    def answer(request: Any) -> Any:
        return http_library("openai").Response(status, headers=headers, content=body)

    async def run() -> None:
        client = wrap(openai_client(answer, asynchronous=True))
        await client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)

    with pytest.raises(OutputTruncatedError):
        asyncio.run(run())


def test_the_applications_own_error_from_an_awaited_paginator_passes_through() -> None:
    """``await client.models.list()`` (an ``AsyncPaginator``, awaited through the wrapper)."""

    async def listed(client: Any) -> None:
        await client.models.list()

    as_the_sdk_lets_it(
        lambda wrapper: asyncio.run(listed(wrapper(openai_client(app_failure, asynchronous=True))))
    )


def test_the_applications_own_error_entering_a_stream_manager_passes_through() -> None:
    """``with client.chat.completions.stream(...)`` sends the request when entered: the
    application's exception from its transport comes out of ``__enter__`` and
    ``__aenter__`` as without the wrapper."""

    def enter(wrapper: Any) -> None:
        with wrapper(openai_client(app_failure)).chat.completions.stream(
            model="m", messages=MESSAGES
        ):
            pass

    async def aenter(client: Any) -> None:
        async with client.chat.completions.stream(model="m", messages=MESSAGES):
            pass

    as_the_sdk_lets_it(enter)
    as_the_sdk_lets_it(
        lambda wrapper: asyncio.run(aenter(wrapper(openai_client(app_failure, asynchronous=True))))
    )


def test_a_wrapped_streams_class_cannot_be_called() -> None:
    """A wrapped stream is made by ``wrap()``: calling its class refuses, saying so."""
    pieces = sse(lines("google-text"))
    from .test_stream_cuts_more import gemini

    stream = wrap(gemini(pieces)).models.generate_content_stream(
        model="gemini-2.5-flash", contents="Hi"
    )
    with pytest.raises(TypeError, match="made by wrap"):
        type(stream)()


def test_a_provider_that_names_no_adapter_leaves_results_to_the_sdks_reader() -> None:
    """``wrap(client, provider="my-gateway")`` (a gateway's name, or an OpenAI-compatible
    vendor's with no adapter of its own): results are read by the SDK's own adapter, as
    ``from_response`` ignores such a name. A success comes back; the shipped
    ``openai/finish_length_200`` answer is ``output.truncated``; a cut stream (the recorded
    Azure chat stream without its finish and ``[DONE]``: constructed) raises at its end.
    Before, every successful call raised ``ValueError: unknown provider`` and a stream was
    only counted, its cut never raised."""
    status, headers, body = recorded("openai", "finish_length_200")
    truncated = json.loads(body)

    def answer(request: Any) -> Any:
        return http_library("openai").Response(status, headers=headers, content=body)

    client = wrap(openai_client(answer), provider="my-gateway")
    with pytest.raises(OutputTruncatedError):
        client.chat.completions.create(model="m", messages=MESSAGES)
    whole = {**truncated, "choices": [{**truncated["choices"][0], "finish_reason": "stop"}]}

    def whole_answer(request: Any) -> Any:
        return http_library("openai").Response(200, headers=headers, content=json.dumps(whole))

    result = wrap(openai_client(whole_answer), provider="my-gateway").chat.completions.create(
        model="m", messages=MESSAGES
    )
    assert result.choices[0].finish_reason == "stop"
    chat = lines("openai-chat-azure-text")
    cut = [text for text in chat if '"finish_reason":"stop"' not in text][:3]
    streamed = wrap(stream_client("openai", sse(cut)), provider="my-gateway")
    seen: list[Any] = []
    with pytest.raises(HarnessError) as caught:
        seen.extend(streamed.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    assert caught.value.problem.code == "upstream.invalid_response"
    assert len(seen) == len(cut)
