"""The Bedrock adapter: boto3's Bedrock runtime client over botocore's Stubber and over raw
event-stream responses, botocore's own errors, Converse results and stream events, and
``AnthropicBedrock`` (the anthropic SDK's Bedrock client).

Every error code and message below comes from a public page, named next to it; where the page
shows no status, the status is the one the Bedrock API reference gives for that code
(https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html, section
"Errors"), and where it shows no message, the message is that section's description of the
error (said so next to it).
"""

from __future__ import annotations

import binascii
import functools
import json
import pickle
import struct
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

boto3 = pytest.importorskip("boto3")
botocore_exceptions = pytest.importorskip("botocore.exceptions")
AWSResponse = pytest.importorskip("botocore.awsrequest").AWSResponse
Stubber = pytest.importorskip("botocore.stub").Stubber

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
from normalize_errors.providers import bedrock as adapter  # noqa: E402

from ..support import raised, valid  # noqa: E402

API_REFERENCE = "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html"
COMMON_ERRORS = "https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html"
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "Hello"}]}]
MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


def client() -> Any:
    """A real Bedrock runtime client with obviously fake credentials; nothing is sent."""
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-real-secret",
    )


class Case(NamedTuple):
    operation: str
    error: str
    message: str
    status: int
    source: str
    code: str
    retryable: bool


CASES = [
    Case(
        "converse",
        "ThrottlingException",
        "Too many requests, please wait before trying again. You have sent too many requests. "
        "Wait before trying again.",
        429,  # status: https://github.com/posit-dev/positron/issues/7844
        "https://github.com/2FastLabs/agent-squad/issues/47",
        "upstream.rate_limited",
        True,
    ),
    Case(
        "invoke_model",
        "ThrottlingException",
        "Too many tokens, please wait before trying again.",
        429,
        "https://github.com/anthropics/claude-code/issues/1466",
        "upstream.rate_limited",  # "too many tokens": a rate, not a context overflow
        True,
    ),
    Case(
        "converse",
        "ThrottlingException",
        "Too many tokens per day, please wait before trying again.",
        429,
        "https://github.com/minorun365/agent-book/issues/29",
        "upstream.rate_limited",
        False,
    ),
    Case(
        "converse",
        "ValidationException",
        "Input is too long for requested model.",
        400,  # status shown in the same page
        "https://github.com/aws-samples/assessment-generator/issues/2",
        "context.window_exceeded",
        False,
    ),
    Case(
        "converse",
        "ValidationException",
        "The model returned the following errors: prompt is too long: 200049 tokens > 200000 "
        "maximum",
        400,
        "https://github.com/daisuke-awaji/moca/issues/254",
        "context.window_exceeded",
        False,
    ),
    Case(
        "invoke_model",
        "ValidationException",
        "Invocation of model ID anthropic.claude-sonnet-4-20250514-v1:0 with on-demand "
        "throughput isn’t supported. Retry your request with the ID or ARN of an inference "
        "profile that contains this model.",
        400,
        "https://github.com/anthropics/claude-code/issues/1466",
        "upstream.invalid_request",
        False,
    ),
    Case(
        "converse_stream",
        "ValidationException",
        "The provided model identifier is invalid.",
        400,
        "https://github.com/strands-agents/harness-sdk/issues/38",
        "upstream.invalid_request",
        False,
    ),
    Case(
        "converse",
        "AccessDeniedException",
        "You don't have access to the model with the specified model ID.",
        403,
        "https://github.com/andrewyng/aisuite/issues/174",
        "upstream.authentication_failed",
        False,
    ),
    Case(
        "invoke_model",
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
        403,  # status: https://github.com/iann0036/iamlive/issues/58 (another AWS service)
        "https://github.com/langchain-ai/langchain/issues/19677",
        "upstream.authentication_failed",
        False,
    ),
    Case(
        "converse",
        "ExpiredTokenException",
        "The security token included in the request is expired",
        403,
        COMMON_ERRORS,  # code, status and description
        "upstream.authentication_failed",
        False,
    ),
    # code, status and (as the message) the description of the API reference's Errors section
    Case(
        "converse",
        "ModelNotReadyException",
        "The model specified in the request is not ready to serve inference requests.",
        429,
        API_REFERENCE,
        "upstream.unavailable",
        True,
    ),
    Case(
        "converse",
        "ModelTimeoutException",
        "The request took too long to process. Processing time exceeded the model timeout length.",
        408,
        API_REFERENCE,
        "upstream.unavailable",
        True,
    ),
    Case(
        "converse",
        "ModelErrorException",
        "The request failed due to an error while processing the model.",
        424,
        API_REFERENCE,
        "upstream.unavailable",
        False,
    ),
    Case(
        "converse",
        "ServiceUnavailableException",
        "The service isn't currently available.",
        503,
        API_REFERENCE,
        "upstream.unavailable",
        True,
    ),
    Case(
        "converse",
        "InternalServerException",
        "An internal server error occurred.",
        500,
        API_REFERENCE,
        "upstream.unavailable",
        True,
    ),
    Case(
        "converse",
        "ResourceNotFoundException",
        "The specified resource ARN was not found.",
        404,
        API_REFERENCE,
        "upstream.invalid_request",
        False,
    ),
    Case(
        "converse",
        "ServiceQuotaExceededException",
        "Your request exceeds the service quota for your account.",
        400,
        API_REFERENCE,
        "upstream.rate_limited",
        True,
    ),
]


def _params(operation: str) -> dict[str, Any]:
    if operation == "invoke_model":
        return {"modelId": MODEL, "body": json.dumps({"prompt": "Hello"})}
    return {"modelId": MODEL, "messages": MESSAGES}


def stubbed(case: Case) -> BaseException:
    """The exception the real client raises for ``case``'s service error."""
    bedrock = client()
    with Stubber(bedrock) as stub:
        stub.add_client_error(
            case.operation,
            service_error_code=case.error,
            service_message=case.message,
            http_status_code=case.status,
            response_meta={"RequestId": "2f1e7a5c-0000-4000-8000-000000000001"},
        )
        return raised(lambda: getattr(bedrock, case.operation)(**_params(case.operation)))


TABLE_CASES = [functools.partial(lambda c: normalize(stubbed(c)), case) for case in CASES]
"""For ``test_completeness``: the rows these service errors decide (asserted below)."""


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c.operation}-{c.error}-{c.status}-{c.code}" for c in CASES]
)
def test_client_errors_through_botocore(case: Case) -> None:
    """Each service error, raised by the real client, gives its code, flags and facts."""
    exc = stubbed(case)
    # botocore's typed class, made at run time; a code the service model does not declare
    # (UnrecognizedClientException, ExpiredTokenException) is a plain ClientError
    assert type(exc).__name__ in (case.error, "ClientError")
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == (case.code, case.retryable)
    assert err.upstream["provider"] == "bedrock"
    assert err.upstream["status"] == case.status
    assert err.upstream["code"] == case.error
    assert err.upstream["message"] == case.message
    assert err.upstream["request_id"] == "2f1e7a5c-0000-4000-8000-000000000001"
    module = type(exc).__module__
    assert err.upstream["exception"] == f"{module}.{type(exc).__name__}"
    assert err.__cause__ is exc


def test_a_context_overflow_states_its_limit() -> None:
    """The token counts of the message are the ``limit``."""
    bedrock = client()
    with Stubber(bedrock) as stub:
        stub.add_client_error("converse", "ValidationException", CASES[4].message, 400)
        err = normalize(raised(lambda: bedrock.converse(modelId=MODEL, messages=MESSAGES)))
    assert err.limit == {"name": "context_tokens", "value": 200000, "observed": 200049}


def test_retry_attempts_are_counted() -> None:
    """botocore's ``RetryAttempts`` is the number of retries: attempts is one more."""
    bedrock = client()
    with Stubber(bedrock) as stub:
        stub.add_client_error(
            "converse",
            "ThrottlingException",
            CASES[0].message,
            429,
            response_meta={"RetryAttempts": 4},
        )
        err = normalize(raised(lambda: bedrock.converse(modelId=MODEL, messages=MESSAGES)))
    assert err.attempts == 5


# -- botocore's own errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "code", "retryable"),
    [
        (
            botocore_exceptions.EndpointConnectionError(
                endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse"
            ),
            "upstream.unavailable",
            True,
        ),
        (
            botocore_exceptions.ReadTimeoutError(
                endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse"
            ),
            "upstream.unavailable",
            True,
        ),
        (
            botocore_exceptions.ConnectTimeoutError(
                endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse"
            ),
            "upstream.unavailable",
            True,
        ),
        (botocore_exceptions.NoCredentialsError(), "upstream.authentication_failed", False),
        (
            botocore_exceptions.ParamValidationError(report="Missing required parameter"),
            "upstream.invalid_request",
            False,
        ),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_botocore_errors(exc: BaseException, code: str, retryable: bool) -> None:
    """Connection, timeout, credential and parameter errors of botocore itself."""
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == (code, retryable)
    assert err.upstream["provider"] == "bedrock"
    assert err.upstream["exception"] == f"botocore.exceptions.{type(exc).__name__}"
    if code == "upstream.unavailable":
        assert err.upstream["endpoint"].startswith("https://bedrock-runtime")


def test_a_misconfigured_client_is_not_an_upstream_failure() -> None:
    """A bare BotoCoreError (no region) is the caller's: harness.internal_error."""
    exc = raised(
        lambda: boto3.client(
            "bedrock-runtime", region_name=None, aws_access_key_id="x", aws_secret_access_key="y"
        ).converse(modelId="m", messages=MESSAGES)
    )
    err = normalize(exc)
    assert err.code in ("harness.internal_error", "upstream.invalid_request")


def botocore_exported() -> list[type[BaseException]]:
    """Every exception class ``botocore.exceptions`` defines."""
    return [
        value
        for name, value in vars(botocore_exceptions).items()
        if isinstance(value, type)
        and issubclass(value, Exception)
        and not issubclass(value, Warning)
        and value.__module__ == "botocore.exceptions"
        and not name.startswith("_")
    ]


@pytest.mark.parametrize("cls", botocore_exported(), ids=lambda c: c.__name__)
def test_every_botocore_exception_class_is_covered(cls: type[BaseException]) -> None:
    """Each class resolves to a CLASSES entry; only misconfigurations stay at the base."""
    entry = class_entry(cls.__new__(cls), adapter.CLASSES, "botocore")
    assert entry is not None, cls
    valid(normalize(cls.__new__(cls)))  # built without __init__: still a valid error


# -- streams: raw event-stream responses through botocore's parser -------------------------------


def _header(name: str, value: str) -> bytes:
    key, data = name.encode(), value.encode()
    return struct.pack("!B", len(key)) + key + b"\x07" + struct.pack("!H", len(data)) + data


def _frame(headers: dict[str, str], payload: dict[str, Any]) -> bytes:
    """One message of the AWS event-stream encoding (prelude, headers, payload, CRCs)."""
    head = b"".join(_header(k, v) for k, v in headers.items())
    body = json.dumps(payload).encode()
    prelude = struct.pack("!II", 12 + len(head) + len(body) + 4, len(head))
    prelude += struct.pack("!I", binascii.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + head + body
    return message + struct.pack("!I", binascii.crc32(message) & 0xFFFFFFFF)


def event(kind: str, payload: dict[str, Any]) -> bytes:
    return _frame(
        {":event-type": kind, ":content-type": "application/json", ":message-type": "event"},
        payload,
    )


def exception(kind: str, payload: dict[str, Any]) -> bytes:
    return _frame(
        {
            ":exception-type": kind,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        payload,
    )


class _Raw:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.data

    def read(self, *_: Any, **__: Any) -> bytes:
        return self.data

    def close(self) -> None:
        pass


def serve(bedrock: Any, frames: list[bytes]) -> None:
    """Answer every call of ``bedrock`` with a 200 event stream of ``frames``."""

    def handler(request: Any, **_: Any) -> Any:
        headers = {
            "content-type": "application/vnd.amazon.eventstream",
            "x-amzn-requestid": "5c0a3b6e-0000-4000-8000-000000000002",
        }
        return AWSResponse(request.url, 200, headers, _Raw(b"".join(frames)))

    bedrock.meta.events.register("before-send.bedrock-runtime.*", handler)


def _consume(stream: Any) -> list[Any]:
    return list(stream)


START = [
    event("messageStart", {"role": "assistant"}),
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "The fifty"}}),
]


@pytest.mark.parametrize(
    ("kind", "message", "source", "code", "retryable"),
    [
        (
            "throttlingException",
            "Too many requests, please wait before trying again. You have sent too many "
            "requests. Wait before trying again.",
            "https://github.com/aws-samples/aws-genai-llm-chatbot/issues/220",
            "upstream.rate_limited",
            True,
        ),
        (
            "validationException",
            "Input is too long for requested model.",
            "https://github.com/aws-samples/bedrock-chat/issues/95",
            "context.window_exceeded",
            False,
        ),
        (
            "modelStreamErrorException",
            "An error occurred while streaming the response. Retry your request.",
            API_REFERENCE.replace("Converse", "ConverseStream"),
            "upstream.unavailable",
            True,
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and " " not in v and "/" not in v else None,
)
def test_exception_events_in_the_middle_of_a_stream(
    kind: str, message: str, source: str, code: str, retryable: bool
) -> None:
    """botocore raises ``EventStreamError`` while iterating; it reads like its HTTP twin."""
    bedrock = client()
    serve(bedrock, [*START, exception(kind, {"message": message})])
    response = bedrock.converse_stream(modelId=MODEL, messages=MESSAGES)
    exc = raised(lambda: _consume(response["stream"]))
    assert type(exc).__name__ == "EventStreamError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == (code, retryable)
    assert err.upstream["in_stream"] is True
    assert err.upstream["code"] == kind
    assert err.upstream["operation"] == "ConverseStream"
    # the same event given as data (a stream read by other code) gives the same answer
    again = adapter.diagnose_stream([{kind: {"message": message}}], None)
    assert again is not None
    assert (again.code, again.retryable) == (code, retryable)


def _stream_of(stop: str, extra: list[bytes] = ()) -> list[bytes]:  # type: ignore[assignment]
    return [
        *START,
        *extra,
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": stop}),
        event(
            "metadata",
            {
                "usage": {"inputTokens": 9, "outputTokens": 2, "totalTokens": 11},
                "metrics": {"latencyMs": 120},
            },
        ),
    ]


@pytest.mark.parametrize(
    ("stop", "code"),
    [
        ("max_tokens", "output.truncated"),
        ("guardrail_intervened", "policy.guardrail_triggered"),
        ("content_filtered", "policy.content_filtered"),
        ("model_context_window_exceeded", "context.window_exceeded"),
        ("end_turn", None),
    ],
)
def test_converse_stream_stop_reasons(stop: str, code: str | None) -> None:
    """The events of a finished ConverseStream are read for the failure stop reasons."""
    bedrock = client()
    serve(bedrock, _stream_of(stop))
    events = _consume(bedrock.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"])
    err = adapter.diagnose_stream(events, None)
    if code is None:
        assert err is None
        return
    assert err is not None
    assert err.code == code
    assert err.upstream["stop_reason"] == stop
    assert err.upstream["usage"] == {"inputTokens": 9, "outputTokens": 2}


def test_a_streamed_tool_call_to_an_unknown_tool() -> None:
    """Tool input fragments are joined; the name is checked against the toolSpec entries."""
    bedrock = client()
    serve(
        bedrock,
        [
            event("messageStart", {"role": "assistant"}),
            event(
                "contentBlockStart",
                {
                    "contentBlockIndex": 0,
                    "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "rm_rf"}},
                },
            ),
            event(
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"path": '}}},
            ),
            event(
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '"/"}'}}},
            ),
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("messageStop", {"stopReason": "tool_use"}),
        ],
    )
    events = _consume(bedrock.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"])
    tools = {"tools": [{"toolSpec": {"name": "get_time", "inputSchema": {"json": {}}}}]}
    err = adapter.diagnose_stream(events, tools)
    assert err is not None
    assert err.code == "output.unknown_tool"
    assert err.location == {"tool_name": "rm_rf", "tool_call_id": "tooluse_1"}
    assert adapter.diagnose_stream(events, None) is None  # no tools given: nothing to check


def test_invoke_model_stream_chunks() -> None:
    """InvokeModelWithResponseStream chunks carry the model's own events (Anthropic's here)."""
    chunks = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude",
                "stop_reason": None,
                "usage": {"input_tokens": 9},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "The fifty"},
        },
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens"},
            "usage": {"output_tokens": 2},
        },
        {"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 9}},
    ]
    bedrock = client()
    serve(bedrock, [event("chunk", {"bytes": _b64(c)}) for c in chunks])
    response = bedrock.invoke_model_with_response_stream(modelId=MODEL, body=b"{}")
    events = _consume(response["body"])
    assert isinstance(events[0]["chunk"]["bytes"], bytes)
    err = adapter.diagnose_stream(events, None)
    assert err is not None
    assert err.code == "output.truncated"
    guarded = [
        *chunks[:3],
        {"type": "message_stop", "amazon-bedrock-guardrailAction": "INTERVENED"},
    ]
    raw = [{"chunk": {"bytes": json.dumps(c).encode()}} for c in guarded]
    found = adapter.diagnose_stream(raw, None)
    assert found is not None
    assert found.code == "policy.guardrail_triggered"


def _b64(value: Any) -> str:
    import base64

    return base64.b64encode(json.dumps(value).encode()).decode()


# -- results and check() -----------------------------------------------------------------------


def converse_result(stop: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    """A Converse response as the API reference's Response Syntax describes it."""
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 12, "outputTokens": 4, "totalTokens": 16},
        "metrics": {"latencyMs": 300},
    }


def test_check_of_a_converse_result_that_stopped_on_max_tokens() -> None:
    """The issue's example: check() raises output.truncated; an end_turn passes."""
    bedrock = client()
    with Stubber(bedrock) as stub:
        stub.add_response("converse", converse_result("max_tokens", [{"text": "The fifty"}]))
        stub.add_response("converse", converse_result("end_turn", [{"text": "Fifty."}]))
        truncated = bedrock.converse(modelId=MODEL, messages=MESSAGES)
        fine = bedrock.converse(modelId=MODEL, messages=MESSAGES)
    err = raised(lambda: check(truncated))
    assert isinstance(err, HarnessError)
    assert err.code == "output.truncated"
    assert err.upstream["provider"] == "bedrock"
    assert err.result is truncated
    assert check(fine) is fine


@pytest.mark.parametrize("row", adapter.STOP_REASONS, ids=lambda r: r.code)
def test_stop_reason_rows(row: Any) -> None:
    """Every documented row gives its code through the public ``diagnose``."""
    err = diagnose(row.example, tools=row.tools)
    assert err is not None
    assert err.code == row.code


def test_a_guardrail_trace_is_kept() -> None:
    result = {
        **converse_result("guardrail_intervened", [{"text": "Sorry."}]),
        "trace": {"guardrail": {"outputAssessments": {"g1": [{"contentPolicy": {}}]}}},
    }
    err = diagnose(result)
    assert err is not None
    assert err.upstream["trace"]["guardrail"]["outputAssessments"]


def test_raw_error_responses() -> None:
    """A raw Bedrock answer: the type in x-amzn-errortype, the message in the body."""
    err = from_response(
        429,
        {
            "x-amzn-errortype": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
            "x-amzn-requestid": "r-1",
        },
        b'{"message":"Too many tokens, please wait before trying again."}',
        provider="bedrock",
    )
    assert (err.code, err.retryable, err.upstream["code"]) == (
        "upstream.rate_limited",
        True,
        "ThrottlingException",
    )
    assert err.upstream["request_id"] == "r-1"
    shaped = from_response(
        400,
        {},
        {"__type": "ValidationException", "message": "Input is too long for requested model."},
    )
    assert shaped.code == "context.window_exceeded"
    assert shaped.upstream["provider"] == "bedrock"


# -- wrap() of a boto3 client ------------------------------------------------------------------


def test_wrap_types_the_errors_of_a_boto3_client() -> None:
    """wrap() wraps the client botocore builds at run time: typed drop-in errors."""
    bedrock = client()
    wrapped = wrap(bedrock)
    assert isinstance(wrapped, type(bedrock))
    with Stubber(bedrock) as stub:
        stub.add_client_error("converse", "ThrottlingException", CASES[0].message, 429)
        err = raised(lambda: wrapped.converse(modelId=MODEL, messages=MESSAGES))
    assert isinstance(err, UpstreamRateLimitedError)
    assert isinstance(err, bedrock.exceptions.ThrottlingException)  # except clauses still work
    assert err.response["Error"]["Code"] == "ThrottlingException"  # the vendor's members
    assert err.problem.upstream["provider"] == "bedrock"
    assert pickle.loads(pickle.dumps(err.problem)).code == "upstream.rate_limited"


def test_wrap_checks_converse_results_and_streams() -> None:
    bedrock = client()
    wrapped = wrap(bedrock)
    with Stubber(bedrock) as stub:
        stub.add_response("converse", converse_result("max_tokens", [{"text": "The fifty"}]))
        err = raised(lambda: wrapped.converse(modelId=MODEL, messages=MESSAGES))
    assert isinstance(err, HarnessError)
    assert err.code == "output.truncated"
    streaming = client()
    serve(streaming, _stream_of("max_tokens"))
    response = wrap(streaming).converse_stream(modelId=MODEL, messages=MESSAGES)
    err = raised(lambda: _consume(response["stream"]))
    assert isinstance(err, HarnessError)
    assert err.code == "output.truncated"
    assert err.stream is not None
    assert err.stream["chunks"] == 5  # the events received before the end
    broken = client()
    serve(broken, [*START, exception("throttlingException", {"message": "Too many requests"})])
    response = wrap(broken).converse_stream(modelId=MODEL, messages=MESSAGES)
    err = raised(lambda: _consume(response["stream"]))
    assert isinstance(err, UpstreamRateLimitedError)
    assert isinstance(err, botocore_exceptions.EventStreamError)
    assert err.stream is not None
    assert (err.stream["chunks"], err.stream["phase"]) == (2, "text")


def test_wrap_leaves_other_calls_alone() -> None:
    """Only the generating methods are checked: a plain call returns its dict untouched."""
    bedrock = client()
    with Stubber(bedrock) as stub:
        stub.add_response("converse", converse_result("max_tokens", [{"text": "x"}]))
        result = wrap(bedrock, check=False).converse(modelId=MODEL, messages=MESSAGES)
    assert result["stopReason"] == "max_tokens"


# -- AnthropicBedrock --------------------------------------------------------------------------


def test_anthropic_bedrock_client() -> None:
    """The anthropic SDK's Bedrock client (signing with boto3) reads Bedrock's error bodies."""
    anthropic = pytest.importorskip("anthropic")
    from normalize_errors._wrapping._replay_calls import http_library

    http = http_library("anthropic")
    answers = iter(
        [
            (429, "ThrottlingException", CASES[1].message),
            (400, "ValidationException", CASES[3].message),
        ]
    )

    def handler(request: Any) -> Any:
        status, kind, message = next(answers)
        assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256")  # signed
        return http.Response(
            status,
            json={"message": message},
            headers={
                "x-amzn-errortype": f"{kind}:http://internal.amazon.com/coral/",
                "x-amzn-requestid": "r-2",
            },
        )

    sdk = anthropic.AnthropicBedrock(
        aws_access_key="AKIDEXAMPLE",
        aws_secret_key="not-a-real-secret",
        aws_region="us-east-1",
        max_retries=0,
        http_client=http.Client(transport=http.MockTransport(handler)),
    )

    def call() -> Any:
        return sdk.messages.create(
            model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "Hello"}]
        )

    first = valid(normalize(raised(call)))
    assert (first.code, first.retryable) == ("upstream.rate_limited", True)
    assert first.upstream["provider"] == "anthropic"
    second = valid(normalize(raised(call)))
    assert second.code == "context.window_exceeded"


def test_the_generating_methods_exist() -> None:
    """The runtime-built client class has the methods GENERATING names; others are unchecked."""
    from normalize_errors._wrapping._wrap import GENERATING, generates

    bedrock = client()
    methods = GENERATING[("botocore.client", "BedrockRuntime")]
    for method in methods:
        assert callable(getattr(bedrock, method))
        assert generates(bedrock, method)
    assert not generates(bedrock, "invoke_model")  # its body is a stream only the caller reads
    assert not generates(bedrock, "apply_guardrail")


def test_wrap_checks_tool_calls_against_the_tool_config() -> None:
    """Converse offers tools in ``toolConfig``; a call to another tool is output.unknown_tool."""
    bedrock = client()
    config = {"tools": [{"toolSpec": {"name": "get_time", "inputSchema": {"json": {}}}}]}
    use = {"toolUse": {"toolUseId": "tooluse_1", "name": "rm_rf", "input": {"path": "/"}}}
    with Stubber(bedrock) as stub:
        stub.add_response("converse", converse_result("tool_use", [use]))
        err = raised(
            lambda: wrap(bedrock).converse(modelId=MODEL, messages=MESSAGES, toolConfig=config)
        )
    assert isinstance(err, HarnessError)
    assert err.code == "output.unknown_tool"
    assert err.model_feedback is not None
    assert "get_time" in err.model_feedback


# -- the edges of the reader -------------------------------------------------------------------


def test_a_corrupted_event_stream_is_an_invalid_response() -> None:
    """Bytes damaged in transit (a CRC that does not match) make botocore's event-stream
    parser raise while iterating: an invalid response, worth another try."""
    bedrock = client()
    damaged = bytearray(START[1])
    damaged[-1] ^= 0xFF  # the message CRC no longer matches
    serve(bedrock, [START[0], bytes(damaged)])
    response = bedrock.converse_stream(modelId=MODEL, messages=MESSAGES)
    exc = raised(lambda: _consume(response["stream"]))
    assert type(exc).__module__ == "botocore.eventstream"
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.invalid_response", True)
    assert err.upstream["exception"] == f"botocore.eventstream.{type(exc).__name__}"


def test_a_botocore_error_about_the_callers_own_input_is_not_upstream() -> None:
    """An error of botocore that no table names (an ARN the caller wrote wrong, parsed by
    botocore's own helper) is the caller's: harness.internal_error, never upstream."""
    from botocore.utils import ArnParser

    exc = raised(lambda: ArnParser().parse_arn("not-an-arn"))
    err = valid(normalize(exc))
    assert err.code == "harness.internal_error"


def _no_message(self: Any) -> str:
    raise RuntimeError("no message")


# a caller's subclass of a botocore error whose message cannot be made
ProxyDown: Any = type(
    "ProxyDown", (botocore_exceptions.EndpointConnectionError,), {"__str__": _no_message}
)


def test_a_botocore_error_whose_message_fails_is_still_typed() -> None:
    exc = ProxyDown(endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com")
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.unavailable", True)
    assert err.upstream["endpoint"] == "https://bedrock-runtime.us-east-1.amazonaws.com"


# ModelStreamErrorException's members as the ConverseStream API reference names them
# (message, originalStatusCode, originalMessage); the reference gives no values: the status
# and the model's message below are constructed.
ORIGINAL = {
    "message": "An error occurred while streaming the response. Retry your request.",
    "originalStatusCode": 500,
    "originalMessage": "The model could not complete the response.",
}


def test_a_stream_error_keeps_the_models_original_status_and_message() -> None:
    """Raised by botocore mid-stream, through wrap() or given as data, the event reads the
    same, and the model's own status and message ride along in ``upstream``: botocore's
    exception keeps only the event's code and message, so they are read from the raw event
    its traceback still holds; a copy without that traceback (unpickled) has only those."""
    bedrock = client()
    serve(bedrock, [*START, exception("modelStreamErrorException", ORIGINAL)])
    response = bedrock.converse_stream(modelId=MODEL, messages=MESSAGES)
    exc: Any = raised(lambda: _consume(response["stream"]))
    assert exc.response["Error"] == {
        "Code": "modelStreamErrorException",
        "Message": ORIGINAL["message"],
    }
    raised_err = valid(normalize(exc))
    given = valid(adapter.diagnose_stream([{"modelStreamErrorException": ORIGINAL}], None))
    wrapped = client()
    serve(wrapped, [*START, exception("modelStreamErrorException", ORIGINAL)])
    stream = wrap(wrapped).converse_stream(modelId=MODEL, messages=MESSAGES)["stream"]
    typed: Any = raised(lambda: _consume(stream))
    for err in (raised_err, given, typed.problem):
        assert (err.code, err.retryable) == ("upstream.unavailable", True)
        assert err.upstream["original_status"] == 500
        assert err.upstream["original_message"] == ORIGINAL["originalMessage"]
    copy = valid(normalize(pickle.loads(pickle.dumps(exc))))
    assert (copy.code, copy.upstream["message"]) == ("upstream.unavailable", ORIGINAL["message"])
    assert "original_status" not in copy.upstream


def test_converse_results_that_are_output_or_not_tools_at_all() -> None:
    """An image block is output (no output.empty), reasoning alone is not; tools given as
    something that is no list of tools check nothing; an InvokeModel body in Anthropic's
    shape goes to that reader and one with neither shape means nothing."""
    image = {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}
    assert diagnose(converse_result("end_turn", [image]), provider="bedrock") is None
    thought = {"reasoningContent": {"reasoningText": {"text": "The user wants a number."}}}
    empty = diagnose(converse_result("end_turn", [thought]), provider="bedrock")
    assert empty is not None
    assert empty.code == "output.empty"  # reasoning alone is no answer
    use = {"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}}
    not_tools: Any = 42
    assert diagnose(converse_result("tool_use", [use]), provider="bedrock", tools=not_tools) is None
    anthropic_body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "The fifty"}],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 9, "output_tokens": 2},
    }
    err = diagnose(anthropic_body, provider="bedrock")
    assert err is not None
    assert err.code == "output.truncated"
    assert diagnose({"results": []}, provider="bedrock") is None


def test_stream_events_the_reader_passes_over() -> None:
    """Events that carry nothing to judge are passed over: a non-dict, a text block's start,
    a reasoning delta; a guardrail trace in the metadata is kept. A stream that ends before
    ``messageStop`` was cut, as is one of undecodable chunks or of text with no stop reason."""
    reasoning = {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Hmm"}}}
    trace: dict[str, Any] = {"guardrail": {"outputAssessments": {"g1": [{"contentPolicy": {}}]}}}
    events: list[Any] = [
        "keep-alive",
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"contentBlockIndex": 0, "start": {}}},
        {"contentBlockDelta": reasoning},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Sorry."}}},
        {"messageStop": {"stopReason": "guardrail_intervened"}},
        {"metadata": {"usage": {"inputTokens": 9, "outputTokens": 2}, "trace": trace}},
    ]
    err = adapter.diagnose_stream(events, None)
    assert err is not None
    assert err.code == "policy.guardrail_triggered"
    assert err.upstream["trace"] == trace
    cut = adapter.diagnose_stream(events[:5], None)  # no messageStop yet
    assert cut is not None
    assert (cut.code, cut.stream) == (
        "upstream.invalid_response",
        {"api": "converse", "chunks": 5, "phase": "text", "output_chars": 9, "terminal": False},
    )
    assert adapter.diagnose_stream(42, None) is None  # type: ignore[arg-type]
    for chunk in (b"{not json", b'{"outputText": "x"}'):
        found = adapter.diagnose_stream([{"chunk": {"bytes": chunk}}], None)
        assert found is not None
        assert found.code == "upstream.invalid_response"
        assert found.upstream["stream"]["api"] == "invoke"


# -- native InvokeModel bodies of other model families (_NATIVE_BODIES) ----------------------

NATIVE_CASES = [
    "bedrock-otel-cohere-command-finish-max-tokens",
    "bedrock-ddtrace-cohere-multi-generations-max-tokens",
    "bedrock-otel-meta-llama-stop-length-2",
    "bedrock-ddtrace-meta-llama-lorem-stop-length",
    "bedrock-otel-mistral-stop-length",
]
"""Corpus cases (verbatim bodies of recorded cassettes; their sources are in the corpus)."""


@pytest.mark.parametrize("case_id", NATIVE_CASES)
def test_native_invoke_model_bodies_through_the_real_client(case_id: str) -> None:
    """The body InvokeModel returns, read from the real client's StreamingBody, then
    ``check``: a family's own length stop is ``output.truncated``, as Converse's would be."""
    import io

    from botocore.response import StreamingBody

    from normalize_errors import corpus

    case = next(c for c in corpus.load() if c.id == case_id)
    raw = case.body.encode()
    bedrock = client()
    with Stubber(bedrock) as stub:
        stub.add_response(
            "invoke_model",
            {"body": StreamingBody(io.BytesIO(raw), len(raw)), "contentType": "application/json"},
        )
        answer = bedrock.invoke_model(modelId=MODEL, body=json.dumps({"prompt": "Hello"}))
    result = json.loads(answer["body"].read())
    err = raised(lambda: check(result))
    assert isinstance(err, HarnessError)
    assert (err.code, err.retryable, err.upstream["provider"]) == (
        "output.truncated",
        False,
        "bedrock",
    )
    assert err.upstream["stop_reason"] in ("MAX_TOKENS", "length")


def test_native_bodies_are_routed_by_their_markers() -> None:
    """Every native body's marker is a Bedrock result member in PROVIDERS."""
    from normalize_errors.providers import PROVIDERS

    members = next(p.result_members for p in PROVIDERS if p.name == "bedrock")
    assert {body.marker for body in adapter._NATIVE_BODIES} <= set(members)
    assert diagnose({"generation": "Hello.", "stop_reason": "stop"}) is None
    assert diagnose({"outputs": [{"text": "Hi", "stop_reason": "stop"}]}) is None
    assert diagnose({"generations": [{"text": "Hi", "finish_reason": "COMPLETE"}]}) is None


# -- botocore's printed error text (Provider.printed, BOTOCORE_PRINTED) ------------------------


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c.operation}-{c.error}-{c.status}-{c.code}" for c in CASES]
)
def test_botocore_printed_text_reads_like_its_exception(case: Case) -> None:
    """The text the real client's ClientError prints (``An error occurred (Code) when calling
    the Op operation: message``), pasted with no status, gives the exception's code."""
    exc = stubbed(case)
    err = valid(from_response(None, {}, str(exc)))
    assert err.upstream["provider"] == "bedrock"
    assert err.upstream["code"] == case.error
    assert err.upstream["message"] == " ".join(case.message.split())
    assert err.code == normalize(exc).code
    inside = valid(from_response(200, {"content-type": "text/event-stream"}, str(exc)))
    assert (inside.code, inside.upstream["in_stream"]) == (err.code, True)


def test_botocore_printed_text_with_retries_and_a_prefix() -> None:
    text = (
        "Error raised by bedrock service: An error occurred (ThrottlingException) when calling "
        "the InvokeModel operation (reached max retries: 4): Too many requests, please wait "
        "before trying again."
    )
    err = valid(from_response(None, {}, text))
    assert (err.code, err.upstream["operation"]) == ("upstream.rate_limited", "InvokeModel")
