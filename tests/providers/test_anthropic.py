"""The Anthropic adapter: SDK exceptions, raw responses, results and streams.

The cassettes (``cassettes/anthropic``) replay public failures through the real client; these
tests cover what they cannot: every exception class the installed SDK exports, failures
built by the real client over a mock transport (connection errors, retries, the error codes
no public page shows a response for), the same failures as plain JSON, and hostile input.

Bodies marked "constructed" below are test inputs written for the case, not recorded
responses; cassettes only ever hold sourced bodies.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import pytest

from normalize_errors import HarnessError
from normalize_errors._base._http_wire import parse_body
from normalize_errors._facade import check, diagnose, from_response, normalize
from normalize_errors._reading._tables import class_entry
from normalize_errors.providers import anthropic as adapter_module
from normalize_errors.providers._routing import adapter
from normalize_errors.replay import _compare, load

from ..support import cassette, cassettes, valid

SDK = tuple(int(part) for part in anthropic.__version__.split(".")[:2])
"""The installed SDK's (major, minor): 0.49 (httpx) in the old set, 2.x (httpx2) in the new."""
HTTP: Any = importlib.import_module("httpx2" if SDK >= (1, 0) else "httpx")
"""The HTTP library the installed SDK is built on."""
MODEL = "claude-sonnet-4-6"
MESSAGES = [{"role": "user", "content": "Hello"}]
URL = "https://api.anthropic.com/v1/messages"

CASSETTES = [item.path for item in cassettes("anthropic")]


def client(handler: Callable[[Any], Any], *, max_retries: int = 0, **options: Any) -> Any:
    """A real ``anthropic.Anthropic`` whose requests go to ``handler`` (a mock transport)."""
    transport = HTTP.MockTransport(handler)
    return anthropic.Anthropic(
        api_key="sk-ant-test-replay",
        max_retries=max_retries,
        http_client=HTTP.Client(transport=transport),
        **options,
    )


def answer(status: int, body: Any, headers: dict[str, str] | None = None) -> Callable[[Any], Any]:
    """A handler answering every request with ``status`` and ``body`` (JSON, or text)."""
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    kind = "text/event-stream" if isinstance(body, str) and body.startswith("event:") else None
    kind = kind or ("application/json" if not isinstance(body, str) else "text/html")
    return lambda request: HTTP.Response(
        status, headers={"content-type": kind, **(headers or {})}, content=content
    )


def raised(handler: Callable[[Any], Any], *, stream: bool = False, **options: Any) -> Exception:
    """The exception the real client raises for one ``messages.create`` against ``handler``."""
    sdk = client(handler, **options)
    try:
        out = sdk.messages.create(model=MODEL, max_tokens=16, messages=MESSAGES, stream=stream)
        if stream:
            with out as events:
                list(events)
    except anthropic.AnthropicError as exc:
        return exc
    raise AssertionError("the client did not raise")


def sse(*events: dict[str, Any]) -> str:
    """An SSE body with one ``event:``/``data:`` pair per event."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def envelope(kind: str, message: str, **details: Any) -> dict[str, Any]:
    """An Anthropic error body (constructed) with ``type``, ``message`` and ``details``."""
    error: dict[str, Any] = {"type": kind, "message": message}
    if details:
        error["details"] = details
    return {"type": "error", "error": error, "request_id": "req_constructed"}


# -- (a) every exception class the SDK exports is covered -----------------------------------------


def _exported() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    modules = [anthropic, importlib.import_module("anthropic._exceptions")]
    for module in modules:
        for name in dir(module):
            value = getattr(module, name)
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__.partition(".")[0] == "anthropic"
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    if SDK >= (2, 5):
        table = importlib.import_module("anthropic._error_classes").ERROR_CLASSES
        for cls in table.values():
            found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


EXPORTED = _exported()


def _covering_entry(cls: type[BaseException]) -> str | None:
    instance = cls.__new__(cls)
    entry = class_entry(instance, adapter_module.CLASSES, adapter_module.NAME)
    return None if entry is None else entry[0]


def test_the_sdk_exports_the_expected_number_of_exception_classes() -> None:
    """The walk finds the status classes (and, from 2.5, the ~133 error-code classes)."""
    names = {cls.__name__ for cls in EXPORTED.values()}
    assert {"APIStatusError", "APIConnectionError", "RateLimitError", "OverloadedError"} <= names
    if SDK >= (2, 5):
        assert len(EXPORTED) > 150
        assert "EnforcedSpendLimitReachedError" in names
    else:
        # 0.x has only the status classes; OverloadedError lives in anthropic._exceptions
        assert len(EXPORTED) < 30
        assert "EnforcedSpendLimitReachedError" not in names


@pytest.mark.parametrize("qualname", sorted(EXPORTED))
def test_every_exported_exception_class_maps_more_specifically_than_the_root(qualname: str) -> None:
    """Each class reaches an entry of CLASSES other than ``AnthropicError`` through its MRO."""
    cls = EXPORTED[qualname]
    if cls.__name__ == "AnthropicError":
        assert _covering_entry(cls) == "AnthropicError"
        return
    entry = _covering_entry(cls)
    assert entry is not None, qualname
    assert entry != "AnthropicError", qualname


def test_overloaded_error_lives_where_each_sdk_line_puts_it() -> None:
    """0.49 keeps OverloadedError in anthropic._exceptions; the adapter still reads it."""
    cls = importlib.import_module("anthropic._exceptions").OverloadedError
    if SDK < (0, 112):
        assert cls.__module__ == "anthropic._exceptions"
        assert not hasattr(anthropic, "OverloadedError")
    else:
        assert cls.__module__ == "anthropic"
    assert _covering_entry(cls) == "APIStatusError"


def _code_class_cases() -> list[tuple[int, str]]:
    if SDK < (2, 5):
        return []
    table = importlib.import_module("anthropic._error_classes").ERROR_CLASSES
    return sorted((status, code) for status, code in table if code is not None)


_TYPE_OF_STATUS = {
    400: "invalid_request_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    412: "invalid_request_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "api_error",
    529: "overloaded_error",
}

_BY_CODE = {
    "enforced_spend_limit_reached": ("upstream.rate_limited", False),
    "contract_spend_limit_reached": ("upstream.rate_limited", False),
    "linked_organization_spend_limit_reached": ("upstream.rate_limited", False),
    "linked_organization_billing_unavailable": ("upstream.rate_limited", False),
    "ramp_limit_exceeded": ("upstream.rate_limited", True),
    "organization_on_hold": ("upstream.authentication_failed", False),
    "compaction_unavailable": ("upstream.overloaded", True),
}
_BY_STATUS = {
    400: ("upstream.invalid_request", False),
    403: ("upstream.authentication_failed", False),
    404: ("upstream.invalid_request", False),
    409: ("upstream.invalid_request", True),
    412: ("upstream.invalid_request", False),
    413: ("context.window_exceeded", False),
    503: ("upstream.unavailable", True),
}


def test_the_error_code_classes_exist_only_from_2_5() -> None:
    """The (status, error_code) classes are a 2.5+ feature; older lines have none."""
    cases = _code_class_cases()
    if SDK >= (2, 5):
        assert len(cases) >= 133
    else:
        assert cases == []


def test_every_error_code_class_built_by_the_sdk_gets_its_code() -> None:
    """Each (status, error_code) class, made by the SDK's own factory, maps as its code says."""
    cases = _code_class_cases()
    if SDK < (2, 5):
        assert cases == []
        return
    make = importlib.import_module("anthropic._error_classes").make_status_error
    seen = set()
    for status, error_code in cases:
        body = envelope(_TYPE_OF_STATUS[status], "constructed", error_code=error_code)
        response = HTTP.Response(status, json=body, request=HTTP.Request("POST", URL))
        exc = make(f"Error code: {status} - {body}", body=body, response=response)
        assert exc.error_code == error_code
        err = valid(normalize(exc))
        expected = _BY_CODE.get(error_code) or _BY_STATUS[status]
        assert (err.code, err.retryable) == expected, (status, error_code)
        assert err.upstream["code"] == error_code
        assert err.upstream["status"] == status
        seen.add(status)
    assert seen == set(_TYPE_OF_STATUS)


# -- (b) failures made by the real client ------------------------------------------------------


def test_a_refused_connection_is_upstream_unavailable() -> None:
    """A transport that cannot connect gives APIConnectionError, read as unavailable."""

    def refuse(request: Any) -> Any:
        raise HTTP.ConnectError("connection refused", request=request)

    exc = raised(refuse)
    assert type(exc).__name__ == "APIConnectionError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.advice) == ("upstream.unavailable", True, "retry")
    assert err.upstream["code"] == "connection_error"
    assert err.upstream["cause"] == f"{HTTP.__name__}.ConnectError"
    assert err.attempts == 1
    assert err.__cause__ is exc


def test_a_read_timeout_is_upstream_unavailable_with_code_timeout() -> None:
    """A timeout gives APITimeoutError, read as unavailable with upstream code ``timeout``."""

    def slow(request: Any) -> Any:
        raise HTTP.ReadTimeout("timed out", request=request)

    exc = raised(slow)
    assert type(exc).__name__ == "APITimeoutError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.unavailable", True)
    assert err.upstream["code"] == "timeout"
    assert "timed out" in str(err.detail).lower()


def test_attempts_count_the_sdk_retries() -> None:
    """After the SDK's own retries, ``attempts`` says how many requests were made."""
    calls = []

    def busy(request: Any) -> Any:
        calls.append(request.headers["x-stainless-retry-count"])
        body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        return HTTP.Response(529, headers={"retry-after-ms": "1"}, json=body)

    err = valid(normalize(raised(busy, max_retries=2)))
    assert calls == ["0", "1", "2"]
    assert err.attempts == 3
    assert err.code == "upstream.overloaded"
    assert err.retry_after == pytest.approx(0.001)


# Status failures no public page shows a full response for; the bodies are constructed.
STATUS_CASES: dict[str, tuple[int, Any, dict[str, str], str, bool, dict[str, Any]]] = {
    # Bedrock's ThrottlingException as AnthropicBedrock receives it (its message:
    # https://github.com/anthropics/claude-code/issues/1466): "too many tokens" is a rate here
    "bedrock_throttling_429": (
        429,
        {"message": "Too many tokens, please wait before trying again."},
        {"x-amzn-errortype": "ThrottlingException:http://internal.amazon.com/coral/"},
        "upstream.rate_limited",
        True,
        {"advice": "retry"},
    ),
    # constructed: a proxy in front (nginx's stock page) refuses the body before Anthropic
    # sees it, so there is no `request_too_large` type; the status alone decides
    "proxy_413_without_type": (
        413,
        "<html><head><title>413 Request Entity Too Large</title></head><body></body></html>",
        {"content-type": "text/html"},
        "context.window_exceeded",
        False,
        {"detail": "anthropic: HTTP 413: 413 Request Entity Too Large"},
    ),
    "billing_402": (
        402,
        envelope("billing_error", "constructed: a billing problem"),
        {},
        "upstream.rate_limited",
        False,
        {"advice": "human", "upstream_code": "billing_error"},
    ),
    "linked_org_spend_402": (
        402,
        envelope(
            "billing_error",
            "constructed",
            error_code="linked_organization_spend_limit_reached",
        ),
        {},
        "upstream.rate_limited",
        False,
        {"advice": "human"},
    ),
    "timeout_error_504": (
        504,
        envelope("timeout_error", "constructed: the request timed out"),
        {},
        "upstream.unavailable",
        True,
        {"advice": "retry", "upstream_code": "timeout_error"},
    ),
    "organization_on_hold_400": (
        400,
        envelope(
            "invalid_request_error",
            "constructed",
            error_code="organization_on_hold",
            appeal_url="https://example.invalid/appeal",
        ),
        {},
        "upstream.authentication_failed",
        False,
        {"advice": "credentials", "upstream_code": "organization_on_hold"},
    ),
    "ramp_limit_429": (
        429,
        envelope("rate_limit_error", "constructed", error_code="ramp_limit_exceeded"),
        {"retry-after": "7"},
        "upstream.rate_limited",
        True,
        {"advice": "retry", "retry_after": 7.0},
    ),
    "contract_spend_429": (
        429,
        envelope("rate_limit_error", "constructed", error_code="contract_spend_limit_reached"),
        {},
        "upstream.rate_limited",
        False,
        {"advice": "human", "upstream_code": "contract_spend_limit_reached"},
    ),
    "input_plus_max_tokens_400": (
        400,
        envelope(
            "invalid_request_error",
            "input length and `max_tokens` exceed context limit: 197626 + 8192 > 200000, "
            "decrease input length or `max_tokens` and try again",
        ),
        {},
        "context.window_exceeded",
        False,
        {
            "advice": "adjust",
            "limit": {"name": "context_tokens", "value": 200000, "observed": 205818},
        },
    ),
    "compaction_unavailable_529": (
        529,
        envelope("overloaded_error", "constructed", error_code="compaction_unavailable"),
        {},
        "upstream.overloaded",
        True,
        {"advice": "retry"},
    ),
    "request_timeout_408": (
        408,
        "constructed: request timeout",
        {"content-type": "text/plain"},
        "upstream.unavailable",
        True,
        {"detail": "constructed: request timeout"},
    ),
    "envoy_text_503": (
        503,
        "upstream connect error or disconnect/reset before headers. reset reason: overflow",
        {"content-type": "text/plain"},
        "upstream.unavailable",
        True,
        {"advice": "retry"},
    ),
    "payment_required_402_text": (
        402,
        "Payment Required",
        {"content-type": "text/plain"},
        "upstream.rate_limited",
        False,
        {"advice": "human"},
    ),
    "too_many_requests_429_text": (
        429,
        "Too Many Requests",
        {"content-type": "text/plain", "retry-after-ms": "1500"},
        "upstream.rate_limited",
        True,
        {"retry_after": 1.5},
    ),
    "unauthorized_401_text": (
        401,
        "Unauthorized",
        {"content-type": "text/plain"},
        "upstream.authentication_failed",
        False,
        {"advice": "credentials"},
    ),
    "overloaded_529_html": (
        529,
        "<html><head><title>529 Site is overloaded</title></head></html>",
        {},
        "upstream.overloaded",
        True,
        {"detail": "anthropic: HTTP 529: 529 Site is overloaded"},
    ),
    "stream_request_too_large": (
        200,
        sse({"type": "error", "error": {"type": "request_too_large", "message": "too big"}}),
        {},
        "context.window_exceeded",
        False,
        {"in_stream": True, "advice": "adjust"},
    ),
    "stream_api_error": (
        200,
        sse(
            {"type": "message_start", "message": {"id": "msg_x", "content": []}},
            {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
        ),
        {"request-id": "req_stream_header"},
        "upstream.unavailable",
        True,
        {"in_stream": True, "request_id": "req_stream_header", "status": 200},
    ),
    "stream_invalid_request": (
        200,
        sse({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}),
        {},
        "upstream.invalid_request",
        False,
        {"in_stream": True, "status": 200, "advice": "fix"},
    ),
    "stream_rate_limit": (
        200,
        sse({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
        {},
        "upstream.rate_limited",
        True,
        {"in_stream": True},
    ),
}


TABLE_CASES = [
    functools.partial(
        from_response,
        status,
        headers,
        body.encode() if isinstance(body, str) else json.dumps(body).encode(),
        provider="anthropic",
    )
    for status, body, headers, *_ in STATUS_CASES.values()
]
"""``STATUS_CASES`` as raw responses: inputs of the table-completeness test
(``test_completeness.py``); ``test_status_failures_as_raw_responses`` asserts their answers."""
SDK_MODULES = ("anthropic", "anthropic._exceptions", "anthropic._error_classes")
"""Where the SDK lines define their exception classes (``_error_classes`` from 2.5)."""


def _check_case(err: HarnessError, case: tuple[Any, ...]) -> None:
    status, _, _, code, retryable, more = case
    assert (err.code, err.retryable) == (code, retryable)
    assert err.upstream["provider"] == "anthropic"
    for key, value in more.items():
        if key == "upstream_code":
            assert err.upstream["code"] == value
        elif key in ("in_stream", "request_id", "status"):
            assert err.upstream[key] == value
        else:
            assert getattr(err, key) == value, key
    if status >= 400:
        assert err.upstream["status"] == status


@pytest.mark.parametrize("name", sorted(STATUS_CASES))
def test_status_failures_through_the_real_client(name: str) -> None:
    """The SDK raises its class for the case; the adapter reads it as the case says."""
    case = STATUS_CASES[name]
    status, body, headers, *_ = case
    exc = raised(answer(status, body, headers), stream=status == 200)
    assert isinstance(exc, anthropic.APIStatusError)
    assert exc.status_code == status
    _check_case(valid(normalize(exc)), case)


@pytest.mark.parametrize("name", sorted(STATUS_CASES))
def test_status_failures_as_raw_responses(name: str) -> None:
    """The same responses given to ``from_response`` as bytes give the same errors."""
    case = STATUS_CASES[name]
    status, body, headers, *_ = case
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    err = valid(from_response(status, headers, raw, provider="anthropic"))
    _check_case(err, case)


def test_a_response_that_fails_validation_is_an_invalid_response() -> None:
    """With strict validation, a 200 that is not a Message raises APIResponseValidationError."""
    handler = answer(200, {"unexpected": True})
    exc = raised(handler, _strict_response_validation=True)
    assert type(exc).__name__ == "APIResponseValidationError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.invalid_response", True)
    assert "in_stream" not in err.upstream
    assert err.upstream["status"] == 200


def test_client_side_exception_classes() -> None:
    """Classes raised without a response, built the way the SDK builds them."""
    request = HTTP.Request("POST", URL)
    cases: list[tuple[BaseException, str, bool]] = [
        (anthropic.APITimeoutError(request=request), "upstream.unavailable", True),
        (anthropic.APIConnectionError(request=request), "upstream.unavailable", True),
    ]
    newer = (
        "APIWebhookValidationError",
        "RetryableError",
        "CredentialsError",
        "IdentityTokenFileError",
        "WorkloadIdentityError",
    )
    # 0.49 genuinely lacks these classes; the 2.x line has all of them
    if SDK < (0, 112):
        assert not any(hasattr(anthropic, name) for name in newer)
    if SDK >= (2, 0):
        assert all(hasattr(anthropic, name) for name in newer)
    if hasattr(anthropic, "APIWebhookValidationError"):
        webhook = anthropic.APIWebhookValidationError("bad signature", request, body=None)
        cases.append((webhook, "upstream.invalid_response", False))
    if hasattr(anthropic, "RetryableError"):
        cases.append(
            (anthropic.RetryableError("middleware says retry"), "upstream.unavailable", True)
        )
    if hasattr(anthropic, "WorkloadIdentityError"):
        cases.append(
            (anthropic.CredentialsError("no credentials"), "upstream.authentication_failed", False)
        )
        cases.append(
            (
                anthropic.IdentityTokenFileError("token file missing", path=None),
                "upstream.authentication_failed",
                False,
            )
        )
        workload = anthropic.WorkloadIdentityError
        cases.append((workload("denied", status_code=401), "upstream.authentication_failed", False))
        cases.append((workload("busy", status_code=503), "upstream.unavailable", True))
    for exc, code, retryable in cases:
        err = valid(normalize(exc))
        assert (err.code, err.retryable) == (code, retryable), type(exc).__name__
        assert err.upstream["exception"].endswith(type(exc).__name__)
        assert err.detail


def test_a_bare_anthropic_error_is_a_harness_internal_error() -> None:
    """A plain AnthropicError is client-side misuse, not an upstream failure."""
    err = valid(normalize(anthropic.AnthropicError("You need to install extras")))
    assert err.code == "harness.internal_error"
    assert adapter_module.normalize(anthropic.AnthropicError("x")) is None


def test_a_user_subclass_of_an_sdk_class_is_read_through_its_mro() -> None:
    """A subclass defined outside the SDK still reaches the SDK class in its MRO."""

    class MyRateLimit(anthropic.RateLimitError):
        pass

    body = envelope("rate_limit_error", "constructed")
    response = HTTP.Response(429, json=body, request=HTTP.Request("POST", URL))
    err = valid(normalize(MyRateLimit("x", response=response, body=body)))
    assert (err.code, err.retryable) == ("upstream.rate_limited", True)
    assert err.upstream["request_id"] == "req_constructed"


def test_the_request_id_header_wins_over_the_body() -> None:
    """``request-id`` (what the SDK reports) is preferred; the body's copy is the fallback."""
    body = envelope("api_error", "constructed")
    exc = raised(answer(500, body, {"request-id": "req_header"}))
    assert valid(normalize(exc)).upstream["request_id"] == "req_header"
    exc = raised(answer(500, body))
    assert valid(normalize(exc)).upstream["request_id"] == "req_constructed"


def test_a_mid_stream_error_keeps_the_partial_stream_status() -> None:
    """The SDK reports the stream's 200; the adapter keeps it and flags ``in_stream``."""
    body = sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    exc = raised(answer(200, body), stream=True)
    assert isinstance(exc, anthropic.APIStatusError)
    assert exc.status_code == 200
    err = valid(normalize(exc))
    assert err.code == "upstream.overloaded"
    assert err.upstream["status"] == 200
    assert err.upstream["in_stream"] is True


# -- results and streams through the real client ----------------------------------------------


def _message(stop_reason: str | None, content: list[dict[str, Any]]) -> dict[str, Any]:
    """A Message body (constructed) with the given stop reason and content."""
    return {
        "id": "msg_constructed",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 3},
    }


TEXT: list[dict[str, Any]] = [{"type": "text", "text": "Hello!"}]
WEATHER: list[dict[str, Any]] = [
    {"type": "text", "text": "Checking."},
    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
]
TOOLS = [{"name": "get_weather", "input_schema": {"type": "object"}}]

RESULT_CASES: dict[str, tuple[dict[str, Any], list[Any] | None, str | None]] = {
    "end_turn_text": (_message("end_turn", TEXT), None, None),
    "end_turn_empty": (_message("end_turn", []), None, "output.empty"),
    "end_turn_blank_text": (
        _message("end_turn", [{"type": "text", "text": ""}]),
        None,
        "output.empty",
    ),
    "end_turn_thinking_only": (
        _message("end_turn", [{"type": "thinking", "thinking": "hm", "signature": "s"}]),
        None,
        "output.empty",
    ),
    "stop_sequence_empty": (_message("stop_sequence", []), None, None),
    "pause_turn_empty": (_message("pause_turn", []), None, None),
    "tool_use_offered": (_message("tool_use", WEATHER), TOOLS, None),
    "tool_use_no_tools_given": (_message("tool_use", WEATHER), None, None),
    "tool_use_unknown": (
        _message("tool_use", WEATHER),
        [{"name": "get_time", "input_schema": {"type": "object"}}],
        "output.unknown_tool",
    ),
    "tool_use_input_list": (
        _message(
            "tool_use", [{"type": "tool_use", "id": "t", "name": "get_weather", "input": [1]}]
        ),
        TOOLS,
        "output.invalid_tool_arguments",
    ),
    "tool_use_input_bad_json_text": (
        _message(
            "tool_use", [{"type": "tool_use", "id": "t", "name": "get_weather", "input": '{"c'}]
        ),
        TOOLS,
        "output.invalid_tool_arguments",
    ),
    "max_tokens": (_message("max_tokens", TEXT), None, "output.truncated"),
    "refusal": (_message("refusal", []), None, "policy.model_refusal"),
    "context_window": (
        _message("model_context_window_exceeded", TEXT),
        None,
        "context.window_exceeded",
    ),
    "unknown_reason_with_text": (_message("some_future_reason", TEXT), None, None),
    "unknown_reason_empty": (_message("some_future_reason", []), None, "output.empty"),
}


@pytest.mark.parametrize("name", sorted(RESULT_CASES))
def test_results_as_sdk_messages_and_as_json(name: str) -> None:
    """``diagnose`` gives the same answer for the SDK's Message and for its JSON."""
    body, tools, code = RESULT_CASES[name]
    sdk = client(answer(200, body, {"request-id": "req_result"}))
    message = sdk.messages.create(model=MODEL, max_tokens=16, messages=MESSAGES)
    assert type(message).__module__.startswith("anthropic")
    for result in (message, json.loads(json.dumps(body))):
        err = diagnose(result, tools=tools)
        if code is None:
            assert err is None
            assert check(result, tools=tools) is result
            continue
        assert err is not None
        assert valid(err).code == code
        assert err.result is result
        with pytest.raises(HarnessError) as caught:
            check(result, tools=tools)
        assert caught.value.code == code


def test_a_message_keeps_its_request_id_and_stop_facts() -> None:
    """A failing SDK Message reports its request id, stop reason, usage and model."""
    sdk = client(answer(200, _message("max_tokens", TEXT), {"request-id": "req_result"}))
    message = sdk.messages.create(model=MODEL, max_tokens=16, messages=MESSAGES)
    err = valid(adapter_module.diagnose(message, None) or pytest.fail("no error"))
    assert err.upstream["request_id"] == "req_result"
    assert err.upstream["stop_reason"] == "max_tokens"
    assert err.upstream["usage"] == {"input_tokens": 10, "output_tokens": 3}
    assert err.upstream["message_id"] == "msg_constructed"
    assert err.advice == "adjust"


def test_empty_output_is_retryable_and_model_recoverable() -> None:
    """``end_turn`` with nothing in it: try again (the registry's defaults for output.empty)."""
    err = valid(diagnose(_message("end_turn", []), provider="anthropic") or pytest.fail("none"))
    assert (err.retryable, err.model_recoverable, err.advice) == (True, True, "retry")


# A body that is no message, answered with status 200 (constructed: relays and proxies send
# their errors so; praxis-proxy/ai issue 940 describes one): Anthropic's documented error
# shape (its errors page), a vendor envelope, and a gateway's JSON that reports no error.
NOT_MESSAGES = [
    (
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        "upstream.overloaded",
    ),
    ({"base_resp": {"status_code": 1002, "status_msg": "x"}}, "upstream.rate_limited"),
    ({"html-message": "Network connection lost."}, "upstream.invalid_response"),
]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(("body", "code"), NOT_MESSAGES, ids=["error", "envelope", "gateway"])
def test_a_200_that_is_no_message_through_the_wrapped_client(
    body: dict[str, Any], code: str, mode: str
) -> None:
    """The SDK builds a ``Message`` of any JSON; the wrapped client raises what the body
    reports, as ``from_response`` reads it in a 2xx, with the SDK's message on the error."""
    import asyncio

    from normalize_errors import wrap

    plain = client(answer(200, body)).messages.create(model=MODEL, max_tokens=16, messages=MESSAGES)
    assert plain.content is None  # the SDK alone returns it as a message
    raw = from_response(200, {}, json.dumps(body))
    assert raw.code == code
    transport = HTTP.MockTransport(answer(200, body))
    if mode == "async":
        made: Any = anthropic.AsyncAnthropic(
            api_key="sk-ant-test-replay",
            max_retries=0,
            http_client=HTTP.AsyncClient(transport=transport),
        )

        async def call() -> Any:
            return await wrap(made).messages.create(model=MODEL, max_tokens=16, messages=MESSAGES)

        with pytest.raises(HarnessError) as caught:
            asyncio.run(call())
    else:
        with pytest.raises(HarnessError) as caught:
            wrap(client(answer(200, body))).messages.create(
                model=MODEL, max_tokens=16, messages=MESSAGES
            )
    err = valid(caught.value.problem)
    assert err.code == code
    if code != "upstream.invalid_response":  # the error it reports, by its shape's adapter
        assert err.upstream["provider"] == raw.upstream["provider"]
    assert type(err.result).__name__ == "Message"
    assert diagnose({"content": [], "stop_reason": None}, provider="anthropic") is None


def _stream_events(
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    stop_reason: str,
    stop_details: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The raw events of a stream (constructed): start, each block with its deltas, stop."""
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": _message(None, [])},
    ]
    for index, (start, deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        events.append({"type": "content_block_stop", "index": index})
    delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": None}
    if stop_details is not None:
        delta["stop_details"] = stop_details
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 9}})
    events.append({"type": "message_stop"})
    return events


def _tool(partials: list[str], name: str = "get_weather") -> tuple[dict[str, Any], list[Any]]:
    start = {"type": "tool_use", "id": "toolu_s", "name": name, "input": {}}
    return start, [{"type": "input_json_delta", "partial_json": p} for p in partials]


def _thinking(thought: str, signature: str) -> tuple[dict[str, Any], list[Any]]:
    start = {"type": "thinking", "thinking": "", "signature": ""}
    deltas = [
        {"type": "thinking_delta", "thinking": thought},
        {"type": "signature_delta", "signature": signature},
    ]
    return start, deltas


def _text(*parts: str) -> tuple[dict[str, Any], list[Any]]:
    return {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in parts]


STREAM_CASES: dict[str, tuple[list[dict[str, Any]], list[Any] | None, str | None]] = {
    "text_end_turn": (_stream_events([_text("Hel", "lo")], "end_turn"), None, None),
    "empty_end_turn": (_stream_events([], "end_turn"), None, "output.empty"),
    "tool_ok": (_stream_events([_tool(['{"city"', ': "Paris"}'])], "tool_use"), TOOLS, None),
    "tool_no_deltas": (_stream_events([_tool([])], "tool_use"), TOOLS, None),
    "tool_cut_json": (
        _stream_events([_tool(['{"city": "Pa'])], "tool_use"),
        TOOLS,
        "output.invalid_tool_arguments",
    ),
    "tool_array_json": (
        _stream_events([_tool(["[1, ", "2]"])], "tool_use"),
        TOOLS,
        "output.invalid_tool_arguments",
    ),
    "tool_unknown": (
        _stream_events([_tool(["{}"], name="rm_rf")], "tool_use"),
        TOOLS,
        "output.unknown_tool",
    ),
    "max_tokens_in_tool_json": (
        _stream_events([_tool(['{"city": "Pa'])], "max_tokens"),
        TOOLS,
        "output.truncated",
    ),
    "context_window": (
        _stream_events([_text("x")], "model_context_window_exceeded"),
        None,
        "context.window_exceeded",
    ),
    "refusal_no_details": (_stream_events([_text("I ")], "refusal"), None, "policy.model_refusal"),
    # extended thinking and nothing else: its deltas are no text and no tool input
    "thinking_only_end_turn": (
        _stream_events([_thinking("Let me see", "sig-1")], "end_turn"),
        None,
        "output.empty",
    ),
    "text_after_thinking": (
        _stream_events([_thinking("Let me see", "sig-1"), _text("Paris.")], "end_turn"),
        None,
        None,
    ),
    # a message_start that already holds content (the start of a continued turn)
    "content_in_message_start": (
        [
            {"type": "message_start", "message": _message(None, [*TEXT])},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
            {"type": "message_stop"},
        ],
        None,
        None,
    ),
    "empty_block_in_message_start": (
        [
            {"type": "message_start", "message": _message(None, [{"type": "text", "text": ""}])},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
            {"type": "message_stop"},
        ],
        None,
        "output.empty",
    ),
}


@pytest.mark.parametrize("helper", [False, True], ids=["create", "stream_helper"])
@pytest.mark.parametrize("name", sorted(STREAM_CASES))
def test_streams_through_the_real_client(name: str, helper: bool) -> None:
    """Events of ``create(stream=True)`` and of ``messages.stream()`` fold to the same answer."""
    events, tools, code = STREAM_CASES[name]
    sdk = client(answer(200, sse(*events)))
    if helper:
        with sdk.messages.stream(model=MODEL, max_tokens=16, messages=MESSAGES) as stream:
            chunks = list(stream)
    else:
        with sdk.messages.create(
            model=MODEL, max_tokens=16, messages=MESSAGES, stream=True
        ) as stream:
            chunks = list(stream)
    for given in (chunks, json.loads(json.dumps(events))):
        err = adapter_module.diagnose_stream(given, tools)
        if code is None:
            assert err is None
        else:
            assert err is not None
            assert valid(err).code == code
            assert err.result is None


def test_a_stream_error_event_given_as_data() -> None:
    """Raw SSE readers see the error event as data; it reads like its HTTP twin."""
    events = [
        {"type": "message_start", "message": _message(None, [])},
        {
            "type": "error",
            "error": {"details": None, "type": "overloaded_error", "message": "Overloaded"},
            "request_id": "req_evt",
        },
    ]
    err = valid(adapter_module.diagnose_stream(events, None) or pytest.fail("none"))
    assert (err.code, err.retryable) == ("upstream.overloaded", True)
    assert err.upstream["in_stream"] is True
    assert err.upstream["request_id"] == "req_evt"


def test_a_stream_error_event_as_the_sdks_object() -> None:
    """The same error event as the SDK's own ``ErrorResponse`` model: read the same way."""
    from anthropic.types import ErrorResponse, OverloadedError

    event = ErrorResponse(
        type="error",
        error=OverloadedError(type="overloaded_error", message="Overloaded"),
        request_id="req_obj",
    )
    start = {"type": "message_start", "message": _message(None, [])}
    err = valid(adapter_module.diagnose_stream([start, event], None) or pytest.fail("none"))
    assert (err.code, err.retryable, err.detail) == ("upstream.overloaded", True, "Overloaded")
    assert (err.upstream["in_stream"], err.upstream["request_id"]) == (True, "req_obj")


def test_a_stream_with_no_message_events_is_not_judged_or_was_cut() -> None:
    """No events at all: nothing to say; a ping and nothing more: the stream ended before
    its first output and before its stop reason, cut."""
    assert adapter_module.diagnose_stream([], None) is None
    cut = adapter_module.diagnose_stream([{"type": "ping"}], None)
    assert cut is not None
    assert (cut.code, cut.stream) == (
        "upstream.invalid_response",
        {
            "api": "messages",
            "chunks": 1,
            "phase": "before_output",
            "output_chars": 0,
            "terminal": False,
        },
    )


# -- (c) the cassettes' failures as plain JSON -------------------------------------------------


@pytest.mark.parametrize("path", CASSETTES, ids=[p.stem for p in CASSETTES])
def test_cassette_failures_as_plain_json(path: Path) -> None:
    """Each recorded failure, read from bytes or dicts without the SDK, gives ``expect``."""
    scenario = load(path)
    recorded = cassette(path)
    status, headers, body = recorded.status, recorded.headers, recorded.body
    if status >= 400 or "event: error" in body:
        err = from_response(status, headers, body.encode(), provider="anthropic")
    elif scenario.stream:
        events = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:")]
        err = adapter_module.diagnose_stream(events, scenario.tools) or pytest.fail("none")
    else:
        result = json.loads(body)
        with pytest.raises(HarnessError) as caught:
            check(result, tools=scenario.tools)
        err = caught.value
        assert err.result is result
    assert _compare(scenario.expect, valid(err)) == []


def test_the_anthropic_shape_is_detected_without_a_provider() -> None:
    """``from_response`` picks the Anthropic adapter from the body's shape alone."""
    for path in CASSETTES:
        status, body = cassette(path).status, cassette(path).body
        parsed = parse_body(body)
        if status < 400 or parsed is None:
            continue
        err = from_response(status, {}, body.encode())
        assert err.upstream["provider"] == "anthropic", path.stem
        assert err.code == load(path).expect["code"], path.stem


def test_looks_like() -> None:
    """The envelope, and Cloudflare's bare 413, are Anthropic's; OpenAI and Google are not."""
    assert adapter_module.looks_like(envelope("api_error", "x"))
    assert adapter_module.looks_like(
        {"error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}}
    )
    openai_body = {
        "error": {"message": "x", "type": "invalid_request_error", "param": None, "code": None}
    }
    assert not adapter_module.looks_like(openai_body)
    google_body = {"error": {"code": 429, "message": "x", "status": "RESOURCE_EXHAUSTED"}}
    assert not adapter_module.looks_like(google_body)
    others: list[Any] = [None, [], "text", {"type": "error"}, {"error": "text"}, 3]
    for other in others:
        assert not adapter_module.looks_like(other)
    assert adapter("openai").looks_like(openai_body)


def test_every_table_row_has_a_when_text() -> None:
    """The docs print the ``when`` of every row."""
    for row in adapter_module.TABLE:
        assert row.when
        assert row.code
