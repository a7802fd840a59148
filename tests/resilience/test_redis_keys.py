"""How the shared breaker keys its state in a real ``redis-server``: digests in a namespace
of their own (no key reaches another's storage), tenants apart, one key's Redis error that
key's alone, and a closed breaker that makes no round trip (its local copy, refreshed at
most every ``refresh`` seconds)."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import openai
import pytest

from normalize_errors import UpstreamOverloadedError, wrap
from normalize_errors.resilience import CircuitBreaker
from normalize_errors.testing import Faults

from .conftest import RedisServer
from .helpers import failed

QUESTION: Any = [{"role": "user", "content": "Hello"}]


def overloaded() -> UpstreamOverloadedError:
    return UpstreamOverloadedError("overloaded")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def dump(url: str) -> dict[str, dict[str, str]]:
    """Every key of the Redis, and the fields of each hash."""
    import redis

    client = redis.Redis.from_url(url)
    out: dict[str, dict[str, str]] = {}
    for name in client.keys("*"):
        kind = _text(client.type(name))
        fields = client.hgetall(name) if kind == "hash" else {}
        out[_text(name)] = {_text(k): _text(v) for k, v in fields.items()}
    return out


def test_the_documented_key_layout(redis_server: RedisServer) -> None:
    """``{prefix}{tenant}:{sha256 hex of the key}``, the label beside the state."""
    breaker = CircuitBreaker(store=redis_server.url, threshold=1, tenant="acme")
    breaker.failure("openai:gpt-4o", overloaded())
    name = "normalize-errors:breaker:acme:" + hashlib.sha256(b"openai:gpt-4o").hexdigest()
    assert breaker.storage_key("openai:gpt-4o") == name
    stored = dump(redis_server.url)
    assert list(stored) == [name]
    assert stored[name]["label"] == "openai:gpt-4o"
    assert stored[name]["code"] == "upstream.overloaded"


def test_a_key_ending_in_t_cannot_hold_another_half_open(redis_server: RedisServer) -> None:
    """Opening ``victim:gpt:t`` once wrote onto ``victim:gpt``'s trial lease."""
    breaker = CircuitBreaker(store=redis_server.url, threshold=1, cooldown=0.2)
    breaker.failure("victim:gpt", overloaded())
    breaker.failure("victim:gpt:t", UpstreamOverloadedError("overloaded", retry_after=3600))
    time.sleep(0.25)
    assert breaker.before("victim:gpt") == "trial"  # its own trial, not held for an hour
    breaker.success("victim:gpt", "trial")
    assert breaker.state("victim:gpt").name == "closed"
    assert breaker.state("victim:gpt:t").name == "open"


def test_resetting_a_key_ending_in_f_keeps_anothers_failures(redis_server: RedisServer) -> None:
    breaker = CircuitBreaker(store=redis_server.url, threshold=3)
    for _ in range(2):
        breaker.failure("victim:gpt", overloaded())
    breaker.reset("victim:gpt:f")  # once deleted victim:gpt's failures
    breaker.failure("victim:gpt", overloaded())
    assert breaker.state("victim:gpt").name == "open"


def test_wrongtype_on_one_key_leaves_the_others_shared(redis_server: RedisServer) -> None:
    import redis

    a, b = (CircuitBreaker(store=redis_server.url, threshold=2) for _ in range(2))
    a.failure("victim", overloaded())
    assert a.state("victim:f").name == "closed"  # once a sorted set: WRONGTYPE, store down
    for _ in range(2):
        a.failure("healthy", overloaded())
    assert not a.degraded
    assert b.state("healthy").name == "open"  # every other key is still shared
    poisoned = a.storage_key("poisoned")
    assert poisoned is not None
    redis.Redis.from_url(redis_server.url).zadd(poisoned, {"junk": 1.0})
    assert a.call("poisoned", lambda: "answered") == "answered"  # kept in this process
    for _ in range(2):
        a.failure("again", overloaded())
    assert not a.degraded
    assert b.state("again").name == "open"
    assert b.state("victim").failures == 1


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("tenant-sk-proj-" + "A" * 48, "tenant-sk-proj-" + "B" * 48),  # the same after redaction
        ("https://gw.example/v1/" + "x" * 200 + "/a", "https://gw.example/v1/" + "x" * 200 + "/b"),
    ],
)
def test_keys_alike_after_redaction_are_two_breakers(
    redis_server: RedisServer, first: str, second: str
) -> None:
    assert CircuitBreaker.name(first) == CircuitBreaker.name(second)  # what is shown
    for store in (None, redis_server.url):
        breaker = CircuitBreaker(store=store, threshold=1)
        breaker.failure(first, overloaded())
        assert breaker.state(first).name == "open"
        assert breaker.state(second).name == "closed"  # one tenant's failure is not another's
    text = repr(dump(redis_server.url))
    assert "A" * 20 not in text
    assert "B" * 20 not in text


def test_tenants_breakers_never_meet(redis_server: RedisServer) -> None:
    acme = CircuitBreaker(store=redis_server.url, threshold=1, tenant="acme")
    globex = CircuitBreaker(store=redis_server.url, threshold=1, tenant="globex")
    acme.failure("openai:gpt-4o", overloaded())
    assert acme.state("openai:gpt-4o").name == "open"
    assert globex.state("openai:gpt-4o").name == "closed"
    globex.reset("openai:gpt-4o")
    assert acme.state("openai:gpt-4o").name == "open"
    assert [name.split(":")[2] for name in dump(redis_server.url)] == ["acme"]


def commands(url: str) -> int:
    """How many commands the Redis server has processed (``INFO commandstats``), besides
    the ``INFO`` and ``HELLO`` of this count's own connection."""
    import redis

    stats = redis.Redis.from_url(url).info("commandstats")
    mine = ("cmdstat_info", "cmdstat_hello")
    return sum(int(value["calls"]) for name, value in stats.items() if name not in mine)


def test_a_closed_breaker_makes_no_round_trip(redis_server: RedisServer) -> None:
    breaker = CircuitBreaker(store=redis_server.url, refresh=30.0)
    with Faults() as faults:
        client = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))

        def ask() -> Any:
            return breaker.call(
                "openai:gpt-4o-mini",
                client.chat.completions.create,
                model="gpt-4o-mini",
                messages=QUESTION,
            )

        ask()  # the first read of this key
        before = commands(redis_server.url)
        for _ in range(200):
            ask()
        assert commands(redis_server.url) == before
        assert faults.calls == 201


def test_another_workers_opening_is_seen_within_refresh(redis_server: RedisServer) -> None:
    """The staleness bound: a copy is decided from for at most ``refresh`` seconds."""
    a = CircuitBreaker(store=redis_server.url, threshold=1)
    b = CircuitBreaker(store=redis_server.url, refresh=0.3)
    assert b.call("k", lambda: "read") == "read"  # b's copy: closed
    a.failure("k", overloaded())
    assert b.call("k", lambda: "stale") == "stale"  # still b's copy
    time.sleep(0.3)
    fast = failed(lambda: b.call("k", lambda: "never"))
    assert fast.upstream["state"] == "open"


def test_a_rate_counts_every_workers_calls(redis_server: RedisServer) -> None:
    """The successes counted for a rate reach Redis with each refresh, so the rate is the
    fleet's: here two workers' calls, of which 2 of 4 failed."""
    a, b = (
        CircuitBreaker(
            store=redis_server.url,
            failure_rate_threshold=50,
            minimum_number_of_calls=4,
            refresh=0.0,
        )
        for _ in range(2)
    )
    assert a.call("k", lambda: 1) == 1
    assert b.call("k", lambda: 2) == 2
    a.failure("k", overloaded())
    assert b.state("k").name == "closed"
    b.before("k")  # b's pending success is written with this read
    b.failure("k", overloaded())
    state = a.state("k")
    assert (state.name, state.opened_by["reason"]) == ("open", "failure_rate")
