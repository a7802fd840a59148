"""Three worker processes share breakers through one real ``redis-server`` (issue 38's
done-when): tenants stay apart, a key crafted to collide cannot touch another, a worker whose
clock is an hour ahead cannot hold the others open, and a Redis restart or a ``WRONGTYPE`` on
one key leaves the other keys shared.

Each worker is a separate interpreter that keeps running and answers commands on stdin (a
call of the real openai client through ``breaker.call``, with ``Faults`` serving a shipped
cassette or a success), so the state crosses between them only through Redis.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import RedisServer

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "normalize-errors:breaker:"
COOL_DOWN = 1.0

WORKER = textwrap.dedent(
    """
    import json, sys, time

    url, tenant, skew = sys.argv[1], sys.argv[2], float(sys.argv[3])
    if skew:  # this worker's wall clock is wrong by `skew` seconds, for every caller in it
        real_time, real_ns = time.time, time.time_ns
        time.time = lambda: real_time() + skew
        time.time_ns = lambda: real_ns() + int(skew * 1e9)

    import openai

    from normalize_errors import HarnessError, wrap
    from normalize_errors.resilience import CircuitBreaker
    from normalize_errors.testing import Faults

    breaker = CircuitBreaker(
        store=url, tenant=tenant, threshold=1, cooldown=float(sys.argv[4]), refresh=0.2,
        reconnect_after=0.3, timeout=0.5,
    )
    client = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0))
    print(json.dumps({"ready": True, "wall_clock": time.time()}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        key, out = command["key"], {}
        if command["op"] == "call":
            with Faults() as faults:
                if command.get("fail"):
                    faults.fail(command["fail"])
                try:
                    breaker.call(
                        key, client.chat.completions.create, model="gpt-4o-mini",
                        messages=[{"role": "user", "content": "Hello"}],
                    )
                    out["outcome"] = "ok"
                except HarnessError as err:
                    problem = err.problem
                    out["outcome"] = problem.code
                    out["state"] = problem.upstream.get("state")
                    out["retry_after"] = problem.retry_after
                out["requests"] = faults.calls
        elif command["op"] == "reset":
            breaker.reset(key)
        out["degraded"] = breaker.degraded
        print(json.dumps(out), flush=True)
    """
)


class Worker:
    """One worker process: ``call(key, fail=cassette)`` returns what it saw."""

    def __init__(self, url: str, tenant: str, skew: float = 0.0) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, url, tenant, str(skew), str(COOL_DOWN)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )
        self.hello: dict[str, Any] | None = None

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the worker died"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ready(self) -> dict[str, Any]:
        if self.hello is None:
            self.hello = self._answer()
        return self.hello

    def send(self, **command: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def call(self, key: str, fail: str | None = None) -> dict[str, Any]:
        return self.send(op="call", key=key, fail=fail)

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:  # pragma: no cover - a worker that hangs
                self.process.kill()
                self.process.wait()
            if self.process.stdout is not None:
                self.process.stdout.close()


@pytest.fixture
def fleet(redis_server: RedisServer) -> Iterator[tuple[Worker, Worker, Worker]]:
    """A and B work for tenant "acme" (B's clock an hour ahead), C for tenant "globex"."""
    workers = (
        Worker(redis_server.url, "acme"),
        Worker(redis_server.url, "acme", skew=3600.0),
        Worker(redis_server.url, "globex"),
    )
    try:
        for worker in workers:
            assert worker.ready()["ready"]
        yield workers
    finally:
        for worker in workers:
            worker.stop()


def stored(tenant: str, key: str) -> str:
    """The documented Redis key of a breaker, derived here independently of the package."""
    return f"{PREFIX}{tenant}:{hashlib.sha256(key.encode()).hexdigest()}"


OVERLOADED = "openai/overloaded_503"


def test_three_workers_share_breakers_through_one_redis(
    redis_server: RedisServer, fleet: tuple[Worker, Worker, Worker]
) -> None:
    import redis

    a, b, c = fleet
    assert b.ready()["wall_clock"] - time.time() > 3500  # B's clock is an hour ahead

    # Tenants apart: acme's breaker opens for A and B; globex's, under the same key, does not.
    assert a.call("openai:gpt-4o-mini", fail=OVERLOADED)["outcome"] == "upstream.overloaded"
    seen = b.call("openai:gpt-4o-mini")
    assert (seen["outcome"], seen["state"], seen["requests"]) == ("upstream.unavailable", "open", 0)
    assert c.call("openai:gpt-4o-mini") == {"outcome": "ok", "requests": 1, "degraded": False}

    # A key crafted to land on another's storage (its lease, ":t") cannot touch it.
    assert b.call("openai:gpt-4o-mini:t", fail=OVERLOADED)["outcome"] == "upstream.overloaded"
    b.send(op="reset", key="openai:gpt-4o-mini:f")
    time.sleep(COOL_DOWN + 0.1)
    assert a.call("openai:gpt-4o-mini")["outcome"] == "ok"  # its own trial, which closes it
    assert b.call("openai:gpt-4o-mini:t")["outcome"] == "ok"

    # B's clock is an hour ahead: its opening lasts the cool-down on the Redis server's clock.
    assert b.call("anthropic:claude", fail=OVERLOADED)["outcome"] == "upstream.overloaded"
    seen = a.call("anthropic:claude")
    assert seen["state"] == "open"
    assert 0 < seen["retry_after"] <= COOL_DOWN  # not 3,600 s more
    time.sleep(COOL_DOWN + 0.1)
    assert a.call("anthropic:claude") == {"outcome": "ok", "requests": 1, "degraded": False}

    # WRONGTYPE on one key: that breaker is kept in the worker, the others stay shared.
    client = redis.Redis.from_url(redis_server.url)
    client.zadd(stored("acme", "poisoned"), {"junk": 1.0})
    assert a.call("poisoned") == {"outcome": "ok", "requests": 1, "degraded": False}
    assert a.call("gemini:flash", fail=OVERLOADED)["outcome"] == "upstream.overloaded"
    assert b.call("gemini:flash")["state"] == "open"

    # A Redis restart (its state gone): the workers come back to it and share again.
    redis_server.stop()
    redis_server.start()
    deadline = time.monotonic() + 10
    outcome: dict[str, Any] = {"degraded": True}
    while outcome["degraded"] and time.monotonic() < deadline:
        time.sleep(0.35)  # past reconnect_after
        outcome = a.call("mistral:large")
    assert outcome == {"outcome": "ok", "requests": 1, "degraded": False}
    assert a.call("mistral:large", fail=OVERLOADED)["outcome"] == "upstream.overloaded"
    seen = b.call("mistral:large")
    assert (seen["state"], seen["requests"]) == ("open", 0)
    assert c.call("mistral:large")["outcome"] == "ok"  # and globex is still apart

    keys = {key.decode() if isinstance(key, bytes) else key for key in client.keys("*")}
    assert stored("acme", "mistral:large") in keys
    assert all(key.startswith((f"{PREFIX}acme:", f"{PREFIX}globex:")) for key in keys)
