"""Every shipped cassette replays offline through the real SDK client, sync and async.

Each cassette's ``metadata.expect`` says what harness error the recorded failure must give
(code, retryable, retry_after, advice, upstream members, ...); these tests replay it and
compare member by member, and check that every cassette names its public source.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from normalize_errors import HarnessError
from normalize_errors._redact import KEY_SHAPES
from normalize_errors.replay import cassette_paths, load, run

from ..support import needed

CASSETTES = cassette_paths()
IDS = [f"{p.parent.name}/{p.stem}" for p in CASSETTES]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_cassette_gives_its_expected_harness_error(path: object, mode: str) -> None:
    """The recorded failure, replayed through the real client, gives the expected error."""
    scenario = load(path)  # type: ignore[arg-type]
    needed(scenario)
    outcome = run(scenario, mode=mode)
    assert outcome.error is not None, f"no harness error (result: {outcome.result!r:.200})"
    assert isinstance(outcome.error, HarnessError)
    assert outcome.mismatches() == []
    assert outcome.error.upstream.get("provider") == scenario.expect.get("upstream", {}).get(
        "provider", outcome.error.upstream.get("provider")
    )
    if outcome.exception is not None:
        assert outcome.error.__cause__ is outcome.exception
    assert outcome.error.to_dict()["code"] == scenario.expect["code"]


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
    text = path.read_text(encoding="utf-8")
    assert re.search(KEY_SHAPES, text) is None
    for interaction in yaml.safe_load(text)["interactions"]:
        for part in ("request", "response"):
            names = {name.lower() for name in interaction[part]["headers"]}
            assert names.isdisjoint(SECRET_HEADERS), (part, names & SECRET_HEADERS)
