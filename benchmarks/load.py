"""The ledger's load test for a real minute: four worker processes against the project's own
provider server (``tests/resilience/provider_server.py``) and one ``redis-server`` this script
starts on 127.0.0.1, at the same offered load with no ledger, with walls only and with
admission, and the figures of each.

    python benchmarks/load.py                 # a 60-second window, 60 seconds per run
    python benchmarks/load.py --window 5 --seconds 12   # what CI's test runs
    python benchmarks/load.py --json

The server limits each credential as OpenAI and Anthropic do (token buckets, their header
names, the shipped cassettes' 429 bodies): OpenAI by 20 requests per window, Anthropic by 640
output tokens per window (calls allow 64, answers use 32). Every worker calls as fast as it
may, alternating the two, and waits a 429's ``retry_after``. Needs the SDKs (openai,
anthropic), redis-py and ``redis-server``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=float, default=60.0, help="the server's window (s)")
    parser.add_argument("--seconds", type=float, default=60.0, help="each run's length (s)")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from run import _redis_server  # the benchmark's own redis-server starter

    from tests.resilience.load import run

    server = _redis_server()
    if isinstance(server, str):
        print(f"load test skipped: {server}")
        return 0
    process, url = server
    try:
        runs = [
            run(url, mode, seconds=args.seconds, window=args.window, workers=args.workers)
            for mode in ("off", "walls", "admission")
        ]
    finally:
        process.terminate()
        process.wait(timeout=10)
    print(json.dumps(runs, indent=2) if args.json else report(runs))
    return 0


def report(runs: list[dict[str, Any]]) -> str:
    first = runs[0]
    out = [
        f"load test: {first['workers']} worker processes, {first['seconds']:.0f} s per run, the "
        f"server's window {first['window']:.0f} s (OpenAI: 20 requests per window; Anthropic: "
        "640 output tokens per window, calls allowing 64 and using 32)",
        "",
        f"{'ledger':<10} {'429s':>12} {'completed':>14} {'of what the limits admit':>26} "
        f"{'per minute':>14} {'round trips':>12} {'ledger µs':>10}",
    ]
    for found in runs:
        refused = found["429"]
        done = found["completed"]
        share = found["share_of_limit"]
        per_minute = found["per_minute"]
        out.append(
            f"{found['mode']:<10} {refused['openai']:>5} + {refused['anthropic']:<4} "
            f"{done['openai']:>6} + {done['anthropic']:<5} "
            f"{100 * share['openai']:>11.0f}% + {100 * share['anthropic']:.0f}%{'':>8} "
            f"{per_minute['openai']:>5.0f} + {per_minute['anthropic']:<5.0f} "
            f"{found['round_trips_per_call']:>11.2f} {found['ledger_us_per_call']:>10.0f}"
        )
    off, on = sum(runs[0]["429"].values()), sum(runs[-1]["429"].values())
    if off:
        out += ["", f"admission: {100 * (1 - on / off):.0f}% fewer 429s than no ledger"]
    out.append(
        "(OpenAI + Anthropic in each column; 'ledger µs' is the ledger's own steps per call)"
    )
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
