"""wrap(): the same client, raising typed drop-in errors; normalized() for code that cannot wrap.

The failures come from the shipped cassettes, replayed through wrapped real SDK clients;
the success path runs on an in-memory transport with bodies built here for the purpose.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import multiprocessing
import pickle
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest

from normalize_errors import (
    HarnessError,
    HarnessInternalError,
    OutputTruncatedError,
    UpstreamInvalidResponseError,
    UpstreamOverloadedError,
    UpstreamRateLimitedError,
    UpstreamUnavailableError,
    normalize,
    normalized,
    wrap,
)
from normalize_errors._base import _caller_line
from normalize_errors._wrapping import _wrap, _wrap_streams
from normalize_errors._wrapping._replay_calls import http_library
from normalize_errors.replay import cassette_paths, load, run, shipped

from .support import cassette, is_instance, needed, raised, stream_of

CASSETTES = cassette_paths()
IDS = [f"{p.parent.name}/{p.stem}" for p in CASSETTES]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_cassettes_through_a_wrapped_client(path: Path, mode: str) -> None:
    """Each failure raises its typed error, which is also the vendor's own exception class."""
    scenario = load(path)
    needed(scenario)
    plain = run(scenario, mode=mode)
    wrapped = run(scenario, mode=mode, prepare=wrap)
    err = wrapped.exception
    if scenario.provider == "http":  # a wrapped httpx client types raise_for_status()
        assert wrapped.error is not None
        assert wrapped.error.code == scenario.expect["code"]
        return
    assert isinstance(err, HarnessError), f"expected a typed error, got {err!r}"
    assert err.problem.code == scenario.expect["code"]
    if wrapped.error is not None and wrapped.error is not err:
        assert err.to_dict() == wrapped.error.to_dict()
    if plain.exception is not None:
        vendor = type(plain.exception)
        assert isinstance(err, vendor)  # `except openai.RateLimitError:` still catches it
        assert type(err.problem.__cause__) is vendor  # the vendor exception itself
        assert type(err.__cause__) is type(plain.exception.__cause__)  # its own cause
        assert err.__suppress_context__ == plain.exception.__suppress_context__
        for name in ("status_code", "request_id", "body", "response"):
            if hasattr(plain.exception, name):
                assert hasattr(err, name), name
        if hasattr(plain.exception, "status_code"):
            assert err.status_code == plain.exception.status_code  # type: ignore[attr-defined]
    elif scenario.stream or scenario.call.endswith("_stream"):
        assert stream_of(err)["chunks"], "the error says what reached the caller"
    else:
        assert err.result is not None, "the failing result stays on the error"
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is type(err)
    assert clone.to_dict() == err.to_dict()


def roundtrip(err: HarnessError) -> tuple[str, list[str], dict[str, Any], int | None]:
    """Runs in a child process: what arrived there."""
    return (
        type(err).__name__,
        [f"{k.__module__}.{k.__name__}" for k in type(err).__mro__],
        err.to_dict(),
        getattr(err, "status_code", None),
    )


def test_drop_in_errors_cross_process_boundaries() -> None:
    """A drop-in error pickles into a fresh (spawned) process and keeps both identities."""
    scenario = load(shipped() / "openai" / "rate_limit_tpm_429.yaml")
    err = run(scenario, prepare=wrap).exception
    assert isinstance(err, UpstreamRateLimitedError)
    vendor: type = openai.RateLimitError
    assert isinstance(err, vendor)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        name, mro, problem, status = pool.submit(roundtrip, err).result(timeout=120)
    assert name == "UpstreamRateLimitedError"
    assert "openai.RateLimitError" in mro
    assert "normalize_errors.UpstreamRateLimitedError" in mro
    assert problem == err.to_dict()
    assert status == 429


def test_sdk_retries_show_as_attempts() -> None:
    """Three attempts (max_retries=2) are reported as attempts and max_attempts."""
    scenario = load(shipped() / "openai" / "overloaded_503_retried.yaml")
    plain = run(scenario)
    assert plain.error is not None
    assert plain.error.attempts == 3
    err = run(scenario, prepare=wrap).exception
    assert isinstance(err, UpstreamOverloadedError)
    assert (err.attempts, err.max_attempts) == (3, 3)


# -- the success path on an in-memory transport -------------------------------------------------

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-mini",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


def sse(chunks: list[dict[str, Any]]) -> bytes:
    """An SSE body of ``chunks`` ending with [DONE]."""
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def chunk(content: str | None, finish: str | None) -> dict[str, Any]:
    """One chat completion chunk."""
    delta = {} if content is None else {"content": content}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def openai_client(body: Callable[[Any], tuple[int, bytes, str]], **kwargs: Any) -> Any:
    """A real OpenAI client whose transport answers in memory."""
    httpx = http_library("openai")

    def handler(request: Any) -> Any:
        status, content, media = body(request)
        return httpx.Response(status, content=content, headers={"content-type": media})

    transport = httpx.MockTransport(handler)
    return openai.OpenAI(api_key="sk-test", http_client=httpx.Client(transport=transport), **kwargs)


def ok(request: Any) -> tuple[int, bytes, str]:
    """A successful chat completion, or a stream of one, by what the request asks."""
    payload = json.loads(request.content)
    if payload.get("stream"):
        return (
            200,
            sse([chunk("Hi", None), chunk(" there", None), chunk(None, "stop")]),
            ("text/event-stream"),
        )
    return 200, json.dumps(COMPLETION).encode(), "application/json"


MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]


def test_success_returns_the_sdk_result_itself() -> None:
    """Same types, same content, no proxy around data; isinstance holds for the client."""
    client = wrap(openai_client(ok))
    assert isinstance(client, openai.OpenAI)
    result = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert type(result).__name__ == "ChatCompletion"
    assert type(result).__module__.startswith("openai.")
    assert result.choices[0].message.content == "Hi"
    raw = openai_client(ok).chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert result == raw
    assert client.api_key == "sk-test"
    assert client.chat.completions is client.chat.completions  # resources are cached


def test_nested_resources_options_and_raw_responses_keep_working() -> None:
    """with_options, with_raw_response and with_streaming_response behave as without wrap."""
    client = wrap(openai_client(ok, max_retries=1))
    faster = client.with_options(max_retries=4, timeout=5)
    assert isinstance(faster, openai.OpenAI)
    assert faster.max_retries == 4
    raw = client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
    assert raw.http_request.method == "POST"
    assert raw.parse().choices[0].message.content == "Hi"
    with client.chat.completions.with_streaming_response.create(
        model="m", messages=MESSAGES
    ) as response:
        assert json.loads(response.read())["id"] == "chatcmpl-1"


def test_streams_yield_the_same_chunks() -> None:
    """A wrapped stream yields the SDK's chunks, in order, and ends normally."""
    client = wrap(openai_client(ok))
    with client.chat.completions.create(model="m", messages=MESSAGES, stream=True) as stream:
        texts = [c.choices[0].delta.content for c in stream]
    assert texts == ["Hi", " there", None]


def truncated(request: Any) -> tuple[int, bytes, str]:
    """A completion (or stream) that stops at the token limit."""
    payload = json.loads(request.content)
    if payload.get("stream"):
        return 200, sse([chunk("Hi", None), chunk(None, "length")]), "text/event-stream"
    body = json.loads(json.dumps(COMPLETION))
    body["choices"][0]["finish_reason"] = "length"
    return 200, json.dumps(body).encode(), "application/json"


def test_stop_reasons_raise_with_the_result_attached() -> None:
    """finish_reason length raises OutputTruncatedError; the result rides along, and a
    stream's error says what reached the caller (and keeps no chunk)."""
    client = wrap(openai_client(truncated))
    with pytest.raises(OutputTruncatedError) as info:
        client.chat.completions.create(model="m", messages=MESSAGES)
    assert info.value.result.choices[0].message.content == "Hi"
    with pytest.raises(OutputTruncatedError) as streamed:
        for _ in client.chat.completions.create(model="m", messages=MESSAGES, stream=True):
            pass
    assert stream_of(streamed.value) == {
        "api": "chat",
        "chunks": 2,
        "phase": "done",
        "output_chars": 2,
        "terminal": True,
        "stop_reason": "length",
    }


def test_stream_helpers_raise_typed_errors_at_the_end() -> None:
    """chat.completions.stream(): the helper's events, then the typed stop-reason error."""
    client = wrap(openai_client(truncated))
    events: list[str] = []

    def consume() -> None:
        with client.chat.completions.stream(model="m", messages=MESSAGES) as stream:
            events.extend(event.type for event in stream)

    with pytest.raises(OutputTruncatedError):
        consume()
    assert "content.delta" in events
    with (
        client.chat.completions.stream(model="m", messages=MESSAGES) as helper,
        pytest.raises(OutputTruncatedError),
    ):
        helper.get_final_completion()


def test_check_can_be_turned_off_or_narrowed() -> None:
    """check=False returns results untouched; a set of codes raises only those."""
    off = wrap(openai_client(truncated), check=False)
    assert off.chat.completions.create(model="m", messages=MESSAGES).choices[0].finish_reason == (
        "length"
    )
    streamed = off.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    assert [c.choices[0].finish_reason for c in streamed] == [None, "length"]
    narrow = wrap(openai_client(truncated), check={"policy.content_filtered"})
    assert narrow.chat.completions.create(model="m", messages=MESSAGES) is not None
    with pytest.raises(OutputTruncatedError):
        wrap(openai_client(truncated), check={"output.truncated"}).chat.completions.create(
            model="m", messages=MESSAGES
        )


def test_async_client_success_and_stream() -> None:
    """The async client: awaited calls, async streams, typed errors at the end."""
    httpx = http_library("openai")

    def handler(request: Any) -> Any:
        status, content, media = truncated(request)
        return httpx.Response(status, content=content, headers={"content-type": media})

    async def main() -> list[Any]:
        client = wrap(
            openai.AsyncOpenAI(
                api_key="sk-test",
                http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
            )
        )
        assert isinstance(client, openai.AsyncOpenAI)
        received: list[Any] = []
        with pytest.raises(OutputTruncatedError):
            await client.chat.completions.create(model="m", messages=MESSAGES)

        async def consume() -> None:
            stream: Any = await client.chat.completions.create(
                model="m", messages=MESSAGES, stream=True
            )
            async for event in stream:
                received.append(event)

        with pytest.raises(OutputTruncatedError) as info:
            await consume()
        assert stream_of(info.value)["chunks"] == len(received)
        return received

    assert len(asyncio.run(main())) == 2


def test_bad_arguments_become_typed_but_stay_what_they_were() -> None:
    """A TypeError from the SDK is a harness internal error that is still a TypeError."""
    client = wrap(openai_client(ok))
    with pytest.raises(TypeError) as info:
        client.chat.completions.create(model="m")  # messages is missing
    assert isinstance(info.value, HarnessInternalError)


# -- normalized() ------------------------------------------------------------------------------


def test_normalized_as_a_context_manager() -> None:
    """Exceptions inside become typed drop-ins; harness errors and cancellation pass."""
    with pytest.raises(UpstreamOverloadedError) as info, normalized():
        raise _overloaded()
    assert isinstance(info.value.problem.__cause__, openai.InternalServerError)
    with pytest.raises(HarnessInternalError) as bug, normalized():
        raise KeyError("x")
    assert isinstance(bug.value, KeyError)
    original = UpstreamRateLimitedError("mine")
    with pytest.raises(UpstreamRateLimitedError) as mine, normalized():
        raise original
    assert mine.value is original
    with pytest.raises(asyncio.CancelledError), normalized():
        raise asyncio.CancelledError


def _overloaded() -> Exception:
    """The vendor exception of the overloaded cassette."""
    exc = run(load(shipped() / "openai" / "overloaded_503.yaml")).exception
    assert isinstance(exc, Exception)
    return exc


def test_normalized_as_a_decorator_sync_and_async() -> None:
    """@normalized and @normalized(provider=...) on plain and async functions."""

    @normalized
    def sync() -> None:
        raise _overloaded()

    @normalized(provider="openai")
    async def later() -> None:
        raise TimeoutError("slow")

    with pytest.raises(UpstreamOverloadedError):
        sync()
    with pytest.raises(TimeoutError) as info:
        asyncio.run(later())
    assert isinstance(info.value, HarnessError)
    assert info.value.problem.code == "upstream.unavailable"

    async def block() -> None:
        async with normalized():
            raise _overloaded()

    with pytest.raises(openai.InternalServerError):
        asyncio.run(block())


def rate_limited(request: Any) -> tuple[int, bytes, str]:
    """OpenAI's recorded 429 (the ``rate_limit_tpm_429`` cassette's body)."""
    found = cassette("openai/rate_limit_tpm_429")
    return found.status, found.content, "application/json"


class Box:
    """A plain object to wrap."""

    def __init__(self) -> None:
        self.items = [1, [2]]

    def size(self) -> int:
        return len(self.items)


def test_the_proxy_is_the_client_for_attributes_dir_repr_and_copies() -> None:
    """Setting and deleting attributes reach the client; dir and repr are the client's; a
    copy of a wrapped client is wrapped too (an SDK client holds locks: no deep copy)."""
    import copy

    plain = openai_client(rate_limited, max_retries=0)
    client = wrap(plain)
    assert repr(client) == repr(plain)
    assert client._client is plain._client  # private members are the client's own, unwrapped
    assert dir(client) == dir(plain)
    client.custom_tag = "billing"
    assert plain.custom_tag == "billing"
    del client.custom_tag
    assert not hasattr(plain, "custom_tag")
    clone = copy.copy(client)
    assert isinstance(clone, openai.OpenAI)
    with pytest.raises(UpstreamRateLimitedError) as caught:
        clone.chat.completions.create(model="m", messages=MESSAGES)
    assert is_instance(caught.value, openai.RateLimitError)
    completions = copy.copy(client.chat.completions)  # a copy of a resource: wrapped too
    with pytest.raises(UpstreamRateLimitedError) as again:
        completions.create(model="m", messages=MESSAGES)
    assert again.value.max_attempts == 1  # still the client's max_retries=0
    box = wrap(Box())
    deep = copy.deepcopy(box)
    assert isinstance(deep, Box)
    assert deep.items == box.items
    assert deep.items is not box.items  # a deep copy copies what is wrapped


def test_a_wrapped_client_as_a_context_manager_stays_wrapped() -> None:
    """``with wrap(client) as c`` gives the wrapped client back, sync and async."""
    wrapped = wrap(openai_client(rate_limited, max_retries=0))
    with wrapped as client:
        assert client is wrapped
        with pytest.raises(UpstreamRateLimitedError):
            client.chat.completions.create(model="m", messages=MESSAGES)

    httpx = http_library("openai")

    def handler(request: Any) -> Any:
        status, content, media = rate_limited(request)
        return httpx.Response(status, content=content, headers={"content-type": media})

    async def main() -> None:
        plain = openai.AsyncOpenAI(
            api_key="sk-test",
            max_retries=0,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        )
        async with wrap(plain) as client:
            with pytest.raises(UpstreamRateLimitedError):
                await client.chat.completions.create(model="m", messages=MESSAGES)

    asyncio.run(main())


def test_a_wrapped_callable_raises_typed_errors_and_checks_its_result() -> None:
    """Any callable can be wrapped: its failures are typed, its results come back as they are."""
    answer = {"choices": [{"finish_reason": "stop", "message": {"content": "Hi"}}]}

    def call(kind: str) -> Any:
        if kind == "fail":
            raise TimeoutError("the gateway took too long")
        return answer

    wrapped = wrap(call)
    with pytest.raises(HarnessError) as caught:
        wrapped("fail")
    assert caught.value.problem.code == "upstream.unavailable"
    assert isinstance(caught.value.problem.__cause__, TimeoutError)
    assert wrapped("ok") is answer


KEY = "sk-proj-" + "Zq7" * 16
"""A string shaped like an OpenAI key (constructed), as a user may pass one to wrap()."""


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (None, "given None"),
        (KEY, "given a str"),
        (KEY.encode(), "given a bytes"),
        (openai.OpenAI, "given the class openai.OpenAI; call it first"),
        (42, "given an int"),
        (0.5, "given a float"),
        (True, "given a bool"),
        (json, "given the module json"),
    ],
    ids=["None", "key", "bytes", "class", "int", "float", "bool", "module"],
)
def test_wrap_refuses_at_once_what_it_cannot_watch(given: Any, said: str) -> None:
    """``wrap(None)``, a key, the client's class (the parentheses forgotten), a number or a
    module: a ``TypeError`` at the call, naming what ``wrap()`` accepts and what it was
    given, never the value itself (a string may be a key). They were returned as they were,
    and the first call failed far away (``'cached_property' object has no attribute
    'completions'`` for the class)."""
    with pytest.raises(TypeError) as caught:
        wrap(given)
    message = str(caught.value)
    assert message.startswith("wrap() takes a client object")
    assert "openai.OpenAI(...)" in message  # what it accepts, by example
    assert said in message
    assert KEY not in message
    assert "Zq7Zq7" not in message


def test_wrap_still_accepts_every_object_and_callable() -> None:
    """What it accepted stays accepted: SDK and HTTP clients, a function, any object of
    yours (a box of items, an iterable feed), a wrapped client again."""
    client = openai.OpenAI(api_key="sk-offline", max_retries=0)
    assert isinstance(wrap(client), openai.OpenAI)
    assert isinstance(wrap(wrap(client)), openai.OpenAI)
    httpx = http_library("openai")
    assert isinstance(wrap(httpx.Client()), httpx.Client)
    assert wrap(len)([1, 2]) == 2
    assert wrap(Box()).size() == 2
    assert list(wrap(iter([1, 2]))) == [1, 2]


VENDOR_CLIENTS = [
    ("openai", "AzureOpenAI", {"api_version": "2024-10-21", "azure_endpoint": "https://x.example"}),
    ("anthropic", "AsyncAnthropic", {}),
    ("anthropic", "AnthropicBedrock", {"aws_region": "us-east-1", "aws_access_key": "a"}),
    ("anthropic", "AnthropicVertex", {"region": "us-east5", "project_id": "p"}),
    ("google.genai", "Client", {}),
    ("cohere", "ClientV2", {}),
]
"""Client classes the vendor suites' plugin (``.ci/wrap_clients.py``) and the provider tests
wrap, built offline with dummy settings."""


@pytest.mark.parametrize(("module", "name", "options"), VENDOR_CLIENTS)
def test_wrap_still_accepts_the_vendor_clients(
    module: str, name: str, options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Azure, Bedrock and Vertex clients, google-genai's, cohere's: wrapped as before, the
    proxy an instance of the client's class (boto3's and the native SDKs' are in
    tests/providers)."""
    for variable in ("ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "CO_API_KEY", "AZURE_OPENAI_API_KEY"):
        monkeypatch.setenv(variable, "offline")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "offline")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    cls = getattr(pytest.importorskip(module), name, None)
    if cls is None:
        pytest.skip(f"{module} has no {name} in this version")
    extra = {"access_token": "offline"} if name == "AnthropicVertex" else {}
    client = cls(**options, **extra)
    assert isinstance(wrap(client), cls)


def async_openai_client(body: Callable[[Any], tuple[int, bytes, str]]) -> Any:
    """A real AsyncOpenAI client whose transport answers in memory."""
    httpx = http_library("openai")

    def handler(request: Any) -> Any:
        status, content, media = body(request)
        return httpx.Response(status, content=content, headers={"content-type": media})

    return openai.AsyncOpenAI(
        api_key="sk-test",
        max_retries=0,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )


def test_a_stream_helper_that_fails_on_entry_raises_typed_errors() -> None:
    """``with client.chat.completions.stream(...)`` makes the request on entry: a 429 there
    is the typed drop-in, sync and async; an async helper that enters gives a wrapped stream."""
    client = wrap(openai_client(rate_limited, max_retries=0))
    with (
        pytest.raises(UpstreamRateLimitedError) as info,
        client.chat.completions.stream(model="m", messages=MESSAGES),
    ):
        pass
    assert is_instance(info.value, openai.RateLimitError)

    async def enter(body: Callable[[Any], tuple[int, bytes, str]]) -> list[str]:
        events: list[str] = []
        helper = wrap(async_openai_client(body)).chat.completions.stream
        async with helper(model="m", messages=MESSAGES) as stream:
            events.extend([event.type async for event in stream])
        return events

    with pytest.raises(UpstreamRateLimitedError):
        asyncio.run(enter(rate_limited))
    with pytest.raises(OutputTruncatedError):
        asyncio.run(enter(truncated))
    assert "content.delta" in asyncio.run(enter(ok))


def test_an_async_stream_that_ends_well_ends_as_the_sdks() -> None:
    """An async stream with a good stop reason yields every chunk and stops, no error."""

    async def main() -> list[Any]:
        client = wrap(async_openai_client(ok))
        stream: Any = await client.chat.completions.create(
            model="m", messages=MESSAGES, stream=True
        )
        async with stream:
            texts = [c.choices[0].delta.content async for c in stream]
        with pytest.raises(StopAsyncIteration):  # spent, as the SDK's stream is
            await stream.__anext__()
        return texts

    assert asyncio.run(main()) == ["Hi", " there", None]


def test_a_stop_reason_is_raised_once() -> None:
    """After the typed error at the end of a stream, the stream is spent (StopIteration, as
    the SDK's)."""
    stream = wrap(openai_client(truncated)).chat.completions.create(
        model="m", messages=MESSAGES, stream=True
    )
    with pytest.raises(OutputTruncatedError):
        list(stream)
    with pytest.raises(StopIteration):
        next(stream)


@pytest.mark.parametrize(
    "body",
    [b"", b"data: [DONE]\n\n", b": keep-alive\n\n"],
    ids=["no bytes", "only [DONE]", "only a comment"],
)
def test_a_generating_stream_without_a_chunk_is_an_invalid_response(body: bytes) -> None:
    """A generating stream that ends before its first chunk carries neither an answer nor an
    error: the plain SDK yields nothing and the caller gets an empty answer. Wrapped, its end
    raises upstream.invalid_response (retryable), with no chunk; unchecked, it ends as the
    SDK's does."""

    def empty(request: Any) -> tuple[int, bytes, str]:
        return 200, body, "text/event-stream"

    client = wrap(openai_client(empty))
    with pytest.raises(UpstreamInvalidResponseError) as info:
        list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    err = info.value
    assert err.retryable is True
    summary = {"api": "stream", "chunks": 0, "phase": "before_output", "output_chars": 0}
    assert err.upstream == {
        "provider": "openai",
        "in_stream": True,
        "events_skipped": 0,
        "stream": {**summary, "terminal": False},
    }
    assert "before its first chunk" in str(err.detail)

    for check in (False, {"output.truncated"}):  # unchecked, or checked for other codes only
        quiet = wrap(openai_client(empty), check=check)
        assert list(quiet.chat.completions.create(model="m", messages=MESSAGES, stream=True)) == []


def test_an_async_stream_of_skipped_events_is_an_invalid_response() -> None:
    """Anthropic's async stream of events it skips (bare ``data:`` lines of no stop reason,
    as a relay may send): the SDK yields nothing; wrapped, the end names how many events
    came."""
    import anthropic

    body = b'data: {"type": "ping"}\n\ndata: {"type": "ping"}\n\n'
    http = http_library("anthropic")

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    raw = anthropic.AsyncAnthropic(
        api_key="sk-ant-test", http_client=http.AsyncClient(transport=http.MockTransport(handler))
    )

    async def consume(client: Any) -> list[Any]:
        stream = await client.messages.create(
            model="m", max_tokens=8, messages=MESSAGES, stream=True
        )
        return [event async for event in stream]

    assert asyncio.run(consume(raw)) == []
    with pytest.raises(UpstreamInvalidResponseError) as info:
        asyncio.run(consume(wrap(raw)))
    assert info.value.upstream["events_skipped"] == 2
    assert "after 2 events the SDK did not yield" in str(info.value.detail)


class Feed:
    """A caller's own source of chunks, iterable sync and async, that loses its peer after two."""

    def __iter__(self) -> Any:
        yield 1
        yield 2
        raise ConnectionResetError("peer reset the connection")

    def __aiter__(self) -> Any:
        return self.events()

    async def events(self) -> Any:
        yield 1
        yield 2
        raise ConnectionResetError("peer reset the connection")


def test_iterating_a_wrapped_object_types_its_errors_and_keeps_no_chunks() -> None:
    """``for x in wrap(obj)`` and ``async for``: a failure mid-way is typed; the object is no
    generating method's stream: its chunks are counted (each one output), never kept."""
    with pytest.raises(UpstreamUnavailableError) as info:
        list(wrap(Feed()))
    assert stream_of(info.value) == {
        "api": "stream",
        "chunks": 2,
        "phase": "text",
        "output_chars": 2,
        "terminal": False,
    }
    assert isinstance(info.value.problem.__cause__, ConnectionResetError)

    async def drain() -> list[Any]:
        return [x async for x in wrap(Feed())]

    with pytest.raises(UpstreamUnavailableError) as later:
        asyncio.run(drain())
    assert stream_of(later.value)["chunks"] == 2


class Unconfigured:
    """A client whose ``max_retries`` cannot be read, and whose call fails."""

    @property
    def max_retries(self) -> int:
        raise RuntimeError("no retry policy configured")

    def fetch(self) -> None:
        raise ConnectionResetError("peer reset the connection")


def test_a_client_whose_max_retries_cannot_be_read_gives_no_max_attempts() -> None:
    with pytest.raises(UpstreamUnavailableError) as info:
        wrap(Unconfigured()).fetch()
    assert info.value.max_attempts is None


def test_a_wrapped_call_from_any_line_of_any_file_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call on the first line of a file (no room for the caller's line), and calls from
    more distinct lines than the per-line cache holds, run and return the SDK's result."""
    client = wrap(openai_client(ok))
    scope: dict[str, Any] = {"client": client, "MESSAGES": MESSAGES}
    first = "result = client.chat.completions.create(model='m', messages=MESSAGES)"
    exec(compile(first, "first_line.py", "exec"), scope)
    assert scope["result"].choices[0].message.content == "Hi"
    monkeypatch.setattr(_caller_line, "_AS_CALLER", {})  # leave the shared cache as it was
    box = wrap(Box())
    many = "\n".join(["found = []"] + ["found.append(box.size())"] * 4100)
    namespace: dict[str, Any] = {"box": box}
    exec(compile(many, "many_lines.py", "exec"), namespace)
    assert namespace["found"] == [2] * 4100
    assert len(_caller_line._AS_CALLER) == 4096


def test_normalized_lets_harness_errors_through_every_kind_of_function() -> None:
    """A harness error raised inside is re-raised as it is, by plain and async functions and
    by generators of both kinds; an async generator that ends ends normally."""
    original = UpstreamRateLimitedError("mine")

    @normalized
    def plain() -> None:
        raise original

    @normalized
    def produce() -> Any:
        yield 1
        raise original

    @normalized
    async def later() -> None:
        raise original

    @normalized
    async def events(fail: bool) -> Any:
        yield 1
        if fail:
            raise original

    async def drain(fail: bool) -> list[Any]:
        return [x async for x in events(fail)]

    for call in (plain, lambda: list(produce()), lambda: asyncio.run(later())):
        with pytest.raises(UpstreamRateLimitedError) as info:
            call()
        assert info.value is original
    with pytest.raises(UpstreamRateLimitedError) as streamed:
        asyncio.run(drain(True))
    assert streamed.value is original
    assert asyncio.run(drain(False)) == [1]


def test_normalized_on_a_method_of_an_odd_class_never_raises_for_it() -> None:
    """A class named like an SDK resource but of no module is no SDK: its text is its own."""

    def create(self: Any) -> str:
        return "<b>ok</b>"

    odd: Any = type("Completions", (), {"__module__": None, "create": create})
    assert normalized(odd().create)() == "<b>ok</b>"


def test_a_wrapped_function_over_a_wrapped_client_raises_the_clients_error() -> None:
    """Wrapping code that itself calls a wrapped client re-raises that typed error as it is."""
    client = wrap(openai_client(rate_limited, max_retries=0))
    caught: list[BaseException] = []

    def ask() -> Any:
        try:
            return client.chat.completions.create(model="m", messages=MESSAGES)
        except UpstreamRateLimitedError as exc:
            caught.append(exc)
            raise

    with pytest.raises(UpstreamRateLimitedError) as info:
        wrap(ask)()
    assert info.value is caught[0]


def test_normalized_on_async_sdk_methods_types_what_awaiting_raises() -> None:
    """The async client's methods are plain functions returning a coroutine: under
    ``normalized`` the failure of awaiting one is the typed drop-in too."""

    async def main() -> None:
        sdk = async_openai_client(rate_limited)
        create = normalized(sdk.chat.completions.create)
        with pytest.raises(UpstreamRateLimitedError) as info:
            await create(model="m", messages=MESSAGES)
        assert is_instance(info.value, openai.RateLimitError)
        good = normalized(async_openai_client(ok).chat.completions.create)
        result = await good(model="m", messages=MESSAGES)
        assert result.choices[0].message.content == "Hi"

    asyncio.run(main())


def test_normalized_async_function_called_with_bad_arguments_is_typed() -> None:
    """An ``async def`` under ``@normalized`` called wrongly raises the typed TypeError."""

    @normalized
    async def ask(prompt: str) -> str:
        return prompt

    with pytest.raises(TypeError) as info:
        asyncio.run(ask())  # type: ignore[call-arg]
    assert isinstance(info.value, HarnessInternalError)
    assert asyncio.run(ask("hi")) == "hi"


# -- @normalized generators forward send, throw and close (issue 22, finding 13) ------------


def test_normalized_async_generator_under_asynccontextmanager_runs_its_rollback() -> None:
    """The exception of the ``async with`` body is thrown into the inner generator, whose
    ``except`` (a rollback) runs; what it re-raises comes out typed, with it as the cause."""
    import contextlib

    log: list[str] = []

    @contextlib.asynccontextmanager
    @normalized
    async def transaction() -> Any:
        log.append("begin")
        try:
            yield "connection"
        except ConnectionResetError:
            log.append("rollback")
            raise
        else:
            log.append("commit")
        finally:
            log.append("finally")

    async def failing() -> None:
        async with transaction() as connection:
            assert connection == "connection"
            raise ConnectionResetError("peer reset the connection")

    async def passing() -> None:
        async with transaction():
            pass

    with pytest.raises(UpstreamUnavailableError) as info:
        asyncio.run(failing())
    assert isinstance(info.value.problem.__cause__, ConnectionResetError)
    assert log == ["begin", "rollback", "finally"]
    log.clear()
    asyncio.run(passing())
    assert log == ["begin", "commit", "finally"]


def test_normalized_async_generator_forwards_asend_athrow_and_aclose() -> None:
    """``asend`` values reach the inner generator; an exception it handles lets it go on;
    ``aclose`` runs its ``finally``; cancellation thrown in passes through untouched."""
    log: list[Any] = []

    @normalized
    async def echo() -> Any:
        received = None
        try:
            while True:
                try:
                    received = yield received
                    log.append(received)
                except KeyError as handled:
                    received = f"handled {handled.args[0]}"
        finally:
            log.append("finally")

    async def main() -> None:
        gen = echo()
        assert await gen.asend(None) is None
        assert await gen.asend(1) == 1
        assert await gen.asend("two") == "two"
        assert await gen.athrow(KeyError("k")) == "handled k"
        await gen.aclose()
        assert log == [1, "two", "finally"]
        other = echo()
        await other.asend(None)
        with pytest.raises(asyncio.CancelledError):
            await other.athrow(asyncio.CancelledError())
        assert log[-1] == "finally"

    asyncio.run(main())


def test_normalized_generator_forwards_send_throw_and_close() -> None:
    """The sync twin: ``send`` values reach the inner generator, ``throw`` reaches its
    ``except`` (under ``@contextmanager`` too), ``close`` runs its ``finally``."""
    import contextlib

    log: list[Any] = []

    @normalized
    def echo() -> Any:
        received = None
        try:
            while True:
                try:
                    received = yield received
                    log.append(received)
                except KeyError as handled:
                    received = f"handled {handled.args[0]}"
        finally:
            log.append("finally")

    gen = echo()
    assert gen.send(None) is None
    assert gen.send(1) == 1
    assert gen.throw(KeyError("k")) == "handled k"
    gen.close()
    assert log == [1, "finally"]

    @contextlib.contextmanager
    @normalized
    def transaction() -> Any:
        try:
            yield
        except ConnectionResetError:
            log.append("rollback")
            raise

    with pytest.raises(UpstreamUnavailableError) as info, transaction():
        raise ConnectionResetError("peer reset the connection")
    assert isinstance(info.value.problem.__cause__, ConnectionResetError)
    assert log[-1] == "rollback"


# -- the per-line copies keep no caller's namespace (issue 22, finding 5) -------------------


class Marker:
    """An object each exec'd step keeps in its own namespace, to see whether it lives on."""


def test_calls_from_fresh_namespaces_keep_none_of_them_alive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A code agent runs 50 steps, each in a fresh namespace, each calling a wrapped client's
    deprecated method (openai's ``beta.assistants.list``, which really warns): each warning
    names its step's file and line, and once the steps are dropped every namespace is freed.
    The list body is constructed (an empty page)."""
    import gc
    import warnings
    import weakref

    monkeypatch.setattr(_caller_line, "_AS_CALLER", {})  # a cache with room, as in a fresh process
    body = json.dumps({"object": "list", "data": [], "has_more": False}).encode()
    client = wrap(openai_client(lambda request: (200, body, "application/json")))
    alive: list[weakref.ref[Marker]] = []
    source = "marker = Marker()\npage = client.beta.assistants.list()\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in range(50):
            namespace: dict[str, Any] = {"client": client, "Marker": Marker}
            exec(compile(source, f"step_{step}.py", "exec"), namespace)
            assert namespace["page"].data == []
            alive.append(weakref.ref(namespace["marker"]))
        del namespace
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    with warnings.catch_warnings(record=True) as plain:  # older openai lines do not warn
        warnings.simplefilter("always")
        openai_client(lambda request: (200, body, "application/json")).beta.assistants.list()
    warns = any(issubclass(w.category, DeprecationWarning) for w in plain)
    assert [(w.filename, w.lineno) for w in deprecations] == [
        (f"step_{step}.py", 2) for step in range(50 if warns else 0)
    ]
    gc.collect()
    assert sum(ref() is not None for ref in alive) == 0
    if warns:
        assert len(_caller_line._AS_CALLER) == 50  # the copies stay, holding no namespace


EMPTY_LIST = json.dumps({"object": "list", "data": [], "has_more": False}).encode()


def empty_list(request: Any) -> tuple[int, bytes, str]:
    """An empty page of any list."""
    return 200, EMPTY_LIST, "application/json"


def test_the_caller_line_copies_keep_no_caller_code_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy of a calling line is kept by file name and line, never by the caller's code
    object: a step's code, whose constants hold the key the step was given, is freed with the
    step. Its reference count after a wrapped call is what an unwrapped call leaves."""
    import gc
    import sys

    source = "key = 'sk-live-0123456789abcdef01234567'\npage = client.models.list()\n"
    code = compile(source, "agent_step.py", "exec")
    exec(code, {"client": openai_client(empty_list)})  # what running the step leaves (tracers)
    gc.collect()
    before = sys.getrefcount(code)
    monkeypatch.setattr(_caller_line, "_AS_CALLER", {})
    namespace: dict[str, Any] = {"client": wrap(openai_client(empty_list))}
    exec(code, namespace)
    assert namespace["page"].data == []
    del namespace
    gc.collect()
    assert sys.getrefcount(code) == before
    assert list(_caller_line._AS_CALLER) == [("agent_step.py", 2)]  # the copy is kept


def test_a_step_run_again_in_a_fresh_namespace_warns_again_as_without_wrap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A code agent runs the same step (same source, same file name) three times, each in a
    fresh namespace, calling a deprecated method (openai's ``beta.assistants.list``): each run
    warns, as without ``wrap()``, under the filters' "default" action (once per line per
    module registry). The copy made for the first run's namespace records warnings in that
    namespace's registry, so it does not serve the next run."""
    import warnings

    monkeypatch.setattr(_caller_line, "_AS_CALLER", {})
    source = "import json\npage = client.beta.assistants.list()\n"

    def runs(client: Any) -> list[tuple[str, int]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            for _ in range(3):
                namespace = {"client": client, "__name__": "agent_step"}
                exec(compile(source, "agent_step.py", "exec"), namespace)
        return [
            (w.filename, w.lineno) for w in caught if issubclass(w.category, DeprecationWarning)
        ]

    plain = runs(openai_client(empty_list))
    assert plain in ([], [("agent_step.py", 2)] * 3)  # older openai lines do not warn
    assert runs(wrap(openai_client(empty_list))) == plain


# -- drop-ins as the vendor raised them, results as the SDK returned them (issue 24) -----------


def transport_client(handler: Callable[[Any], Any], **kwargs: Any) -> Any:
    """A real OpenAI client (no retries) whose transport is ``handler``."""
    httpx = http_library("openai")
    http_client = httpx.Client(transport=httpx.MockTransport(handler), **kwargs)
    return openai.OpenAI(api_key="sk-test", http_client=http_client, max_retries=0)


def _frames(exc: BaseException) -> list[str]:
    names = []
    tb = exc.__traceback__
    while tb is not None:
        names.append(f"{tb.tb_frame.f_code.co_filename}:{tb.tb_frame.f_code.co_name}")
        tb = tb.tb_next
    return names


def test_a_drop_in_has_the_vendor_exceptions_cause_context_and_frames() -> None:
    """Defect 1: ``__cause__`` is the transport's ConnectError, as on the vendor exception;
    the vendor exception is ``err.problem.__cause__``; the SDK's frames are in the traceback."""
    httpx = http_library("openai")

    def refuse(request: Any) -> Any:
        raise httpx.ConnectError("connection refused", request=request)

    def call(client: Any) -> Callable[[], Any]:
        return lambda: client.chat.completions.create(model="m", messages=MESSAGES)

    plain = raised(call(transport_client(refuse)))
    err = raised(call(wrap(transport_client(refuse))))
    assert isinstance(plain, openai.APIConnectionError)
    assert is_instance(err, openai.APIConnectionError)
    assert isinstance(err, HarnessError)
    assert type(err.__cause__) is type(plain.__cause__) is httpx.ConnectError
    assert err.__suppress_context__ == plain.__suppress_context__
    assert type(err.__context__) is type(plain.__context__)
    assert type(err.problem.__cause__) is openai.APIConnectionError
    sdk = [f for f in _frames(plain) if "/openai/" in f]
    assert sdk
    assert [f for f in _frames(err) if "/openai/" in f] == sdk


def test_a_response_validation_drop_in_keeps_pydantics_error_as_cause() -> None:
    """Defect 1: under APIResponseValidationError the cause is pydantic's ValidationError."""
    import pydantic

    def bad(request: Any) -> tuple[int, bytes, str]:
        return 200, json.dumps({"id": 1, "choices": "none"}).encode(), "application/json"

    def call(client: Any) -> Callable[[], Any]:
        return lambda: client.chat.completions.create(model="m", messages=MESSAGES)

    plain = raised(call(openai_client(bad, _strict_response_validation=True)))
    err = raised(call(wrap(openai_client(bad, _strict_response_validation=True))))
    assert isinstance(plain, openai.APIResponseValidationError)
    assert isinstance(plain.__cause__, pydantic.ValidationError)
    assert is_instance(err, openai.APIResponseValidationError)
    assert isinstance(err, HarnessError)
    assert type(err.__cause__) is type(plain.__cause__)
    assert err.__suppress_context__ == plain.__suppress_context__
    assert type(err.problem.__cause__) is openai.APIResponseValidationError


def test_an_applications_own_exception_passes_through_as_the_same_object() -> None:
    """Defect 2: an exception of the application's (an event hook's, a custom transport's)
    comes out of a wrapped call as the very object raised."""
    app = RuntimeError("the hook refused")

    def hook(request: Any) -> None:
        raise app

    plain = transport_client(ok, event_hooks={"request": [hook]})
    if raised(lambda: plain.chat.completions.create(model="m", messages=MESSAGES)) is not app:
        pytest.skip("this openai version raises its own APIConnectionError from the hook's error")
    hooked = wrap(transport_client(ok, event_hooks={"request": [hook]}))
    assert raised(lambda: hooked.chat.completions.create(model="m", messages=MESSAGES)) is app

    broken = OSError("the disk is full")

    def transport(request: Any) -> Any:
        raise broken

    client = wrap(transport_client(transport))
    assert raised(lambda: client.chat.completions.create(model="m", messages=MESSAGES)) is broken


def test_results_come_back_as_the_sdk_returned_them() -> None:
    """Defect 3: a response cast to the HTTP library's class, and a raw response, are the
    SDK's own objects, not proxies."""
    httpx = http_library("openai")
    plain = openai_client(ok)
    client = wrap(openai_client(ok))
    response = client.post("/chat/completions", body={}, cast_to=httpx.Response)
    assert type(response) is httpx.Response
    raw = client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
    assert type(raw) is type(
        plain.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
    )
    assert raw.parse().choices[0].message.content == "Hi"


def test_a_raw_response_of_a_generating_call_is_still_checked() -> None:
    """The raw response is the SDK's; a failure stop reason in what it parses still raises."""
    client = wrap(openai_client(truncated))
    with pytest.raises(OutputTruncatedError):
        client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
    raw = wrap(openai_client(truncated), check=False).chat.completions.with_raw_response.create(
        model="m", messages=MESSAGES
    )
    assert raw.parse().choices[0].finish_reason == "length"


def test_init_signature_vars_and_dict_are_the_clients() -> None:
    """Defects 4 and 5: ``__init__``, its signature, ``vars()`` and ``__dict__`` are the
    client's own."""
    import inspect

    import anthropic

    client = openai_client(ok)
    wrapped = wrap(client)
    assert inspect.signature(wrapped.__init__) == inspect.signature(client.__init__)
    assert vars(wrapped) is vars(client)
    assert wrapped.__dict__ is client.__dict__
    claude = anthropic.Anthropic(api_key="k")
    w = wrap(claude)
    w.copy  # noqa: B018 - reading a method must leave no trace in vars()
    w.messages  # noqa: B018
    assert vars(w) is vars(claude)
    assert "copy" not in vars(w)


def test_attributes_that_cannot_reach_the_api_are_the_clients_own_objects() -> None:
    """An attribute is proxied only when it can call the API (a resource, a raw-response
    view); a credentials provider, options and the like come back as the same objects, so
    code comparing them with ``is`` (anthropic's own credential tests) sees the client's."""
    import anthropic

    credentials = pytest.importorskip("anthropic.lib.credentials", reason="anthropic < 2.16")
    token = credentials.StaticToken("test-token")
    claude = anthropic.Anthropic(credentials=token)
    w = wrap(claude)
    assert w.credentials is claude.credentials
    assert w.credentials is not None
    assert isinstance(w.messages, _wrap._Proxy)
    assert isinstance(w.with_raw_response, _wrap._Proxy)
    assert isinstance(w.messages.with_raw_response, _wrap._Proxy)
    assert not isinstance(w.base_url, _wrap._Proxy)
    # google-genai: its modules hold ``_api_client``, and ``chats`` reaches it through a member
    genai = pytest.importorskip("google.genai")
    g = wrap(genai.Client(api_key="k"))
    assert isinstance(g.models, _wrap._Proxy)
    assert isinstance(g.chats, _wrap._Proxy)
    assert isinstance(g.aio.models, _wrap._Proxy)


class MyStream(openai.Stream[Any]):
    """A stream class of the application's, on the SDK's Stream."""


def test_a_stream_subclass_keeps_next_type_and_iteration() -> None:
    """Defect 6: a stream of a subclass of the SDK's Stream is that class, and next() works."""
    client = wrap(openai_client(ok))
    stream = client.post(
        "/chat/completions", body={"stream": True}, cast_to=object, stream=True, stream_cls=MyStream
    )
    assert type(stream) is MyStream
    first = next(stream)
    assert first["choices"][0]["delta"]["content"] == "Hi"
    assert [c["choices"][0]["delta"].get("content") for c in stream] == [" there", None]
    sdk = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    assert type(sdk) is openai.Stream
    assert next(sdk).choices[0].delta.content == "Hi"


def test_a_stream_still_raises_its_stop_reason_at_the_end() -> None:
    """The SDK's own stream object, watched: a truncated stream raises at its end."""

    def cut(request: Any) -> tuple[int, bytes, str]:
        return 200, sse([chunk("Hi", None), chunk(None, "length")]), "text/event-stream"

    client = wrap(openai_client(cut))
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    assert type(stream) is openai.Stream
    with pytest.raises(OutputTruncatedError) as info:
        list(stream)
    assert stream_of(info.value)["chunks"] == 2


def tool_calling(request: Any) -> tuple[int, bytes, str]:
    """A chat completion calling the tool ``lookup``."""
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    body = dict(
        COMPLETION, choices=[{"index": 0, "message": message, "finish_reason": "tool_calls"}]
    )
    return 200, json.dumps(body).encode(), "application/json"


TOOL: dict[str, Any] = {"type": "function", "function": {"name": "lookup", "parameters": {}}}


def test_the_tool_check_never_consumes_the_callers_arguments() -> None:
    """Defect 7: tools given as a one-shot iterator are the SDK's to read, never a false
    unknown-tool error; a Responses namespace tool offers its functions."""
    from normalize_errors import check

    client = wrap(openai_client(tool_calling))
    result = client.chat.completions.create(model="m", messages=MESSAGES, tools=iter([TOOL]))
    assert result.choices[0].message.tool_calls[0].function.name == "lookup"
    namespace = {
        "type": "namespace",
        "name": "kb",
        "tools": [{"type": "function", "name": "lookup"}],
    }
    response = {
        "object": "response",
        "output": [{"type": "function_call", "name": "lookup", "arguments": "{}", "call_id": "c"}],
        "status": "completed",
    }
    assert check(response, provider="openai", tools=[namespace]) is response


def test_several_choices_fail_only_when_every_choice_fails() -> None:
    """Defect 8: with n=2, one empty choice beside a usable one is an answer."""
    from normalize_errors import EmptyOutputError

    def two(request: Any, second: str) -> tuple[int, bytes, str]:
        choices = [
            {"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"},
            {
                "index": 1,
                "message": {"role": "assistant", "content": second},
                "finish_reason": "stop",
            },
        ]
        return 200, json.dumps(dict(COMPLETION, choices=choices)).encode(), "application/json"

    client = wrap(openai_client(lambda r: two(r, "Hi")))
    assert (
        client.chat.completions.create(model="m", messages=MESSAGES, n=2).choices[1].message.content
    )
    empty = wrap(openai_client(lambda r: two(r, "")))
    with pytest.raises(EmptyOutputError):
        empty.chat.completions.create(model="m", messages=MESSAGES, n=2)


def test_an_async_raw_response_is_the_sdks_and_still_checked() -> None:
    """anthropic's async raw response (its ``parse()`` a coroutine): the SDK's object,
    parsed and checked at the call; a usable one comes back as the SDK's type."""
    import anthropic

    httpx = http_library("anthropic")

    def answer(stop: str) -> Any:
        message = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [{"type": "text", "text": "Hi"}],
            "stop_reason": stop,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return httpx.MockTransport(lambda request: httpx.Response(200, json=message))

    def client(stop: str) -> Any:
        http_client = httpx.AsyncClient(transport=answer(stop))
        return anthropic.AsyncAnthropic(api_key="k", http_client=http_client, max_retries=0)

    ask: dict[str, Any] = {"model": "m", "max_tokens": 5, "messages": MESSAGES}

    async def main() -> None:
        with pytest.raises(OutputTruncatedError):
            await wrap(client("max_tokens")).messages.with_raw_response.create(**ask)
        plain = await client("end_turn").messages.with_raw_response.create(**ask)
        raw = await wrap(client("end_turn")).messages.with_raw_response.create(**ask)
        assert type(raw) is type(plain)
        parsed = raw.parse()  # a coroutine on anthropic >= 0.50, a Message before
        if inspect.isawaitable(parsed):
            parsed = await parsed
        assert parsed.content[0].text == "Hi"

    asyncio.run(main())


def test_a_drop_in_with_the_transports_error_as_cause_pickles_without_the_key() -> None:
    """The vendor's own cause (an ``httpx2.ConnectError`` holding the request and its
    ``Authorization`` header) pickles redacted, like the vendor exception behind it."""
    from .support import PLANTED_KEY

    httpx = http_library("openai")

    def refuse(request: Any) -> Any:
        raise httpx.ConnectError("connection refused", request=request)

    http_client = httpx.Client(transport=httpx.MockTransport(refuse))
    client = wrap(openai.OpenAI(api_key=PLANTED_KEY, max_retries=0, http_client=http_client))
    err = raised(lambda: client.chat.completions.create(model="m", messages=MESSAGES))
    assert isinstance(err, HarnessError)
    data = pickle.dumps(err)
    assert PLANTED_KEY.encode() not in data
    assert PLANTED_KEY[8:24].encode() not in data
    again = pickle.loads(data)
    assert type(again.__cause__) is httpx.ConnectError
    assert type(again.problem.__cause__) is openai.APIConnectionError


def test_a_stream_watched_twice_is_watched_once() -> None:
    """The same SDK stream handed to the watcher again (read twice) keeps one watcher: the
    end-of-stream check raises once, having counted each chunk once."""

    def cut(request: Any) -> tuple[int, bytes, str]:
        return 200, sse([chunk("Hi", None), chunk(None, "length")]), "text/event-stream"

    client = wrap(openai_client(cut))
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    options = _wrap._Options(None, True, stream, generating=True)
    watcher = stream._iterator
    assert _wrap_streams._watch_in_place(stream, options, None, None)
    assert stream._iterator is watcher  # not a second watcher around the first
    with pytest.raises(OutputTruncatedError) as info:
        list(stream)
    assert stream_of(info.value)["chunks"] == 2


def test_an_sdk_exception_no_drop_in_can_be_made_of_is_re_raised_unchanged() -> None:
    """pydantic's ``ValidationError`` (raised by the SDK's own parse helper) cannot be
    subclassed: no drop-in can be made, so ``wrap()`` re-raises it as the very object the SDK
    raised (a plain harness error would escape ``except ValidationError``); ``normalize()``
    still gives its harness error, and ``dropin=False`` still raises the plain harness error."""
    import pydantic

    class Answer(pydantic.BaseModel):
        city: str

    def wrong(request: Any) -> tuple[int, bytes, str]:
        message = {"role": "assistant", "content": json.dumps({"town": "Paris"})}
        completion = {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        }
        return 200, json.dumps(completion).encode(), "application/json"

    def call(client: Any) -> Callable[[], Any]:
        return lambda: client.chat.completions.parse(
            model="m", messages=MESSAGES, response_format=Answer
        )

    plain = raised(call(openai_client(wrong)))
    err = raised(call(wrap(openai_client(wrong), check=False)))
    assert type(plain) is pydantic.ValidationError
    assert type(err) is pydantic.ValidationError
    assert not isinstance(err, HarnessError)
    assert isinstance(normalize(err), HarnessError)
    typed = raised(call(wrap(openai_client(wrong), check=False, dropin=False)))
    assert isinstance(typed, HarnessError)
    assert type(typed.__cause__) is pydantic.ValidationError


def test_the_type_of_a_wrapped_resource_builds_the_sdks_resource() -> None:
    """``type(resource)(client)`` (anthropic's ``rejecting_non_json`` rebuilds a resource on a
    copy of its client that way) builds the SDK's resource, as without ``wrap()``."""
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant-test")
    sessions = wrap(client).beta.messages  # a resource every supported anthropic version has
    rebuilt = type(sessions)(client)
    assert type(rebuilt) is type(client.beta.messages)
    assert rebuilt._client is client
    assert type(sessions).__name__ == type(client.beta.messages).__name__


def test_an_async_list_is_both_awaited_and_iterated() -> None:
    """An async client's ``models.list()`` (an ``AsyncPaginator``) works with ``async for`` and
    with ``await``, as without ``wrap()``; its failures are typed."""
    httpx = http_library("openai")
    models = {
        "object": "list",
        "data": [{"id": "m", "object": "model", "created": 0, "owned_by": "o"}],
    }

    def handler(request: Any) -> Any:
        return httpx.Response(200, json=models)

    def failing(request: Any) -> Any:
        return httpx.Response(429, json={"error": {"message": "slow down", "type": "requests"}})

    def client(answer: Callable[[Any], Any]) -> Any:
        transport = httpx.MockTransport(answer)
        return wrap(
            openai.AsyncOpenAI(
                api_key="sk-test", max_retries=0, http_client=httpx.AsyncClient(transport=transport)
            )
        )

    async def main() -> None:
        assert [m.id async for m in client(handler).models.list()] == ["m"]
        page = await client(handler).models.list()
        assert [m.id for m in page.data] == ["m"]
        with pytest.raises(UpstreamRateLimitedError):
            await client(failing).models.list()
        with pytest.raises(openai.RateLimitError):
            async for _ in client(failing).models.list():
                pass

    asyncio.run(main())


def test_a_wrapped_client_wrapped_again_or_returned_by_a_call_is_still_the_sdks_class() -> None:
    """``wrap(wrap(client))`` is an instance of the client's class, and a wrapped client that
    a wrapped call returns (as when SDK code builds its copy through a wrapping ``__new__``)
    comes back as it is, not wrapped twice."""

    client = openai.OpenAI(api_key="sk-test")
    twice = wrap(wrap(client))
    assert isinstance(twice, openai.OpenAI)
    inner = wrap(openai.OpenAI(api_key="sk-test"))

    class Maker:
        def make(self) -> Any:
            return inner

    assert wrap(Maker()).make() is inner


def test_an_anthropic_stream_subclass_that_sets_members_after_init_is_watched_in_place() -> None:
    """anthropic 2.16 makes a stream's iterator on first use (a cached property): a subclass's
    members set after ``super().__init__`` are there, and the stream is the SDK's object."""
    import anthropic

    httpx = http_library("anthropic")
    events = b'event: message_stop\ndata: {"type": "message_stop"}\n\n'

    class Tagged(anthropic.Stream[object]):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.tag = "tag"

        def __stream__(self) -> Any:
            for _ in super().__stream__():
                yield self.tag

    def handler(request: Any) -> Any:
        return httpx.Response(200, content=events, headers={"content-type": "text/event-stream"})

    client = anthropic.Anthropic(
        api_key="sk-ant-test", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    stream = wrap(client).get("/x", cast_to=object, stream=True, stream_cls=Tagged)
    assert type(stream) is Tagged
    assert next(stream) == "tag"


def test_an_sdk_dataclass_result_comes_back_as_the_sdk_made_it() -> None:
    """A dataclass of the SDK's (openai's agents results are frozen dataclasses) is data: a
    call returns it as it is, so ``stream.get_final_result() is result`` holds as without
    ``wrap()``."""
    from openai.lib.beta.agents._tool_error import AgentToolError

    made = AgentToolError(
        error=RuntimeError("x"),
        tool_name="t",
        session_id="s",
        turn_id="u",
        call_id="c",
        stage="run",  # type: ignore[arg-type]
    )

    class Holder:
        def result(self) -> Any:
            return made

    assert wrap(Holder()).result() is made


def test_the_success_path_does_its_work_once_per_client() -> None:
    """Issue 37, item 6: what does not change between calls is found once. The reader of a
    client's results is its adapter's ``diagnose``, found at the first result and kept on the
    client's options; each link of ``client.chat.completions.create`` is read from the
    proxy's own cache through a ``_Kept`` its class holds (no failed lookup per link), while
    another client of the same class reads its own links, and a member set or deleted on a
    proxy is read afresh."""
    from normalize_errors.providers import openai as openai_adapter

    one, two = wrap(openai_client(ok)), wrap(openai_client(ok))
    assert one.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content
    kept = vars(type(one))["chat"]
    assert isinstance(kept, _wrap._Kept)
    assert vars(type(one.chat))["completions"].name == "completions"
    options = one.chat.completions.create.__closure__  # the wrapped method's options
    found = [
        cell.cell_contents
        for cell in options or ()
        if isinstance(cell.cell_contents, _wrap._Options)
    ]
    assert found
    assert found[0].judge is openai_adapter.diagnose
    assert two.chat is not one.chat  # the other client's own link, through the same class
    assert two.chat._ne_target is two._ne_target.chat
    assert one.chat is one.chat  # kept
    replacement = two._ne_target.chat
    one.chat = replacement  # set on the client itself: the kept link is dropped
    assert one._ne_target.chat is replacement
    assert one.chat._ne_target is replacement
