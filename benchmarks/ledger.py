"""Section 5 of ``benchmarks/run.py``: what the ledger costs a call on the success path.

A wrapped OpenAI client answers from memory (an in-memory transport; each answer carries
OpenAI's rate-limit headers with budgets far from spent), once without a ledger and once with
each kind of ledger, measured interleaved; the figure is the difference per call:

* in memory (``Ledger()``): the walls checked, the call's cost reserved and settled;
* through Redis with a fresh copy (``Ledger(store=url)``, the defaults: ``refresh=1`` and a
  lease of 5% of each limit): calls admitted from this process's copy and lease, no round trip;
* through Redis with ``refresh=0, lease=0``: one round trip per call (localhost).

The Redis commands each call cost are counted by the server (``INFO commandstats``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["bench_ledger", "report_ledger"]

HEADERS = {
    "content-type": "application/json",
    "x-ratelimit-limit-requests": "1000000",
    "x-ratelimit-remaining-requests": "999999",
    "x-ratelimit-reset-requests": "0.06ms",
    "x-ratelimit-limit-tokens": "100000000",
    "x-ratelimit-remaining-tokens": "99999990",
    "x-ratelimit-reset-tokens": "6ms",
}
"""OpenAI's header names (its rate-limits guide), with budgets no benchmark spends."""


def _client(completion: bytes, library: Any) -> Any:
    import openai

    def handler(request: Any) -> Any:
        return library.Response(200, content=completion, headers=HEADERS)

    return openai.OpenAI(
        api_key="sk-bench", http_client=library.Client(transport=library.MockTransport(handler))
    )


def _timed(ledger: Any) -> list[float]:
    """Time spent in the ledger's steps around each call (``before``, ``succeeded``), summed
    into the returned one-item list: the ledger's own cost, apart from the SDK's."""
    spent = [0.0]
    for name in ("before", "succeeded"):
        real = getattr(ledger, name)

        def timed(*args: Any, _real: Any = real) -> Any:
            started = time.perf_counter()
            try:
                return _real(*args)
            finally:
                spent[0] += time.perf_counter() - started

        setattr(ledger, name, timed)
    return spent


def bench_ledger(
    quick: bool,
    *,
    completion: bytes,
    library: Any,
    redis_url: str | None,
    interleaved: Callable[..., tuple[float, float]],
    commands: Callable[[str], int],
) -> dict[str, Any]:
    """The per-call figures (µs) of each ledger against the same client without one."""
    from normalize_errors import wrap
    from normalize_errors.resilience import Ledger

    number, repeat = (300, 3) if quick else (1500, 5)
    messages = [{"role": "user", "content": "Hello"}]
    plain = wrap(_client(completion, library))

    def ask(client: Any) -> Callable[[], Any]:
        return lambda: client.chat.completions.create(model="gpt-4o-mini", messages=messages)

    ask(plain)()
    figures: dict[str, Any] = {}
    ledgers: list[tuple[str, Ledger]] = [("memory", Ledger())]
    if redis_url is not None:
        ledgers += [
            ("redis_fresh_copy", Ledger(store=redis_url, tenant="bench-fresh")),
            ("redis_round_trip", Ledger(store=redis_url, tenant="bench-trip", refresh=0, lease=0)),
        ]
    for name, ledger in ledgers:
        own = _timed(ledger)
        guarded = wrap(_client(completion, library), ledger=ledger)
        for _ in range(3):
            ask(guarded)()  # learn the budgets; write them with the next call
        before = commands(redis_url) if redis_url is not None and ledger.shared else 0
        trips = ledger.round_trips
        own[0] = 0.0
        base, with_ledger = interleaved(ask(plain), ask(guarded), number, repeat)
        calls = number * repeat
        found: dict[str, Any] = {
            "plain_us": base * 1e6,
            "ledger_us": with_ledger * 1e6,
            "overhead_us": (with_ledger - base) * 1e6,
            "own_us": own[0] / calls * 1e6,
            "round_trips_per_call": (ledger.round_trips - trips) / calls,
        }
        if ledger.shared and redis_url is not None:
            found["commands_per_call"] = (commands(redis_url) - before) / calls
            found["degraded"] = ledger.degraded
        figures[name] = found
        ledger.close()
    if redis_url is None:
        figures["redis"] = "skipped"
    return figures


def report_ledger(figures: dict[str, Any]) -> list[str]:
    """Section 5 as lines of text."""
    out = [
        "",
        "5. the ledger on the success path: a wrapped OpenAI client on an in-memory transport,",
        "   with and without a Ledger, measured interleaved (per call, median), and the time",
        "   spent in the ledger's own steps (before the call, and learning from its answer)",
        "",
    ]
    names = {
        "memory": "in memory",
        "redis_fresh_copy": "through Redis, fresh copy",
        "redis_round_trip": "through Redis, refresh=0",
    }
    for key, shown in names.items():
        found = figures.get(key)
        if not isinstance(found, dict):
            out.append(f"   {shown:<28} skipped: redis-server or redis-py absent")
            continue
        line = (
            f"   {shown:<27} {found['own_us']:7.1f} µs in the ledger's steps; call "
            f"{found['plain_us']:.0f} → {found['ledger_us']:.0f} µs "
            f"({found['overhead_us']:+.0f}); {found['round_trips_per_call']:.3f} round trips"
        )
        if "commands_per_call" in found:
            line += f" ({found['commands_per_call']:.2f} Redis commands, those in the scripts too)"
        if found.get("degraded"):
            line += "  (Redis FAILED during the run)"
        out.append(line)
    return out
