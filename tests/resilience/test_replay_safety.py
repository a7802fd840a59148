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


# -- issue 37: whatever check says, and the other side of the rule ------------------------------


def test_unchecked_a_stream_that_delivered_output_is_not_replayed() -> None:
    """``wrap(check=False)`` still watches what a stream delivered: ``retrying()`` does not
    send again a stream whose text already reached the caller (the caller printed "Hello"
    once, not "HelloHelloHello"), and ``fallback()`` does not append another provider's
    answer to it."""
    printed: list[str] = []

    def shown(client: openai.OpenAI) -> str:
        for chunk in client.chat.completions.create(
            model="gpt-4o-mini", messages=QUESTION, stream=True
        ):
            if chunk.choices and chunk.choices[0].delta.content:
                printed.append(chunk.choices[0].delta.content)
        return "".join(printed)

    with Faults(text="Hello") as faults:
        faults.cut_stream(after=2, times=3)  # each attempt: the role chunk and "Hello", then cut
        client = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0), check=False)
        err = failed(lambda: retrying(attempts=3, sleep=lambda s: None)(shown, client))
        assert faults.calls == 1
        assert "".join(printed) == "Hello"
        assert err.problem.code == "upstream.unavailable"
        assert err.retryable is False
        assert err.stream is not None
        assert (err.stream["phase"], err.stream["output_chars"]) == ("text", len("Hello"))
        claude = wrap(anthropic.Anthropic(api_key="sk-ant-offline", max_retries=0))
        err = failed(
            lambda: fallback(
                lambda: shown(client),
                lambda: claude.messages.create(
                    model="claude-sonnet-4-6", max_tokens=8, messages=QUESTION
                ),
            )
        )
        assert faults.calls == 2  # the second cut stream; Claude was never asked
        assert "".join(printed) == "HelloHello"  # only this test's two explicit calls
        assert "not replayed" in (err.detail or "")
        faults.strict = False


def test_a_stream_that_fails_before_its_first_output_falls_back() -> None:
    """The other side of the rule: a stream that broke before anything reached the caller
    (the connection lost before its first event) may be sent elsewhere, and ``fallback()``
    does, with no ``idempotent=True`` needed (nothing was shown): OpenAI's stream is cut at
    once, Claude's answers (both real SDK clients)."""

    def claude_text(client: anthropic.Anthropic) -> str:
        parts = []
        for event in client.messages.create(
            model="claude-sonnet-4-6", max_tokens=64, messages=QUESTION, stream=True
        ):
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                parts.append(event.delta.text)
        return "".join(parts)

    with Faults(text="Hello from Claude") as faults:
        faults.cut_stream(after=0)  # OpenAI's 200 stream, closed before its first event
        gpt = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))
        claude = wrap(anthropic.Anthropic(api_key="sk-ant-offline", max_retries=0))
        answer = fallback(lambda: streamed(gpt), lambda: claude_text(claude))
        assert answer == "Hello from Claude"
        assert [request.api for request in faults.requests] == ["chat", "messages"]


def test_a_stream_that_ends_before_its_first_chunk_falls_back_too() -> None:
    """A 200 stream that ends cleanly with no chunk at all (``upstream.invalid_response``,
    nothing delivered) fails over; the same code after output neither fails over nor is
    sent again."""
    from normalize_errors.resilience import fails_over
    from normalize_errors.testing import Reply

    with Faults() as faults:
        faults.fail(Reply(200, {"content-type": "text/event-stream"}, b""))
        gpt = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))
        claude = wrap(anthropic.Anthropic(api_key="sk-ant-offline", max_retries=0))
        answer: Any = fallback(
            lambda: streamed(gpt),
            lambda: claude.messages.create(
                model="claude-sonnet-4-6", max_tokens=8, messages=QUESTION
            ),
        )
        assert answer.content[0].text == "Hello!"
    summary = {"chunks": 3, "phase": "text", "output_chars": 5, "terminal": False}
    late = HarnessError.from_code("upstream.invalid_response", upstream={"stream": summary})
    assert fails_over(late) is False  # output had reached the caller: no other provider
    assert replay_refusal(late, idempotent=True) is not None  # and no second attempt either


def test_the_agents_retry_policy_reads_what_a_stream_delivered() -> None:
    """The OpenAI Agents SDK hook refuses a replay the same way (``replay_refusal``)."""
    import asyncio

    from agents.retry import ModelRetryAdvice, ModelRetryNormalizedError, RetryPolicyContext

    from normalize_errors.resilience.hooks import agents_retry_policy

    def context(err: HarnessError) -> Any:
        return RetryPolicyContext(
            error=err,
            attempt=1,
            max_retries=3,
            stream=True,
            normalized=ModelRetryNormalizedError(),
            provider_advice=ModelRetryAdvice(),
        )

    shown = {"chunks": 2, "phase": "text", "output_chars": 5, "terminal": False}
    nothing = {"chunks": 1, "phase": "before_output", "output_chars": 0, "terminal": False}
    cut = HarnessError.from_code("upstream.unavailable", upstream={"stream": shown})
    early = HarnessError.from_code("upstream.unavailable", upstream={"stream": nothing})
    policy = agents_retry_policy()
    refused = asyncio.run(policy(context(cut)))
    assert refused.retry is False
    assert "delivered output to the caller" in refused.reason
    assert asyncio.run(policy(context(early))).retry is True


# -- the non-idempotent marker (issue 38, item 12) ----------------------------------------------


def ask(client: openai.OpenAI) -> Any:
    return client.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)


def test_a_non_idempotent_call_is_not_retried_once_its_request_may_have_run() -> None:
    with Faults() as faults:
        faults.fail("openai/server_error_500", times=2)
        client = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))
        err = failed(
            lambda: retrying(attempts=3, sleep=lambda s: None, non_idempotent=True)(ask, client)
        )
        assert faults.calls == 1
        assert retrying(attempts=3, sleep=lambda s: None)(ask, client)  # unmarked: retried
        assert faults.calls == 3  # the second 500, then the answer
    assert (err.problem.code, err.retryable) == ("upstream.unavailable", False)
    assert "marked non-idempotent" in (err.detail or "")


def test_nor_sent_to_a_fallback() -> None:
    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        client = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))
        claude = wrap(anthropic.Anthropic(api_key="sk-ant-offline", max_retries=0))
        err = failed(
            lambda: fallback(
                lambda: ask(client),
                lambda: claude.messages.create(
                    model="claude-sonnet-4-6", max_tokens=8, messages=QUESTION
                ),
                non_idempotent=True,
            )
        )
        assert faults.calls == 1
    assert "marked non-idempotent" in (err.detail or "")


def test_the_mark_reaches_the_helpers_inside() -> None:
    """A fallback marked non-idempotent over retrying() that was not: no retry either."""
    with Faults() as faults:
        faults.fail("openai/server_error_500")
        client = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))
        failed(
            lambda: fallback(
                lambda: retrying(attempts=3, sleep=lambda s: None)(ask, client),
                lambda: "never",
                non_idempotent=True,
            )
        )
        assert faults.calls == 1


def test_what_surely_sent_nothing_still_moves_on(closed_port: int) -> None:
    """A 429 (refused at admission) and a connection never made: replayed and failed over."""
    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_429")
        client = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))
        assert fallback(lambda: ask(client), lambda: ask(client), non_idempotent=True)
        assert faults.calls == 2
    unreachable = wrap(
        openai.OpenAI(
            api_key="sk-offline", max_retries=0, base_url=f"http://127.0.0.1:{closed_port}/v1"
        )
    )
    assert fallback(lambda: ask(unreachable), lambda: "second", non_idempotent=True) == "second"


def test_idempotent_and_non_idempotent_are_exclusive() -> None:
    with pytest.raises(ValueError, match="not both"):
        retrying(idempotent=True, non_idempotent=True)
    with pytest.raises(ValueError, match="not both"):
        fallback(lambda: 1, idempotent=True, non_idempotent=True)


def test_the_agents_retry_policy_keeps_the_mark() -> None:
    pytest.importorskip("agents")
    import asyncio

    from agents.retry import ModelRetryAdvice, ModelRetryNormalizedError, RetryPolicyContext

    from normalize_errors.resilience.hooks import agents_retry_policy

    context = RetryPolicyContext(
        error=HarnessError.from_code(
            "upstream.unavailable", "server error", upstream={"status": 500}
        ),
        attempt=1,
        max_retries=3,
        stream=False,
        normalized=ModelRetryNormalizedError(),
        provider_advice=ModelRetryAdvice(),
    )
    decision = asyncio.run(agents_retry_policy(non_idempotent=True)(context))
    assert decision.retry is False
    assert "non-idempotent" in decision.reason
    assert asyncio.run(agents_retry_policy()(context)).retry is True
