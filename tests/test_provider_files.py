"""The provider data files (``providers/*.toml``): valid, sourced, read in the stated order.

What the library knows about each provider is data; these tests hold the data to its schema,
check that every fact names a source that exists, that the reading order is the one
``_rules.classify`` states (a ``final`` row is never reread by a family), that a provider's
rows can be switched off (``leaving_out``, the leave-one-provider-out score), and that adding
an OpenAI-compatible vendor is a data file and nothing else.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from normalize_errors import CODES, corpus, from_response
from normalize_errors._base import _provider_files
from normalize_errors._cli import main
from normalize_errors._reading._rules import Facts, Rule, classify
from normalize_errors._reading._tables import TIERS, leaving_out, load_classes, load_table
from normalize_errors._reading._wording import FAMILIES
from normalize_errors.providers import openai as openai_adapter

ROOT = Path(__file__).resolve().parent.parent
FOLDER = _provider_files.folder()
SCHEMA: dict[str, Any] = json.loads((FOLDER / "schema.json").read_text("utf-8"))
SHAPES = ("openai", "anthropic", "google", "bedrock", "cohere", "http")


def files() -> list[Path]:
    return sorted(FOLDER.glob("*.toml"))


def test_the_data_files_are_the_checkouts_providers_folder() -> None:
    assert FOLDER == ROOT / "providers"
    assert {path.stem for path in files()} >= {*SHAPES, "_families", "_stainless", "groq"}


@pytest.mark.parametrize("path", files(), ids=lambda path: path.stem)
def test_every_file_validates_against_the_schema(path: Path) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    data = tomllib.loads(path.read_text("utf-8"))
    errors = [e.message for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(data)]
    assert errors == []
    assert data["provider"] == path.stem


def test_the_schema_refuses_a_row_without_a_source_or_an_unknown_member() -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    row = {"tier": "vendor", "code": "upstream.rate_limited", "when": "x", "ids": ["x"]}
    base = {"provider": "x", "about": "x", "source": "https://example.com/"}
    assert not validator.is_valid({**base, "rows": [row]})
    assert validator.is_valid({**base, "rows": [{**row, "source": "corpus:x"}]})
    assert not validator.is_valid({**base, "rows": [{**row, "source": "corpus:x", "colour": 1}]})
    assert not validator.is_valid({**base, "rows": [{**row, "source": "corpus:x", "ids": ["X"]}]})


def _sources() -> Iterator[tuple[str, str]]:
    for path in files():
        data = tomllib.loads(path.read_text("utf-8"))
        yield path.stem, data["source"]
        for row in data.get("rows", ()):
            yield path.stem, row["source"]


def test_every_source_names_something_that_exists() -> None:
    case_ids = {case.id for case in corpus.load()}
    missing = []
    for name, source in _sources():
        if source.startswith("corpus:"):
            found = source.removeprefix("corpus:") in case_ids
        elif source.startswith("https://"):
            found = True  # not reachable from the tests; the schema checks its form
        else:
            found = (ROOT / source).exists()
        if not found:
            missing.append(f"{name}: {source}")
    assert missing == []


def test_every_code_a_file_gives_is_registered() -> None:
    given = []
    for path in files():
        data = tomllib.loads(path.read_text("utf-8"))
        given += [row["code"] for row in data.get("rows", ())]
        given += [family["code"] for family in data.get("families", ())]
        given += [a["code"] for a in data.get("classes", {}).values() if a != "read"]
    assert given
    assert set(given) <= set(CODES)


def test_a_file_read_by_an_adapter_names_one_and_is_no_adapter_itself() -> None:
    for path in files():
        data = tomllib.loads(path.read_text("utf-8"))
        if "read_by" in data:
            assert data["read_by"] in SHAPES
            assert path.stem not in SHAPES


# -- the order of the table --------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_a_joined_vendors_rows_end_their_tiers_block(shape: str) -> None:
    """The rows of a file read by ``shape`` sit after every row of its tier or an earlier one
    of the adapter's own file, and before the first row of a later tier after it."""
    table = load_table(shape)
    own = {r["when"] for r in _provider_files.read(shape)["rows"]}
    for number, row in enumerate(table):
        if row.when in own:
            continue
        rank = TIERS.index(row.tier)
        before = [TIERS.index(r.tier) for r in table.rows[:number] if r.when in own]
        after = [TIERS.index(r.tier) for r in table.rows[number + 1 :] if r.when in own]
        assert not [r for r in before if r > rank], row.when
        assert not [r for r in after if r <= rank], row.when


def test_the_openai_adapter_reads_the_compatible_vendors_rows_and_classes() -> None:
    owners = {owner for row in load_table("openai") for owner in row.owners}
    assert {"groq", "fastchat", "ollama", "xai", "llama.cpp", "openrouter"} <= owners
    classes = load_classes("openai")
    assert classes["APIConnectionError"] == ("upstream.unavailable", True)  # _stainless
    assert "GroqError" not in classes  # a Stainless base: the registry declares it
    assert openai_adapter.CLASSES["GroqError"] is None
    assert classes["DownloadError"] is not None


def _facts_for(row: Rule, message: str) -> Facts:
    """Facts that satisfy ``row``'s conditions, the message ending with ``message``."""
    words = row.words[:1]
    return Facts(
        provider="test",
        status=min(row.status) if row.status else None,
        message=" ".join((*words, message)),
        vendor_code=min(row.ids) if row.ids else None,
        more_ids=tuple(f"quota{word}" for word in row.id_words[:1]),
    )


def test_a_family_never_rereads_a_final_rows_answer() -> None:
    """Every final row of every table, on a message that holds a word of every family."""
    every_family = " ".join(family.words[0] for family in FAMILIES)
    checked = 0
    for shape in SHAPES:
        table = load_table(shape)
        for row in table:
            if not row.final:
                continue
            facts = _facts_for(row, every_family)
            assert row.matches(facts), row.when
            if table.first_match(facts) is not row:
                continue  # an earlier row decides these facts
            code, _ = classify(table, facts)
            assert code == row.code, row.when
            checked += 1
    assert checked >= 30


def test_a_non_final_rows_plain_answer_is_reread_by_its_family() -> None:
    """The same engine rereads a row that is not final: the precedence is the flag's."""
    table = load_table("openai")
    (row,) = [r for r in table if r.code == "upstream.unavailable" and r.ids]
    assert not row.final
    facts = _facts_for(row, "the model is overloaded")
    assert classify(table, facts) == ("upstream.overloaded", True)


# -- leaving a provider out ---------------------------------------------------------------------

_GROQ = (
    b'{"error": {"message": "Tool choice is none, but model called a tool",'
    b' "type": "invalid_request_error"}}'
)


def test_leaving_a_provider_out_switches_off_its_rows_and_only_there() -> None:
    assert from_response(400, {}, _GROQ, provider="openai").code == "output.unknown_tool"
    with leaving_out("groq"):
        assert from_response(400, {}, _GROQ, provider="openai").code == "upstream.invalid_request"
    with leaving_out("anthropic"):
        assert from_response(400, {}, _GROQ, provider="openai").code == "output.unknown_tool"
    assert from_response(400, {}, _GROQ, provider="openai").code == "output.unknown_tool"


def test_an_alias_leaves_its_files_rows_out() -> None:
    body = b'{"error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "refused"}}'
    assert from_response(400, {}, body, provider="google").code == "upstream.authentication_failed"
    with leaving_out("gemini"):  # google.toml's alias: the status's default reads it
        assert from_response(400, {}, body, provider="google").code == "upstream.invalid_request"


def test_the_cli_prints_the_leave_one_provider_out_score() -> None:
    out = io.StringIO()
    assert main(["corpus", "--leave-one-provider-out", "--json"], out=out) == 0
    left = json.loads(out.getvalue())
    out = io.StringIO()
    assert main(["corpus", "--json"], out=out) == 0
    whole = json.loads(out.getvalue())
    assert left["leave_one_provider_out"] is True
    assert whole["leave_one_provider_out"] is False
    assert left["total"] == whole["total"]
    assert left["by_provider"].keys() == whole["by_provider"].keys()
    assert left["right"] < whole["right"]  # the providers' own rows do read their cases
    assert 0 < left["mean_by_provider"] < whole["mean_by_provider"] <= 100
    out = io.StringIO()
    assert main(["corpus", "--leave-one-provider-out", "--split", "holdout"], out=out) == 0
    assert "leaving each provider out, mean over the" in out.getvalue()


# -- adding an OpenAI-compatible vendor is a data file ------------------------------------------

_NEW_VENDOR = """
provider = "example-vendor"
read_by = "openai"
about = "A vendor whose server answers a spent balance with code 40020 (made up for this test)."
source = "tests/test_provider_files.py"

[[rows]]
tier = "vendor"
final = true
code = "upstream.rate_limited"
retryable = false
ids = ["40020"]
when = "code `40020`: the balance is spent"
source = "tests/test_provider_files.py"
"""


def test_adding_an_openai_compatible_vendor_is_a_data_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the extending guide shows: copy nothing but the new file into the folder."""
    folder = tmp_path / "providers"
    shutil.copytree(FOLDER, folder)
    (folder / "example-vendor.toml").write_text(_NEW_VENDOR, "utf-8")
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(tomllib.loads(_NEW_VENDOR)))
    assert errors == []
    before = load_table("openai")
    assert classify(before, Facts(provider="x", status=500, vendor_code="40020")) == (
        "upstream.unavailable",
        True,
    )
    monkeypatch.setattr(_provider_files, "folder", lambda: folder)
    for cached in (_provider_files.names, _provider_files.read, _provider_files.read_by):
        cached.cache_clear()
    try:
        after = load_table("openai")
        facts = Facts(provider="x", status=500, vendor_code="40020", message="no")
        assert classify(after, facts) == ("upstream.rate_limited", False)
        assert next(r for r in after if r.ids == {"40020"}).owners == {"example-vendor"}
    finally:
        monkeypatch.undo()
        for cached in (_provider_files.names, _provider_files.read, _provider_files.read_by):
            cached.cache_clear()


def test_the_data_files_are_not_read_by_import() -> None:
    """(Not tomllib itself: under coverage, whose subprocess hook reads its configuration with
    it, a child process has it loaded before the package is.)"""
    code = (
        "import sys, normalize_errors\n"
        "assert 'normalize_errors._base._provider_files' not in sys.modules\n"
        "normalize_errors.from_response(429, {}, b'{}')\n"
        "assert 'normalize_errors._base._provider_files' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- how streams end --------------------------------------------------------------------------


def _machines() -> dict[tuple[str, str], type[Any]]:
    from normalize_errors.providers import _anthropic_stream, _bedrock_stream, _cohere_stream
    from normalize_errors.providers.google import _stream as google_stream
    from normalize_errors.providers.openai import _stream as openai_stream

    classes = [
        _anthropic_stream.MessagesState,
        _bedrock_stream.ConverseState,
        _cohere_stream.ChatStreamState,
        google_stream.GeminiState,
        openai_stream.ChatState,
        openai_stream.ResponsesState,
    ]
    return {(cls.provider, cls.api): cls for cls in classes}


def _terminal_event(api: str, name: str) -> dict[str, Any]:
    """A minimal event of type ``name`` in the shape of ``api``'s stream (constructed)."""
    if api == "converse":
        return {name: {"stopReason": "end_turn"}}
    if api == "cohere":
        return {"type": name, "finish_reason": "COMPLETE", "delta": {"finish_reason": "COMPLETE"}}
    if api == "responses":
        return {"type": name, "response": {"status": name.removeprefix("response.")}}
    return {"type": name}


def test_every_stream_a_file_states_has_its_machine_and_its_words() -> None:
    machines = _machines()
    stated = {
        (path.stem, entry["api"]): entry
        for path in files()
        for entry in tomllib.loads(path.read_text("utf-8")).get("streams", ())
    }
    assert stated.keys() == machines.keys()
    for key, entry in stated.items():
        assert machines[key].ends_with == entry["ends_with"]


def test_each_terminal_event_a_file_names_ends_its_stream() -> None:
    machines = _machines()
    checked = 0
    for path in files():
        for entry in tomllib.loads(path.read_text("utf-8")).get("streams", ()):
            for name in entry.get("terminal_events", ()):
                state = machines[(path.stem, entry["api"])]()
                converse = entry["api"] == "converse"
                ping: dict[str, Any] = {"ping": {}} if converse else {"type": "ping"}
                state.feed(ping)
                assert not state.terminal
                state.feed(_terminal_event(entry["api"], name))
                assert state.terminal, (path.stem, name)
                checked += 1
    assert checked >= 7
