"""Breaker state shared by processes through Redis (redis-py, the ``resilience`` extra).

**Keys.** One Redis hash per breaker, named ``{prefix}{tenant}:{digest}`` (``{prefix}{digest}``
without a tenant), where ``digest`` is the hex SHA-256 of the raw breaker key
(``_store.digest``). No key can reach another's storage: every name is the prefix, a
tenant of letters, digits and ``._-``, and 64 hex digits, nothing chosen by the key
itself. The hash holds the redacted, shortened key (``label``) for whoever looks, never
the key: a credential in a key is never stored.

**Fields.** ``until`` (server milliseconds the breaker stays open until), ``trips``,
``code``, ``status``, ``ucode`` (the vendor's code), ``reason``, ``mode`` (an operator's
switch), ``t_exp``/``t_n``/``t_ok`` (the half-open permits: lease end, taken, succeeded)
and ``w0`` ... ``w9`` (the window's buckets, ``epoch:calls:failures:slow``).

**Time.** Every time is the Redis server's (``redis.call('TIME')`` inside the scripts):
a worker whose clock is wrong changes nothing. Each read caps the time left open at the
reader's ``max_open`` and the lease at its ``trial_lease``, writing the cap back, so a
hand-written or skewed ``until`` cannot hold any worker open longer. Every number read is
bounded; a field that is not what it should be reads as absent.

**Failures.** A Redis that cannot be reached, or answers later than ``timeout`` seconds,
never raises in the caller's path: the breaker logs one warning (logger
``normalize_errors.resilience``), keeps its state in this process meanwhile and tries
Redis again ``reconnect_after`` seconds later. An error that concerns one key (a key of
another type, ``WRONGTYPE``) is that key's alone: that breaker is kept in this process for
``reconnect_after`` seconds, and every other key stays shared.

**The local copy.** A closed breaker's calls make no round trip: each process keeps a copy
of each breaker's state, read again at most every ``refresh`` seconds (the successes
counted for a failure rate are written with that read). A failure is written at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, TypeVar

from .._base._redact import redact
from .._model._registry import CODE_PATTERN
from ._store import BUCKETS, MemoryStore, Mode, Name, State

__all__ = ["Degrading", "RedisStore", "SharedStore", "connect"]

LOG: Final = logging.getLogger("normalize_errors.resilience")
_T = TypeVar("_T")

_REASONS: Final = frozenset({"failures", "failure_rate", "slow_call_rate", "trial"})
_MAX_COUNT: Final = 10**9
_MAX_TRIPS: Final = 64

# The scripts share this prelude: the key, the server's time, bounded numbers, the window's
# ring of buckets and the state as one flat reply (no nil inside: '' and -1 stand for none).
_PRELUDE: Final = """
if redis.replicate_commands then redis.replicate_commands() end
local key = KEYS[1]
local buckets = tonumber(ARGV[1])
local bucket_ms = tonumber(ARGV[2])
local keep_ms = tonumber(ARGV[3])
local max_open_ms = tonumber(ARGV[4])
local lease_ms = tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local epoch = math.floor(now / bucket_ms)
local ring = {}
for i = 0, buckets - 1 do ring[#ring + 1] = 'w' .. i end

local function num(value)
  local n = tonumber(value)
  if n == nil or n ~= n or n < 0 or n > 1e15 then return 0 end
  return math.floor(n)
end

local function text(value)
  if type(value) ~= 'string' then return '' end
  return string.sub(value, 1, 200)
end

local function bucket(value)
  local e, c, f, s = string.match(text(value), '^(%d+):(%d+):(%d+):(%d+)$')
  return tonumber(e), num(c), num(f), num(s)
end

local function ring_add(calls, failures, slow)
  local field = 'w' .. (epoch % buckets)
  local e, c, f, s = bucket(redis.call('HGET', key, field))
  if e ~= epoch then c, f, s = 0, 0, 0 end
  redis.call('HSET', key, field,
    string.format('%d:%d:%d:%d', epoch, c + calls, f + failures, s + slow))
end

local function expire(extra)
  local mode = text(redis.call('HGET', key, 'mode'))
  if mode ~= '' then
    redis.call('PERSIST', key)
  elseif redis.call('EXISTS', key) == 1 then
    redis.call('PEXPIRE', key, keep_ms + extra)
  end
end

local function state()
  local v = redis.call('HMGET', key, 'mode', 'until', 'trips', 'code', 'status', 'ucode',
    'reason', 't_exp')
  local left = -1
  local until_ = num(v[2])
  if until_ > 0 then
    left = math.max(until_ - now, 0)
    if left > max_open_ms then
      left = max_open_ms
      redis.call('HSET', key, 'until', now + left)
    end
  end
  local trial = num(v[8]) - now
  if trial < 0 then trial = 0 end
  if trial > lease_ms then
    trial = lease_ms
    redis.call('HSET', key, 't_exp', now + trial)
  end
  local calls, failures, slow = 0, 0, 0
  local w = redis.call('HMGET', key, unpack(ring))
  for i = 1, #w do
    local e, c, f, s = bucket(w[i])
    if e and e > epoch - buckets and e <= epoch then
      calls, failures, slow = calls + c, failures + f, slow + s
    end
  end
  return {text(v[1]), left, num(v[3]), text(v[4]), text(v[5]), text(v[6]), text(v[7]),
    calls, failures, slow, trial}
end
"""

_RECORD: Final = (
    _PRELUDE
    + """
local calls, failures, slow = num(ARGV[6]), num(ARGV[7]), num(ARGV[8])
if calls + failures + slow > 0 then
  redis.call('HMGET', key, 'mode')  -- a key of another type fails here, before any write
  ring_add(calls, failures, slow)
  if ARGV[9] ~= '' then redis.call('HSET', key, 'label', ARGV[9]) end
  local left = num(redis.call('HGET', key, 'until')) - now
  if left < 0 then left = 0 end
  expire(left)
end
return state()
"""
)
"""Add outcomes to the window (none: a plain read); the state after."""

_OPEN: Final = (
    _PRELUDE
    + """
local v = redis.call('HMGET', key, 'mode', 'until')
if text(v[1]) == '' and not (num(v[2]) > now) then
  local open_ms = math.min(num(ARGV[6]), max_open_ms)
  if open_ms < 1 then open_ms = 1 end
  redis.call('HDEL', key, 't_exp', 't_n', 't_ok', 'code', 'status', 'ucode', 'reason',
    unpack(ring))
  redis.call('HSET', key, 'until', now + open_ms, 'trips', num(ARGV[7]), 'label', ARGV[8])
  local names = {'code', 'status', 'ucode', 'reason'}
  for i = 1, 4 do
    if ARGV[8 + i] ~= '' then redis.call('HSET', key, names[i], ARGV[8 + i]) end
  end
  expire(open_ms)
end
return state()
"""
)
"""Open for ARGV[6] ms unless open already (another worker's opening stands) or switched."""

_TRIAL: Final = (
    _PRELUDE
    + """
local permits = num(ARGV[6])
local v = redis.call('HMGET', key, 'mode', 'until', 't_exp', 't_n')
local granted = 0
local until_ = num(v[2])
if text(v[1]) == '' and until_ > 0 and until_ <= now then
  local lease, taken = num(v[3]), num(v[4])
  if lease <= now then
    lease, taken = now + lease_ms, 0
    redis.call('HSET', key, 't_exp', lease, 't_n', 0)
  end
  if taken < permits then
    granted = 1
    redis.call('HSET', key, 't_n', taken + 1)
  end
  expire(lease_ms)
end
local s = state()
table.insert(s, 1, granted)
return s
"""
)
"""Take one of ARGV[6] half-open permits (they come back when the lease runs out)."""

_SETTLE: Final = (
    _PRELUDE
    + """
local permits = num(ARGV[6])
local v = redis.call('HMGET', key, 'mode', 'until', 't_ok')
local until_ = num(v[2])
if text(v[1]) == '' and until_ > 0 and until_ <= now then
  local ok = num(v[3]) + 1
  if ok >= permits then
    redis.call('HDEL', key, 'until', 'trips', 'code', 'status', 'ucode', 'reason', 't_exp',
      't_n', 't_ok', unpack(ring))
  else
    redis.call('HSET', key, 't_ok', ok)
  end
end
return state()
"""
)
"""A half-open trial worked: the ARGV[6]-th closes the breaker."""


def _int(value: Any, high: int) -> int:
    """A number of a reply, within ``[0, high]`` (anything else: 0)."""
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return 0
    return min(max(number, 0), high)


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else ""


def parse(reply: Any) -> State:
    """A script's state reply as a ``State``; whatever is out of shape or bounds reads as
    absent (the reply comes from a shared store anyone with access can write)."""
    if not isinstance(reply, (list, tuple)) or len(reply) < 11:
        raise ValueError("the breaker script answered out of shape")
    mode, left, trips, code, status, vendor, reason, calls, failures, slow, trial = reply[:11]
    opened_by: dict[str, Any] = {}
    code_text = _text(code)
    if len(code_text) <= 64 and CODE_PATTERN.compiled().fullmatch(code_text):
        opened_by["code"] = code_text
    status_number = _int(status, 999) if _text(status).isdigit() else 0
    if 100 <= status_number <= 599:
        opened_by["status"] = status_number
    vendor_text = _text(vendor)
    if vendor_text:
        opened_by["upstream_code"] = redact(vendor_text)[:64]
    reason_text = _text(reason)
    if reason_text in _REASONS:
        opened_by["reason"] = reason_text
    switch = _text(mode)
    name: Name
    left_s = 0.0
    if switch in ("forced_open", "disabled"):
        name = "forced_open" if switch == "forced_open" else "disabled"
        return State(name, 0.0, opened_by if name == "forced_open" else {}, 0)
    try:
        left_ms = int(left)
    except (TypeError, ValueError):
        left_ms = -1
    if left_ms < 0:
        name = "closed"
        opened_by = {}
    elif left_ms > 0:
        name = "open"
        left_s = left_ms / 1000.0
    else:
        name = "half_open"
    return State(
        name,
        left_s,
        opened_by,
        _int(trips, _MAX_TRIPS),
        calls=_int(calls, _MAX_COUNT),
        failures=_int(failures, _MAX_COUNT),
        slow=_int(slow, _MAX_COUNT),
        trial_left=_int(trial, 10**12) / 1000.0,
    )


def namespace(prefix: str, tenant: str | None) -> str:
    """Where a store's keys live: ``prefix``, then ``{tenant}:`` when there is a tenant (its
    letters checked by the store's owner), so tenants' keys never meet."""
    return prefix + (f"{tenant}:" if tenant else "")


def connect(url: str, timeout: float, owner: str) -> Any:
    """A redis-py client for ``url`` that gives up after ``timeout`` seconds and never retries
    by itself (the caller decides what a failure means); ``owner`` names who needs it."""
    try:
        import redis
    except ImportError as exc:  # pragma: no cover - only where the extra is missing
        raise ImportError(
            f"{owner}(store='redis://...') needs redis-py: "
            "pip install 'normalize-errors[resilience]'"
        ) from exc
    return redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry_on_timeout=False,
        health_check_interval=0,
    )


class RedisStore:
    """Breaker state in Redis: each operation is one script, one round trip, on one key."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        tenant: str | None,
        timeout: float,
        window: float,
        max_open: float,
        trial_lease: float,
    ) -> None:
        self.client: Any = connect(url, timeout, "CircuitBreaker")
        self.namespace = namespace(prefix, tenant)
        self.shown = redact(url)
        """The store's URL as it may be shown: its password redacted."""
        bucket_ms = max(round(window * 1000 / BUCKETS), 1)
        self._head: list[str | int] = [
            BUCKETS,
            bucket_ms,
            round(window * 1000) + bucket_ms + round(trial_lease * 1000) + 60_000,
            max(round(max_open * 1000), 1),
            max(round(trial_lease * 1000), 1),
        ]
        self._record = self.client.register_script(_RECORD)
        self._open = self.client.register_script(_OPEN)
        self._trial = self.client.register_script(_TRIAL)
        self._settle = self.client.register_script(_SETTLE)

    def key(self, key: str) -> str:
        """The Redis key of the breaker whose digest is ``key``."""
        return self.namespace + key

    def record(self, key: str, calls: int, failures: int, slow: int, label: str) -> State:
        args: list[str | int] = [*self._head, calls, failures, slow, label]
        return parse(self._record(keys=[self.key(key)], args=args))

    def open(
        self, key: str, label: str, seconds: float, opened_by: dict[str, Any], trips: int
    ) -> State:
        members = ("code", "status", "upstream_code", "reason")
        facts = [str(opened_by.get(name, "")) for name in members]
        args: list[str | int] = [*self._head, max(round(seconds * 1000), 1), trips, label, *facts]
        return parse(self._open(keys=[self.key(key)], args=args))

    def take_trial(self, key: str, permits: int) -> tuple[bool, State]:
        reply = self._trial(keys=[self.key(key)], args=[*self._head, permits])
        if not isinstance(reply, list) or not reply:
            raise ValueError("the breaker script answered out of shape")
        return _int(reply[0], 1) == 1, parse(reply[1:])

    def trial_succeeded(self, key: str, permits: int) -> State:
        return parse(self._settle(keys=[self.key(key)], args=[*self._head, permits]))

    def set_mode(self, key: str, label: str, mode: Mode) -> None:
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(self.key(key))
        pipe.hset(self.key(key), mapping={"mode": mode, "label": label})
        pipe.execute()

    def reset(self, key: str) -> None:
        self.client.delete(self.key(key))


class _Copy:
    """What this process last read of one breaker, and when (``clock()``)."""

    __slots__ = ("fetched", "state")

    def __init__(self, state: State, fetched: float) -> None:
        self.state = state
        self.fetched = fetched


class Degrading:
    """Where each operation of a store shared through Redis goes: to Redis, or to the state
    kept in this process while Redis (``down_since``), or one key of it (``bad_keys``), fails.

    A failure never raises in the caller's path: it is logged once (logger
    ``normalize_errors.resilience``), the operation is done on the local state, and Redis, or
    the key, is tried again ``reconnect_after`` seconds later. ``what`` names the store in the
    warnings, ``kept`` what a failed key's warning keeps in this process; ``redis_key(key)``
    gives a key's name in Redis. The breaker's store and the ledger's share this.
    """

    what = "circuit breaker store"
    kept = "that breaker"

    def __init__(
        self,
        shown: str,
        redis_key: Callable[[str], str],
        *,
        reconnect_after: float,
        max_keys: int,
        clock: Callable[[], float],
    ) -> None:
        self._shown = shown
        self._redis_key = redis_key
        self.reconnect_after = reconnect_after
        self.max_keys = max_keys
        self.clock = clock
        self.down_since: float | None = None
        """When Redis last failed (``clock()``), while it is thought down."""
        self.bad_keys: OrderedDict[str, float] = OrderedDict()
        """Keys whose own Redis error set them aside, and when (``clock()``)."""

    @property
    def shown(self) -> str:
        """The store's URL as it may be shown (its password redacted)."""
        return self._shown

    @property
    def degraded(self) -> bool:
        """True while Redis is thought down and every state is kept in this process."""
        return self.down_since is not None

    # -- choosing where an operation goes -------------------------------------------------------

    def _local_for(self, key: str) -> bool:
        now = self.clock()
        if self.down_since is not None and now - self.down_since < self.reconnect_after:
            return True
        since = self.bad_keys.get(key)
        if since is None:
            return False
        if now - since < self.reconnect_after:
            return True
        del self.bad_keys[key]
        return False

    def _do(self, key: str, remote: Callable[[], _T], local: Callable[[], _T]) -> _T:
        if self._local_for(key):
            return local()
        try:
            result = remote()
        except Exception as exc:  # redis.RedisError, OSError, a reply out of shape
            self._failed(key, exc)
            return local()
        if self.down_since is not None:
            LOG.warning("%s %s is back", self.what, self.shown)
            self.down_since = None
        return result

    def _failed(self, key: str, exc: Exception) -> None:
        import redis

        why = f"{type(exc).__name__}: {redact(str(exc))[:200]}"
        one_key = isinstance(exc, (redis.ResponseError, ValueError)) and not isinstance(
            exc, redis.ReadOnlyError
        )
        if one_key:  # WRONGTYPE, a script error on this key's data: this key's alone
            if key not in self.bad_keys:
                LOG.warning(
                    "%s %s: the key %s failed (%s); keeping %s in this process and trying "
                    "again in %.0f s",
                    self.what,
                    self.shown,
                    self._redis_key(key),
                    why,
                    self.kept,
                    self.reconnect_after,
                )
            self.bad_keys[key] = self.clock()
            while len(self.bad_keys) > self.max_keys:
                self.bad_keys.popitem(last=False)
            return
        if self.down_since is None:
            LOG.warning(
                "%s %s failed (%s); keeping state in this process and trying again in %.0f s",
                self.what,
                self.shown,
                why,
                self.reconnect_after,
            )
        self.down_since = self.clock()


class SharedStore(Degrading):
    """The store of a breaker shared through Redis: local copies refreshed at most every
    ``refresh`` seconds, and local state (``local``) for as long as Redis, or one of its
    keys, fails."""

    def __init__(
        self,
        remote: RedisStore,
        local: MemoryStore,
        *,
        refresh: float = 1.0,
        reconnect_after: float = 5.0,
        max_keys: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            remote.shown,
            remote.key,
            reconnect_after=reconnect_after,
            max_keys=max_keys,
            clock=clock,
        )
        self.remote = remote
        self.local = local
        self.refresh = refresh
        self._copies: OrderedDict[str, _Copy] = OrderedDict()
        self._pending: dict[str, list[int]] = {}
        self._lock = threading.Lock()

    def _keep(self, key: str, state: State) -> State:
        """Keep ``state`` as this process's copy of ``key``, read now."""
        with self._lock:
            self._copies[key] = _Copy(state, self.clock())
            self._copies.move_to_end(key)
            while len(self._copies) > self.max_keys:
                dropped, _ = self._copies.popitem(last=False)
                self._pending.pop(dropped, None)
        return state

    def _flush(self, key: str) -> tuple[int, int]:
        """The successes counted for ``key`` since its last write (now written)."""
        with self._lock:
            calls, slow = self._pending.pop(key, (0, 0))
        return calls, slow

    # -- the store's operations -----------------------------------------------------------------

    def peek(self, key: str) -> State | None:
        if self._local_for(key):
            return self.local.peek(key)
        with self._lock:
            copy = self._copies.get(key)
        if copy is None:
            return None
        age = self.clock() - copy.fetched
        if age >= self.refresh:
            return None
        state = copy.state
        if state.name == "open":
            left = state.left - age
            if left <= 0:  # half-open by now: the trial is taken in Redis
                return None
            return State("open", left, state.opened_by, state.trips)
        if state.name == "half_open":
            return None
        return state

    def read(self, key: str) -> State:
        def remote() -> State:
            calls, slow = self._flush(key)
            return self._keep(key, self.remote.record(key, calls, 0, slow, ""))

        return self._do(key, remote, lambda: self.local.read(key))

    def count_success(self, key: str, slow: bool) -> None:
        if self._local_for(key):
            self.local.count_success(key, slow)
            return
        with self._lock:
            pending = self._pending.get(key)
            if pending is None:
                if len(self._pending) >= self.max_keys:
                    self._pending.pop(next(iter(self._pending)))
                pending = self._pending[key] = [0, 0]
            pending[0] += 1
            pending[1] += int(slow)

    def add_failure(self, key: str, label: str, slow: bool) -> State:
        def remote() -> State:
            calls, slow_calls = self._flush(key)
            state = self.remote.record(key, calls + 1, 1, slow_calls + int(slow), label)
            return self._keep(key, state)

        return self._do(key, remote, lambda: self.local.add_failure(key, label, slow))

    def open(
        self, key: str, label: str, seconds: float, opened_by: dict[str, Any], trips: int
    ) -> State:
        return self._do(
            key,
            lambda: self._keep(key, self.remote.open(key, label, seconds, opened_by, trips)),
            lambda: self.local.open(key, label, seconds, opened_by, trips),
        )

    def take_trial(self, key: str, permits: int, lease: float) -> tuple[bool, State]:
        def remote() -> tuple[bool, State]:
            granted, state = self.remote.take_trial(key, permits)
            self._keep(key, state)
            return granted, state

        return self._do(key, remote, lambda: self.local.take_trial(key, permits, lease))

    def trial_succeeded(self, key: str, permits: int) -> State:
        return self._do(
            key,
            lambda: self._keep(key, self.remote.trial_succeeded(key, permits)),
            lambda: self.local.trial_succeeded(key, permits),
        )

    def set_mode(self, key: str, label: str, mode: Mode) -> None:
        with self._lock:
            self._copies.pop(key, None)
        self._do(
            key,
            lambda: self.remote.set_mode(key, label, mode),
            lambda: self.local.set_mode(key, label, mode),
        )

    def reset(self, key: str) -> None:
        with self._lock:
            self._copies.pop(key, None)
            self._pending.pop(key, None)
        self.local.reset(key)
        self._do(key, lambda: self.remote.reset(key), lambda: None)
