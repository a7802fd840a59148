"""Telemetry (draft section 6.4): harness errors on OpenTelemetry spans and in ``logging``.

``record_error(span, err)`` marks a span failed the way the draft and OpenTelemetry's
conventions agree on:

* the span attribute ``error.type`` is the harness code (``upstream.rate_limited``): low
  cardinality, and what a dashboard groups by;
* the status is ERROR, its description ``str(err)`` (``code: detail``);
* one ``exception`` event with ``exception.type``, ``exception.message``,
  ``exception.stacktrace`` and the harness members as attributes (``ATTRIBUTES`` below);
* for a stream that failed before its terminal event (a cut stream, a connection lost
  mid-stream: ``err.stream["terminal"]`` is false), the GenAI conventions' span attribute
  ``gen_ai.response.finish_reasons = ["error"]``.

Why not the SDK's ``span.record_exception(err)``: it prints ``traceback.format_exception``
of the whole chain, and the chain holds the vendor's original exception, whose message may
carry an API key (``Incorrect API key provided: sk-...``). ``record_error`` writes the
stack trace of the harness error alone (no ``__cause__``, no ``__context__``), redacted,
and every text attribute passes through ``redact``. If you use
``tracer.start_as_current_span``, pass ``record_exception=False`` (the SDK would record the
chain on the way out) or use ``recording(span)``, which does both for you.

OpenTelemetry's guidance is to record only errors that end the operation; an error that was
retried or handled belongs in a log record below ERROR, which ``log_fields`` and
``HarnessErrorFilter`` give the same fields. Each attempt of a retry or a fallback is an
operation of its own, though: ``attempt_span`` is the span of one, a child of the current
span, which ``retrying()``, ``fallback()`` and ``FallbackPlan`` open for every attempt when
the current span is recording (``harness.attempt.*`` attributes; a failed attempt is
recorded with ``record_error``).

``model_feedback`` is left out of telemetry (it is text meant for the model, often derived
from its output), and so is a failed stream's output text (``upstream.stream.text``, kept
only when the caller asked for it); ``detail``, ``upstream`` and the rest are already
redacted by the error.

Needs the ``otel`` extra (``opentelemetry-api``); nothing is exported without an SDK.
"""

from __future__ import annotations

import json
import logging
import traceback
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from .._base._redact import redact, redact_all
from .._base._safe_read import qualname
from .._model._exceptions import HarnessError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from opentelemetry.trace import Span

__all__ = [
    "ATTRIBUTES",
    "FINISH_REASONS",
    "PREFIX",
    "HarnessErrorFilter",
    "attempt_span",
    "attributes",
    "log_fields",
    "record_error",
    "recording",
]

PREFIX: Final = "harness_error."
"""Prefix of the attributes and log fields that carry the harness members."""

ATTRIBUTES: Final = (
    "code",
    "title",
    "detail",
    "origin",
    "retryable",
    "model_recoverable",
    "advice",
    "retry_after",
    "attempts",
    "max_attempts",
    "status",
    "instance",
)
"""Scalar members written as ``harness_error.<name>``; besides them ``limit.*``,
``location.*`` and ``upstream.*`` are flattened with dots, and ``causes`` is the list of
the causes' codes."""

_MAX_DEPTH: Final = 4


def _harness(err: BaseException) -> HarnessError:
    """The plain harness view of ``err`` (``err.problem`` for a drop-in), or ``normalize(err)``."""
    if isinstance(err, HarnessError):
        return err.problem
    from .._facade import normalize

    return normalize(err)


def _flatten(prefix: str, value: Any, out: dict[str, Any], depth: int) -> None:
    """Add ``value`` as OpenTelemetry attribute values (str, bool, int, float, str lists)."""
    if value is None:
        return
    if isinstance(value, str):
        out[prefix] = redact(value)
    elif isinstance(value, (bool, int, float)):
        out[prefix] = value
    elif isinstance(value, dict) and depth < _MAX_DEPTH:
        for key, item in value.items():
            _flatten(f"{prefix}.{key}", item, out, depth + 1)
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        out[prefix] = [redact(item) for item in value]
    else:
        out[prefix] = redact(json.dumps(value, ensure_ascii=False, default=str))


def attributes(err: BaseException) -> dict[str, Any]:
    """The harness members of ``err`` as flat attributes: ``error.type`` and ``harness_error.*``.

    ``err`` is a ``HarnessError``, a drop-in, or any exception (normalized first). Values are
    OpenTelemetry attribute values; every text is redacted.
    """
    problem = _harness(err)
    out: dict[str, Any] = {"error.type": problem.code}
    for name in ATTRIBUTES:
        _flatten(PREFIX + name, getattr(problem, name), out, 0)
    for name in ("limit", "location", "upstream"):
        value = getattr(problem, name)
        if value:
            _flatten(PREFIX + name, _without_output(dict(value)), out, 0)
    if problem.causes:
        out[PREFIX + "causes"] = [cause.problem.code for cause in problem.causes]
    return out


def _without_output(members: dict[str, Any]) -> dict[str, Any]:
    """``members`` without a failed stream's output text (``upstream.stream.text``)."""
    stream = members.get("stream")
    if isinstance(stream, dict) and "text" in stream:
        members["stream"] = {k: v for k, v in stream.items() if k != "text"}
    return members


FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
"""OpenTelemetry's GenAI attribute for why generation stopped; ``["error"]`` for a stream cut
before its terminal event."""


def _stacktrace(problem: HarnessError) -> str:
    """The stack trace of ``problem`` alone (not its cause or context), redacted, never cut."""
    lines = traceback.format_exception(type(problem), problem, problem.__traceback__, chain=False)
    return redact_all("".join(lines))


def record_error(span: Span, err: BaseException) -> None:
    """Mark ``span`` failed with ``err`` (see the module doc); never raises.

    ``err`` is a ``HarnessError``, a drop-in, or any exception (normalized first).
    """
    from opentelemetry.trace import Status, StatusCode

    try:
        problem = _harness(err)
        fields = attributes(problem)
        span.set_attribute("error.type", problem.code)
        stream = problem.stream
        if stream is not None and stream.get("terminal") is False:
            span.set_attribute(FINISH_REASONS, ["error"])
        span.set_status(Status(StatusCode.ERROR, redact(str(problem))))
        cls = type(problem)
        event = {
            "exception.type": qualname(cls),
            "exception.message": redact(str(problem)),
            "exception.stacktrace": _stacktrace(problem),
            **fields,
        }
        span.add_event("exception", attributes=event)
    except Exception:  # telemetry must never break the code it observes
        span.set_status(Status(StatusCode.ERROR, "harness error (could not be recorded)"))


@contextmanager
def recording(span: Span) -> Iterator[Span]:
    """Record an exception that leaves the block on ``span`` with ``record_error``, then
    re-raise it. Use with ``start_as_current_span(..., record_exception=False,
    set_status_on_exception=False)``."""
    try:
        yield span
    except Exception as exc:
        record_error(span, exc)
        raise


@contextmanager
def attempt_span(helper: str, number: int, target: str | int | None = None) -> Iterator[Span]:
    """The span of one attempt of ``helper`` (``retry``, ``fallback``), a child of the
    current span, named ``"<helper> attempt"``; ``harness.attempt.helper``,
    ``harness.attempt.number`` (from 1) and ``harness.attempt.target`` (the fallback's
    target) are set on it. The helper records a failure on it (``record_error``)."""
    from opentelemetry import trace

    tracer = trace.get_tracer("normalize_errors")
    attributes: dict[str, Any] = {
        "harness.attempt.helper": helper,
        "harness.attempt.number": number,
    }
    if target is not None:
        attributes["harness.attempt.target"] = redact(str(target))
    with tracer.start_as_current_span(
        f"{helper} attempt",
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        yield span


def log_fields(err: BaseException) -> dict[str, Any]:
    """An ``extra`` dict for ``logging``: the same fields as the span's exception event.

    ``logger.warning("retrying", extra=log_fields(err))`` puts ``error.type`` and
    ``harness_error.*`` on the record, where a structured (JSON) formatter finds them.
    """
    return attributes(err)


class HarnessErrorFilter(logging.Filter):
    """A logging filter for records that carry an exception (``logger.exception(...)``).

    It adds ``log_fields`` of the exception to the record. The message and the traceback the
    formatter would print (the whole chain, vendor exception and its message included) are
    redacted, however long, and never cut, so the traceback's last line (the exception's type
    and message) survives. Only where a credential was found is the record changed: ``msg``
    and ``args`` replaced by the redacted message, ``exc_text`` set to the redacted
    traceback; a clean record keeps its own objects. Add it to a handler or a logger:
    ``handler.addFilter(HarnessErrorFilter())``.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string stays the formatter's business
            message = None
        if message is not None:
            redacted = redact_all(message)
            if redacted is not message and redacted != message:
                record.msg, record.args = redacted, None
        info = record.exc_info
        if info and info[1] is not None:
            exc = info[1]
            for key, value in attributes(exc).items():
                setattr(record, key, value)
            text = "".join(traceback.format_exception(*info))
            redacted = redact_all(text)
            if redacted != text:
                record.exc_text = redacted
        return True
