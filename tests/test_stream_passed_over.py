"""Events an SDK's stream reader passes over, read by ``wrap()`` (issue 25).

anthropic's stream reader reads only the events an ``event:`` line names; relays that send
bare ``data:`` lines (corpus cases, each with its public source) reach the plain client as an
empty stream. The wrapped client reads the events the SDK's SSE decoder gave: an error event,
and the final stop reason of the events before any chunk. Each case's body is served as the
corpus serves it to the SDKs (``tests/test_corpus_sdks.py``: with the blank line that ends
the last event). The real client runs over an in-memory transport of its own HTTP library.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from normalize_errors import HarnessError, corpus, from_response, wrap
from normalize_errors._wrapping._replay_calls import http_library

from .support import recorded, stream_of, valid
from .test_corpus_sdks import served_body

anthropic = pytest.importorskip("anthropic", reason="needs the anthropic SDK")

MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]

PASSED_OVER: dict[str, tuple[str, dict[str, Any]]] = {
    "sub2api-stream-error-frame-no-event-line": (
        "upstream.rate_limited",
        {"provider": "anthropic", "code": "rate_limit_error", "in_stream": True},
    ),
    "litellm-proxy-anthropic-stream-refusal": (
        "policy.model_refusal",
        {"provider": "anthropic", "stop_reason": "refusal"},
    ),
}


def corpus_body(case_id: str) -> bytes:
    return served_body(next(c for c in corpus.load() if c.id == case_id)).encode()


def events(body: bytes) -> list[bytes]:
    """The SSE events of a stream body, each with its blank-line end."""
    return [part.strip(b"\n") + b"\n\n" for part in body.split(b"\n\n") if part.strip()]


def text_of(seen: list[Any]) -> str:
    return "".join(
        e.delta.text
        for e in seen
        if e.type == "content_block_delta" and e.delta.type == "text_delta"
    )


def raised(consume: Callable[[], Any]) -> Exception:
    try:
        consume()
    except Exception as exc:  # the test asserts what it is
        return exc
    raise AssertionError("nothing was raised")


def anthropic_over(body: bytes, asynchronous: bool = False) -> Any:
    """A plain anthropic client whose every answer is the 200 stream ``body``."""
    http = http_library("anthropic")

    def answer(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    transport = http.MockTransport(answer)
    if asynchronous:
        client = http.AsyncClient(transport=transport)
        return anthropic.AsyncAnthropic(api_key="sk-ant-test", max_retries=0, http_client=client)
    return anthropic.Anthropic(
        api_key="sk-ant-test", max_retries=0, http_client=http.Client(transport=transport)
    )


def read_all(client: Any, helper: bool) -> list[Any]:
    seen: list[Any] = []
    if helper:
        with client.messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream:
            seen.extend(stream)
    else:
        seen.extend(
            client.messages.create(model="m", max_tokens=64, messages=MESSAGES, stream=True)
        )
    return seen


async def aread_all(client: Any, helper: bool) -> list[Any]:
    seen: list[Any] = []
    if helper:
        async with client.messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream:
            seen.extend([event async for event in stream])
    else:
        stream = await client.messages.create(
            model="m", max_tokens=64, messages=MESSAGES, stream=True
        )
        seen.extend([event async for event in stream])
    return seen


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("helper", [False, True], ids=["create", "stream_helper"])
@pytest.mark.parametrize("case_id", list(PASSED_OVER))
def test_anthropic_events_without_an_event_line(case_id: str, helper: bool, mode: str) -> None:
    """The plain client passes every unnamed event over and ends quietly with no event; the
    wrapped one raises what the events say, as the raw body reads (``from_response``)."""
    code, upstream = PASSED_OVER[case_id]
    body = corpus_body(case_id)

    def run(client: Any) -> list[Any]:
        if mode == "async":
            return asyncio.run(aread_all(client, helper))
        return read_all(client, helper)

    assert run(anthropic_over(body, mode == "async")) == []  # the SDK alone sees nothing
    err = raised(lambda: run(wrap(anthropic_over(body, mode == "async"))))
    assert isinstance(err, HarnessError), err
    problem = valid(err.problem)
    assert problem.code == code
    assert {k: problem.upstream.get(k) for k in upstream} == upstream
    assert stream_of(problem)["chunks"] == 0  # nothing reached the caller
    raw = from_response(200, {"content-type": "text/event-stream"}, body)
    if raw.upstream.get("in_stream"):  # an error event: read as the raw body reads it
        assert (raw.code, raw.retryable) == (problem.code, problem.retryable)


def test_an_unnamed_error_event_after_named_events_is_raised_at_the_end() -> None:
    """Named events the SDK yields, then the relay's unnamed error event (constructed: the
    ordinary events of the shipped anthropic/stream_error_overloaded cassette, without its
    error event, followed by the sub2api relay's error line): the wrapped stream yields the
    events, then raises the error the SDK passed over."""
    _, _, recorded_body = recorded("anthropic", "stream_error_overloaded")
    named = b"".join(e for e in events(recorded_body) if b'"error"' not in e)
    relayed = corpus_body("sub2api-stream-error-frame-no-event-line").splitlines()[-2]
    body = named + relayed + b"\n\n"
    assert text_of(read_all(anthropic_over(body), False)) == "Hello!"  # the SDK: no failure
    seen: list[Any] = []

    def consume() -> None:
        stream = wrap(anthropic_over(body)).messages.create(
            model="m", max_tokens=64, messages=MESSAGES, stream=True
        )
        seen.extend(stream)

    err = raised(consume)
    assert isinstance(err, HarnessError)
    assert err.problem.code == "upstream.rate_limited"
    assert text_of(seen) == "Hello!"
    assert stream_of(err)["chunks"] == len(seen)
    assert stream_of(err)["output_chars"] == len("Hello!")


def test_the_watch_keeps_no_passed_over_event_once_a_chunk_has_come() -> None:
    """Only the events before the first chunk are kept (the last 64 of them), and nothing
    when the client does not check: ``wrap(check=False)`` reads the stream as the SDK does."""
    from normalize_errors._wrapping import _wrap_streams

    _, _, recorded_body = recorded("anthropic", "stream_max_tokens")
    stream = wrap(anthropic_over(recorded_body)).messages.create(
        model="m", max_tokens=64, messages=MESSAGES, stream=True
    )
    first = next(iter(stream))
    assert first.type == "message_start"
    watch = stream._iterator.gi_frame.f_locals["watch"]  # the wrapper's own generator
    assert isinstance(watch, _wrap_streams._Watch)
    assert watch.passed is None
    unchecked = wrap(
        anthropic_over(corpus_body("sub2api-stream-error-frame-no-event-line")), check=False
    )
    assert read_all(unchecked, False) == []


def test_only_the_last_64_events_passed_over_are_kept() -> None:
    """A relay's bare ``data:`` events before any chunk are kept to be read at the end, the
    last 64 of them (a stream's stop reason is in its last events): 70 ``ping`` events
    (Anthropic's keep-alive; their number constructed) before the refusal case's event,
    which is still read at the end, and the watch held no more than 64 of them."""
    refusal = corpus_body("litellm-proxy-anthropic-stream-refusal")
    body = b'data: {"type": "ping"}\n\n' * 70 + refusal
    stream = wrap(anthropic_over(body)).messages.create(
        model="m", max_tokens=64, messages=MESSAGES, stream=True
    )
    watch = stream._iterator.gi_frame.f_locals["watch"]  # the wrapper's generator, unstarted
    err = raised(lambda: list(stream))
    assert isinstance(err, HarnessError), err
    assert err.problem.code == "policy.model_refusal"
    assert watch.passed is not None
    assert len(watch.passed) == 64
    assert '"refusal"' in watch.passed[-1]
    assert all('"ping"' in data for data in watch.passed[:-1])
