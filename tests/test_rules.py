"""The shared machinery of the rule tables: words before patterns, and the wording parsers."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from normalize_errors._base._http_wire import lower_headers
from normalize_errors._reading._rules import Facts, context_limit, retry_hint, rule
from normalize_errors.providers import NAMES
from normalize_errors.providers._routing import adapter

GUARDED = sorted(
    {
        (row.message.pattern, row.words)
        for name in NAMES
        for row in adapter(name).TABLE
        if row.message is not None and row.words
    }
)


@pytest.mark.parametrize(("pattern", "words"), GUARDED, ids=[p for p, _ in GUARDED])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_rows_words_never_hide_a_match_of_its_pattern(
    pattern: str, words: tuple[str, ...], data: st.DataObject
) -> None:
    """Any text a row's pattern matches contains one of the row's words, which run first.

    Texts are drawn from the pattern and lower-cased (rows see the lowered message); one
    that no longer matches after lowering is discarded (``assume``) rather than passing
    without a check, as it used to.
    """
    compiled = re.compile(pattern)
    text = data.draw(st.from_regex(pattern, fullmatch=False).map(str.lower))
    assume(compiled.search(text) is not None)
    assert any(word in text for word in words), (pattern, text)


def test_words_and_patterns_must_be_lower_case() -> None:
    """Rows match the lower-cased message: upper-case words are refused, and a lower-case
    row matches a message whatever its case."""
    with pytest.raises(ValueError, match="lower-cased"):
        rule("upstream.overloaded", "x", words=("Overloaded",))
    with pytest.raises(ValueError, match="lower-cased"):
        rule("upstream.overloaded", "x", message=r"Overloaded")
    row = rule("upstream.overloaded", "x", words=("overloaded",))
    assert row.matches(Facts(provider="openai", message="Model OVERLOADED, retry"))
    assert not row.matches(Facts(provider="openai", message="Model busy"))
    counted = rule("context.window_exceeded", "x", words=("count",), message=r"count \(\d+\)")
    assert counted.matches(Facts(provider="openai", message="Token COUNT (12) exceeds"))
    assert not counted.matches(
        Facts(provider="openai", message="Token count exceeds")
    )  # words, no pattern


@pytest.mark.parametrize(
    ("message", "seconds"),
    [
        ("Please try again in 26.604s. Visit https://platform.openai.com", 26.604),
        ("Please try again in 976ms.", 0.976),
        ("Please retry after 6 seconds.", 6.0),
        ("Rate limit is exceeded. Try again in 50 seconds.", 50.0),
        ("Please retry in 38.96s.", 38.96),
        ("Please retry in 38.962214405s.", 38.962214405),  # Gemini states nanoseconds
        ("try again in 2 minutes", 120.0),
        ("Please try again later.", None),
        # an anchor with no wait after it, then one with a wait: the second is read
        ("Try again in a moment; the server asks to retry after 7 seconds.", 7.0),
        ("Please retry after the maintenance window.", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_hints_in_messages(message: str | None, seconds: float | None) -> None:
    """The waits OpenAI, Groq, Azure and Gemini write into messages."""
    assert retry_hint(message) == seconds


@pytest.mark.parametrize(
    ("message", "limit"),
    [
        (
            "prompt is too long: 208310 tokens > 200000 maximum",
            {"name": "context_tokens", "value": 200000, "observed": 208310},
        ),
        (
            "The input token count (3475108) exceeds the maximum number of tokens allowed "
            "(1048576).",
            {"name": "context_tokens", "value": 1048576, "observed": 3475108},
        ),
        (
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 8227 tokens.",
            {"name": "context_tokens", "value": 8192, "observed": 8227},
        ),
        ("nothing about limits", None),
        # a count longer than 12 digits: no number is taken from its tail
        ("prompt is too long: 12345678901234567 tokens > 200000 maximum", None),
    ],
)
def test_context_limits_in_messages(message: str, limit: dict[str, int] | None) -> None:
    """The limit a context-window message states."""
    assert context_limit(message) == limit


def test_an_error_is_built_from_its_facts_at_once_and_keeps_none_of_them() -> None:
    """Every member is read when the error is made; changing the facts afterwards (or the
    vendor objects they came from) changes nothing in the error."""
    from normalize_errors._reading._rules import build

    headers = {"Retry-After": "7", "x-request-id": "req_1"}
    lowered = lower_headers(headers)
    extra = {"retry_delay": "26s", "domain": "googleapis.com"}
    facts = Facts(
        provider="google",
        status=429,
        headers=lowered,
        message="Quota exceeded for metric: generate_content_free_tier_requests, limit: 10",
        vendor_code="RESOURCE_EXHAUSTED",
        extra=extra,
    )
    err = build("upstream.rate_limited", True, facts)
    assert err.retry_after == 26.0  # the body's own wait wins over the header
    assert err.upstream["domain"] == "googleapis.com"
    assert err.upstream["headers"]["x-request-id"] == "req_1"
    assert err.detail is not None
    assert err.detail.startswith("Quota exceeded")
    before = err.to_dict()
    headers["x-request-id"] = "req_2"
    facts.message = "changed"  # nothing changes facts once made; were it done, the error
    lowered["x-request-id"] = "req_3"  # is a snapshot all the same
    extra["domain"] = "changed.example"
    assert err.to_dict() == before
    assert not any(value is facts for value in vars(err).values())


def test_offered_tools_of_every_shape_and_what_is_no_collection() -> None:
    """Names, OpenAI and Anthropic specs and Gemini declarations give the offered names; a
    declaration without a name adds none; something that is no collection offers nothing
    to check against (None, not an empty set)."""
    from normalize_errors._reading._rules import offered_names

    tools = [
        "lookup",
        {"type": "function", "function": {"name": "get_time", "parameters": {}}},
        {"name": "search", "input_schema": {}},
        {"function_declarations": [{"name": "get_weather"}, {"description": "no name"}]},
    ]
    assert offered_names(tools) == frozenset({"lookup", "get_time", "search", "get_weather"})
    assert offered_names(5) is None
    assert offered_names(None) is None


def test_a_table_is_indexed_when_it_is_made_and_nothing_is_kept_per_failure() -> None:
    """Issue 23, item 2: a table builds its index once, when it is made; no index is kept by
    ``id()`` and no answer per vendor id: hundreds of vendor codes that never repeat, and
    rules added again and again, leave nothing behind, and every answer is right."""
    import json

    from normalize_errors import add_rules, from_response
    from normalize_errors._reading import _readers, _rules
    from normalize_errors.providers import openai as openai_adapter

    assert not hasattr(_rules, "_INDEXES")
    assert not hasattr(_rules, "_IDS")
    table = openai_adapter.TABLE
    assert isinstance(table, _rules.Table)
    assert list(table) == list(table.rows)
    assert len(table) == len(table.rows)
    assert repr(table) == f"Table({len(table.rows)} rows)"  # its size, none of its rows
    for n in range(600):
        body = json.dumps({"error": {"message": "bad", "code": f"made_up_{n}"}})
        err = from_response(400, {}, body, provider="openai")
        assert err.code == "upstream.invalid_request"
    assert not hasattr(table, "__dict__")
    assert set(table.__slots__) == {"_by_id", "_by_status", "_none", "rows"}
    try:
        for n in range(70):
            add_rules("openai", rule("upstream.overloaded", f"row {n}", ids=(f"busy_{n}",)))
            body = json.dumps({"error": {"message": "x", "code": f"busy_{n}"}})
            assert from_response(400, {}, body, provider="openai").code == "upstream.overloaded"
        assert len(_readers._RULES["openai"]) == 70
    finally:
        _readers._RULES.clear()
    assert from_response(400, {}, body, provider="openai").code == "upstream.invalid_request"


def test_a_table_tries_the_rows_a_status_and_ids_can_select_in_table_order() -> None:
    from normalize_errors._reading._rules import Facts, Table

    by_id = rule("upstream.overloaded", "an id", ids=("busy",))
    by_status = rule("upstream.rate_limited", "a status", status=(429,))
    anywhere = rule("context.window_exceeded", "words", words=("too long",))
    table = Table(by_id, by_status, anywhere)
    assert table.candidates(429, frozenset()) == (by_status, anywhere)
    assert table.candidates(None, frozenset({"busy"})) == (by_id, anywhere)
    assert table.candidates(429, frozenset({"busy"})) == (by_id, by_status, anywhere)
    assert table.candidates(500, frozenset({"other"})) == (anywhere,)
    facts = Facts(provider="openai", status=429, headers={}, message="the prompt is too long")
    assert table.first_match(facts) is by_status
    facts = Facts(provider="openai", status=400, headers={}, message="the prompt is too long")
    assert table.first_match(facts) is anywhere


def test_one_usage_reader_reads_every_providers_token_counts() -> None:
    """Issue 23, item 3: each provider declares where its counts are (``USAGE``); one reader
    reads them all: spellings, a nested count, floats that are whole numbers."""
    from normalize_errors._reading._rules import read_usage
    from normalize_errors.providers import cohere
    from normalize_errors.providers.google import _results as google
    from normalize_errors.providers.openai import _results as openai

    chat = {
        "usage": {
            "prompt_tokens": 12,
            "completion_tokens": 30,
            "completion_tokens_details": {"reasoning_tokens": 7},
        }
    }
    assert read_usage(chat, openai.USAGE) == {
        "prompt_tokens": 12,
        "completion_tokens": 30,
        "reasoning_tokens": 7,
    }
    gemini = {
        "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": "9", "thoughtsTokenCount": True}
    }
    assert read_usage(gemini, google.USAGE) == {"prompt_token_count": 5, "total_token_count": 9}
    billed = {"usage": {"billed_units": {"input_tokens": 71.0, "output_tokens": 2.5}}}
    assert read_usage(billed, cohere._USAGE) == {"input_tokens": 71}
    assert read_usage(None, openai.USAGE) == {}
    assert read_usage({"usage": "not an object"}, openai.USAGE) == {}
