"""Issue 23, item 1: an error is a snapshot, made whole by its constructor.

An error returned by ``normalize()`` has read everything it will ever say: a caller that
sets a member while other threads read the error for the first time keeps the value it
set, and nothing done to the vendor's exception afterwards changes what the error says.
Each test runs on an error of every adapter, from the shipped cassettes replayed through
the real SDKs.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any

import pytest

from normalize_errors import HarnessError, normalize
from normalize_errors.replay import load, run, shipped
from tests.support import needed

pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("google.genai")

CASSETTES = [
    ("openai", "rate_limit_tpm_429"),
    ("anthropic", "rate_limit_429"),
    ("google", "rate_limit_free_tier_per_minute_429"),
    ("cohere", "trial_key_rate_limit_429"),
    ("http", "azure_token_rate_limit_429"),
]
THREADS = 8
ROUNDS = 20


def _vendor(provider: str, name: str) -> BaseException:
    scenario = load(shipped() / provider / f"{name}.yaml")
    needed(scenario)
    exc = run(scenario).exception
    assert exc is not None, f"{provider}/{name} raised nothing"
    return exc


def _read_all(err: HarnessError) -> None:
    """Everything a reader may touch first: members, the text forms, the dict form."""
    for name in ("detail", "upstream", "retry_after", "limit", "retryable", "title", "code"):
        getattr(err, name)
    str(err)
    repr(err)
    err.to_dict()


@pytest.mark.parametrize(("provider", "name"), CASSETTES)
def test_values_set_while_other_threads_read_first_survive(provider: str, name: str) -> None:
    _race(_vendor(provider, name))


def _race(exc: BaseException) -> None:
    for round_ in range(ROUNDS):
        err = normalize(exc)
        failures = _read_while(err, round_)
        assert failures == []
        assert err.upstream == {"set": round_}
        assert err.detail == f"set by the caller, round {round_}"
        assert err.args == (f"set by the caller, round {round_}",)
        assert err.retry_after == 7.0 + round_
        assert err.limit == {"name": "set", "value": round_}
        assert err.to_dict()["upstream"] == {"set": round_}


def _read_while(err: HarnessError, round_: int) -> list[BaseException]:
    """Set four members of ``err`` while ``THREADS`` threads make their first reads of it."""
    go = threading.Event()
    started = threading.Barrier(THREADS + 1, timeout=60)
    failures: list[BaseException] = []

    def read() -> None:
        started.wait()
        go.wait(timeout=60)
        try:
            for _ in range(5):
                _read_all(err)
        except BaseException as caught:  # pragma: no cover - reported by the caller
            failures.append(caught)

    readers = [threading.Thread(target=read) for _ in range(THREADS)]
    for thread in readers:
        thread.start()
    # Every reader is running before threads switch every few bytecodes (a thread's start
    # installs a tracer's hook, such as coverage's, which CPython 3.11 refuses while another
    # thread installs one: a switch that fast met that race, not the error's).
    started.wait()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads switch every few bytecodes: the race is met
    try:
        go.set()  # the writer goes with the readers' first reads
        err.upstream = {"set": round_}
        err.detail = f"set by the caller, round {round_}"
        err.retry_after = 7.0 + round_
        err.limit = {"name": "set", "value": round_}
        for thread in readers:
            thread.join(timeout=120)
    finally:
        sys.setswitchinterval(interval)
    assert not any(thread.is_alive() for thread in readers), "a reader is stuck"
    return failures


def _spoil(exc: BaseException) -> None:
    """Change everything of the vendor's exception an error could have read late."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is not None:
        try:
            for key in list(headers.keys()):
                headers[key] = "spoiled"
            headers["retry-after"] = "9999"
        except TypeError:  # an immutable headers object: nothing can change there
            pass
    for name in ("body", "message", "code", "status", "details", "type", "request_id"):
        if name in vars(exc):
            with contextlib.suppress(AttributeError, TypeError):
                setattr(exc, name, "spoiled" if name != "body" else {"spoiled": True})
    exc.args = ("spoiled",)


@pytest.mark.parametrize(("provider", "name"), CASSETTES)
def test_what_the_vendor_exception_does_afterwards_changes_nothing(
    provider: str, name: str
) -> None:
    exc = _vendor(provider, name)
    read_at_once, untouched = normalize(exc), normalize(exc)
    before = read_at_once.to_dict()
    text = str(read_at_once), repr(read_at_once)
    _spoil(exc)  # before anything of ``untouched`` is read
    assert untouched.to_dict() == before
    assert (str(untouched), repr(untouched)) == text
    assert "spoiled" not in untouched.to_json()
    assert untouched.__cause__ is exc  # the one vendor object it holds


def _objects(value: Any, depth: int = 0) -> list[Any]:
    """Every object reachable from ``value`` through dicts, lists and tuples."""
    found = [value]
    if depth < 8 and isinstance(value, dict):
        for item in value.values():
            found.extend(_objects(item, depth + 1))
    elif depth < 8 and isinstance(value, (list, tuple)):
        for item in value:
            found.extend(_objects(item, depth + 1))
    return found


@pytest.mark.parametrize(("provider", "name"), CASSETTES)
def test_an_error_holds_no_vendor_object_but_its_cause(provider: str, name: str) -> None:
    err = normalize(_vendor(provider, name))
    held = [obj for value in vars(err).values() for obj in _objects(value)]
    vendor = [
        obj
        for obj in held
        if type(obj).__module__.partition(".")[0]
        in {"openai", "anthropic", "google", "cohere", "httpx", "httpx2", "botocore"}
    ]
    assert vendor == []
