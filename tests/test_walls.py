"""Reading a wall (``_walls``): every reset format, the scope and what it is counted per, the
Pacific day with and without the zone database, billing walls, and the budgets of a success.

The shipped cassettes check the same readings through the real SDK clients, sync and async
(their ``expect.quota``: tests/providers/test_cassettes.py). Here each format is read through
``from_response``, the one dispatcher, with a fixed clock; every vendor text below names where
it was published, and what is constructed around it is said.
"""

from __future__ import annotations

import calendar
import json
import time
from typing import Any

import pytest

from normalize_errors import Quota, from_response, normalize
from normalize_errors._base import _calendar as dates
from normalize_errors._reading import _walls as walls
from normalize_errors._reading._rules import retry_hint

NOW = 1_796_630_400.0  # 2026-12-07T08:00:00Z (a Monday), 00:00 in Los Angeles (PST)
DATE = "Mon, 07 Dec 2026 08:00:00 GMT"  # the same instant as a Date header


def wall(
    status: int, headers: dict[str, str], body: Any, provider: str | None = None
) -> Quota | None:
    """The quota of the error ``from_response`` gives (the clock fixed at ``NOW``)."""
    text = body if isinstance(body, str) else json.dumps(body)
    return from_response(status, {"date": DATE, **headers}, text, provider=provider).quota


def openai_429(message: str, kind: str = "tokens") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": "rate_limit_exceeded"}}


# -- headers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("6m0s", 360.0), ("1s", 1.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("12ms", 0.012),
     ("2m59.56s", 179.56), ("0", 0.0), ("7", 7.0)],
)  # fmt: skip
def test_openai_durations_give_the_reset(value: str, seconds: float) -> None:
    """OpenAI's and Groq's durations (the rate-limits guide's ``1s``, ``6m0s``; a community
    thread's ``12ms``), and Azure's plain seconds: the exhausted family's reset."""
    headers = {
        "x-ratelimit-limit-requests": "60",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": value,
        "x-ratelimit-remaining-tokens": "149984",
        "x-ratelimit-reset-tokens": "59s",
    }
    found = wall(429, headers, openai_429("Rate limit reached", kind="requests"), "openai")
    assert found is not None
    assert (found.scope, found.resets_in, found.source) == (
        "requests",
        seconds,
        "x-ratelimit-reset-requests",
    )
    assert found.reset == pytest.approx(NOW + seconds)  # anchored on the Date header


def test_a_delay_without_a_date_header_states_no_instant() -> None:
    """Two reads of the same failure give the same error: without the provider's clock a
    delay stays a delay (``resets_in``), never an instant on this machine's clock."""
    body = json.dumps(openai_429("Rate limit reached"))
    headers = {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s"}
    first = from_response(429, headers, body, provider="openai")
    time.sleep(0.01)
    second = from_response(429, headers, body, provider="openai")
    assert first.quota is not None
    assert (first.quota.reset, first.quota.resets_in) == (None, 360.0)
    assert first == second


def test_the_named_scope_s_reset_wins_when_nothing_is_exhausted() -> None:
    """OpenAI's error type says which budget ran out; its reset is the one read."""
    headers = {
        "x-ratelimit-remaining-requests": "59",
        "x-ratelimit-reset-requests": "1s",
        "x-ratelimit-remaining-tokens": "12",
        "x-ratelimit-reset-tokens": "6m0s",
    }
    found = wall(429, headers, openai_429("Rate limit reached", kind="tokens"), "openai")
    assert found is not None
    assert (found.scope, found.resets_in) == ("tokens", 360.0)


@pytest.mark.parametrize(
    ("value", "instant"),
    [
        ("2026-12-07T08:00:30Z", NOW + 30),
        ("2026-12-07T08:00:30.123456789Z", NOW + 30.123456),
        ("2026-12-07T10:00:30+02:00", NOW + 30),
        ("2026-12-07T08:00:30", NOW + 30),  # no offset: UTC
    ],
)
def test_anthropic_instants_give_the_reset(value: str, instant: float) -> None:
    """Anthropic's RFC 3339 resets (its rate-limits page), fractions and offsets included."""
    headers = {
        "anthropic-ratelimit-output-tokens-limit": "8000",
        "anthropic-ratelimit-output-tokens-remaining": "0",
        "anthropic-ratelimit-output-tokens-reset": value,
        "retry-after": "30",
    }
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}}
    found = wall(429, headers, body, "anthropic")
    assert found is not None
    assert found.scope == "output_tokens"
    assert found.reset == pytest.approx(instant, abs=1e-3)
    assert found.resets_in == pytest.approx(instant - NOW, abs=1e-3)


@pytest.mark.parametrize(
    ("value", "resets_in"),
    [("1796630460000", 60.0), ("1796630460", 60.0), ("60", 60.0), ("1741305600000", 0.0)],
)
def test_x_ratelimit_reset_in_epoch_milliseconds_seconds_or_a_delta(
    value: str, resets_in: float
) -> None:
    """OpenRouter's epoch milliseconds, the epoch seconds or delta of the many services that
    send ``X-RateLimit-Reset``; a reset already past is 0 seconds away."""
    headers = {"x-ratelimit-limit": "80", "x-ratelimit-remaining": "0", "x-ratelimit-reset": value}
    found = wall(429, headers, {"error": {"message": "Rate limit exceeded", "code": 429}})
    assert found is not None
    assert found.resets_in == pytest.approx(resets_in)


def test_openrouter_headers_copied_into_the_body_count() -> None:
    """OpenRouter puts its headers in ``error.metadata.headers`` (BerriAI/litellm#9035)."""
    body = {
        "error": {
            "message": "Rate limit exceeded: free-models-per-day.",
            "code": 429,
            "metadata": {
                "headers": {
                    "X-RateLimit-Limit": "50",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset": "1796688000000",
                }
            },
        }
    }
    found = wall(429, {}, body)
    assert found is not None
    assert (found.reset, found.window, found.source) == (1_796_688_000, "day", "x-ratelimit-reset")


def test_the_ietf_fields() -> None:
    """draft-ietf-httpapi-ratelimit-headers: the spent policy's ``t``; its window from the
    policy's ``w``; a policy not counted in requests (``qu``) has no scope."""
    headers = {
        "ratelimit-policy": '"burst";q=10;w=1, "daily";q=1000;w=86400;qu="requests"',
        "ratelimit": '"burst";r=7;t=1, "daily";r=0;t=3600',
    }
    found = wall(429, headers, {"error": {"message": "Too many requests"}})
    assert found is not None
    assert (found.scope, found.window, found.resets_in, found.source) == (
        "requests",
        "day",
        3600.0,
        "RateLimit",
    )
    bytes_policy = {"ratelimit-policy": '"b";q=5000;qu="content-bytes"', "ratelimit": '"b";r=0;t=9'}
    found = wall(429, bytes_policy, {"error": {"message": "Too many requests"}})
    assert found is not None
    assert (found.scope, found.resets_in) == (None, 9.0)


def test_structured_fields_are_read_leniently() -> None:
    assert walls.sf_list('"a,b";q=1;x, tok;w=60;k="v;w"') == [
        ("a,b", {"q": 1.0, "x": True}),
        ("tok", {"w": 60.0, "k": "v;w"}),
    ]
    assert walls.sf_list("") == []
    assert walls.sf_list(";;,,=") == [("=", {})]  # junk is an item with no parameters
    assert len(walls.sf_list(", ".join(f'"p{i}";r=0' for i in range(100)))) == 16


# -- Gemini ---------------------------------------------------------------------------------------


def gemini(quota_id: str, retry: str | None = None, model: str | None = None) -> dict[str, Any]:
    """A Gemini 429 with one violation (the shape of cassettes/google/rate_limit_*_429.yaml)."""
    violation: dict[str, Any] = {
        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
        "quotaId": quota_id,
    }
    if model:
        violation["quotaDimensions"] = {"location": "global", "model": model}
    details: list[dict[str, Any]] = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]}
    ]
    if retry:
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry})
    message = "You exceeded your current quota, please check your plan and billing details."
    return {"error": {"code": 429, "message": message, "status": "RESOURCE_EXHAUSTED",
                      "details": details}}  # fmt: skip


def test_a_gemini_daily_quota_comes_back_at_midnight_pacific() -> None:
    """Gemini's rate-limits page: "Requests per day (RPD) quotas reset at midnight Pacific
    time", whatever RetryInfo says."""
    body = gemini("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "36s", "gemini-2.5-flash")
    found = wall(429, {"date": "Mon, 07 Dec 2026 20:30:00 GMT"}, body, "google")
    assert found is not None
    # 12:30 PST: the next midnight in Los Angeles is 08:00 UTC the next day
    assert found.reset == calendar.timegm((2026, 12, 8, 8, 0, 0))
    assert found.resets_in == 11.5 * 3600
    assert (found.scope, found.window, found.per, found.model) == (
        "requests",
        "day",
        ("project", "model"),
        "gemini-2.5-flash",
    )
    assert not found.billing


def test_a_gemini_minute_quota_comes_back_at_its_retry_info_else_the_next_minute() -> None:
    per_minute = "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
    found = wall(
        429, {"date": "Mon, 07 Dec 2026 08:00:12 GMT"}, gemini(per_minute, "26s"), "google"
    )
    assert found is not None
    assert (found.resets_in, found.source) == (26.0, "RetryInfo")
    found = wall(429, {"date": "Mon, 07 Dec 2026 08:00:12 GMT"}, gemini(per_minute), "google")
    assert found is not None
    assert (found.resets_in, found.source) == (48.0, "QuotaFailure")


@pytest.mark.parametrize(
    "day",
    [(2026, 1, 15), (2026, 3, 7), (2026, 3, 8), (2026, 3, 9), (2026, 7, 4), (2026, 10, 31),
     (2026, 11, 1), (2026, 11, 2), (2026, 12, 31), (2027, 3, 14), (2028, 2, 29)],
)  # fmt: skip
def test_the_pacific_day_without_the_zone_database(
    day: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows without ``tzdata``: the United States' rules give the same midnights as the
    zone database, on both sides of each change of clocks."""
    for hour in range(0, 24, 5):
        now = calendar.timegm((*day, hour, 17, 0))
        expected = dates.next_midnight(now, "America/Los_Angeles")
        month = dates.next_month(now, "America/Los_Angeles")
        with monkeypatch.context() as patched:
            patched.setattr(dates, "_zone", lambda name: None)
            assert dates.next_midnight(now, "America/Los_Angeles") == expected
            assert dates.next_month(now, "America/Los_Angeles") == month
        assert 0 < expected - now <= 25 * 3600


# -- words ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "resets_in", "reset"),
    [
        # Google's Cloud Code backend (liuw1535/antigravity2api-nodejs#44)
        ("You have exhausted your capacity on this model. Your quota will reset after "
         "161h39m41s.", 581981.0, NOW + 581981),
        # a rate limit that names credit is still a rate limit (the shipped corpus)
        ("Your rate limit is reduced to 6 requests per minute while you have less than $5.0 "
         "in credit. Your rate limit resets in ~5s", 5.0, NOW + 5),
        ("Your quota will reset in 3 hours.", 10800.0, NOW + 10800),
        # a date (Anthropic's spend limits page; cassettes/anthropic/spend_cap_429_*)
        ("You will regain access on 2026-12-09 at 00:00 UTC.", 40 * 3600.0,
         calendar.timegm((2026, 12, 9, 0, 0, 0))),
        # "try again tomorrow" (cooderl/wewe-rss#390): the next midnight, UTC
        ("Daily request 200 limit exceeded. Please try again tomorrow.", 16 * 3600.0,
         calendar.timegm((2026, 12, 8, 0, 0, 0))),
        # a time of day in an offset (google-gemini/gemini-cli#22643)
        ("Usage limit reached for gemini-3-flash-preview. Access resets at 10:57 PM GMT-3.",
         17 * 3600 + 57 * 60.0, calendar.timegm((2026, 12, 8, 1, 57, 0))),
        ("Your billing capacity will reset at the beginning of next month.",
         (31 - 7 + 1) * 86400 - 8 * 3600.0, calendar.timegm((2027, 1, 1, 0, 0, 0))),
        ("The daily limit resets at midnight Pacific time.", 24 * 3600.0, NOW + 86400),
    ],
)  # fmt: skip
def test_a_reset_stated_in_words(message: str, resets_in: float, reset: float) -> None:
    found = wall(429, {}, {"error": {"message": message}})
    assert found is not None
    assert found.resets_in == pytest.approx(resets_in, abs=1e-3)
    assert found.reset == pytest.approx(reset, abs=1e-3)
    assert found.source == "message"


def test_a_compound_wait_in_the_message_is_read_whole() -> None:
    """Groq's and OpenAI's waits over a minute ("9m38.016s", continuedev/continue#10920)
    were read as nothing before; the retry hint and the wall now read them whole."""
    assert retry_hint("Please try again in 9m38.016s. Need more tokens?") == 578.016
    assert retry_hint("Please try again in 7m12s.") == 432.0
    assert retry_hint("Please try again in 26.604s.") == 26.604
    assert retry_hint("Please try again in 1.5 minutes") == 90.0


def test_the_scope_window_per_and_model_in_words() -> None:
    """Anthropic's newer wording (continuedev/continue#11665): input tokens per minute, per
    organization and model."""
    message = (
        "This request would exceed your organization's rate limit of 30,000 input tokens per "
        "minute (org: 8a0d, model: claude-sonnet-4-20250514). For details, refer to: "
        "https://docs.claude.com/en/api/rate-limits."
    )
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
    found = wall(429, {"retry-after": "12"}, body, "anthropic")
    assert found is not None
    assert (found.scope, found.window, found.per, found.model) == (
        "input_tokens",
        "minute",
        ("organization", "model"),
        "claude-sonnet-4-20250514",
    )
    assert (found.resets_in, found.source) == (12.0, "retry_after")


# -- billing, and what is no wall ----------------------------------------------------------------


def test_a_spent_balance_is_a_billing_wall() -> None:
    body = {"error": {"message": "You exceeded your current quota, please check your plan and "
                      "billing details.", "type": "insufficient_quota",
                      "code": "insufficient_quota"}}  # fmt: skip
    found = wall(429, {}, body, "openai")
    assert found == Quota(scope="spend", billing=True)


def test_one_request_over_the_allowance_is_no_wall() -> None:
    """The request is refused, not the key: a smaller one goes through."""
    over = openai_429(
        "Request too large for gpt-4 in organization org-x on tokens per min (TPM): Limit "
        "10000, Requested 14434. The input or output tokens must be reduced."
    )
    assert wall(429, {}, over, "openai") is None
    afford = {
        "error": {
            "message": "This request requires more credits, or fewer max_tokens. You requested "
            "up to 64000 tokens, but can only afford 2666.",
            "code": 402,
        }
    }
    assert wall(402, {}, afford) is None


def test_only_a_rate_limit_has_a_wall() -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert from_response(529, {"retry-after": "10"}, json.dumps(overloaded)).quota is None
    assert normalize(TimeoutError()).quota is None
    plain = {"error": {"message": "Rate limit exceeded"}}
    assert from_response(429, {}, json.dumps(plain)).quota is None  # nothing stated


def test_hostile_values_are_no_values() -> None:
    """Out-of-shape values read as absent; nothing raises, nothing is unbounded."""
    headers = {
        "x-ratelimit-remaining-tokens": "0",
        "x-ratelimit-reset-tokens": "9" * 1000 + "h",
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "2026-99-99T99:99:99Z",
        "x-ratelimit-remaining": "-1",
        "x-ratelimit-reset": "nan",
        "ratelimit": '"' * 5000,
        "date": "not a date",
    }
    body = json.dumps(openai_429("slow down " * 1000))
    err = from_response(429, headers, body, provider="openai")
    assert err.code == "upstream.rate_limited"
    assert err.quota is None or (err.quota.resets_in or 0) <= 400 * 86400


# -- budgets of a success -----------------------------------------------------------------------


def test_budgets_of_a_success() -> None:
    """The headers of a success (an OpenAI community thread prints these, verbatim:
    "x-ratelimit-reset-requests: 12ms")."""
    openai_headers = {
        "x-ratelimit-limit-requests": "5000",
        "x-ratelimit-limit-tokens": "160000",
        "x-ratelimit-remaining-requests": "4999",
        "x-ratelimit-remaining-tokens": "159976",
        "x-ratelimit-reset-requests": "12ms",
        "x-ratelimit-reset-tokens": "9ms",
    }
    rounded = {
        b.scope: (b.limit, b.remaining, round(b.resets_in or -1, 6))
        for b in walls.budgets_of(openai_headers)
    }
    assert rounded == {"requests": (5000, 4999, 0.012), "tokens": (160000, 159976, 0.009)}
    anthropic_headers = {
        "date": DATE,
        "anthropic-ratelimit-input-tokens-limit": "30000",
        "anthropic-ratelimit-input-tokens-remaining": "27500",
        "anthropic-ratelimit-input-tokens-reset": "2026-12-07T08:00:05Z",
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "80",  # more than the limit: the limit
    }
    found = {
        b.scope: (b.limit, b.remaining, b.resets_in)
        for b in walls.budgets_of(anthropic_headers, now=NOW)  # this machine's clock, not Date
    }
    assert found == {"requests": (50, 50, None), "input_tokens": (30000, 27500, 5.0)}
    ietf = {"ratelimit-policy": '"default";q=100;w=60', "ratelimit": '"default";r=50;t=30'}
    assert [(b.scope, b.limit, b.remaining, b.resets_in) for b in walls.budgets_of(ietf)] == [
        ("requests", 100, 50, 30)
    ]
    assert walls.budgets_of({"x-ratelimit-limit-requests": "60"}) == []
    assert walls.budgets_of(None) == []
