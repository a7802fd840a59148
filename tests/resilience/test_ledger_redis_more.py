"""The ledger through a real ``redis-server`` (one per test), at its edges: what one account
learned rides on another's round trip, a wall cleared by one worker is cleared for all, a
wall recorded reaches this process's fresh copies, an expired wall in a copy, a lease too
small for a call, the bounds on what a process keeps, and a script's reply out of shape."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

openai = pytest.importorskip("openai")
redis = pytest.importorskip("redis")

from normalize_errors import HarnessError, UpstreamRateLimitedError, wrap  # noqa: E402
from normalize_errors.resilience._ledger_redis import parse  # noqa: E402
from normalize_errors.testing import Faults  # noqa: E402

from .conftest import RedisServer  # noqa: E402
from .helpers import Clock, failed  # noqa: E402
from .test_ledger_redis import HELLO, OTHER, ask, budget, dump, gpt, ledger  # noqa: E402


def asyncio_run(awaitable: Any) -> Any:
    import asyncio

    async def run() -> Any:
        return await awaitable

    return asyncio.run(run())


MODEL = hashlib.sha256(b"gpt-4o-mini").hexdigest()[:32]


def test_what_one_account_learned_rides_on_another_account_s_round_trip(
    redis_server: RedisServer,
) -> None:
    shared = ledger(redis_server.url, refresh=0.0, lease=0.0)
    first, second = gpt(shared), gpt(shared, OTHER)
    with Faults() as faults:
        faults.fail(budget(60, 5))
        ask(first)  # learns the first account's budget: held until a round trip
        name = shared.store.remote.key(shared.key(first).account.key)  # type: ignore[union-attr]
        assert f"b:{MODEL}:requests" not in dump(redis_server.url).get(name, {})
        trips = shared.round_trips
        ask(second)  # one round trip: the second account's admission and the first's news
        assert shared.round_trips == trips + 1
    assert dump(redis_server.url)[name][f"b:{MODEL}:requests"].startswith("60:")


def test_a_wall_cleared_by_one_worker_is_cleared_for_every_worker(
    redis_server: RedisServer,
) -> None:
    """The worker that clears drops its copies at once; another sees it once its copy is
    older than ``refresh`` (the staleness bound)."""
    clock = Clock(100.0)
    one = ledger(redis_server.url, refresh=1.0, clock=clock)
    two = ledger(redis_server.url, refresh=60.0)
    with Faults() as faults:
        faults.fail("openai/insufficient_quota_429")
        failed(lambda: ask(gpt(one)))
        failed(lambda: ask(gpt(two)))  # the billing wall, from Redis; now in two's copy
        two.clear(two.key(gpt(two)))  # someone paid
        ask(gpt(two))
        failed(lambda: ask(gpt(one)))  # within one's bound: its copy still holds the wall
        clock.advance(1.0)
        ask(gpt(one))
        assert faults.calls == 3


def test_a_wall_recorded_reaches_this_process_s_fresh_copies(redis_server: RedisServer) -> None:
    clock = Clock(100.0)
    shared = ledger(redis_server.url, refresh=60.0, clock=clock)
    client = gpt(shared)
    with Faults() as faults:
        ask(client)  # a fresh copy of the account, for a minute
        trips = shared.round_trips
        wall = UpstreamRateLimitedError(
            "x", retryable=True, retry_after=5.0, quota={"resets_in": 5}
        )
        assert shared.record(shared.key(client, "gpt-4o-mini"), wall)
        assert shared.round_trips == trips + 1  # the wall's write
        refused = failed(lambda: ask(client))
        assert refused.problem.retry_after == pytest.approx(5.0)
        clock.advance(6.0)  # the wall in the copy is over; the copy is still fresh
        ask(client)
        assert shared.round_trips == trips + 1  # decided from the copy
        assert faults.calls == 2


def test_a_lease_too_small_for_the_call_asks_redis(redis_server: RedisServer) -> None:
    clock = Clock(100.0)
    shared = ledger(redis_server.url, refresh=60.0, lease=0.01, clock=clock)
    client = gpt(shared)
    with Faults() as faults:
        faults.fail(budget(1000, 1000))
        ask(client)  # learns: 1000 requests, tokens plentiful
        clock.advance(61.0)
        ask(client)  # leases 1% of each limit: 10 requests
        trips = shared.round_trips
        ask(client)  # from the lease
        assert shared.round_trips == trips
        big = openai.OpenAI(api_key="sk-proj-" + "Ab3dE6gH" * 6, max_retries=0)
        wrapped = wrap(big, ledger=shared)
        wrapped.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "x" * 400_000}]
        )  # 100,000 tokens: more than the lease of 10,000
        assert shared.round_trips == trips + 1


def test_a_process_keeps_at_most_max_keys_copies_and_pending_accounts(
    redis_server: RedisServer,
) -> None:
    shared = ledger(redis_server.url, refresh=60.0, max_keys=2)
    store: Any = shared.store
    client = gpt(shared)
    with Faults() as faults:
        for model in ("m1", "m2", "m3"):
            ask(client, model)  # a copy of each: the oldest goes
        assert [model for _, model in store._copies] == [
            shared.key(client, m).field for m in ("m2", "m3")
        ]
        assert faults.calls == 3
    for n in range(5):
        store.note(f"account{n}", [("charge", "m", "tokens", 1.0)])
    assert len(store._pending) == 2
    store.note("account4", [("charge", "m", "tokens", 1.0)] * 300)
    assert len(store._pending["account4"]) == 256


def test_a_script_reply_out_of_shape() -> None:
    with pytest.raises(ValueError, match="out of shape"):
        parse([1, 0], "m", 0.0)
    with pytest.raises(ValueError, match="out of shape"):
        parse(None, "m", 0.0)
    junk = [b"1", "nan", None, 7, b"", "-2", "", "x", "", b"tokens", "1e400", "5", "1", "0", "0"]
    decision, leases = parse(junk, "m", 0.0, {"tokens": 5.0}, reserve=True)
    assert decision.granted
    assert (decision.wait, decision.walls, decision.budgets, leases) == (0.0, {}, {}, {})


def test_an_async_call_from_a_fresh_copy_makes_no_round_trip(redis_server: RedisServer) -> None:
    import asyncio

    shared = ledger(redis_server.url, refresh=60.0)
    client = gpt(shared, aio=True)

    async def twice() -> None:
        for _ in range(2):
            await client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)

    with Faults() as faults:
        asyncio.run(twice())
        assert faults.calls == 2
    assert shared.round_trips == 1  # the first call's; the second decided on the loop
    shared.close()  # the connections closed: the next round trip opens one again
    with Faults():
        ask(gpt(shared, OTHER))
    assert shared.round_trips == 2
    assert not shared.degraded


def test_an_async_stream_manager_is_judged_from_the_copy(redis_server: RedisServer) -> None:
    anthropic = pytest.importorskip("anthropic")
    shared = ledger(redis_server.url, refresh=60.0)
    client = wrap(anthropic.AsyncAnthropic(api_key=OTHER, max_retries=0), ledger=shared)
    model = "claude-sonnet-4-6"

    def stream() -> Any:
        return client.messages.stream(model=model, max_tokens=16, messages=HELLO)

    async def enter() -> None:
        with pytest.raises(HarnessError):
            async with stream() as events:
                await events.get_final_message()

    with Faults() as faults:
        faults.fail("anthropic/stream_max_tokens")
        asyncio_run(enter())  # no copy yet: made and sent, no round trip on the loop
        assert (faults.calls, shared.round_trips) == (1, 0)
    wall = UpstreamRateLimitedError("x", retryable=True, retry_after=30.0, quota={"resets_in": 30})
    shared.record(shared.key(client, model), wall)
    with Faults() as faults:
        faults.fail("anthropic/stream_max_tokens")
        asyncio_run(enter())  # the wall is in Redis, but this process has no copy: it goes
        assert faults.calls == 1
    with Faults():  # a round trip (a plain call) brings the copy; the stream is refused
        failed(
            lambda: asyncio_run(client.messages.create(model=model, max_tokens=16, messages=HELLO))
        )
        refused = failed(stream)
    assert refused.problem.upstream["sent"] is False


def test_news_is_kept_when_the_round_trip_fails(redis_server: RedisServer) -> None:
    """What a success taught goes with the next round trip; when that trip fails, it is kept
    for the one after."""
    shared = ledger(redis_server.url, refresh=0.0, lease=0.0, reconnect_after=0.0, timeout=0.3)
    client = gpt(shared)
    with Faults() as faults:
        faults.fail(budget(60, 5))
        ask(client)  # learned, pending
        redis_server.stop()
        ask(gpt(shared, OTHER))  # the trip fails: kept in this process
        redis_server.start()
        ask(gpt(shared, OTHER))
    name = shared.store.remote.key(shared.key(client).account.key)  # type: ignore[union-attr]
    assert dump(redis_server.url)[name][f"b:{MODEL}:requests"].startswith("60:")
