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


# -- one budget, several branches at once (issue 38, item 4) ----------------------------------


def test_with_budget_in_two_asyncio_tasks_at_once() -> None:
    """Task A enters, task B enters, A leaves first: each leaves its own block."""
    import asyncio

    from normalize_errors.resilience import afallback

    budget = Budget(attempts=10)

    async def branch(entered: asyncio.Event, other: asyncio.Event, leave_first: bool) -> str:
        gpt = wrap(openai.AsyncOpenAI(api_key="sk-offline", max_retries=0))
        claude = wrap(anthropic.AsyncAnthropic(api_key="sk-ant-offline", max_retries=0))

        async def ask_gpt() -> str:
            completion = await gpt.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)
            return completion.choices[0].message.content or ""

        async def ask_claude() -> str:
            message = await claude.messages.create(
                model="claude-sonnet-4-6", max_tokens=8, messages=QUESTION
            )
            return str(message.content[0].text)  # type: ignore[union-attr]

        with budget:
            entered.set()
            await other.wait()  # both blocks are open now
            if not leave_first:
                await asyncio.sleep(0.01)
            answer = await afallback(ask_gpt, ask_claude)
            assert current_budget() is budget
        assert current_budget() is None
        return answer

    async def main() -> list[str]:
        a, b = asyncio.Event(), asyncio.Event()
        return list(await asyncio.gather(branch(a, b, True), branch(b, a, False)))

    with Faults() as faults:
        faults.fail("openai/overloaded_503", times=2)  # both branches fail over to Claude
        assert asyncio.run(main()) == ["Hello!", "Hello!"]
        assert faults.calls == 4
    assert budget.attempts == 4


def test_with_budget_in_two_threads_at_once() -> None:
    import threading

    budget = Budget(attempts=10)
    a_entered = threading.Event()
    entered = threading.Barrier(2)
    a_left = threading.Event()
    results: list[object] = []

    def branch(first: bool) -> None:
        try:
            client = gpt()
            if not first:
                a_entered.wait(timeout=10)  # A enters first, B second, A leaves first
            with budget:
                a_entered.set()
                entered.wait(timeout=10)
                if not first:
                    a_left.wait(timeout=10)  # the other thread leaves its block first
                results.append(
                    retrying(attempts=2)(
                        client.chat.completions.create, model="gpt-4o-mini", messages=QUESTION
                    )
                    .choices[0]
                    .message.content
                )
            if first:
                a_left.set()
        except Exception as exc:  # the old shared token list: ValueError in __exit__
            a_left.set()
            results.append(exc)

    with Faults() as faults:
        threads = [threading.Thread(target=branch, args=(first,)) for first in (True, False)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert faults.calls == 2
    assert results == ["Hello!", "Hello!"]
    assert budget.attempts == 2


# -- an attempt is a request sent (item 6) ------------------------------------------------------


def test_an_open_breakers_refusal_is_no_attempt(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, clock=clock)
    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        openai_client, anthropic_client = gpt(), claude()
        with pytest.raises(HarnessError):  # opens OpenAI's breaker
            breaker.call(
                "openai", openai_client.chat.completions.create, model="m", messages=QUESTION
            )
        budget = Budget(attempts=1)
        answer: Any = fallback(
            lambda: breaker.call(
                "openai", openai_client.chat.completions.create, model="m", messages=QUESTION
            ),
            lambda: anthropic_client.messages.create(
                model="claude-sonnet-4-6", max_tokens=8, messages=QUESTION
            ),
            budget=budget,
        )
        assert answer.content[0].text == "Hello!"
        assert [request.api for request in faults.requests] == ["chat", "messages"]
    assert budget.attempts == 1  # the one request Anthropic got
    assert [err.code for err in budget.errors] == ["upstream.unavailable"]  # kept, not charged


def test_retries_around_an_open_breaker_charge_the_one_request(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, clock=clock)
    budget = Budget(attempts=10)
    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        client = gpt()
        err = failed(
            lambda: retrying(attempts=3, budget=budget)(
                breaker.call,
                "openai",
                client.chat.completions.create,
                model="gpt-4o-mini",
                messages=QUESTION,
            )
        )
        assert faults.calls == 1
        assert faults.waits[1:] == [5.0]  # backoff after the 503, then the breaker's wait
    assert err.problem.code == "upstream.unavailable"
    assert budget.attempts == 1
