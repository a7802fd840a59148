"""The breaker shared through a real ``redis-server`` on 127.0.0.1 (no mock of Redis)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from normalize_errors import UpstreamOverloadedError, UpstreamUnavailableError
from normalize_errors.resilience import CircuitBreaker
from normalize_errors.resilience._redis import SharedStore

from .conftest import RedisServer
from .helpers import failed

ROOT = Path(__file__).resolve().parents[2]
KEY = "anthropic:claude-sonnet-4-6"

WORKER = textwrap.dedent(
    """
    import json, sys

    import anthropic

    from normalize_errors import HarnessError, wrap
    from normalize_errors.resilience import CircuitBreaker
    from normalize_errors.testing import Faults

    url, key, script = sys.argv[1], sys.argv[2], sys.argv[3]
    breaker = CircuitBreaker(store=url, threshold=1, cooldown=60.0)
    with Faults() as faults:
        if script != "-":
            faults.fail(script)
        client = wrap(anthropic.Anthropic(api_key="sk-ant-offline", max_retries=0))
        try:
            breaker.call(
                key, client.messages.create, model="claude-sonnet-4-6", max_tokens=8,
                messages=[{"role": "user", "content": "Hello"}],
            )
            outcome = {"ok": True}
        except HarnessError as err:
            problem = err.problem
            outcome = {"code": problem.code, "origin": problem.origin,
                       "upstream": problem.upstream.get("opened_by"),
                       "retry_after": problem.retry_after}
        outcome["requests"] = faults.calls
    print(json.dumps(outcome))
    """
)


def worker(server: RedisServer, script: str) -> dict[str, Any]:
    """Run one worker process (a new interpreter) against the shared Redis; its outcome."""
    done = subprocess.run(  # a separate process: the state crosses only through Redis
        [sys.executable, "-c", WORKER, server.url, KEY, script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_two_worker_processes_share_one_breaker(redis_server: RedisServer) -> None:
    first = worker(redis_server, "anthropic/overloaded_529")  # gets the 529: opens it
    assert first["code"] == "upstream.overloaded"
    assert first["requests"] == 1

    second = worker(redis_server, "-")  # another process: fails fast, sends nothing
    assert second["requests"] == 0
    assert (second["code"], second["origin"]) == ("upstream.unavailable", "harness")
    assert second["upstream"] == {
        "reason": "failures",
        "code": "upstream.overloaded",
        "status": 529,
        "upstream_code": "overloaded_error",
    }
    assert 0.0 < second["retry_after"] <= 60.0  # the 60 s cool-down, less the time since

    here = CircuitBreaker(store=redis_server.url)  # and this process sees it too
    assert here.state(KEY).name == "open"
    here.reset(KEY)
    assert worker(redis_server, "-") == {"ok": True, "requests": 1}
    here.close()
    CircuitBreaker().close()  # in memory: nothing to close


def test_one_half_open_trial_across_processes(redis_server: RedisServer) -> None:
    a, b = (
        CircuitBreaker(store=redis_server.url, threshold=1, cooldown=0.2, refresh=0.0)
        for _ in range(2)
    )
    a.failure(KEY, UpstreamOverloadedError("overloaded"))
    assert failed(lambda: b.before(KEY)).upstream["state"] == "open"
    time.sleep(0.25)  # the Redis server's clock decides: past the 0.2 s cool-down
    assert a.before(KEY) == "trial"
    assert failed(lambda: b.before(KEY)).upstream["state"] == "half_open"
    a.success(KEY, "trial")
    assert b.before(KEY) == "closed"


def test_a_redis_that_goes_away_falls_back_to_local_state(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    breaker = CircuitBreaker(store=redis_server.url, threshold=2, timeout=0.5, refresh=0.0)
    assert breaker.call(KEY, lambda: "up") == "up"
    redis_server.stop()
    with caplog.at_level(logging.WARNING, logger="normalize_errors.resilience"):
        assert breaker.call(KEY, lambda: "still answered") == "still answered"
    assert degraded(breaker)
    assert "keeping state in this process" in caplog.text
    assert redis_server.url.split("//")[1].split("/")[0] in caplog.text
    for _ in range(2):  # the local state still opens the breaker
        failed(lambda: breaker.call(KEY, _overloaded))
    assert isinstance(failed(lambda: breaker.call(KEY, lambda: "x")), UpstreamUnavailableError)

    redis_server.start()  # back on the same port: used again after reconnect_after
    assert isinstance(breaker.store, SharedStore)
    breaker.store.reconnect_after = 0.0
    with caplog.at_level(logging.WARNING, logger="normalize_errors.resilience"):
        assert breaker.state(KEY).name == "closed"  # the new Redis knows of no failure
    assert not degraded(breaker)
    assert "is back" in caplog.text


def degraded(breaker: CircuitBreaker) -> bool:
    """Read anew each time (mypy would keep an earlier assert's narrowing)."""
    return breaker.degraded


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _overloaded() -> None:
    raise UpstreamOverloadedError("overloaded")


def test_a_slow_redis_costs_at_most_the_timeout(redis_server: RedisServer) -> None:
    import redis

    breaker = CircuitBreaker(store=redis_server.url, timeout=0.2, refresh=0.0)
    assert breaker.call(KEY, lambda: 1) == 1  # connected
    other = redis.Redis.from_url(redis_server.url)
    sleeper = threading.Thread(
        target=lambda: other.execute_command("DEBUG", "SLEEP", "2")  # type: ignore[no-untyped-call]
    )
    sleeper.start()
    time.sleep(0.2)  # the server now sleeps: every reply is 2 s late
    started = time.monotonic()
    assert breaker.call(KEY, lambda: 2) == 2
    took = time.monotonic() - started
    sleeper.join()
    assert took < 1.0
    assert degraded(breaker)


def test_the_stored_state_holds_no_credential_nor_prompt(redis_server: RedisServer) -> None:
    import redis

    secret = "sk-proj-" + "A1b2C3d4" * 6
    key = f"https://user:hunter2pass@gateway.example/v1/{secret}"
    breaker = CircuitBreaker(store=redis_server.url, threshold=1)
    err = UpstreamOverloadedError(
        f"overloaded while answering 'my password is hunter2pass' with {secret}",
        upstream={"status": 503, "code": "overloaded", "message": "prompt: my diary"},
    )
    breaker.failure(key, err)
    assert breaker.is_open(key)
    client = redis.Redis.from_url(redis_server.url)
    dump = []
    for name in client.keys("*"):
        dump.append(_text(name))
        kind = _text(client.type(name))
        if kind == "hash":
            dump.extend(f"{_text(k)}={_text(v)}" for k, v in client.hgetall(name).items())
        elif kind == "string":
            dump.append(str(client.get(name)))
    text = " ".join(dump)
    assert "gateway.example" in text
    for leaked in (secret, "hunter2pass", "diary", "password"):
        assert leaked not in text


def test_acall_through_redis(redis_server: RedisServer) -> None:
    import asyncio

    breaker = CircuitBreaker(store=redis_server.url, threshold=1)

    async def overloaded() -> None:
        raise UpstreamOverloadedError("overloaded", retry_after=0.3)

    async def fine() -> str:
        return "answer"

    async def main() -> list[Any]:
        first = await breaker.acall(KEY, fine)
        second = await _outcome(breaker.acall(KEY, overloaded))
        third = await _outcome(breaker.acall(KEY, fine))
        await asyncio.sleep(0.35)  # the stated 0.3 s, on the Redis server's clock
        fourth = await breaker.acall(KEY, fine)  # the half-open trial, through a thread
        return [first, second, third, fourth]

    first, second, third, fourth = asyncio.run(main())
    assert (first, fourth) == ("answer", "answer")
    assert isinstance(second, UpstreamOverloadedError)
    assert isinstance(third, UpstreamUnavailableError)
    assert 0.0 < (third.retry_after or 0.0) <= 0.3
    assert breaker.state(KEY).name == "closed"


async def _outcome(awaitable: Any) -> Any:
    try:
        return await awaitable
    except Exception as exc:
        return exc


def test_a_hash_written_by_hand_is_read_as_far_as_it_goes(redis_server: RedisServer) -> None:
    """Stored state that lacks members, or holds junk, never breaks the caller's call, and
    never takes the store down: each number is bounded, each junk field reads as absent."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    breaker = CircuitBreaker(store=redis_server.url, max_open=600.0)
    bare, junk, endless = (breaker.storage_key(k) or "" for k in ("bare", "junk", "endless"))
    client.hset(bare, mapping={"until": "4102444800000", "status": "n/a", "code": "<script>"})
    client.hset(junk, mapping={"until": "not a number", "trips": "-7", "w3": "x:y"})
    client.hset(endless, mapping={"until": "1e308", "mode": "haunted"})
    fast = failed(lambda: breaker.call("bare", lambda: None))
    assert fast.upstream["opened_by"] == {}
    assert "after failures" in (fast.detail or "")
    assert 599.0 < (fast.retry_after or 0.0) <= 600.0  # a year-5000 'until' is max_open
    assert int(_text(client.hget(bare, "until"))) < 4102444800000  # and capped where stored
    assert breaker.call("junk", lambda: "answered") == "answered"
    assert breaker.call("endless", lambda: "answered") == "answered"  # 1e308: no number
    assert not degraded(breaker)


def test_a_redis_still_down_warns_once(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    breaker = CircuitBreaker(store=redis_server.url, timeout=0.2, reconnect_after=0.0)
    assert isinstance(breaker.store, SharedStore)  # reconnect_after=0: Redis on every call
    redis_server.stop()
    with caplog.at_level(logging.WARNING, logger="normalize_errors.resilience"):
        for _ in range(3):
            assert breaker.call(KEY, lambda: "answered") == "answered"
    assert caplog.text.count("keeping state in this process") == 1
