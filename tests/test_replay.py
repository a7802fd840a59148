"""``normalize_errors.replay``: finding, loading and replaying cassettes, and comparing outcomes.

What a user of ``replay`` relies on when a cassette is wrong or a replay disagrees: errors
that name the file and what is missing, a failing block when interactions stay unplayed,
and mismatches that say which member differs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from normalize_errors import class_for_code
from normalize_errors.replay import (
    Outcome,
    _compare,
    catalog,
    find,
    load,
    run,
    shipped,
    use_cassette,
)

from .support import cassette


def test_find_names_a_missing_file_and_suggests_close_shipped_names(tmp_path: Path) -> None:
    """A path that does not exist is named; a misspelt shipped name gets suggestions."""
    missing = tmp_path / "nope.yaml"
    with pytest.raises(FileNotFoundError, match="no cassette file"):
        find(missing)
    with pytest.raises(FileNotFoundError, match=r"did you mean anthropic/overloaded_529"):
        find("anthropic/overloaded_592")
    assert find("anthropic/overloaded_529") == shipped() / "anthropic" / "overloaded_529.yaml"


def test_load_refuses_a_file_that_is_no_cassette(tmp_path: Path) -> None:
    """No metadata, or metadata without ``provider`` or ``call``: a ValueError naming it."""
    bare = tmp_path / "bare.yaml"
    bare.write_text("interactions: []\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no metadata"):
        load(bare)
    partial = tmp_path / "partial.yaml"
    partial.write_text("metadata: {provider: openai}\ninteractions: []\n", encoding="utf-8")
    with pytest.raises(ValueError, match="metadata has no 'call'"):
        load(partial)
    assert repr(load(shipped() / "openai" / "overloaded_503.yaml")) == (
        "Scenario(openai/overloaded_503)"
    )


def test_catalog_skips_yaml_files_that_are_no_cassettes(tmp_path: Path) -> None:
    """A folder of the user's cassettes may hold other YAML: the catalog lists only cassettes."""
    (tmp_path / "other.yaml").write_text("just: config\n", encoding="utf-8")
    source = shipped() / "openai" / "overloaded_503.yaml"
    (tmp_path / "mine.yaml").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    rows = catalog([tmp_path])
    assert [row["name"] for row in rows] == ["openai/overloaded_503"]
    assert rows[0]["status"] == 503
    assert rows[0]["code"] == "upstream.overloaded"


def test_use_cassette_fails_a_block_that_leaves_interactions_unplayed() -> None:
    """Unless ``allow_unplayed``, a recorded exchange the block never made is an error."""
    path = shipped() / "openai" / "overloaded_503.yaml"
    with pytest.raises(AssertionError, match=r"1 interaction\(s\) unplayed"), use_cassette(path):
        pass
    with use_cassette(path, allow_unplayed=True) as played:
        assert played.play_count == 0


def test_the_signal_of_each_kind_of_outcome() -> None:
    """What the replay printed as the vendor's signal: class, stop reason, stream, tool, status."""
    scenario = load(shipped() / "openai" / "overloaded_503.yaml")
    raised = run(scenario)
    assert raised.signal == type(raised.exception).__name__ == "InternalServerError"
    truncated = run(load(shipped() / "openai" / "finish_length_200.yaml"))
    assert truncated.signal == "stop_reason=length"
    streamed = class_for_code("upstream.overloaded")("x", upstream={"in_stream": True})
    assert Outcome(scenario, "sync", error=streamed).signal == "stream error event"
    tool = class_for_code("output.unknown_tool")("x", location={"tool_name": "get_time"})
    assert Outcome(scenario, "sync", error=tool).signal == "tool call get_time"
    response = type("Response", (), {"status_code": 204})()
    assert Outcome(scenario, "sync", result=response).signal == "HTTP 204"
    assert Outcome(scenario, "sync", result=object()).signal == "result"
    plain = class_for_code("upstream.invalid_response")("a success that reports no error")
    assert Outcome(scenario, "sync", result=response, error=plain).signal == "HTTP 204"


def test_missing_sdk_names_the_sdk_a_scenario_needs_only_when_it_is_absent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Cohere cassette needs the cohere SDK: None while it is installed, its name when it
    is not, or when looking it up fails because a parent package is missing; a cassette of
    the ``replay`` extra's own SDKs never names one."""
    import importlib.util

    from normalize_errors.replay import _missing_sdk

    scenario = load(shipped() / "cohere" / "billing_limit_402.yaml")
    installed = importlib.util.find_spec("cohere") is not None  # in the newest environments
    assert _missing_sdk(scenario) == (None if installed else "cohere")
    real = importlib.util.find_spec

    def absent(name: str, *args: object) -> object:
        return None if name == "cohere" else real(name)

    monkeypatch.setattr(importlib.util, "find_spec", absent)
    assert _missing_sdk(scenario) == "cohere"

    def parent_missing(name: str, *args: object) -> object:
        if name == "cohere":
            raise ModuleNotFoundError("No module named 'cohere'")
        return real(name)

    monkeypatch.setattr(importlib.util, "find_spec", parent_missing)
    assert _missing_sdk(scenario) == "cohere"
    assert _missing_sdk(load(shipped() / "openai" / "overloaded_503.yaml")) is None


def test_compare_names_each_member_that_differs() -> None:
    """Code, an upstream member and ``retry_after`` (to a microsecond); notes are ignored."""
    err = class_for_code("upstream.rate_limited")(
        "slow down", retry_after=20.0, upstream={"provider": "openai", "code": "rate_limit"}
    )
    assert _compare({"code": "upstream.rate_limited", "retry_after": 20, "note": "x"}, err) == []
    assert _compare({"retry_after": 20.0000001}, err) == []
    assert _compare({"retry_after": 21}, err) == ["retry_after: expected 21, got 20.0"]
    assert _compare({"upstream": {"code": "quota"}}, err) == [
        "upstream.code: expected 'quota', got 'rate_limit'"
    ]
    assert _compare({"code": "upstream.overloaded"}, err) == [
        "code: expected 'upstream.overloaded', got 'upstream.rate_limited'"
    ]
    assert _compare({"code": "upstream.overloaded"}, None) == ["no harness error"]
    assert _compare({}, None) == []


def test_the_shared_cassette_reader_agrees_with_replay() -> None:
    """tests/support's reader and ``replay.load`` read the same metadata."""
    recorded = cassette("google/overloaded_503")
    assert recorded.expect == load(recorded.path).expect
    assert recorded.provider == load(recorded.path).provider == "google"
