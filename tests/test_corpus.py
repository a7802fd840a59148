"""The shipped corpus of real provider failures (normalize_errors/corpus/).

Every line validates against the corpus's JSON Schema, ids are unique, sources are public
URLs (GitHub files pinned to a commit), and every case is run: a case outside
``known_misses.json`` must be right, a listed one must be wrong (so the list stays true).
``tests/test_corpus_sdks.py`` runs the cases again through the real SDK clients, wrapped.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from importlib import resources
from typing import Any

import jsonschema
import pytest

from normalize_errors import CODES, HarnessError, corpus
from normalize_errors._cli import main

CASES = corpus.load()
MISSES = corpus.known_misses()
SCHEMA: dict[str, Any] = json.loads(
    resources.files("normalize_errors").joinpath("corpus/schema.json").read_text("utf-8")
)
FOLDER = corpus.folder()
PINNED = re.compile(r"https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/\S+")


def lines() -> list[tuple[str, int, str]]:
    """(file name, line number, text) of every non-empty line of every corpus file."""
    found = []
    for path in sorted(FOLDER.glob("*.jsonl")):
        for number, text in enumerate(path.read_text("utf-8").splitlines(), 1):
            if text.strip():
                found.append((path.name, number, text))
    return found


def test_the_corpus_has_cases_of_every_kind() -> None:
    assert len(CASES) >= 30
    assert {c.kind for c in CASES} == set(corpus.KINDS)
    assert corpus.version() == "0.1.0"


def test_every_line_validates_against_the_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for name, number, text in lines():
        data = json.loads(text)
        errors = [e.message for e in validator.iter_errors(data)]
        assert not errors, (name, number, errors)
        assert list(data) == list(corpus.FIELDS), (name, number)


def test_the_schema_and_the_loader_agree_on_the_fields() -> None:
    assert SCHEMA["additionalProperties"] is False
    assert list(SCHEMA["properties"]) == list(corpus.FIELDS)
    assert SCHEMA["required"] == list(corpus.FIELDS)


def test_ids_are_unique_and_name_their_provider() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    for case in CASES:
        assert case.id.startswith(case.provider + "-"), case.id


def test_no_two_cases_share_a_provider_and_a_body() -> None:
    seen = {(c.provider, c.body) for c in CASES}
    assert len(seen) == len(CASES)


def test_expected_codes_are_registered() -> None:
    for case in CASES:
        assert case.expected_code in CODES, case.id
        assert all(code in CODES for code in case.also_accept), case.id
        assert case.expected_code not in case.also_accept, case.id


def test_sources_are_urls_and_github_files_are_pinned() -> None:
    for case in CASES:
        assert case.source.startswith("https://"), case.id
        if case.source.startswith("https://github.com/") and "/blob/" in case.source:
            assert PINNED.fullmatch(case.source), case.id


def test_the_loader_refuses_a_duplicate_id(tmp_path: Any) -> None:
    line = next(iter(lines()))[2]
    (tmp_path / "a.jsonl").write_text(line + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="also at"):
        corpus.load(tmp_path)


def test_the_loader_refuses_a_field_out_of_place(tmp_path: Any) -> None:
    data = json.loads(next(iter(lines()))[2])
    data["extra"] = 1
    (tmp_path / "a.jsonl").write_text(json.dumps(data) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="fields must be exactly"):
        corpus.load(tmp_path)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b"[" * 100_000, "nested too deeply"),  # past what json.loads can recurse into
        (b'{"id": "caf\xe9"}', "not UTF-8 (byte offset 11)"),  # Latin-1, as an editor may save it
    ],
)
def test_the_loader_names_the_file_and_line_of_a_line_it_cannot_read(
    tmp_path: Any, bad: bytes, reason: str
) -> None:
    """A line nested too deeply for the JSON parser, or not UTF-8, is the promised
    ``ValueError`` naming the file and line, never a bare ``RecursionError`` or
    ``UnicodeDecodeError``; the good line before it is no excuse."""
    good = next(iter(lines()))[2].encode()
    (tmp_path / "a.jsonl").write_bytes(good + b"\n\n" + bad + b"\n")
    with pytest.raises(ValueError, match=r"a\.jsonl:3: ") as caught:
        corpus.load(tmp_path)
    assert type(caught.value) is ValueError
    assert reason in str(caught.value)


def test_the_loader_counts_lines_as_a_jsonl_file_does(tmp_path: Any) -> None:
    """A JSON string may hold U+2028 and U+2029 unescaped (``ensure_ascii=False`` writes them
    so): a line ends only at a line feed, so such a case loads whole and the next line's
    number is right."""
    data = json.loads(next(iter(lines()))[2])
    data["notes"] = "a note\u2028with a line separator"
    text = json.dumps(data, ensure_ascii=False)
    assert "\u2028" in text
    broken = "{"
    (tmp_path / "a.jsonl").write_text(text + "\n" + broken + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"a\.jsonl:2: not JSON"):
        corpus.load(tmp_path)
    (tmp_path / "a.jsonl").write_text(text + "\n", encoding="utf-8")
    assert corpus.load(tmp_path)[0].notes == "a note\u2028with a line separator"


def test_known_misses_name_cases_and_give_reasons() -> None:
    ids = {c.id for c in CASES}
    for case_id, reason in MISSES.items():
        assert case_id in ids, case_id
        assert isinstance(reason, str), case_id
        assert reason.strip(), case_id


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_case(case: corpus.Case) -> None:
    """Right unless listed in known_misses.json; a listed case must really be missed."""
    result = corpus.judge(case, corpus.run(case))
    assert isinstance(result.error, HarnessError)
    if case.id in MISSES:
        assert not result.right, f"{case.id} is right now: remove it from known_misses.json"
    else:
        assert result.right, (case.expected_code, result.code, result.wrong)


def test_the_holdout_is_about_a_fifth_and_stable() -> None:
    held = [c for c in CASES if corpus.in_holdout(c.id)]
    assert 0 < len(held) < len(CASES)
    assert corpus.in_holdout("openai-context-length-4097-400") is corpus.in_holdout(
        "openai-context-length-4097-400"
    )
    names = [f"case-{n}" for n in range(5000)]
    share = sum(corpus.in_holdout(n) for n in names) / len(names)
    assert 0.17 < share < 0.23


def test_score_counts_by_kind_and_provider() -> None:
    score = corpus.score(CASES)
    assert score.total == len(CASES)
    assert score.right == sum(t.right for t in score.by_kind.values())
    assert score.right == sum(t.right for t in score.by_provider.values())
    assert {r.case.id for r in score.misses} == set(MISSES)


# --- the command line ---------------------------------------------------------------------


@pytest.mark.parametrize("split", ["all", "dev", "holdout"])
def test_the_cli_reports_the_score(split: str) -> None:
    out = io.StringIO()
    assert main(["corpus", "--split", split, "--json"], out) == 0
    data = json.loads(out.getvalue())
    chosen = [c for c in CASES if split == "all" or corpus.in_holdout(c.id) is (split == "holdout")]
    score = corpus.score(chosen)
    assert (data["right"], data["total"]) == (score.right, score.total)
    assert data["by_kind"] == score.to_dict()["by_kind"]
    assert data["by_provider"] == score.to_dict()["by_provider"]
    assert [m["id"] for m in data["misses"]] == [r.case.id for r in score.misses]


def test_the_cli_table_fits_80_columns_and_filters() -> None:
    out = io.StringIO()
    assert main(["corpus", "--kind", "http", "--provider", "openai"], out) == 0
    text = out.getvalue()
    assert all(len(line) <= 80 for line in text.splitlines()), text
    score = corpus.score([c for c in CASES if c.kind == "http" and c.provider == "openai"])
    assert f"{score.right}/{score.total}" in text.splitlines()[-1]
    assert "stream_event" not in text


def test_the_cli_lists_every_missed_case_with_what_was_wrong(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without --json the report ends with one row per missed case: its id, the expected code
    and the code it got, with the stated hint that was wrong when the code was right. The
    misses are made from shipped cases (one expects another code, one the other retryable),
    so the table does not depend on what the library gets wrong today."""
    import dataclasses

    right = [c for c in CASES if c.id not in MISSES and c.expected_code != "output.truncated"]
    wrong_code = dataclasses.replace(right[0], expected_code="output.truncated", also_accept=())
    got = corpus.run(right[1])
    wrong_hint = dataclasses.replace(right[1], expected_retryable=not got.retryable)
    monkeypatch.setattr(corpus, "load", lambda: [wrong_code, wrong_hint, right[2]])
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    assert main(["corpus"], out) == 0
    text = out.getvalue()
    assert all(len(line) <= 80 for line in text.splitlines()), text
    table = text.split("missed case")[1]
    assert wrong_code.id in table
    assert wrong_hint.id in table
    rows = " ".join(table.split())  # a long id takes a line of its own: read the words
    assert f"output.truncated {corpus.run(right[0]).code} " in rows
    assert f"{right[1].expected_code} {got.code} (wrong retryable)" in rows
    assert right[2].id not in table
    assert text.splitlines()[-1] == "corpus 0.1.0, split all: 1/3 (33%) right, 2 missed"


@pytest.mark.parametrize(
    ("case_id", "valid"),
    [
        ("openai-context-length-400", True),
        ("llama.cpp-exceed-context-size-400", True),
        ("openai", False),
        ("-openai-x", False),
        ("openai-x-", True),  # the schema allows a trailing hyphen after the slug
        ("openai--", False),
        ("OpenAI-x", False),
        ("openai-ctx_400", False),
    ],
)
def test_the_loader_checks_ids_as_the_schema_does(case_id: str, valid: bool) -> None:
    pattern = SCHEMA["properties"]["id"]["pattern"]
    assert bool(jsonschema.Draft202012Validator({"pattern": pattern}).is_valid(case_id)) is valid
    assert corpus._valid_id(case_id) is valid


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", 7),
        ("id", "OpenAI-Upper"),
        ("kind", "websocket"),
        ("status", 99),
        ("status", "429"),
        ("headers", {"Content-Type": "application/json"}),  # header names are lower case
        ("headers", {"retry-after": 30}),
        ("expected_retryable", "yes"),
        ("expected_model_recoverable", 1),
        ("expected_retry_after", True),
        ("expected_retry_after", "30"),
        ("also_accept", "upstream.timeout"),
        ("also_accept", [1]),
        ("source", "http://example.com/not-https"),
        ("notes", None),
    ],
)
def test_the_loader_names_each_malformed_field(tmp_path: Any, field: str, value: Any) -> None:
    """A case whose field breaks the schema is refused, naming its file, line and field; the
    schema refuses the same line (the loader and the schema agree)."""
    data = json.loads(next(iter(lines()))[2])
    data[field] = value
    assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(data)
    (tmp_path / "a.jsonl").write_text(json.dumps(data) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^a\.jsonl:1: malformed {field}$"):
        corpus.load(tmp_path)


def test_the_loader_refuses_a_line_that_is_no_object(tmp_path: Any) -> None:
    (tmp_path / "a.jsonl").write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^a\.jsonl:1: not a JSON object$"):
        corpus.load(tmp_path)


def test_a_wrong_model_recoverable_is_named_and_a_non_json_answer_is_read_raw() -> None:
    """``judge`` names each member that differs, ``model_recoverable`` included (no shipped
    case states one: the corpus's first case is given the answer the library does not give,
    then the one it gives); a ``response`` case whose body is no JSON (a gateway's HTML page)
    is read as the raw response it is."""
    case = CASES[0]
    err = corpus.run(case)
    assert isinstance(err.model_recoverable, bool)
    assert corpus.judge(case, err).right
    turned = dataclasses.replace(case, expected_model_recoverable=not err.model_recoverable)
    result = corpus.judge(turned, corpus.run(turned))
    assert (result.right, result.wrong) == (False, ("model_recoverable",))
    same = dataclasses.replace(case, expected_model_recoverable=err.model_recoverable)
    assert corpus.judge(same, corpus.run(same)).right
    page = next(c for c in CASES if c.kind == "http" and c.body.lstrip().startswith("<"))
    as_response = dataclasses.replace(page, kind="response")
    assert corpus.run(as_response).code == corpus.run(page).code


def test_the_cli_report_with_no_miss_has_no_table_of_misses() -> None:
    """A selection the library gets all right (Anthropic's cases, none in known_misses)
    ends with its score and ``0 missed``, and no table of missed cases."""
    assert not any(c.provider == "anthropic" for c in CASES if c.id in MISSES)
    out = io.StringIO()
    assert main(["corpus", "--provider", "anthropic"], out) == 0
    text = out.getvalue()
    total = sum(c.provider == "anthropic" for c in CASES)
    assert "missed case" not in text
    assert text.splitlines()[-1].endswith(f": {total}/{total} (100%) right, 0 missed")
