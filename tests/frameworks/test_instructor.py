"""instructor's exceptions, produced by running instructor over a real openai client whose
transport answers from shipped cassettes.

instructor pins ``jiter<0.15`` while openai 3.5+ needs ``jiter>=0.16``: run this module in its
own environment (``pip install -e . --group test instructor``).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("instructor")

import instructor
import openai
from pydantic import BaseModel

from normalize_errors import HarnessError, normalize
from normalize_errors._wrapping._replay_calls import http_library

from ..support import raised, recorded, valid


class Person(BaseModel):
    age: int


def create(name: str, provider: str = "openai", retries: int = 2, **options: Any) -> HarnessError:
    http = http_library("openai")
    status, headers, body = recorded(provider, name)

    def answer(request: Any) -> Any:
        return http.Response(status, headers=headers, content=body)

    client = instructor.from_openai(
        openai.OpenAI(
            api_key="sk-test",
            max_retries=0,
            http_client=http.Client(transport=http.MockTransport(answer)),
        )
    )
    exc = raised(
        lambda: client.chat.completions.create(
            model="gpt-4o-mini",
            response_model=Person,
            max_retries=retries,
            messages=[{"role": "user", "content": "hi"}],
            **options,
        )
    )
    err = valid(normalize(exc))
    assert err.__cause__ is exc
    return err


def test_retries_exhausted_has_one_cause_per_failed_attempt() -> None:
    """Truncated tool-call JSON three times: output.retries_exhausted, three malformed causes."""
    err = create("tool_call_arguments_truncated_json")
    assert (err.code, err.attempts, err.max_attempts) == ("output.retries_exhausted", 3, 3)
    assert [c.code for c in err.causes] == ["output.malformed"] * 3
    assert [c.attempts for c in err.causes] == [3, 2, 1]


def test_an_api_error_is_read_through_the_vendor_exception() -> None:
    """A 429 before any output: no failed attempts, the openai error decides."""
    err = create("rate_limit_tpm_429")
    assert (err.code, err.retryable, err.retry_after) == ("upstream.rate_limited", True, 26.604)
    quota = create("insufficient_quota_429")
    assert (quota.code, quota.retryable) == ("upstream.rate_limited", False)


def test_incomplete_output_is_truncated() -> None:
    """finish_reason length: IncompleteOutputException -> output.truncated."""
    assert create("finish_length_200").code == "output.truncated"


def test_a_spent_token_budget_is_a_budget_limit() -> None:
    """token_budget smaller than one attempt's usage: loop.budget_exceeded with the numbers.

    The completion is a recorded JSON-mode answer of 148 tokens for another schema
    (``recorded/openai_json_mode_city_200.yaml``, recorded by pydantic-ai's tests: its source
    there), so ``Person`` fails to validate and instructor checks the budget before retrying.
    """
    from pathlib import Path

    import yaml

    http = http_library("openai")
    data = yaml.safe_load(
        (Path(__file__).parent / "recorded" / "openai_json_mode_city_200.yaml").read_text()
    )["response"]

    def answer(request: Any) -> Any:
        return http.Response(data["status"], headers=data["headers"], content=data["body"].encode())

    client = instructor.from_openai(
        openai.OpenAI(
            api_key="sk-test",
            max_retries=0,
            http_client=http.Client(transport=http.MockTransport(answer)),
        ),
        mode=instructor.Mode.JSON,
    )
    exc = raised(
        lambda: client.chat.completions.create(
            model="gpt-4o",
            response_model=Person,
            max_retries=3,
            token_budget=100,
            messages=[{"role": "user", "content": "hi"}],
        )
    )
    err = valid(normalize(exc))
    assert err.code == "loop.budget_exceeded"
    assert err.limit == {"name": "tokens", "value": 100, "observed": 148}
    assert err.attempts == 1
    assert [(c.code, c.location) for c in err.causes] == [
        ("output.schema_violation", {"pointer": "/age"})
    ]


def test_a_refusal_is_a_model_refusal() -> None:
    """A refusal instead of the structured answer: policy.model_refusal with its text."""
    err = create("refusal_structured_output_200")
    assert (err.code, err.detail) == (
        "policy.model_refusal",
        "I'm sorry, I cannot assist with that request.",
    )


def test_a_budget_that_cannot_be_enforced_is_an_internal_error() -> None:
    """token_budget on a response without usage: TokenUsageUnavailableError, not a limit."""
    err = create("tool_call_arguments_truncated_json", token_budget=10)
    assert (err.code, err.retryable) == ("harness.internal_error", False)
    assert err.upstream["exception"].endswith("TokenUsageUnavailableError")


def test_a_text_answer_where_a_tool_call_was_asked_is_malformed_each_time() -> None:
    """In instructor's TOOLS mode, an answer of text with no tool call (the shipped
    ``openai/finish_length_200`` answer, its ``finish_reason`` turned to ``stop``:
    constructed) fails to parse (instructor's ``ResponseParsingError``) on every attempt:
    ``output.retries_exhausted``, each cause ``output.malformed`` with instructor's words and
    the model's feedback."""
    import json

    http = http_library("openai")
    _, headers, body = recorded("openai", "finish_length_200")
    answer_ = json.loads(body)
    answer_["choices"][0]["finish_reason"] = "stop"

    def answer(request: Any) -> Any:
        return http.Response(200, headers=headers, content=json.dumps(answer_).encode())

    client = instructor.from_openai(
        openai.OpenAI(
            api_key="sk-test",
            max_retries=0,
            http_client=http.Client(transport=http.MockTransport(answer)),
        )
    )
    exc = raised(
        lambda: client.chat.completions.create(
            model="gpt-4o-mini",
            response_model=Person,
            max_retries=2,
            messages=[{"role": "user", "content": "hi"}],
        )
    )
    err = valid(normalize(exc))
    assert (err.code, err.attempts) == ("output.retries_exhausted", 3)  # 1 + max_retries
    assert [c.code for c in err.causes] == ["output.malformed"] * 3
    assert [c.attempts for c in err.causes] == [3, 2, 1]
    assert all("No tool calls" in (c.detail or "") for c in err.causes)
    assert all(c.model_feedback for c in err.causes)


def test_a_mode_the_client_cannot_use_is_an_internal_error() -> None:
    """``instructor.from_openai(client, mode=Mode.ANTHROPIC_TOOLS)``: instructor's
    ``ModeError``, the caller's own set-up: ``harness.internal_error``, never retried."""
    exc = raised(
        lambda: instructor.from_openai(
            openai.OpenAI(api_key="sk-test"), mode=instructor.Mode.ANTHROPIC_TOOLS
        )
    )
    assert type(exc).__name__ == "ModeError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("harness.internal_error", False)
    assert "anthropic_tools" in (err.detail or "")
