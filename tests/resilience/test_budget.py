"""Budget: one bound on a run's retries, repairs, fallbacks and breaker calls."""

from __future__ import annotations

import math
from typing import Any

import anthropic
import openai
import pytest
import tenacity

from normalize_errors import BudgetExceededError, HarnessError, wrap
from normalize_errors.resilience import Budget, CircuitBreaker, current_budget, fallback
from normalize_errors.retry import repair, retrying
from normalize_errors.testing import Faults

from .helpers import Clock, failed

QUESTION: Any = [{"role": "user", "content": "Hello?"}]


def gpt() -> openai.OpenAI:
    return wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))


def claude() -> anthropic.Anthropic:
    return wrap(anthropic.Anthropic(api_key="sk-ant-offline", max_retries=0))


def test_a_budget_of_5_attempts_ends_a_run_of_retries_and_fallbacks() -> None:
    budget = Budget(attempts=5)
    with Faults() as faults:
        faults.fail("openai/overloaded_503", times=4).fail("anthropic/overloaded_529", times=4)
        openai_client, anthropic_client = gpt(), claude()
        err = failed(
            lambda: fallback(
                lambda: retrying(attempts=4, budget=budget)(
                    openai_client.chat.completions.create, model="gpt-4o-mini", messages=QUESTION
                ),
                lambda: retrying(attempts=4, budget=budget)(
                    anthropic_client.messages.create,
                    model="claude-sonnet-4-6",
                    max_tokens=64,
                    messages=QUESTION,
                ),
                budget=budget,
            )
        )
        assert faults.calls == 5  # 4 to OpenAI (its retries), 1 to Anthropic, then no more
        faults.strict = False  # the Anthropic 529s the budget did not let through
    assert type(err) is BudgetExceededError
    assert (err.code, err.retryable, err.advice) == ("loop.budget_exceeded", False, "adjust")
    assert err.limit == {"name": "attempts", "value": 5, "observed": 6, "unit": "attempts"}
    assert (err.attempts, err.max_attempts) == (5, 5)
    assert [cause.problem.upstream["status"] for cause in err.causes] == [529, 503, 503, 503, 503]
    assert "upstream.overloaded" in (err.detail or "")


def test_nested_helpers_count_each_call_once(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=100, clock=clock)
    with Faults() as faults, Budget(attempts=3) as budget:
        assert current_budget() is budget
        faults.fail("openai/overloaded_503", times=None)
        client = gpt()
        err = failed(
            lambda: retrying(attempts=10)(  # the current budget, through the breaker
                breaker.call,
                "openai",
                client.chat.completions.create,
                model="gpt-4o-mini",
                messages=QUESTION,
            )
        )
        assert faults.calls == 3
    assert current_budget() is None
    assert err.limit is not None
    assert (err.code, err.limit["observed"], budget.attempts) == ("loop.budget_exceeded", 4, 3)
    assert len(err.causes) == 3


def test_no_wait_starts_that_the_time_budget_cannot_afford() -> None:
    budget = Budget(seconds=5.0)
    with Faults() as faults:
        faults.fail("openai/overloaded_503", times=3)
        client = gpt()
        err = failed(
            lambda: retrying(attempts=3, wait=tenacity.wait_fixed(10), budget=budget)(
                client.chat.completions.create, model="gpt-4o-mini", messages=QUESTION
            )
        )
        assert (faults.calls, faults.waits) == (1, [])
        faults.strict = False
    assert err.code == "loop.budget_exceeded"
    assert err.limit is not None
    assert (err.limit["name"], err.limit["value"]) == ("seconds", 5.0)
    assert err.limit["observed"] >= 10.0


def test_the_seconds_run_out(clock: Clock) -> None:
    budget = Budget(seconds=30.0, clock=clock)
    clock.advance(31.0)
    err = failed(lambda: fallback(lambda: "never called", budget=budget))
    assert err.limit == {"name": "seconds", "value": 30.0, "observed": 31.0, "unit": "s"}


def test_the_cost_the_caller_reports() -> None:
    budget = Budget(cost=1.0)
    calls = []

    def costly() -> str:
        calls.append(1)
        budget.charge(0.6)
        raise HarnessError.from_code("upstream.overloaded", "busy")

    err = failed(lambda: retrying(attempts=5, budget=budget, sleep=lambda s: None)(costly))
    assert len(calls) == 2
    assert err.limit == {"name": "cost", "value": 1.0, "observed": 1.2}


def test_repair_shares_the_budget() -> None:
    budget = Budget(attempts=2)
    feedback: list[str | None] = []

    def call(hint: str | None) -> str:
        feedback.append(hint)
        raise HarnessError.from_code(
            "output.schema_violation", "price must be a number", model_feedback="fix price"
        )

    err = failed(lambda: repair(call, attempts=5, budget=budget))
    assert feedback == [None, "fix price"]
    assert err.code == "loop.budget_exceeded"
    assert [cause.code for cause in err.causes] == ["output.schema_violation"] * 2


@pytest.mark.parametrize(
    "bad",
    [{"attempts": -1}, {"attempts": 2.5}, {"seconds": math.nan}, {"cost": -1.0}, {"cost": "1"}],
)
def test_bad_limits_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must be"):
        Budget(**bad)


@pytest.mark.parametrize("cost", [math.nan, -0.5, math.inf, True])
def test_bad_costs_are_refused(cost: float) -> None:
    with pytest.raises(ValueError, match="cost"):
        Budget(cost=1.0).charge(cost)


def test_repr_and_check(clock: Clock) -> None:
    budget = Budget(attempts=2, seconds=1.0, clock=clock)
    budget.check()
    assert repr(budget) == "Budget(attempts=0/2, seconds=0.000/1.0, cost=0.0/None)"
    clock.advance(2)
    with pytest.raises(BudgetExceededError):
        budget.check()


def test_the_async_helpers_share_the_budget() -> None:
    import asyncio

    from normalize_errors.retry import async_repair, async_retrying

    budget = Budget(attempts=3)
    calls: list[str] = []

    async def overloaded() -> str:
        calls.append("retry")
        raise HarnessError.from_code("upstream.overloaded", "busy")

    async def wrong(hint: str | None) -> str:
        calls.append("repair")
        raise HarnessError.from_code("output.malformed", "no JSON", model_feedback="JSON only")

    async def sleep(seconds: float) -> None:
        return None

    async def main() -> tuple[HarnessError, HarnessError]:
        first = await _failing(async_retrying(attempts=2, sleep=sleep, budget=budget)(overloaded))
        second = await _failing(async_repair(wrong, attempts=5, budget=budget))
        return first, second

    first, second = asyncio.run(main())
    assert calls == ["retry", "retry", "repair"]  # 3 attempts of the run, then no more
    assert first.code == "upstream.overloaded"
    assert first.attempts == 2
    assert second.code == "loop.budget_exceeded"
    assert [cause.code for cause in second.causes] == [
        "output.malformed", "upstream.overloaded", "upstream.overloaded",
    ]  # fmt: skip


async def _failing(awaitable: Any) -> HarnessError:
    try:
        await awaitable
    except HarnessError as err:
        return err
    raise AssertionError("no harness error was raised")


def test_a_wait_the_time_budget_affords_is_waited() -> None:
    budget = Budget(seconds=60.0)
    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_ms_429")  # retry after 976 ms: within the minute
        client = gpt()
        completion = retrying(attempts=3, budget=budget)(
            client.chat.completions.create, model="gpt-4o-mini", messages=QUESTION
        )
        assert completion.choices[0].message.content == "Hello!"
        assert faults.waits == [0.976]
    assert budget.attempts == 2


def test_an_error_is_kept_once_and_the_budgets_own_never() -> None:
    budget = Budget(attempts=9)
    err = HarnessError.from_code("upstream.overloaded", "busy")
    budget.record(err)
    budget.record(err)
    with budget.attempt() as frame:
        frame.failed(BudgetExceededError("spent"))
        frame.failed(ValueError("a bug"))
    assert [e.code for e in budget.errors] == ["upstream.overloaded", "harness.internal_error"]


def test_async_retrying_stops_at_the_budget() -> None:
    import asyncio

    from normalize_errors.retry import async_retrying

    budget = Budget(attempts=2)

    async def overloaded() -> str:
        raise HarnessError.from_code("upstream.overloaded", "busy")

    async def sleep(seconds: float) -> None:
        return None

    err = asyncio.run(_failing(async_retrying(attempts=5, sleep=sleep, budget=budget)(overloaded)))
    assert err.code == "loop.budget_exceeded"
    assert err.limit is not None
    assert err.limit["observed"] == 3
