"""The Cohere adapter: every exception class the SDK exports, the judgement calls without a
recording of their own (a monthly trial limit, 498, 499), finish reasons and streams, and
wrap() of ``cohere.ClientV2``/``AsyncClientV2``. The recorded failures replay through the real
client in ``test_cassettes.py`` (``cassettes/cohere``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

cohere = pytest.importorskip("cohere")
httpx = pytest.importorskip("httpx")

from normalize_errors import (  # noqa: E402
    HarnessError,
    UpstreamRateLimitedError,
    check,
    diagnose,
    from_response,
    normalize,
    wrap,
)
from normalize_errors._reading._tables import class_entry  # noqa: E402
from normalize_errors.providers import cohere as adapter  # noqa: E402

from ..support import is_instance, raised, recorded, valid  # noqa: E402

MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]
NO_RETRIES: Any = {"max_retries": 0}


SDK_MODULES = (
    "cohere",
    "cohere.errors",
    "cohere.core.api_error",
    "cohere.core.parse_error",
    "cohere.core.http_sse._exceptions",
)
"""For ``test_completeness``: where the SDK's exception classes live (its ``__all__`` is lazy)."""
ROOT_READS_STATUS = True
"""For ``test_completeness``: ``ApiError``, the SDK's root, is its HTTP error (status, body,
headers); the per-status classes are read through it."""


def exported() -> list[type[BaseException]]:
    """Every public exception class of the SDK: its ``__all__`` (loaded lazily) and ``core``."""
    import importlib

    found: dict[str, type[BaseException]] = {}
    names = [(cohere, name) for name in getattr(cohere, "__all__", ())]
    for module_name in (
        "cohere.core.api_error",
        "cohere.core.parse_error",
        "cohere.core.http_sse._exceptions",
    ):
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # an older SDK line without it
            continue
        names += [(module, name) for name in vars(module)]
    for module, name in names:
        value = getattr(module, name, None)
        if (
            isinstance(value, type)
            and issubclass(value, BaseException)
            and value.__module__.startswith("cohere")
        ):
            found[name] = value
    return list(found.values())


@pytest.mark.parametrize("cls", exported(), ids=lambda c: c.__name__)
def test_every_exported_exception_class_has_a_mapping(cls: type[BaseException]) -> None:
    entry = class_entry(cls.__new__(cls), adapter.CLASSES, "cohere")
    assert entry is not None, cls
    valid(normalize(cls.__new__(cls)))


def client(
    status: int, body: Any, mode: str = "sync", content_type: str = "application/json"
) -> Any:
    """A real ClientV2 (or AsyncClientV2) whose transport answers ``status``/``body``."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()

    def handler(request: Any) -> Any:
        return httpx.Response(status, headers={"content-type": content_type}, content=raw)

    transport = httpx.MockTransport(handler)
    if mode == "async":
        return cohere.AsyncClientV2(
            api_key="test-key", httpx_client=httpx.AsyncClient(transport=transport)
        )
    return cohere.ClientV2(api_key="test-key", httpx_client=httpx.Client(transport=transport))


def failure(status: int, message: str) -> HarnessError:
    sdk = client(status, {"message": message})
    exc = raised(
        lambda: sdk.chat(model="command-a-03-2025", messages=MESSAGES, request_options=NO_RETRIES)
    )
    return valid(normalize(exc))


MONTHLY = "You are using a Trial key, which is limited to 1000 API calls / month."
TABLE_CASES = [
    lambda: failure(429, MONTHLY),
    lambda: failure(498, "invalid api token"),
    lambda: failure(499, "request cancelled"),
]
"""For ``test_completeness``: the rows these failures decide (asserted below)."""


def test_a_monthly_trial_limit_is_not_retryable() -> None:
    """The per-minute 429 passes; the monthly one (1,000 calls a month on a trial key,
    https://github.com/cohere-ai/cohere-developer-experience/pull/199) does not."""
    monthly = failure(429, MONTHLY)
    assert (monthly.code, monthly.retryable, monthly.advice) == (
        "upstream.rate_limited",
        False,
        "human",
    )
    minute = failure(
        429, "You are past the per minute request limit, please wait and try again later."
    )
    assert (minute.code, minute.retryable) == ("upstream.rate_limited", True)


def test_cohere_statuses() -> None:
    """498 is Cohere's invalid token; 499 a request closed before the answer."""
    token = failure(498, "invalid api token")
    assert (token.code, token.upstream["exception"].rpartition(".")[2]) == (
        "upstream.authentication_failed",
        "InvalidTokenError",
    )
    closed = failure(499, "request cancelled")
    assert (closed.code, closed.retryable) == ("upstream.unavailable", True)


def test_raw_responses_are_read_when_named() -> None:
    status, headers, body = recorded("cohere", "too_many_tokens_400")
    err = from_response(status, headers, body, provider="cohere")
    assert (err.code, err.upstream["provider"]) == ("context.window_exceeded", "cohere")


@pytest.mark.parametrize("row", adapter.STOP_REASONS, ids=lambda r: r.signal)
def test_stop_reason_rows(row: Any) -> None:
    err = diagnose(row.example, provider="cohere", tools=row.tools)
    assert err is not None
    assert err.code == row.code


def test_check_of_an_sdk_result_finds_cohere_by_itself() -> None:
    """A ChatResponse of the SDK is recognised without provider=."""
    status, _, body = recorded("cohere", "finish_max_tokens_200")
    result = client(status, body).chat(model="m", messages=MESSAGES)
    assert type(result).__module__.startswith("cohere.")
    err = raised(lambda: check(result))
    assert isinstance(err, HarnessError)
    assert (err.code, err.upstream["provider"]) == ("output.truncated", "cohere")
    # the SDK types token counts as floats (71.0): they are reported as the counts they are
    assert err.upstream["usage"] == {"input_tokens": 71, "output_tokens": 16}
    fine = json.loads(body)
    fine["finish_reason"] = "COMPLETE"
    ok = client(200, fine).chat(model="m", messages=MESSAGES)
    assert check(ok) is ok


def sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


TOOL_STREAM: list[dict[str, Any]] = [
    {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
    {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will look it up."}}},
    {
        "type": "tool-call-start",
        "index": 0,
        "delta": {
            "message": {
                "tool_calls": {
                    "id": "web_search_1",
                    "type": "function",
                    "function": {"name": "web_search", "arguments": ""},
                }
            }
        },
    },
    {
        "type": "tool-call-delta",
        "index": 0,
        "delta": {"message": {"tool_calls": {"function": {"arguments": '{"query": '}}}},
    },
    {
        "type": "tool-call-delta",
        "index": 0,
        "delta": {"message": {"tool_calls": {"function": {"arguments": '"euro 2024"}'}}}},
    },
    {"type": "tool-call-end", "index": 0},
    {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}},
]


def test_a_streamed_tool_call() -> None:
    """Tool-call fragments are joined and checked against the offered tools."""
    events = list(
        client(200, sse(TOOL_STREAM), content_type="text/event-stream").chat_stream(
            model="m", messages=MESSAGES
        )
    )
    assert adapter.diagnose_stream(events, None) is None  # valid JSON, no tools to check
    tools = [{"type": "function", "function": {"name": "get_time", "parameters": {}}}]
    err = adapter.diagnose_stream(events, tools)
    assert err is not None
    assert err.code == "output.unknown_tool"
    assert err.location == {"tool_name": "web_search", "tool_call_id": "web_search_1"}


def test_wrap_of_a_client_v2() -> None:
    """Errors are drop-ins of the SDK's classes; results and streams are checked."""
    status, _, body = recorded("cohere", "trial_key_rate_limit_429")
    wrapped = wrap(client(status, body))
    err = raised(lambda: wrapped.chat(model="m", messages=MESSAGES, request_options=NO_RETRIES))
    assert isinstance(err, cohere.TooManyRequestsError)
    assert is_instance(err, UpstreamRateLimitedError)
    assert err.status_code == 429
    status, _, body = recorded("cohere", "finish_max_tokens_200")
    err = raised(lambda: wrap(client(status, body)).chat(model="m", messages=MESSAGES))
    assert isinstance(err, HarnessError)
    assert err.code == "output.truncated"
    _, _, stream = recorded("cohere", "stream_finish_max_tokens")
    chunks = wrap(client(200, stream, content_type="text/event-stream")).chat_stream(
        model="m", messages=MESSAGES
    )
    err = raised(lambda: list(chunks))
    assert isinstance(err, HarnessError)
    assert err.code == "output.truncated"
    assert err.stream is not None
    assert (err.stream["chunks"], err.stream["terminal"]) == (5, True)


async def test_wrap_of_an_async_client_v2() -> None:
    status, _, body = recorded("cohere", "finish_max_tokens_200")
    wrapped = wrap(client(status, body, mode="async"))
    with pytest.raises(HarnessError) as caught:
        await wrapped.chat(model="m", messages=MESSAGES)
    assert caught.value.code == "output.truncated"
    status, _, body = recorded("cohere", "billing_limit_402")
    wrapped = wrap(client(status, body, mode="async"))
    with pytest.raises(HarnessError) as failed:
        await wrapped.chat(model="m", messages=MESSAGES, request_options=NO_RETRIES)
    assert (failed.value.problem.code, failed.value.retryable) == ("upstream.rate_limited", False)


def test_the_generating_methods_exist() -> None:
    from normalize_errors._wrapping._wrap import generates

    for cls in (cohere.ClientV2, cohere.AsyncClientV2):
        owner: Any = object.__new__(cls)
        for method in ("chat", "chat_stream"):
            assert callable(getattr(cls, method))
            assert generates(owner, method)
        assert not generates(owner, "embed")


# -- the v1 API (cohere.Client): its results and its NDJSON stream ------------------------------


def v1_client(content: bytes, content_type: str) -> Any:
    """A real v1 ``cohere.Client`` whose transport answers 200 with ``content``."""

    def handler(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": content_type}, content=content)

    transport = httpx.MockTransport(handler)
    return cohere.Client(api_key="test-key", httpx_client=httpx.Client(transport=transport))


# The v1 stream's events as Cohere's v1-to-v2 migration guide names them (event_type
# "text-generation" with ``text``, "stream-end" with ``finish_reason`` and the whole
# ``response``); the texts and ids are constructed, one text event left empty.
V1_STREAM: list[dict[str, Any]] = [
    {"is_finished": False, "event_type": "stream-start", "generation_id": "g-1"},
    {"is_finished": False, "event_type": "text-generation", "text": "The fifty"},
    {"is_finished": False, "event_type": "text-generation", "text": ""},
    {
        "is_finished": True,
        "event_type": "stream-end",
        "finish_reason": "MAX_TOKENS",
        "response": {"text": "The fifty", "generation_id": "g-1"},
    },
]


def test_a_v1_stream_is_read_too() -> None:
    """The v1 client's stream ends in output.truncated; one cut before its end was cut."""
    ndjson = "".join(json.dumps(e) + "\n" for e in V1_STREAM).encode()
    events = list(v1_client(ndjson, "application/stream+json").chat_stream(message="Hello"))
    assert [e.event_type for e in events][-1] == "stream-end"
    err = adapter.diagnose_stream(events, None)
    assert err is not None
    assert (err.code, err.upstream["stop_reason"]) == ("output.truncated", "MAX_TOKENS")
    cut = adapter.diagnose_stream(events[:-1], None)  # no stream-end yet: it was cut
    assert cut is not None
    assert (cut.code, cut.upstream["stream"]["terminal"]) == ("upstream.invalid_response", False)
    assert adapter.diagnose_stream(42, None) is None  # type: ignore[arg-type]


def test_a_v1_result_with_text_or_a_tool_call() -> None:
    """v1 results: ``text`` is output; a ``tool_calls`` entry (``name`` and ``parameters``,
    the shape of Cohere's v1 tool-use guide and its query_daily_sales_report example) is
    checked against the tools offered; a result with no finish reason means nothing."""
    call = {"name": "query_daily_sales_report", "parameters": {"day": "2023-09-29"}}
    answer = {"text": "", "generation_id": "g-2", "finish_reason": "COMPLETE", "tool_calls": [call]}
    result = v1_client(json.dumps(answer).encode(), "application/json").chat(message="Sales?")
    assert diagnose(result, provider="cohere") is None
    offered = [{"name": "query_product_catalog", "parameter_definitions": {}}]
    err = diagnose(result, provider="cohere", tools=offered)
    assert err is not None
    assert (err.code, err.location) == (
        "output.unknown_tool",
        {"tool_name": "query_daily_sales_report"},
    )
    text = {"text": "Sales were 10,000.", "generation_id": "g-3", "finish_reason": "COMPLETE"}
    assert diagnose(text, provider="cohere") is None
    assert diagnose({"text": "Sales were 10,000."}, provider="cohere") is None


def test_a_body_with_an_id_keeps_it() -> None:
    """Cohere's ``{"id": ..., "message": ...}`` error body (the shape the adapter documents;
    the body is constructed): the message is the detail, the id rides in ``upstream``."""
    body = {"id": "4c1d2e3f-0000-4000-8000-000000000000", "message": "invalid request: model"}
    err = valid(from_response(400, {}, body, provider="cohere"))
    assert (err.code, err.detail) == ("upstream.invalid_request", "invalid request: model")
    assert err.upstream["id"] == "4c1d2e3f-0000-4000-8000-000000000000"
    empty = valid(from_response(400, {}, {"id": "", "message": "x"}, provider="cohere"))
    assert "id" not in empty.upstream


def test_empty_text_is_no_output_in_a_result_and_in_a_stream() -> None:
    """A COMPLETE answer whose only text block is empty, or a stream whose only text delta
    is empty, produced nothing: ``output.empty`` (constructed v2 JSON)."""
    result = {
        "id": "r1",
        "finish_reason": "COMPLETE",
        "message": {"role": "assistant", "content": [{"type": "text", "text": ""}]},
    }
    assert valid(diagnose(result, provider="cohere") or pytest.fail("none")).code == (
        "output.empty"
    )
    events: list[dict[str, Any]] = [
        {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
        {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": ""}}}},
        {"type": "message-end", "delta": {"finish_reason": "COMPLETE"}},
    ]
    err = adapter.diagnose_stream(events, None)
    assert err is not None
    assert valid(err).code == "output.empty"
    events[1]["delta"]["message"]["content"]["text"] = "Hi"
    assert adapter.diagnose_stream(events, None) is None


def test_headers_on_a_response_the_exception_carries_come_first() -> None:
    """The SDK's errors carry ``headers`` themselves; an exception that also carries the
    ``response`` (set here by hand, as an SDK line that kept it would) is read from the
    response's headers, which are not replaced by the exception's own."""
    sdk = client(429, {"message": "You are past the per minute request limit."})
    exc = raised(
        lambda: sdk.chat(model="command-a-03-2025", messages=MESSAGES, request_options=NO_RETRIES)
    )
    exc.response = httpx.Response(429, headers={"retry-after": "7"})  # type: ignore[attr-defined]
    err = valid(normalize(exc))
    assert (err.code, err.retry_after) == ("upstream.rate_limited", 7.0)
