"""The ledger in one process, through the real SDK clients (``Faults`` serves the shipped
cassettes and scripted answers on their real transports): a wall met once fails every later
call of that account at once with no request sent, as the same typed error with the time to the
reset; a billing wall stays until cleared; admission learns the budgets of the providers' own
headers and settles against the usage; a refusal is no attempt, a breaker does not count it and
a fallback moves on from it."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
genai = pytest.importorskip("google.genai")

from normalize_errors import (  # noqa: E402
    HarnessError,
    UpstreamRateLimitedError,
    wrap,
)
from normalize_errors.resilience import Budget, CircuitBreaker, Ledger, fallback  # noqa: E402
from normalize_errors.testing import Faults, Reply  # noqa: E402

from .helpers import Clock, failed  # noqa: E402

KEY = "sk-proj-" + "Ab3dE6gH" * 6
OTHER = "sk-proj-" + "Zy9xW8vU" * 6
HELLO = [{"role": "user", "content": "Hello"}]


class Ticking(Clock):
    """A monotonic clock that ``time.sleep`` moves (the ledger waits with it)."""

    def __init__(self) -> None:
        super().__init__(1000.0)


@pytest.fixture
def clock() -> Ticking:
    return Ticking()


def gpt(ledger: Ledger, key: str = KEY, *, aio: bool = False) -> Any:
    made = openai.AsyncOpenAI if aio else openai.OpenAI
    return wrap(made(api_key=key, max_retries=0), ledger=ledger)


def chat_body(prompt: int = 3, completion: int = 1) -> dict[str, Any]:
    """A chat completion (the shape of the SDK's own test fixtures; the usage as given)."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Hello!"}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
    }  # fmt: skip


def openai_headers(requests: tuple[int, int, str], tokens: tuple[int, int, str]) -> dict[str, str]:
    """OpenAI's rate-limit headers (their names from its rate-limits guide)."""
    return {
        "x-ratelimit-limit-requests": str(requests[0]),
        "x-ratelimit-remaining-requests": str(requests[1]),
        "x-ratelimit-reset-requests": requests[2],
        "x-ratelimit-limit-tokens": str(tokens[0]),
        "x-ratelimit-remaining-tokens": str(tokens[1]),
        "x-ratelimit-reset-tokens": tokens[2],
    }


# -- walls ----------------------------------------------------------------------------------------


def test_a_wall_met_once_fails_the_next_call_at_once_with_no_request_sent(clock: Ticking) -> None:
    ledger = Ledger(clock=clock)
    client = gpt(ledger)
    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_429")
        first = failed(lambda: client.chat.completions.create(model="gpt-4o-mini", messages=HELLO))
        assert first.problem.retry_after == 26.604
        clock.advance(6.0)
        second = failed(lambda: client.chat.completions.create(model="gpt-4o-mini", messages=HELLO))
        assert faults.calls == 1  # no request sent
    problem = second.problem
    assert isinstance(second, UpstreamRateLimitedError)
    assert (problem.code, problem.origin, problem.retryable) == (
        "upstream.rate_limited",
        "harness",
        True,
    )
    assert problem.retry_after == pytest.approx(20.604)
    assert problem.upstream["sent"] is False
    assert problem.upstream["status"] == 429
    assert problem.upstream["code"] == "rate_limit_exceeded"
    assert problem.quota is not None
    assert problem.quota.scope == "tokens"
    assert problem.quota.resets_in == pytest.approx(20.604)
    assert KEY not in repr(problem)
    assert KEY not in str(problem.to_dict())
    assert ledger.refused == 1


def test_the_wall_holds_for_its_account_and_model_only(clock: Ticking) -> None:
    ledger = Ledger(clock=clock)
    client, other_key = gpt(ledger), gpt(ledger, OTHER)
    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_429")
        failed(lambda: client.chat.completions.create(model="gpt-4o-mini", messages=HELLO))
        client.chat.completions.create(model="gpt-4.1", messages=HELLO)  # another model
        other_key.chat.completions.create(model="gpt-4o-mini", messages=HELLO)  # another key
        assert faults.calls == 3
        clock.advance(27.0)  # the wait the provider stated is over
        client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
        assert faults.calls == 4


def test_a_billing_wall_stays_for_the_whole_account_until_cleared(clock: Ticking) -> None:
    ledger = Ledger(clock=clock)
    client = gpt(ledger)
    with Faults() as faults:
        faults.fail("openai/insufficient_quota_429")
        failed(lambda: client.chat.completions.create(model="gpt-4o-mini", messages=HELLO))
        clock.advance(40 * 86400.0)  # past any reset: it needs a person
        refused = failed(lambda: client.chat.completions.create(model="gpt-4.1", messages=HELLO))
        assert faults.calls == 1
        assert (refused.problem.retryable, refused.problem.retry_after) == (False, None)
        assert refused.problem.advice == "human"
        assert refused.problem.quota is not None
        assert refused.problem.quota.billing
        assert ledger.expected_wait(ledger.key(client, "gpt-4.1")) is None
        ledger.clear(ledger.key(client))  # someone paid
        client.chat.completions.create(model="gpt-4.1", messages=HELLO)
        assert faults.calls == 2


def test_a_gemini_daily_wall_holds_until_midnight_pacific(clock: Ticking) -> None:
    """google-genai, sync and async: the daily quota's wall holds until the reset the
    QuotaFailure implies, not for RetryInfo's 36 seconds."""
    ledger = Ledger(clock=clock)
    client = wrap(genai.Client(api_key="AIza" + "x" * 35), ledger=ledger)
    with Faults() as faults:
        faults.fail("google/rate_limit_per_day_retry_info_429")
        met = failed(
            lambda: client.models.generate_content(model="gemini-2.5-flash", contents="Hello")
        )
        reset = met.problem.quota.resets_in if met.problem.quota else None
        assert reset is not None
        assert reset > 36
        clock.advance(37.0)
        refused = failed(
            lambda: client.models.generate_content(model="gemini-2.5-flash", contents="Hello")
        )
        assert refused.problem.retry_after == pytest.approx(reset - 37.0, abs=0.01)

        async def later() -> HarnessError:
            try:
                await client.aio.models.generate_content(model="gemini-2.5-flash", contents="Hi")
            except HarnessError as err:
                return err
            raise AssertionError("not refused")

        assert asyncio.run(later()).problem.upstream["sent"] is False
        assert faults.calls == 1
        clock.advance(reset)
        client.models.generate_content(model="gemini-2.5-flash", contents="Hello")
        assert faults.calls == 2


def test_a_call_waits_for_the_reset_within_the_bound(
    clock: Ticking, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger(clock=clock, max_wait=30.0)
    client = gpt(ledger)
    slept: list[float] = []
    with Faults() as faults:
        mine = threading.get_ident()
        real_sleep = time.sleep

        def sleep(seconds: float) -> None:
            if threading.get_ident() != mine:  # another thread of the process (a CI run saw one)
                real_sleep(seconds)
                return
            slept.append(seconds)
            clock.advance(seconds)

        monkeypatch.setattr(time, "sleep", sleep)
        faults.fail("openai/rate_limit_tpm_429")
        failed(lambda: client.chat.completions.create(model="gpt-4o-mini", messages=HELLO))
        answer = client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
        assert answer.choices[0].message.content == "Hello!"
        assert slept == [pytest.approx(26.604)]
        assert faults.calls == 2
        short = Ledger(clock=clock, max_wait=10.0)
        impatient = gpt(short)
        faults.fail("openai/rate_limit_tpm_429")
        failed(lambda: impatient.chat.completions.create(model="gpt-4o-mini", messages=HELLO))
        failed(lambda: impatient.chat.completions.create(model="gpt-4o-mini", messages=HELLO))
        assert slept == [pytest.approx(26.604)]  # 26.6 s is past a 10 s bound: no wait at all
        assert faults.calls == 3


# -- admission ------------------------------------------------------------------------------------


def test_admission_learns_the_budgets_of_a_success_and_refuses_when_spent(clock: Ticking) -> None:
    """Two requests left of 3, refilled over 40 s: the third call waits 20 s for room."""
    ledger = Ledger(clock=clock)
    client = gpt(ledger)
    with Faults() as faults:
        faults.fail(Reply(200, openai_headers((3, 1, "40s"), (1000, 900, "6s")), chat_body()))
        client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
        client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
        refused = failed(
            lambda: client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
        )
        assert faults.calls == 2
    problem = refused.problem
    assert problem.upstream["budget"] == "requests"
    assert problem.retry_after == pytest.approx(20.0)
    assert problem.quota is not None
    assert (problem.quota.scope, problem.quota.source) == ("requests", "admission")
    assert ledger.expected_wait(ledger.key(client, "gpt-4o-mini")) == pytest.approx(20.0)
    assert ledger.expected_wait(ledger.key(client, "gpt-4.1")) == 0.0  # nothing learned there


def test_a_reservation_is_settled_against_the_usage_reported(clock: Ticking) -> None:
    """A call reserves its input (characters / 4) and max_tokens; the usage gives back
    what it did not use, so the next call fits."""
    ledger = Ledger(clock=clock)
    client = gpt(ledger)
    with Faults() as faults:
        # 300 tokens of 1000 left, whole again in 42 s
        faults.fail(Reply(200, openai_headers((100, 99, "1s"), (1000, 300, "42s")), chat_body()))
        client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
        # each call reserves 3 + 250 (9 characters / 4, max_tokens); it used 3 + 1: 249 back
        faults.fail(Reply(200, {}, chat_body(3, 1)), times=2)
        client.chat.completions.create(model="gpt-4o-mini", messages=HELLO, max_tokens=250)
        client.chat.completions.create(model="gpt-4o-mini", messages=HELLO, max_tokens=250)
        assert faults.calls == 3
        # 1000 asked for
        refused = failed(
            lambda: client.chat.completions.create(
                model="gpt-4o-mini", messages=HELLO, max_tokens=1000
            )
        )
    assert refused.problem.upstream["budget"] in ("tokens", "output_tokens")
    # learned: 300 left, 700 tokens per 42 s; each call took 253 and gave back 249: 292 left
    assert refused.problem.retry_after == pytest.approx((1000 - 292) / (700 / 42), rel=0.001)


def test_anthropic_budgets_and_the_async_client(clock: Ticking) -> None:
    """Anthropic's headers (RFC 3339 resets) through AsyncAnthropic: input tokens spent."""
    ledger = Ledger(clock=clock)
    client = wrap(anthropic.AsyncAnthropic(api_key=KEY, max_retries=0), ledger=ledger)

    def instant(seconds: float) -> str:  # RFC 3339, ``seconds`` from now (this machine's clock)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + seconds))
        return stamp + f".{int((time.time() % 1) * 1000):03d}Z"

    headers = {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "49",
        "anthropic-ratelimit-requests-reset": instant(1.2),
        "anthropic-ratelimit-input-tokens-limit": "30000",
        "anthropic-ratelimit-input-tokens-remaining": "10",
        "anthropic-ratelimit-input-tokens-reset": instant(30.0),
    }
    message = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "Hello!"}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 8, "output_tokens": 2},
    }  # fmt: skip
    long_prompt = [{"role": "user", "content": "x" * 400}]  # more than the 10 tokens left

    async def calls() -> HarnessError:
        await client.messages.create(model="claude-sonnet-4-6", max_tokens=16, messages=HELLO)
        try:
            await client.messages.create(
                model="claude-sonnet-4-6", max_tokens=16, messages=long_prompt
            )
        except HarnessError as err:
            return err
        raise AssertionError("admitted")

    with Faults() as faults:
        faults.fail(Reply(200, headers, message))
        refused = asyncio.run(calls())
        assert faults.calls == 1
    assert refused.problem.upstream["budget"] == "input_tokens"
    # 404 characters (the prompt and its role) are 101 tokens; 10 are left, and the bucket
    # refills 29990 tokens in the 30 s to its reset
    assert refused.problem.retry_after == pytest.approx((101 - 10) / (29990 / 30), abs=0.005)


def test_walls_only_when_admission_is_off(clock: Ticking) -> None:
    ledger = Ledger(clock=clock, admission=False)
    client = gpt(ledger)
    with Faults() as faults:
        faults.fail(Reply(200, openai_headers((3, 0, "40s"), (1000, 0, "6s")), chat_body()))
        for _ in range(3):
            client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
        assert faults.calls == 3


# -- with the other helpers ---------------------------------------------------------------------


def test_a_refusal_is_no_attempt_no_breaker_failure_and_a_fallback_moves_on(clock: Ticking) -> None:
    ledger = Ledger(clock=clock)
    breaker = CircuitBreaker(threshold=1, clock=clock)
    client = gpt(ledger)
    claude = wrap(anthropic.Anthropic(api_key=OTHER, max_retries=0), ledger=ledger)

    def ask_gpt() -> Any:
        return breaker.call(
            "openai", client.chat.completions.create, model="gpt-4o-mini", messages=HELLO
        )

    def ask_claude() -> Any:
        return claude.messages.create(model="claude-sonnet-4-6", max_tokens=16, messages=HELLO)

    with Faults() as faults:
        faults.fail("openai/insufficient_quota_429")
        failed(ask_gpt)
        budget = Budget(attempts=1)
        with budget:
            answer = fallback(ask_gpt, ask_claude)  # OpenAI refused here: no attempt spent
        assert answer.content[0].text == "Hello!"
        assert [r.host for r in faults.requests] == ["api.openai.com", "api.anthropic.com"]
        assert budget.attempts == 1
        assert breaker.state("openai").name == "closed"  # a spent quota, then a refusal


def test_expected_wait_picks_the_provider_with_room(clock: Ticking) -> None:
    ledger = Ledger(clock=clock)
    busy, free = gpt(ledger), gpt(ledger, OTHER)
    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_429")
        failed(lambda: busy.chat.completions.create(model="gpt-4o-mini", messages=HELLO))
        keys = {"busy": ledger.key(busy, "gpt-4o-mini"), "free": ledger.key(free, "gpt-4o-mini")}
        waits: dict[str, float] = {}
        for name, key in keys.items():
            wait = ledger.expected_wait(key)
            waits[name] = 1e9 if wait is None else wait  # None: behind a billing wall
        assert waits == {"busy": pytest.approx(26.604), "free": 0.0}
        assert min(waits, key=waits.__getitem__) == "free"
        assert faults.calls == 1


def test_the_ledger_keeps_no_credential(clock: Ticking) -> None:
    ledger = Ledger(clock=clock)
    client = gpt(ledger)
    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_429")
        failed(lambda: client.chat.completions.create(model="gpt-4o-mini", messages=HELLO))
    key = ledger.key(client, "gpt-4o-mini")
    kept = repr(vars(ledger.local)) + repr(ledger.local._accounts) + repr(key) + key.account.label
    for account in ledger.local._accounts.values():
        kept += repr(account.walls) + repr(account.budgets) + account.label
    assert KEY not in kept
    assert KEY[-12:] not in kept
    assert key.account.label.startswith("openai api.openai.com key#")


def test_streams_and_raw_responses_go_through_the_ledger(clock: Ticking) -> None:
    ledger = Ledger(clock=clock)
    client = gpt(ledger)
    with Faults() as faults:
        faults.fail(Reply(200, openai_headers((3, 0, "30s"), (1000, 900, "6s")), chat_body()))
        raw = client.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=HELLO)
        assert raw.parse().choices[0].message.content == "Hello!"
        refused = failed(
            lambda: list(
                client.chat.completions.create(model="gpt-4o-mini", messages=HELLO, stream=True)
            )
        )
        assert refused.problem.upstream["budget"] == "requests"
        assert faults.calls == 1
        clock.advance(11.0)  # one request back (3 per 30 s)
        chunks = list(
            client.chat.completions.create(model="gpt-4o-mini", messages=HELLO, stream=True)
        )
        assert chunks
        assert faults.calls == 2


def test_two_clients_of_one_credential_are_one_account(clock: Ticking) -> None:
    """Keyed by what the client's credential and address are, never by the client object:
    anthropic's ``client.organization`` is a resource object, whose text differs per client."""
    ledger = Ledger(clock=clock)
    made = [wrap(anthropic.Anthropic(api_key=KEY, max_retries=0), ledger=ledger) for _ in range(2)]
    assert ledger.key(made[0]).account.key == ledger.key(made[1]).account.key
    with Faults() as faults:
        faults.fail("anthropic/rate_limit_429")
        failed(
            lambda: made[0].messages.create(
                model="claude-sonnet-4-6", max_tokens=16, messages=HELLO
            )
        )
        refused = failed(
            lambda: made[1].messages.create(
                model="claude-sonnet-4-6", max_tokens=16, messages=HELLO
            )
        )
        assert faults.calls == 1
    assert refused.problem.upstream["sent"] is False
