"""The ledger shared by processes through Redis (redis-py, the ``resilience`` extra).

**Keys.** One Redis hash per account, named ``{prefix}{tenant}:{digest}`` as the breaker's are
(``_store.digest`` of the account, which is itself a digest of the provider, its address and a
digest of the credential: no credential is ever stored). Its fields: ``u:{m}`` (the server
time in ms a wall on model ``m`` holds until; 0: until cleared), ``w:{m}`` (what the wall
says, ``WallNote.to_text``), ``b:{m}:{scope}`` (a budget: ``limit:level:rate_per_ms:at_ms:basis``),
``e`` (when the longest wall ends, 0: never; the key's expiry follows it) and ``label``.
``m`` is 32 hex digits of the model's digest, or ``*`` for a wall on the whole account.

**Time.** Every time is the Redis server's (``TIME`` in the scripts); every number read is
bounded (a wall at most ``max_wall`` away, a budget as ``Bucket`` bounds it); a field out of
shape reads as absent.

**One round trip per call, and none while a copy is fresh.** ``admit`` is one script on the
account's key that first applies what this process learned since it last wrote (settlements
and the headers of responses: ``Op``), then checks the walls, then reserves the call's costs;
the pending operations of other accounts go in the same pipeline. Each process keeps a copy of
what it read (walls, which budgets are known) for ``refresh`` seconds: while it is fresh, a
wall fails a call at once and a call with no learned budget goes, without a round trip; a
call with a learned budget goes without one while this process holds a *lease* that covers
it (a share of ``lease`` times the limit, taken with a reservation while the budget is at
least half full; what is left of it goes back with the next round trip). A wall met is written
at once (a failure has already cost a round trip). **The staleness bound:** a process sees
another's wall at most ``refresh`` seconds late, and holds at most ``lease`` of each limit it
did not use for at most ``refresh`` seconds (a lease is taken only when it covers a call like
the one that took it, in every budget).

**Failures.** As the breaker's store (``Degrading``): Redis down or slow, or one key's
``WRONGTYPE``, never raises in the caller's path; the state is kept in this process meanwhile.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Final

from .._base._redact import redact
from ._ledger_state import ALL, COSTS, Bucket, Decision, LedgerMemory, Op, WallNote, aged, longer
from ._redis import Degrading, connect, namespace

__all__ = ["RedisLedger", "SharedLedger"]

_PRELUDE: Final = """
if redis.replicate_commands then redis.replicate_commands() end
local key = KEYS[1]
local keep_ms = tonumber(ARGV[1])
local max_wall_ms = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function num(v, lo, hi)
  local n = tonumber(v)
  if n == nil or n ~= n or n < lo or n > hi then return nil end
  return n
end

local function bucket(m, scope)
  local v = redis.call('HGET', key, 'b:' .. m .. ':' .. scope)
  if type(v) ~= 'string' or #v > 240 then return nil end
  local l, lv, r, a, s, f = string.match(v,
    '^([^:]+):([^:]+):([^:]+):([^:]+):([^:]+):([^:]+)$')
  l, lv, r, a = num(l, 1, 1e12), num(lv, -1e12, 1e12), num(r, 0, 1e12), num(a, 0, 1e16)
  s, f = num(s, 0, 1e12), num(f, 0.01, 1)
  if not (l and lv and r and a and s and f) then return nil end
  r = math.min(math.max(r, l / 2678400000), l)
  lv = math.min(math.max(lv, -l), l)
  if a > now then a = now end
  return {l, lv, r, a, math.min(s, l), f}
end

local function level_now(b) return math.min(b[1], b[2] + (now - b[4]) * b[3]) end

local function save(m, scope, l, lv, r, s, f)
  lv = math.min(math.max(lv, -l), l)
  r = math.min(math.max(r, l / 2678400000), l)
  f = math.min(math.max(f, 0.01), 1)
  redis.call('HSET', key, 'b:' .. m .. ':' .. scope,
    string.format('%.17g:%.17g:%.17g:%d:%.17g:%.17g', l, lv, r, now,
      math.min(math.max(s, 0), l), f))
end

local function apply_ops(i)
  local n = math.min(tonumber(ARGV[i]) or 0, 256)
  i = i + 1
  for _ = 1, n do
    if ARGV[i] == 'c' then
      local m, scope, amount = ARGV[i + 1], ARGV[i + 2], num(ARGV[i + 3], -1e12, 1e12)
      local b = bucket(m, scope)
      if b and amount then save(m, scope, b[1], level_now(b) - amount, b[3], b[5], b[6]) end
      i = i + 4
    elseif ARGV[i] == 's' then
      local m, scope = ARGV[i + 1], ARGV[i + 2]
      local held, used = num(ARGV[i + 3], 0, 1e12), num(ARGV[i + 4], 0, 1e12)
      local guess = num(ARGV[i + 5], 0, 1e12)
      local b = bucket(m, scope)
      if b and held and used and guess then
        local f = b[6]
        if guess > 0 then f = f * 0.8 + math.min(math.max(used / guess, 0.01), 1) * 0.2 end
        save(m, scope, b[1], level_now(b) + held - used, b[3], b[5], f)
      end
      i = i + 6
    else
      local m, scope = ARGV[i + 1], ARGV[i + 2]
      local l, rem = num(ARGV[i + 3], 1, 1e12), num(ARGV[i + 4], 0, 1e12)
      local rs = num(ARGV[i + 5], 0, 1e13)
      if l and rem then
        rem = math.min(rem, l)
        local b = bucket(m, scope)
        local rate, basis, share = l / 60000, 0, 1
        if b then rate, basis, share = b[3], b[5], b[6] end
        local spent = l - rem
        if rs and rs > 0 and spent > 0 and (not b or b[1] ~= l or spent * 2 >= basis) then
          rate, basis = spent / rs, spent
        end
        local lv = rem
        if b then lv = math.min(level_now(b), rem) end
        save(m, scope, l, lv, rate, basis, share)
      end
      i = i + 6
    end
  end
  return i
end

local function wall(m)
  local u = redis.call('HGET', key, 'u:' .. m)
  local until_ = num(u, 0, 1e16)
  if until_ == nil then return nil, nil end
  local note = redis.call('HGET', key, 'w:' .. m)
  if type(note) ~= 'string' then note = '' end
  note = string.sub(note, 1, 2048)
  if until_ == 0 then return -1, note end
  local left = until_ - now
  if left <= 0 then
    redis.call('HDEL', key, 'u:' .. m, 'w:' .. m)
    return nil, nil
  end
  if left > max_wall_ms then
    left = max_wall_ms
    redis.call('HSET', key, 'u:' .. m, now + left)
  end
  return left, note
end

local function expire()
  if redis.call('EXISTS', key) == 0 then return end
  local e = num(redis.call('HGET', key, 'e'), 0, 1e16)
  if e == 0 then
    redis.call('PERSIST', key)
  else
    local last = 0
    if e then last = math.min(math.max(e - now, 0), max_wall_ms) end
    redis.call('PEXPIRE', key, keep_ms + last)
  end
end
"""

_ADMIT: Final = (
    _PRELUDE
    + """
local m = ARGV[3]
local reserve = ARGV[4] == '1'
local lease = num(ARGV[5], 0, 1) or 0
local patience = num(ARGV[6], 0, 1e13) or 0
local costs = {}
local nc = math.min(tonumber(ARGV[7]) or 0, 8)
local i = 8
for _ = 1, nc do
  costs[#costs + 1] = {ARGV[i], num(ARGV[i + 1], 0, 1e12) or 0}
  i = i + 2
end
redis.call('HGET', key, 'e')  -- a key of another type fails here, before any write
apply_ops(i)
local lm, nm = wall(m)
local la, na = wall('*')
local blocked, wait, note = false, 0, ''
for _, w in ipairs({{lm, nm}, {la, na}}) do
  if w[1] then
    if not blocked or w[1] == -1 or (wait ~= -1 and w[1] > wait) then
      blocked, wait, note = true, w[1], w[2]
    end
  end
end
local reason, scope = '', ''
local found = {}
for _, c in ipairs(costs) do
  local b = bucket(m, c[1])
  if b then found[c[1]] = b end
end
if not blocked then
  for _, c in ipairs(costs) do
    local b = found[c[1]]
    if b and c[2] > 0 then
      local need = (math.min(c[2], b[1]) - level_now(b)) / b[3]
      if need > wait then wait, reason, scope = need, 'budget', c[1] end
    end
  end
end
local granted = 0
local leased, taken = {}, {}
if reason == 'budget' and reserve and wait <= patience then
  for _, c in ipairs(costs) do
    local b = found[c[1]]
    if b and c[2] > 0 and level_now(b) - math.min(c[2], b[1]) * b[6] < -b[1] then
      patience = -1
    end
  end
  if patience >= 0 then reason = '' end  -- reserved now, to be sent after ``wait``
end
if blocked then reason = 'wall' elseif reason == '' then
  granted = 1
  if reserve then
    -- a lease only when it can admit a call like this one in every budget it names
    local leasing = wait == 0 and lease > 0
    for _, c in ipairs(costs) do
      local b = found[c[1]]
      if b and c[2] > 0 and leasing then
        local lv = level_now(b) - math.min(c[2], b[1]) * b[6]
        leasing = lv >= b[1] / 2 and math.floor(b[1] * lease) >= c[2]
      end
    end
    for _, c in ipairs(costs) do
      local b = found[c[1]]
      if b and c[2] > 0 then
        local portion = math.min(c[2], b[1]) * b[6]
        local share = 0
        if leasing then share = math.floor(b[1] * lease) end
        save(m, c[1], b[1], level_now(b) - portion - share, b[3], b[5], b[6])
        leased[c[1]] = share
        taken[c[1]] = portion
      end
    end
  end
end
expire()
local reply = {granted, math.ceil(wait), reason, scope, note,
  lm or -2, nm or '', la or -2, na or ''}
for _, c in ipairs(costs) do
  local b = bucket(m, c[1])
  if b then
    table.insert(reply, c[1])
    table.insert(reply, string.format('%.17g', b[1]))
    table.insert(reply, string.format('%.17g', level_now(b)))
    table.insert(reply, string.format('%.17g', b[3]))
    table.insert(reply, string.format('%.17g', leased[c[1]] or 0))
    table.insert(reply, string.format('%.17g', taken[c[1]] or 0))
  end
end
return reply
"""
)
"""Apply the pending operations, then may a call of model ARGV[3] go: the walls, then the
budgets of the costs given; reserve them (ARGV[4]) and a lease (ARGV[5], a share of each
limit). A call whose budgets have room within ARGV[6] ms (the caller's patience) is granted
now for then: its costs are taken now (a budget may go below 0, never below minus its limit),
and the caller sends it after the wait, with no second round trip. Reply: granted, wait ms
(-1: until cleared), reason, the spent scope, the blocking wall's note, the walls of the model
and of the account, then per known budget its scope, limit, level, rate per ms and the lease
taken."""

_APPLY: Final = (
    _PRELUDE
    + """
redis.call('HGET', key, 'e')
apply_ops(3)
expire()
return 1
"""
)
"""Apply pending operations only (another account's, pipelined with an admission)."""

_RECORD: Final = (
    _PRELUDE
    + """
local m, hold, note, label = ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
redis.call('HGET', key, 'e')
local left = wall(m)
local ends = 0
if hold >= 0 then ends = now + math.max(math.min(hold, max_wall_ms), 1) end
if not (left == -1 or (left and hold >= 0 and now + left >= ends)) then
  redis.call('HSET', key, 'u:' .. m, ends, 'w:' .. m, note, 'label', label)
  local e = num(redis.call('HGET', key, 'e'), 0, 1e16)
  if hold < 0 or e == 0 then
    redis.call('HSET', key, 'e', 0)
  elseif not e or ends > e then
    redis.call('HSET', key, 'e', ends)
  end
end
expire()
local after = wall(m)
return after or -2
"""
)
"""A wall on ARGV[3] for ARGV[4] ms (-1: until cleared) unless a longer one stands."""

_CLEAR: Final = (
    _PRELUDE
    + """
local m = ARGV[3]
local fields = redis.call('HKEYS', key)
local last = -1
for _, f in ipairs(fields) do
  local which = string.match(f, '^u:(.+)$')
  if which and (m == '' or which == m) then
    redis.call('HDEL', key, 'u:' .. which, 'w:' .. which)
  elseif which then
    local u = num(redis.call('HGET', key, f), 0, 1e16)
    if u == 0 then last = 0 elseif u and last ~= 0 and u > last then last = u end
  end
end
if last < 0 then redis.call('HDEL', key, 'e') else redis.call('HSET', key, 'e', last) end
expire()
return 1
"""
)
"""Take down the walls of ARGV[3] ('': every wall of the account)."""


def _number(value: Any, low: float, high: float) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if low <= number <= high else None


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else ""


def _left(value: Any) -> tuple[bool, float | None]:
    """A wall's ms left in a reply: (held?, seconds or None for until cleared)."""
    number = _number(value, -2, 1e13)
    if number is None or number == -2:
        return False, None
    return True, (None if number < 0 else number / 1000.0)


def parse(
    reply: Any,
    model: str,
    at: float,
    costs: Mapping[str, float] | None = None,
    reserve: bool = False,
) -> tuple[Decision, dict[str, float]]:
    """An admission's reply as a ``Decision`` (budgets on the local ``at`` clock), and the
    lease taken per scope. Whatever is out of shape reads as absent."""
    if not isinstance(reply, (list, tuple)) or len(reply) < 9:
        raise ValueError("the ledger script answered out of shape")
    granted = _number(reply[0], 0, 1) == 1
    wait_ms = _number(reply[1], -1, 1e13)
    wait = None if wait_ms == -1 else (wait_ms or 0.0) / 1000.0
    reason = _text(reply[2]) if _text(reply[2]) in ("wall", "budget") else ""
    scope = _text(reply[3]) if _text(reply[3]) in COSTS else None
    walls: dict[str, tuple[float | None, WallNote | None]] = {}
    for field, left, note in ((model, reply[5], reply[6]), (ALL, reply[7], reply[8])):
        held, seconds = _left(left)
        if held:
            walls[field] = (seconds, WallNote.from_text(note))
    budgets: dict[str, Bucket] = {}
    leases: dict[str, float] = {}
    rest = list(reply[9:])
    taken: dict[str, float] = {}
    for index in range(0, min(len(rest), 48) - 5, 6):
        name, limit, level, rate, lease, portion = rest[index : index + 6]
        scope_name = _text(name)
        numbers = (_number(limit, 1, 1e12), _number(level, -1e12, 1e12), _number(rate, 0, 1e12))
        if scope_name in COSTS and None not in numbers:
            top, left, per_ms = (n or 0.0 for n in numbers)
            budgets[scope_name] = Bucket(top, left, per_ms * 1000.0, at)
            leases[scope_name] = min(_number(lease, 0, 1e12) or 0.0, top)
            if (costs or {}).get(scope_name, 0) > 0:
                taken[scope_name] = min(_number(portion, 0, 1e12) or 0.0, top)
    note = WallNote.from_text(reply[4]) if reason == "wall" else None
    admitted = granted and not reason
    decision = Decision(
        admitted,
        wait,
        reason,
        note=note,
        scope=scope,
        walls=walls,
        budgets=budgets,
        reserved=taken if admitted and reserve else None,
    )
    return decision, leases


def _ops_args(ops: list[Op]) -> list[Any]:
    args: list[Any] = [len(ops)]
    for op in ops:
        if op[0] == "charge":
            args += ["c", op[1], op[2], repr(float(op[3]))]
        elif op[0] == "settle":
            args += ["s", op[1], op[2], *(repr(float(n)) for n in op[3:6])]
        else:
            resets = -1 if op[5] is None else round(op[5] * 1000)
            args += ["o", op[1], op[2], repr(float(op[3])), repr(float(op[4])), resets]
    return args


class RedisLedger:
    """The ledger's state in Redis: each operation is one script on one account's key."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        tenant: str | None,
        timeout: float,
        keep: float,
        max_wall: float,
    ) -> None:
        self.client: Any = connect(url, timeout, "Ledger")
        self.namespace = namespace(prefix, tenant)
        self.shown = redact(url)
        self._head: list[Any] = [max(round(keep * 1000), 1), max(round(max_wall * 1000), 1)]
        self._admit = self.client.register_script(_ADMIT)
        self._apply = self.client.register_script(_APPLY)
        self._record = self.client.register_script(_RECORD)
        self._clear = self.client.register_script(_CLEAR)

    def key(self, account: str) -> str:
        """The Redis key of the account whose digest is ``account``."""
        return self.namespace + account

    def admit(
        self,
        account: str,
        model: str,
        costs: Mapping[str, float] | None,
        ops: list[Op],
        others: Mapping[str, list[Op]],
        *,
        reserve: bool,
        lease: float,
        patience: float,
        at: float,
    ) -> tuple[Decision, dict[str, float]]:
        """One round trip: the other accounts' operations, then this admission."""
        flat: list[Any] = []
        for scope, cost in (costs or {}).items():
            flat += [scope, repr(float(cost))]
        args = [
            *self._head,
            model,
            "1" if reserve else "0",
            repr(lease),
            max(round(patience * 1000), 0),
            len(flat) // 2,
            *flat,
            *_ops_args(ops),
        ]
        if not others:
            reply = self._admit(keys=[self.key(account)], args=args)
            return parse(reply, model, at, costs, reserve)
        pipe = self.client.pipeline(transaction=False)
        for other, pending in others.items():
            self._apply(
                keys=[self.key(other)], args=[*self._head, *_ops_args(pending)], client=pipe
            )
        self._admit(keys=[self.key(account)], args=args, client=pipe)
        replies = pipe.execute(raise_on_error=False)
        last = replies[-1]
        if isinstance(last, Exception):
            raise last
        return parse(last, model, at, costs, reserve)

    def record(self, account: str, model: str, hold: float | None, note: str, label: str) -> None:
        ms = -1 if hold is None else max(round(hold * 1000), 1)
        self._record(keys=[self.key(account)], args=[*self._head, model, ms, note, label])

    def clear(self, account: str, model: str | None) -> None:
        self._clear(keys=[self.key(account)], args=[*self._head, model or ""])


class _Copy:
    """What this process last read of one account's model, and when (``clock()``)."""

    __slots__ = ("budgets", "fetched", "leases", "walls")

    def __init__(
        self,
        fetched: float,
        walls: dict[str, tuple[float | None, WallNote | None]],
        budgets: set[str],
        leases: dict[str, float],
    ) -> None:
        self.fetched = fetched
        self.walls = walls
        """Per model field: the clock time it holds until (None: until cleared), its note."""
        self.budgets = budgets
        self.leases = leases


class SharedLedger(Degrading):
    """The ledger shared through Redis, with local copies (``refresh``), leases (``lease``),
    pending operations written with the next round trip, and the state kept in this process
    (``local``) for as long as Redis, or one account's key, fails."""

    what = "ledger store"
    kept = "that account's walls and budgets"

    def __init__(
        self,
        remote: RedisLedger,
        local: LedgerMemory,
        *,
        refresh: float,
        lease: float,
        reconnect_after: float,
        max_keys: int,
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
        self.lease = lease
        self.round_trips = 0
        """Round trips made (a pipeline is one)."""
        self._copies: OrderedDict[tuple[str, str], _Copy] = OrderedDict()
        self._pending: OrderedDict[str, list[Op]] = OrderedDict()
        self._lock = threading.Lock()

    # -- what this process holds -------------------------------------------------------------

    def _fresh(self, account: str, model: str) -> _Copy | None:
        with self._lock:
            copy = self._copies.get((account, model))
        if copy is None or self.clock() - copy.fetched >= self.refresh:
            return None
        return copy

    def _keep(self, account: str, model: str, decision: Decision, leases: dict[str, float]) -> None:
        now = self.clock()
        walls = {
            field: (None if left is None else now + left, note)
            for field, (left, note) in decision.walls.items()
        }
        copy = _Copy(now, walls, set(decision.budgets), dict(leases))
        with self._lock:
            old = self._copies.pop((account, model), None)
            self._copies[(account, model)] = copy
            while len(self._copies) > self.max_keys:
                (gone, gone_model), dropped = self._copies.popitem(last=False)
                self._give_back(gone, gone_model, dropped)
            if old is not None:
                self._give_back(account, model, old)

    def _give_back(self, account: str, model: str, copy: _Copy) -> None:
        """What is left of a copy's leases goes back with the next round trip (lock held)."""
        for scope, amount in copy.leases.items():
            if amount > 0:
                self._queue(account, ("charge", model, scope, -amount))
        copy.leases = {}

    def _queue(self, account: str, op: Op) -> None:
        pending = self._pending.get(account)
        if pending is None:
            pending = self._pending[account] = []
            while len(self._pending) > self.max_keys:
                self._pending.popitem(last=False)
        if len(pending) < 256:
            pending.append(op)

    def note(self, account: str, ops: list[Op]) -> None:
        """Settlements and observations, written with the next round trip (no I/O now). A
        budget this process's copy did not know makes the copy stale: the next call asks Redis
        (and writes what was learned), instead of going unreserved for ``refresh`` seconds."""
        if self._local_for(account):
            self.local.apply(account, ops)
            return
        with self._lock:
            for op in ops:
                self._queue(account, op)
                copy = self._copies.get((account, op[1]))
                if op[0] == "observe" and copy is not None and op[2] not in copy.budgets:
                    del self._copies[(account, op[1])]
                    self._give_back(account, op[1], copy)

    # -- the operations ------------------------------------------------------------------------

    def peek(self, account: str, model: str, costs: Mapping[str, float] | None) -> Decision | None:
        """The answer from a fresh copy, without a round trip, or None when Redis must say."""
        copy = self._fresh(account, model)
        if copy is None:
            return None
        now = self.clock()
        blocking: tuple[float | None, WallNote | None] | None = None
        for until, note in copy.walls.values():
            if until is not None and until <= now:
                continue
            left = None if until is None else until - now
            if blocking is None or longer(left, blocking[0]):
                blocking = (left, note)
        if blocking is not None:
            return Decision(False, blocking[0], "wall", note=blocking[1])
        wanted = {s: c for s, c in (costs or {}).items() if s in copy.budgets and c > 0}
        if not wanted:
            return Decision(True)
        with self._lock:
            if all(copy.leases.get(s, 0.0) >= c for s, c in wanted.items()):
                for scope, cost in wanted.items():
                    copy.leases[scope] -= cost
                return Decision(True, reserved=wanted)
        return None

    def admit(
        self,
        account: str,
        model: str,
        costs: Mapping[str, float] | None,
        *,
        reserve: bool = True,
        patience: float = 0.0,
    ) -> Decision:
        """One round trip (the pending operations of every account pipelined with it)."""

        def remote() -> Decision:
            with self._lock:
                copy = self._copies.pop((account, model), None)
                if copy is not None:
                    self._give_back(account, model, copy)
                now = self.clock()
                ops = [aged(op, now) for op in self._pending.pop(account, [])]
                others = {k: [aged(op, now) for op in v] for k, v in self._pending.items()}
                self._pending.clear()
            try:
                self.round_trips += 1
                decision, leases = self.remote.admit(
                    account,
                    model,
                    costs,
                    ops,
                    others,
                    reserve=reserve,
                    lease=self.lease if reserve else 0.0,
                    patience=patience,
                    at=self.clock(),
                )
            except Exception:
                with self._lock:  # nothing learned is lost: it goes with the next trip
                    for key, pending in ((account, ops), *others.items()):
                        for op in pending:
                            self._queue(key, op)
                raise
            self._keep(account, model, decision, leases)
            return decision

        def local() -> Decision:
            with self._lock:
                ops = self._pending.pop(account, [])
            return self.local.admit(account, model, costs, ops, reserve=reserve, patience=patience)

        return self._do(account, remote, local)

    def record(
        self, account: str, model: str, hold: float | None, note: WallNote, label: str
    ) -> None:
        """A wall, written at once; this process's copy holds it at once."""
        with self._lock:
            for (key, field), copy in self._copies.items():
                if key == account and model in (ALL, field):
                    until = None if hold is None else self.clock() + hold
                    copy.walls[model] = (until, note)
        self.local.record(account, model, hold, note, label)

        def remote() -> None:
            self.round_trips += 1
            self.remote.record(account, model, hold, note.to_text(), label)

        self._do(account, remote, lambda: None)

    def clear(self, account: str, model: str | None) -> None:
        with self._lock:
            for key in [k for k in self._copies if k[0] == account]:
                self._copies.pop(key)
        self.local.clear(account, model)
        self._do(account, lambda: self.remote.clear(account, model), lambda: None)
