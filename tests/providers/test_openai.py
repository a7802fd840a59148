"""The OpenAI adapter: every SDK exception class, failures only a real client can produce,
and the same failures given as raw HTTP responses and plain JSON results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml

from normalize_errors import check, diagnose, from_response, normalize
from normalize_errors._rules import class_entry
from normalize_errors.providers import openai as adapter
from normalize_errors.providers._calls import http_library
from normalize_errors.replay import load, run, shipped

from ..support import raised, valid

CASSETTES = sorted((shipped() / "openai").glob("*.yaml"))
HTTP = http_library("openai")


def exported() -> list[type[BaseException]]:
    """Every public exception class of the installed SDK (top level and _exceptions)."""
    found: dict[str, type[BaseException]] = {}
    for module in (openai, openai._exceptions):
        for name, value in list(vars(module).items()):
            exception = isinstance(value, type) and issubclass(value, BaseException)
            if exception and not name.startswith("_"):
                found[name] = value
    return list(found.values())


@pytest.mark.parametrize("cls", exported(), ids=lambda c: c.__name__)
def test_every_exported_exception_class_has_a_mapping(cls: type[BaseException]) -> None:
    """Each class resolves to a CLASSES entry more specific than the SDK's root error."""
    entry = class_entry(cls.__new__(cls), adapter.CLASSES, adapter.NAME)
    assert entry is not None, cls
    if cls is not openai.OpenAIError:
        assert entry[0] != "OpenAIError", cls
    valid(normalize(cls.__new__(cls)))  # built without __init__: still a valid error


def client(handler: Any, **options: Any) -> openai.OpenAI:
    """A real client whose transport is ``handler``."""
    return openai.OpenAI(
        api_key="sk-test",
        max_retries=0,
        http_client=HTTP.Client(transport=HTTP.MockTransport(handler)),
        **options,
    )


MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]


def test_connection_errors_and_timeouts() -> None:
    """The SDK wraps transport failures; the harness error names them and keeps the cause."""

    def refuse(request: Any) -> Any:
        raise HTTP.ConnectError("connection refused", request=request)

    def stall(request: Any) -> Any:
        raise HTTP.ReadTimeout("timed out", request=request)

    refused = raised(lambda: client(refuse).chat.completions.create(model="m", messages=MESSAGES))
    assert isinstance(refused, openai.APIConnectionError)
    err = valid(normalize(refused))
    assert (err.code, err.retryable, err.upstream["code"]) == (
        "upstream.unavailable",
        True,
        "connection_error",
    )
    assert err.upstream["cause"].endswith("ConnectError")
    slow = raised(lambda: client(stall).chat.completions.create(model="m", messages=MESSAGES))
    assert isinstance(slow, openai.APITimeoutError)
    assert valid(normalize(slow)).upstream["code"] == "timeout"


def recorded(name: str) -> tuple[int, dict[str, str], str]:
    """A shipped cassette's response."""
    data = yaml.safe_load((shipped() / "openai" / f"{name}.yaml").read_text(encoding="utf-8"))
    response = data["interactions"][0]["response"]
    headers = {k: v[0] for k, v in response["headers"].items()}
    return response["status"]["code"], headers, response["body"]["string"]


def test_parse_raises_length_finish_reason_error_read_from_its_completion() -> None:
    """chat.completions.parse() raises LengthFinishReasonError; its completion tells why."""
    status, headers, body = recorded("finish_length_200")

    def answer(request: Any) -> Any:
        return HTTP.Response(status, headers=headers, content=body.encode())

    request: dict[str, Any] = {"response_format": {"type": "json_object"}}
    exc = raised(
        lambda: client(answer).chat.completions.parse(model="gpt-4o", messages=MESSAGES, **request)
    )
    assert isinstance(exc, openai.LengthFinishReasonError)
    err = valid(normalize(exc))
    assert (err.code, err.upstream["stop_reason"]) == ("output.truncated", "length")
    assert err.upstream["exception"].endswith("LengthFinishReasonError")


def test_a_missing_api_key_is_a_credentials_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK refuses to build a client without a key; that is upstream.authentication_failed."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    exc = raised(openai.OpenAI)
    assert type(exc) is openai.OpenAIError
    err = valid(normalize(exc))
    assert (err.code, err.advice) == ("upstream.authentication_failed", "credentials")


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.stem)
def test_raw_responses_read_like_the_sdk_path(path: Path) -> None:
    """from_response on the recorded body (bytes, text, parsed) agrees with the SDK replay."""
    scenario = load(path)
    status, headers, body = recorded(path.stem)
    if status >= 400 and not scenario.stream:
        expected = run(scenario).error
        assert expected is not None
        given: list[Any] = [body.encode(), body]
        if body.lstrip()[:1] in ("{", "["):
            given.append(json.loads(body))
        for raw in given:
            found = valid(from_response(status, headers, raw))
            assert (found.code, found.retryable) == (expected.code, expected.retryable)
            assert found.retry_after == expected.retry_after
    elif status == 200 and not scenario.stream:
        try:
            result: Any = json.loads(body)
        except ValueError:  # a page where a result should be: the SDK hands over the text
            result = body
        problem = diagnose(result, provider="openai", tools=scenario.tools)
        assert problem is not None
        assert problem.code == scenario.expect["code"]
        with pytest.raises(type(problem)):
            check(result, provider="openai", tools=scenario.tools)


def test_successful_results_pass_through_untouched() -> None:
    """A normal completion and a normal Responses result give no error; check returns them."""
    completion = {
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "Hi"}}],
    }
    response = {
        "object": "response",
        "status": "completed",
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "Hi"}]}],
    }
    for result in (completion, response):
        assert diagnose(result) is None
        assert check(result) is result
