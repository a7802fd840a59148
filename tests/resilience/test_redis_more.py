"""The breaker's Redis store at its edges, through a real ``redis-server`` (one per test): a
switch one worker throws is every worker's, a key that failed is tried again after
``reconnect_after`` and warns once, the bounds on what a process keeps, and a script's reply
out of shape."""

from __future__ import annotations

import logging
from typing import Any

import pytest

redis = pytest.importorskip("redis")

from normalize_errors import HarnessError, UpstreamOverloadedError  # noqa: E402
from normalize_errors.resilience import CircuitBreaker  # noqa: E402
from normalize_errors.resilience._redis import parse  # noqa: E402

from .conftest import RedisServer  # noqa: E402
from .helpers import Clock  # noqa: E402


def overloaded() -> UpstreamOverloadedError:
    return UpstreamOverloadedError("overloaded")


def test_a_switch_one_worker_throws_is_every_worker_s(redis_server: RedisServer) -> None:
    a, b = (CircuitBreaker(store=redis_server.url, refresh=0.0) for _ in range(2))
    a.force_open("k")
    assert b.state("k").name == "forced_open"
    with pytest.raises(HarnessError):
        b.call("k", lambda: "answered")
    a.disable("k")
    assert b.state("k").name == "disabled"
    for _ in range(10):
        b.failure("k", overloaded())
    assert b.call("k", lambda: "answered") == "answered"  # disabled: nothing counted
    a.reset("k")
    assert b.state("k").name == "closed"


def test_a_key_that_failed_is_tried_again_later_and_warns_once(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock(100.0)
    a = CircuitBreaker(store=redis_server.url, threshold=2, reconnect_after=5.0, clock=clock)
    b = CircuitBreaker(store=redis_server.url, threshold=2)
    caplog.set_level(logging.WARNING, "normalize_errors.resilience")
    raw = redis.Redis.from_url(redis_server.url)
    poisoned = a.storage_key("poisoned")
    assert poisoned is not None
    raw.zadd(poisoned, {"junk": 1.0})
    for _ in range(3):
        assert a.call("poisoned", lambda: "answered") == "answered"  # kept in this process
    assert caplog.text.count("failed (ResponseError") == 1
    raw.delete(poisoned)
    a.failure("poisoned", overloaded())
    a.failure("poisoned", overloaded())
    assert a.state("poisoned").name == "open"  # in this process only, within 5 s
    assert b.state("poisoned").name == "closed"
    clock.advance(5.0)
    a.failure("poisoned", overloaded())
    a.failure("poisoned", overloaded())
    assert b.state("poisoned").name == "open"  # shared again


def test_a_process_keeps_at_most_max_keys_of_each(redis_server: RedisServer) -> None:
    a = CircuitBreaker(store=redis_server.url, max_keys=2, threshold=5)
    store: Any = a.store
    for name in ("k1", "k2", "k3"):
        a.state(name)
        a.success(name)
    assert len(store._copies) <= 2
    assert len(store._pending) <= 2
    raw = redis.Redis.from_url(redis_server.url)
    for name in ("p1", "p2", "p3"):
        poisoned = a.storage_key(name)
        assert poisoned is not None
        raw.zadd(poisoned, {"junk": 1.0})
        a.call(name, lambda: "answered")
    assert len(store.bad_keys) == 2


def test_a_script_reply_out_of_shape() -> None:
    with pytest.raises(ValueError, match="out of shape"):
        parse(["closed"])
    state = parse([b"open", "soon", "x" * 3, 7, "999", b"v", "nope", None, "1e400", "-3", ""])
    assert (state.name, state.left, state.trips, state.calls, state.failures) == (
        "closed", 0.0, 0, 0, 0,
    )  # fmt: skip
    assert parse(["disabled", "", "", "", "", "", "", 0, 0, 0, 0]).name == "disabled"


def test_a_half_open_copy_asks_redis_for_the_trial(redis_server: RedisServer) -> None:
    """A copy that says half-open decides nothing: the trial is taken in Redis (one worker's),
    and its success closes the breaker for every worker."""
    import threading

    a = CircuitBreaker(store=redis_server.url, threshold=1, cooldown=0.2, refresh=60.0)
    b = CircuitBreaker(store=redis_server.url, threshold=1, cooldown=0.2, refresh=60.0)
    a.failure("k", overloaded())
    threading.Event().wait(0.3)  # Redis's clock: the cooldown is over
    assert a.state("k").name == "half_open"  # a's copy now says half-open
    assert a.call("k", lambda: "trial") == "trial"
    assert b.state("k").name == "closed"


def test_counted_successes_are_bounded_and_a_bad_key_counts_in_this_process(
    redis_server: RedisServer,
) -> None:
    a = CircuitBreaker(
        store=redis_server.url, failure_rate_threshold=50, minimum_number_of_calls=2, max_keys=2
    )
    store: Any = a.store
    for name in ("k1", "k2", "k3"):  # successes counted, written with a later round trip
        store.count_success(name, False)
    assert list(store._pending) == ["k2", "k3"]  # the oldest pending count went
    poisoned = a.storage_key("bad")
    assert poisoned is not None
    redis.Redis.from_url(redis_server.url).zadd(poisoned, {"junk": 1.0})
    a.failure("bad", overloaded())  # WRONGTYPE: this key is kept in this process
    a.success("bad")
    assert a.state("bad").calls == 2
