"""The resilience package's remaining edges, each as a caller meets it: arguments refused
with their name, a store's view of breakers it never saw, a long fallback's attempt log kept
within its bound."""

from __future__ import annotations

import pytest

from normalize_errors import UpstreamOverloadedError
from normalize_errors.resilience import CircuitBreaker, FallbackPlan, MemoryStore, fallback
from normalize_errors.resilience._attempts import MAX_ENTRIES
from normalize_errors.resilience._common import marking
from normalize_errors.resilience._store import State
from normalize_errors.resilience.hooks import agents_retry_policy


def test_arguments_out_of_shape_are_refused() -> None:
    with pytest.raises(ValueError, match="window"):
        CircuitBreaker(window=0)
    with pytest.raises(ValueError, match="at least one target"):
        FallbackPlan([])
    with pytest.raises(ValueError, match="not both"), marking(True, True):
        pass
    with pytest.raises(ValueError, match="not both"):
        agents_retry_policy(idempotent=True, non_idempotent=True)
    plan = FallbackPlan(["a", "b"])
    with pytest.raises(TypeError, match="callables"):
        plan.call({"a": lambda: 1, "b": "not callable"})  # type: ignore[arg-type]


def test_a_memory_breaker_has_no_storage_key_and_its_store_shows_labels() -> None:
    breaker = CircuitBreaker()
    assert breaker.storage_key("k") is None
    breaker.failure("https://api.example/v1?key=sk-proj-" + "A" * 48, UpstreamOverloadedError("x"))
    store = breaker.store
    assert isinstance(store, MemoryStore)
    [label] = store.labels()
    assert "sk-proj-" + "A" * 48 not in label
    assert "api.example" in label


def test_a_store_asked_about_a_breaker_it_never_saw_says_closed() -> None:
    store = MemoryStore()
    granted, state = store.take_trial("never", 1, 30.0)
    assert (granted, state.name) == (False, "closed")
    assert store.trial_succeeded("never", 1).name == "closed"
    assert repr(State("open", 1.5, trips=2)).startswith("State('open', left=1.500, trips=2")


def test_a_long_fallback_keeps_the_first_attempt_and_the_latest() -> None:
    count = MAX_ENTRIES + 6

    def failing(n: int):  # type: ignore[no-untyped-def]
        def call() -> None:
            raise UpstreamOverloadedError(f"target {n}")

        return call

    with pytest.raises(UpstreamOverloadedError) as caught:
        fallback(*(failing(n) for n in range(count)))
    log = caught.value.problem.extensions["attempt_log"]
    assert len(log) == MAX_ENTRIES
    assert log[0]["target"] == 1
    assert log[-1]["target"] == count
    assert log[1]["target"] == count - MAX_ENTRIES + 2  # the ones between are left out
