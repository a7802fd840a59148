"""The shared machinery of the rule tables: the fast pre-check and the wording parsers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalize_errors._rules import Rule, context_limit, retry_hint, rule
from normalize_errors.providers import NAMES, adapter

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
    """Any text a row's pattern matches contains one of the row's words, which run first."""
    text = data.draw(st.from_regex(pattern, fullmatch=False).map(str.lower))
    row = next(
        r for n in NAMES for r in adapter(n).TABLE if r.message and r.message.pattern == pattern
    )
    assert isinstance(row, Rule)
    if row.message is not None and row.message.search(text):
        assert any(word in text for word in words), (pattern, text)


def test_words_and_patterns_must_be_lower_case() -> None:
    """Rows match the lower-cased message, so an upper-case word could never match."""
    with pytest.raises(ValueError, match="lower-cased"):
        rule("upstream.overloaded", "x", words=("Overloaded",))
    with pytest.raises(ValueError, match="lower-cased"):
        rule("upstream.overloaded", "x", message=r"Overloaded")
    assert rule("upstream.overloaded", "x", words=("overloaded",)).words == ("overloaded",)


@pytest.mark.parametrize(
    ("message", "seconds"),
    [
        ("Please try again in 26.604s. Visit https://platform.openai.com", 26.604),
        ("Please try again in 976ms.", 0.976),
        ("Please retry after 6 seconds.", 6.0),
        ("Rate limit is exceeded. Try again in 50 seconds.", 50.0),
        ("Please retry in 38.96s.", 38.96),
        ("try again in 2 minutes", 120.0),
        ("Please try again later.", None),
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
    ],
)
def test_context_limits_in_messages(message: str, limit: dict[str, int] | None) -> None:
    """The limit a context-window message states."""
    assert context_limit(message) == limit
