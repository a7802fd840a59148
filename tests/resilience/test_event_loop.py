"""The framework hooks never block the event loop on Redis (issue 38, item 5).

A Redis 150 ms away each way (a delaying TCP proxy this test runs on 127.0.0.1 in front of a
real ``redis-server``) makes every round trip 300 ms. While pydantic-ai's model (through
``breaker_model``) and the Agents SDK's retry policy (``agents_retry_policy``) count calls on
a breaker kept there, a timer on the loop measures how late it fires: a round trip on the
loop would make it 300 ms late; the hooks run every round trip in a worker thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("agents")

import openai

from normalize_errors.resilience import CircuitBreaker, fails_over
from normalize_errors.resilience.hooks import agents_retry_policy, breaker_model
from normalize_errors.testing import Faults

from .conftest import RedisServer
from .helpers import DelayingProxy, LoopWatch

DELAY = 0.150
"""Seconds the proxy holds every chunk, each way."""
STALL = DELAY
"""How late the loop's timer may be, in seconds. A Redis round trip here takes 0.300, and a
round trip on the loop would make every firing after it that late. Measured on the 2-core
machine the suite runs on, shared with other jobs: 6 to 15 ms in most runs, and now and then a
firing 50 to 60 ms late when the process was not scheduled (with the breaker in memory too);
under two pytest-xdist workers and a loaded machine, now and then two such firings (2026-12-07).
So: at most one firing later than half a round trip. One such gap is the machine's, not the
code's: a run under coverage on two xdist workers saw one of 1 s with every round trip off the
loop's thread. What proves no round trip runs on the loop is the thread each one ran on
(``round_trips``, checked against the loop's); run on the loop, the round trips fail that check
in both tests, and the pydantic-ai one also its timer (checked by running them with
``asyncio.to_thread`` replaced by a direct call). The first runs of a framework are not
watched: pydantic-ai and openai import and build what they need on the loop then."""


@pytest.fixture
def far_redis(redis_server: RedisServer) -> Iterator[str]:
    """The URL of the test's ``redis-server`` seen through a proxy 150 ms away each way."""
    proxy = DelayingProxy(redis_server.port, DELAY)
    try:
        yield f"redis://127.0.0.1:{proxy.port}/0"
    finally:
        proxy.close()


def breaker(url: str) -> CircuitBreaker:
    # refresh=0: every admission reads Redis, the hardest case for the loop
    return CircuitBreaker(store=url, threshold=2, refresh=0.0, timeout=2.0)


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Each Redis round trip of a breaker: its operation and the thread it ran on."""
    from normalize_errors.resilience._redis import RedisStore

    seen: list[tuple[str, int]] = []
    for name in ("record", "open", "take_trial", "trial_succeeded"):
        real = getattr(RedisStore, name)

        def noted(self: RedisStore, *args: Any, _real: Any = real, _name: str = name) -> Any:
            seen.append((_name, threading.get_ident()))
            return _real(self, *args)

        monkeypatch.setattr(RedisStore, name, noted)
    return seen


def test_pydantic_ai_through_a_far_redis_never_stalls_the_loop(
    far_redis: str, round_trips: list[tuple[str, int]]
) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.fallback import FallbackModel
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    shared = breaker(far_redis)

    def model(name: str) -> OpenAIChatModel:
        client = openai.AsyncOpenAI(api_key="sk-offline", max_retries=0)
        return OpenAIChatModel(name, provider=OpenAIProvider(openai_client=client))

    def agent(breaker: CircuitBreaker) -> Agent[None, str]:
        primary = breaker_model(model("gpt-4o"), breaker)
        return Agent(FallbackModel(primary, model("gpt-4o-mini"), fallback_on=fails_over))

    async def main() -> tuple[LoopWatch, list[str], float]:
        warm = agent(CircuitBreaker())  # the framework's first runs, in memory, unwatched
        await warm.run("hi")
        async with warm.run_stream("hi") as result:
            await result.get_output()
        faults.fail("openai/overloaded_503").succeed().fail("openai/overloaded_503")
        watched = agent(shared)
        loop_thread.append(threading.get_ident())
        watch = LoopWatch(asyncio.get_running_loop(), STALL)
        started = time.monotonic()
        outputs = []
        for turn in range(4):
            if turn % 2:
                async with watched.run_stream("hi") as result:
                    outputs.append(str(await result.get_output()))
            else:
                outputs.append(str((await watched.run("hi")).output))
        watch.stop()
        return watch, outputs, time.monotonic() - started

    loop_thread: list[int] = []
    with Faults() as faults:
        watch, outputs, took = asyncio.run(main())
        models = [request.json()["model"] for request in faults.requests[2:]]
    assert outputs == ["Hello!"] * 4
    # 503 twice (the breaker opens), then gpt-4o is skipped without a request
    assert models == [
        "gpt-4o",
        "gpt-4o-mini",
        "gpt-4o",
        "gpt-4o-mini",
        "gpt-4o-mini",
        "gpt-4o-mini",
    ]
    assert len(round_trips) >= 6
    assert took > len(round_trips) * 2 * DELAY  # each a round trip of 300 ms ...
    assert loop_thread[0] not in {thread for _, thread in round_trips}  # ... off the loop
    assert watch.firings > 100
    assert len(watch.late) <= 1, f"the event loop was late (s): {watch.late}"


def test_the_agents_retry_policy_through_a_far_redis_never_stalls_the_loop(
    far_redis: str, round_trips: list[tuple[str, int]]
) -> None:
    from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner
    from agents.retry import ModelRetrySettings

    shared = breaker(far_redis)
    settings = ModelSettings(
        retry=ModelRetrySettings(
            max_retries=4,
            backoff={"initial_delay": 0.0, "jitter": False},
            policy=agents_retry_policy(breaker=shared, key="openai:gpt-4o-mini"),
        )
    )

    async def main() -> tuple[LoopWatch, Any, float]:
        client = openai.AsyncOpenAI(api_key="sk-offline", max_retries=0)
        model = OpenAIChatCompletionsModel("gpt-4o-mini", openai_client=client)
        await Runner.run(Agent(name="warm", model=model), "hi")  # the first run, unwatched
        faults.fail("openai/overloaded_503", times=None)
        loop_thread.append(threading.get_ident())
        watch = LoopWatch(asyncio.get_running_loop(), STALL)
        started = time.monotonic()
        agent = Agent(name="a", model=model, model_settings=settings)
        try:
            outcome: Any = await Runner.run(agent, "hi")
        except Exception as exc:
            outcome = exc
        watch.stop()
        return watch, outcome, time.monotonic() - started

    loop_thread: list[int] = []
    with Faults() as faults:
        watch, outcome, took = asyncio.run(main())
        assert faults.calls == 3  # the breaker opened after the second 503: no more retries
    assert isinstance(outcome, openai.InternalServerError)
    assert len(round_trips) >= 4  # two failures counted, two states read ...
    assert took > len(round_trips) * 2 * DELAY
    assert loop_thread[0] not in {thread for _, thread in round_trips}  # ... off the loop
    assert len(watch.late) <= 1, f"the event loop was late (s): {watch.late}"
