"""Breaker state shared by processes through Redis (redis-py, the ``resilience`` extra).

Per breaker key ``K`` (redacted) and prefix ``P``:

* ``P{K}``: a hash ``until`` (wall-clock seconds), ``code``, ``status``, ``upstream_code``,
  ``trips``; it expires once the open time and a window have passed;
* ``P{K}:f``: a sorted set of the failure times within the window (expires with the window);
* ``P{K}:t``: the half-open trial's lease (``SET NX PX``): one process gets the trial.

A Redis that cannot be reached, or answers later than ``timeout`` seconds, never raises in
the caller's path: the breaker logs one warning (logger ``normalize_errors.resilience``),
keeps its state in this process meanwhile, and tries Redis again ``retry_in`` seconds later.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from collections.abc import Callable
from typing import Any, Final, TypeVar

from .._redact import redact
from ._store import MemoryStore, State

__all__ = ["FallbackStore", "RedisStore"]

LOG: Final = logging.getLogger("normalize_errors.resilience")
_T = TypeVar("_T")


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class RedisStore:
    """Breaker state in Redis, read and written in one round trip per operation."""

    def __init__(self, url: str, *, prefix: str, timeout: float) -> None:
        try:
            import redis
        except ImportError as exc:  # pragma: no cover - only where the extra is missing
            raise ImportError(
                "CircuitBreaker(store='redis://...') needs redis-py: "
                "pip install 'normalize-errors[resilience]'"
            ) from exc
        self.client: Any = redis.Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry_on_timeout=False,
            health_check_interval=0,
        )
        self.prefix = prefix
        self.shown = redact(url)
        """The store's URL as it may be shown: its password redacted."""

    def _key(self, key: str) -> str:
        return self.prefix + key

    def read(self, key: str) -> State:
        until, code, status, vendor, trips = self.client.hmget(
            self._key(key), "until", "code", "status", "upstream_code", "trips"
        )
        if until is None:
            return State()
        opened_by: dict[str, Any] = {}
        if code is not None:
            opened_by["code"] = _text(code)
        if status is not None and _text(status).isdigit():
            opened_by["status"] = int(_text(status))
        if vendor is not None:
            opened_by["upstream_code"] = _text(vendor)
        number = float(_text(until))
        count = int(_text(trips)) if trips is not None and _text(trips).isdigit() else 1
        return State(number if math.isfinite(number) else 0.0, opened_by, count)

    def add_failure(self, key: str, now: float, window: float) -> int:
        name = self._key(key) + ":f"
        pipe = self.client.pipeline(transaction=True)
        pipe.zadd(name, {f"{now:.6f}:{secrets.token_hex(4)}": now})
        pipe.zremrangebyscore(name, "-inf", now - window)
        pipe.zcard(name)
        pipe.pexpire(name, max(int(window * 1000), 1))
        return int(pipe.execute()[2])

    def open(self, key: str, until: float, opened_by: dict[str, Any], trips: int) -> None:
        name = self._key(key)
        fields: dict[str, Any] = {"until": repr(until), "trips": trips}
        for member in ("code", "status", "upstream_code"):
            if opened_by.get(member) is not None:
                fields[member] = str(opened_by[member])
        keep = max(until - time.time(), 0.0) + 3600.0
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(name, name + ":f", name + ":t")
        pipe.hset(name, mapping=fields)
        pipe.pexpire(name, int(keep * 1000))
        pipe.execute()

    def take_trial(self, key: str, now: float, lease: float) -> float:
        name = self._key(key) + ":t"
        if self.client.set(name, "1", nx=True, px=max(int(lease * 1000), 1)):
            return 0.0
        left = self.client.pttl(name)
        return max(int(left), 1) / 1000.0

    def close(self, key: str) -> None:
        name = self._key(key)
        self.client.delete(name, name + ":f", name + ":t")


class FallbackStore:
    """A store that falls back on local state while its primary (Redis) fails."""

    def __init__(
        self,
        primary: RedisStore,
        local: MemoryStore,
        *,
        retry_in: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.primary = primary
        self.local = local
        self.retry_in = retry_in
        self.clock = clock
        self.down_since: float | None = None
        """When the primary last failed (``clock()``), while it is thought down."""

    @property
    def degraded(self) -> bool:
        """True while the state is kept locally because Redis failed."""
        return self.down_since is not None

    def _do(self, op: Callable[[RedisStore | MemoryStore], _T]) -> _T:
        if self.down_since is not None and self.clock() - self.down_since < self.retry_in:
            return op(self.local)
        try:
            result = op(self.primary)
        except Exception as exc:  # redis.RedisError, OSError, a bad reply: never the caller's
            if self.down_since is None:
                LOG.warning(
                    "circuit breaker store %s failed (%s: %s); keeping state in this process "
                    "and trying again in %.0f s",
                    self.primary.shown,
                    type(exc).__name__,
                    redact(str(exc))[:200],
                    self.retry_in,
                )
            self.down_since = self.clock()
            return op(self.local)
        if self.down_since is not None:
            LOG.warning("circuit breaker store %s is back", self.primary.shown)
            self.down_since = None
        return result

    def read(self, key: str) -> State:
        return self._do(lambda store: store.read(key))

    def add_failure(self, key: str, now: float, window: float) -> int:
        return self._do(lambda store: store.add_failure(key, now, window))

    def open(self, key: str, until: float, opened_by: dict[str, Any], trips: int) -> None:
        self._do(lambda store: store.open(key, until, opened_by, trips))

    def take_trial(self, key: str, now: float, lease: float) -> float:
        return self._do(lambda store: store.take_trial(key, now, lease))

    def close(self, key: str) -> None:
        self._do(lambda store: store.close(key))
