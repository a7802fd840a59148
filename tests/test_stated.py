"""What vendors state beyond their codes: limits, refused tool calls, unlisted finish reasons.

The recorded failures are in the cassettes (``tests/providers/test_cassettes.py`` replays
them); these tests pin the decisions at their edges, with bodies and headers written here.
"""

from __future__ import annotations

import json

import pytest

from normalize_errors import HarnessError, check, from_response
from normalize_errors._reading._stated_limits import (
    context_numbers,
    never_met,
    rate_limit_found,
    rate_limit_headers,
    stated_limit,
)
from normalize_errors._reading._tool_refusals import tool_failure
from normalize_errors._reading._wording import finish_failure


def rate_limit_stated(lowered: str) -> tuple[dict[str, object] | None, bool]:
    """The limit a lower-cased message states, and whether waiting can never meet it, as
    ``_rules.build`` and ``_rules.hints`` read them between them."""
    found = rate_limit_found(lowered)
    return (None, False) if found is None else (stated_limit(found), never_met(found))


def test_the_message_states_the_rate_limit_and_the_headers_stay_second() -> None:
    """'Limit, Used, Requested' wins over headers; observed is what was used plus asked."""
    message = "Rate limit reached on tokens per min (TPM): Limit 6000, Used 5914, Requested 1822."
    headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-limit-requests": "50"}
    body = json.dumps({"error": {"message": message, "code": "rate_limit_exceeded"}})
    err = from_response(429, headers, body, provider="openai")
    assert err.limit == {"name": "tokens_per_minute", "value": 6000, "observed": 7736}
    assert err.retryable is True
    assert rate_limit_stated(message.lower()) == (err.limit, False)
    alone = from_response(429, headers, '{"error": {"message": "slow down"}}', provider="openai")
    assert alone.limit == {"name": "requests", "value": 50, "observed": 50}


def test_one_request_over_the_whole_allowance_never_succeeds() -> None:
    err = from_response(
        429,
        {},
        '{"error": {"message": "Rate limit reached on tokens per min (TPM): Limit 6000, '
        'Requested 9000.", "code": "rate_limit_exceeded"}}',
        provider="openai",
    )
    assert (err.code, err.retryable) == ("upstream.rate_limited", False)
    assert err.limit == {"name": "tokens_per_minute", "value": 6000, "observed": 9000}


def test_a_quota_of_zero_is_not_retryable() -> None:
    limit, never = rate_limit_stated("quota exceeded for metric: x/free_tier_requests, limit: 0,")
    assert limit == {"name": "free_tier_requests", "value": 0}
    assert never is True


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (
            {
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-limit": "5",
            },
            {"name": "requests", "value": 5, "observed": 5},
        ),
        (
            {
                "x-ratelimit-remaining-tokens-minute": "0",
                "x-ratelimit-limit-tokens-minute": "60000",
            },
            {"name": "tokens_minute", "value": 60000, "observed": 60000},
        ),
        ({"x-ratelimit-remaining-tokens": "12", "x-ratelimit-limit-tokens": "60000"}, None),
        ({"x-ratelimit-remaining-tokens": "0", "x-ratelimit-limit-tokens": "lots"}, None),
    ],
)
def test_the_exhausted_header_family_names_the_limit(
    headers: dict[str, str], expected: dict[str, object] | None
) -> None:
    """Only a family whose remaining count is 0, and whose limit is a number, is read."""
    assert rate_limit_headers(headers) == expected


def test_a_stated_limit_without_counts_has_no_observed_value() -> None:
    """'Limit N' alone (no Used, no Requested): the limit without ``observed``, worth waiting."""
    message = "rate limit reached on requests per day (rpd): limit 14400. please try again."
    assert rate_limit_stated(message) == ({"name": "requests_per_day", "value": 14400}, False)
    assert rate_limit_stated("") == (None, False)


def test_a_refused_tool_call_without_words_gives_no_feedback() -> None:
    assert tool_failure("output.malformed", None, {}) == (None, None)


def test_groq_failed_generation_names_the_tool_it_called() -> None:
    feedback, location = tool_failure(
        "output.unknown_tool",
        "Tool choice is none, but model called a tool",
        {"failed_generation": '{"name": "search", "arguments": {}}'},
    )
    assert location == {"tool_name": "search"}
    assert feedback is not None
    assert "not allowed" in feedback


def test_a_failed_generation_that_is_no_json_names_no_tool() -> None:
    """Groq's failed_generation cut inside its JSON: no tool name, and the generic feedback."""
    feedback, location = tool_failure(
        "output.unknown_tool",
        "Tool choice is none, but model called a tool",
        {"failed_generation": '{"name": "sear'},
    )
    assert location is None
    assert feedback == "Tool calls are not allowed here; answer without calling a tool."


@pytest.mark.parametrize(
    "generation",
    ['{"arguments": {"q": 1}}', '{"name": ""}', json.dumps({"name": "t" * 129}), "[1, 2]"],
)
def test_a_failed_generation_without_a_usable_name_names_no_tool(generation: str) -> None:
    """JSON without a name, with an empty or overlong one, or not an object: no tool named,
    and the feedback quotes what the model wrote."""
    feedback, location = tool_failure(
        "output.malformed", "Failed to parse tool call", {"failed_generation": generation}
    )
    assert location is None
    assert feedback is not None
    assert feedback.startswith("Your tool call could not be read (you wrote: ")


def test_an_unreadable_tool_call_with_nothing_written_asks_for_the_format() -> None:
    """No failed generation to quote (or only white space): the feedback says what to send."""
    expected = (
        "Your tool call could not be read. Call the tool again with its name and one JSON "
        "object of arguments, in the tool-call format."
    )
    for extra in ({}, {"failed_generation": "  \n "}):
        assert tool_failure("output.malformed", "Failed to parse tool call", extra) == (
            expected,
            None,
        )


def test_a_call_to_a_tool_not_offered_without_its_name() -> None:
    """The refusal says a tool was not offered but not which: the feedback names none."""
    feedback, location = tool_failure(
        "output.unknown_tool", "the model called a tool which was not in request.tools", {}
    )
    assert location is None
    assert feedback == ("You called a tool that is not offered here; call only the tools offered.")


def test_context_numbers_are_whole_non_negative_counts() -> None:
    """llama.cpp's n_ctx and n_prompt_tokens: numbers or digit strings; a bool is no count."""
    assert context_numbers({"n_ctx": 4096, "n_prompt_tokens": "5000"}) == {
        "name": "context_tokens",
        "value": 4096,
        "observed": 5000,
    }
    assert context_numbers({"n_ctx": True}) is None
    assert context_numbers({"n_ctx": -1}) is None
    assert context_numbers({"n_ctx": "4096", "n_prompt_tokens": 1.5}) == {
        "name": "context_tokens",
        "value": 4096,
    }


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        ("malformed_function_call", "output.invalid_tool_arguments"),
        ("MALFORMED_RESPONSE", "output.malformed"),
        ("SAFETY", "policy.content_filtered"),
        ("recitation", "policy.content_filtered"),
        ("token_limit", "output.truncated"),
        ("error", "upstream.unavailable"),
        ("stop", None),
        ("tool_calls", None),
        ("eos", None),
        ("sleepy", None),
    ],
)
def test_unlisted_finish_reasons_read_by_their_words(reason: str, code: str | None) -> None:
    """A reason whose words name a failure is that failure; any other stays no failure."""
    assert finish_failure(reason) == code


def test_check_raises_for_an_unlisted_failure_reason_and_passes_any_other() -> None:
    def completion(reason: str) -> dict[str, object]:
        return {
            "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": reason, "message": {"content": "Hi"}}],
        }

    with pytest.raises(HarnessError) as caught:
        check(completion("malformed_function_call"), provider="openai")
    assert caught.value.code == "output.invalid_tool_arguments"
    assert caught.value.model_feedback
    ok = completion("sleepy")
    assert check(ok, provider="openai") is ok
