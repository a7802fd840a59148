"""The Google Gen AI adapter: SDK exceptions, raw bodies, results and streams.

Cassettes (``cassettes/google/``) cover the failures a public page shows a body for; these
tests cover the rest: every exception class the installed ``google-genai`` exports, the
failures only a real client with a mock transport can produce (the SDK's own ``TypeError``
on an error chunk without a code, non-JSON pages, transport errors it does not wrap, the
Interactions API), the same failures given as plain JSON, every row of the mapping and
every finish reason, and hostile input. Bodies marked "constructed" below are made for the
test from Google's documented error shape; the others are the cassettes' sourced bodies.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import importlib.util
import json
import pickle
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from google import genai
from google.genai import errors, types

from normalize_errors import HarnessError, wrap
from normalize_errors._facade import check, diagnose, from_response, normalize
from normalize_errors.providers import google

from ..support import cassette, cassettes, raised, valid

GENAI_MAJOR = int(genai.__version__.split(".")[0])
CASSETTES = [item.path for item in cassettes("google")]


# -- clients with a mock transport -------------------------------------------------------------

Handler = Callable[[httpx.Request], httpx.Response]


def client(handler: Handler, *, asynchronous: bool = False) -> genai.Client:
    """A real ``genai.Client`` whose HTTP traffic goes to ``handler``; no SDK retries."""
    transport = httpx.MockTransport(handler)
    options: dict[str, Any] = {
        "api_version": "v1beta",
        "retry_options": types.HttpRetryOptions(attempts=1),
    }
    if asynchronous:
        options["httpx_async_client"] = httpx.AsyncClient(transport=transport)
    else:
        options["httpx_client"] = httpx.Client(transport=transport)
    return genai.Client(api_key="test-key", http_options=types.HttpOptions(**options))


def answer(
    status: int, body: str, content_type: str = "application/json", **headers: str
) -> Handler:
    """A handler that answers every request with ``status`` and ``body``."""

    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, headers={"content-type": content_type, **headers}, content=body.encode()
        )

    return handle


def stream_failure(body: str, *, asynchronous: bool = False) -> BaseException:
    """What ``generate_content_stream`` raises for an SSE ``body``, sync or async."""
    sdk = client(answer(200, body, "text/event-stream"), asynchronous=asynchronous)
    if not asynchronous:
        return raised(lambda: list(sdk.models.generate_content_stream(model="m", contents="x")))

    async def consume() -> None:
        stream = await sdk.aio.models.generate_content_stream(model="m", contents="x")
        async for _ in stream:
            pass

    return raised(lambda: asyncio.run(consume()))


# -- (a) completeness ---------------------------------------------------------------------------

MODULES = (
    "google.genai",
    "google.genai.errors",
    "google.genai.interactions",
    "google.genai._interactions",
    "google.genai._interactions._exceptions",
    "google.genai._interactions._response",
    "google.genai._interactions_errors",
    "google.genai._interactions_continuation",
    "google.genai._gaos.lib.compat_errors",
    "google.genai._gaos.errors",
    "google.genai._api_client",
)
"""Where the three SDK lines define or re-export exception classes (each line has some)."""


def exported() -> dict[str, type[BaseException]]:
    """Every exception class (not warning) of the SDK found in ``MODULES``."""
    found: dict[str, type[BaseException]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in MODULES:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, Exception)
                    and not issubclass(value, Warning)
                    and value.__module__.startswith("google.genai")
                ):
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


EXPORTED = exported()


def test_the_sdk_exports_the_classes_the_adapter_expects() -> None:
    """The walk finds the main hierarchy and the Interactions one in every line."""
    names = {cls.__name__ for cls in EXPORTED.values()}
    assert {"APIError", "ClientError", "ServerError", "UnknownApiResponseError"} <= names
    assert {"RateLimitError", "APIConnectionError", "GeminiNextGenAPIClientError"} <= names
    assert ("ContinuationInterruptedError" in names) == (GENAI_MAJOR >= 2)


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_every_exported_exception_class_is_mapped(name: str) -> None:
    """Each class maps through CLASSES to an entry more specific than the hierarchy roots."""
    cls = EXPORTED[name]
    entry = google._errors._entry(cls.__new__(cls))
    assert entry is not None, f"{name} is not covered by CLASSES"
    key, _fixed = entry
    if cls.__name__ != "GeminiNextGenAPIClientError":
        assert key != "interactions.GeminiNextGenAPIClientError", name


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_a_bare_instance_of_every_class_gives_a_valid_error(name: str) -> None:
    """An instance whose __init__ never ran (no attributes at all) still normalizes."""
    cls = EXPORTED[name]
    exc = cls.__new__(cls)
    err = valid(normalize(exc))
    entry = google._errors._entry(cls.__new__(cls))
    assert entry is not None
    fixed = entry[1]
    if fixed is not None:
        assert (err.code, err.retryable) == fixed
    assert err.__cause__ is exc


# -- (b) through the real SDK -------------------------------------------------------------------

NO_CODE_CHUNK = (
    'data: {"candidates": [{"content": {"parts": [{"text": "Hi"}], "role": "model"}}]}\n\n'
    'data: {"error": {"message": "An internal error has occurred.", "status": "INTERNAL"}}\n\n'
)
"""Constructed: an error chunk without a numeric ``code`` after a text chunk."""


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_sdks_type_error_on_an_error_chunk_without_a_code(asynchronous: bool) -> None:
    """google-genai itself fails with a TypeError; the adapter reads the chunk it choked on."""
    exc = stream_failure(NO_CODE_CHUNK, asynchronous=asynchronous)
    assert type(exc) is TypeError
    assert "'<=' not supported" in str(exc)
    err = valid(normalize(exc, provider="google"))
    assert (err.code, err.retryable, err.advice) == ("upstream.unavailable", True, "retry")
    assert err.detail == "An internal error has occurred."
    assert err.upstream["code"] == "INTERNAL"
    assert err.upstream["in_stream"] is True
    assert err.upstream["exception"] == "builtins.TypeError"
    assert google.normalize(exc) is not None
    found = valid(normalize(exc))  # no provider given: the traceback names google-genai
    assert (found.code, found.upstream["provider"]) == ("upstream.unavailable", "google")


def test_other_type_errors_are_not_the_adapters() -> None:
    """A TypeError raised anywhere else is left to the caller (harness.internal_error)."""
    exc = raised(lambda: sorted([1, None]))  # type: ignore[type-var]  # the point
    assert google.normalize(exc) is None
    assert normalize(exc, provider="google").code == "harness.internal_error"
    assert normalize(exc).code == "harness.internal_error"
    assert google.normalize(TypeError("no traceback")) is None


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_chunk_that_is_not_json(asynchronous: bool) -> None:
    """UnknownApiResponseError: the stream delivered something that is not JSON."""
    exc = stream_failure("data: <html>oops</html>\n\n", asynchronous=asynchronous)
    assert type(exc).__name__ == "UnknownApiResponseError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.invalid_response", True)
    assert err.upstream["exception"] == "google.genai.errors.UnknownApiResponseError"


BAD_GATEWAY = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
"""Constructed: a proxy's page in front of the API."""


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_page_that_is_not_json(asynchronous: bool) -> None:
    """The SDK puts the page in details['message'] and the reason phrase in status."""
    sdk = client(answer(502, BAD_GATEWAY, "text/html"), asynchronous=asynchronous)
    if asynchronous:
        exc = raised(lambda: asyncio.run(sdk.aio.models.generate_content(model="m", contents="x")))
    else:
        exc = raised(lambda: sdk.models.generate_content(model="m", contents="x"))
    assert isinstance(exc, errors.ServerError)
    assert exc.status == "Bad Gateway"
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.unavailable", True)
    assert err.detail == "google: HTTP 502: 502 Bad Gateway"
    assert "code" not in err.upstream
    assert "<html>" not in json.dumps(err.to_dict())


QUOTA_WITHOUT_DETAILS = json.dumps(
    {"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}}
)
"""Constructed: a 429 without RetryInfo."""


def test_retry_after_header_when_there_is_no_retry_info() -> None:
    """Without RetryInfo the Retry-After header gives the wait."""
    sdk = client(answer(429, QUOTA_WITHOUT_DETAILS, **{"Retry-After": "7"}))
    exc = raised(lambda: sdk.models.generate_content(model="m", contents="x"))
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.retry_after) == ("upstream.rate_limited", True, 7.0)
    assert err.upstream["headers"] == {"retry-after": "7"}


def test_transport_errors_are_not_wrapped_and_not_the_adapters() -> None:
    """google-genai lets httpx errors through; the http adapter reads them, not this one."""

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    sdk = client(refuse)
    exc = raised(lambda: sdk.models.generate_content(model="m", contents="x"))
    assert type(exc) is httpx.ConnectError
    assert google.normalize(exc) is None


def test_interactions_api_rate_limit() -> None:
    """The Interactions API raises its own RateLimitError; the body's status still counts."""
    body = json.dumps(
        {
            "error": {
                "code": 429,
                "message": "Resource exhausted.",
                "status": "RESOURCE_EXHAUSTED",
                "details": [
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}
                ],
            }
        }
    )  # constructed
    sdk = client(answer(429, body, **{"retry-after": "0"}))
    with warnings.catch_warnings():
        # google-genai 1.x warns that the Interactions API is experimental.
        warnings.simplefilter("ignore", UserWarning)
        exc = raised(lambda: sdk.interactions.create(model="gemini-2.5-flash", input="Hello"))
    assert type(exc).__name__ == "RateLimitError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.retry_after) == ("upstream.rate_limited", True, 1.5)
    assert err.upstream["status"] == 429
    assert err.upstream["code"] == "RESOURCE_EXHAUSTED"


def interactions_errors() -> Any:
    """The module that defines the Interactions error classes in this SDK line.

    3.x: ``_interactions_errors``; 2.x: ``_gaos.lib.compat_errors``; 1.x: ``_interactions``.
    """
    for name in (
        "google.genai._interactions_errors",
        "google.genai._gaos.lib.compat_errors",
        "google.genai._interactions",
    ):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    raise AssertionError("this google-genai has no Interactions error classes")


def test_interactions_connection_and_timeout_errors() -> None:
    """Built as the SDK builds them from an httpx error (the httpx error is the cause)."""
    module = interactions_errors()
    request = httpx.Request("POST", "https://generativelanguage.googleapis.com/v1beta/interactions")
    connection = module.APIConnectionError(request=request)
    connection.__cause__ = httpx.ConnectError("refused", request=request)
    err = valid(normalize(connection))
    assert (err.code, err.retryable, err.upstream["code"]) == (
        "upstream.unavailable",
        True,
        "connection_error",
    )
    assert err.upstream["cause"] == "httpx.ConnectError"
    timeout = valid(normalize(module.APITimeoutError(request=request)))
    assert (timeout.code, timeout.upstream["code"]) == ("upstream.unavailable", "timeout")


def test_interactions_websocket_errors() -> None:
    """APIWebSocketError (3.x): by HTTP status, by close code, or a malformed frame."""
    if GENAI_MAJOR < 3:
        assert not hasattr(interactions_errors(), "APIWebSocketError")
        return
    module = interactions_errors()
    setup = valid(normalize(module.APIWebSocketError("setup failed.", http_status=403)))
    assert setup.code == "upstream.authentication_failed"
    closed = valid(normalize(module.APIWebSocketError("closed.", close_code=1011)))
    assert (closed.code, closed.retryable, closed.upstream["close_code"]) == (
        "upstream.unavailable",
        True,
        1011,
    )
    policy = valid(normalize(module.APIWebSocketError("closed.", close_code=1008)))
    assert policy.code == "upstream.invalid_request"
    frame = valid(
        normalize(module.APIWebSocketError("Live interaction server frames must contain JSON."))
    )
    assert frame.code == "upstream.invalid_response"
    server = valid(
        normalize(
            module.APIWebSocketError(
                "Quota exceeded.", close_code=1011, server_code="RESOURCE_EXHAUSTED"
            )
        )
    )
    assert (server.code, server.upstream["code"], server.upstream["close_code"]) == (
        "upstream.rate_limited",
        "RESOURCE_EXHAUSTED",
        1011,
    )


@pytest.mark.parametrize(
    ("close", "reason", "code", "retryable"),
    [
        (1011, "Internal error encountered.", "upstream.unavailable", True),
        (1006, "Abnormal closure.", "upstream.unavailable", True),
        (
            1008,
            "API key not valid. Please pass a valid API key.",
            "upstream.authentication_failed",
            False,
        ),
        (
            1011,
            "You exceeded your current quota, please check your plan.",
            "upstream.rate_limited",
            True,
        ),
        (1007, "Request contains an invalid argument.", "upstream.invalid_request", False),
        (1013, "Try again later.", "upstream.overloaded", True),
        (1011, "The model is overloaded.", "upstream.overloaded", True),
    ],
)
def test_live_api_close_codes(close: int, reason: str, code: str, retryable: bool) -> None:
    """The Live API raises APIError with a WebSocket close code and reason (as live.py does)."""
    exc = raised(lambda: errors.APIError.raise_error(close, reason, None))
    assert type(exc) is errors.APIError
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.upstream["close_code"]) == (code, retryable, close)
    assert err.detail == reason
    assert "status" not in err.upstream


def test_replay_mode_keeps_only_the_inner_error() -> None:
    """The SDK's replay client: details is the inner dict and the response a ReplayResponse."""
    from google.genai._replay_api_client import ReplayResponse

    response = ReplayResponse(
        status_code=400,
        headers={},
        body_segments=[
            {
                "error": {
                    "code": 400,
                    "message": "API key not valid. Please pass a valid API key.",
                    "status": "INVALID_ARGUMENT",
                }
            }
        ],
        sdk_response_segments=[],
    )
    exc = raised(lambda: errors.APIError.raise_for_response(response))
    assert isinstance(exc, errors.ClientError)
    assert exc.details == response.body_segments[0]["error"]
    err = valid(normalize(exc))
    assert (err.code, err.advice) == ("upstream.authentication_failed", "credentials")
    assert err.upstream["code"] == "INVALID_ARGUMENT"


def test_a_pickled_error_still_maps() -> None:
    """APIError pickles by rebuilding a bare APIError; the body decides as before."""
    body = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    again = pickle.loads(pickle.dumps(errors.ServerError(503, body, None)))
    err = valid(normalize(again))
    assert (err.code, err.upstream["status"]) == ("upstream.overloaded", 503)


def test_an_error_with_only_its_attributes() -> None:
    """No details: code, status and message are enough."""
    exc = errors.ClientError(404, None, None)
    exc.status, exc.message = "NOT_FOUND", "models/x is not found."
    err = valid(normalize(exc))
    assert (err.code, err.detail) == ("upstream.invalid_request", "models/x is not found.")


class AiohttpLikeResponse:
    """What aiohttp gives: ``.status`` and a case-insensitive multi-dict of headers."""

    status: ClassVar[int] = 429
    headers: ClassVar[dict[str, str]] = {"Retry-After": "12", "Content-Type": "application/json"}


def test_an_aiohttp_response() -> None:
    """The status may be .status, not .status_code; headers may be mixed case."""
    exc = errors.ClientError(429, json.loads(QUOTA_WITHOUT_DETAILS), AiohttpLikeResponse())
    err = valid(normalize(exc))
    assert (err.code, err.retry_after) == ("upstream.rate_limited", 12.0)
    assert "in_stream" not in err.upstream


def test_the_generated_interactions_client_errors() -> None:
    """3.x: GenAiError subclasses (normally translated by the SDK) read by status and body."""
    if importlib.util.find_spec("google.genai._gaos") is None:
        assert GENAI_MAJOR < 2  # 2.x and 3.x ship the generated client
        return
    from google.genai._gaos.errors import GenAiDefaultError, NoResponseError

    body = json.dumps({"error": {"code": "not_found", "message": "No such interaction."}})
    response = httpx.Response(
        404, content=body.encode(), request=httpx.Request("GET", "https://x.invalid")
    )
    err = valid(normalize(GenAiDefaultError("No such interaction.", response)))
    assert (err.code, err.upstream["status"], err.upstream["code"]) == (
        "upstream.invalid_request",
        404,
        "not_found",
    )
    none = valid(normalize(NoResponseError("No response received")))
    assert (none.code, none.retryable) == ("upstream.unavailable", True)


def test_continuation_interrupted() -> None:
    """Interactions continuation failed after progress (2.x/3.x): retry from the token."""
    if GENAI_MAJOR < 2:
        assert not hasattr(errors, "ContinuationInterruptedError")
        return
    cls = errors.ContinuationInterruptedError  # type: ignore[attr-defined,unused-ignore]
    exc = cls(
        "Continuation failed after progress.",
        continuation_token="tok-1",
        interaction_id="int-1",
    )
    exc.__cause__ = errors.ServerError(500, {"error": {"code": 500, "status": "INTERNAL"}}, None)
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.unavailable", True)
    assert err.upstream["continuation_token"] == "tok-1"
    assert err.upstream["cause"] == "google.genai.errors.ServerError"


def test_automatic_function_calling_errors() -> None:
    """The messages google-genai builds name the function; the tool name goes to location."""
    arguments = errors.UnknownFunctionCallArgumentError(
        "Failed to parse parameter city for function get_weather from function call part "
        "because function call argument value 5 is not compatible with parameter annotation "
        "<class 'str'>."
    )
    err = valid(normalize(arguments))
    assert (err.code, err.model_recoverable, err.advice) == (
        "output.invalid_tool_arguments",
        True,
        "feedback",
    )
    assert err.location == {"tool_name": "get_weather"}
    assert err.model_feedback is not None
    assert "get_weather" in err.model_feedback
    failed = errors.FunctionInvocationError(
        "Failed to invoke function get_weather with converted arguments {'city': 'Paris'} from "
        "model returned function call argument {'city': 'Paris'} because of error boom"
    )
    err = valid(normalize(failed))
    assert (err.code, err.location) == ("tool.execution_failed", {"tool_name": "get_weather"})
    unsupported = errors.UnsupportedFunctionError(
        "MCP tools are not supported in synchronous methods."
    )
    assert valid(normalize(unsupported)).code == "harness.internal_error"


# -- (c) the same failures as plain JSON --------------------------------------------------------


def same_verdict(err: HarnessError, expect: dict[str, Any]) -> None:
    """``err`` agrees with a cassette's expectation on the decision members."""
    assert err.code == expect["code"]
    assert err.retryable == expect["retryable"]
    assert err.advice == expect["advice"]
    if "model_recoverable" in expect:
        assert err.model_recoverable == expect["model_recoverable"]
    if "retry_after" in expect:
        assert err.retry_after == expect["retry_after"]
    if "limit" in expect:
        assert err.limit == expect["limit"]


@pytest.mark.parametrize("path", CASSETTES, ids=[p.stem for p in CASSETTES])
def test_the_cassette_bodies_as_raw_http(path: Path) -> None:
    """A raw httpx user with the status, headers and bytes gets the same verdict."""
    recorded = cassette(path)
    status, headers, body, expect = (
        recorded.status,
        recorded.headers,
        recorded.body,
        recorded.expect,
    )
    if status >= 400:
        err = valid(from_response(status, headers, body.encode(), provider="google"))
        assert google.looks_like(json.loads(body))
        same_verdict(err, expect)
        assert err.upstream["status"] == status
    elif recorded.stream:
        stream_err = google.diagnose_stream(recorded.events(), None)
        assert stream_err is not None
        same_verdict(valid(stream_err), expect)
        if expect["upstream"].get("in_stream"):
            raw = valid(from_response(status, headers, body.encode(), provider="google"))
            same_verdict(raw, expect)
            assert raw.upstream["in_stream"] is True
    else:
        result = json.loads(body)
        found = diagnose(result)
        assert found is not None
        assert found.result is result
        same_verdict(valid(found), expect)
        with pytest.raises(HarnessError) as caught:
            check(result)
        assert caught.value.code == expect["code"]


def test_rest_json_keeps_the_finish_message() -> None:
    """The SDK drops finishMessage; REST JSON keeps it for detail and model_feedback."""
    err = valid(check_error(cassette("google/finish_malformed_function_call_200").json()))
    assert err.detail is not None
    assert err.detail.startswith("Malformed function call: print(default_api.create(")
    assert err.upstream["finish_message"] == err.detail
    assert err.model_feedback is not None
    assert "Malformed function call: print(default_api.create(" in err.model_feedback


def check_error(result: Any, tools: Any = None) -> HarnessError:
    """The error ``check`` raises for ``result``."""
    with pytest.raises(HarnessError) as caught:
        check(result, provider="google", tools=tools)
    return caught.value


def test_a_successful_result_passes() -> None:
    """A candidate with text and STOP is no failure (REST JSON and SDK object)."""
    rest = {"candidates": [{"content": {"parts": [{"text": "Hi"}]}, "finishReason": "STOP"}]}
    assert check(rest) is rest
    sdk = types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(role="model", parts=[types.Part(text="Hi")]),
                finish_reason=types.FinishReason.STOP,
            )
        ]
    )
    assert check(sdk) is sdk


# -- the rows of TABLE --------------------------------------------------------------------------


def google_error(code: int, status: str, message: str, *details: dict[str, Any]) -> bytes:
    """A Google error body (constructed from the documented shape)."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = list(details)
    return json.dumps({"error": error}).encode()


def info(reason: str) -> dict[str, Any]:
    """A google.rpc.ErrorInfo detail."""
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "googleapis.com",
    }


def quota(*quota_ids: str) -> dict[str, Any]:
    """A google.rpc.QuotaFailure detail."""
    return {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [{"quotaId": q, "quotaMetric": "m"} for q in quota_ids],
    }


def retry_info(delay: str) -> dict[str, Any]:
    """A google.rpc.RetryInfo detail."""
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


ROWS = [
    # status, body, code, retryable, retry_after
    (
        403,
        google_error(
            403,
            "PERMISSION_DENIED",
            "Generative Language API has not been used.",
            info("SERVICE_DISABLED"),
        ),
        "upstream.authentication_failed",
        False,
        None,
    ),
    (
        401,
        google_error(
            401,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials.",
            info("ACCESS_TOKEN_EXPIRED"),
        ),
        "upstream.authentication_failed",
        False,
        None,
    ),
    (
        400,
        google_error(400, "INVALID_ARGUMENT", "API key expired. Please renew the API key."),
        "upstream.authentication_failed",
        False,
        None,
    ),
    (
        429,
        google_error(
            429,
            "RESOURCE_EXHAUSTED",
            "Quota exceeded.",
            quota("GenerateRequestsPerDayPerProjectPerModel"),
            retry_info("20s"),
        ),
        "upstream.rate_limited",
        False,
        20.0,  # a wait the provider states is reported, though waiting it out cannot help
    ),
    (
        429,
        google_error(
            429,
            "RESOURCE_EXHAUSTED",
            "Quota exceeded.",
            quota("GenerateRequestsPerMinutePerProjectPerModel"),
            retry_info("26.5s"),
        ),
        "upstream.rate_limited",
        True,
        26.5,
    ),
    (
        429,
        google_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded.\nPlease retry in 38.96s."),
        "upstream.rate_limited",
        True,
        38.96,
    ),
    (
        429,
        google_error(
            429,
            "RESOURCE_EXHAUSTED",
            "Quota exceeded for metric: x, limit: 0, model: y\nPlease retry in 38.96s.",
        ),
        "upstream.rate_limited",
        False,
        38.96,  # reported as stated; `retryable` says waiting cannot help
    ),
    (429, b"<html><title>Too Many Requests</title></html>", "upstream.rate_limited", True, None),
    (
        None,
        json.dumps(
            {"error": {"message": "Resource has been exhausted (e.g. check quota)."}}
        ).encode(),
        "upstream.rate_limited",
        True,
        None,
    ),
    (
        400,
        google_error(400, "FAILED_PRECONDITION", "Please enable billing."),
        "upstream.authentication_failed",
        False,
        None,
    ),
    (
        403,
        b"<html><title>403 Forbidden</title></html>",
        "upstream.authentication_failed",
        False,
        None,
    ),
    (
        400,
        google_error(
            400, "INVALID_ARGUMENT", "Request payload size exceeds the limit: 20971520 bytes."
        ),
        "context.window_exceeded",
        False,
        None,
    ),
    (
        500,
        google_error(500, "INTERNAL", "The model is overloaded."),
        "upstream.overloaded",
        True,
        None,
    ),
    (
        504,
        google_error(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
        "upstream.unavailable",
        True,
        None,
    ),
    (500, google_error(500, "UNKNOWN", "Unknown error."), "upstream.unavailable", True, None),
    (500, google_error(500, "DATA_LOSS", "Data loss."), "upstream.unavailable", True, None),
    (
        499,
        google_error(499, "CANCELLED", "The operation was cancelled."),
        "upstream.unavailable",
        True,
        None,
    ),
    (
        409,
        google_error(409, "ABORTED", "The operation was aborted."),
        "upstream.invalid_request",
        True,
        None,
    ),
    (
        409,
        google_error(409, "ALREADY_EXISTS", "Cached content already exists."),
        "upstream.invalid_request",
        True,
        None,
    ),
    (
        400,
        google_error(400, "OUT_OF_RANGE", "Out of range."),
        "upstream.invalid_request",
        False,
        None,
    ),
    (
        501,
        google_error(501, "UNIMPLEMENTED", "Not implemented."),
        "upstream.invalid_request",
        False,
        None,
    ),
    (
        400,
        google_error(
            400,
            "INVALID_ARGUMENT",
            "Unable to submit request because it has a "
            "maxOutputTokens value of 100000 but the supported range is from 1 "
            "(inclusive) to 65537 (exclusive).",
        ),
        "upstream.invalid_request",
        False,
        None,
    ),
    (502, b"<html><title>502 Bad Gateway</title></html>", "upstream.unavailable", True, None),
]

TABLE_CASES = [
    functools.partial(
        from_response, status, {"content-type": "application/json"}, body, provider="google"
    )
    for status, body, *_ in ROWS
]
"""``ROWS`` as calls: inputs of the table-completeness test (``test_completeness.py``);
``test_table_rows`` asserts their answers."""
SDK_MODULES = MODULES


@pytest.mark.parametrize(("status", "body", "code", "retryable", "wait"), ROWS)
def test_table_rows(
    status: int | None, body: bytes, code: str, retryable: bool, wait: float | None
) -> None:
    """Each row of TABLE (and the status fallback) on a body that needs it."""
    err = valid(
        from_response(status, {"content-type": "application/json"}, body, provider="google")
    )
    assert (err.code, err.retryable, err.retry_after) == (code, retryable, wait)


def test_retry_info_wins_over_retry_after() -> None:
    """RetryInfo.retryDelay, then Retry-After, then the message."""
    body = google_error(429, "RESOURCE_EXHAUSTED", "Please retry in 9s.", retry_info("26s"))
    err = from_response(429, {"Retry-After": "3"}, body, provider="google")
    assert err.retry_after == 26.0
    assert err.upstream["retry_delay"] == "26s"
    body = google_error(429, "RESOURCE_EXHAUSTED", "Please retry in 9s.")
    assert from_response(429, {"Retry-After": "3"}, body, provider="google").retry_after == 3.0
    assert from_response(429, {}, body, provider="google").retry_after == 9.0


def test_legacy_errors_list_and_a_list_wrapped_body() -> None:
    """streamGenerateContent without alt=sse wraps the error in a list; "errors" reasons count."""
    body = [
        {
            "error": {
                "code": 429,
                "message": "Resource exhausted. Please try again later.",
                "errors": [{"message": "...", "domain": "global", "reason": "rateLimitExceeded"}],
                "status": "RESOURCE_EXHAUSTED",
            }
        }
    ]  # constructed
    assert google.looks_like(body)
    err = valid(from_response(429, {}, json.dumps(body), provider="google"))
    assert (err.code, err.upstream["type"]) == ("upstream.rate_limited", "rateLimitExceeded")


def test_interactions_string_codes() -> None:
    """An Interactions-style body whose code is a string still gives its status's error."""
    body = {"error": {"code": "invalid_request", "message": "Bad input."}}  # constructed
    err = valid(from_response(400, {}, json.dumps(body), provider="google"))
    assert (err.code, err.upstream["code"]) == ("upstream.invalid_request", "invalid_request")
    assert not google.looks_like(body)


def test_looks_like() -> None:
    """Google bodies, not OpenAI's or Anthropic's."""
    assert google.looks_like(json.loads(google_error(429, "RESOURCE_EXHAUSTED", "x")))
    assert google.looks_like({"error": {"code": 400, "details": [info("API_KEY_INVALID")]}})
    assert not google.looks_like({"error": {"message": "x", "type": "invalid_request_error"}})
    assert not google.looks_like({"type": "error", "error": {"type": "overloaded_error"}})
    assert not google.looks_like({"error": {"code": 502, "status": "Bad Gateway"}})
    assert not google.looks_like(None)
    assert not google.looks_like([])


# -- finish and block reasons -------------------------------------------------------------------


def result(finish: str | None, *parts: dict[str, Any], **candidate: Any) -> dict[str, Any]:
    """A REST GenerateContentResponse with one candidate (constructed)."""
    body: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, **candidate}
    if finish is not None:
        body["finishReason"] = finish
    return {"candidates": [body], "responseId": "resp-1", "modelVersion": "gemini-2.5-flash"}


TEXT = {"text": "Hello"}
FINISHES = [
    ("MAX_TOKENS", [TEXT], "output.truncated", False, "adjust"),
    *[
        (reason, [], "policy.content_filtered", False, "human")
        for reason in sorted(
            {
                "SAFETY",
                "RECITATION",
                "BLOCKLIST",
                "PROHIBITED_CONTENT",
                "SPII",
                "IMAGE_SAFETY",
                "IMAGE_PROHIBITED_CONTENT",
                "IMAGE_RECITATION",
                "MODEL_ARMOR",
                "ESCALATION",
            }
        )
    ],
    ("MALFORMED_FUNCTION_CALL", [], "output.invalid_tool_arguments", False, "feedback"),
    ("UNEXPECTED_TOOL_CALL", [], "output.unknown_tool", False, "feedback"),
    (
        "TOO_MANY_TOOL_CALLS",
        [{"functionCall": {"name": "search", "args": {}}}],
        "loop.budget_exceeded",
        False,
        "adjust",
    ),
    ("MISSING_THOUGHT_SIGNATURE", [], "upstream.invalid_request", False, "fix"),
    ("LANGUAGE", [], "upstream.invalid_request", False, "fix"),
    ("MALFORMED_RESPONSE", [], "upstream.invalid_response", True, "retry"),
    ("PUP_LIMITED_DISABLED", [], "upstream.authentication_failed", False, "credentials"),
    ("NO_IMAGE", [TEXT], "output.empty", True, "retry"),
    ("STOP", [], "output.empty", True, "retry"),
    ("OTHER", [], "output.empty", True, "retry"),
    (None, [], "output.empty", True, "retry"),
    ("SOMETHING_NEW", [], "output.empty", True, "retry"),
    ("STOP", [{"text": "thinking...", "thought": True}], "output.empty", True, "retry"),
]


@pytest.mark.parametrize(("finish", "parts", "code", "retryable", "advice"), FINISHES)
def test_finish_reasons(
    finish: str | None, parts: list[dict[str, Any]], code: str, retryable: bool, advice: str
) -> None:
    """Every failure finish reason, and empty output under any other."""
    err = valid(check_error(result(finish, *parts)))
    assert (err.code, err.retryable, err.advice) == (code, retryable, advice)
    assert err.upstream["stop_reason"] == (finish or "none")
    assert err.upstream["request_id"] == "resp-1"


def test_finish_reasons_that_are_not_failures() -> None:
    """Unknown or other reasons with usable output; function calls and images count."""
    assert diagnose(result("SOMETHING_NEW", TEXT)) is None
    assert diagnose(result("OTHER", TEXT)) is None
    assert diagnose(result("STOP", {"functionCall": {"name": "f", "args": {"a": 1}}})) is None
    assert (
        diagnose(result("STOP", {"inlineData": {"mimeType": "image/png", "data": "AA=="}})) is None
    )
    assert diagnose(result("CONTINUATION", TEXT)) is None


def test_too_many_tool_calls_limit() -> None:
    """The limit is named tool_calls; its value is the calls the candidate made."""
    calls = [{"functionCall": {"name": "search", "args": {}}}] * 3
    err = check_error(result("TOO_MANY_TOOL_CALLS", *calls))
    assert err.limit == {"name": "tool_calls", "value": 3}
    assert check_error(result("TOO_MANY_TOOL_CALLS")).limit is None


def test_unexpected_tool_call_lists_the_offered_tools() -> None:
    """The feedback names the declared functions when the caller passes them."""
    tools = [{"functionDeclarations": [{"name": "get_weather"}, {"name": "book"}]}]
    err = check_error(result("UNEXPECTED_TOOL_CALL"), tools)
    assert err.model_feedback is not None
    assert "book, get_weather" in err.model_feedback


def test_function_call_outside_the_offered_tools() -> None:
    """A call to a function that was not declared is output.unknown_tool."""
    call = {"functionCall": {"name": "delete_everything", "args": {}, "id": "call-1"}}
    tools = [types.Tool(function_declarations=[types.FunctionDeclaration(name="get_weather")])]
    err = valid(check_error(result("STOP", call), tools))
    assert err.code == "output.unknown_tool"
    assert err.location == {"tool_name": "delete_everything", "tool_call_id": "call-1"}
    bad_args = {"functionCall": {"name": "get_weather", "args": "[1, 2]"}}
    assert check_error(result("STOP", bad_args), tools).code == "output.invalid_tool_arguments"


def test_safety_ratings_and_messages_go_upstream() -> None:
    """The ratings that blocked, the finish and block messages (constructed bodies)."""
    ratings = [
        {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "MEDIUM", "blocked": True},
    ]
    err = check_error(result("SAFETY", safetyRatings=ratings, finishMessage="Blocked."))
    assert err.upstream["safety_ratings"] == [
        {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "MEDIUM", "blocked": True}
    ]
    assert (err.detail, err.upstream["finish_message"]) == ("Blocked.", "Blocked.")
    blocked = {"promptFeedback": {"blockReason": "OTHER", "blockReasonMessage": "No."}}
    err = check_error(blocked)
    assert (err.code, err.detail, err.upstream["block_reason_message"]) == (
        "policy.content_filtered",
        "No.",
        "No.",
    )
    assert (
        diagnose(
            {
                "promptFeedback": {"blockReason": "BLOCKED_REASON_UNSPECIFIED"},
                "candidates": [{"content": {"parts": [TEXT]}}],
            },
            provider="google",
        )
        is None
    )
    assert check_error({"usageMetadata": {"promptTokenCount": 3}}).code == "output.empty"


def test_sdk_objects() -> None:
    """SDK result objects read like their JSON twins (snake_case, enums)."""
    response = types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(role="model", parts=[types.Part(text="Par")]),
                finish_reason=types.FinishReason.MAX_TOKENS,
            )
        ],
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=5, candidates_token_count=2
        ),
    )
    err = valid(check_error(response))
    assert (err.code, err.upstream["stop_reason"]) == ("output.truncated", "MAX_TOKENS")
    assert err.upstream["usage"] == {"prompt_token_count": 5, "candidates_token_count": 2}
    assert err.detail == "The output stopped at the output token limit."
    blocked = types.GenerateContentResponse(
        prompt_feedback=types.GenerateContentResponsePromptFeedback(
            block_reason=types.BlockedReason.PROHIBITED_CONTENT
        )
    )
    err = valid(check_error(blocked))
    assert err.upstream["block_reason"] == "PROHIBITED_CONTENT"


# -- streams ------------------------------------------------------------------------------------


def chunk(text: str | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """One REST stream chunk (constructed)."""
    candidate: dict[str, Any] = {"index": 0}
    if text is not None:
        candidate["content"] = {"role": "model", "parts": [{"text": text}]}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **extra}


def test_stream_fold() -> None:
    """The last chunk's finish reason, the parts of all chunks, prompt feedback of any."""
    assert google.diagnose_stream([chunk("Hel"), chunk("lo", "STOP")], None) is None
    truncated = google.diagnose_stream([chunk("Hel"), chunk("lo"), chunk(None, "MAX_TOKENS")], None)
    assert truncated is not None
    assert truncated.code == "output.truncated"
    assert truncated.result is None
    empty = google.diagnose_stream([chunk(None), chunk(None, "STOP")], None)
    assert empty is not None
    assert empty.code == "output.empty"
    blocked = google.diagnose_stream(
        [{"promptFeedback": {"blockReason": "SAFETY"}}, chunk(None, "STOP")], None
    )
    assert blocked is not None
    assert blocked.upstream["block_reason"] == "SAFETY"
    assert google.diagnose_stream([], None) is None
    cut = google.diagnose_stream([chunk("Hel")], None)  # no finishReason: it was cut
    assert cut is not None
    assert (cut.code, cut.upstream["stream"]["output_chars"]) == ("upstream.invalid_response", 3)


def test_stream_error_chunk_as_json() -> None:
    """An {"error": ...} chunk among REST chunks: its body decides, in_stream, no status."""
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    err = google.diagnose_stream([chunk("Hi"), error], None)
    assert err is not None
    assert (err.code, err.upstream["in_stream"]) == ("upstream.overloaded", True)
    assert "status" not in err.upstream


def test_stream_of_sdk_objects_with_an_unknown_tool() -> None:
    """SDK chunks: a function call to an undeclared tool in the last chunk."""
    first = types.GenerateContentResponse(
        candidates=[
            types.Candidate(content=types.Content(role="model", parts=[types.Part(text="x")]))
        ]
    )
    last = types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(
                    role="model",
                    parts=[types.Part(function_call=types.FunctionCall(name="rm", args={}))],
                ),
                finish_reason=types.FinishReason.STOP,
            )
        ]
    )
    err = google.diagnose_stream([first, last], ["get_weather"])
    assert err is not None
    assert err.code == "output.unknown_tool"
    assert err.location == {"tool_name": "rm"}


def test_a_streamed_answer_cut_at_max_tokens_keeps_its_response_id() -> None:
    """The recorded MAX_TOKENS answer (cassette ``finish_max_tokens_thinking_200``) sent as
    the one event of a stream: the typed error at the stream's end names its responseId."""
    from normalize_errors import wrap

    found = cassette("google/finish_max_tokens_thinking_200")
    body = "data: " + json.dumps(json.loads(found.content)) + "\r\n\r\n"
    sdk = wrap(client(answer(200, body, "text/event-stream")))
    stream = sdk.models.generate_content_stream(model="gemini-2.5-pro", contents="x")
    err = raised(lambda: list(stream))
    assert isinstance(err, HarnessError)
    assert err.code == "output.truncated"
    assert err.upstream["request_id"] == "Dj9LaPCjJsCvgLUPgeGuqAU"


def test_field_violations_of_a_bad_request_are_kept() -> None:
    """A list-wrapped 400 with a ``google.rpc.BadRequest`` detail: the field violations ride
    along. The body is verbatim from https://github.com/Alishahryar1/free-claude-code/issues/542
    (Gemini's OpenAI-compatible endpoint; the status is the body's own ``code``)."""
    unknown = 'Invalid JSON payload received. Unknown name "google": Cannot find field.'
    detail = {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [{"description": unknown}],
    }
    body = [
        {
            "error": {
                "code": 400,
                "message": unknown,
                "status": "INVALID_ARGUMENT",
                "details": [detail],
            }
        }
    ]
    err = valid(from_response(400, {}, json.dumps(body), provider="google"))
    assert (err.code, err.retryable) == ("upstream.invalid_request", False)
    assert err.upstream["field_violations"] == [{"description": unknown}]


def test_details_that_carry_nothing_usable_add_nothing() -> None:
    """google.rpc details whose members are missing or of the wrong type (an ErrorInfo with
    no reason or domain, a QuotaFailure whose violations name no quota, a RetryInfo whose
    delay is a number, an empty BadRequest and Help) are read past: the status decides, and
    ``upstream`` gains none of their members. The body is constructed from the documented
    shapes, with those members left out on purpose."""
    details: list[dict[str, Any]] = [
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "metadata": {"service": "x"}},
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"x": 1}, 7]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": 26},
        {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": ["x"]},
        {"@type": "type.googleapis.com/google.rpc.Help", "links": [{"description": "docs"}]},
    ]
    body = google_error(429, "RESOURCE_EXHAUSTED", "Resource exhausted.", *details)
    err = valid(from_response(429, {}, body, provider="google"))
    assert (err.code, err.retryable, err.retry_after) == ("upstream.rate_limited", True, None)
    assert err.upstream["metadata"] == {"service": "x"}
    for member in ("domain", "retry_delay", "field_violations", "help", "type"):
        assert member not in err.upstream, member
    assert err.upstream.get("violations", []) == []


def test_a_string_code_does_not_replace_the_canonical_status() -> None:
    """A body with both a canonical ``status`` and a string ``code`` (constructed): the
    status stays the vendor code; the string code is still matched as an id."""
    body = {
        "error": {
            "code": "quota_exceeded",
            "status": "RESOURCE_EXHAUSTED",
            "message": "Quota exceeded.",
        }
    }
    err = valid(from_response(429, {}, json.dumps(body), provider="google"))
    assert (err.code, err.upstream["code"]) == ("upstream.rate_limited", "RESOURCE_EXHAUSTED")


def test_several_candidates_fail_only_when_every_candidate_fails() -> None:
    """``candidate_count=2``: one usable candidate is an answer; when both fail, the first
    one's error."""
    text = {"content": {"role": "model", "parts": [{"text": "Hi"}]}, "finishReason": "STOP"}
    cut = {"content": {"role": "model", "parts": [{"text": "H"}]}, "finishReason": "MAX_TOKENS"}
    blocked = {"finishReason": "SAFETY", "index": 1}
    for candidates, code in (
        ([text, blocked], None),
        ([blocked, text], None),
        ([cut, blocked], "output.truncated"),
        ([blocked, cut], "policy.content_filtered"),
    ):
        body = json.dumps({"candidates": candidates, "modelVersion": "gemini-2.5-flash"})
        wrapped = wrap(client(answer(200, body)))
        config = types.GenerateContentConfig(candidate_count=2)
        call = functools.partial(
            wrapped.models.generate_content, model="gemini-2.5-flash", contents="hi", config=config
        )
        if code is None:
            assert len(call().candidates or []) == 2
        else:
            err = raised(call)
            assert isinstance(err, HarnessError)
            assert err.problem.code == code


# -- an SDK's printed error text, pasted with no status (Provider.printed) ---------------------


@pytest.mark.parametrize(
    "name", ["api_key_invalid_400", "api_key_suspended_403", "rate_limit_free_tier_daily_429"]
)
def test_the_sdks_printed_error_text_reads_like_its_exception(name: str) -> None:
    """``str()`` of the real client's ``APIError`` (``400 INVALID_ARGUMENT. {<the response
    as a Python dict repr>}``), read as a status-less text, gives the exception's code. (A
    text quoting no ``google.rpc`` details is not known as Google's: it reads as plain text.)"""
    recorded = cassette(f"google/{name}")
    exc = raised(
        lambda: client(answer(recorded.status, recorded.content.decode())).models.generate_content(
            model="gemini-2.5-flash", contents="Hi"
        )
    )
    assert isinstance(exc, errors.APIError)
    text = str(exc)
    err = valid(from_response(None, {}, text))
    assert err.upstream["provider"] == "google"
    assert err.code == normalize(exc).code


def test_grpc_and_js_sdk_texts_give_their_reason_and_status() -> None:
    """google.api_core's gRPC text and the JS SDK's text quote the ErrorInfo reason."""
    grpc = '400 API key expired. [reason: "API_KEY_INVALID"\ndomain: "googleapis.com"\n]'
    err = valid(from_response(None, {}, grpc))
    assert (err.code, err.upstream["status"]) == ("upstream.authentication_failed", 400)
    js = (
        "[GoogleGenerativeAI Error]: Error fetching from [429 Too Many Requests] Resource "
        'exhausted. [{"@type":"type.googleapis.com/google.rpc.ErrorInfo",'
        '"reason":"RATE_LIMIT_EXCEEDED"}]'
    )
    assert valid(from_response(None, {}, js)).upstream["status"] == 429
