"""The circuit breaker in memory, through the real SDK clients replaying shipped cassettes."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import anthropic
import openai
import pytest

from normalize_errors import (
    HarnessError,
    UpstreamOverloadedError,
    UpstreamUnavailableError,
    normalize,
    wrap,
)
from normalize_errors.resilience import CircuitBreaker, counts_against_upstream
from normalize_errors.resilience._common import bounded_wait
from normalize_errors.testing import Faults, Reply

from ..support import is_instance, raised
from .helpers import Clock, failed

QUESTION: Any = [{"role": "user", "content": "Hello"}]
KEY = "anthropic:claude-sonnet-4-6"


def claude() -> anthropic.Anthropic:
    return wrap(anthropic.Anthropic(api_key="sk-ant-offline", max_retries=0))


def gpt() -> openai.OpenAI:
    return wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))


def ask_claude(breaker: CircuitBreaker, client: anthropic.Anthropic, key: str = KEY) -> Any:
    return breaker.call(
        key, client.messages.create, model="claude-sonnet-4-6", max_tokens=64, messages=QUESTION
    )


def ask_gpt(breaker: CircuitBreaker, client: openai.OpenAI, key: str = "openai:gpt") -> Any:
    return breaker.call(key, client.chat.completions.create, model="gpt-4o", messages=QUESTION)


def overloaded_529_with_retry_after(seconds: str) -> Reply:
    """The shipped 529 (anthropic/overloaded_529, which states no wait) with a ``retry-after``
    header added by this test: constructed, not recorded."""
    reply = Reply.from_cassette("anthropic/overloaded_529")[0]
    reply.headers.append(("retry-after", seconds))
    return reply


def test_an_anthropic_529_opens_the_breaker_and_the_next_call_fails_fast(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, clock=clock)
    with Faults() as faults:
        faults.fail("anthropic/overloaded_529")
        client = claude()
        first = failed(lambda: ask_claude(breaker, client))
        assert is_instance(first, anthropic.APIStatusError)  # the drop-in, unchanged
        assert first.problem.code == "upstream.overloaded"

        fast = failed(lambda: ask_claude(breaker, client))
        assert faults.calls == 1  # fn was not called: no request left the process
    assert type(fast) is UpstreamUnavailableError
    assert (fast.origin, fast.retryable, fast.advice) == ("harness", True, "retry")
    assert fast.retry_after == 5.0  # no wait stated: the first cool-down
    assert fast.upstream["breaker"] == KEY
    assert fast.upstream["opened_by"] == {
        "reason": "failures",
        "code": "upstream.overloaded",
        "status": 529,
        "upstream_code": "overloaded_error",
    }
    assert breaker.state(KEY).name == "open"


def test_a_529_with_retry_after_keeps_it_open_for_the_stated_time(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, clock=clock)
    with Faults() as faults:
        faults.fail(overloaded_529_with_retry_after("30"))
        client = claude()
        assert failed(lambda: ask_claude(breaker, client)).problem.retry_after == 30.0

        clock.advance(29.5)
        fast = failed(lambda: ask_claude(breaker, client))
        assert fast.retry_after == pytest.approx(0.5)
        assert faults.calls == 1

        clock.advance(1.0)  # past the stated 30 s: one trial goes through, and closes it
        assert breaker.state(KEY).name == "half_open"
        assert ask_claude(breaker, client).content[0].text == "Hello!"
        assert faults.calls == 2
    assert breaker.state(KEY).name == "closed"


def test_a_failed_trial_reopens_with_a_doubled_cool_down(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, cooldown=2.0, max_cooldown=5.0, clock=clock)
    with Faults() as faults:
        faults.fail("anthropic/overloaded_529", times=4)
        client = claude()
        raised(lambda: ask_claude(breaker, client))
        waits: list[float] = []
        for _ in range(3):
            waits.append(failed(lambda: ask_claude(breaker, client)).retry_after or 0.0)
            clock.advance(waits[-1] + 0.01)
            raised(lambda: ask_claude(breaker, client))  # the trial: another 529
        assert faults.calls == 4
    assert waits == [2.0, 4.0, 5.0]  # doubled, then capped by max_cooldown
    assert breaker.state(KEY).trips == 4


def test_the_threshold_counts_failures_within_the_window(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=3, window=10.0, clock=clock)
    with Faults() as faults:
        faults.fail("openai/overloaded_503", times=None)
        client = gpt()
        for _ in range(2):
            raised(lambda: ask_gpt(breaker, client))
        clock.advance(11.0)  # those two fall out of the window
        for _ in range(2):
            raised(lambda: ask_gpt(breaker, client))
        assert breaker.state("openai:gpt").name == "closed"
        raised(lambda: ask_gpt(breaker, client))  # the third within 10 s
        assert breaker.state("openai:gpt").name == "open"
        assert faults.calls == 5


@pytest.mark.parametrize(
    "cassette",
    [
        "openai/insufficient_quota_429",  # a spent quota: no sign of the upstream's health
        "openai/context_length_exceeded_400",  # the caller's request
        "openai/invalid_api_key_401",  # the caller's credential
        "openai/invalid_prompt_flagged_400",  # a policy
    ],
)
def test_the_callers_own_failures_never_open_it(clock: Clock, cassette: str) -> None:
    breaker = CircuitBreaker(threshold=1, clock=clock)
    with Faults() as faults:
        faults.fail(cassette, times=3)
        client = gpt()
        for _ in range(3):
            err = raised(lambda: ask_gpt(breaker, client))
            assert not isinstance(err, UpstreamUnavailableError) or "breaker" not in err.upstream
        assert faults.calls == 3
    assert breaker.state("openai:gpt").name == "closed"


def test_a_retryable_rate_limit_counts(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, clock=clock)
    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_ms_429")  # retry after 976 ms
        raised(lambda: ask_gpt(breaker, gpt()))
    state = breaker.state("openai:gpt")
    assert (state.name, state.opened_by["code"]) == ("open", "upstream.rate_limited")
    assert state.retry_after == pytest.approx(0.976)


def test_only_one_caller_gets_the_half_open_trial(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, trial_lease=20.0, clock=clock)
    breaker.failure(KEY, UpstreamOverloadedError("overloaded"))
    clock.advance(6.0)
    assert breaker.before(KEY) == "trial"
    other = raised(lambda: breaker.before(KEY))
    assert isinstance(other, UpstreamUnavailableError)
    assert other.upstream["state"] == "half_open"
    assert other.retry_after == pytest.approx(20.0)
    breaker.success(KEY, "trial")
    assert breaker.before(KEY) == "closed"


def test_a_url_key_is_redacted_before_it_is_stored_or_shown(clock: Clock) -> None:
    secret = "AIzaSyA1234567890abcdefghijklmnopqrstuv"
    key = f"https://user:hunter2pass@gateway.example/v1?key={secret}"
    breaker = CircuitBreaker(threshold=1, clock=clock)
    breaker.failure(key, UpstreamOverloadedError("overloaded"))
    fast = failed(lambda: breaker.call(key, lambda: None))
    shown = fast.to_json() + repr(breaker.state(key)) + repr(list(breaker.local._entries))
    assert secret not in shown
    assert "hunter2pass" not in shown
    assert "gateway.example" in fast.upstream["breaker"]


def test_breakers_live_in_a_bounded_map(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, max_keys=3, clock=clock)
    for number in range(10):
        breaker.failure(f"model-{number}", UpstreamOverloadedError("overloaded"))
    assert len(breaker.local) == 3
    assert [breaker.state(f"model-{n}").name for n in (6, 7, 8, 9)] == [
        "closed", "open", "open", "open",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("stated", "open_for"),
    [(-5.0, 5.0), (math.nan, 5.0), (math.inf, 600.0), (3.0e9, 600.0), (12.0, 12.0)],
)
def test_a_hostile_retry_after_is_capped(clock: Clock, stated: float, open_for: float) -> None:
    """A negative or NaN wait is no wait stated (the cool-down); an endless one is capped."""
    err = UpstreamOverloadedError("overloaded")
    err.retry_after = stated  # the setter takes any float: a peer's object may hold one
    breaker = CircuitBreaker(threshold=1, clock=clock)
    breaker.failure(KEY, err)
    assert breaker.state(KEY).retry_after == pytest.approx(open_for)


def test_bounded_wait() -> None:
    assert [bounded_wait(v, 60.0) for v in (-1, math.nan, math.inf, 1e12, 2.5, "3", True)] == [
        0.0, None, 60.0, 60.0, 2.5, None, None,
    ]  # fmt: skip


def test_what_counts() -> None:
    assert counts_against_upstream(normalize(TimeoutError("read timed out"))) in (True, False)
    assert counts_against_upstream(UpstreamOverloadedError("x"))
    assert not counts_against_upstream(HarnessError.from_code("upstream.invalid_request", "x"))
    open_error = UpstreamUnavailableError("open", origin="harness", upstream={"breaker": "k"})
    assert not counts_against_upstream(open_error)


def test_fn_errors_pass_through_unchanged(clock: Clock) -> None:
    breaker = CircuitBreaker(clock=clock)
    boom = ValueError("a bug in the caller")
    assert raised(lambda: breaker.call(KEY, _raise, boom)) is boom
    assert breaker.call(KEY, lambda x, y=0: x + y, 1, y=2) == 3


def _raise(exc: BaseException) -> None:
    raise exc


def test_acall_through_the_async_client(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, clock=clock)

    async def main(client: anthropic.AsyncAnthropic) -> Any:
        return await breaker.acall(
            KEY, client.messages.create, model="claude-sonnet-4-6", max_tokens=8, messages=QUESTION
        )

    with Faults() as faults:
        faults.fail(overloaded_529_with_retry_after("7"))
        client = wrap(anthropic.AsyncAnthropic(api_key="sk-ant-offline", max_retries=0))
        assert isinstance(raised(lambda: asyncio.run(main(client))), UpstreamOverloadedError)
        fast = failed(lambda: asyncio.run(main(client)))
        assert (fast.retry_after, faults.calls) == (7.0, 1)
        clock.advance(7.5)
        assert asyncio.run(main(client)).content[0].text == "Hello!"
    assert breaker.state(KEY).name == "closed"


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="threshold"):
        CircuitBreaker(threshold=0)
    with pytest.raises(ValueError, match="redis"):
        CircuitBreaker(store="memcached://localhost")
    assert repr(CircuitBreaker()) == "CircuitBreaker(store='memory', threshold=5)"


def test_a_trial_that_fails_for_the_callers_own_reason_closes_it(clock: Clock) -> None:
    """The upstream answered (a bad request): it is up again, whatever the request was."""
    breaker = CircuitBreaker(threshold=1, clock=clock)
    with Faults() as faults:
        faults.fail("anthropic/overloaded_529").fail("anthropic/context_length_exceeded_400")
        client = claude()
        failed(lambda: ask_claude(breaker, client))
        clock.advance(6.0)
        assert failed(lambda: ask_claude(breaker, client)).problem.code == (
            "context.window_exceeded"
        )
        assert faults.calls == 2
    assert breaker.state(KEY).name == "closed"


def test_the_map_needs_room_for_one_key() -> None:
    with pytest.raises(ValueError, match="max_keys"):
        CircuitBreaker(max_keys=0)
