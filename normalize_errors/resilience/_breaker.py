"""A circuit breaker keyed on the harness answer, in memory or shared through Redis."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, TypeVar

from .._code_classes import UpstreamUnavailableError
from .._exceptions import HarnessError
from .._redact import redact
from ._budget import attempt, chosen
from ._common import bounded_wait, counts_against_upstream, harness
from ._redis import FallbackStore, RedisStore
from ._store import MemoryStore, State, Store

__all__ = ["BreakerState", "CircuitBreaker"]

_T = TypeVar("_T")
MAX_KEY: Final = 200
"""Longest key kept (after redaction); a longer one is cut."""

Mode = Literal["closed", "trial"]


class BreakerState:
    """What ``CircuitBreaker.state(key)`` says: ``closed``, ``open`` or ``half_open``."""

    __slots__ = ("key", "name", "opened_by", "retry_after", "trips")

    def __init__(
        self, key: str, name: str, retry_after: float | None, opened_by: dict[str, Any], trips: int
    ) -> None:
        self.key = key
        self.name = name
        self.retry_after = retry_after
        self.opened_by = opened_by
        self.trips = trips

    def __repr__(self) -> str:
        return f"BreakerState({self.key!r}, {self.name!r}, retry_after={self.retry_after})"


def _opened_by(err: HarnessError) -> dict[str, Any]:
    """What the stored state keeps of the opening error: its code and the vendor's codes."""
    problem = err.problem
    facts: dict[str, Any] = {"code": problem.code}
    status = problem.upstream.get("status")
    if isinstance(status, int) and not isinstance(status, bool):
        facts["status"] = status
    vendor = problem.upstream.get("code")
    if isinstance(vendor, str) and vendor:
        facts["upstream_code"] = redact(vendor)[:64]
    return facts


class CircuitBreaker:
    """Stops calling an upstream that is failing, until it has had time to recover.

    ``call(key, fn, *args, **kwargs)`` calls ``fn`` unless the breaker of ``key`` is open.
    ``key`` names what fails together: ``"openai:gpt-4o"``, a base URL (redacted before it is
    stored or shown). Only failures that say the upstream is failing count
    (``upstream.overloaded``, ``upstream.unavailable``, a retryable ``upstream.rate_limited``),
    never the caller's own. ``threshold`` of them within ``window`` seconds open the breaker:
    for the opening error's ``retry_after`` (at most ``max_open``) when it states one, else
    for ``cooldown`` seconds doubled each time it opens again (at most ``max_cooldown``).
    While open, ``call`` raises at once an ``UpstreamUnavailableError`` (origin ``harness``,
    retryable, ``retry_after`` the seconds left, ``upstream`` naming the key and the opening
    error). Then one trial call (half-open) closes it, or a counted failure opens it again.

    Args:
        store: ``None`` (state in this process) or ``"redis://host:port/db"`` (shared by
            every process using the same Redis; needs the ``resilience`` extra).
        threshold: counted failures within ``window`` that open the breaker.
        window: seconds over which failures are counted.
        cooldown: first open time when the error states none; doubles on each reopening.
        max_cooldown: longest such open time.
        max_open: longest open time taken from an error's ``retry_after``.
        trial_lease: seconds one caller holds the half-open trial before another may try.
        max_keys: most keys kept in this process (least recently used dropped).
        timeout: Redis socket timeout in seconds: a slow Redis costs at most this per call.
        prefix: the Redis key prefix.
        clock: wall-clock time (``time.time``): the state shared by processes is in it.
    """

    def __init__(
        self,
        store: str | None = None,
        *,
        threshold: int = 5,
        window: float = 60.0,
        cooldown: float = 5.0,
        max_cooldown: float = 120.0,
        max_open: float = 600.0,
        trial_lease: float = 30.0,
        max_keys: int = 1024,
        timeout: float = 0.25,
        prefix: str = "normalize-errors:breaker:",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if threshold < 1 or not window > 0 or not cooldown >= 0 or not max_open >= 0:
            raise ValueError("threshold must be >= 1, window > 0, cooldown and max_open >= 0")
        self.threshold = threshold
        self.window = float(window)
        self.cooldown = float(cooldown)
        self.max_cooldown = float(max_cooldown)
        self.max_open = float(max_open)
        self.trial_lease = float(trial_lease)
        self.clock = clock
        self.local = MemoryStore(max_keys)
        self.store: Store
        if store is None:
            self.store = self.local
            self.shown = "memory"
        elif str(store).startswith(("redis://", "rediss://", "unix://")):
            redis_store = RedisStore(store, prefix=prefix, timeout=timeout)
            self.store = FallbackStore(redis_store, self.local)
            self.shown = redis_store.shown
        else:
            raise ValueError("store must be None or a redis:// URL")

    def __repr__(self) -> str:
        return f"CircuitBreaker(store={self.shown!r}, threshold={self.threshold})"

    def close(self) -> None:
        """Close the Redis connections, if any (the state stays in Redis)."""
        if isinstance(self.store, FallbackStore):
            self.store.primary.client.close()

    @property
    def degraded(self) -> bool:
        """True while a Redis store failed and the state is kept in this process."""
        return isinstance(self.store, FallbackStore) and self.store.degraded

    # -- keys and state ----------------------------------------------------------------------

    @staticmethod
    def name(key: str) -> str:
        """``key`` as it is stored and shown: credentials redacted, at most ``MAX_KEY`` long."""
        return redact(str(key))[:MAX_KEY]

    def state(self, key: str) -> BreakerState:
        """The breaker of ``key`` now: ``closed``, ``open`` or ``half_open``."""
        name = self.name(key)
        state = self.store.read(name)
        left = state.open_until - self.clock()
        if not state.open_until:
            return BreakerState(name, "closed", None, {}, 0)
        if left > 0:
            return BreakerState(name, "open", left, state.opened_by, state.trips)
        return BreakerState(name, "half_open", 0.0, state.opened_by, state.trips)

    def is_open(self, key: str) -> bool:
        """Whether a call of ``key`` would fail fast now (open, not yet half-open)."""
        return self.state(key).name == "open"

    def reset(self, key: str) -> None:
        """Close the breaker of ``key`` and forget its failures."""
        self.store.close(self.name(key))

    def _open_error(self, name: str, state: State, left: float, half_open: bool) -> HarnessError:
        code = state.opened_by.get("code", "upstream.unavailable")
        what = "half-open: another caller's trial is running" if half_open else "open"
        upstream: dict[str, Any] = {
            "provider": "harness",
            "breaker": name,
            "state": "half_open" if half_open else "open",
            "opened_by": dict(state.opened_by),
        }
        return UpstreamUnavailableError(
            f"circuit breaker {name!r} is {what} after {code}; retry in {left:.1f} s",
            origin="harness",
            retryable=True,
            retry_after=round(max(left, 0.0), 3),
            upstream=upstream,
        )

    # -- the three steps of a call -------------------------------------------------------------

    def before(self, key: str) -> Mode:
        """Raise the open error if no call of ``key`` may go now; else how it goes."""
        name = self.name(key)
        state = self.store.read(name)
        if not state.open_until:
            return "closed"
        now = self.clock()
        if now < state.open_until:
            raise self._open_error(name, state, state.open_until - now, half_open=False)
        left = self.store.take_trial(name, now, self.trial_lease)
        if left > 0:
            raise self._open_error(name, state, left, half_open=True)
        return "trial"

    def failure(self, key: str, exc: BaseException, mode: Mode = "closed") -> None:
        """Count a failed call of ``key`` (what ``call`` does with an exception of ``fn``)."""
        err = harness(exc)
        name = self.name(key)
        if not counts_against_upstream(err):
            if mode == "trial":  # the upstream answered: it is up
                self.store.close(name)
            return
        now = self.clock()
        if mode == "trial":
            trips = self.store.read(name).trips + 1
        elif self.store.add_failure(name, now, self.window) >= self.threshold:
            trips = 1
        else:
            return
        self.store.open(name, now + self._open_for(err, trips), _opened_by(err), trips)

    def success(self, key: str, mode: Mode = "closed") -> None:
        """Note a call of ``key`` that worked: a half-open trial closes the breaker."""
        if mode == "trial":
            self.store.close(self.name(key))

    def _open_for(self, err: HarnessError, trips: int) -> float:
        stated = bounded_wait(err.problem.retry_after, self.max_open)
        if stated is not None and stated > 0:
            return stated
        doubled: float = self.cooldown * 2.0 ** min(trips - 1, 32)
        return min(doubled, self.max_cooldown)

    # -- calls ---------------------------------------------------------------------------------

    def call(self, key: str, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``fn(*args, **kwargs)`` unless the breaker of ``key`` is open (then raise at once).

        A budget made current (``with budget:``) counts the call as one attempt.
        """
        mode = self.before(key)
        budget = chosen(None)
        if budget is None:  # the common path, without the budget's bookkeeping
            try:
                result = fn(*args, **kwargs)
            except Exception as exc:
                self._safely(self.failure, key, exc, mode)
                raise
        else:
            with attempt(budget) as frame:
                try:
                    result = fn(*args, **kwargs)
                except Exception as exc:
                    frame.failed(exc)
                    self._safely(self.failure, key, exc, mode)
                    raise
        if mode == "trial":
            self._safely(self.success, key, mode)
        return result

    async def acall(
        self, key: str, fn: Callable[..., Awaitable[_T]], *args: Any, **kwargs: Any
    ) -> _T:
        """``call`` for a coroutine function. A Redis store is used from a worker thread."""
        shared = self.store is not self.local
        mode = await asyncio.to_thread(self.before, key) if shared else self.before(key)
        with attempt(chosen(None)) as frame:
            try:
                result = await fn(*args, **kwargs)
            except Exception as exc:
                frame.failed(exc)
                if shared:
                    await asyncio.to_thread(self._safely, self.failure, key, exc, mode)
                else:
                    self._safely(self.failure, key, exc, mode)
                raise
        if mode == "trial":
            if shared:
                await asyncio.to_thread(self._safely, self.success, key, mode)
            else:
                self._safely(self.success, key, mode)
        return result

    @staticmethod
    def _safely(step: Callable[..., None], *args: Any) -> None:
        """Bookkeeping after the call: it never replaces the caller's result or error."""
        try:
            step(*args)
        except Exception as exc:  # pragma: no cover - stores never raise; a last guard
            from ._redis import LOG

            LOG.warning("circuit breaker bookkeeping failed: %s", type(exc).__name__)
