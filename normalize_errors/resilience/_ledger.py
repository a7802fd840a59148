"""The ledger: the walls every worker met and the budgets every provider stated, shared, so a
fleet meets each limit once.

``Ledger(store=None | "redis://...")`` is given to ``wrap(client, ledger=ledger)``. Around each
call of a generating method (``chat.completions.create``, ``messages.create``,
``generate_content``, ...) the wrapped client:

1. **before the call** asks the ledger about the call's account (``_ledger_calls.account``: a
   digest of the provider, address and credential) and model. A known wall fails the call at
   once as the typed error of the failure that built it (``UpstreamRateLimitedError`` for a
   rate limit or a spent quota): ``origin`` ``harness``, ``retry_after`` the seconds to the
   reset (none for a billing wall), its ``quota``, and ``upstream`` naming the ``ledger`` and
   ``sent: false``; no request is sent. With admission on, the call reserves its expected
   cost (``_ledger_calls.estimate``, or the caller's ``estimate``) from the budgets learned for
   the account and model; a spent budget fails the call the same way (``budget`` in
   ``upstream``). With ``max_wait``, a call waits for the reset or for room, when that comes
   within the bound, instead of failing;
2. **after a success** learns the budgets the response's rate-limit headers state, and settles
   the reservation against the usage the result reports;
3. **after a failure** records the wall the error carries (its ``quota``): for the error's
   ``retry_after`` when it is retryable and states one, else until the quota's reset; a
   billing wall (``quota.billing``) until ``ledger.clear(key)``. A wall on spend (or a call
   without a model) holds for the whole account, any other for the call's model.

A refusal is no attempt (``Budget`` does not charge it), a circuit breaker does not count it,
and a fallback moves on from it (``fails_over``): another provider may have room.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from .._model._code_classes import class_for_code
from .._model._exceptions import HarnessError
from .._model._quota import Quota
from .._reading._walls import budgets_of
from ._common import check_tenant, harness
from ._ledger_calls import Account, account, estimate, heard, listen, model_of, usage_of
from ._ledger_redis import RedisLedger, SharedLedger
from ._ledger_state import ALL, COSTS, Decision, LedgerMemory, Op, WallNote
from ._store import digest

__all__ = ["Ledger", "LedgerKey"]

_T = TypeVar("_T")
_TOKENS: Final = ("tokens", "input_tokens", "output_tokens")
_NO_WALL: Final = -1.0


class LedgerKey:
    """One account (a client's credential at its provider) and, when given, one model:
    what ``expected_wait``, ``state``, ``record`` and ``clear`` are about. Made by
    ``Ledger.key(client, model)``; it holds no credential."""

    __slots__ = ("account", "field", "model")

    def __init__(self, account: Account, model: str | None) -> None:
        self.account = account
        self.model = model
        self.field = ALL if model is None else digest(model)[:32]

    def __repr__(self) -> str:
        return f"LedgerKey({self.account.label!r}, model={self.model!r})"


class _Ticket:
    """One call under way: its key and the costs it reserved (``None``: none)."""

    __slots__ = ("costs", "key", "reserved")

    def __init__(self, key: LedgerKey, costs: dict[str, float] | None) -> None:
        self.key = key
        self.costs = costs
        self.reserved: dict[str, float] = {}
        """What was taken from each budget for the call: settled after it."""


class Ledger:
    """Walls and budgets shared by every worker; give it to ``wrap(client, ledger=...)``.

    Args:
        store: ``None`` (this process) or ``"redis://host:port/db"`` (every process using
            the same Redis; needs the ``resilience`` extra).
        admission: reserve each call's expected cost from the budgets learned from the
            providers' rate-limit headers (``False``: walls only).
        max_wait: the longest a call waits for a wall's reset or a budget's room before it
            is sent (0: it fails at once).
        estimate: ``estimate(request) -> {scope: cost}`` for a call's expected cost (scopes
            ``requests``, ``tokens``, ``input_tokens``, ``output_tokens``; what it leaves out
            is the default estimate's: one request, characters / 4, the output bound).
        refresh: with Redis, the longest a process decides from its copy of an account before
            reading it again (the staleness bound; 0: a round trip on every call).
        lease: with Redis, the share of each limit a process may hold for ``refresh`` seconds
            to admit calls without a round trip (taken while the budget is at least half full).
        timeout: Redis socket timeout in seconds.
        reconnect_after: seconds before a failed Redis (or one failed key) is tried again.
        keep: seconds an account's budgets are kept in Redis after its last call.
        max_wall: the longest a wall holds, whatever an error states (a billing wall holds
            until cleared).
        prefix: the Redis key prefix; tenant: a namespace below it (letters, digits, ``._-``).
        max_keys: most accounts (and local copies) kept in this process.
        clock: monotonic seconds, for the state kept in this process.
    """

    def __init__(
        self,
        store: str | None = None,
        *,
        admission: bool = True,
        max_wait: float = 0.0,
        estimate: Callable[[Mapping[str, Any]], Mapping[str, float]] | None = None,
        refresh: float = 1.0,
        lease: float = 0.05,
        timeout: float = 0.25,
        reconnect_after: float = 5.0,
        keep: float = 3600.0,
        max_wall: float = 31 * 86400.0,
        prefix: str = "normalize-errors:ledger:",
        tenant: str | None = None,
        max_keys: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not max_wait >= 0 or not refresh >= 0 or not 0 <= lease < 0.5 or not max_wall > 0:
            raise ValueError("max_wait and refresh must be >= 0, lease in [0, 0.5), max_wall > 0")
        check_tenant(tenant)
        self.admission = admission
        self.max_wait = float(max_wait)
        self.estimate = estimate
        self.max_wall = float(max_wall)
        self.clock = clock
        self.local = LedgerMemory(max_keys, clock=clock)
        self.store: LedgerMemory | SharedLedger
        if store is None:
            self.store = self.local
            self.shown = "memory"
        elif str(store).startswith(("redis://", "rediss://", "unix://")):
            remote = RedisLedger(
                store, prefix=prefix, tenant=tenant, timeout=timeout, keep=keep, max_wall=max_wall
            )
            self.store = SharedLedger(
                remote,
                self.local,
                refresh=float(refresh),
                lease=float(lease),
                reconnect_after=float(reconnect_after),
                max_keys=max_keys,
                clock=clock,
            )
            self.shown = remote.shown
        else:
            raise ValueError("store must be None or a redis:// URL")
        self.shared = isinstance(self.store, SharedLedger)
        self.refused = 0
        """Calls the ledger refused (no request sent)."""
        self.waited = 0.0
        """Seconds calls waited for a reset or for room."""

    def __repr__(self) -> str:
        return f"Ledger(store={self.shown!r}, admission={self.admission})"

    @property
    def degraded(self) -> bool:
        """True while a Redis store failed and the state is kept in this process."""
        return isinstance(self.store, SharedLedger) and self.store.degraded

    @property
    def round_trips(self) -> int:
        """Redis round trips made so far (0 in memory)."""
        return self.store.round_trips if isinstance(self.store, SharedLedger) else 0

    def close(self) -> None:
        """Close the Redis connections, if any (the state stays in Redis)."""
        if isinstance(self.store, SharedLedger):
            self.store.remote.client.close()

    # -- keys and what they hold --------------------------------------------------------------

    def key(
        self, client: Any, model: str | None = None, *, provider: str | None = None
    ) -> LedgerKey:
        """The key of ``client``'s account (a wrapped client or the SDK's own) and ``model``."""
        from ..providers._routing import provider_of_module

        if provider is None:
            module = getattr(client.__class__, "__module__", None)
            provider = provider_of_module(module) or "http"
        return LedgerKey(account(client, provider), model)

    def _admit(
        self,
        key: LedgerKey,
        costs: Mapping[str, float] | None,
        reserve: bool,
        patience: float = 0.0,
    ) -> Decision:
        store = self.store
        if isinstance(store, SharedLedger):
            found = store.peek(key.account.key, key.field, costs) if reserve else None
            if found is not None:
                return found
        return store.admit(key.account.key, key.field, costs, reserve=reserve, patience=patience)

    def expected_wait(self, key: LedgerKey, *, tokens: float = 0.0) -> float | None:
        """Seconds until a call of ``key`` that costs one request and ``tokens`` could go:
        0 when there is room now, ``None`` behind a billing wall. Reserves nothing; with
        Redis, one round trip. A fallback can pick the provider with room."""
        costs = (
            {"requests": 1.0, "tokens": tokens, "input_tokens": tokens} if self.admission else None
        )
        decision = self._admit(key, costs, reserve=False)
        return 0.0 if decision.granted else decision.wait

    def clear(self, key: LedgerKey) -> None:
        """Take down the walls of ``key``: of its model, or every wall of its account when the
        key names no model (a billing wall is cleared this way once someone paid)."""
        self.store.clear(key.account.key, None if key.model is None else key.field)

    def record(self, key: LedgerKey, err: BaseException) -> bool:
        """Record the wall ``err`` carries, as a wrapped client does on a failure; whether it
        built one (for calls not made through ``wrap``)."""
        return self._record_wall(key, harness(err).problem)

    # -- the steps around a call --------------------------------------------------------------

    def _costs(self, kwargs: Mapping[str, Any]) -> dict[str, float] | None:
        if not self.admission:
            return None
        costs = estimate(kwargs)
        if self.estimate is not None:
            try:
                given: Any = dict(self.estimate(kwargs))
            except Exception:  # the caller's estimate failed: the default stands
                given = {}
            for scope, cost in given.items():
                number = (
                    cost if isinstance(cost, (int, float)) and not isinstance(cost, bool) else -1
                )
                if scope in COSTS and number >= 0:
                    costs[scope] = float(number)
        return costs

    def _refusal(self, key: LedgerKey, decision: Decision) -> HarnessError:
        """The typed error of a call the ledger refused: no request was sent."""
        label = key.account.label
        wait = decision.wait
        upstream: dict[str, Any] = {"provider": key.account.provider, "ledger": label}
        if key.model is not None:
            upstream["model"] = key.model
        upstream["sent"] = False
        retry_after = None if wait is None else round(max(wait, 0.0), 3)
        if decision.reason == "budget":
            upstream["budget"] = decision.scope
            return class_for_code("upstream.rate_limited")(
                f"ledger: the {decision.scope} budget of {label} is spent; room in "
                f"{retry_after:.2f} s; no request was sent",
                origin="harness",
                retryable=True,
                retry_after=retry_after,
                quota=Quota(scope=decision.scope, resets_in=retry_after, source="admission"),
                upstream=upstream,
            )
        note = decision.note or WallNote(
            "upstream.rate_limited", None, None, wait is not None, None
        )
        if note.status is not None:
            upstream["status"] = note.status
        if note.vendor_code:
            upstream["code"] = note.vendor_code
        met = note.quota
        quota = Quota.from_dict({**(met.to_dict() if met else {}), "resets_in": retry_after})
        when = "until a person clears it" if wait is None else f"for {retry_after:.1f} s"
        return class_for_code(note.code)(
            f"ledger: {label} is behind a wall another call met ({note.code}); it holds {when}; "
            "no request was sent",
            code=note.code,
            origin="harness",
            retryable=note.retryable and wait is not None,
            retry_after=retry_after,
            quota=quota,
            upstream=upstream,
        )

    def _ticket(self, client: Any, provider: str, kwargs: Mapping[str, Any]) -> _Ticket:
        """The call's key and costs."""
        key = LedgerKey(account(client, provider), model_of(kwargs))
        return _Ticket(key, self._costs(kwargs))

    def _verdict(self, ticket: _Ticket, left: float) -> tuple[float, bool]:
        """Ask for the call (one round trip with Redis, unless a copy is fresh); see
        ``_judge``. Room within ``left`` seconds is reserved now, for then."""
        decision = self._admit(ticket.key, ticket.costs, reserve=True, patience=left)
        return self._judge(ticket, decision, left)

    def _judge(self, ticket: _Ticket, decision: Decision, left: float) -> tuple[float, bool]:
        """``(pause, admitted)``: the call is admitted after ``pause`` seconds (its costs are
        reserved for then), or must ask again after it; raises the refusal when even
        ``left`` seconds of waiting would not do."""
        if decision.granted:
            ticket.reserved = decision.reserved
            return max(decision.wait or 0.0, 0.0), True
        if decision.wait is None or decision.wait > left:
            self.refused += 1
            raise self._refusal(ticket.key, decision)
        return max(decision.wait, 0.001), False

    def before(self, client: Any, provider: str, kwargs: Mapping[str, Any]) -> _Ticket:
        """Admit a call, having waited at most ``max_wait`` seconds in all, or raise its
        refusal. A spent budget with room within the bound is reserved for then: the call
        waits and goes, with no second round trip; a wall is asked again once it is down.
        (The waits are counted, not timed.)"""
        ticket = self._ticket(client, provider, kwargs)
        waited = 0.0
        while True:
            pause, admitted = self._verdict(ticket, self.max_wait - waited)
            if pause:
                waited += pause
                self.waited += pause
                time.sleep(pause)
            if admitted:
                return ticket

    async def abefore(self, client: Any, provider: str, kwargs: Mapping[str, Any]) -> _Ticket:
        """``before`` for a coroutine: decided on the loop from a fresh copy, else the Redis
        round trip runs in a worker thread; the waits are ``asyncio.sleep``."""
        ticket = self._ticket(client, provider, kwargs)
        waited = 0.0
        while True:
            store = self.store
            left = self.max_wait - waited
            if isinstance(store, SharedLedger):
                found = store.peek(ticket.key.account.key, ticket.key.field, ticket.costs)
                if found is not None:  # the copy is fresh: decided on the loop
                    pause, admitted = self._judge(ticket, found, left)
                else:
                    pause, admitted = await asyncio.to_thread(self._verdict, ticket, left)
            else:
                pause, admitted = self._verdict(ticket, left)
            if pause:
                waited += pause
                self.waited += pause
                await asyncio.sleep(pause)
            if admitted:
                return ticket

    def succeeded(self, ticket: _Ticket, result: Any, headers: list[Any]) -> None:
        """Settle the reservation against the usage reported, then learn the budgets the last
        response stated (which no reservation of this call is then above); no I/O."""
        if not self.admission:
            return  # walls only: nothing to learn from a success
        ops: list[Op] = []
        field = ticket.key.field
        used = usage_of(result) if ticket.reserved and ticket.costs else None
        if used is not None and ticket.costs is not None:
            for scope in _TOKENS:
                if scope in used and scope in ticket.reserved:
                    held, guess = ticket.reserved[scope], ticket.costs[scope]
                    ops.append(("settle", field, scope, held, used[scope], guess))
        if headers:
            for budget in budgets_of(headers[-1]):
                op = ("observe", field, budget.scope, budget.limit, budget.remaining)
                ops.append((*op, budget.resets_in, self.clock()))
        if ops:
            self._note(ticket.key, ops)

    def failed(self, ticket: _Ticket, exc: BaseException) -> None:
        """Record the wall the failure carries; learn its headers; give back its tokens."""
        problem = harness(exc).problem
        field = ticket.key.field
        ops: list[Op] = []
        for scope in _TOKENS:
            if ticket.reserved.get(scope):
                ops.append(("charge", field, scope, -ticket.reserved[scope]))
        headers = problem.upstream.get("headers")
        if isinstance(headers, dict):
            for budget in budgets_of(headers):
                op = ("observe", field, budget.scope, budget.limit, budget.remaining)
                ops.append((*op, budget.resets_in, self.clock()))
        if ops:
            self._note(ticket.key, ops)
        self._record_wall(ticket.key, problem)

    def _note(self, key: LedgerKey, ops: list[Op]) -> None:
        if isinstance(self.store, SharedLedger):
            self.store.note(key.account.key, ops)
        else:
            self.store.apply(key.account.key, ops)

    def _hold(self, problem: HarnessError) -> float | None:
        """How long the wall ``problem`` carries holds (``None``: until cleared; ``_NO_WALL``:
        it carries none)."""
        quota = problem.quota
        if problem.code != "upstream.rate_limited" or quota is None:
            return _NO_WALL
        if quota.billing:
            return None
        wait = problem.retry_after
        if problem.retryable and wait:
            return min(wait, self.max_wall)
        if quota.resets_in:
            return min(quota.resets_in, self.max_wall)
        return min(wait, self.max_wall) if wait else _NO_WALL

    def _record_wall(self, key: LedgerKey, problem: HarnessError) -> bool:
        if "ledger" in problem.upstream and problem.origin == "harness":
            return False  # the ledger's own refusal: the wall is recorded already
        hold = self._hold(problem)
        if hold == _NO_WALL:
            return False
        quota = problem.quota
        account_wide = quota is not None and (quota.billing or quota.scope == "spend")
        field = ALL if account_wide or key.model is None else key.field
        status = problem.upstream.get("status")
        vendor = problem.upstream.get("code")
        note = WallNote(
            problem.code,
            status if isinstance(status, int) and 100 <= status <= 599 else None,
            vendor if isinstance(vendor, str) else None,
            problem.retryable,
            quota,
        )
        self.store.record(key.account.key, field, hold, note, key.account.label)
        return True

    async def afailed(self, ticket: _Ticket, exc: BaseException) -> None:
        """``failed`` for a coroutine: the wall's write runs in a worker thread."""
        if isinstance(self.store, SharedLedger):
            await asyncio.to_thread(self._safely, self.failed, ticket, exc)
        else:
            self._safely(self.failed, ticket, exc)

    @staticmethod
    def _safely(step: Callable[..., None], *args: Any) -> None:
        """Bookkeeping after the call: it never replaces the caller's result or error."""
        try:
            step(*args)
        except Exception as exc:  # pragma: no cover - the stores never raise; a last guard
            from ._redis import LOG

            LOG.warning("ledger bookkeeping failed: %s", type(exc).__name__)

    # -- for wrap() -------------------------------------------------------------------------------

    def guarded(self, method: Callable[..., Any], client: Any, provider: str) -> Callable[..., Any]:
        """``method`` (a generating method of ``client``) with the ledger's steps around it.

        An async client's methods are often plain functions that return a coroutine (openai's
        and anthropic's ``create``): for those the steps run when the coroutine is awaited,
        the request's moment, and a Redis round trip never runs on the event loop.
        """
        listen(client)
        if inspect.iscoroutinefunction(method):

            async def acall(*args: Any, **kwargs: Any) -> Any:
                ticket = await self.abefore(client, provider, kwargs)
                return await self._awaited(ticket, method(*args, **kwargs))

            return acall
        if _async_client(client):

            def deferred(*args: Any, **kwargs: Any) -> Any:
                result = method(*args, **kwargs)  # a coroutine: nothing is sent before it runs
                if inspect.isawaitable(result) and not hasattr(result, "model_fields"):
                    return self._admitted_later(client, provider, kwargs, result)
                try:  # a stream manager: sent on entering
                    self._at_once(client, provider, kwargs)
                except BaseException:
                    _close_pending(result)
                    raise
                return result

            return deferred

        def call(*args: Any, **kwargs: Any) -> Any:
            ticket = self.before(client, provider, kwargs)
            with heard() as headers:
                try:
                    result = method(*args, **kwargs)
                except Exception as exc:
                    self._safely(self.failed, ticket, exc)
                    raise
            self._safely(self.succeeded, ticket, result, headers)
            return result

        return call

    async def _awaited(self, ticket: _Ticket, awaitable: Any) -> Any:
        """The awaited result of an admitted call, settled; its failure recorded."""
        with heard() as headers:
            try:
                result = await awaitable
            except Exception as exc:
                await self.afailed(ticket, exc)
                raise
        self._safely(self.succeeded, ticket, result, headers)
        return result

    async def _admitted_later(
        self, client: Any, provider: str, kwargs: Mapping[str, Any], awaitable: Any
    ) -> Any:
        """Admit the call when its coroutine is awaited; a refused one is closed unsent."""
        try:
            ticket = await self.abefore(client, provider, kwargs)
        except BaseException:
            close = getattr(awaitable, "close", None)
            if callable(close):
                close()  # never awaited, never sent, no warning
            raise
        return await self._awaited(ticket, awaitable)

    def _at_once(self, client: Any, provider: str, kwargs: Mapping[str, Any]) -> None:
        """An async client's call that returns no coroutine (a stream manager, sent when the
        caller enters it): judged from what this process holds, with no round trip and no
        wait on the event loop (a stale copy lets it go)."""
        ticket = self._ticket(client, provider, kwargs)
        store = self.store
        if isinstance(store, SharedLedger):
            found = store.peek(ticket.key.account.key, ticket.key.field, ticket.costs)
        else:
            found = store.admit(ticket.key.account.key, ticket.key.field, ticket.costs)
        if found is not None:
            self._judge(ticket, found, 0.0)  # no wait here: on the loop, room now or a refusal


def _close_pending(manager: Any) -> None:
    """Close the coroutines a refused stream manager holds (anthropic's holds its request's,
    made when the manager is): never sent, and no "never awaited" warning."""
    for value in list(getattr(manager, "__dict__", {}).values()):
        if inspect.iscoroutine(value):
            value.close()


def _async_client(client: Any) -> bool:
    """Whether ``client`` is an async SDK client (its HTTP client sends with a coroutine)."""
    send = getattr(type(getattr(client, "_client", None)), "send", None)
    return inspect.iscoroutinefunction(send) or type(client).__name__.startswith("Async")
