"""Where a breaker keeps its state: in this process (``MemoryStore``) or in Redis (``_redis``).

A store holds, per breaker, the outcomes counted within the window (calls, counted failures,
slow calls, in ``BUCKETS`` buckets), and whether the breaker is open: for how long, which
error opened it (its code, HTTP status and the vendor's code, never its text), how many
times it opened in a row, the half-open trial permits, and an operator's switch (forced
open, disabled). Nothing else: no credential, no prompt, no message. A store decides
nothing: the breaker reads its ``State`` and tells it what to write.

Breakers are named by a digest of their key (``digest``), never by the key itself: the
raw key may hold a credential, and two keys that read alike after redaction are still two
breakers. The redacted, shortened key (``label``) is kept beside the state for display.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, Literal, Protocol

__all__ = ["BUCKETS", "CLOSED", "MemoryStore", "State", "Store", "digest"]

Name = Literal["closed", "open", "half_open", "forced_open", "disabled"]
Mode = Literal["", "forced_open", "disabled"]
"""An operator's switch: none, held open, or let everything through."""

BUCKETS: Final = 10
"""The window is counted in this many buckets: an outcome leaves it between ``window`` and
``window * (1 + 1/BUCKETS)`` seconds after it was counted."""


def digest(key: str) -> str:
    """The name a breaker's state is stored under: the hex SHA-256 of the key's UTF-8 bytes.

    Two different keys never share a state, whatever they read like after redaction, and
    no suffix of one key can reach another's storage.
    """
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class State:
    """What a store says of one breaker now (a snapshot: the store keeps no reference).

    ``left`` is the seconds the breaker stays open (0 unless ``open``); ``calls``,
    ``failures`` and ``slow`` are the outcomes counted within the window; ``trial_left``
    is the seconds left of the half-open permits' lease.
    """

    __slots__ = (
        "calls",
        "failures",
        "left",
        "name",
        "opened_by",
        "slow",
        "trial_left",
        "trips",
    )

    def __init__(
        self,
        name: Name = "closed",
        left: float = 0.0,
        opened_by: dict[str, Any] | None = None,
        trips: int = 0,
        *,
        calls: int = 0,
        failures: int = 0,
        slow: int = 0,
        trial_left: float = 0.0,
    ) -> None:
        self.name: Name = name
        self.left = left
        self.opened_by: dict[str, Any] = {} if opened_by is None else opened_by
        self.trips = trips
        self.calls = calls
        self.failures = failures
        self.slow = slow
        self.trial_left = trial_left

    def __repr__(self) -> str:
        return (
            f"State({self.name!r}, left={self.left:.3f}, trips={self.trips}, "
            f"calls={self.calls}, failures={self.failures}, slow={self.slow})"
        )


CLOSED: Final = State()
"""The state of a breaker a store knows nothing of (shared: never change it)."""


class Store(Protocol):
    """The operations a breaker needs of its state; ``key`` is a ``digest``, ``label`` the
    redacted key shown beside it. Each call is one step, atomic where the state is shared."""

    def peek(self, key: str) -> State | None:
        """The state known without a round trip, or ``None`` when it must be read."""
        ...

    def read(self, key: str) -> State:
        """The state now (for a shared store: one round trip, which also writes the
        successes counted since the last one)."""
        ...

    def count_success(self, key: str, slow: bool) -> None:
        """Count a call that did not fail (for a shared store: written with the next read)."""
        ...

    def add_failure(self, key: str, label: str, slow: bool) -> State:
        """Count a failure; the state after it, with the window's counts."""
        ...

    def open(
        self, key: str, label: str, seconds: float, opened_by: dict[str, Any], trips: int
    ) -> State:
        """Open the breaker for ``seconds`` unless it is open already (then keep that)."""
        ...

    def take_trial(self, key: str, permits: int, lease: float) -> tuple[bool, State]:
        """Whether this caller got one of the ``permits`` half-open trials, and the state."""
        ...

    def trial_succeeded(self, key: str, permits: int) -> State:
        """Count a trial that worked: the ``permits``-th closes the breaker."""
        ...

    def set_mode(self, key: str, label: str, mode: Mode) -> None:
        """Hold the breaker open, or disable it, until ``reset``."""
        ...

    def reset(self, key: str) -> None:
        """Forget everything of the breaker: closed, nothing counted, no switch."""
        ...


class Window:
    """Outcomes counted over the last ``BUCKETS`` buckets of ``bucket`` seconds each (a ring)."""

    __slots__ = ("counts", "epochs")

    def __init__(self) -> None:
        self.epochs = [-1] * BUCKETS
        self.counts = [[0, 0, 0] for _ in range(BUCKETS)]

    def add(self, epoch: int, calls: int, failures: int, slow: int) -> None:
        slot = epoch % BUCKETS
        counts = self.counts[slot]
        if self.epochs[slot] != epoch:
            self.epochs[slot] = epoch
            counts[0] = counts[1] = counts[2] = 0
        counts[0] += calls
        counts[1] += failures
        counts[2] += slow

    def totals(self, epoch: int) -> tuple[int, int, int]:
        calls = failures = slow = 0
        for slot in range(BUCKETS):
            if epoch - BUCKETS < self.epochs[slot] <= epoch:
                counts = self.counts[slot]
                calls += counts[0]
                failures += counts[1]
                slow += counts[2]
        return calls, failures, slow

    def clear(self) -> None:
        self.epochs = [-1] * BUCKETS


class _Entry:
    __slots__ = (
        "label",
        "mode",
        "open_until",
        "opened_by",
        "trial_ok",
        "trial_taken",
        "trial_until",
        "trips",
        "window",
    )

    def __init__(self, label: str) -> None:
        self.label = label
        self.window = Window()
        self.open_until = 0.0
        """``clock()`` time the breaker stays open until; 0 when closed."""
        self.opened_by: dict[str, Any] = {}
        self.trips = 0
        self.mode: Mode = ""
        self.trial_until = 0.0
        self.trial_taken = 0
        self.trial_ok = 0

    def closed(self) -> bool:
        return not self.open_until and not self.mode

    def close(self) -> None:
        self.open_until = 0.0
        self.opened_by = {}
        self.trips = 0
        self.trial_until = 0.0
        self.trial_taken = self.trial_ok = 0
        self.window.clear()


class MemoryStore:
    """State in this process, for at most ``max_keys`` breakers.

    Past ``max_keys`` the least recently used closed breaker is dropped (reading one counts
    as using it); an open one, or one an operator switched, goes only when every breaker
    kept is open, the least recently used first. Its clock is ``time.monotonic``: a wall
    clock stepped back or forward changes nothing.
    """

    def __init__(
        self,
        max_keys: int = 1024,
        *,
        window: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be >= 1")
        self.max_keys = max_keys
        self.bucket = float(window) / BUCKETS
        self.clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def labels(self) -> list[str]:
        """The labels (redacted keys) of the breakers kept, least recently used first."""
        with self._lock:
            return [entry.label for entry in self._entries.values()]

    # -- reading ----------------------------------------------------------------------------

    def _state(self, entry: _Entry, now: float) -> State:
        calls, failures, slow = entry.window.totals(int(now // self.bucket))
        if entry.mode:
            return State(entry.mode, 0.0, dict(entry.opened_by), entry.trips)
        if not entry.open_until:
            return State("closed", calls=calls, failures=failures, slow=slow)
        left = entry.open_until - now
        if left > 0:
            return State("open", left, dict(entry.opened_by), entry.trips)
        trial_left = max(entry.trial_until - now, 0.0)
        return State("half_open", 0.0, dict(entry.opened_by), entry.trips, trial_left=trial_left)

    def peek(self, key: str) -> State:
        """The state now; a closed breaker's without its counts (``read`` has them)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return CLOSED
            self._entries.move_to_end(key)  # reading is using
            if entry.closed():
                return CLOSED
            return self._state(entry, self.clock())

    def read(self, key: str) -> State:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return CLOSED
            self._entries.move_to_end(key)
            return self._state(entry, self.clock())

    # -- writing ----------------------------------------------------------------------------

    def _entry(self, key: str, label: str) -> _Entry:
        """The entry of ``key`` (made when absent, another dropped past ``max_keys``)."""
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            return entry
        entry = self._entries[key] = _Entry(label)
        if len(self._entries) > self.max_keys:
            others = [k for k in self._entries if k != key]
            closed = (k for k in others if self._entries[k].closed())
            victim = next(closed, others[0])  # all open: the least recently used goes
            del self._entries[victim]
        return entry

    def count_success(self, key: str, slow: bool) -> None:
        with self._lock:
            entry = self._entry(key, "")
            entry.window.add(int(self.clock() // self.bucket), 1, 0, int(slow))

    def add_failure(self, key: str, label: str, slow: bool) -> State:
        with self._lock:
            entry = self._entry(key, label)
            entry.label = label
            now = self.clock()
            entry.window.add(int(now // self.bucket), 1, 1, int(slow))
            return self._state(entry, now)

    def open(
        self, key: str, label: str, seconds: float, opened_by: dict[str, Any], trips: int
    ) -> State:
        with self._lock:
            entry = self._entry(key, label)
            entry.label = label
            now = self.clock()
            if not entry.mode and not entry.open_until > now:
                entry.close()
                entry.open_until = now + max(seconds, 1e-6)
                entry.opened_by = dict(opened_by)
                entry.trips = trips
            return self._state(entry, now)

    def take_trial(self, key: str, permits: int, lease: float) -> tuple[bool, State]:
        with self._lock:
            entry = self._entries.get(key)
            now = self.clock()
            if entry is None:
                return False, CLOSED
            self._entries.move_to_end(key)
            granted = False
            if not entry.mode and 0 < entry.open_until <= now:
                if entry.trial_until <= now:  # the lease ran out: the permits come back
                    entry.trial_until = now + lease
                    entry.trial_taken = 0
                if entry.trial_taken < permits:
                    entry.trial_taken += 1
                    granted = True
            return granted, self._state(entry, now)

    def trial_succeeded(self, key: str, permits: int) -> State:
        with self._lock:
            entry = self._entries.get(key)
            now = self.clock()
            if entry is None:
                return CLOSED
            if not entry.mode and 0 < entry.open_until <= now:
                entry.trial_ok += 1
                if entry.trial_ok >= permits:
                    entry.close()
            return self._state(entry, now)

    def set_mode(self, key: str, label: str, mode: Mode) -> None:
        with self._lock:
            entry = self._entry(key, label)
            entry.close()
            entry.mode = mode

    def reset(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)
