"""Where a breaker keeps its state: in this process (``MemoryStore``) or in Redis.

A store holds, per key, the failures counted within the window, and whether the breaker is
open: until when, which error opened it (its code, HTTP status and the vendor's code, never
its text), how many times it opened in a row, and the lease of a half-open trial. Nothing
else: no credential, no prompt, no message.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["MemoryStore", "State", "Store"]


@dataclass
class State:
    """What a store says of one key."""

    open_until: float = 0.0
    """Wall-clock time (``time.time()``) the breaker stays open until; 0 when closed."""
    opened_by: dict[str, Any] = field(default_factory=dict)
    """The opening error: ``code``, ``status`` and the vendor's ``upstream_code``."""
    trips: int = 0
    """Times it opened since it last closed (the cool-down doubles with each)."""


class Store(Protocol):
    """The operations a breaker needs of its state (all keys are already redacted)."""

    def read(self, key: str) -> State: ...

    def add_failure(self, key: str, now: float, window: float) -> int: ...

    def open(self, key: str, until: float, opened_by: dict[str, Any], trips: int) -> None: ...

    def take_trial(self, key: str, now: float, lease: float) -> float: ...

    def close(self, key: str) -> None: ...


class _Entry:
    __slots__ = ("failures", "state", "trial_until")

    def __init__(self) -> None:
        self.failures: deque[float] = deque()
        self.state = State()
        self.trial_until = 0.0


class MemoryStore:
    """State in this process, for at most ``max_keys`` keys (the least recently used go)."""

    def __init__(self, max_keys: int = 1024) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be >= 1")
        self.max_keys = max_keys
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def _entry(self, key: str) -> _Entry:
        """The entry of ``key``, made when absent (the least recently used dropped past
        ``max_keys``)."""
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            return entry
        entry = self._entries[key] = _Entry()
        while len(self._entries) > self.max_keys:
            self._entries.popitem(last=False)
        return entry

    def read(self, key: str) -> State:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return State()
            state = entry.state
            return State(state.open_until, dict(state.opened_by), state.trips)

    def add_failure(self, key: str, now: float, window: float) -> int:
        with self._lock:
            entry = self._entry(key)
            failures = entry.failures
            failures.append(now)
            while failures and failures[0] <= now - window:
                failures.popleft()
            return len(failures)

    def open(self, key: str, until: float, opened_by: dict[str, Any], trips: int) -> None:
        with self._lock:
            entry = self._entry(key)
            entry.state = State(until, dict(opened_by), trips)
            entry.failures.clear()
            entry.trial_until = 0.0

    def take_trial(self, key: str, now: float, lease: float) -> float:
        """0 when this caller got the trial, else the seconds left of another's lease."""
        with self._lock:
            entry = self._entry(key)
            if entry.trial_until > now:
                return entry.trial_until - now
            entry.trial_until = now + lease
            return 0.0

    def close(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)
