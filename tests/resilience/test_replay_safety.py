"""Stream phase and replay safety: what the helpers never send again without being told."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from normalize_errors import HarnessError, UpstreamUnavailableError, wrap
from normalize_errors.resilience import fallback, replay_refusal, request_phase
from normalize_errors.retry import retrying
from normalize_errors.testing import Faults

from .helpers import failed

QUESTION: Any = [{"role": "user", "content": "Hello?"}]


def streamed(client: openai.OpenAI) -> str:
    """The whole text of a streamed chat completion, as a caller would print it."""
    parts = []
    for chunk in client.chat.completions.create(
        model="gpt-4o-mini", messages=QUESTION, stream=True
    ):
        if chunk.choices and chunk.choices[0].delta.content:
            parts.append(chunk.choices[0].delta.content)
    return "".join(parts)


def test_a_stream_that_failed_after_its_first_chunks_is_not_replayed() -> None:
    with Faults() as faults:
        faults.cut_stream(after=2)  # two events reach the caller, then the connection drops
        client = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))
        err = failed(lambda: retrying(attempts=3, sleep=lambda s: None)(streamed, client))
        assert faults.calls == 1
    assert err.problem.code == "upstream.unavailable"
    assert err.retryable is False  # the answer says: do not send it again
    why = "not replayed: its stream had already delivered output to the caller (2 chunk(s),"
    assert why in (err.detail or "")
    assert err.stream is not None
    assert (err.stream["chunks"], err.stream["phase"]) == (2, "text")


def test_nor_does_the_fallback_send_it_to_another_provider() -> None:
    with Faults() as faults:
        faults.cut_stream(after=2)
        client = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))
        claude = wrap(anthropic.Anthropic(api_key="sk-ant-offline", max_retries=0))
        err = failed(
            lambda: fallback(
                lambda: streamed(client),
                lambda: claude.messages.create(
                    model="claude-sonnet-4-6", max_tokens=8, messages=QUESTION
                ),
            )
        )
        assert faults.calls == 1
    assert "not replayed" in (err.detail or "")


def test_a_stream_cut_before_any_chunk_is_replayed() -> None:
    with Faults() as faults:
        faults.cut_stream(after=0)
        client = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))
        assert retrying(attempts=3, sleep=lambda s: None, idempotent=True)(streamed, client)
        assert faults.calls == 2


def test_a_connect_failure_before_sending_is_replayed(closed_port: int) -> None:
    client = wrap(
        openai.OpenAI(
            api_key="sk-offline", max_retries=0, base_url=f"http://127.0.0.1:{closed_port}/v1"
        )
    )
    err = failed(
        lambda: retrying(attempts=3, sleep=lambda s: None)(
            client.chat.completions.create, model="gpt-4o-mini", messages=QUESTION
        )
    )
    assert request_phase(err) == "before_send"
    assert (err.problem.code, err.attempts) == ("upstream.unavailable", 3)
    assert replay_refusal(err.problem, idempotent=False) is None


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A local port that takes connections and requests and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        port: int = sock.getsockname()[1]
        yield port


def test_a_read_timeout_after_sending_is_replayed_only_when_idempotent(
    silent_server: int,
) -> None:
    client = wrap(
        openai.OpenAI(
            api_key="sk-offline",
            max_retries=0,
            timeout=0.3,
            base_url=f"http://127.0.0.1:{silent_server}/v1",
        )
    )

    def ask(idempotent: bool) -> Any:
        return retrying(attempts=2, sleep=lambda s: None, idempotent=idempotent)(
            client.chat.completions.create, model="gpt-4o-mini", messages=QUESTION
        )

    err = failed(lambda: ask(False))
    assert request_phase(err) == "after_send"
    assert err.retryable is False
    assert "may have run on the server (pass idempotent=True)" in (err.detail or "")
    assert err.attempts == 1  # raised after its one attempt (the SDK counts it)

    again = failed(lambda: ask(True))
    assert again.retryable is True
    assert again.attempts == 2


def test_a_plain_error_has_no_phase() -> None:
    assert request_phase(ValueError("x")) == "unknown"


def test_a_plain_error_with_a_stream_that_delivered_is_not_replayed_either() -> None:
    """An error of your own stream reader (no drop-in), with no detail of its own, whose
    ``upstream.stream`` says output reached the caller (as a received error would)."""
    calls: list[int] = []
    summary = {"chunks": 2, "phase": "text", "output_chars": 5, "terminal": False}

    def read_stream() -> None:
        calls.append(1)
        raise HarnessError.from_code("upstream.unavailable", upstream={"stream": summary})

    err = failed(lambda: retrying(attempts=3, sleep=lambda s: None)(read_stream))
    assert calls == [1]
    assert type(err) is UpstreamUnavailableError
    assert err.detail == (
        "not replayed: its stream had already delivered output to the caller "
        "(2 chunk(s), 5 character(s))"
    )
    assert err.stream == summary
