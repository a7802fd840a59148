"""Issue 40's done-when, against the project's own provider server (``provider_server``) and
one real ``redis-server``, with four worker processes calling through wrapped real openai and
anthropic clients:

1. **the load test**: at the same offered load (every worker calls as fast as it may and
   waits a 429's ``retry_after``), with the ledger's admission on the server sends at least
   90% fewer 429s and the fleet completes at least 95% of what it completes with no ledger
   (the share of the limits themselves, 95% and more, is ``benchmarks/load.py``'s: a CI
   machine's load caps the fleet's pace, with or without a ledger), with at most one Redis
   round trip per call. The server runs a 5-second window (its headers say
   so, as OpenAI's durations would); ``benchmarks/load.py`` runs the real minute. The loops
   are bounded in time (``SECONDS``) and each run in count by the limits.
2. **a daily wall**: once one worker meets the daily quota, the other workers send no request
   with that credential until its reset (the server counts them), each getting the typed
   error with the ``retry_after`` to the reset; after it, requests go again.

The run takes about a minute (two fleets of 12 s each, their start-up, the daily wall's 6 s).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("redis")

from .conftest import RedisServer
from .load import Worker, run
from .provider_server import Limits, ProviderServer

WINDOW = 5.0
SECONDS = 12.0


def test_admission_sends_90_percent_fewer_429s_and_keeps_95_percent_of_the_limit(
    redis_server: RedisServer,
) -> None:
    off = run(redis_server.url, "off", seconds=SECONDS, window=WINDOW)
    on = run(redis_server.url, "admission", seconds=SECONDS, window=WINDOW)
    print()  # the figures, for `pytest -s` and the CI log's failures
    for report in (off, on):
        print(
            f"{report['mode']:>9}: 429s {report['429']}, completed {report['completed']} of "
            f"{ {k: round(v, 1) for k, v in report['admissible'].items()} } admissible, "
            f"{report['round_trips_per_call']:.2f} round trips and "
            f"{report['ledger_us_per_call']:.0f} µs in the ledger per call; first 429s at "
            f"{report['429_at'][:4]}"
        )
    refused_off = sum(off["429"].values())
    refused_on = sum(on["429"].values())
    assert refused_off >= 20  # the offered load is well over the limits
    assert refused_on <= 0.1 * refused_off
    for api in ("openai", "anthropic"):
        # what the limits admit, as the same fleet completes it with no ledger: the fleet's
        # own pace on a loaded CI machine (2 CPUs, another xdist worker) caps both runs alike
        # (one CI run completed 90% with no ledger); benchmarks/load.py measures the share of
        # the limit itself, over a real minute (docs/guides/limits.md: 98% and 97%)
        assert on["share_of_limit"][api] >= 0.95 * min(off["share_of_limit"][api], 1.0), (
            api,
            on,
            off,
        )
    assert on["round_trips_per_call"] <= 1.1  # one per call; a 429's wall writes at once


@pytest.fixture
def daily_server() -> Iterator[ProviderServer]:
    plenty = Limits(1000, tokens=10**7, input_tokens=10**7, output_tokens=10**7, window=60)
    server = ProviderServer(openai=plenty, anthropic=plenty, daily=6).start()
    try:
        yield server
    finally:
        server.stop()


def test_after_a_daily_wall_the_other_workers_send_nothing_until_its_reset(
    redis_server: RedisServer, daily_server: ProviderServer
) -> None:
    # max_wait 0.5 s: a refusal comes back as the typed error, not a wait
    fleet = [
        Worker(daily_server.url, redis_server.url, "admission", "daily", 0.5) for _ in range(4)
    ]
    try:
        for worker in fleet:
            assert worker.answer()["ready"]
        first, *others = fleet
        midnight = daily_server.midnight_in(6.0)
        outcomes = [first.send(op="call", api="openai") for _ in range(7)]
        assert [o["outcome"] for o in outcomes] == ["ok"] * 6 + ["upstream.rate_limited"]
        assert outcomes[-1]["sent"] is True  # the daily 429 itself
        key = "sk-load-openai-daily"
        assert daily_server.counts[key] == {"received": 7, "completed": 6, "429": 1}
        for worker in [first, *others]:
            for _ in range(3):
                refused = worker.send(op="call", api="openai")
                assert refused["outcome"] == "upstream.rate_limited"
                assert refused["sent"] is False
                assert refused["retry_after"] == pytest.approx(midnight - refused["at"], abs=0.3)
        assert daily_server.counts[key]["received"] == 7  # nothing sent behind the wall
        ready = max(midnight - refused["at"], 0.0) + 0.2
        import time

        time.sleep(ready)
        assert others[0].send(op="call", api="openai")["outcome"] == "ok"
        assert daily_server.counts[key] == {"received": 8, "completed": 7, "429": 1}
    finally:
        for worker in fleet:
            worker.stop()
