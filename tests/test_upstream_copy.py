"""Issue 39, "Speed": the safe copy runs over the vendor's values in ``upstream`` only.

``build`` passes the vendor's part of ``upstream`` (its codes, message, ids, headers, the
body's details) through the error constructor's safe copy (``_safe_copy.Batch``) and puts
the library's own members (the provider's name, a status that is a plain ``int``) in front
as they are; ``add_upstream`` copies only the members it adds. Each error comes from a
shipped cassette replayed through the real SDK.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

import pytest

from normalize_errors import HarnessError, normalize
from normalize_errors._base._safe_copy import Batch
from normalize_errors._reading._rules import Facts, add_upstream, build
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


def _vendor(provider: str, name: str) -> BaseException:
    scenario = load(shipped() / provider / f"{name}.yaml")
    needed(scenario)
    exc = run(scenario).exception
    assert exc is not None, f"{provider}/{name} raised nothing"
    return exc


@pytest.fixture
def copied(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """Every (place, value) the safe copy is given (``Batch.put``, which ``sanitize`` and
    the error's constructor call), while the test runs."""
    seen: list[tuple[Any, Any]] = []
    put = Batch.put

    def spy(self: Batch, into: Any, at: Any, value: Any, *args: Any, **kwargs: Any) -> None:
        seen.append((at, value))
        put(self, into, at, value, *args, **kwargs)

    monkeypatch.setattr(Batch, "put", spy)
    return seen


@pytest.mark.parametrize(("provider", "name"), CASSETTES)
def test_the_librarys_own_members_skip_the_copy_and_the_vendors_go_through_it(
    provider: str, name: str, copied: list[tuple[Any, Any]]
) -> None:
    exc = _vendor(provider, name)
    copied.clear()
    err = normalize(exc)
    given = [value for _, value in copied if isinstance(value, dict)]
    assert given  # the vendor's part was copied
    assert list(err.upstream)[:2] == ["provider", "status"]
    assert type(err.upstream["provider"]) is str  # the adapter's name (Azure's is "openai")
    assert type(err.upstream["status"]) is int
    for mapping in given:  # neither in the constructor's copy nor in ``add_upstream``'s
        assert "provider" not in mapping
        assert "status" not in mapping
    # Everything else in ``upstream`` came through the copy: the vendor's message among it.
    vendor = {key for mapping in given for key in mapping}
    assert set(err.upstream) - {"provider", "status"} <= vendor
    assert "message" in vendor


def _spoil(value: Any, depth: int = 0) -> None:
    """Change every dict and list inside ``value`` in place (a vendor object reused)."""
    if depth > 8:
        return
    if isinstance(value, dict):
        for key in list(value):
            item = value[key]
            if isinstance(item, (dict, list)):
                _spoil(item, depth + 1)
            else:
                value[key] = "spoiled"
        value["spoiled"] = "spoiled"
    elif isinstance(value, list):
        for item in value:
            _spoil(item, depth + 1)
        value.append("spoiled")


@pytest.mark.parametrize(("provider", "name"), CASSETTES)
def test_changing_the_vendors_body_afterwards_changes_nothing_in_upstream(
    provider: str, name: str
) -> None:
    exc = _vendor(provider, name)
    err = normalize(exc)
    before = json.dumps(err.upstream)
    spoiled = 0
    for attribute in ("body", "details", "headers"):
        found = getattr(exc, attribute, None)
        if isinstance(found, (dict, list)):
            _spoil(found)
            spoiled += 1
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is not None:
        for key in list(headers.keys()):
            headers[key] = "spoiled"
        spoiled += 1
    assert spoiled  # the test changed something the error was read from
    assert json.dumps(err.upstream) == before
    assert "spoiled" not in err.to_json()


def test_add_upstream_copies_only_what_it_adds(copied: list[tuple[Any, Any]]) -> None:
    err = normalize(_vendor("openai", "rate_limit_tpm_429"))
    held = dict(err.upstream)
    copied.clear()
    secret = "sk-proj-" + "a1B2c3D4e5F6g7H8" * 3
    add_upstream(err, {"exception": "openai.RateLimitError", "note": f"key {secret}"})
    assert [set(value) for _, value in copied] == [{"exception", "note"}]  # not what it held
    assert secret not in json.dumps(err.upstream)  # what it adds is still redacted
    assert {k: v for k, v in err.upstream.items() if k not in ("exception", "note")} == {
        k: v for k, v in held.items() if k != "exception"
    }
    assert list(err.upstream)[:2] == ["provider", "status"]


def test_a_status_that_is_no_plain_int_still_goes_through_the_copy(
    copied: list[tuple[Any, Any]],
) -> None:
    err = build("upstream.rate_limited", True, Facts(provider="openai", status=HTTPStatus(429)))
    assert isinstance(err, HarnessError)
    assert type(err.upstream["status"]) is int  # the copy made it plain
    assert list(err.upstream)[:2] == ["provider", "status"]
    vendor = next(value for _, value in copied if isinstance(value, dict))
    assert "status" in vendor
    assert "provider" not in vendor


def test_a_vendor_member_named_like_an_own_one_keeps_its_place_and_is_copied() -> None:
    secret = "sk-proj-" + "a1B2c3D4e5F6g7H8" * 3
    facts = Facts(provider="openai", status=429, extra={"provider": f"via {secret}"})
    err = build("upstream.rate_limited", True, facts)
    assert next(iter(err.upstream)) == "provider"
    assert secret not in err.upstream["provider"]
    assert err.upstream["status"] == 429
