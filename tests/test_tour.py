"""Tried as a new user would: three well-known failures, replayed from their cassettes.

A 529 from Anthropic, a 429 ``insufficient_quota`` from OpenAI and a 503 from Gemini go
through the real SDK clients; normalize() must tell the overload (retry) from the exhausted
quota (retrying cannot help) and keep what each vendor said.
"""

from __future__ import annotations

from normalize_errors import UpstreamOverloadedError, UpstreamRateLimitedError, normalize
from normalize_errors.replay import load, run, shipped


def vendor_exception(provider: str, name: str) -> BaseException:
    """What the real SDK raises when the cassette replays."""
    exc = run(load(shipped() / provider / f"{name}.yaml")).exception
    assert exc is not None
    return exc


def test_anthropic_overloaded_is_worth_retrying() -> None:
    """529 overloaded_error: upstream.overloaded, retryable, with the request id kept."""
    exc = vendor_exception("anthropic", "overloaded_529")
    err = normalize(exc)
    assert isinstance(err, UpstreamOverloadedError)
    assert (err.retryable, err.advice) == (True, "retry")
    assert err.upstream["provider"] == "anthropic"
    assert err.upstream["status"] == 529
    assert err.upstream["type"] == "overloaded_error"
    assert err.upstream["request_id"] == "req_01RCc7MbLyQNtGKzBTv8VCep"
    assert err.__cause__ is exc


def test_openai_insufficient_quota_is_not() -> None:
    """429 insufficient_quota: upstream.rate_limited, but not retryable; a person must pay."""
    err = normalize(vendor_exception("openai", "insufficient_quota_429"))
    assert isinstance(err, UpstreamRateLimitedError)
    assert (err.retryable, err.retry_after, err.advice) == (False, None, "human")
    assert err.upstream["code"] == "insufficient_quota"
    assert err.upstream["status"] == 429


def test_gemini_503_is_overload() -> None:
    """503 UNAVAILABLE "The model is overloaded": upstream.overloaded, retryable."""
    err = normalize(vendor_exception("google", "overloaded_503"))
    assert isinstance(err, UpstreamOverloadedError)
    assert err.retryable is True
    assert err.upstream["provider"] == "google"
    assert (err.upstream["status"], err.upstream["code"]) == (503, "UNAVAILABLE")
    assert "overloaded" in (err.detail or "")
