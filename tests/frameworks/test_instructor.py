"""instructor's exceptions, produced by running instructor over a real openai client whose
transport answers from shipped cassettes.

instructor pins ``jiter<0.15`` while openai 3.5+ needs ``jiter>=0.16``: run this module in its
own environment (``pip install -e ".[test]" instructor``).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("instructor")

import instructor
import openai
from pydantic import BaseModel

from normalize_errors import HarnessError, normalize
from normalize_errors.providers._calls import http_library

from ..support import raised, recorded, valid


class Person(BaseModel):
    age: int


def create(name: str, provider: str = "openai", retries: int = 2) -> HarnessError:
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
