"""Running the load test: worker processes (``load_worker``) against the project's own provider
server (``provider_server``) and one Redis, with the ledger on or off at the same offered load.

``tests/resilience/test_load.py`` runs it for a few seconds in CI; ``benchmarks/load.py`` runs
it for a real minute and prints the figures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .provider_server import Limits, ProviderServer

__all__ = ["Worker", "limits", "run"]

ROOT = Path(__file__).resolve().parents[2]
MAX_TOKENS = 64
"""What each worker's call allows; the server's answer uses half of it."""


class Worker:
    """One worker process; ``send(op=...)`` gives its answer."""

    def __init__(self, server: str, redis_url: str, mode: str, tag: str, window: float) -> None:
        env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.resilience.load_worker", server, redis_url, mode, tag,
             str(window)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )  # fmt: skip

    def answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the worker died")
        found: dict[str, Any] = json.loads(line)
        return found

    def post(self, **command: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def send(self, **command: Any) -> dict[str, Any]:
        self.post(**command)
        return self.answer()

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:  # pragma: no cover - a worker that hangs
                self.process.kill()
                self.process.wait()
            if self.process.stdout is not None:
                self.process.stdout.close()


def limits(window: float) -> dict[str, Limits]:
    """The server's limits per ``window`` seconds: OpenAI bound by its requests (20), Anthropic
    by its output tokens (640: twenty answers' 32 tokens, each admitted only with 64 free).
    (Twenty a window, not ten: a call lost at a run's edges is then under 2% of a short run.)"""
    return {
        "openai": Limits(20, tokens=1_000_000, window=window),
        "anthropic": Limits(1000, input_tokens=1_000_000, output_tokens=640, window=window),
    }


def run(
    redis_url: str, mode: str, *, seconds: float, window: float, workers: int = 4
) -> dict[str, Any]:
    """``workers`` processes calling a fresh server for ``seconds`` with the ledger ``mode``
    (``off``, ``walls``, ``admission``); what the server counted and the workers measured."""
    limit = limits(window)
    server = ProviderServer(openai=limit["openai"], anthropic=limit["anthropic"]).start()
    tag = f"{mode}-{os.getpid()}-{time.monotonic_ns()}"
    fleet = [Worker(server.url, redis_url, mode, tag, window) for _ in range(workers)]
    try:
        for worker in fleet:
            assert worker.answer()["ready"]
        started = time.time() + 0.5
        until = started + seconds
        for worker in fleet:
            worker.post(op="loop", start=started, until=until)
        done = [worker.answer() for worker in fleet]
    finally:
        for worker in fleet:
            worker.stop()
        server.stop()
    # what the server answered within the run's ``seconds`` (a call that waited for room
    # when the run ended may go after it: not counted)
    counted = {"openai": {"200": 0, "429": 0}, "anthropic": {"200": 0, "429": 0}}
    refusals: list[tuple[str, float]] = []
    late = 0
    for _, key, status, wall in server.log:
        if not started <= wall < until:
            late += wall >= until
            continue
        api = "anthropic" if key.startswith("sk-ant-") else "openai"
        counted[api][str(status)] += 1
        if status == 429:
            refusals.append((api, round(wall - started, 2)))
    calls = sum(w["calls"] for w in done)
    admissible = {  # what the server could complete in ``seconds`` by its rules
        "openai": limit["openai"].requests * (1 + seconds / window),
        # a request needs MAX_TOKENS free and keeps half: the full bucket admits
        # (L - MAX_TOKENS) / half + 1, then the refill one per half
        "anthropic": (limit["anthropic"].output_tokens - MAX_TOKENS) // (MAX_TOKENS // 2)
        + 1
        + limit["anthropic"].output_tokens * seconds / window / (MAX_TOKENS // 2),
    }
    return {
        "mode": mode,
        "seconds": seconds,
        "window": window,
        "workers": workers,
        "calls": calls,
        "received": {api: c["200"] + c["429"] for api, c in counted.items()},
        "completed": {api: c["200"] for api, c in counted.items()},
        "429": {api: c["429"] for api, c in counted.items()},
        "refused_by_ledger": sum(w["refused"] for w in done),
        "admissible": admissible,
        "share_of_limit": {api: counted[api]["200"] / admissible[api] for api in counted},
        "per_minute": {api: counted[api]["200"] * 60.0 / seconds for api in counted},
        "ledger_us_per_call": 1e6 * sum(w["ledger_s"] for w in done) / max(calls, 1),
        "round_trips_per_call": sum(w.get("round_trips", 0) for w in done) / max(calls, 1),
        "waited_s": sum(w["waited_s"] for w in done),
        "429_at": refusals[:20],
        "after_the_run": late,
    }
