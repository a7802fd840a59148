"""What the ledger keeps per account, and the ledger's state in this process (``LedgerMemory``).

An *account* is one credential at one provider (``_ledger_calls.account``: a digest of the
provider, its address, organization, project and a digest of the key; never the key). Per
account the ledger keeps:

* **walls**, per model (a digest of the model's name) or for the whole account (``*``): how
  long it holds (until a time, or until cleared: a billing wall) and what it says
  (``WallNote``: the error's code, HTTP status, the vendor's code, whether it is retryable, and
  its ``Quota``; never a message or a credential);
* **budgets** (``Bucket``), per model and scope (``requests``, ``tokens``, ``input_tokens``,
  ``output_tokens``), learned from the providers' rate-limit headers: a token bucket of
  ``limit`` that refills at ``rate`` per second, and its ``level`` (what is left) at ``at``.

A bucket learns from each response's headers (``observe``): the limit; the rate, from how long
the provider says the bucket takes to be whole again ((limit - remaining) / seconds; else
what it learned before; else the limit per minute), read again only from an observation that
spent at least half as much of the limit as the one it came from (a remaining count is a whole
number and a reset rounded: a bucket one unit short of full says little of its rate); and its
level, which never rises above what the provider says remains (``min``: what this fleet
reserved and has not yet reached the provider stays reserved). A call reserves its expected
cost before it is sent (``admit``: it waits until the whole estimate is free, as the provider
checks, and takes the share of it that calls have been using) and settles it against the usage
the response reports (``settle``: the difference goes back, and the share is learned again).

``LedgerMemory`` keeps all of it in this process on ``time.monotonic``; ``_ledger_redis`` keeps
the same in Redis on the server's clock, with the same rules (its scripts mirror ``Bucket``).
Every number is bounded: a budget of at most 10^12, a rate within its limit per 31 days and
its limit per millisecond, a level within minus and plus its limit.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from .._model._code_classes import class_for_code
from .._model._quota import Quota
from .._model._registry import CODE_PATTERN

__all__ = [
    "ALL",
    "COSTS",
    "Bucket",
    "Decision",
    "LedgerMemory",
    "Op",
    "WallNote",
    "aged",
    "longer",
]

ALL: Final = "*"
"""The model field of a wall that holds for every model of the account."""
COSTS: Final = ("requests", "tokens", "input_tokens", "output_tokens")
"""The scopes a call is charged in (a spend wall is a wall, never a budget)."""
MAX_BUDGET: Final = 1e12
DAY_MONTH: Final = 31 * 86400.0
MIN_SHARE: Final = 0.01
LEARNING: Final = 0.2
"""How much each settled call moves the learned ``share`` (an average over the last few)."""
MINUTE: Final = 60.0
"""The period of a budget whose refill the headers do not tell: OpenAI's and Anthropic's
rate-limit headers describe per-minute limits unless they say otherwise."""


class Bucket:
    """A learned budget: ``limit``, its refill ``rate`` per second, and its ``level`` at
    ``at`` (the store's clock, in seconds); ``basis`` is how much of the limit was spent in
    the observation the rate was read from (0: the default rate); ``share`` is what calls
    have used of their estimate (settled against their usage; 1 until one is)."""

    __slots__ = ("at", "basis", "level", "limit", "rate", "share")

    def __init__(
        self,
        limit: float,
        level: float,
        rate: float,
        at: float,
        *,
        basis: float = 0.0,
        share: float = 1.0,
    ) -> None:
        self.limit = self.rate = self.level = self.at = self.basis = self.share = 0.0
        self._set(limit, level, rate, at, basis=basis, share=share)

    def _set(
        self, limit: float, level: float, rate: float, at: float, *, basis: float, share: float
    ) -> None:
        """Every member, bounded."""
        self.limit = min(max(limit, 1.0), MAX_BUDGET)
        self.rate = min(max(rate, self.limit / DAY_MONTH), self.limit * 1000.0)
        self.level = min(max(level, -self.limit), self.limit)
        self.at = at
        self.basis = min(max(basis, 0.0), self.limit)
        self.share = min(max(share, MIN_SHARE), 1.0)

    def portion(self, cost: float) -> float:
        """What a call that may cost ``cost`` reserves: its ``share`` of it (the provider
        checks the whole ``cost`` is free before it admits it: ``wait``)."""
        return min(cost, self.limit) * self.share

    def settle(self, reserved: float, used: float, estimate: float, at: float) -> None:
        """A call that reserved ``reserved`` used ``used`` of its ``estimate``: the
        difference goes back (or is taken), and the share calls use is learned again."""
        self.take(used - reserved, at)
        if estimate > 0:
            sample = min(max(used / estimate, MIN_SHARE), 1.0)
            self.share = min(max(self.share * (1 - LEARNING) + sample * LEARNING, MIN_SHARE), 1.0)

    def now(self, at: float) -> float:
        """The level at ``at``: refilled at ``rate`` since ``self.at``, at most ``limit``."""
        return min(self.limit, self.level + max(at - self.at, 0.0) * self.rate)

    def wait(self, cost: float, at: float) -> float:
        """Seconds until ``cost`` fits (0: now). A cost over the limit waits for a whole
        bucket, then goes: the provider judges it."""
        need = min(cost, self.limit) - self.now(at)
        return 0.0 if need <= 0 else need / self.rate

    def take(self, amount: float, at: float) -> None:
        """Take ``amount`` (give back when negative) now."""
        self.level = min(max(self.now(at) - amount, -self.limit), self.limit)
        self.at = at

    def observe(self, limit: float, remaining: float, resets_in: float | None, at: float) -> None:
        """What a response's headers say now (see the module's docstring)."""
        level = min(self.now(at), remaining)
        rate, basis = self.rate, self.basis
        spent = limit - remaining
        fresh = limit != self.limit or spent * 2 >= self.basis
        if resets_in is not None and resets_in > 0 and spent > 0 and fresh:
            rate, basis = spent / resets_in, spent
        self._set(limit, level, rate, at, basis=basis, share=self.share)

    @classmethod
    def learned(cls, limit: float, remaining: float, resets_in: float | None, at: float) -> Bucket:
        """A bucket first learned from a response's headers."""
        rate, basis = limit / MINUTE, 0.0
        if resets_in is not None and resets_in > 0 and remaining < limit:
            rate, basis = (limit - remaining) / resets_in, limit - remaining
        return cls(limit, remaining, rate, at, basis=basis)

    def __repr__(self) -> str:
        return f"Bucket(limit={self.limit:g}, level={self.level:g}, rate={self.rate:g}/s)"


class WallNote:
    """What a stored wall says: the error's code, HTTP status, the vendor's code, whether it
    is retryable, and its ``Quota``. Written as one line of text (``to_text``), read back
    from a shared store as untrusted input (``from_text``: anything out of shape is None)."""

    __slots__ = ("code", "quota", "retryable", "status", "vendor_code")

    def __init__(
        self,
        code: str,
        status: int | None,
        vendor_code: str | None,
        retryable: bool,
        quota: Quota | None,
    ) -> None:
        self.code = code
        self.status = status
        self.vendor_code = vendor_code
        self.retryable = retryable
        self.quota = quota

    def to_text(self) -> str:
        quota = "" if self.quota is None else json.dumps(self.quota.to_dict(), sort_keys=True)
        vendor = (self.vendor_code or "").replace("\t", " ")[:64]
        status = "" if self.status is None else str(self.status)
        return "\t".join((self.code, status, vendor, "1" if self.retryable else "0", quota))

    @classmethod
    def from_text(cls, text: Any) -> WallNote | None:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if not isinstance(text, str) or len(text) > 2048:
            return None
        parts = text.split("\t", 4)
        if len(parts) != 5:
            return None
        code, status, vendor, retryable, quota_text = parts
        if not (len(code) <= 64 and CODE_PATTERN.compiled().fullmatch(code)):
            return None
        number = int(status) if status.isdigit() and len(status) == 3 else None
        quota: Quota | None = None
        if quota_text:
            try:
                found = json.loads(quota_text)
                quota = Quota.from_dict(found) if isinstance(found, dict) else None
            except (ValueError, RecursionError):
                quota = None
        return cls(code, number, vendor or None, retryable == "1", quota)

    def error_class(self) -> Any:
        return class_for_code(self.code)


class Decision:
    """What the ledger says of a call: ``granted``, else why not (``reason``: ``wall`` or
    ``budget``) and for how long (``wait``, seconds; ``None``: until a person clears it);
    ``note`` is the blocking wall's, ``scope`` the spent budget's. ``walls`` and ``budgets``
    are what the store holds of the account and model now (for a local copy)."""

    __slots__ = ("budgets", "granted", "note", "reason", "reserved", "scope", "wait", "walls")

    def __init__(
        self,
        granted: bool,
        wait: float | None = 0.0,
        reason: str = "",
        *,
        note: WallNote | None = None,
        scope: str | None = None,
        walls: dict[str, tuple[float | None, WallNote | None]] | None = None,
        budgets: dict[str, Bucket] | None = None,
        reserved: Mapping[str, float] | None = None,
    ) -> None:
        self.granted = granted
        self.reserved: dict[str, float] = dict(reserved or {})
        """What was taken from each budget for the call (settled against its usage)."""
        self.wait = wait
        self.reason = reason
        self.note = note
        self.scope = scope
        self.walls: dict[str, tuple[float | None, WallNote | None]] = walls or {}
        """Per model field (``ALL`` too): seconds left (``None``: until cleared), and the note."""
        self.budgets: dict[str, Bucket] = budgets or {}

    def __repr__(self) -> str:
        if self.granted:
            return "Decision(granted)"
        return f"Decision({self.reason}, wait={self.wait}, scope={self.scope})"


Op = tuple[Any, ...]
"""A pending operation on an account: ``("charge", model, scope, amount)`` (taken, or given
back when negative: a failed call's reservation, a lease's rest), ``("settle", model, scope,
reserved, used, estimate)`` (a call's usage against what it reserved and estimated) or
``("observe", model, scope, limit, remaining, resets_in, heard)`` (a response's headers, heard
at the clock time ``heard``)."""


def aged(op: Op, now: float) -> Op:
    """An observation as it holds at ``now``: what the bucket refilled since it was heard
    added to its remaining count, and that much less time to its reset (a settlement is the
    same at any time). Pending observations reach Redis with a later call."""
    if op[0] != "observe":
        return op
    _, model, scope, limit, remaining, resets_in, heard = op
    age = max(now - heard, 0.0)
    if not age or resets_in is None or resets_in <= 0 or remaining >= limit:
        return ("observe", model, scope, limit, remaining, resets_in, now)
    rate = (limit - remaining) / resets_in
    left = max(resets_in - age, 0.0)
    return ("observe", model, scope, limit, min(limit, remaining + age * rate), left, now)


def longer(left: float | None, than: float | None) -> bool:
    """Whether a wall with ``left`` seconds holds longer than one with ``than`` (``None``:
    until cleared, the longest)."""
    if than is None:
        return False
    return left is None or left > than


class _Account:
    __slots__ = ("budgets", "label", "walls")

    def __init__(self, label: str) -> None:
        self.label = label
        self.walls: dict[str, tuple[float | None, WallNote]] = {}
        """model -> (the clock time it holds until, None until cleared; its note)."""
        self.budgets: dict[tuple[str, str], Bucket] = {}


class LedgerMemory:
    """The ledger's state in this process: at most ``max_keys`` accounts (the least recently
    used without a wall goes first), on a monotonic ``clock``."""

    def __init__(
        self, max_keys: int = 1024, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_keys = max_keys
        self.clock = clock
        self._accounts: OrderedDict[str, _Account] = OrderedDict()
        self._lock = threading.Lock()

    def _account(self, key: str, label: str = "") -> _Account:
        found = self._accounts.get(key)
        if found is None:
            found = self._accounts[key] = _Account(label)
            while len(self._accounts) > self.max_keys:
                spare = next(
                    (k for k, a in self._accounts.items() if not a.walls and k != key), None
                )  # never the account just made: a wall about to be recorded on it
                del self._accounts[spare if spare is not None else next(iter(self._accounts))]
        else:
            self._accounts.move_to_end(key)
        if label:
            found.label = label
        return found

    def _apply(self, account: _Account, ops: Iterable[Op], now: float) -> None:
        for op in ops:
            if op[0] == "charge":
                _, model, scope, amount = op
                bucket = account.budgets.get((model, scope))
                if bucket is not None:
                    bucket.take(amount, now)
            elif op[0] == "settle":
                _, model, scope, reserved, used, estimate = op
                bucket = account.budgets.get((model, scope))
                if bucket is not None:
                    bucket.settle(reserved, used, estimate, now)
            elif op[0] == "observe":
                _, model, scope, limit, remaining, resets_in, _ = aged(op, now)
                bucket = account.budgets.get((model, scope))
                if bucket is None:
                    account.budgets[(model, scope)] = Bucket.learned(
                        limit, remaining, resets_in, now
                    )
                else:
                    bucket.observe(limit, remaining, resets_in, now)

    def apply(self, key: str, ops: Iterable[Op]) -> None:
        """Apply settlements and observations to the account ``key``."""
        with self._lock:
            self._apply(self._account(key), ops, self.clock())

    def admit(
        self,
        key: str,
        model: str,
        costs: Mapping[str, float] | None,
        ops: Iterable[Op] = (),
        *,
        reserve: bool = True,
        patience: float = 0.0,
    ) -> Decision:
        """May a call of ``model`` that costs ``costs`` go now? With ``reserve``, a granted
        call's costs are taken from the learned budgets; ``ops`` are applied first. A call
        whose budgets have room within ``patience`` seconds is granted for then (its ``wait``):
        its costs are taken now, a budget going below 0 (never below minus its limit)."""
        with self._lock:
            now = self.clock()
            account = self._account(key)
            self._apply(account, ops, now)
            walls: dict[str, tuple[float | None, WallNote | None]] = {}
            blocking: tuple[float | None, WallNote] | None = None
            for field in (model, ALL):
                held = account.walls.get(field)
                if held is None:
                    continue
                until, note = held
                if until is not None and until <= now:
                    del account.walls[field]
                    continue
                left = None if until is None else until - now
                walls[field] = (left, note)
                if blocking is None or longer(left, blocking[0]):
                    blocking = (left, note)
            budgets = {s: b for (m, s), b in account.budgets.items() if m == model}
            copies = {
                s: Bucket(b.limit, b.now(now), b.rate, now, basis=b.basis, share=b.share)
                for s, b in budgets.items()
            }
            if blocking is not None:
                return Decision(
                    False, blocking[0], "wall", note=blocking[1], walls=walls, budgets=copies
                )
            wait, spent = 0.0, None
            for scope, cost in (costs or {}).items():
                bucket = budgets.get(scope)
                if bucket is not None and cost > 0:
                    need = bucket.wait(cost, now)
                    if need > wait:
                        wait, spent = need, scope
            later = reserve and spent is not None and wait <= patience
            for scope, cost in (costs or {}).items():
                bucket = budgets.get(scope)
                if later and bucket is not None and cost > 0:
                    later = bucket.now(now) - bucket.portion(cost) >= -bucket.limit
            if spent is not None and not later:
                return Decision(False, wait, "budget", scope=spent, walls=walls, budgets=copies)
            taken: dict[str, float] = {}
            if reserve:
                for scope, cost in (costs or {}).items():
                    bucket = budgets.get(scope)
                    if bucket is not None and cost > 0:
                        taken[scope] = bucket.portion(cost)
                        bucket.take(taken[scope], now)
            return Decision(True, wait, walls=walls, budgets=copies, reserved=taken, scope=spent)

    def record(self, key: str, model: str, hold: float | None, note: WallNote, label: str) -> None:
        """A wall on ``model`` (``ALL``: the whole account) for ``hold`` seconds (``None``:
        until cleared); a longer wall already there stands."""
        with self._lock:
            now = self.clock()
            account = self._account(key, label)
            until = None if hold is None else now + hold
            held = account.walls.get(model)
            if held is not None:
                old = held[0]
                if old is None or (until is not None and old >= until):
                    return
            account.walls[model] = (until, note)

    def clear(self, key: str, model: str | None) -> None:
        """Take down the walls of ``model`` (``None``: every wall of the account)."""
        with self._lock:
            account = self._accounts.get(key)
            if account is None:
                return
            if model is None:
                account.walls.clear()
            else:
                account.walls.pop(model, None)

    def forget(self, key: str) -> None:
        """Forget the account: its walls and budgets."""
        with self._lock:
            self._accounts.pop(key, None)
