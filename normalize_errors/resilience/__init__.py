"""Resilience across calls, runs and workers, from the harness answer.

Needs the ``resilience`` extra for Redis (``pip install normalize-errors[resilience]``)::

    from normalize_errors.resilience import Budget, CircuitBreaker, fallback

    breaker = CircuitBreaker(store="redis://localhost:6379/0")   # or None: in this process
    with Budget(attempts=5, seconds=60) as budget:
        answer = fallback(
            lambda: breaker.call("openai:gpt-4o-mini", gpt.chat.completions.create, **q),
            lambda: breaker.call("anthropic:claude", claude.messages.create, **q2),
        )

* ``CircuitBreaker(store=None | "redis://...")``: ``call(key, fn, ...)`` / ``acall``; counts
  the failures that say the upstream is failing, opens for the error's ``retry_after`` (else
  an exponential cool-down), fails fast while open, then lets one trial through.
* ``fallback(*calls)`` / ``afallback``: the next callable when another provider may succeed
  (``fails_over``), every attempt's error in ``causes``.
* ``Budget(attempts=, seconds=, cost=)``: one bound on a run's retries, repairs, fallbacks
  and breaker calls (the draft's section 10), ending in ``loop.budget_exceeded``.
* ``replay_refusal(err, idempotent=)``: why a failed call must not be sent again: a stream
  that already delivered output (``err.stream``), a request that may have run on the server.

The framework hooks are in ``normalize_errors.resilience.hooks``.
"""

from __future__ import annotations

from ._breaker import BreakerState, CircuitBreaker
from ._budget import Budget, current_budget
from ._common import counts_against_upstream, fails_over, replay_refusal, request_phase
from ._fallback import afallback, fallback
from ._store import MemoryStore, State

__all__ = [
    "BreakerState",
    "Budget",
    "CircuitBreaker",
    "MemoryStore",
    "State",
    "afallback",
    "counts_against_upstream",
    "current_budget",
    "fails_over",
    "fallback",
    "replay_refusal",
    "request_phase",
]
