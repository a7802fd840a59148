"""Every shipped cassette replays offline through the real SDK client, sync and async.

Each cassette's ``metadata.expect`` says what harness error the recorded failure must give
(code, retryable, retry_after, advice, upstream members, ...); these tests replay it and
compare member by member, and check that every cassette names its public source.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from normalize_errors import class_for_code
from normalize_errors._base._redact import KEY_SHAPES
from normalize_errors.providers import NAMES
from normalize_errors.replay import load, run

from ..support import cassette, cassettes, needed, valid

CASSETTES = [item.path for item in cassettes()]
IDS = [f"{p.parent.name}/{p.stem}" for p in CASSETTES]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_cassette_gives_its_expected_harness_error(path: object, mode: str) -> None:
    """The recorded failure, replayed through the real client, gives the expected error."""
    scenario = load(path)  # type: ignore[arg-type]
    needed(scenario)
    outcome = run(scenario, mode=mode)
    assert outcome.error is not None, f"no harness error (result: {outcome.result!r:.200})"
    err = valid(outcome.error)  # schema-valid, strict JSON, no last-resort answer
    assert outcome.mismatches() == []
    # `except <the code's class>` catches it (mismatches() compares the code string only)
    assert isinstance(err, class_for_code(scenario.expect["code"]))
    provider = err.upstream.get("provider")
    if scenario.provider == "http":
        # a gateway's or compatible server's body is read by the adapter of its shape
        assert provider in NAMES
    else:
        # the SDK's own adapter read it, whether or not `expect` names the provider; or the
        # adapter of the error its body wraps as text (Gemini's OpenAI-compatible endpoint),
        # which `expect` names
        assert provider == scenario.expect.get("upstream", {}).get("provider", scenario.provider)
    if outcome.exception is not None:
        assert err.__cause__ is outcome.exception


@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_cassette_names_its_public_source(path: object) -> None:
    """Every cassette says where its response came from and what was constructed."""
    scenario = load(path)  # type: ignore[arg-type]
    source = scenario.source
    assert source.get("url", "").startswith("http"), source
    if source.get("kind") != "live":
        assert "verbatim" in source
        assert "constructed" in source
    assert {"code", "retryable", "advice"} <= set(scenario.expect)


SECRET_HEADERS = {
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "cookie",
    "set-cookie",
}


@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_cassette_holds_no_credential(path: Path) -> None:
    """No key-shaped text anywhere, no credential header in a request or response."""
    assert re.search(KEY_SHAPES, path.read_text(encoding="utf-8")) is None
    for interaction in cassette(path).interactions:
        for part in ("request", "response"):
            names = {name.lower() for name in interaction[part]["headers"]}
            assert names.isdisjoint(SECRET_HEADERS), (part, names & SECRET_HEADERS)
