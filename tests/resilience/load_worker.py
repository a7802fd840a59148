"""One worker process of the load test and of the daily-wall test: it calls the project's own
provider server (``provider_server``) through wrapped real SDK clients (openai and anthropic),
with a ``Ledger`` shared through Redis or without one, and answers commands on stdin:

* ``{"op": "loop", "start": S, "until": T}``: call as fast as it may from the wall-clock
  time ``S`` until ``T``,
  alternating OpenAI and Anthropic; after a 429 it waits the error's ``retry_after`` (what a
  client that follows the provider's hint does, ``retrying()`` for one); with the ledger on,
  the ledger waits for room itself (``max_wait``). Prints its counts;
* ``{"op": "call", "api": "openai"}``: one call; prints its outcome and ``retry_after``.

Run as ``python -m tests.resilience.load_worker SERVER REDIS MODE TAG`` from the checkout:
``MODE`` is ``off`` (no ledger), ``walls`` (a ledger without admission) or ``admission``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def main(server: str, redis_url: str, mode: str, tag: str, window: float) -> None:
    import anthropic
    import openai

    from normalize_errors import HarnessError, wrap
    from normalize_errors.resilience import Ledger

    ledger = None
    if mode != "off":
        ledger = Ledger(
            store=redis_url, tenant="load", admission=mode == "admission", max_wait=window
        )
    spent = [0.0]  # seconds in the ledger's own steps (its waits left out)
    if ledger is not None:
        for name in ("before", "succeeded", "failed"):
            real = getattr(ledger, name)

            def timed(*args: Any, _real: Any = real) -> Any:
                started, waited = time.perf_counter(), ledger.waited
                try:
                    return _real(*args)
                finally:
                    spent[0] += time.perf_counter() - started - (ledger.waited - waited)

            setattr(ledger, name, timed)
    gpt = wrap(
        openai.OpenAI(api_key=f"sk-load-openai-{tag}", base_url=f"{server}/v1", max_retries=0),
        ledger=ledger,
    )
    claude = wrap(
        anthropic.Anthropic(api_key=f"sk-ant-load-{tag}", base_url=server, max_retries=0),
        ledger=ledger,
    )
    prompt: Any = [{"role": "user", "content": "Say hello to the load test. " * 6}]

    def call(api: str) -> Any:
        if api == "openai":
            return gpt.chat.completions.create(model="gpt-4o-mini", messages=prompt, max_tokens=64)
        return claude.messages.create(model="claude-sonnet-4-6", messages=prompt, max_tokens=64)

    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        if command["op"] == "call":
            try:
                call(command["api"])
                out: dict[str, Any] = {"outcome": "ok"}
            except HarnessError as err:
                problem = err.problem
                out = {
                    "outcome": problem.code,
                    "retry_after": problem.retry_after,
                    "sent": problem.upstream.get("sent", True),
                    "at": time.time(),
                }
            print(json.dumps(out), flush=True)
            continue
        counts = {"calls": 0, "completed": 0, "429": 0, "refused": 0, "waited_s": 0.0}
        until = float(command["until"])
        while time.time() < float(command["start"]):
            time.sleep(0.005)  # every worker starts together
        started_waits = ledger.waited if ledger is not None else 0.0
        spent[0] = 0.0
        turn = 0
        while time.time() < until:
            api = ("openai", "anthropic")[turn % 2]
            turn += 1
            counts["calls"] += 1
            try:
                call(api)
                counts["completed"] += 1
            except HarnessError as err:
                problem = err.problem
                if problem.upstream.get("sent") is False:
                    counts["refused"] += 1
                else:
                    counts["429"] += 1
                pause = min(problem.retry_after or 1.0, max(until - time.time(), 0.0))
                counts["waited_s"] += pause
                time.sleep(pause)
        if ledger is not None:
            counts["waited_s"] += ledger.waited - started_waits
            counts["round_trips"] = ledger.round_trips
        counts["ledger_s"] = spent[0]
        print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
