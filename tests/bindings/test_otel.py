"""OpenTelemetry and logging (draft section 6.4), through the real SDK's in-memory exporter."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

import openai
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import INVALID_SPAN, StatusCode, Tracer

from normalize_errors import (
    HarnessError,
    OutputRetriesExhaustedError,
    UpstreamRateLimitedError,
    class_for_code,
    normalize,
)
from normalize_errors.bindings.otel import (
    HarnessErrorFilter,
    attributes,
    log_fields,
    record_error,
    recording,
)
from normalize_errors.replay import load, run, shipped
from tests.support import is_instance

# Planted credentials of several providers (made up; split so no source line shows them whole).
KEYS = [
    "sk-proj-" + "PLANTEDopenaiKEY0123456789abcdefXYZ",
    "sk-ant-api03-" + "PLANTEDanthropicKEY0123456789abcdef-XYZ",
    "AIza" + "SyPLANTEDgoogleKEY0123456789abcdefXY",
    "ya29." + "PLANTEDgoogleOAUTHtoken0123456789",
    "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiJQTEFOVEVEIn0.PLANTEDsignature0123",
]
BEARER = "Bearer " + "PLANTEDbearerTOKEN0123456789"


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    """A fresh in-memory exporter."""
    return InMemorySpanExporter()


@pytest.fixture
def tracer(exporter: InMemorySpanExporter) -> Iterator[Tracer]:
    """A real SDK tracer whose finished spans go to ``exporter``."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("tests")
    provider.shutdown()


def exported_text(span: ReadableSpan) -> str:
    """Everything a span exports, as one text: name, status, attributes, events."""
    events = [{"name": e.name, "attributes": dict(e.attributes or {})} for e in span.events]
    return json.dumps(
        {
            "name": span.name,
            "status": [span.status.status_code.name, span.status.description],
            "attributes": dict(span.attributes or {}),
            "events": events,
        },
        default=str,
    )


def leaky_vendor_error() -> openai.AuthenticationError:
    """The real SDK's 401 from a recorded response, its message carrying planted keys.

    The response is the shipped cassette's (recorded); the message is constructed, as a
    server or proxy that echoes the credential would write it.
    """
    recorded = run(load(shipped() / "openai" / "invalid_api_key_401.yaml")).exception
    assert isinstance(recorded, openai.AuthenticationError)
    planted = f"Incorrect API key provided: {' '.join(KEYS)}; authorization: {BEARER}"
    body = {"error": {"message": planted, "type": "invalid_request_error"}}
    return openai.AuthenticationError(planted, response=recorded.response, body=body)


def raised_from(vendor: BaseException) -> HarnessError:
    """The harness error of ``vendor``, raised ``from`` it so its traceback and chain are set."""
    try:
        try:
            raise vendor
        except openai.APIError as exc:
            raise normalize(exc) from exc
    except HarnessError as err:
        return err
    raise AssertionError("unreachable")


def test_record_error_follows_section_6_4(tracer: Tracer, exporter: InMemorySpanExporter) -> None:
    """error.type is the code, status ERROR, one exception event with the harness members."""
    cause = class_for_code("output.schema_violation")(
        "price is a string", model_feedback="Field 'price' must be a number."
    )
    err = OutputRetriesExhaustedError(
        "Structured output failed validation after 3 attempts.",
        attempts=3,
        max_attempts=3,
        location={"run_id": "run_8f2c", "turn": 5},
        upstream={"provider": "openai", "status": 200, "request_ids": ["req_1", "req_2"]},
        causes=[cause],
    )
    with tracer.start_as_current_span("invoke_agent") as span:
        record_error(span, err)
    (done,) = exporter.get_finished_spans()
    assert done.attributes is not None
    assert done.attributes["error.type"] == "output.retries_exhausted"
    assert done.status.status_code is StatusCode.ERROR
    assert done.status.description == str(err)
    (event,) = done.events
    assert event.name == "exception"
    got = dict(event.attributes or {})
    assert got["exception.type"] == "normalize_errors.OutputRetriesExhaustedError"
    assert got["exception.message"] == str(err)
    assert "exception.stacktrace" in got
    expected = {
        "error.type": "output.retries_exhausted",
        "harness_error.code": "output.retries_exhausted",
        "harness_error.title": "Output Retries Exhausted",
        "harness_error.detail": "Structured output failed validation after 3 attempts.",
        "harness_error.origin": "harness",
        "harness_error.retryable": False,
        "harness_error.model_recoverable": False,
        "harness_error.advice": "stop",
        "harness_error.attempts": 3,
        "harness_error.max_attempts": 3,
        "harness_error.location.run_id": "run_8f2c",
        "harness_error.location.turn": 5,
        "harness_error.upstream.provider": "openai",
        "harness_error.upstream.status": 200,
        "harness_error.upstream.request_ids": ("req_1", "req_2"),
        "harness_error.causes": ("output.schema_violation",),
    }
    assert {key: got[key] for key in expected} == expected
    assert not any("model_feedback" in key for key in got)
    assert "must be a number" not in exported_text(done)


def test_retry_after_and_limit_are_attributes(
    tracer: Tracer, exporter: InMemorySpanExporter
) -> None:
    """Numbers stay numbers; a limit is flattened with dots."""
    err = class_for_code("loop.budget_exceeded")(
        limit={"name": "cost", "value": 5, "observed": 5.2, "unit": "USD"}
    )
    rate = UpstreamRateLimitedError("slow down", retry_after=2.5)
    with tracer.start_as_current_span("a") as span:
        record_error(span, err)
    with tracer.start_as_current_span("b") as span:
        record_error(span, rate)
    budget, limited = (dict(s.events[0].attributes or {}) for s in exporter.get_finished_spans())
    assert budget["harness_error.limit.name"] == "cost"
    assert budget["harness_error.limit.value"] == 5
    assert budget["harness_error.limit.observed"] == 5.2
    assert budget["harness_error.advice"] == "adjust"
    assert limited["harness_error.retry_after"] == 2.5
    assert limited["harness_error.advice"] == "retry"


def test_a_planted_key_appears_in_no_exported_attribute_or_event(
    tracer: Tracer, exporter: InMemorySpanExporter
) -> None:
    """The SDK's own record_exception exports the vendor's message with the keys (the control);
    record_error exports none of them, in attributes, events or the status."""
    err = raised_from(leaky_vendor_error())
    assert err.code == "upstream.authentication_failed"
    with tracer.start_as_current_span("sdk_default") as span:
        span.record_exception(err)
    with tracer.start_as_current_span("chat") as span:
        record_error(span, err)
    leaky, clean = exporter.get_finished_spans()
    leaked = exported_text(leaky)
    assert all(key in leaked for key in KEYS)  # the planted keys are there to be found
    text = exported_text(clean)
    assert clean.attributes is not None
    assert clean.attributes["error.type"] == "upstream.authentication_failed"
    assert "exception.stacktrace" in text
    for key in [*KEYS, BEARER]:
        assert key not in text
    assert "PLANTED" not in text


def test_recording_records_and_reraises(tracer: Tracer, exporter: InMemorySpanExporter) -> None:
    """With the SDK's own recording off, recording() gives one clean exception event."""
    vendor = leaky_vendor_error()
    with (
        pytest.raises(openai.AuthenticationError),
        tracer.start_as_current_span(
            "chat", record_exception=False, set_status_on_exception=False
        ) as span,
        recording(span),
    ):
        raise vendor
    (done,) = exporter.get_finished_spans()
    assert done.attributes is not None
    assert done.attributes["error.type"] == "upstream.authentication_failed"
    assert [event.name for event in done.events] == ["exception"]
    assert "PLANTED" not in exported_text(done)


def test_any_exception_is_normalized_first(tracer: Tracer, exporter: InMemorySpanExporter) -> None:
    """A bug is recorded as harness.internal_error; a timeout as upstream.unavailable."""
    with tracer.start_as_current_span("a") as span:
        record_error(span, KeyError("missing"))
    with tracer.start_as_current_span("b") as span:
        record_error(span, TimeoutError())
    types = [(s.attributes or {}).get("error.type") for s in exporter.get_finished_spans()]
    assert types == ["harness.internal_error", "upstream.unavailable"]


def test_without_an_sdk_recording_is_a_quiet_no_op() -> None:
    """The API's non-recording span accepts the calls (what happens with the api alone)."""
    record_error(INVALID_SPAN, UpstreamRateLimitedError())
    assert not INVALID_SPAN.is_recording()


def test_every_attribute_is_a_valid_opentelemetry_value(
    tracer: Tracer, exporter: InMemorySpanExporter
) -> None:
    """Nested and mixed upstream values are flattened or written as JSON; the SDK drops none."""
    err = class_for_code("upstream.unavailable")(
        upstream={"provider": "x", "headers": {"x-request-id": "r1"}, "mixed": [1, "a", None]}
    )
    fields = attributes(err)
    with tracer.start_as_current_span("a") as span:
        record_error(span, err)
    (done,) = exporter.get_finished_spans()
    got = dict(done.events[0].attributes or {})
    assert {key: got[key] for key in fields} == {
        key: tuple(value) if isinstance(value, list) else value for key, value in fields.items()
    }
    assert got["harness_error.upstream.headers.x-request-id"] == "r1"
    assert got["harness_error.upstream.mixed"] == '[1, "a", null]'


class JsonFormatter(logging.Formatter):
    """A structured formatter: the message, the harness fields and the traceback as JSON."""

    def format(self, record: logging.LogRecord) -> str:
        fields = {
            key: value
            for key, value in vars(record).items()
            if key == "error.type" or key.startswith("harness_error.")
        }
        out: dict[str, Any] = {"message": record.getMessage(), **fields}
        if record.exc_info:
            out["exc"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def logger_to(stream: io.StringIO, *, with_filter: bool) -> logging.Logger:
    """A real logger writing JSON lines to ``stream``."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    if with_filter:
        handler.addFilter(HarnessErrorFilter())
    logger = logging.getLogger(f"tests.otel.{with_filter}.{id(stream)}")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    return logger


def test_log_fields_carry_the_span_fields() -> None:
    """extra=log_fields(err) puts the same fields on the record as on the span event."""
    stream = io.StringIO()
    err = UpstreamRateLimitedError("slow down", retry_after=3, upstream={"provider": "openai"})
    logger_to(stream, with_filter=False).warning("retrying", extra=log_fields(err))
    line = json.loads(stream.getvalue())
    assert line["error.type"] == "upstream.rate_limited"
    assert line["harness_error.retry_after"] == 3
    assert line["harness_error.advice"] == "retry"
    assert line["harness_error.upstream.provider"] == "openai"
    assert {k: v for k, v in line.items() if k != "message"} == attributes(err)


def test_the_filter_adds_the_fields_and_redacts_the_traceback() -> None:
    """logger.exception prints the whole chain; with the filter no planted key is in it."""
    err = raised_from(leaky_vendor_error())
    plain, filtered = io.StringIO(), io.StringIO()
    for stream, with_filter in ((plain, False), (filtered, True)):
        logger = logger_to(stream, with_filter=with_filter)
        try:
            raise err
        except HarnessError:
            logger.exception("model call failed with %s", BEARER)
    assert all(key in plain.getvalue() for key in KEYS)  # the control: the chain leaks
    line = json.loads(filtered.getvalue())
    assert line["error.type"] == "upstream.authentication_failed"
    assert line["harness_error.advice"] == "credentials"
    assert "openai.AuthenticationError" in line["exc"]  # the chain is still there, redacted
    assert "PLANTED" not in filtered.getvalue()
    assert line["message"] == "model call failed with Bearer [REDACTED]"


def test_the_filter_leaves_plain_records_alone() -> None:
    """A record without an exception and without a credential is untouched."""
    stream = io.StringIO()
    logger_to(stream, with_filter=True).info("hello %s", "world")
    assert json.loads(stream.getvalue()) == {"message": "hello world"}


def test_a_drop_in_from_wrap_is_recorded_by_its_harness_code(
    tracer: Tracer, exporter: InMemorySpanExporter
) -> None:
    """What a wrapped client raises (also an openai.AuthenticationError) records as harness."""
    from normalize_errors import wrap

    drop_in = run(load(shipped() / "openai" / "invalid_api_key_401.yaml"), prepare=wrap).exception
    assert isinstance(drop_in, HarnessError)
    assert is_instance(drop_in, openai.AuthenticationError)
    with tracer.start_as_current_span("chat") as span:
        record_error(span, drop_in)
    (done,) = exporter.get_finished_spans()
    assert done.attributes is not None
    assert done.attributes["error.type"] == "upstream.authentication_failed"
    event = dict(done.events[0].attributes or {})
    assert event["harness_error.advice"] == "credentials"
    assert event["harness_error.upstream.code"] == "invalid_api_key"


def test_a_span_that_cannot_take_the_event_still_ends_failed(
    tracer: Tracer, exporter: InMemorySpanExporter
) -> None:
    """Telemetry never breaks the code it observes: a failing ``add_event`` leaves an error
    status with a fixed description, and ``record_error`` returns."""
    with tracer.start_as_current_span("call") as span:

        def broken(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("exporter queue full")

        span.add_event = broken  # type: ignore[method-assign]
        record_error(span, UpstreamRateLimitedError("slow down"))
    (finished,) = exporter.get_finished_spans()
    assert finished.status.status_code is StatusCode.ERROR
    assert finished.status.description == "harness error (could not be recorded)"


def test_the_filter_leaves_a_bad_format_string_to_the_formatter() -> None:
    """A record whose message cannot be formatted passes the filter untouched."""
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "%d items", ("many",), None)
    assert HarnessErrorFilter().filter(record) is True
    assert record.msg == "%d items"


# -- Issue 22, finding 11: the filter and record_error redact without cutting -----------------


_NOTE = "a frame whose source line is long, as the calls of a real application often are"


def _deep_a(left: int, message: str, note: str) -> None:
    if left <= 0:
        raise UpstreamRateLimitedError(message)
    _deep_b(left - 1, message, note="a frame whose source line is long, as real ones often are")


def _deep_b(left: int, message: str, note: str) -> None:
    _deep_a(left - 1, message, note=_NOTE + " and the frames alternate so none is folded away")


def deep_failure(frames: int, message: str) -> HarnessError:
    """A harness error raised ``frames`` calls deep (no frame folded), ending with ``message``."""
    try:
        _deep_a(frames, message, _NOTE)
    except HarnessError as err:
        return err
    raise AssertionError("unreachable")


def test_the_filter_keeps_the_last_line_of_a_100_frame_traceback() -> None:
    """logger.exception of a 100-frame traceback (well over 16 KB): the last line survives."""
    err = deep_failure(100, "the last line survives")
    stream = io.StringIO()
    logger = logger_to(stream, with_filter=True)
    try:
        raise err
    except HarnessError:
        logger.exception("deep failure")
    exc = json.loads(stream.getvalue())["exc"]
    assert len(exc) > 16_384
    assert exc.rstrip().endswith(
        "UpstreamRateLimitedError: upstream.rate_limited: the last line survives"
    )


def test_the_filter_leaves_a_long_clean_message_the_same_objects() -> None:
    """A 40 KB message without a credential: msg and args stay the very same objects."""
    msg, args = "payload %s", ("x" * 40_000,)
    record = logging.LogRecord("x", logging.INFO, __file__, 1, msg, args, None)
    assert HarnessErrorFilter().filter(record) is True
    assert record.msg is msg
    assert record.args is args
    assert record.getMessage() == "payload " + "x" * 40_000


def test_the_filter_redacts_a_secret_across_the_16_384_boundary() -> None:
    """A key that straddles character 16,384 is redacted whole and nothing after it is cut."""
    key = KEYS[0]
    head = "a " * ((16_384 - 10) // 2)
    text = head + key + " and the end of the message"
    assert len(head) < 16_384 < len(head) + len(key)
    record = logging.LogRecord("x", logging.INFO, __file__, 1, text, None, None)
    HarnessErrorFilter().filter(record)
    out = record.getMessage()
    assert "PLANTED" not in out
    assert out == head + "[REDACTED] and the end of the message"


def test_the_filter_leaves_a_clean_traceback_to_the_formatter() -> None:
    """No credential in the traceback: the filter does not write exc_text."""
    err = deep_failure(3, "clean")
    try:
        raise err
    except HarnessError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "m", None, sys.exc_info())
    HarnessErrorFilter().filter(record)
    assert record.exc_text is None
    assert record.msg == "m"


def test_record_error_keeps_the_last_line_of_a_long_stacktrace(
    tracer: Tracer, exporter: InMemorySpanExporter
) -> None:
    """exception.stacktrace of a 100-frame harness error ends with its type and message."""
    err = deep_failure(100, "the last line survives")
    with tracer.start_as_current_span("deep") as span:
        record_error(span, err)
    (done,) = exporter.get_finished_spans()
    stack = str(dict(done.events[0].attributes or {})["exception.stacktrace"])
    assert len(stack) > 16_384
    assert stack.rstrip().endswith(
        "UpstreamRateLimitedError: upstream.rate_limited: the last line survives"
    )


def test_a_cut_stream_records_finish_reason_error(
    tracer: Tracer, exporter: InMemorySpanExporter
) -> None:
    """A stream cut before its terminal event, through the real OpenAI client (the recorded
    Azure chat stream of ``tests/recorded_streams``, cut after two text chunks: constructed):
    ``error.type`` is the code and ``gen_ai.response.finish_reasons`` is ``["error"]``; the
    output text the caller asked the error to keep stays out of telemetry. A stream that
    ended whole with a failure stop reason records no ``finish_reasons`` of ours."""
    from normalize_errors import wrap
    from normalize_errors._wrapping._replay_calls import http_library
    from normalize_errors.bindings.otel import FINISH_REASONS

    from ..stream_shapes import first, lines, sse, transport

    text = lines("openai-chat-azure-text")
    cut = sse(text[: first(text, '"content":" of"') + 1])
    http = http_library("openai")

    def stream_of(pieces: list[bytes]) -> None:
        client = openai.OpenAI(
            api_key="sk-test",
            max_retries=0,
            http_client=http.Client(transport=transport(http, pieces)),
        )
        for _ in wrap(client, stream_text=64).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Hi"}], stream=True
        ):
            pass

    with tracer.start_as_current_span("chat", record_exception=False) as span:
        err = raised_by(lambda: stream_of(cut))
        record_error(span, err)
    finished = exporter.get_finished_spans()[-1]
    attrs = dict(finished.attributes or {})
    assert attrs["error.type"] == "upstream.invalid_response"
    assert attrs[FINISH_REASONS] == ("error",)
    event = dict(finished.events[0].attributes or {})
    assert event["harness_error.upstream.stream.phase"] == "text"
    assert event["harness_error.upstream.stream.chunks"] == 4
    assert "harness_error.upstream.stream.text" not in event
    assert "Capital of" not in exported_text(finished)
    assert err.problem.stream is not None
    assert err.problem.stream["text"] == "Capital of"

    truncated = HarnessError.from_code("output.truncated", upstream={"stream": {"terminal": True}})
    with tracer.start_as_current_span("whole", record_exception=False) as span:
        record_error(span, truncated)
    assert FINISH_REASONS not in dict(exporter.get_finished_spans()[-1].attributes or {})


def raised_by(call: Any) -> HarnessError:
    try:
        call()
    except HarnessError as err:
        return err
    raise AssertionError("nothing was raised")
