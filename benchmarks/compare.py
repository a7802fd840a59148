"""normalize() of this checkout against another checkout of the project, interleaved.

    git worktree add /some/dir BASE_COMMIT
    python benchmarks/compare.py /some/dir

Runs the twelve failures of ``benchmarks/run.py`` through ``normalize()`` in fresh
interpreters, alternating between the other checkout (on ``PYTHONPATH``) and this one, and
prints the best time per call of each, so a change's cost on the failure path is seen in one
run, on the same machine, under the same load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAILURES = (
    ("openai", "rate_limit_tpm_429"),
    ("openai", "insufficient_quota_429"),
    ("openai", "context_length_exceeded_400"),
    ("openai", "server_error_500"),
    ("anthropic", "overloaded_529"),
    ("anthropic", "rate_limit_429"),
    ("anthropic", "context_length_exceeded_400"),
    ("google", "rate_limit_free_tier_per_minute_429"),
    ("google", "overloaded_503"),
    ("google", "api_key_invalid_400"),
    ("http", "cloudflare_520_html_anthropic"),
    ("http", "nginx_504_gateway_timeout"),
)

MEASURE = """
import json, sys, time
from normalize_errors import normalize
from normalize_errors.replay import load, run, shipped

best = {}
for provider, name in json.loads(sys.argv[1]):
    exc = run(load(shipped() / provider / f"{name}.yaml")).exception
    for _ in range(300):
        normalize(exc)
    fastest = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(2000):
            normalize(exc)
        fastest = min(fastest, (time.perf_counter() - start) / 2000 * 1e6)
    best[f"{provider}/{name}"] = fastest
print(json.dumps(best))
"""


def measure(path: Path) -> dict[str, float]:
    """Best µs per call of each failure, with the package of ``path`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(path)}
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(FAILURES)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=path,
    )
    found: dict[str, float] = json.loads(out.stdout)
    return found


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    base = Path(sys.argv[1]).resolve()
    rounds = 2
    runs: dict[str, list[dict[str, float]]] = {"base": [], "this": []}
    for _ in range(rounds):
        runs["base"].append(measure(base))
        runs["this"].append(measure(ROOT))
    print(f"normalize() per call, best of {rounds} interleaved rounds (µs)\n")
    print(f"{'failure':48} {'base':>7} {'this':>7} {'change':>7}")
    total_base = total_this = 0.0
    for provider, name in FAILURES:
        key = f"{provider}/{name}"
        then = min(run[key] for run in runs["base"])
        now = min(run[key] for run in runs["this"])
        total_base += then
        total_this += now
        print(f"{key:48} {then:7.1f} {now:7.1f} {100 * (now / then - 1):+6.0f}%")
    change = 100 * (total_this / total_base - 1)
    print(f"{'all twelve':48} {total_base:7.1f} {total_this:7.1f} {change:+6.0f}%")


if __name__ == "__main__":
    main()
