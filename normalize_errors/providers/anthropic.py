"""Anthropic: the Claude API (Messages), through the ``anthropic`` SDK or raw HTTP.

Reads the exceptions of the ``anthropic`` SDK (0.x on httpx, 1.x and 2.x on httpx2) by class
name and attributes, raw error bodies of the Anthropic shape (``{"type": "error", "error":
{"type", "message", "details"?}, "request_id"}``, and Cloudflare's ``{"error": {"type":
"request_too_large", ...}}`` without the envelope), and ``Message`` results and stream events
for failure stop reasons.

Facts worth knowing (see ``TABLE`` for the mapping):

* ``body`` on an SDK error is the *full* JSON body (unlike OpenAI), or the raw text of a
  non-JSON body (a Cloudflare HTML page), or ``None``;
* an ``event: error`` inside a stream raises a bare ``APIStatusError`` whose ``status_code``
  is the stream's 200: only the error's ``type`` says what happened;
* 400 ``invalid_request_error`` also means "no credit left", "spend limit reached" and "this
  organization has been disabled": only the message tells them apart;
* a 429 is a rate limit to wait out, unless ``error.details.error_code`` names a spend limit
  (``enforced_spend_limit_reached``, ``contract_spend_limit_reached``), which waiting does
  not lift; ``ramp_limit_exceeded`` is a growth cap the SDK says to wait out (retry-after);
* from 2.5 the SDK raises one of ~133 ``(status, error_code)`` subclasses; each inherits its
  status class, so the MRO reaches ``APIStatusError`` and ``TABLE`` reads the body.

Rows and stop reasons without a public response to record are exercised by focused tests in
``tests/providers/test_anthropic.py``: 402 ``billing_error``, ``organization_on_hold``,
``timeout_error`` (504), ``ramp_limit_exceeded``, ``contract_spend_limit_reached``, the
"input length and `max_tokens` exceed context limit" wording, ``output.empty`` and
``output.invalid_tool_arguments``. Everything else has a cassette in ``cassettes/anthropic``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Final

from .._base._http_wire import short
from .._base._safe_read import field, integer, member, text_of
from .._model._exceptions import HarnessError
from .._model._registry import status_code
from .._reading._from_exception import SDK, facts_of, read_exception
from .._reading._rules import (
    Facts,
    StopRow,
    Usage,
    build,
    decide,
    offered_names,
    read_usage,
    stop_error,
    tool_call_problem,
)
from .._reading._stream_state import StreamState, fold
from .._reading._tables import load_classes, load_table
from ._routing import declared

__all__ = [
    "CLASSES",
    "NAME",
    "STOP_REASONS",
    "TABLE",
    "diagnose",
    "diagnose_stream",
    "from_response",
    "looks_like",
    "normalize",
    "stream_state",
]

NAME: Final = "anthropic"

_BILLING_IDS: Final = (
    "billing_error",
    "enforced_spend_limit_reached",
    "contract_spend_limit_reached",
    "linked_organization_spend_limit_reached",
    "linked_organization_billing_unavailable",
)

TABLE: Final = load_table(NAME)
"""The mapping, first matching row wins; otherwise the HTTP status decides.

In four tiers: the vendor's own specific type or code (it says what happened), then the
message's words (for what a generic type leaves open), then the HTTP status, then the
generic types (``invalid_request_error``, ``api_error``, ...). A specific type is found by
dictionary, so its message is never scanned.
"""

CLASSES: Final = load_classes(NAME)
"""SDK exception class -> fixed (code, retryable), or ``None`` to read it with ``TABLE``.

The first class of the exception's MRO found here decides. Every status class (``BadRequestError``
… ``OverloadedError``) and every ``(status, error_code)`` class of 2.5+ reaches
``APIStatusError``; a test checks that every exception class the SDK exports is covered by an
entry more specific than ``AnthropicError``. A bare ``AnthropicError`` (a client-side misuse)
is not an upstream failure and is left to the caller's ``harness.internal_error``.
"""


# -- reading error objects ----------------------------------------------------------------------


def _read(body: Any) -> dict[str, Any]:
    """What an Anthropic-shaped error body says (a dict, or anything else), as members of
    ``Facts``."""
    found: dict[str, Any] = {}
    if not isinstance(body, dict):
        return found
    error = body.get("error")
    if isinstance(error, str):
        found["message"] = error
        error = None
    if not isinstance(error, dict):
        message = body.get("message")
        if isinstance(message, str):
            found["message"] = message
        return found
    message = error.get("message")
    if isinstance(message, str):
        found["message"] = message
    elif isinstance(message, (dict, list)):
        found["message"] = short(json.dumps(message, default=str))
    error_type = text_of(error.get("type"))
    if error_type:
        found["vendor_type"] = error_type
    details = error.get("details")
    if isinstance(details, dict) and details:
        code = text_of(details.get("error_code"))
        if code:
            found["vendor_code"] = code
        found["extra"] = {"details": details}
    request_id = body.get("request_id")
    if isinstance(request_id, str) and request_id:
        found["request_id"] = request_id
    return found


_ERROR_TYPES: Final = frozenset(
    {
        "invalid_request_error",
        "authentication_error",
        "billing_error",
        "permission_error",
        "not_found_error",
        "request_too_large",
        "rate_limit_error",
        "timeout_error",
        "api_error",
        "overloaded_error",
    }
)


def looks_like(body: Any) -> bool:
    """Whether a parsed body has the Anthropic error shape.

    The envelope ``{"type": "error", "error": {...}}``, or a bare ``{"error": {"type",
    "message"}}`` whose type is one of Anthropic's and which has none of OpenAI's ``code`` and
    ``param`` members (Cloudflare's 413 in front of the API).
    """
    if not isinstance(body, dict):
        return False
    error = body.get("error")
    if not isinstance(error, dict):
        return False
    if body.get("type") == "error":
        return True
    kind = error.get("type")
    return (
        isinstance(kind, str)
        and kind in _ERROR_TYPES
        and "code" not in error
        and ("param" not in error)
    )


_SDK: Final = SDK(NAME, declared(NAME).roots, CLASSES, TABLE, _read, id_headers=("request-id",))


def from_response(status: Any, headers: Any, body: Any) -> HarnessError:
    """The harness error for a raw HTTP error response in the Anthropic shape."""
    number = integer(status)
    in_stream = number is not None and 200 <= number <= 299  # the stream's, before its error
    return decide(TABLE, facts_of(_SDK, number, headers, body, in_stream=in_stream))


# -- SDK exceptions -----------------------------------------------------------------------------


def _adjust(name: str, exc: BaseException, facts: Facts) -> HarnessError | Facts | None:
    """What only the anthropic SDK's exceptions say: ids as attributes, a token endpoint."""
    if name == "AnthropicError":
        return None  # the SDK's base class, raised for the client's own misuse
    found: dict[str, Any] = {}
    if not facts.headers:  # else the `request-id` header is read
        request_id = text_of(field(exc, "request_id"))
        if request_id:  # the SDK's copy of the header comes first, then the body's
            found["request_id"] = request_id
    if not isinstance(facts.body, dict):  # the SDK's copies of the body's type and code
        found["vendor_type"] = facts.vendor_type or text_of(field(exc, "type"))
        found["vendor_code"] = facts.vendor_code or text_of(field(exc, "error_code"))
    if found:
        facts = replace(facts, **found)
    if name == "WorkloadIdentityError" and facts.status is not None:
        by_status, again = status_code(facts.status)
        if again:  # the token endpoint was busy or down, not the credentials refused
            return build(by_status, again, facts)
    return facts


def normalize(exc: BaseException) -> HarnessError | None:
    """The harness error for an exception of the ``anthropic`` SDK, or ``None``."""
    return read_exception(_SDK, exc, adjust=_adjust)


# -- results ----------------------------------------------------------------------------------

_QUIET: Final = frozenset({"stop_sequence", "tool_use", "pause_turn"})
"""Stop reasons that are never failures, even with no content (the turn goes on)."""

_UNUSED: Final = frozenset({"thinking", "redacted_thinking"})
"""Content blocks that are not output the caller can use on their own."""


_USAGE: Final = Usage(
    at=("usage",),
    counts={"input_tokens": ("input_tokens",), "output_tokens": ("output_tokens",)},
)
"""Token counts of a Messages result (``upstream.usage``)."""


def _stop(code: str, reason: str, detail: str, result: Any, **extra: Any) -> HarnessError:
    """The error a message's stop reason means, with the message's ids."""
    return stop_error(
        NAME,
        code,
        reason,
        detail,
        request_id=text_of(field(result, "_request_id")),
        message_id=text_of(field(result, "id")),
        model=text_of(field(result, "model")),
        **extra,
    )


def _stop_details(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    out = {name: text_of(field(value, name)) for name in ("type", "category", "explanation")}
    kept = {k: v for k, v in out.items() if v is not None}
    return kept or None


def _blocks(result: Any) -> list[Any]:
    content = member(result, "content")
    if isinstance(content, (list, tuple)):
        return list(content)
    return []


def _message(stop_reason: str, content: list[Any], **more: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "stop_reason": stop_reason,
        "content": content,
        **more,
    }


_SOME_TEXT: Final = [{"type": "text", "text": "The fifty states are"}]

STOP_REASONS: Final[tuple[StopRow, ...]] = (
    StopRow("`stop_reason: max_tokens`", "output.truncated", _message("max_tokens", _SOME_TEXT)),
    StopRow(
        "`stop_reason: refusal` (its `stop_details` kept in `upstream`)",
        "policy.model_refusal",
        _message("refusal", [], stop_details={"type": "refusal", "category": "cyber"}),
    ),
    StopRow(
        "`stop_reason: model_context_window_exceeded`",
        "context.window_exceeded",
        _message("model_context_window_exceeded", _SOME_TEXT),
    ),
    StopRow(
        "`tool_use` block naming a tool that was not offered (`tools=` given)",
        "output.unknown_tool",
        _message("tool_use", [{"type": "tool_use", "id": "toolu_1", "name": "rm_rf", "input": {}}]),
        [{"name": "get_time", "input_schema": {"type": "object"}}],
    ),
    StopRow(
        "`tool_use` block whose `input` is not an object",
        "output.invalid_tool_arguments",
        _message(
            "tool_use",
            [{"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": "[1, 2]"}],
        ),
    ),
    StopRow(
        "`stop_reason: end_turn` (or one this library does not know) with no content",
        "output.empty",
        _message("end_turn", []),
    ),
)
"""Failure signals in successful results, with a minimal example of each. ``pause_turn``,
``stop_sequence``, ``tool_use`` and ``end_turn`` with content are not failures."""


def diagnose(result: Any, tools: Iterable[Any] | None) -> HarnessError | None:
    """The harness error an Anthropic ``Message`` (or its JSON) means, or ``None``.

    ``stop_reason`` ``max_tokens`` is ``output.truncated``, ``refusal`` is
    ``policy.model_refusal`` (``stop_details`` kept in ``upstream``),
    ``model_context_window_exceeded`` is ``context.window_exceeded``. A ``tool_use`` block
    naming a tool outside ``tools`` (when given) is ``output.unknown_tool``; one whose
    ``input`` is not a JSON object is ``output.invalid_tool_arguments``. ``end_turn`` (or a
    stop reason this library does not know) with no usable content is ``output.empty``;
    ``stop_sequence``, ``tool_use`` and ``pause_turn`` are never failures.
    """
    reason = text_of(member(result, "stop_reason"))
    blocks = _blocks(result)
    if reason is None and not blocks and text_of(member(result, "type")) != "message":
        return _not_a_message(result)
    found = _judge(result, reason, blocks, tools)
    if found is not None and found.result is None:
        found.result = result
    return found


def _not_a_message(result: Any) -> HarnessError | None:
    """A 200 whose JSON is no message: the SDK builds a ``Message`` of any JSON, so a
    relay's ``{"type": "error", "error": {...}}`` (or a vendor envelope) answered with status
    200 becomes one with no content and no stop reason, the body's members kept beside.
    Read as ``from_response`` reads a 2xx body (``_not_answers.reported``: the error it
    reports, else ``upstream.invalid_response``, JSON but not the API's answer). A plain
    dict is read only when it is an error object; ``None`` when nothing says anything."""
    from .._reading._envelopes import error_object

    if type(result) is dict:
        members: dict[str, Any] = result
        if error_object(members) is None:
            return None
    else:
        extra = field(result, "model_extra")
        if not isinstance(extra, dict) or not extra:
            return None
        kind = text_of(field(result, "type"))
        members = {"type": kind, **extra} if kind else dict(extra)
    from .._not_answers import reported

    found = reported(members, NAME)
    found.result = result
    return found


def _judge(
    result: Any, reason: str | None, blocks: list[Any], tools: Iterable[Any] | None
) -> HarnessError | None:
    if reason == "max_tokens":
        usable = any(
            text_of(field(block, "type")) == "tool_use" or text_of(field(block, "text"))
            for block in blocks
        )
        return _stop(
            "output.truncated",
            reason,
            "The output stopped at the max_tokens limit.",
            result,
            usable_output=usable,
            usage=read_usage(result, _USAGE),
        )
    if reason == "model_context_window_exceeded":
        return _stop(
            "context.window_exceeded",
            reason,
            "The output stopped because the model's context window is full.",
            result,
            usage=read_usage(result, _USAGE),
        )
    if reason == "refusal":
        details = _stop_details(field(result, "stop_details"))
        explanation = details.get("explanation") if details else None
        return _stop(
            "policy.model_refusal",
            reason,
            explanation or "The model declined the request.",
            result,
            stop_details=details,
        )
    produced = False
    for block in blocks:
        kind = text_of(member(block, "type"))
        if kind == "tool_use":
            produced = True
            offered = offered_names(tools)
            problem = tool_call_problem(
                field(block, "name"), field(block, "input"), field(block, "id"), offered, NAME
            )
            if problem is not None:
                return problem
        elif kind == "text":
            produced = produced or bool(text_of(member(block, "text")))
        elif kind not in _UNUSED:
            produced = True
    if not produced and reason is not None and reason not in _QUIET:
        return _stop(
            "output.empty",
            reason,
            "The model returned no content.",
            result,
            usage=read_usage(result, _USAGE),
        )
    return None


def _error_event(event: Any) -> HarnessError:
    """A stream ``error`` event given as data (the SDK raises it; raw SSE readers get it)."""
    if not isinstance(event, dict):
        error = field(event, "error")
        event = {
            "error": {
                "type": field(error, "type"),
                "message": field(error, "message"),
                "details": field(error, "details"),
            },
            "request_id": field(event, "request_id"),
        }
    return decide(TABLE, facts_of(_SDK, None, None, event, in_stream=True))


def stream_state(first: Any, keep_text: int = 0) -> StreamState:
    """The state machine of a Messages stream (``_anthropic_stream``), for its first event."""
    from ._anthropic_stream import MessagesState

    return MessagesState(keep_text)


def diagnose_stream(chunks: Iterable[Any], tools: Iterable[Any] | None) -> HarnessError | None:
    """The harness error a finished Messages stream means, or ``None``.

    The events (``message_start``, ``content_block_*``, ``message_delta``, ``message_stop``;
    SDK objects or their JSON, and the legacy Text Completions ``completion`` events) are
    fed to the stream's state machine: an ``error`` event is the stream's failure; a stream
    that stated its stop reason is read like ``diagnose`` (its text, tool inputs and stop
    reason); one that ended without it after its first event was cut
    (``upstream.invalid_response``). ``messages.stream()``'s own events are counted, not read.
    """
    try:
        events = list(chunks)
    except Exception:  # not a sequence of events at all
        return None
    if not events:
        return None
    return fold(stream_state(events[0]), events, tools)  # type: ignore[no-any-return]
