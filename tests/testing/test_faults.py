"""Faults: recorded failures served from the real transports of httpx and httpx2."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest
import tenacity
from google import genai
from google.genai import errors as genai_errors

from normalize_errors import UpstreamOverloadedError, normalize, wrap
from normalize_errors.replay import find
from normalize_errors.testing import Faults, Reply
from tests.support import is_instance, raised

MESSAGES = [{"role": "user", "content": "Hello"}]


def chat(client: openai.OpenAI) -> str | None:
    """One chat completion's text."""
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]
    return reply.choices[0].message.content


def test_a_shipped_failure_then_a_success_fitting_the_api() -> None:
    """Two 529s from the cassette, then a Messages success; the SDK's own retries wait twice."""
    with Faults() as faults:
        faults.fail("anthropic/overloaded_529", times=2)
        client = anthropic.Anthropic(api_key="sk-ant-test", max_retries=2)
        message = client.messages.create(model="claude-x", max_tokens=5, messages=MESSAGES)  # type: ignore[arg-type]
    assert message.content[0].text == "Hello!"  # type: ignore[union-attr]
    assert message.model == "claude-x"
    assert faults.calls == 3
    assert faults.served == ["anthropic/overloaded_529", "anthropic/overloaded_529", "success"]
    assert len(faults.waits) == 2  # the SDK's back-off, asked for and not slept
    assert faults.requests[0].host == "api.anthropic.com"
    assert faults.requests[0].path == "/v1/messages"
    assert faults.requests[0].json()["max_tokens"] == 5
    sent = faults.requests[0].headers
    assert "sk-ant-test" in sent.get("x-api-key", sent.get("authorization", ""))
    assert faults.requests[2].headers["x-stainless-retry-count"] == "2"


def test_the_sdk_honours_retry_after_and_the_wait_is_noted() -> None:
    """An inline 429 with retry-after: 3 makes openai wait exactly 3 seconds (not slept)."""
    began = time.perf_counter()
    with Faults() as faults:
        faults.fail(429, headers={"retry-after": "3"}, body={"error": {"message": "slow down"}})
        assert chat(openai.OpenAI(api_key="sk-test", max_retries=1)) == "Hello!"
    assert faults.waits == [3.0]
    assert time.perf_counter() - began < 3  # no real sleep happened


def test_async_sdk_retries_wait_through_anyio_without_sleeping() -> None:
    """The async clients' back-off (anyio.sleep) is noted, not slept."""

    async def go() -> str | None:
        client = openai.AsyncOpenAI(api_key="sk-test", max_retries=2)
        reply = await client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
        return reply.choices[0].message.content

    began = time.perf_counter()
    with Faults() as faults:
        faults.fail(429, headers={"retry-after": "5"}, body={"error": {"message": "x"}}, times=2)
        assert asyncio.run(go()) == "Hello!"
    assert faults.waits == [5.0, 5.0]
    assert time.perf_counter() - began < 5


def test_tenacity_waits_are_noted_without_sleeping() -> None:
    """tenacity's sync and async sleeps go through the patched sleeps."""
    with Faults() as faults:
        faults.fail("google/overloaded_503", times=2)
        client = genai.Client(api_key="test-key")
        retrying = tenacity.Retrying(
            wait=tenacity.wait_fixed(7),
            stop=tenacity.stop_after_attempt(3),
            retry=tenacity.retry_if_exception_type(genai_errors.ServerError),
        )
        reply = retrying(client.models.generate_content, model="gemini-2.5-flash", contents="Hi")
        assert reply.text == "Hello!"
        assert faults.waits == [7.0, 7.0]

        faults.fail("google/overloaded_503")

        async def go() -> str | None:
            async for attempt in tenacity.AsyncRetrying(
                wait=tenacity.wait_fixed(4), stop=tenacity.stop_after_attempt(2)
            ):
                with attempt:
                    answer = await client.aio.models.generate_content(
                        model="gemini-2.5-flash", contents="Hi"
                    )
            return answer.text

        assert asyncio.run(go()) == "Hello!"
    assert faults.waits == [7.0, 7.0, 4.0]
    assert faults.calls == 5


def test_google_sdk_retries_wait_through_tenacity() -> None:
    """google-genai's own retry options (tenacity inside the SDK) wait without sleeping."""
    with Faults() as faults:
        faults.fail("google/overloaded_503", times=2)
        client = genai.Client(api_key="test-key", http_options={"retry_options": {"attempts": 3}})
        reply = client.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    assert reply.text == "Hello!"
    assert len(faults.waits) == 2
    assert faults.requests[0].path.endswith("/models/gemini-2.5-flash:generateContent")


def test_wrapped_clients_raise_the_typed_error() -> None:
    """A wrapped client built by the code under test raises the harness error."""
    with Faults() as faults:
        faults.fail("anthropic/overloaded_529")
        client = wrap(anthropic.Anthropic(api_key="sk-ant-test", max_retries=0))
        err = raised(lambda: client.messages.create(model="m", max_tokens=5, messages=MESSAGES))  # type: ignore[arg-type]
    assert is_instance(err, UpstreamOverloadedError)
    assert is_instance(err, anthropic.APIStatusError)
    assert isinstance(err, UpstreamOverloadedError)
    assert err.upstream["request_id"] == "req_01RCc7MbLyQNtGKzBTv8VCep"


def test_success_fits_every_api_and_its_streams() -> None:
    """Chat, Responses, Messages and Gemini, plain and streamed, parse in their SDKs."""
    with Faults(text="Fine") as faults:
        client = openai.OpenAI(api_key="sk-test")
        assert chat(client) == "Fine"
        assert client.responses.create(model="gpt-4o-mini", input="Hi").output_text == "Fine"
        with client.responses.stream(model="gpt-4o-mini", input="Hi") as events:
            assert events.get_final_response().output_text == "Fine"
        chunks = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=MESSAGES,  # type: ignore[arg-type]
            stream=True,
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)  # type: ignore[union-attr]
        assert text == "Fine"
        claude = anthropic.Anthropic(api_key="sk-ant-test")
        with claude.messages.stream(model="m", max_tokens=5, messages=MESSAGES) as stream:  # type: ignore[arg-type]
            assert stream.get_final_text() == "Fine"
        gemini = genai.Client(api_key="test-key")
        parts = gemini.models.generate_content_stream(model="gemini-2.5-flash", contents="Hi")
        assert "".join(p.text or "" for p in parts) == "Fine"
    assert faults.served == ["success"] * 6


def test_an_error_event_in_the_middle_of_a_stream() -> None:
    """A shipped mid-stream error is raised by the SDK while the stream is read."""
    with Faults() as faults:
        faults.fail("anthropic/stream_error_overloaded")
        claude = anthropic.Anthropic(api_key="sk-ant-test", max_retries=0)
        seen: list[str] = []

        def read() -> None:
            with claude.messages.stream(model="m", max_tokens=5, messages=MESSAGES) as stream:  # type: ignore[arg-type]
                seen.extend(stream.text_stream)

        err = raised(read)
    assert seen == ["Hello", "!"]  # the text before the error arrived
    assert normalize(err).code == "upstream.overloaded"


@pytest.mark.parametrize("library", [httpx, httpx2])
def test_a_stream_cut_by_the_transport(library: object) -> None:
    """cut_stream: the first events arrive, then the transport's RemoteProtocolError."""
    with Faults() as faults:
        faults.cut_stream(after=2)
        with library.Client() as client:  # type: ignore[attr-defined]
            body = {"model": "m", "messages": MESSAGES, "stream": True}
            with client.stream(
                "POST", "https://api.openai.com/v1/chat/completions", json=body
            ) as r:
                got: list[bytes] = []
                err = raised(lambda: got.extend(r.iter_bytes()))
    assert isinstance(err, library.RemoteProtocolError)  # type: ignore[attr-defined]
    assert b"".join(got).count(b"data: ") == 2
    assert normalize(err).code == "upstream.unavailable"


def test_async_clients_and_cut_streams() -> None:
    """Async httpx clients get the script too; a cut async stream raises mid-way."""

    async def go() -> tuple[int, BaseException | None]:
        async with httpx.AsyncClient() as client:
            first = await client.get("https://gateway.example/v1/thing")
            try:
                claude = anthropic.AsyncAnthropic(api_key="sk-ant-test", max_retries=0)
                async with claude.messages.stream(
                    model="m",
                    max_tokens=5,
                    messages=MESSAGES,  # type: ignore[arg-type]
                ) as stream:
                    async for _ in stream.text_stream:
                        pass
            except Exception as exc:
                return first.status_code, exc
        return first.status_code, None

    with Faults() as faults:
        faults.fail(503, body="upstream down").cut_stream(after=3)
        status, err = asyncio.run(go())
    assert status == 503
    assert err is not None
    assert normalize(err).code == "upstream.unavailable"
    assert faults.served == ["HTTP 503", "cut"]


def test_a_users_cassette_file_and_repeating_forever(tmp_path: Path) -> None:
    """A cassette path serves its interactions; times=None serves on every request."""
    mine = tmp_path / "mine.yaml"
    mine.write_text(find("openai/overloaded_503").read_text(encoding="utf-8"), encoding="utf-8")
    with Faults() as faults:
        faults.fail(mine, times=None)
        client = openai.OpenAI(api_key="sk-test", max_retries=3)
        err = raised(lambda: chat(client))
    assert isinstance(err, openai.InternalServerError)
    assert faults.calls == 4
    assert faults.served == ["openai/overloaded_503"] * 4


def test_unknown_names_say_what_exists() -> None:
    """A typo in a cassette name lists the closest shipped names."""
    with pytest.raises(FileNotFoundError, match="anthropic/overloaded_529"):
        Faults().fail("anthropic/overloaded")
    with pytest.raises(TypeError):
        Faults().fail(3.5)  # type: ignore[arg-type]


def test_strict_check_and_restoring_everything() -> None:
    """An unserved step fails check(); stop() puts back the transports and the sleeps."""
    before = (httpx.HTTPTransport.handle_request, time.sleep, asyncio.sleep)
    faults = Faults()
    with faults:
        faults.fail(Reply(500, body="x")).cut_stream()
        assert httpx.HTTPTransport.handle_request is not before[0]
        with pytest.raises(RuntimeError), Faults():
            pass
    assert (httpx.HTTPTransport.handle_request, time.sleep, asyncio.sleep) == before
    assert faults.pending == 2
    with pytest.raises(
        AssertionError, match=r"2 scripted response\(s\) never requested \(HTTP 500, cut\)"
    ):
        faults.check()
    faults.strict = False
    faults.check()


def test_the_script_refuses_what_it_cannot_serve(tmp_path: Path) -> None:
    """A negative ``times``, a cassette with no interactions, a second active injector."""
    faults = Faults()
    with pytest.raises(ValueError, match="times must be 0 or more"):
        faults.succeed(times=-1)
    empty = tmp_path / "empty.yaml"
    empty.write_text("metadata: {provider: openai, call: x}\ninteractions: []\n", "utf-8")
    with pytest.raises(ValueError, match="no interactions to serve"):
        faults.fail(empty)
    with Faults(), pytest.raises(RuntimeError, match="already active"):
        Faults().start()


def test_the_requests_it_records_read_like_the_call() -> None:
    """Each recorded request says its API, whether it streams, its JSON and a short repr."""
    with Faults() as faults:
        chat(openai.OpenAI(api_key="sk-test", max_retries=0))
        httpx.post("https://example.test/upload", content=b"\x00not json")
    first, second = faults.requests
    assert (first.api, first.stream, first.host) == ("chat", False, "api.openai.com")
    assert first.json()["model"] == "gpt-4o-mini"
    assert repr(first) == "Request(POST https://api.openai.com/v1/chat/completions)"
    assert (second.api, second.json()) == (None, None)


def test_a_cut_stream_needs_a_streaming_api() -> None:
    """``cut_stream`` on a request of no known stream format says so, with the URL."""
    with Faults(strict=False) as faults:
        faults.cut_stream()
        with pytest.raises(ValueError, match=r"no stream format is known for .*example\.test"):
            httpx.get("https://example.test/data")


def test_replies_of_bytes_and_of_json_with_their_own_type() -> None:
    """A reply's body as bytes is sent as it is; a JSON body keeps a content type the reply
    names; a zero wait is no wait; stopping twice is harmless."""
    with Faults() as faults:
        faults.fail(
            Reply(503, body=b"upstream connect error", headers={"content-type": "text/plain"})
        )
        faults.fail(
            Reply(
                429,
                headers={"Content-Type": "application/problem+json"},
                body={"type": "about:blank", "title": "Too Many Requests", "status": 429},
            )
        )
        first = httpx.post("https://api.example.test/v1/chat")
        second = httpx.post("https://api.example.test/v1/chat")
        time.sleep(0)
    faults.stop()
    assert (first.status_code, first.content) == (503, b"upstream connect error")
    assert second.headers["content-type"] == "application/problem+json"
    assert second.json()["title"] == "Too Many Requests"
    assert faults.waits == []


# -- whose sleeps are skipped: the context that started Faults, not every thread ----------------


def test_a_background_threads_polling_sleep_is_its_own() -> None:
    """A worker thread started before Faults (as a library's exporter is) polls with
    ``time.sleep``: it keeps sleeping for real, and none of its sleeps is noted.

    Before the fix, the patched ``time.sleep`` was process-wide: such a worker's sleeps
    returned at once, so it spun thousands of times, and every turn landed in ``waits``.
    """
    stop = threading.Event()
    turns: list[float] = []

    def poll() -> None:
        while not stop.is_set():
            turns.append(time.perf_counter())
            time.sleep(0.05)

    worker = threading.Thread(target=poll, daemon=True)
    worker.start()
    try:
        with Faults() as faults:
            stop.wait(0.4)  # an Event's wait, not time.sleep: the worker gets 0.4 s to poll
            time.sleep(9)  # the code under test's own wait: noted, not slept
    finally:
        stop.set()
        worker.join(5)
    assert faults.waits == [9.0]
    assert 2 <= len(turns) < 30  # about 0.4 / 0.05 turns; thousands if the worker spun


def test_another_threads_sleeps_sleep_while_faults_is_active() -> None:
    """A thread started inside the block without the context sleeps for real, sync and
    async (its own event loop), and its waits are not noted."""
    took: dict[str, float] = {}

    def sync_wait() -> None:
        began = time.perf_counter()
        time.sleep(0.15)
        took["sync"] = time.perf_counter() - began

    def async_wait() -> None:
        async def go() -> str:
            return await asyncio.sleep(0.15, result="woke")

        began = time.perf_counter()
        assert asyncio.run(go()) == "woke"
        took["async"] = time.perf_counter() - began

    with Faults() as faults:
        threads = [threading.Thread(target=sync_wait), threading.Thread(target=async_wait)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(5)
    assert sorted(took) == ["async", "sync"]
    assert min(took.values()) >= 0.14
    assert faults.waits == []


def test_tasks_and_threads_that_carry_the_context_do_not_sleep() -> None:
    """asyncio tasks, ``asyncio.to_thread`` and a thread run in a copy of the context are the
    code under test: their waits are noted and not slept."""

    async def go() -> str:
        await asyncio.to_thread(time.sleep, 30)
        return await asyncio.sleep(20, result="done")

    began = time.perf_counter()
    with Faults() as faults:
        assert asyncio.run(go()) == "done"
        carried = threading.Thread(target=contextvars.copy_context().run, args=(time.sleep, 10))
        carried.start()
        carried.join(5)
    assert faults.waits == [30.0, 20.0, 10.0]
    assert time.perf_counter() - began < 10


def test_the_agents_sdks_trace_exporter_does_not_spin() -> None:
    """The OpenAI Agents SDK's real batch trace processor, whose worker thread polls with
    ``time.sleep(0.2)``, left running while an SDK's retry is asserted on: the retry's wait is
    the only one noted (the order-dependent failure seen after tests/frameworks/test_agents.py).
    """
    pytest.importorskip("agents", reason="needs the openai-agents SDK")
    from agents.tracing import Span, Trace, trace
    from agents.tracing.processor_interface import TracingExporter
    from agents.tracing.processors import BatchTraceProcessor

    exported: list[Trace | Span[Any]] = []

    class Keep(TracingExporter):
        def export(self, items: list[Trace | Span[Any]]) -> None:
            exported.extend(items)

    processor = BatchTraceProcessor(Keep(), schedule_delay=60.0)
    processor.on_trace_start(trace("faults-and-tracing"))  # starts the worker thread
    try:
        with Faults() as faults:
            faults.fail(429, headers={"retry-after": "3"}, body={"error": {"message": "slow"}})
            assert chat(openai.OpenAI(api_key="sk-test", max_retries=1)) == "Hello!"
            threading.Event().wait(0.5)  # more than the worker's 0.2 s poll
    finally:
        processor.shutdown(timeout=5)
    assert faults.waits == [3.0]
    assert len(exported) == 1  # the worker was alive throughout and drained its queue at the end


def test_a_wait_that_is_no_number_is_not_noted() -> None:
    """The patched sleeps note what converts to seconds and leave the rest out (they never
    raise inside the SDK's retry loop)."""
    from decimal import Decimal

    with Faults() as faults:
        time.sleep(Decimal("1.5"))  # type: ignore[arg-type]
        time.sleep(None)  # type: ignore[arg-type]
        time.sleep("soon")  # type: ignore[arg-type]
        asyncio.run(asyncio.sleep("later"))  # type: ignore[call-overload]
    assert faults.waits == [1.5]


def test_only_the_libraries_installed_are_patched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where httpx2 or anyio is not installed (looked up when Faults starts), Faults patches
    the rest and leaves those alone."""
    import importlib.util

    import anyio

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("httpx2", "anyio") else real(name, *a),
    )
    before = (httpx2.HTTPTransport.handle_request, anyio.sleep, httpx.HTTPTransport.handle_request)
    with Faults():
        assert httpx2.HTTPTransport.handle_request is before[0]
        assert anyio.sleep is before[1]
        assert httpx.HTTPTransport.handle_request is not before[2]
    assert httpx.HTTPTransport.handle_request is before[2]


def test_a_start_that_fails_half_way_undoes_what_it_patched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If patching fails part way (here the lookup of anyio raises), start() undoes the
    patches already made and re-raises; the process is left as before and can start again."""
    import importlib.util

    real = importlib.util.find_spec

    def broken(name: str, package: str | None = None) -> object:
        if name == "anyio":
            raise RuntimeError("a broken import system")
        return real(name, package)

    before = (httpx.HTTPTransport.handle_request, time.sleep, asyncio.sleep)
    monkeypatch.setattr(importlib.util, "find_spec", broken)
    with pytest.raises(RuntimeError, match="a broken import system"):
        Faults().start()
    assert (httpx.HTTPTransport.handle_request, time.sleep, asyncio.sleep) == before
    monkeypatch.undo()
    with Faults() as faults:
        time.sleep(2)
    assert faults.waits == [2.0]


def test_stop_removes_a_patch_of_an_inherited_method() -> None:
    """A transport whose method is inherited (an SDK line that defines it on a base class):
    stop() deletes the patch from the subclass, so the base's method shows through again,
    instead of copying the base's onto the subclass."""

    class Base:
        def handle_request(self) -> str:
            return "base"

    class Transport(Base):
        pass

    faults = Faults()
    faults._patch(Transport, "handle_request", lambda self: "patched")
    assert Transport().handle_request() == "patched"
    faults.stop()
    assert Transport().handle_request() == "base"
    assert "handle_request" not in vars(Transport)
