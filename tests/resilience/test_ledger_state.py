"""The ledger's state in one process (``LedgerMemory``, ``Bucket``, ``WallNote``) on its own:
what a budget learns from headers heard again, a settlement, walls that overlap, a store that
is full, and a stored wall's text read back as untrusted input."""

from __future__ import annotations

import json

import pytest

from normalize_errors import Quota, UpstreamRateLimitedError
from normalize_errors.resilience._ledger_state import (
    ALL,
    Bucket,
    Decision,
    LedgerMemory,
    WallNote,
    longer,
)

from .helpers import Clock

NOTE = WallNote("upstream.rate_limited", 429, "rate_limit_exceeded", True, Quota(scope="tokens"))


def test_a_budget_heard_again_learns_its_refill_from_what_was_spent() -> None:
    bucket = Bucket.learned(100, 100, None, 0.0)  # whole: the default, a minute's refill
    assert bucket.rate == pytest.approx(100 / 60)
    bucket.observe(100, 40, 30.0, 1.0)  # 60 spent, whole again in 30 s: 2 per second
    assert (bucket.level, bucket.basis) == (40, 60)
    assert bucket.rate == pytest.approx(2.0)
    bucket.observe(100, 80, 45.0, 2.0)  # under half the spend the rate was read from: kept
    assert bucket.rate == pytest.approx(2.0)
    bucket.observe(200, 150, 10.0, 3.0)  # a new limit: read again
    assert bucket.limit == 200
    assert bucket.rate == pytest.approx(5.0)
    assert repr(bucket) == "Bucket(limit=200, level=44, rate=5/s)"  # 42 + 2 refilled


def test_a_settlement_gives_back_what_was_not_used_and_learns_the_share() -> None:
    bucket = Bucket(1000, 500, 1.0, 0.0)
    bucket.settle(reserved=300, used=100, estimate=300, at=0.0)
    assert bucket.level == 700
    assert bucket.share == pytest.approx(0.8 + 0.2 / 3)
    bucket.settle(reserved=0, used=50, estimate=0, at=0.0)  # no estimate: the share stays
    assert bucket.level == 650
    assert bucket.share == pytest.approx(0.8 + 0.2 / 3)


def test_wall_text_read_back_is_untrusted() -> None:
    text = NOTE.to_text()
    again = WallNote.from_text(text.encode())
    assert again is not None
    assert (again.code, again.status, again.vendor_code, again.retryable, again.quota) == (
        "upstream.rate_limited", 429, "rate_limit_exceeded", True, Quota(scope="tokens"),
    )  # fmt: skip
    assert again.error_class() is UpstreamRateLimitedError
    for junk in (None, 7, "x" * 3000, "only\tthree\tparts", "Not A Code\t429\t\t1\t"):
        assert WallNote.from_text(junk) is None
    # a quota out of shape, or no object, is no quota; the rest stands
    for quota in ('{"scope": 5}', "[1, 2]", "{"):
        found = WallNote.from_text(f"upstream.rate_limited\t4290\t\t0\t{quota}")
        assert found is not None
        assert (found.status, found.quota, found.retryable) == (None, None, False)
    assert json.loads(NOTE.to_text().split("\t")[4]) == {"billing": False, "scope": "tokens"}


def test_decisions_show_what_they_are() -> None:
    assert repr(Decision(True)) == "Decision(granted)"
    assert repr(Decision(False, 3.0, "budget", scope="tokens")) == (
        "Decision(budget, wait=3.0, scope=tokens)"
    )
    assert longer(None, 5.0)
    assert longer(6.0, 5.0)
    assert not longer(4.0, 5.0)
    assert not longer(None, None)


def test_the_longest_wall_of_a_model_and_its_account_blocks() -> None:
    clock = Clock(0.0)
    memory = LedgerMemory(clock=clock)
    memory.record("k", "m", 10.0, NOTE, "label")
    memory.record("k", ALL, 60.0, NOTE, "label")
    memory.record("k", "m", 5.0, NOTE, "label")  # shorter than the wall there: it stands
    decision = memory.admit("k", "m", None)
    assert (decision.granted, decision.reason, decision.wait) == (False, "wall", 60.0)
    memory.record("k", ALL, None, NOTE, "label")  # until cleared
    memory.record("k", ALL, 600.0, NOTE, "label")  # a timed one does not replace it
    assert memory.admit("k", "m", None).wait is None
    memory.clear("k", ALL)
    assert memory.admit("k", "m", None).wait == 10.0
    memory.clear("k", "m")
    assert memory.admit("k", "m", None).granted
    memory.clear("nobody", None)  # an account never seen: nothing to do
    memory.forget("k")
    assert "k" not in memory._accounts


def test_a_full_store_forgets_an_account_without_a_wall_first() -> None:
    memory = LedgerMemory(max_keys=2, clock=Clock(0.0))
    memory.record("walled", ALL, 60.0, NOTE, "a")
    memory.apply("plain", [("observe", "m", "requests", 10, 5, 30.0, 0.0)])
    memory.apply("new", [])
    assert list(memory._accounts) == ["walled", "new"]
    memory.record("new", ALL, 60.0, NOTE, "b")
    # every other account walled: the least recently used goes, never the one being walled
    memory.record("newest", ALL, 60.0, NOTE, "c")
    assert list(memory._accounts) == ["new", "newest"]
    assert not memory.admit("newest", "m", None).granted


def test_operations_on_budgets_never_learned_do_nothing() -> None:
    memory = LedgerMemory(clock=Clock(0.0))
    memory.apply("k", [("charge", "m", "tokens", 5.0), ("settle", "m", "tokens", 5, 1, 5)])
    assert memory._accounts["k"].budgets == {}


def test_a_reservation_never_takes_a_budget_below_minus_its_limit() -> None:
    """Room within the patience is reserved for then, unless taking it would put the budget
    below minus its limit: then the call is refused with the wait."""
    memory = LedgerMemory(clock=Clock(0.0))
    memory.apply("k", [("observe", "m", "tokens", 100, 0, 100.0, 0.0)])  # 1 token a second
    first = memory.admit("k", "m", {"tokens": 100.0}, patience=1000.0)
    assert first.granted
    assert first.wait == pytest.approx(100.0)
    second = memory.admit("k", "m", {"tokens": 100.0}, patience=1000.0)
    assert (second.granted, second.reason, second.scope) == (False, "budget", "tokens")


def test_a_failed_call_gives_back_and_a_success_heard_again_updates_the_budget() -> None:
    clock = Clock(0.0)
    memory = LedgerMemory(clock=clock)
    memory.apply("k", [("observe", "m", "tokens", 1000, 1000, None, 0.0)])
    granted = memory.admit("k", "m", {"tokens": 400.0})
    assert granted.reserved == {"tokens": 400.0}
    memory.apply("k", [("charge", "m", "tokens", -400.0)])  # the call failed: given back
    bucket = memory._accounts["k"].budgets[("m", "tokens")]
    assert bucket.level == 1000
    memory.apply("k", [("observe", "m", "tokens", 1000, 100, 30.0, 0.0)])  # heard again
    assert bucket.level == 100
    assert bucket.rate == pytest.approx(30.0)
