"""AWS Bedrock: the Bedrock runtime (Converse, ConverseStream, InvokeModel) through boto3/botocore.

Reads botocore's exceptions by module and attributes, never importing botocore: a
``ClientError`` (and the typed classes botocore makes at run time, ``ThrottlingException``,
``ValidationException``, ...; and ``EventStreamError``, raised for an exception event in the
middle of a stream) carries ``response["Error"]["Code"]``/``["Message"]`` and
``response["ResponseMetadata"]`` (``HTTPStatusCode``, ``HTTPHeaders`` with ``x-amzn-errortype``
and ``x-amzn-requestid``, ``RetryAttempts``); botocore's own connection, timeout and
credential errors carry no response. Raw error responses (``from_response(...,
provider="bedrock")``) are read from the ``x-amzn-errortype`` header and the ``message`` of
the body. Converse results, ConverseStream events, InvokeModel bodies (the model's own JSON,
with Bedrock's ``amazon-bedrock-guardrailAction``) and InvokeModelWithResponseStream chunks
are read for failure stop reasons.

Facts worth knowing (see ``TABLE`` for the mapping):

* the error code is the exception's class name on the wire (``ThrottlingException``); inside
  a stream it starts lower case (``throttlingException``, ``modelStreamErrorException``), so
  codes are compared lower-cased;
* ``ThrottlingException`` says "Too many tokens, please wait before trying again": a rate
  limit, although its wording is close to a context overflow's; only a
  ``ValidationException`` (or ``ModelErrorException``) is read for context-window wording
  ("Input is too long for requested model", "prompt is too long: N tokens > M maximum");
* ``EventStreamError`` keeps only the event's ``Code`` and ``Message``: a
  ``modelStreamErrorException``'s ``originalStatusCode`` and ``originalMessage`` are read
  from the raw event in the traceback's last frame (botocore's ``EventStream._parse_event``),
  so an unpickled copy of the exception has neither;
* ``ModelNotReadyException`` (429) is a model still loading, which the AWS SDK itself retries:
  ``upstream.unavailable``, not a rate limit;
* every ``botocore`` exception is read here, whatever AWS service raised it (the
  ``upstream.operation`` member names the call), so a ``ClientError`` of another service is
  reported with provider ``"bedrock"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final, NamedTuple

from .._base._http_wire import body_text, lower_headers, parse_body, short
from .._base._patterns import BOTOCORE_PRINTED, MAX_MESSAGE
from .._base._safe_read import field, innermost, integer, module_of, qualname, sequence, text_of
from .._model._exceptions import HarnessError
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
from .._reading._tables import class_entry, load_classes, load_table
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

NAME: Final = "bedrock"

_AUTH_IDS: Final = (
    "accessdeniedexception",
    "expiredtokenexception",
    "expiredtoken",
    "unrecognizedclientexception",
    "invalidsignatureexception",
    "incompletesignature",
    "missingauthenticationtokenexception",
    "signaturedoesnotmatch",
    "invalidclienttokenid",
)

TABLE: Final = load_table(NAME)
"""The mapping, first matching row wins; otherwise the HTTP status decides."""

CLASSES: Final = load_classes(NAME)
"""botocore exception class -> fixed (code, retryable), or ``None`` to read it with ``TABLE``.

The first class of the exception's MRO found here decides. ``ClientError`` covers the typed
classes botocore makes at run time for each service error. ``ParamValidationError`` (the
request failed botocore's own check of the parameters, before it was sent) is a wrong
request. An event stream whose bytes break the AWS event-stream encoding (``ParserError`` of
``botocore.eventstream``: a checksum mismatch, a bad length) is an invalid response, worth
another try. A bare ``BotoCoreError`` (a misconfiguration: no region, an unknown service) and
``UndefinedModelAttributeError`` (a botocore data bug) are left to ``harness.internal_error``.
"""

_CONNECTION: Final = frozenset(
    {
        "ConnectTimeoutError",
        "ReadTimeoutError",
        "EndpointConnectionError",
        "ConnectionClosedError",
        "ProxyConnectionError",
        "SSLError",
        "HTTPClientError",
        "ResponseStreamingError",
    }
)


# -- reading error objects ----------------------------------------------------------------------


def _error_type(header: str | None) -> str | None:
    """``ThrottlingException`` from ``x-amzn-errortype: ThrottlingException:http://...``."""
    if not header:
        return None
    name = header.partition(":")[0].strip()
    return name.rpartition("#")[2] or None


def _facts(
    status: int | None,
    headers: dict[str, str],
    code: str | None,
    message: str | None,
    *,
    body: Any = None,
    text: str = "",
    exception: str | None = None,
    request_id: str | None = None,
    in_stream: bool = False,
    attempts: int | None = None,
    extra: dict[str, Any] | None = None,
) -> Facts:
    code = code or _error_type(headers.get("x-amzn-errortype"))
    return Facts(
        provider=NAME,
        status=status,
        headers=headers,
        body=body,
        text=text,
        message=message,
        vendor_code=code,
        request_id=request_id or headers.get("x-amzn-requestid") or headers.get("x-amz-request-id"),
        exception=exception,
        in_stream=in_stream,
        attempts=attempts,
        extra=extra or {},
    )


def _message_of(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    for name in ("message", "Message", "errorMessage"):
        value = body.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def looks_like(body: Any) -> bool:
    """Whether a parsed body has an AWS JSON error shape (``__type`` naming an exception).

    Bedrock's REST answers often carry only ``{"message": ...}`` with the type in the
    ``x-amzn-errortype`` header; those are read with ``provider="bedrock"``.
    """
    if not isinstance(body, dict):
        return False
    kind = body.get("__type")
    return isinstance(kind, str) and (kind.endswith("Exception") or "#" in kind)


def from_response(status: Any, headers: Any, body: Any) -> HarnessError:
    """The harness error for a raw Bedrock runtime error response."""
    low = lower_headers(headers)
    number = integer(status)
    parsed = parse_body(body)
    code = _error_type(text_of(parsed.get("__type"))) if isinstance(parsed, dict) else None
    message = _message_of(parsed)
    text = body_text(body)
    extra: dict[str, Any] = {}
    printed = BOTOCORE_PRINTED.compiled().search(text[:MAX_MESSAGE]) if parsed is None else None
    if printed is not None:  # botocore's text: "An error occurred (Code) when calling ..."
        code, extra["operation"] = printed.group(1), printed.group(2)
        message = short(" ".join(text[printed.end() :].split()), 2048) or None
    if message is None and parsed is None and text and not text.lstrip().startswith("<"):
        message = short(text.strip(), 2048) or None
    facts = _facts(number, low, code, message, body=parsed, text=text, extra=extra or None)
    return decide(TABLE, facts)


# -- botocore exceptions ------------------------------------------------------------------------


def normalize(exc: BaseException) -> HarnessError | None:
    """The harness error for an exception of botocore (boto3's Bedrock runtime), or ``None``."""
    entry = class_entry(exc, CLASSES, declared(NAME).roots)
    if entry is None:
        return None
    name, fixed = entry
    if name in ("BotoCoreError", "UndefinedModelAttributeError"):
        return None
    exception = qualname(exc)
    extra: dict[str, Any] = {}
    operation = text_of(field(exc, "operation_name"))
    if operation:
        extra["operation"] = operation
    if fixed is not None:
        code, retryable = fixed
        message = _text(exc)
        vendor = None
        if name in _CONNECTION:
            vendor = "timeout" if "Timeout" in name else "connection_error"
            endpoint = text_of(field(field(exc, "kwargs"), "endpoint_url"))
            if endpoint:
                extra["endpoint"] = endpoint
        facts = _facts(None, {}, vendor, message, exception=exception, extra=extra)
        return build(code, retryable, facts)
    response = field(exc, "response")
    error = field(response, "Error")
    meta = field(response, "ResponseMetadata")
    headers = lower_headers(field(meta, "HTTPHeaders"))
    status = integer(field(meta, "HTTPStatusCode"))
    vendor_code = text_of(field(error, "Code"))
    message = text_of(field(error, "Message")) or text_of(field(response, "message"))
    # botocore's EventStreamError carries only the event's Code and Message (its parser drops
    # the other members, originalStatusCode among them): they are read from the raw event
    # while the frame that raised it is still on the traceback (see _raw_event)
    in_stream = name == "EventStreamError"
    if in_stream:
        extra.update(_original(_raw_event(exc)))
    retries = integer(field(meta, "RetryAttempts"))
    facts = _facts(
        None if in_stream and (status is None or 200 <= status <= 299) else status,
        headers,
        vendor_code,
        message,
        exception=exception,
        request_id=text_of(field(meta, "RequestId")),
        in_stream=in_stream,
        attempts=None if retries is None else retries + 1,
        extra=extra,
    )
    return decide(TABLE, facts)


def _raw_event(exc: BaseException) -> Any:
    """The parsed payload of the exception event an ``EventStreamError`` was raised for.

    botocore raises it in ``EventStream._parse_event`` (``botocore/eventstream.py``), whose
    ``response_dict`` local still holds the event's raw ``body`` while the exception's
    traceback reaches that frame (an exception pickled or re-raised elsewhere has none).
    """
    frame = innermost(exc)
    if frame is None or module_of(frame) != "botocore.eventstream":
        return None
    if frame.f_code.co_name != "_parse_event":
        return None
    try:
        raw = field(frame.f_locals.get("response_dict"), "body")
    except Exception:  # a frame whose locals cannot be read
        return None
    return parse_body(raw) if isinstance(raw, (bytes, bytearray)) else None


def _original(body: Any) -> dict[str, Any]:
    """The model's own status and message a ``modelStreamErrorException`` event carries."""
    extra: dict[str, Any] = {}
    original = integer(field(body, "originalStatusCode"))
    if original is not None:
        extra["original_status"] = original
    original_message = text_of(field(body, "originalMessage"))
    if original_message:
        extra["original_message"] = short(original_message)
    return extra


def _text(exc: BaseException) -> str | None:
    try:
        text = str(exc)
    except Exception:
        return None
    return short(text, 2048) or None


# -- results ----------------------------------------------------------------------------------

_STOPS: Final[dict[str, tuple[str, str]]] = {
    "max_tokens": ("output.truncated", "The output stopped at the maxTokens limit."),
    "guardrail_intervened": (
        "policy.guardrail_triggered",
        "A Bedrock guardrail intervened and replaced the output.",
    ),
    "content_filtered": ("policy.content_filtered", "The output was blocked by a content filter."),
    "model_context_window_exceeded": (
        "context.window_exceeded",
        "The output stopped because the model's context window is full.",
    ),
    "malformed_model_output": ("output.malformed", "The model returned malformed output."),
    "malformed_tool_use": (
        "output.invalid_tool_arguments",
        "The model returned a malformed tool call.",
    ),
}
"""Converse ``stopReason`` -> (code, detail)."""

_QUIET: Final = frozenset({"tool_use", "stop_sequence"})


class _NativeBody(NamedTuple):
    """Where a model family's own InvokeModel body says why its output stopped."""

    family: str
    marker: str
    """The top-level member only this family's body has."""
    outputs: str | None
    """The member listing its outputs (``None``: the body is the one output)."""
    reason: str
    """The stop-reason member of each output."""
    stops: dict[str, str]
    """Its stop reasons that are failures -> the Converse ``stopReason`` of the same meaning."""


_NATIVE_BODIES: Final[tuple[_NativeBody, ...]] = (
    _NativeBody(
        "Cohere Command",
        "generations",
        "generations",
        "finish_reason",
        {"MAX_TOKENS": "max_tokens", "ERROR_TOXIC": "content_filtered"},
    ),
    _NativeBody("Meta Llama", "generation", None, "stop_reason", {"length": "max_tokens"}),
    _NativeBody("Mistral", "outputs", "outputs", "stop_reason", {"length": "max_tokens"}),
    _NativeBody(
        "Amazon Titan Text",
        "inputTextTokenCount",
        "results",
        "completionReason",
        {"LENGTH": "max_tokens", "CONTENT_FILTERED": "content_filtered"},
    ),
)
"""The InvokeModel bodies of the model families that do not answer in Anthropic's shape: a
stop reason there means what the Converse ``stopReason`` it maps to means."""


def _native_stop(result: Any) -> tuple[str, str] | None:
    """The Converse ``stopReason`` a native InvokeModel body's stop reason means, and that
    stop reason, or ``None`` (the first output that stopped on a failure decides)."""
    if not isinstance(result, dict):
        return None
    for body in _NATIVE_BODIES:
        if body.marker not in result:
            continue
        outputs = [result] if body.outputs is None else sequence(result.get(body.outputs))
        for output in outputs:
            raw = text_of(field(output, body.reason)) or ""
            if raw in body.stops:
                return body.stops[raw], raw
        return None
    return None


def _converse(stop: str, content: list[Any], **more: Any) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        **more,
    }


_SOME_TEXT: Final = [{"text": "The fifty states are"}]

STOP_REASONS: Final[tuple[StopRow, ...]] = (
    StopRow(
        "Converse `stopReason: max_tokens`", "output.truncated", _converse("max_tokens", _SOME_TEXT)
    ),
    StopRow(
        "Converse `stopReason: guardrail_intervened` (the guardrail's `trace` kept)",
        "policy.guardrail_triggered",
        _converse("guardrail_intervened", [{"text": "Sorry, the model cannot answer this."}]),
    ),
    StopRow(
        "Converse `stopReason: content_filtered`",
        "policy.content_filtered",
        _converse("content_filtered", []),
    ),
    StopRow(
        "Converse `stopReason: model_context_window_exceeded`",
        "context.window_exceeded",
        _converse("model_context_window_exceeded", _SOME_TEXT),
    ),
    StopRow(
        "Converse `stopReason: malformed_model_output`",
        "output.malformed",
        _converse("malformed_model_output", []),
    ),
    StopRow(
        "Converse `stopReason: malformed_tool_use`",
        "output.invalid_tool_arguments",
        _converse("malformed_tool_use", []),
    ),
    StopRow(
        "`toolUse` block naming a tool that was not offered (`tools=` given, `toolSpec` "
        "entries or names)",
        "output.unknown_tool",
        _converse(
            "tool_use", [{"toolUse": {"toolUseId": "tooluse_1", "name": "rm_rf", "input": {}}}]
        ),
        [{"toolSpec": {"name": "get_time", "inputSchema": {"json": {"type": "object"}}}}],
    ),
    StopRow(
        "`stopReason: end_turn` with no content",
        "output.empty",
        _converse("end_turn", []),
    ),
    StopRow(
        "Cohere Command InvokeModel body, `generations[].finish_reason: MAX_TOKENS`",
        "output.truncated",
        {"generations": [{"id": "g1", "text": " Let it be", "finish_reason": "MAX_TOKENS"}]},
    ),
    StopRow(
        "Meta Llama InvokeModel body, `stop_reason: length`",
        "output.truncated",
        {"generation": " and you are", "generation_token_count": 10, "stop_reason": "length"},
    ),
    StopRow(
        "Mistral InvokeModel body, `outputs[].stop_reason: length`",
        "output.truncated",
        {"outputs": [{"text": "A man stands", "stop_reason": "length"}]},
    ),
    StopRow(
        "Amazon Titan Text InvokeModel body, `results[].completionReason: CONTENT_FILTERED`",
        "policy.content_filtered",
        {
            "inputTextTokenCount": 5,
            "results": [{"outputText": "", "completionReason": "CONTENT_FILTERED"}],
        },
    ),
    StopRow(
        'InvokeModel body with `"amazon-bedrock-guardrailAction": "INTERVENED"`',
        "policy.guardrail_triggered",
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": "Sorry, the model cannot answer this."}],
            "stop_reason": "end_turn",
            "amazon-bedrock-guardrailAction": "INTERVENED",
        },
    ),
)
"""Failure signals in successful results, with a minimal example of each. An InvokeModel
body in Anthropic's Messages shape is read by the anthropic adapter (``stop_reason``); the
other families' native bodies by ``_NATIVE_BODIES``."""


def _offered(tools: Iterable[Any] | None) -> frozenset[str] | None:
    """Offered tool names: Converse ``toolSpec`` entries (or a ``toolConfig``) too."""
    if tools is None:
        return None
    if isinstance(tools, dict):  # a whole toolConfig
        tools = sequence(tools.get("tools"))
    try:
        items = list(tools)
    except TypeError:
        return None
    names = [text_of(field(field(item, "toolSpec"), "name")) or item for item in items]
    return offered_names(names)


_USAGE: Final = Usage(
    at=("usage",),
    counts={"inputTokens": ("inputTokens",), "outputTokens": ("outputTokens",)},
)
"""Token counts of a Converse result (``upstream.usage``)."""


def _request_id(result: Any) -> str | None:
    return text_of(field(field(result, "ResponseMetadata"), "RequestId"))


def diagnose(result: Any, tools: Iterable[Any] | None) -> HarnessError | None:
    """The harness error a Converse result or an InvokeModel body means, or ``None``.

    Converse ``stopReason``: ``max_tokens`` is ``output.truncated``, ``guardrail_intervened``
    ``policy.guardrail_triggered``, ``content_filtered`` ``policy.content_filtered``,
    ``model_context_window_exceeded`` ``context.window_exceeded``, ``malformed_model_output``
    ``output.malformed``, ``malformed_tool_use`` ``output.invalid_tool_arguments``. A
    ``toolUse`` block naming a tool outside ``tools`` (names, ``toolSpec`` entries or a
    ``toolConfig``) is ``output.unknown_tool``; ``end_turn`` with no content ``output.empty``.
    An InvokeModel body (the parsed JSON) with ``amazon-bedrock-guardrailAction:
    INTERVENED`` is ``policy.guardrail_triggered``; a native body of another model family
    (``_NATIVE_BODIES``: Cohere Command, Meta Llama, Mistral, Amazon Titan) is read by the
    Converse stop reason its own stop reason means; an Anthropic-shaped body is read by the
    anthropic adapter.
    """
    if field(result, "amazon-bedrock-guardrailAction") == "INTERVENED":
        return stop_error(
            NAME,
            "policy.guardrail_triggered",
            "guardrail_intervened",
            "A Bedrock guardrail intervened and replaced the output.",
            request_id=_request_id(result),
        )
    reason = text_of(field(result, "stopReason"))
    if reason is None:
        native = _native_stop(result)
        if native is not None:
            code, detail = _STOPS[native[0]]
            stopped = stop_error(NAME, code, native[1], detail, request_id=_request_id(result))
            stopped.result = result
            return stopped
        if any(isinstance(result, dict) and body.marker in result for body in _NATIVE_BODIES):
            return None
        if text_of(field(result, "type")) == "message" or field(result, "stop_reason"):
            from ._routing import adapter

            return adapter("anthropic").diagnose(result, tools)
        return None
    found = _judge(result, reason, tools)
    if found is not None and found.result is None:
        found.result = result
    return found


def _judge(result: Any, reason: str, tools: Iterable[Any] | None) -> HarnessError | None:
    extra: dict[str, Any] = {"usage": read_usage(result, _USAGE)}
    trace = field(result, "trace")
    if reason in _STOPS:
        code, detail = _STOPS[reason]
        if reason == "guardrail_intervened" and isinstance(trace, dict):
            extra["trace"] = trace
        return stop_error(NAME, code, reason, detail, request_id=_request_id(result), **extra)
    blocks = sequence(field(field(field(result, "output"), "message"), "content"))
    offered = _offered(tools)
    produced = False
    for block in blocks:
        use = field(block, "toolUse")
        if use is not None:
            produced = True
            problem = tool_call_problem(
                field(use, "name"), field(use, "input"), field(use, "toolUseId"), offered, NAME
            )
            if problem is not None:
                return problem
        elif text_of(field(block, "text")):
            produced = True
        elif isinstance(block, dict) and block and not {"text", "reasoningContent"} & set(block):
            produced = True  # an image, a document, ...: output all the same
    if not produced and reason not in _QUIET:
        return stop_error(
            NAME,
            "output.empty",
            reason,
            "The model returned no content.",
            request_id=_request_id(result),
            **extra,
        )
    return None


_STREAM_ERRORS: Final = (
    "modelStreamErrorException",
    "throttlingException",
    "validationException",
    "internalServerException",
    "serviceUnavailableException",
    "modelTimeoutException",
)


def _stream_error(kind: str, body: Any) -> HarnessError:
    """An exception event of a stream given as data (botocore raises it when iterating)."""
    extra = _original(body)
    facts = _facts(None, {}, kind, text_of(field(body, "message")), in_stream=True, extra=extra)
    return decide(TABLE, facts)


def _chunk_json(event: Any) -> Any:
    """The JSON inside an InvokeModelWithResponseStream ``chunk`` event, or ``None``."""
    raw = field(field(event, "chunk"), "bytes")
    if isinstance(raw, (bytes, bytearray)):
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return None
    return None


def stream_state(first: Any, keep_text: int = 0) -> StreamState:
    """The state machine of a ConverseStream or InvokeModelWithResponseStream, for its first
    event (``_bedrock_stream``)."""
    from ._bedrock_stream import stream_state as made

    return made(first, keep_text)


def diagnose_stream(chunks: Iterable[Any], tools: Iterable[Any] | None) -> HarnessError | None:
    """The harness error a finished ConverseStream or InvokeModelWithResponseStream means.

    The events are fed to the stream's state machine (``_bedrock_stream``): ConverseStream
    events (text and ``toolUse`` input pieces, ``messageStop`` with its ``stopReason``,
    ``metadata`` with usage and the guardrail ``trace``) are read like a Converse result once
    ``messageStop`` came; InvokeModelWithResponseStream ``chunk`` events are decoded: a
    guardrail's ``amazon-bedrock-guardrailAction`` decides, Anthropic-shaped events are read
    as the anthropic adapter reads its streams, other families by their own stop reason. An
    exception event given as data (``modelStreamErrorException``, ``throttlingException``,
    ...) is read like its HTTP twin. A stream that ended without its terminal event after its
    first event was cut (``upstream.invalid_response``).
    """
    try:
        events = list(chunks)
    except Exception:  # not a sequence of events at all
        return None
    if not events:
        return None
    return fold(stream_state(events[0]), events, tools)  # type: ignore[no-any-return]
