"""Resilience across calls, runs and workers, from the harness answer.

Needs the ``resilience`` extra for Redis (``pip install normalize-errors[resilience]``):

```python
from normalize_errors.resilience import Budget, CircuitBreaker, FallbackPlan

breaker = CircuitBreaker(store="redis://localhost:6379/0")   # or None: in this process
plan = FallbackPlan(["gpt", "claude"], on={"context.window_exceeded": ["gpt-long"]})
with Budget(attempts=5, seconds=60):
    answer = plan.call({
        "gpt": lambda: breaker.call("openai:gpt-4o-mini", gpt.chat.completions.create, **q),
        "gpt-long": lambda: breaker.call("openai:gpt-4.1", gpt.chat.completions.create, **q1),
        "claude": lambda: breaker.call("anthropic:claude", claude.messages.create, **q2),
    })
```

* ``CircuitBreaker(store=None | "redis://...")``: ``call(key, fn, ...)`` / ``acall``; counts
  the failures that say the upstream is failing (a count, or Resilience4j's failure and slow
  call rates), opens for the error's ``retry_after`` (else an exponential cool-down), fails
  fast while open, then lets ``half_open_calls`` trials through; ``force_open`` / ``disable``.
  Through Redis: digest keys in a namespace of their own, the server's clock, a local copy
  read again at most every ``refresh`` seconds.
* ``FallbackPlan(order, on=...)``: where each kind of failure goes, keyed on the harness
  code; ``fallback(*calls)`` / ``afallback``: the next callable when another provider may
  succeed (``fails_over``, ``moves_on``). Every attempt's error in ``causes``, and every
  attempt in ``attempt_log``.
* ``Budget(attempts=, seconds=, cost=)``: one bound on a run's retries, repairs, fallbacks
  and breaker calls (the draft's section 10), ending in ``loop.budget_exceeded``.
* ``Ledger(store=None | "redis://...")``: given to ``wrap(client, ledger=...)``, the quota
  walls every worker met (a known wall fails the call at once, no request sent) and the
  request and token budgets learned from the providers' rate-limit headers (each call
  reserves its expected cost, and waits or fails fast when they are spent);
  ``expected_wait(key)``, ``clear(key)``.
* ``replay_refusal(err, idempotent=, non_idempotent=)``: why a failed call must not be sent
  again: a stream that already delivered output (``err.stream``), a request that may have run
  on the server.

The framework hooks are in ``normalize_errors.resilience.hooks``.
"""

from __future__ import annotations

from ._breaker import BreakerState, CircuitBreaker
from ._budget import Budget, current_budget
from ._common import counts_against_upstream, fails_over, replay_refusal, request_phase
from ._fallback import RESULT_FAILURES, FallbackPlan, afallback, fallback, moves_on
from ._ledger import Ledger, LedgerKey
from ._store import MemoryStore, State

__all__ = [
    "RESULT_FAILURES",
    "BreakerState",
    "Budget",
    "CircuitBreaker",
    "FallbackPlan",
    "Ledger",
    "LedgerKey",
    "MemoryStore",
    "State",
    "afallback",
    "counts_against_upstream",
    "current_budget",
    "fails_over",
    "fallback",
    "moves_on",
    "replay_refusal",
    "request_phase",
]
