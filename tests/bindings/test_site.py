"""Site errors (Agent Index "Agent errors" 0.1): every code and retry word, and the advice.

The bodies follow the vocabulary's own example and shape; they are constructed.
"""

from __future__ import annotations

from typing import Any

import pytest

from normalize_errors import HarnessError, from_response
from normalize_errors.bindings import site
from normalize_errors.bindings.site import from_site_error

# site code -> (status, retry word, harness code, retryable, advice), from the vocabulary.
ROWS: dict[str, tuple[int, str, str, bool, str]] = {
    "invalid_input": (400, "fix_input", "upstream.invalid_request", False, "fix"),
    "missing_field": (400, "fix_input", "upstream.invalid_request", False, "fix"),
    "not_found": (404, "no", "upstream.invalid_request", False, "fix"),
    "not_allowed": (403, "no", "policy.guardrail_triggered", False, "human"),
    "conflict": (409, "refetch", "upstream.invalid_request", False, "feedback"),
    "out_of_stock": (409, "no", "upstream.invalid_request", False, "fix"),
    "auth_required": (401, "get_grant", "upstream.authentication_failed", False, "credentials"),
    "scope_missing": (403, "get_grant", "upstream.authentication_failed", False, "credentials"),
    "payment_required": (402, "pay", "upstream.rate_limited", False, "human"),
    "payment_declined": (402, "ask_human", "upstream.rate_limited", False, "human"),
    "rate_limited": (429, "after_delay", "upstream.rate_limited", True, "retry"),
    "temporarily_unavailable": (503, "after_delay", "upstream.unavailable", True, "retry"),
    "needs_human": (403, "ask_human", "policy.guardrail_triggered", False, "human"),
    "internal": (500, "once", "upstream.unavailable", True, "retry"),
}
# retry word -> (harness code, advice) for a code the vocabulary does not list.
WORDS: dict[str, tuple[str, str]] = {
    "fix_input": ("upstream.invalid_request", "fix"),
    "no": ("upstream.invalid_request", "fix"),
    "refetch": ("upstream.invalid_request", "feedback"),
    "get_grant": ("upstream.authentication_failed", "credentials"),
    "pay": ("upstream.rate_limited", "human"),
    "ask_human": ("policy.guardrail_triggered", "human"),
    "after_delay": ("upstream.rate_limited", "retry"),
    "once": ("upstream.unavailable", "retry"),
}


def body(code: str, retry: str, **more: Any) -> dict[str, Any]:
    """A site error body."""
    error = {"code": code, "message": "It failed", "field": None, "retry_after": None}
    return {"error": {**error, "retry": retry, **more}}


def test_the_tables_cover_the_vocabulary() -> None:
    """Fourteen codes, eight retry words, one advice per word."""
    assert set(site.CODES) == set(ROWS)
    assert set(site.RETRY_WORDS) == set(WORDS) == set(site.ADVICE)
    assert {word: advice for word, (_, advice) in WORDS.items()} == site.ADVICE


@pytest.mark.parametrize(("name", "row"), list(ROWS.items()))
def test_every_code_reads_as_its_row(name: str, row: tuple[int, str, str, bool, str]) -> None:
    """Direct, and through from_response (recognised by its retry word)."""
    status, word, code, retryable, advice = row
    assert site.CODES[name].retry == word
    for err in (
        from_site_error(status, {}, body(name, word)),
        from_response(status, {}, body(name, word)),
        from_response(status, {}, body(name, word), provider="site"),
    ):
        assert (err.code, err.retryable, err.advice, err.origin) == (
            code,
            retryable,
            advice,
            "upstream",
        )
        assert err.upstream == {
            "provider": "site",
            "status": status,
            "code": name,
            "retry": word,
            "message": "It failed",
        }


@pytest.mark.parametrize(("word", "row"), list(WORDS.items()))
def test_a_sites_own_code_is_read_by_its_retry_word(word: str, row: tuple[str, str]) -> None:
    """Codes from the identity or payment specs, or a site's own, keep their code upstream."""
    err = from_response(400, {}, body("acme_basket_locked", word))
    assert (err.code, err.advice) == row
    assert (err.upstream["code"], err.upstream["retry"]) == ("acme_basket_locked", word)


def test_an_unknown_code_without_a_word_is_internal() -> None:
    """The vocabulary: agents treat unknown codes as internal."""
    err = from_site_error(500, {}, {"error": {"code": "acme_gremlins", "message": "Oops"}})
    assert (err.code, err.retryable, err.upstream["retry"]) == (
        "upstream.unavailable",
        True,
        "once",
    )


def test_retry_after_from_the_body_wins_over_the_header() -> None:
    """rate_limited carries retry_after and a Retry-After header."""
    limited = body("rate_limited", "after_delay", retry_after=12)
    both = from_site_error(429, {"Retry-After": "30"}, limited)
    assert both.retry_after == 12
    busy = body("temporarily_unavailable", "after_delay")
    header = from_site_error(503, {"Retry-After": "30"}, busy)
    assert header.retry_after == 30


def test_the_field_becomes_a_pointer() -> None:
    """The vocabulary's example: out_of_stock on product_id."""
    example = {
        "error": {
            "code": "out_of_stock",
            "message": "Sold out",
            "field": "product_id",
            "retry_after": None,
            "retry": "no",
        }
    }
    err = from_response(409, {}, example)
    assert err.location == {"pointer": "/product_id"}
    assert err.upstream["field"] == "product_id"
    assert err.detail == "site: Sold out"


def test_bodies_without_a_retry_word_are_left_to_the_other_readers() -> None:
    """The reader stays out of OpenAI-shaped bodies; provider="site" reads anything."""
    openai_shaped = {"error": {"code": "rate_limited", "message": "x", "type": "requests"}}
    assert site._read_response(429, {}, openai_shaped) is None
    assert site._read_response(429, {}, {"error": {"code": "x", "retry": ["no"]}}) is None
    assert from_response(429, {}, openai_shaped).upstream["provider"] != "site"
    page = from_response(503, {}, b"<html>down</html>", provider="site")
    assert page.code == "upstream.unavailable"


@pytest.mark.parametrize(
    "value",
    [None, b"\xff", "[]", {"error": 3}, {"error": {"code": "x", "retry_after": float("inf")}}],
)
def test_never_raises(value: Any) -> None:
    """Whatever the body, a harness error comes out."""
    assert isinstance(from_site_error(400, {}, value), HarnessError)
    assert isinstance(from_site_error(True, None, value), HarnessError)


def test_a_huge_retry_after_is_dropped_and_the_error_stays_rate_limited() -> None:
    """``retry_after`` 1 followed by 400 zeros (valid JSON) used to give
    ``harness.internal_error``: it is dropped, the header's wait (if any) stands."""
    huge = body("rate_limited", "after_delay", retry_after=10**400)
    err = from_site_error(429, {}, huge)
    assert (err.code, err.retryable, err.retry_after) == ("upstream.rate_limited", True, None)
    with_header = from_site_error(429, {"Retry-After": "30"}, huge)
    assert (with_header.code, with_header.retry_after) == ("upstream.rate_limited", 30)
    assert HarnessError.from_json(err.to_json()).code == "upstream.rate_limited"
    text = '{"error": {"code": "rate_limited", "retry": "after_delay", "retry_after": 1' + "0" * 400
    parsed = from_site_error(429, {}, text + "}}")
    assert (parsed.code, parsed.retryable) == ("upstream.rate_limited", True)
