"""The breaker's policies (Resilience4j's vocabulary) and its in-process store, through the
real SDK clients replaying shipped cassettes: failure rate, slow call rate, N half-open
trials, forced open and disabled, a monotonic clock, and which breakers a full map keeps."""

from __future__ import annotations

import time
from typing import Any

import openai
import pytest

from normalize_errors import (
    HarnessError,
    UpstreamOverloadedError,
    UpstreamUnavailableError,
    wrap,
)
from normalize_errors.resilience import Budget, CircuitBreaker, fallback
from normalize_errors.testing import Faults

from ..support import raised
from .helpers import Clock, failed

QUESTION: Any = [{"role": "user", "content": "Hello"}]
KEY = "openai:gpt-4o-mini"


def gpt() -> openai.OpenAI:
    return wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))


def ask(breaker: CircuitBreaker, client: openai.OpenAI, key: str = KEY) -> Any:
    return breaker.call(key, client.chat.completions.create, model="gpt-4o-mini", messages=QUESTION)


def outcome(breaker: CircuitBreaker, client: openai.OpenAI, key: str = KEY) -> str:
    try:
        ask(breaker, client, key)
    except HarnessError as err:
        return err.problem.code
    return "ok"


# -- the failure rate ----------------------------------------------------------------------------


def test_a_failure_rate_over_a_minimum_number_of_calls_opens_it(clock: Clock) -> None:
    breaker = CircuitBreaker(failure_rate_threshold=50, minimum_number_of_calls=4, clock=clock)
    with Faults() as faults:
        faults.fail("openai/overloaded_503").succeed().fail("openai/overloaded_503")
        client = gpt()
        seen = [outcome(breaker, client) for _ in range(3)]
        assert seen == ["upstream.overloaded", "ok", "upstream.overloaded"]
        assert breaker.state(KEY).name == "closed"  # 2 of 3 failed, but 3 < 4 calls
        faults.fail("openai/overloaded_503")
        assert outcome(breaker, client) == "upstream.overloaded"  # 3 of 4: 75%
        state = breaker.state(KEY)
        assert (state.name, state.opened_by["reason"]) == ("open", "failure_rate")
        assert outcome(breaker, client) == "upstream.unavailable"  # fails fast
        assert faults.calls == 4


def test_a_rate_under_the_threshold_keeps_it_closed(clock: Clock) -> None:
    """The caller's own failures (a context overflow) count as calls the upstream answered."""
    breaker = CircuitBreaker(failure_rate_threshold=50, minimum_number_of_calls=4, clock=clock)
    with Faults() as faults:
        faults.fail("openai/context_length_exceeded_400", times=3)
        faults.fail("openai/overloaded_503", times=2)
        client = gpt()
        seen = [outcome(breaker, client) for _ in range(5)]
    assert seen.count("upstream.overloaded") == 2
    state = breaker.state(KEY)
    assert (state.name, state.calls, state.failures) == ("closed", 5, 2)  # 40% < 50%


def test_the_window_forgets(clock: Clock) -> None:
    breaker = CircuitBreaker(
        failure_rate_threshold=50, minimum_number_of_calls=2, window=10.0, clock=clock
    )
    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        client = gpt()
        assert outcome(breaker, client) == "upstream.overloaded"
        clock.advance(12.0)  # past the window (and its last bucket)
        assert outcome(breaker, client) == "ok"
    state = breaker.state(KEY)
    assert (state.name, state.calls, state.failures) == ("closed", 1, 0)


def test_a_slow_call_rate_opens_it(clock: Clock) -> None:
    breaker = CircuitBreaker(
        slow_call_rate_threshold=50,
        slow_call_duration_threshold=2.0,
        minimum_number_of_calls=2,
        clock=clock,
    )
    with Faults() as faults:
        client = gpt()

        def slow_answer() -> Any:
            clock.advance(3.0)  # the call takes 3 s on the breaker's clock
            return client.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)

        breaker.call(KEY, client.chat.completions.create, model="m", messages=QUESTION)
        assert breaker.call(KEY, slow_answer).choices[0].message.content == "Hello!"
        fast = failed(lambda: ask(breaker, client))  # 1 slow call of 2: 50%
        assert faults.calls == 2
    assert isinstance(fast, UpstreamUnavailableError)
    assert fast.upstream["opened_by"] == {"reason": "slow_call_rate"}
    assert "after slow_call_rate" in (fast.detail or "")


# -- half-open trials ----------------------------------------------------------------------------


def test_n_trial_calls_in_half_open(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, half_open_calls=3, clock=clock)
    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        client = gpt()
        assert outcome(breaker, client) == "upstream.overloaded"
        clock.advance(5.5)
        modes = [breaker.before(KEY) for _ in range(3)]
        assert modes == ["trial"] * 3
        fourth = failed(lambda: breaker.before(KEY))
        assert fourth.upstream["state"] == "half_open"
        for _ in range(2):
            breaker.success(KEY, "trial")
        assert breaker.state(KEY).name == "half_open"  # 2 of the 3 trials worked so far
        breaker.success(KEY, "trial")
        assert breaker.state(KEY).name == "closed"
        assert faults.calls == 1


def test_one_failed_trial_opens_it_again(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, half_open_calls=2, cooldown=2.0, clock=clock)
    with Faults() as faults:
        faults.fail("openai/overloaded_503", times=2)
        client = gpt()
        outcome(breaker, client)
        clock.advance(2.5)
        assert outcome(breaker, client) == "upstream.overloaded"  # a trial: 503 again
        state = breaker.state(KEY)
        assert (state.name, state.trips, state.retry_after) == ("open", 2, 4.0)


# -- switches ------------------------------------------------------------------------------------


def test_forced_open_fails_fast_and_the_fallback_moves_on(clock: Clock) -> None:
    breaker = CircuitBreaker(clock=clock)
    breaker.force_open(KEY)
    with Faults() as faults:
        client = gpt()
        err = failed(lambda: ask(breaker, client))
        assert faults.calls == 0
        answer = fallback(
            lambda: ask(breaker, client),
            lambda: ask(breaker, client, "openai:gpt-4.1"),
        )
        assert answer.choices[0].message.content == "Hello!"
        assert faults.calls == 1
    assert (err.code, err.retryable, err.retry_after) == ("upstream.unavailable", False, None)
    assert err.upstream["state"] == "forced_open"
    assert breaker.state(KEY).name == "forced_open"
    clock.advance(10_000.0)
    assert breaker.is_open(KEY)  # held until reset
    breaker.reset(KEY)
    assert breaker.state(KEY).name == "closed"


def test_disabled_lets_everything_through_and_counts_nothing(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, clock=clock)
    breaker.disable(KEY)
    with Faults() as faults:
        faults.fail("openai/overloaded_503", times=3)
        client = gpt()
        assert [outcome(breaker, client) for _ in range(4)] == [
            "upstream.overloaded", "upstream.overloaded", "upstream.overloaded", "ok",
        ]  # fmt: skip
    assert breaker.state(KEY).name == "disabled"
    with Budget(attempts=3) as budget:  # a disabled breaker's call is still a request sent
        outcome(breaker, client)
    assert budget.attempts == 1


# -- the clock -----------------------------------------------------------------------------------


def test_a_wall_clock_stepped_back_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The state in this process runs on ``time.monotonic``: NTP stepping the wall clock back
    an hour (faked here) neither holds the breaker open nor closes it early."""
    breaker = CircuitBreaker(threshold=1, cooldown=0.2)
    assert breaker.clock is time.monotonic  # not time.time, which NTP steps
    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        client = gpt()
        assert outcome(breaker, client) == "upstream.overloaded"
        real = time.time
        monkeypatch.setattr(time, "time", lambda: real() - 3600.0)
        assert outcome(breaker, client) == "upstream.unavailable"
        deadline = time.monotonic() + 0.25
        while time.monotonic() < deadline:  # Faults notes time.sleep: wait on the clock
            pass
        assert outcome(breaker, client) == "ok"  # the trial, 0.2 s later as promised
        assert faults.calls == 2


# -- the bounded map -----------------------------------------------------------------------------


def test_the_open_breaker_outlives_closed_ones_in_a_full_map(clock: Clock) -> None:
    """The provider that is down stays open however many other keys fail once."""
    breaker = CircuitBreaker(threshold=2, max_keys=16, clock=clock)
    with Faults() as faults:
        faults.fail("openai/overloaded_503", times=None)
        client = gpt()
        for _ in range(2):
            outcome(breaker, client, "down")
        for number in range(40):  # 40 other keys fail once each: closed, counted
            assert outcome(breaker, client, f"model-{number}") == "upstream.overloaded"
        assert len(breaker.local) == 16
        assert outcome(breaker, client, "down") == "upstream.unavailable"
        assert faults.calls == 42  # the last call to "down" sent nothing


def test_reading_a_breaker_counts_as_using_it(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=2, max_keys=2, clock=clock)
    breaker.failure("first", UpstreamOverloadedError("x"))
    breaker.failure("second", UpstreamOverloadedError("x"))
    assert breaker.before("first") == "closed"  # read: now the most recently used
    breaker.failure("third", UpstreamOverloadedError("x"))
    assert breaker.state("first").failures == 1
    assert breaker.state("second").failures == 0  # dropped: the least recently used


def test_bad_policy_arguments() -> None:
    with pytest.raises(ValueError, match="percentage"):
        CircuitBreaker(failure_rate_threshold=0)
    with pytest.raises(ValueError, match="percentage"):
        CircuitBreaker(slow_call_rate_threshold=150)
    with pytest.raises(ValueError, match="half_open_calls"):
        CircuitBreaker(half_open_calls=0)
    with pytest.raises(ValueError, match="tenant"):
        CircuitBreaker(tenant="a:b")
    assert CircuitBreaker(failure_rate_threshold=50).threshold is None
    assert CircuitBreaker(failure_rate_threshold=50, threshold=3).threshold == 3
    assert raised(lambda: CircuitBreaker(threshold=0)).args[0].startswith("threshold")
