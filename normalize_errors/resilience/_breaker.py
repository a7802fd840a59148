"""A circuit breaker keyed on the harness answer, in memory or shared through Redis.

The vocabulary is Resilience4j's, the one operators know: states ``closed``, ``open``,
``half_open``, ``forced_open`` and ``disabled``; a failure rate over a time window with a
minimum number of calls (``failure_rate_threshold``, ``minimum_number_of_calls``), a slow
call rate (``slow_call_rate_threshold``, ``slow_call_duration_threshold``), a number of
trial calls in half-open (``half_open_calls``, Resilience4j's
``permittedNumberOfCallsInHalfOpenState``). What counts as a failure is decided by the
harness code (``counts_against_upstream``), and how long it stays open by the opening
error's own ``retry_after`` when it states one. Every decision is made here; the stores
(``_store``, ``_redis``) keep state and decide nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, TypeVar

from .._base._redact import redact
from .._model._code_classes import UpstreamUnavailableError
from .._model._exceptions import HarnessError
from ._budget import attempt, chosen
from ._common import bounded_wait, check_tenant, counts_against_upstream, harness
from ._redis import RedisStore, SharedStore
from ._store import MemoryStore, State, Store, digest

__all__ = ["BreakerState", "CircuitBreaker"]

_T = TypeVar("_T")
MAX_KEY: Final = 200
"""Longest key shown (after redaction); a longer one is cut (its digest names it whole)."""

Mode = Literal["closed", "trial", "disabled"]
"""How a call goes: counted as usual, as a half-open trial, or not watched at all."""


class BreakerState:
    """What ``CircuitBreaker.state(key)`` says.

    ``name`` is ``closed``, ``open``, ``half_open``, ``forced_open`` or ``disabled``;
    ``retry_after`` the seconds left open (``open``), or of another caller's trials
    (``half_open``); ``calls``, ``failures`` and ``slow`` the outcomes counted within the
    window while closed.
    """

    __slots__ = ("calls", "failures", "key", "name", "opened_by", "retry_after", "slow", "trips")

    def __init__(
        self,
        key: str,
        name: str,
        retry_after: float | None,
        opened_by: dict[str, Any],
        trips: int,
        *,
        calls: int = 0,
        failures: int = 0,
        slow: int = 0,
    ) -> None:
        self.key = key
        self.name = name
        self.retry_after = retry_after
        self.opened_by = opened_by
        self.trips = trips
        self.calls = calls
        self.failures = failures
        self.slow = slow

    def __repr__(self) -> str:
        return f"BreakerState({self.key!r}, {self.name!r}, retry_after={self.retry_after})"


def _opened_by(err: HarnessError | None, reason: str) -> dict[str, Any]:
    """What the stored state keeps of the opening: why, and the error's code and the
    vendor's codes (never its text)."""
    facts: dict[str, Any] = {"reason": reason}
    if err is None:
        return facts
    problem = err.problem
    facts["code"] = problem.code
    status = problem.upstream.get("status")
    if isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599:
        facts["status"] = status
    vendor = problem.upstream.get("code")
    if isinstance(vendor, str) and vendor:
        facts["upstream_code"] = redact(vendor)[:64]
    return facts


def _percent(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not 0 < value <= 100:
        raise ValueError(f"{name} is a percentage: > 0 and <= 100, not {value!r}")
    return float(value)


class CircuitBreaker:
    """Stops calling an upstream that is failing, until it has had time to recover.

    ``call(key, fn, *args, **kwargs)`` calls ``fn`` unless the breaker of ``key`` is open.
    ``key`` names what fails together: ``"openai:gpt-4o"``, a base URL, a tenant's
    credential. Breakers are told apart by a digest of the whole key; only its redacted,
    shortened form is ever stored or shown. Only failures that say the upstream is failing
    count (``upstream.overloaded``, ``upstream.unavailable``, ``upstream.timeout``, a
    retryable ``upstream.rate_limited``); every other outcome is a call that worked, as
    far as the upstream's health goes.

    It opens when, within the last ``window`` seconds, ``threshold`` failures were
    counted, or (when set) at least ``minimum_number_of_calls`` calls were counted and
    ``failure_rate_threshold`` percent of them failed, or ``slow_call_rate_threshold``
    percent took ``slow_call_duration_threshold`` seconds or more. It stays open for the
    opening error's ``retry_after`` when it states one, else for ``cooldown`` seconds
    doubled each time it opens again (at most ``max_cooldown``), never longer than
    ``max_open``. While open, ``call`` raises at once an ``UpstreamUnavailableError``
    (origin ``harness``, retryable, ``retry_after`` the seconds left, ``upstream`` naming
    the breaker and the opening). Then ``half_open_calls`` trial calls go through:
    that many successes close it, one counted failure opens it again.

    Args:
        store: ``None`` (state in this process) or ``"redis://host:port/db"`` (shared by
            every process using the same Redis; needs the ``resilience`` extra).
        threshold: counted failures within ``window`` that open it; default 5 when no rate
            threshold is set, else not used (unless given).
        window: seconds over which outcomes are counted (in ten buckets).
        failure_rate_threshold: percentage of failed calls that opens it.
        minimum_number_of_calls: calls within the window before a rate is judged.
        slow_call_rate_threshold: percentage of slow calls that opens it.
        slow_call_duration_threshold: seconds from which a call is slow.
        half_open_calls: trial calls let through when half-open.
        cooldown: first open time when the error states none; doubles on each reopening.
        max_cooldown: longest such open time.
        max_open: longest open time, whatever an error states or a store holds.
        trial_lease: seconds the half-open trials hold their permits before others may try.
        max_keys: most breakers kept in this process (see ``MemoryStore``).
        timeout: Redis socket timeout in seconds: a slow Redis costs at most this per call.
        refresh: with Redis, the longest a process decides from its local copy of a
            breaker before reading it again (the staleness bound; 0: read on every call).
        reconnect_after: seconds before a failed Redis (or one failed key) is tried again.
        prefix: the Redis key prefix.
        tenant: a namespace in Redis below the prefix (letters, digits, ``._-``): tenants'
            breakers never meet, even under the same key.
        clock: monotonic seconds (``time.monotonic``), for the state kept in this process;
            the state shared through Redis runs on the Redis server's clock.
    """

    def __init__(
        self,
        store: str | None = None,
        *,
        threshold: int | None = None,
        window: float = 60.0,
        failure_rate_threshold: float | None = None,
        minimum_number_of_calls: int = 10,
        slow_call_rate_threshold: float | None = None,
        slow_call_duration_threshold: float = 60.0,
        half_open_calls: int = 1,
        cooldown: float = 5.0,
        max_cooldown: float = 120.0,
        max_open: float = 600.0,
        trial_lease: float = 30.0,
        max_keys: int = 1024,
        timeout: float = 0.25,
        refresh: float = 1.0,
        reconnect_after: float = 5.0,
        prefix: str = "normalize-errors:breaker:",
        tenant: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failure_rate_threshold = _percent("failure_rate_threshold", failure_rate_threshold)
        self.slow_call_rate_threshold = _percent(
            "slow_call_rate_threshold", slow_call_rate_threshold
        )
        rates = self.failure_rate_threshold is not None or self.slow_call_rate_threshold is not None
        if threshold is None and not rates:
            threshold = 5
        if threshold is not None and threshold < 1:
            raise ValueError("threshold must be >= 1")
        if not window > 0 or not cooldown >= 0 or not max_open > 0 or not refresh >= 0:
            raise ValueError("window and max_open must be > 0, cooldown and refresh >= 0")
        if minimum_number_of_calls < 1 or half_open_calls < 1:
            raise ValueError("minimum_number_of_calls and half_open_calls must be >= 1")
        check_tenant(tenant)
        self.threshold = threshold
        self.window = float(window)
        self.minimum_number_of_calls = minimum_number_of_calls
        self.slow_call_duration_threshold = float(slow_call_duration_threshold)
        self.half_open_calls = half_open_calls
        self.cooldown = float(cooldown)
        self.max_cooldown = float(max_cooldown)
        self.max_open = float(max_open)
        self.trial_lease = float(trial_lease)
        self.clock = clock
        self.tenant = tenant
        self._rates = rates
        """Whether calls that worked are counted (a rate needs them)."""
        self.local = MemoryStore(max_keys, window=self.window, clock=clock)
        self.store: Store
        if store is None:
            self.store = self.local
            self.shown = "memory"
        elif str(store).startswith(("redis://", "rediss://", "unix://")):
            remote = RedisStore(
                store,
                prefix=prefix,
                tenant=tenant,
                timeout=timeout,
                window=self.window,
                max_open=self.max_open,
                trial_lease=self.trial_lease,
            )
            self.store = SharedStore(
                remote,
                self.local,
                refresh=float(refresh),
                reconnect_after=float(reconnect_after),
                max_keys=max_keys,
                clock=clock,
            )
            self.shown = remote.shown
        else:
            raise ValueError("store must be None or a redis:// URL")
        self.shared = self.store is not self.local
        """True when the state is shared through Redis (its steps may make a round trip)."""

    def __repr__(self) -> str:
        return f"CircuitBreaker(store={self.shown!r}, threshold={self.threshold})"

    def close(self) -> None:
        """Close the Redis connections, if any (the state stays in Redis)."""
        if isinstance(self.store, SharedStore):
            self.store.remote.client.close()

    @property
    def degraded(self) -> bool:
        """True while a Redis store failed and the state is kept in this process."""
        return isinstance(self.store, SharedStore) and self.store.degraded

    # -- keys and state ----------------------------------------------------------------------

    @staticmethod
    def name(key: str) -> str:
        """``key`` as it is stored and shown: credentials redacted, at most ``MAX_KEY`` long."""
        return redact(str(key))[:MAX_KEY]

    def storage_key(self, key: str) -> str | None:
        """The Redis key that holds the breaker of ``key`` (``None`` in memory)."""
        if isinstance(self.store, SharedStore):
            return self.store.remote.key(digest(str(key)))
        return None

    def state(self, key: str) -> BreakerState:
        """The breaker of ``key`` now (read from the store: with Redis, one round trip)."""
        state = self.store.read(digest(str(key)))
        name = state.name
        retry_after: float | None = None
        if name == "open":
            retry_after = min(state.left, self.max_open)
        elif name == "half_open":
            retry_after = min(state.trial_left, self.trial_lease)
        return BreakerState(
            self.name(key),
            name,
            retry_after,
            state.opened_by,
            state.trips,
            calls=state.calls,
            failures=state.failures,
            slow=state.slow,
        )

    async def astate(self, key: str) -> BreakerState:
        """``state`` without blocking the event loop (a Redis read runs in a thread)."""
        if self.shared:
            return await asyncio.to_thread(self.state, key)
        return self.state(key)

    def is_open(self, key: str) -> bool:
        """Whether a call of ``key`` would fail fast now (open or forced open)."""
        return self.state(key).name in ("open", "forced_open")

    def reset(self, key: str) -> None:
        """Close the breaker of ``key``: forget its failures and any switch."""
        self.store.reset(digest(str(key)))

    def force_open(self, key: str) -> None:
        """Hold the breaker of ``key`` open until ``reset`` (Resilience4j's FORCED_OPEN)."""
        self.store.set_mode(digest(str(key)), self.name(key), "forced_open")

    def disable(self, key: str) -> None:
        """Let every call of ``key`` through, counting nothing, until ``reset`` (DISABLED)."""
        self.store.set_mode(digest(str(key)), self.name(key), "disabled")

    def _open_error(self, key: str, state: State) -> HarnessError:
        name = self.name(key)
        shown = state.name
        upstream: dict[str, Any] = {"provider": "harness", "breaker": name, "state": shown}
        if shown == "forced_open":
            return UpstreamUnavailableError(
                f"circuit breaker {name!r} is forced open",
                origin="harness",
                retryable=False,
                upstream=upstream,
            )
        if shown == "half_open":
            left = min(state.trial_left, self.trial_lease)
            what = "half-open: other callers' trials are running"
        else:
            left = min(state.left, self.max_open)
            what = "open"
        upstream["opened_by"] = dict(state.opened_by)
        code = state.opened_by.get("code") or state.opened_by.get("reason") or "failures"
        return UpstreamUnavailableError(
            f"circuit breaker {name!r} is {what} after {code}; retry in {left:.1f} s",
            origin="harness",
            retryable=True,
            retry_after=round(max(left, 0.0), 3),
            upstream=upstream,
        )

    # -- the three steps of a call -------------------------------------------------------------

    def before(self, key: str) -> Mode:
        """Raise the open error if no call of ``key`` may go now; else how it goes.

        A closed (or open) breaker is decided from what this process knows without a round
        trip: in memory always, with Redis while its copy is fresh (``refresh``).
        """
        k = digest(str(key))
        state = self.store.peek(k)
        if state is None:
            state = self.store.read(k)
        return self._admit(key, k, state)

    def _admit(self, key: str, k: str, state: State) -> Mode:
        name = state.name
        if name == "closed":
            return "closed"
        if name == "disabled":
            return "disabled"
        if name == "half_open":
            granted, state = self.store.take_trial(k, self.half_open_calls, self.trial_lease)
            if granted:
                return "trial"
            if state.name in ("closed", "disabled"):
                return "closed" if state.name == "closed" else "disabled"
        raise self._open_error(key, state)

    def _slow(self, seconds: float | None) -> bool:
        return (
            self.slow_call_rate_threshold is not None
            and seconds is not None
            and seconds >= self.slow_call_duration_threshold
        )

    def _tripped(self, state: State) -> str | None:
        """Why the counts of a closed breaker open it, or ``None``."""
        if state.name != "closed":
            return None
        if self.threshold is not None and state.failures >= self.threshold:
            return "failures"
        if state.calls >= self.minimum_number_of_calls:
            rate = self.failure_rate_threshold
            if rate is not None and state.failures * 100.0 >= rate * state.calls:
                return "failure_rate"
            slow = self.slow_call_rate_threshold
            if slow is not None and state.slow * 100.0 >= slow * state.calls:
                return "slow_call_rate"
        return None

    def failure(
        self, key: str, exc: BaseException, mode: Mode = "closed", seconds: float | None = None
    ) -> None:
        """Count a failed call of ``key`` (what ``call`` does with an exception of ``fn``);
        ``seconds`` is how long it took (for the slow call rate)."""
        if mode == "disabled":
            return
        err = harness(exc)
        if not counts_against_upstream(err):  # the upstream answered: as far as it goes, up
            self.success(key, mode, seconds)
            return
        k = digest(str(key))
        label = self.name(key)
        if mode == "trial":
            trips = (self.store.peek(k) or self.store.read(k)).trips + 1
            self.store.open(k, label, self._open_for(err, trips), _opened_by(err, "trial"), trips)
            return
        state = self.store.add_failure(k, label, self._slow(seconds))
        reason = self._tripped(state)
        if reason is not None:
            self.store.open(k, label, self._open_for(err, 1), _opened_by(err, reason), 1)

    def success(self, key: str, mode: Mode = "closed", seconds: float | None = None) -> None:
        """Note a call of ``key`` that worked: half-open, the trials close the breaker;
        closed, it counts for the rates."""
        if mode == "trial":
            self.store.trial_succeeded(digest(str(key)), self.half_open_calls)
        elif mode == "closed" and self._rates:
            k = digest(str(key))
            slow = self._slow(seconds)
            self.store.count_success(k, slow)
            if slow:  # a slow call may open it: read (it already cost seconds)
                state = self.store.read(k)
                if self._tripped(state) == "slow_call_rate":
                    self.store.open(
                        k,
                        self.name(key),
                        self._open_for(None, 1),
                        _opened_by(None, "slow_call_rate"),
                        1,
                    )

    def _open_for(self, err: HarnessError | None, trips: int) -> float:
        stated = None if err is None else bounded_wait(err.problem.retry_after, self.max_open)
        if stated is not None and stated > 0:
            return stated
        doubled: float = self.cooldown * 2.0 ** min(trips - 1, 32)
        return min(doubled, self.max_cooldown, self.max_open)

    # -- the steps without blocking an event loop ---------------------------------------------

    async def abefore(self, key: str) -> Mode:
        """``before`` for a coroutine: decided on the loop when no round trip is needed, in a
        worker thread when Redis must be asked."""
        if self.shared:
            k = digest(str(key))
            state = self.store.peek(k)
            if state is None or state.name == "half_open":
                return await asyncio.to_thread(self.before, key)
            return self._admit(key, k, state)
        return self.before(key)

    async def afailure(
        self, key: str, exc: BaseException, mode: Mode = "closed", seconds: float | None = None
    ) -> None:
        """``failure`` for a coroutine (a Redis write runs in a worker thread)."""
        if self.shared and mode != "disabled":
            await asyncio.to_thread(self._safely, self.failure, key, exc, mode, seconds)
        else:
            self._safely(self.failure, key, exc, mode, seconds)

    async def asuccess(self, key: str, mode: Mode = "closed", seconds: float | None = None) -> None:
        """``success`` for a coroutine: counted on the loop; a trial's or a slow call's
        round trip runs in a worker thread."""
        if self.shared and (mode == "trial" or (mode == "closed" and self._slow(seconds))):
            await asyncio.to_thread(self._safely, self.success, key, mode, seconds)
        else:
            self._safely(self.success, key, mode, seconds)

    # -- calls ---------------------------------------------------------------------------------

    def call(self, key: str, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``fn(*args, **kwargs)`` unless the breaker of ``key`` is open (then raise at once).

        A budget made current (``with budget:``) counts the call as one attempt; a call the
        breaker refuses is no attempt (no request was sent).
        """
        mode = self.before(key)
        timed = self.slow_call_rate_threshold is not None
        started = self.clock() if timed else 0.0
        budget = chosen(None)
        if budget is None:  # the common path, without the budget's bookkeeping
            try:
                result = fn(*args, **kwargs)
            except Exception as exc:
                took = self.clock() - started if timed else None
                self._safely(self.failure, key, exc, mode, took)
                raise
        else:
            with attempt(budget) as frame:
                try:
                    result = fn(*args, **kwargs)
                except Exception as exc:
                    frame.failed(exc)
                    took = self.clock() - started if timed else None
                    self._safely(self.failure, key, exc, mode, took)
                    raise
        if mode == "trial" or self._rates:
            took = self.clock() - started if timed else None
            self._safely(self.success, key, mode, took)
        return result

    async def acall(
        self, key: str, fn: Callable[..., Awaitable[_T]], *args: Any, **kwargs: Any
    ) -> _T:
        """``call`` for a coroutine function; the event loop never waits for Redis."""
        mode = await self.abefore(key)
        timed = self.slow_call_rate_threshold is not None
        started = self.clock() if timed else 0.0
        with attempt(chosen(None)) as frame:
            try:
                result = await fn(*args, **kwargs)
            except Exception as exc:
                frame.failed(exc)
                took = self.clock() - started if timed else None
                await self.afailure(key, exc, mode, took)
                raise
        if mode == "trial" or self._rates:
            await self.asuccess(key, mode, self.clock() - started if timed else None)
        return result

    @staticmethod
    def _safely(step: Callable[..., None], *args: Any) -> None:
        """Bookkeeping after the call: it never replaces the caller's result or error."""
        try:
            step(*args)
        except Exception as exc:  # pragma: no cover - stores never raise; a last guard
            from ._redis import LOG

            LOG.warning("circuit breaker bookkeeping failed: %s", type(exc).__name__)
