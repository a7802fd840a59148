"""What the resilience helpers share: which failures say what, and bounded waits."""

from __future__ import annotations

import contextvars
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final, Literal

from .._base._patterns import RESILIENCE_TENANT
from .._facade import normalize
from .._model._dropin import copy_dropin
from .._model._exceptions import HarnessError
from .._reading._stream_state import delivered_output

UPSTREAM_FAILING: Final = frozenset(
    {"upstream.overloaded", "upstream.unavailable", "upstream.timeout"}
)
"""Codes that say the upstream itself is failing: a breaker counts them (and
``upstream.rate_limited`` when it is retryable: a spent quota says nothing of its health)."""

ANOTHER_MAY_SUCCEED: Final = frozenset(
    {
        "upstream.rate_limited",
        "upstream.overloaded",
        "upstream.unavailable",
        "upstream.timeout",
        "upstream.authentication_failed",
    }
)
"""Codes after which another provider may succeed: its quota, capacity or credentials are its
own. A wrong request (``upstream.invalid_request``, ``context.*``, ``output.*``, ``policy.*``)
would be as wrong at the next provider, so the fallback raises it."""

MAX_WAIT: Final = 24 * 3600.0
"""The longest wait any helper takes from an error, whatever it states (a day)."""

Phase = Literal["before_send", "after_send", "unknown"]

_BEFORE_SEND: Final = frozenset(
    {
        "ConnectError",
        "ConnectTimeout",
        "PoolTimeout",
        "ConnectionNotAvailable",
        "ProxyError",
        "UnsupportedProtocol",
        "InvalidURL",
        "ConnectTimeoutError",
        "EndpointConnectionError",
        "ConnectionRefusedError",
        "NewConnectionError",
        "NameResolutionError",
        "gaierror",
    }
)
"""Transport failures raised before the request was written: replaying them is safe."""
_AFTER_SEND: Final = frozenset(
    {
        "ReadTimeout",
        "ReadError",
        "WriteTimeout",
        "WriteError",
        "RemoteProtocolError",
        "ReadTimeoutError",
        "IncompleteRead",
        "ProtocolError",
        "ConnectionResetError",
        "CloseError",
        "ServerDisconnectedError",
    }
)
"""Transport failures raised once the request may have reached the server."""


def harness(exc: BaseException) -> HarnessError:
    """The harness error for ``exc``; a drop-in (already a harness error) stays itself."""
    return exc if isinstance(exc, HarnessError) else normalize(exc)


def bounded_wait(value: Any, cap: float) -> float | None:
    """``value`` as a wait in seconds within ``[0, cap]``, or ``None`` when it is no number.

    Negative waits are 0, NaN is no wait stated, an infinite or years-long wait is ``cap``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    if math.isnan(number):
        return None
    return min(max(number, 0.0), cap, MAX_WAIT)


def refused_by_breaker(err: BaseException) -> bool:
    """Whether ``err`` is a circuit breaker's own fast failure, or the ledger's (a known wall,
    a spent budget): no request was sent."""
    problem = err.problem if isinstance(err, HarnessError) else None
    if problem is None or problem.origin != "harness":
        return False
    return "breaker" in problem.upstream or "ledger" in problem.upstream


def counts_against_upstream(err: HarnessError) -> bool:
    """Whether ``err`` says the upstream is failing (what a breaker counts).

    Overloaded, unavailable and timed-out upstreams count, and a rate limit that is
    retryable; the caller's own failures (a bad request, a credential, the output, a policy,
    the context) and a spent quota do not. A breaker's own fast failure never counts.
    """
    problem = err.problem
    if refused_by_breaker(problem):
        return False
    if problem.code in UPSTREAM_FAILING:
        return True
    return problem.code == "upstream.rate_limited" and problem.retryable


def fails_over(err: BaseException) -> bool:
    """Whether another provider may succeed where this call failed (any exception).

    True for a rate limit or a spent quota, an overloaded or unavailable upstream, an open
    breaker, a credential refused by this provider, and a stream cut before its first
    output (``upstream.invalid_response`` with nothing delivered: the stream broke, the
    request was not wrong); False for a request that is wrong wherever it goes, for the
    output and policy errors of the model, and for a run's limits.
    """
    problem = harness(err).problem
    if problem.code in ANOTHER_MAY_SUCCEED:
        return True
    stream = problem.stream
    return (
        problem.code == "upstream.invalid_response"
        and stream is not None
        and stream.get("terminal") is False
        and delivered_output(problem) == 0
    )


def request_phase(err: BaseException) -> Phase:
    """Whether the failed request may have reached the server, read from the exception chain.

    ``before_send``: a connection could not be made (safe to replay); ``after_send``: the
    request was written and the answer was lost or late (a read timeout, a cut connection:
    the call may have run); ``unknown`` when no transport failure is in the chain.
    """
    seen: set[int] = set()
    stack: list[BaseException | None] = [err, getattr(err, "problem", None)]
    while stack:
        exc = stack.pop()
        if exc is None or id(exc) in seen or len(seen) > 32:
            continue
        seen.add(id(exc))
        for klass in type(exc).__mro__:
            if klass.__name__ in _BEFORE_SEND:
                return "before_send"
            if klass.__name__ in _AFTER_SEND:
                return "after_send"
        stack.extend((exc.__cause__, exc.__context__))
    return "unknown"


def unsent(err: BaseException) -> bool:
    """Whether the failed call surely left nothing the server acted on: a circuit breaker
    refused it, the connection was never made (``before_send``), or the provider refused it
    at admission (a 429 rate limit: it did not take the request)."""
    problem = harness(err).problem
    if refused_by_breaker(problem) or request_phase(err) == "before_send":
        return True
    return problem.code == "upstream.rate_limited" and problem.upstream.get("status") == 429


def replay_refusal(
    err: HarnessError, *, idempotent: bool, non_idempotent: bool = False
) -> str | None:
    """Why the call that raised ``err`` must not be replayed, or ``None`` when it may be.

    A stream that already delivered output to the caller is never replayed (the caller has
    part of an answer), whatever ``wrap(check=...)`` said: ``err.stream`` tells. A call
    marked ``non_idempotent`` is replayed only when its request surely reached no server
    (``unsent``). A stream that failed before its first output may be (it has shown the
    caller nothing), as may a request that failed before it was sent; any other request
    that may have run on the server (``after_send``) is replayed only when the caller said
    the call is ``idempotent``.
    """
    amount = delivered_output(err)
    if amount:
        summary = err.problem.stream or {}
        chunks = summary.get("chunks")
        return (
            f"not replayed: its stream had already delivered output to the caller "
            f"({chunks} chunk(s), {summary.get('output_chars')} character(s))"
        )
    if non_idempotent and not unsent(err):
        return (
            "not replayed: the call is marked non-idempotent and its request may have "
            "reached the server"
        )
    if amount == 0:
        return None  # a stream that failed before its first output
    if not idempotent and request_phase(err) == "after_send":
        return "not replayed: the request may have run on the server (pass idempotent=True)"
    return None


def delivered(err: HarnessError) -> bool:
    """Whether part of the failed call's output already reached the caller."""
    return replay_refusal(err, idempotent=True) is not None


_NON_IDEMPOTENT: Final[contextvars.ContextVar[bool]] = contextvars.ContextVar(
    "normalize_errors_non_idempotent", default=False
)


@contextmanager
def marking(non_idempotent: bool, idempotent: bool = False) -> Iterator[bool]:
    """Whether the helper's call is non-idempotent: its own mark, or a helper's around it.

    Within the block, helpers nested in this one (a ``retrying()`` inside a ``fallback()``)
    see the mark too, so a call marked once is never replayed by any of them.
    """
    if non_idempotent and idempotent:
        raise ValueError("a call is idempotent or non_idempotent, not both")
    if not non_idempotent or _NON_IDEMPOTENT.get():
        yield non_idempotent or _NON_IDEMPOTENT.get()
        return
    token = _NON_IDEMPOTENT.set(True)
    try:
        yield True
    finally:
        _NON_IDEMPOTENT.reset(token)


def refused(err: HarnessError, why: str) -> HarnessError:
    """A copy of ``err`` that is not retryable and whose ``detail`` ends with ``why``."""
    top = copy_dropin(err) if err.problem is not err else err._clone()
    problem = top.problem
    problem.retryable = False
    problem.detail = f"{problem.detail}; {why}" if problem.detail else why
    return top


def with_causes(
    last: HarnessError, earlier: list[HarnessError], *, attempts: int | None = None
) -> HarnessError:
    """A copy of ``last`` with ``earlier`` (most recent first) after its own ``causes``.

    The caller's error objects are never changed; a drop-in stays a drop-in.
    """
    dropin = last.problem is not last
    top = copy_dropin(last) if dropin else last._clone()
    causes = [*last.causes, *earlier]
    top.causes = [c for c in causes if c is not top and c.problem is not top.problem]
    if attempts is not None:
        top.attempts = attempts
    if not dropin:  # a drop-in's copy keeps the vendor exception's own chain
        top.__cause__ = last.__cause__ if last.__cause__ is not None else last
    return top


def check_tenant(tenant: str | None) -> None:
    """Refuse a tenant that is not 1 to 64 letters, digits, ``.``, ``_`` or ``-``: it names a
    namespace in Redis, so nothing in it may reach another's keys."""
    if tenant is not None and not RESILIENCE_TENANT.compiled().fullmatch(tenant):
        raise ValueError("tenant must be 1 to 64 letters, digits, '.', '_' or '-'")
