"""The ledger shared through a real ``redis-server`` (started per test on a free port): a wall
one worker met is every worker's, keyed as the breaker's keys are and holding no credential; a
copy is stale at most ``refresh`` seconds; budgets are reserved atomically across workers and
leased without a round trip while plentiful; junk in Redis is bounded; a Redis that goes away
or a key of another type never raises in a call; the event loop never waits for Redis."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import threading
from typing import Any

import pytest

openai = pytest.importorskip("openai")
redis = pytest.importorskip("redis")

from normalize_errors import HarnessError, wrap  # noqa: E402
from normalize_errors.resilience import Ledger  # noqa: E402
from normalize_errors.testing import Faults, Reply  # noqa: E402

from .conftest import RedisServer  # noqa: E402
from .helpers import Clock, DelayingProxy, LoopWatch, failed  # noqa: E402

KEY = "sk-proj-" + "Ab3dE6gH" * 6
OTHER = "sk-proj-" + "Zy9xW8vU" * 6
HELLO = [{"role": "user", "content": "Hello"}]
PREFIX = "normalize-errors:ledger:"


def ledger(url: str, **options: Any) -> Ledger:
    options.setdefault("tenant", "acme")
    options.setdefault("timeout", 2.0)
    return Ledger(store=url, **options)


def gpt(on: Ledger, key: str = KEY, *, aio: bool = False) -> Any:
    made = openai.AsyncOpenAI if aio else openai.OpenAI
    return wrap(made(api_key=key, max_retries=0), ledger=on)


def ask(client: Any, model: str = "gpt-4o-mini") -> Any:
    return client.chat.completions.create(model=model, messages=HELLO)


def chat_body() -> dict[str, Any]:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Hello!"}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }  # fmt: skip


def budget(requests: int, left: int) -> Reply:
    """A success whose OpenAI headers state the requests budget (tokens plentiful)."""
    headers = {
        "x-ratelimit-limit-requests": str(requests),
        "x-ratelimit-remaining-requests": str(left),
        "x-ratelimit-reset-requests": "1h" if left < requests else "0s",
        "x-ratelimit-limit-tokens": "1000000",
        "x-ratelimit-remaining-tokens": "1000000",
        "x-ratelimit-reset-tokens": "0s",
    }
    return Reply(200, headers, chat_body())


def degraded(on: Ledger) -> bool:
    """Whether ``on`` keeps its state in this process now (read afresh each time)."""
    return on.degraded


def dump(url: str) -> dict[str, dict[str, str]]:
    """Every key of the server and its hash, as text."""
    client = redis.Redis.from_url(url, decode_responses=True)
    found = {}
    for key in client.scan_iter("*"):
        kind = client.type(key)
        found[key] = client.hgetall(key) if kind == "hash" else {"<type>": kind}
    return found


def test_a_wall_one_worker_met_is_every_worker_s(redis_server: RedisServer) -> None:
    one, two = ledger(redis_server.url, refresh=0.0), ledger(redis_server.url, refresh=0.0)
    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_429")
        failed(lambda: ask(gpt(one)))
        refused = failed(lambda: ask(gpt(two)))
        assert faults.calls == 1
        ask(gpt(two, OTHER))  # another credential: its own account
        ask(gpt(two), "gpt-4.1")  # another model
        assert faults.calls == 3
    problem = refused.problem
    assert problem.upstream["sent"] is False
    assert 25.0 < (problem.retry_after or 0) <= 26.604  # the server's clock, since the wall
    assert not one.degraded
    assert not two.degraded


def test_keys_are_digests_in_a_namespace_and_hold_no_credential(redis_server: RedisServer) -> None:
    shared = ledger(redis_server.url, refresh=0.0)
    client = gpt(shared)
    with Faults() as faults:
        faults.fail(budget(100, 99))
        ask(client)
        faults.fail("openai/insufficient_quota_429")
        failed(lambda: ask(client))
    held = dump(redis_server.url)
    assert len(held) == 1
    [(name, fields)] = held.items()
    account = shared.key(client).account.key
    assert name == f"{PREFIX}acme:{account}"
    assert len(account) == 64
    assert set(account) <= set("0123456789abcdef")
    text = repr(held)
    assert KEY not in text
    assert KEY[8:20] not in text
    assert hashlib.sha256(KEY.encode()).hexdigest() not in text  # not even the key's own digest
    assert fields["label"].startswith("openai api.openai.com key#")
    assert fields["e"] == "0"  # a billing wall: the key never expires
    assert redis.Redis.from_url(redis_server.url).ttl(name) == -1
    model = hashlib.sha256(b"gpt-4o-mini").hexdigest()[:32]
    assert fields["b:" + model + ":requests"].startswith("100:")
    assert fields["u:*"] == "0"


def test_a_timed_wall_expires_with_its_key(redis_server: RedisServer) -> None:
    shared = ledger(redis_server.url, refresh=0.0, keep=5.0)
    with Faults() as faults:
        faults.fail("openai/rate_limit_tpm_429")
        failed(lambda: ask(gpt(shared)))
    [name] = dump(redis_server.url)
    ttl = redis.Redis.from_url(redis_server.url).pttl(name)
    assert 26_000 < ttl <= 26_604 + 5_000  # the wall, then ``keep``


def test_a_copy_is_stale_at_most_refresh_seconds(redis_server: RedisServer) -> None:
    """The staleness bound: a worker that read the account within ``refresh`` seconds may
    still send; once its copy is older, it sees the wall, and a fresh copy costs no trip."""
    clock = Clock(100.0)
    writer = ledger(redis_server.url, refresh=0.0)
    reader = ledger(redis_server.url, refresh=1.0, clock=clock)
    client = gpt(reader)
    with Faults() as faults:
        ask(client)  # reads the account: a copy fresh for 1 s
        trips = reader.round_trips
        faults.fail("openai/rate_limit_tpm_429")
        failed(lambda: ask(gpt(writer)))
        clock.advance(0.9)
        ask(client)  # within the bound: decided from the copy, no round trip
        assert reader.round_trips == trips
        clock.advance(0.1)
        refused = failed(lambda: ask(client))
        assert refused.problem.upstream["sent"] is False
        assert reader.round_trips == trips + 1
        clock.advance(0.5)
        failed(lambda: ask(client))  # the copy holds the wall: refused with no round trip
        assert reader.round_trips == trips + 1
        assert faults.calls == 3


def test_admission_is_atomic_across_workers(redis_server: RedisServer) -> None:
    """Eight threads of two workers race for the 4 requests a budget has left: 4 go. (What
    a response teaches reaches the other workers with the next round trip of the worker that
    heard it: the second call writes what the first learned.)"""
    workers = [ledger(redis_server.url, refresh=0.0, lease=0.0) for _ in range(2)]
    with Faults() as faults:
        faults.fail(budget(60, 5))  # 5 of 60 left, whole again in an hour
        ask(gpt(workers[0]))
        ask(gpt(workers[0]))  # takes 1 of the 5
        outcomes: list[str] = []
        start = threading.Barrier(8)

        def one(worker: Ledger) -> None:
            start.wait()
            try:
                ask(gpt(worker))
                outcomes.append("sent")
            except HarnessError as err:
                outcomes.append(err.problem.upstream.get("budget", "?"))

        threads = [threading.Thread(target=one, args=(workers[n % 2],)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sorted(outcomes) == ["requests"] * 4 + ["sent"] * 4
        assert faults.calls == 6


def test_a_walls_only_ledger_learns_nothing_from_a_success(redis_server: RedisServer) -> None:
    """With admission off, a success's rate-limit headers are not read: nothing reaches Redis,
    and a budget the headers say is spent refuses nothing."""
    shared = ledger(redis_server.url, refresh=0.0, admission=False)
    client = gpt(shared)
    with Faults() as faults:
        faults.fail(budget(60, 0))
        for _ in range(3):
            ask(client)
        assert faults.calls == 3
    assert dump(redis_server.url) == {}


def test_a_lease_admits_without_a_round_trip_and_goes_back(redis_server: RedisServer) -> None:
    clock = Clock(100.0)
    shared = ledger(redis_server.url, refresh=1.0, lease=0.05, clock=clock)
    client = gpt(shared)
    with Faults() as faults:
        faults.fail(budget(1000, 1000))
        ask(client)  # learns the budget
        clock.advance(2.0)
        ask(client)  # a round trip: reserves 1 and leases 50
        trips = shared.round_trips
        for _ in range(20):
            ask(client)  # from the lease
        assert shared.round_trips == trips
        assert faults.calls == 22
        model = hashlib.sha256(b"gpt-4o-mini").hexdigest()[:32]
        [name] = dump(redis_server.url)
        raw = redis.Redis.from_url(redis_server.url, decode_responses=True)

        def level() -> float:
            return float((raw.hget(name, f"b:{model}:requests") or "0:0").split(":")[1])

        # 1000 learned: 1 taken by the second call and 50 leased, plus the refill since (1000 a
        # minute, 16.7 a second: up to 8 allowed, half a second of a machine that is slow today)
        assert 949 <= level() < 957
        clock.advance(2.0)  # the copy is stale: the next trip gives back the 30 left unused
        ask(client)
    # 1 more taken, 50 leased again, 30 given back (not given back: 899; not leased: 979)
    assert 928 <= level() < 937


def test_junk_in_redis_is_bounded(redis_server: RedisServer) -> None:
    shared = ledger(redis_server.url, refresh=0.0, max_wall=3600.0)
    client = gpt(shared)
    with Faults() as faults:
        faults.fail(budget(100, 99))
        ask(client)
        ask(client)  # what the first taught goes with this call's round trip
    [name] = dump(redis_server.url)
    raw = redis.Redis.from_url(redis_server.url)
    model = hashlib.sha256(b"gpt-4o-mini").hexdigest()[:32]
    raw.hset(name, mapping={f"b:{model}:requests": "nan:junk:1e400:x", f"u:{model}": "9" * 15,
                            f"w:{model}": "not\ta\tnote"})  # fmt: skip
    refused = failed(lambda: ask(client))
    assert 3590 <= (refused.problem.retry_after or 0) <= 3600  # capped at max_wall, written back
    assert refused.problem.code == "upstream.rate_limited"
    assert int(raw.hget(name, f"u:{model}") or 0) < 10**14
    raw.hset(name, mapping={f"u:{model}": "-5", f"w:{model}": "x" * 5000})
    with Faults() as faults:
        ask(client)  # junk walls read as none; a junk budget as none learned
        assert faults.calls == 1


def test_a_redis_that_goes_away_never_raises_in_a_call(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    shared = ledger(redis_server.url, refresh=0.0, reconnect_after=0.2, timeout=0.3)
    client = gpt(shared)
    caplog.set_level(logging.WARNING, "normalize_errors.resilience")
    with Faults() as faults:
        redis_server.stop()
        ask(client)  # Redis down: kept in this process, one warning
        faults.fail("openai/rate_limit_tpm_429")
        failed(lambda: ask(client))
        failed(lambda: ask(client))  # the wall, kept in this process, still holds
        assert faults.calls == 2
        assert degraded(shared)
        assert caplog.text.count("ledger store") == 1
        redis_server.start()
        threading.Event().wait(0.25)  # a real wait (Faults makes time.sleep return at once)
        ask(gpt(shared, OTHER))
        assert not degraded(shared)
        assert "is back" in caplog.text


def test_a_key_of_another_type_is_that_account_s_problem_alone(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    shared = ledger(redis_server.url, refresh=0.0)
    victim, other = gpt(shared), gpt(shared, OTHER)
    raw = redis.Redis.from_url(redis_server.url)
    raw.set(shared.store.remote.key(shared.key(victim).account.key), "a string")  # type: ignore[union-attr]
    with Faults() as faults:
        ask(victim)
        faults.fail("openai/rate_limit_tpm_429")
        failed(lambda: ask(other))
        assert not shared.degraded
        assert "WRONGTYPE" in caplog.text
    assert len([k for k in dump(redis_server.url) if k.startswith(PREFIX)]) == 2


def test_the_event_loop_never_waits_for_a_far_redis(redis_server: RedisServer) -> None:
    """AsyncOpenAI through a ledger whose Redis is 150 ms away each way: every round trip
    runs in a worker thread; the loop's timer is never a round trip late."""
    proxy = DelayingProxy(redis_server.port, 0.150)
    try:
        far = ledger(f"redis://127.0.0.1:{proxy.port}/0", refresh=0.0)
        client = gpt(far, aio=True)

        async def main() -> LoopWatch:
            # not watched: the first success and failure import what they need on the loop
            await client.chat.completions.create(model="warm-up", messages=HELLO)
            with contextlib.suppress(HarnessError):
                await client.chat.completions.create(model="warm-up", messages=HELLO)
            # a firing half a round trip late (150 ms) is a stall; one is allowed, the
            # machine's (tests/resilience/test_event_loop.py says why)
            watch = LoopWatch(asyncio.get_running_loop(), 0.150)
            for _ in range(3):
                await client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
            with contextlib.suppress(HarnessError):
                await client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
            watch.stop()
            return watch

        with Faults() as faults:
            faults.succeed()
            faults.fail("openai/rate_limit_tpm_429")
            faults.succeed(times=3)
            faults.fail("openai/rate_limit_tpm_429")
            watch = asyncio.run(main())
        assert far.round_trips >= 7
        # the loop ran its timer all along (a round trip made on the loop, with nothing
        # awaited, would leave it no turn at all) ...
        assert watch.firings > 100
        # ... and never half a round trip late but once
        assert len(watch.late) <= 1, f"the event loop was late (s): {watch.late}"
    finally:
        proxy.close()
