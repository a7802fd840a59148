"""A 200 that is not the API's answer: text instead of a result, JSON that does not decode.

The recorded case (a web app's page at a wrong base URL) is the cassette
``openai/html_page_200_wrong_base_url``, replayed sync, async and wrapped with the others;
here the real openai client talks to an in-memory transport that serves bodies written for
the purpose, to pin each path: ``wrap()``, ``@normalized`` on an SDK method, ``check()``,
and a decode error from inside the SDK against one from the caller's own code.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import openai
import pytest

from normalize_errors import HarnessError, check, normalize, normalized, wrap
from normalize_errors._wrapping._replay_calls import http_library
from normalize_errors.replay import load, run, shipped

PAGE = "<!DOCTYPE html><html><head><title>Sign in to the Wi-Fi</title></head><body></body></html>"
MESSAGES = [{"role": "user", "content": "Hi"}]


def client(body: str, content_type: str, *, asynchronous: bool = False) -> Any:
    """A real openai client whose server answers every request with 200 and ``body``."""
    lib = http_library("openai")

    def handler(request: Any) -> Any:
        return lib.Response(200, headers={"content-type": content_type}, text=body)

    transport = lib.MockTransport(handler)
    if asynchronous:
        return openai.AsyncOpenAI(
            api_key="sk-test",
            base_url="http://portal.local/v1",
            max_retries=0,
            http_client=lib.AsyncClient(transport=transport),
        )
    return openai.OpenAI(
        api_key="sk-test",
        base_url="http://portal.local/v1",
        max_retries=0,
        http_client=lib.Client(transport=transport),
    )


def test_the_sdk_returns_the_page_as_text() -> None:
    """The premise: without us, the caller gets a str where a completion should be."""
    result = client(PAGE, "text/html").chat.completions.create(model="m", messages=MESSAGES)
    assert type(result) is str


def test_wrap_raises_invalid_response_named_by_the_page_title() -> None:
    with pytest.raises(HarnessError) as caught:
        wrap(client(PAGE, "text/html")).chat.completions.create(model="m", messages=MESSAGES)
    err = caught.value.problem
    assert err.code == "upstream.invalid_response"
    assert "Sign in to the Wi-Fi" in str(err.detail)
    assert err.upstream["body"].startswith("<!DOCTYPE html>")


def test_wrap_of_an_async_client_raises_it_too() -> None:
    async def call() -> None:
        wrapped = wrap(client(PAGE, "text/html", asynchronous=True))
        await wrapped.chat.completions.create(model="m", messages=MESSAGES)

    with pytest.raises(HarnessError) as caught:
        asyncio.run(call())
    assert caught.value.problem.code == "upstream.invalid_response"


def test_normalized_on_the_sdk_method_and_check_on_its_result() -> None:
    sdk = client("upstream connect error", "text/plain")
    with pytest.raises(HarnessError) as caught:
        normalized(sdk.chat.completions.create)(model="m", messages=MESSAGES)
    assert caught.value.problem.code == "upstream.invalid_response"
    assert "upstream connect error" in str(caught.value.problem.detail)
    text = sdk.chat.completions.create(model="m", messages=MESSAGES)
    with pytest.raises(HarnessError) as checked:
        check(text, provider="openai")
    assert checked.value.code == "upstream.invalid_response"
    assert checked.value.result == text


def test_a_function_of_the_caller_that_returns_text_is_left_alone() -> None:
    @normalized
    def answer() -> str:
        return "<b>fine</b>"

    assert answer() == "<b>fine</b>"


def test_a_decode_error_from_inside_the_sdk_is_an_invalid_response() -> None:
    """JSON content type, a page as the body: the SDK's own decode fails inside its call."""
    sdk = client(PAGE, "application/json")
    with pytest.raises(json.JSONDecodeError) as raised:
        sdk.chat.completions.create(model="m", messages=MESSAGES)
    err = normalize(raised.value)
    assert err.code == "upstream.invalid_response"
    assert err.upstream["raised_in"] == "openai"
    with pytest.raises(HarnessError) as caught:
        wrap(client(PAGE, "application/json")).chat.completions.create(model="m", messages=MESSAGES)
    assert caught.value.problem.code == "upstream.invalid_response"
    assert isinstance(caught.value, json.JSONDecodeError)  # still the caller's except clause


def test_a_decode_error_inside_a_native_sdk_is_an_invalid_response() -> None:
    """The same page through groq's own SDK (read by the openai adapter): its decode fails
    inside its call, and the frame's package is named."""
    groq = pytest.importorskip("groq", reason="the native SDKs come with the test-beyond extra")
    import httpx

    def handler(request: Any) -> Any:
        return httpx.Response(
            200, content=PAGE.encode(), headers={"content-type": "application/json"}
        )

    sdk = groq.Groq(
        api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    with pytest.raises(json.JSONDecodeError) as raised:
        sdk.chat.completions.create(model="m", messages=MESSAGES)
    err = normalize(raised.value)
    assert err.code == "upstream.invalid_response"
    assert (err.upstream["provider"], err.upstream["raised_in"]) == ("openai", "groq")


def test_a_decode_error_raised_from_the_sdks_decode_error_is_an_invalid_response() -> None:
    """Your code re-raises the SDK's decode error: the cause's frames decide."""
    sdk = client(PAGE, "application/json")

    def reraise() -> None:
        try:
            sdk.chat.completions.create(model="m", messages=MESSAGES)
        except json.JSONDecodeError as inner:
            raise json.JSONDecodeError("re-raised", "<html>", 0) from inner

    with pytest.raises(json.JSONDecodeError) as raised:
        reraise()
    err = normalize(raised.value)
    assert (err.code, err.upstream["raised_in"]) == ("upstream.invalid_response", "openai")


def test_a_decode_error_of_the_callers_own_code_stays_what_it_is() -> None:
    with pytest.raises(json.JSONDecodeError) as raised:
        json.loads("<html>")
    assert normalize(raised.value).code == "harness.internal_error"


def test_the_recorded_page_replays_as_invalid_response() -> None:
    outcome = run(load(shipped() / "openai" / "html_page_200_wrong_base_url.yaml"))
    assert type(outcome.result) is str
    assert outcome.error is not None
    assert "NextChat" in str(outcome.error.detail)


def test_a_decode_error_of_an_http_client_called_by_the_caller_stays_internal() -> None:
    """httpx's Response.json() called by your code: your decode, not the SDK's."""
    lib = http_library("openai")
    response = lib.Response(200, content=b"<html>gateway</html>")
    with pytest.raises(json.JSONDecodeError) as raised:
        response.json()
    assert normalize(raised.value).code == "harness.internal_error"


def test_json_that_is_no_result_is_read_by_its_members() -> None:
    """A 200 whose JSON carries an error is that error; other JSON is no answer."""
    sdk = client(
        '{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}',
        "application/json",
    )
    with pytest.raises(HarnessError) as caught:
        wrap(sdk).chat.completions.create(model="m", messages=MESSAGES)
    assert caught.value.problem.code == "upstream.rate_limited"
    other = client('{"status": "maintenance"}', "application/json")
    result = other.chat.completions.create(model="m", messages=MESSAGES)
    with pytest.raises(HarnessError) as checked:
        check(result)
    assert checked.value.code == "upstream.invalid_response"
    assert "maintenance" in str(checked.value.detail)
    assert check({"id": "x"}, provider="http") == {"id": "x"}  # plain HTTP JSON passes


def test_normalized_on_an_async_sdk_method_raises_it_too() -> None:
    """``@normalized`` on the async client's method: the page it returns is no answer."""
    sdk = client("upstream connect error", "text/plain", asynchronous=True)

    async def call() -> None:
        await normalized(sdk.chat.completions.create)(model="m", messages=MESSAGES)

    with pytest.raises(HarnessError) as caught:
        asyncio.run(call())
    assert caught.value.problem.code == "upstream.invalid_response"
    assert caught.value.result == "upstream connect error"
