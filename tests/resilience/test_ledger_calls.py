"""What the ledger reads of a call (``_ledger_calls``): the account of a client (never its
credential), the characters of a request, the usage of a result and the headers of each
response, on the odd inputs a caller's objects can be."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("httpx")
openai = pytest.importorskip("openai")

import httpx  # noqa: E402

from normalize_errors.resilience._ledger_calls import (  # noqa: E402
    _heard_response,
    account,
    estimate,
    heard,
    listen,
    usage_of,
)

KEY = "sk-proj-" + "Ab3dE6gH" * 6


class URL:
    """An object named as httpx's URL whose text cannot be read."""

    def __str__(self) -> str:
        raise RuntimeError("no text")


class Plain:
    def __init__(self, **members: Any) -> None:
        self.__dict__.update(members)


def test_an_account_shows_its_provider_host_and_a_digest_tag_only() -> None:
    found = account(openai.OpenAI(api_key=KEY), "openai")
    assert repr(found).startswith("Account('openai api.openai.com key#")
    assert KEY not in repr(found)
    assert KEY not in found.key


def test_a_client_without_a_credential_or_a_readable_address() -> None:
    found = account(Plain(base_url=URL(), organization=Plain()), "http")
    assert found.label == "http no key read"
    assert found.key != account(Plain(api_key="k"), "http").key


def test_the_characters_of_a_request() -> None:
    class Broken:
        def model_dump(self, **options: Any) -> Any:
            raise ValueError("cannot")

    class Content:
        def model_dump(self, **options: Any) -> Any:
            return {"parts": [{"text": "abcd" * 5}]}

    request = {"messages": [{"content": "abcd"}, Broken(), 42], "contents": [Content()]}
    assert estimate(request)["input_tokens"] == 6  # 24 characters
    assert estimate({"contents": Content(), "max_output_tokens": 7})["output_tokens"] == 7


def test_a_result_without_usage_counts_reports_none() -> None:
    assert usage_of(Plain(usage=Plain(total_tokens=3))) is None
    assert usage_of(Plain(usage=None, usage_metadata=Plain(prompt_token_count=4))) == {
        "tokens": 4.0, "input_tokens": 4.0, "output_tokens": 0.0,
    }  # fmt: skip
    assert usage_of(None) is None


def test_at_most_sixteen_responses_are_heard_per_call() -> None:
    response = Plain(headers={"x": "1"})
    with heard() as headers:
        for _ in range(20):
            _heard_response(response)
    assert len(headers) == 16
    _heard_response(response)  # outside a call: nowhere to go, nothing raised


def test_an_http_client_that_refuses_the_hook_teaches_nothing() -> None:
    class Refusing(httpx.Client):
        @property
        def event_hooks(self) -> Any:
            return {"request": [], "response": []}

        @event_hooks.setter
        def event_hooks(self, value: Any) -> None:
            raise AttributeError("read-only")

    client = openai.OpenAI(api_key=KEY, http_client=Refusing())
    assert listen(client) is False
    assert listen(Plain()) is False  # no HTTP client at all
    plain = openai.OpenAI(api_key=KEY)
    assert listen(plain) is True
    assert listen(plain) is True  # once: the hook is not added twice
    assert len(plain._client.event_hooks["response"]) == 1
