"""Issue 22, finding 7: one rule says which names are secret (``secret_name``), and pickles,
``sanitize``, ``redact`` and the recorder all follow it.

An Azure API Management subscription key (``Ocp-Apim-Subscription-Key``, 32 hex digits), an
Azure Functions key or a Portkey virtual key in a request header used to survive ``pickle``
and ``sanitize``; the rate-limit headers that mention tokens are vendor facts and are kept.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
import vcr

from normalize_errors import HarnessError, _replay_calls, normalize, redact
from normalize_errors._pickling import scrub
from normalize_errors._redact import REDACTED, secret_name
from normalize_errors._safe_copy import sanitize
from normalize_errors.replay import load, shipped

# Made up, of the vendors' formats (32 hex digits; Portkey's virtual keys are names+suffix).
HEX_KEY = "3f9c0a7d5b1e4c2f8a6d0b9e7c1f2a4d"

SECRET = [
    "Ocp-Apim-Subscription-Key",
    "ocp-apim-subscription-key",
    "X-Functions-Key",
    "x-portkey-virtual-key",
    "x-portkey-api-key",
    "X-Amz-Signature",
    "X-Amz-Security-Token",
    "X-Amz-Credential",
    "client_secret",
    "password",
    "subscription-key",
    "api-key",
    "X-API-KEY",
    "x-goog-api-key",
    "Authorization",
    "Proxy-Authorization",
    "Cookie",
    "Set-Cookie",
    "accessToken",
    "refresh_token",
    "XFunctionsKey",
    "AWSSecretAccessKey",
    "credentials",
    "x-auth",
    "key",
    "token",
    "sig",
]
KEPT = [
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-limit-tokens",
    "x-ratelimit-reset-tokens",
    "anthropic-ratelimit-input-tokens-remaining",
    "anthropic-ratelimit-output-tokens-reset",
    "anthropic-ratelimit-tokens-limit",
    "openai-processing-ms",
    "retry-after",
    "retry-after-ms",
    "request-id",
    "x-request-id",
    "apim-request-id",
    "x-should-retry",
    "max_tokens",
    "input_tokens",
    "promptTokenCount",
    "token_count",
    "pageToken",
    "nextPageToken",
    "monkey",
    "keyboard",
    "author",
]


@pytest.mark.parametrize("name", SECRET)
def test_secret_names(name: str) -> None:
    assert secret_name(name)
    if not name.isalpha() or name.islower():  # camelCase needs its case to show its parts
        assert secret_name(name.lower())
    assert secret_name(f" {name} ")
    assert secret_name(name.encode("ascii"))


@pytest.mark.parametrize("name", KEPT)
def test_names_kept_as_vendor_facts(name: str) -> None:
    assert not secret_name(name)
    assert sanitize({name: "42"}) == {name: "42"}
    assert sanitize([(name, "42")]) == [[name, "42"]]


@pytest.mark.parametrize("name", SECRET)
def test_sanitize_and_scrub_drop_every_secret_named_value(name: str) -> None:
    assert sanitize({name: HEX_KEY}) == {name: REDACTED}
    assert sanitize({"headers": [(name, HEX_KEY)]}) == {"headers": [[name, REDACTED]]}
    assert HEX_KEY not in repr(scrub({name: HEX_KEY}))
    assert HEX_KEY not in repr(scrub([name, HEX_KEY]))


@pytest.mark.parametrize(
    "name", ["Ocp-Apim-Subscription-Key", "X-Functions-Key", "x-portkey-virtual-key"]
)
def test_written_name_value_is_redacted(name: str) -> None:
    """The text rule agrees: ``name: value`` and ``name=value``."""
    for text in (f"{name}: {HEX_KEY}", f"{name}={HEX_KEY}", f'{{"{name}": "{HEX_KEY}"}}'):
        assert HEX_KEY not in redact(text), text


def _error_with_header(name: str) -> BaseException:
    """The exception httpx raises for a recorded 429 (real client, shipped cassette), its
    request carrying ``name: HEX_KEY``."""
    scenario = load(shipped() / "http/groq_rate_limit_429.yaml")

    def prepare(client: Any) -> Any:
        client.headers[name] = HEX_KEY
        return client

    recorder = vcr.VCR(record_mode="none", match_on=("method", "scheme", "host", "path"))
    with recorder.use_cassette(str(scenario.path)):
        result = _replay_calls.call(
            "http",
            scenario.call,
            stream=scenario.stream,
            base_url=scenario.base_url,
            url=scenario.url,
            api_key="",
            request=dict(scenario.request),
            client=scenario.client,
            prepare=prepare,
        )
        try:
            result.raise_for_status()
        except Exception as exc:
            return exc
    raise AssertionError("no exception")


@pytest.mark.parametrize(
    "name", ["Ocp-Apim-Subscription-Key", "X-Functions-Key", "x-portkey-virtual-key"]
)
def test_a_secret_named_request_header_never_reaches_a_pickle(name: str) -> None:
    exc = _error_with_header(name)
    live = exc.request  # type: ignore[attr-defined]
    assert live.headers[name] == HEX_KEY, "the key was sent"
    err = normalize(exc)
    assert isinstance(err, HarnessError)
    data = pickle.dumps(err)
    assert HEX_KEY.encode() not in data
    assert live.headers[name] == HEX_KEY  # the user's own object is unchanged
    again = pickle.loads(data)
    assert again.__cause__.request.headers[name] == REDACTED
    assert HEX_KEY not in json.dumps(sanitize(dict(live.headers)))
