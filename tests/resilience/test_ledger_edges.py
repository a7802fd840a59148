"""The ledger's edges in one process, through the real SDK clients: its arguments, the
caller's estimate, walls recorded by hand, what is no wall, async waits and an async stream
manager, each asserting what a caller sees."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

from normalize_errors import HarnessError, UpstreamRateLimitedError, from_response, wrap  # noqa: E402
from normalize_errors.resilience import Ledger  # noqa: E402
from normalize_errors.testing import Faults, Reply  # noqa: E402

from .helpers import failed  # noqa: E402
from .test_ledger import HELLO, KEY, Ticking, chat_body, gpt, openai_headers  # noqa: E402


@pytest.fixture
def clock() -> Ticking:
    return Ticking()


def ask(client: Any, **extra: Any) -> Any:
    return client.chat.completions.create(model="gpt-4o-mini", messages=HELLO, **extra)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"max_wait": -1}, "max_wait"),
        ({"refresh": float("nan")}, "refresh"),
        ({"lease": 0.5}, "lease"),
        ({"max_wall": 0}, "max_wall"),
        ({"tenant": "a b"}, "tenant"),
        ({"tenant": "x" * 65}, "tenant"),
        ({"store": "memcached://127.0.0.1"}, "store"),
    ],
)
def test_bad_arguments_are_named(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Ledger(**options)


def test_repr_and_close_in_memory() -> None:
    ledger = Ledger(admission=False)
    assert repr(ledger) == "Ledger(store='memory', admission=False)"
    ledger.close()  # nothing to close
    assert (ledger.round_trips, ledger.degraded, ledger.shared) == (0, False, False)


def test_the_caller_s_estimate_replaces_the_default_where_it_is_a_number(clock: Ticking) -> None:
    """1000 tokens a minute, 300 left: the default estimate (3 tokens) goes; the caller's 900
    does not; an estimate that raises or gives no numbers leaves the default."""
    given: list[Any] = []

    def estimate(request: Any) -> Any:
        value = given[-1]
        if isinstance(value, Exception):
            raise value
        return value

    ledger = Ledger(clock=clock, estimate=estimate)
    client = gpt(ledger)
    with Faults() as faults:
        faults.fail(Reply(200, openai_headers((100, 99, "1s"), (1000, 300, "60s")), chat_body()))
        given.append({})
        ask(client)  # learns the budget
        given.append({"tokens": 900, "requests": True, "bogus": 5, "output_tokens": -1})
        refused = failed(lambda: ask(client))
        assert refused.problem.upstream["budget"] == "tokens"
        assert faults.calls == 1
        given.append(RuntimeError("the caller's estimate failed"))
        ask(client)  # the default: a few tokens
        given.append({"tokens": "900"})  # not a number: the default stands
        ask(client)
        assert faults.calls == 3


def test_a_wall_recorded_by_hand_and_what_is_none(clock: Ticking) -> None:
    """``record`` for calls not made through ``wrap``: a 429 with its reset is a wall for the
    key's model; a 500, or a 429 stating nothing, is none; the ledger's own refusal is not
    recorded again."""
    ledger = Ledger(clock=clock)
    client = gpt(ledger)
    key = ledger.key(client, "gpt-4o-mini", provider="openai")
    assert key.account.provider == "openai"
    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_429")
        met = failed(lambda: ask(wrap(openai.OpenAI(api_key=KEY, max_retries=0))))
    assert ledger.record(key, met)
    refused = failed(lambda: ask(client))
    assert refused.problem.upstream["sent"] is False
    assert not ledger.record(key, refused)  # its own refusal
    assert not ledger.record(key, from_response(500, {}, '{"error": {"message": "boom"}}'))
    assert not ledger.record(key, from_response(429, {}, '{"error": {"message": "slow"}}'))
    assert ledger.refused == 1


def test_a_wall_without_a_model_holds_for_the_whole_account(clock: Ticking) -> None:
    ledger = Ledger(clock=clock)
    client = gpt(ledger)
    err = UpstreamRateLimitedError(
        "daily", retryable=False, quota={"scope": "requests", "window": "day", "resets_in": 600}
    )
    assert ledger.record(ledger.key(client), err)
    refused = failed(lambda: ask(client))
    assert refused.problem.retry_after == pytest.approx(600.0)
    assert "model" in refused.problem.upstream  # the call's model, the account's wall
    assert ledger.expected_wait(ledger.key(client)) == pytest.approx(600.0)


def test_an_async_call_waits_for_the_reset_within_the_bound(
    clock: Ticking, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger(clock=clock, max_wait=30.0)
    client = gpt(ledger, aio=True)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)

    async def calls() -> str:
        with pytest.raises(HarnessError):
            await client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
        monkeypatch.setattr(asyncio, "sleep", sleep)
        answer = await client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
        return str(answer.choices[0].message.content)

    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_429")
        assert asyncio.run(calls()) == "Hello!"
        assert faults.calls == 2
    assert slept == [pytest.approx(26.604)]
    assert ledger.waited == pytest.approx(26.604)


def test_an_async_stream_manager_behind_a_wall_is_refused_unsent(clock: Ticking) -> None:
    """``AsyncAnthropic().messages.stream(...)`` sends when entered: judged when made, from
    what this process holds, with no wait on the loop."""
    ledger = Ledger(clock=clock)
    client = wrap(anthropic.AsyncAnthropic(api_key=KEY, max_retries=0), ledger=ledger)
    model = "claude-sonnet-4-6"

    def stream() -> Any:
        return client.messages.stream(model=model, max_tokens=16, messages=HELLO)

    async def enter() -> None:
        with pytest.raises(HarnessError, match=r"max_tokens|truncated"):
            async with stream() as events:
                await events.get_final_message()

    with Faults() as faults:  # nothing known: made, and sent when entered
        faults.fail("anthropic/stream_max_tokens")
        asyncio.run(enter())
        assert faults.calls == 1
    err = UpstreamRateLimitedError(
        "slow", retryable=True, retry_after=30.0, quota={"resets_in": 30}
    )
    assert ledger.record(ledger.key(client, model), err)
    refused = failed(stream)
    assert refused.problem.upstream["sent"] is False
    assert refused.problem.retry_after == pytest.approx(30.0)


def test_an_async_failure_is_recorded_in_memory(clock: Ticking) -> None:
    ledger = Ledger(clock=clock)
    client = gpt(ledger, aio=True)

    async def twice() -> HarnessError:
        for _ in range(2):
            try:
                await client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
            except HarnessError as err:
                last = err
        return last

    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_429")
        refused = asyncio.run(twice())
        assert faults.calls == 1
    assert refused.problem.upstream["sent"] is False


def test_a_wall_held_for_the_wait_a_refusal_states_else_none(clock: Ticking) -> None:
    ledger = Ledger(clock=clock)
    client = gpt(ledger)
    key = ledger.key(client, "gpt-4o-mini")
    stated = UpstreamRateLimitedError(
        "x", retryable=False, retry_after=5.0, quota={"scope": "requests"}
    )
    assert ledger.record(key, stated)  # no reset stated: the wait stated
    assert ledger.expected_wait(key) == pytest.approx(5.0)
    bare = UpstreamRateLimitedError("x", retryable=True, quota={"scope": "requests"})
    assert not ledger.record(ledger.key(client, "gpt-4.1"), bare)  # no time at all: no wall


def test_an_async_def_method_goes_through_the_ledger(clock: Ticking) -> None:
    """google-genai's ``client.aio.models.generate_content`` is a coroutine function."""
    genai = pytest.importorskip("google.genai")
    ledger = Ledger(clock=clock)
    client = wrap(genai.Client(api_key="AIza" + "x" * 35), ledger=ledger)
    # the shape of a generateContent answer (Gemini's API reference); constructed
    body = {
        "candidates": [{"content": {"parts": [{"text": "Hi"}], "role": "model"},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 2, "candidatesTokenCount": 1, "totalTokenCount": 3},
    }  # fmt: skip

    async def call() -> str:
        answer = await client.aio.models.generate_content(model="gemini-2.5-flash", contents="Hi")
        return str(answer.text)

    with Faults() as faults:
        faults.fail(Reply(200, {}, body))
        assert asyncio.run(call()) == "Hi"
        assert faults.calls == 1
