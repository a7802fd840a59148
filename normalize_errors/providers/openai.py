"""OpenAI, Azure OpenAI and OpenAI-compatible servers (vLLM, Ollama, OpenRouter, Groq, ...).

Reads the exceptions of the ``openai`` SDK (1.x, 2.x, 3.x) by class name and attributes,
raw error bodies of the OpenAI shape (``{"error": {"message", "type", "param", "code"}}``,
the top-level ``{"object": "error", ...}`` of vLLM and Mistral, Ollama's
``{"error": "text"}``, Azure's ``innererror``), and the results of chat completions and the
Responses API for failure stop reasons.

Facts worth knowing (see ``TABLE`` for the mapping):

* ``body`` on an SDK error is the *inner* error object, or the raw text of a non-JSON body;
* an ``{"error": ...}`` inside a stream raises a plain ``APIError`` with no status;
* 429 means three different things: wait (``rate_limit_exceeded``), never (a request
  larger than the per-minute limit) and pay (``insufficient_quota``);
* the wait is often only in the message ("Please try again in 1.2s").
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

from .._rules import (
    CONTEXT_WORDING,
    Facts,
    Rule,
    StopRow,
    attempts_of,
    build,
    class_entry,
    classify,
    offered_names,
    rule,
    stop_error,
    tool_call_problem,
)
from .._signals import (
    body_text,
    field,
    integer,
    lower_headers,
    parse_body,
    sequence,
    short,
    text_of,
)
from .._stated import finish_failure
from ..exceptions import HarnessError

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
]

NAME: Final = "openai"

_QUOTA_IDS: Final = (
    "insufficient_quota",
    "exceeded_current_quota_error",
    "billing_hard_limit_reached",
    "billing_not_active",
    "credit_balance_exhausted",
    "insufficient_balance",
    "insufficient_credits",
)
_FILTER_IDS: Final = (
    "content_filter",
    "content_policy_violation",
    "responsibleaipolicyviolation",
    "invalid_prompt",
    "image_content_policy_violation",
    "bio_policy",
    "misalignment_policy_violation",
    "moderation_blocked",
)
_AUTH_IDS: Final = (
    "invalid_api_key",
    "invalid_authentication",
    "unsupported_country_region_territory",
    "invalid_organization",
    "account_deactivated",
    "authentication_error",
    "permission_error",
    "permissiondenied",
)
_RATE_IDS: Final = (
    "rate_limit_exceeded",
    "too_many_requests",
    "rate_limit_error",
    "throttling_error",
)
_REQUEST_IDS: Final = (
    "model_not_found",
    "deploymentnotfound",
    "not_found_error",
    "invalid_request_error",
    "invalid_value",
    "unsupported_parameter",
    "unsupported_value",
    "invalid_image",
    "invalid_image_format",
    "invalid_base64_image",
    "invalid_image_url",
    "image_too_large",
    "image_too_small",
    "image_parse_error",
    "invalid_image_mode",
    "image_file_too_large",
    "unsupported_image_media_type",
    "empty_image_file",
    "failed_to_download_image",
    "image_file_not_found",
    "data_residency_mismatch",
)
_SERVER_IDS: Final = (
    "server_error",
    "internal_error",
    "service_unavailable",
    "service_unavailable_error",
    "api_error",
)

TABLE: Final[tuple[Rule, ...]] = (
    rule(
        "context.window_exceeded",
        "code `context_length_exceeded` (or `string_above_max_length`, llama.cpp's "
        "`exceed_context_size_error`, whose `n_ctx` and `n_prompt_tokens` fill `limit`)",
        retryable=False,
        ids=("context_length_exceeded", "string_above_max_length", "exceed_context_size_error"),
    ),
    rule(
        "context.window_exceeded",
        "the message says the input is over the context window (OpenAI, vLLM, DeepSeek, "
        "Mistral, Groq wording)",
        retryable=False,
        message=CONTEXT_WORDING,
    ),
    rule(
        "context.window_exceeded",
        "'Request too large … per min': one request is larger than the per-minute token "
        "limit, so waiting cannot help; shrink it",
        retryable=False,
        message=r"request too large for",
    ),
    rule(
        "upstream.rate_limited",
        "a quota or billing code: `insufficient_quota`, `billing_hard_limit_reached`, …",
        retryable=False,
        ids=_QUOTA_IDS,
    ),
    rule("upstream.rate_limited", "status 402 (credits or balance)", retryable=False, status=[402]),
    rule(
        "upstream.rate_limited",
        "the message says the quota, balance or credits ran out, or the account is suspended "
        "over its spending limit or unpaid invoices (Fireworks answers that with a 412)",
        retryable=False,
        message=r"insufficient (?:balance|credits?|quota)|exceeded your current quota"
        r"|credit limit|out of credits|more credits|monthly spending limit|past invoices",
    ),
    rule(
        "policy.content_filtered",
        "a content filter or safety system blocked it: `content_filter` (Azure "
        "`ResponsibleAIPolicyViolation`), `content_policy_violation`, `invalid_prompt`, …",
        retryable=False,
        ids=_FILTER_IDS,
    ),
    rule(
        "upstream.authentication_failed",
        "a key, organization or region code: `invalid_api_key`, "
        "`unsupported_country_region_territory`, …",
        retryable=False,
        ids=_AUTH_IDS,
    ),
    rule("upstream.authentication_failed", "status 401 or 403", status=[401, 403]),
    rule(
        "upstream.authentication_failed",
        "no API key was given",
        retryable=False,
        message=r"api_key client option must be set|didn't provide an api key"
        r"|no api key provided|missing (?:bearer|api key|credentials)",
    ),
    rule(
        "upstream.overloaded",
        "the message says the model or server is overloaded",
        retryable=True,
        message=r"overloaded",
    ),
    rule("upstream.overloaded", "status 529", retryable=True, status=[529]),
    rule("upstream.rate_limited", "status 429", status=[429]),
    rule(
        "upstream.authentication_failed",
        "the message says the key is wrong, whatever the status (xAI answers 'Incorrect API "
        "key provided' with a 400)",
        retryable=False,
        message=r"incorrect api key|invalid api key|api key (?:is )?(?:invalid|not valid)"
        r"|invalid x-api-key",
    ),
    rule(
        "output.unknown_tool",
        "the provider refused a call to a tool the request did not offer (Groq: 'attempted "
        "to call tool … which was not in request.tools', 'Tool choice is none, but model "
        "called a tool'); the tool's name goes to `location`, and `model_feedback` says so",
        message=r"which was not in request\.tools|tool choice is none, but model called",
    ),
    rule(
        "output.invalid_tool_arguments",
        "the provider refused the arguments of a tool call (Groq: 'parameters for tool X did "
        "not match schema'); the schema errors go to `model_feedback`",
        message=r"did not match schema",
    ),
    rule(
        "output.malformed",
        "a required tool call never came (Groq: 'Tool choice is required, but model did not "
        "call a tool')",
        message=r"tool choice is required, but model did not",
    ),
    rule(
        "output.malformed",
        "code `tool_use_failed` otherwise: the model's tool call could not be parsed; what it "
        "wrote (`failed_generation`) is quoted in `model_feedback`",
        ids=["tool_use_failed"],
    ),
    rule(
        "upstream.unavailable",
        "a local server needs more memory than the machine has (Ollama 'model requires more "
        "system memory (7.3 GiB) than is available'): waiting will not free it",
        retryable=False,
        message=r"requires more (?:system |gpu |video )?memory|more memory than (?:is )?avail"
        r"|not enough (?:system |gpu |video )?memory",
    ),
    rule(
        "upstream.rate_limited",
        "a rate-limit code (`rate_limit_exceeded`, …) without a status, as in a stream",
        retryable=True,
        ids=_RATE_IDS,
    ),
    rule(
        "tool.timeout",
        "Responses API `vector_store_timeout` (the file search tool timed out)",
        retryable=True,
        ids=["vector_store_timeout"],
    ),
    rule(
        "upstream.invalid_request",
        "an invalid-request code: `model_not_found`, `DeploymentNotFound`, "
        "`invalid_request_error`, image errors, …",
        ids=_REQUEST_IDS,
    ),
    rule(
        "upstream.unavailable",
        "a server-error code (`server_error`, …)",
        retryable=True,
        ids=_SERVER_IDS,
    ),
)
"""The mapping, first matching row wins; otherwise the HTTP status decides."""

CLASSES: Final[dict[str, tuple[str, bool] | None]] = {
    "APIStatusError": None,
    "APIError": None,
    "APITimeoutError": ("upstream.unavailable", True),
    "APIConnectionError": ("upstream.unavailable", True),
    "APIResponseValidationError": ("upstream.invalid_response", True),
    "LengthFinishReasonError": ("output.truncated", False),
    "ContentFilterFinishReasonError": ("policy.content_filtered", False),
    "OAuthError": ("upstream.authentication_failed", False),
    "SubjectTokenProviderError": ("upstream.authentication_failed", False),
    "WebSocketConnectionClosedError": ("upstream.unavailable", True),
    "WebSocketQueueFullError": ("upstream.unavailable", True),
    "InvalidWebhookSignatureError": ("upstream.invalid_response", False),
    "OpenAIError": None,
}
"""SDK exception class -> fixed (code, retryable), or ``None`` to read it with ``TABLE``.

The first class of the exception's MRO found here decides; a test checks that every
exception class the SDK exports is covered by an entry more specific than ``OpenAIError``.
"""

_CREDENTIALS: Final = tuple(row for row in TABLE if row.code == "upstream.authentication_failed")


# -- reading error objects ----------------------------------------------------------------------


def _inner(body: Any) -> Any:
    """The error object inside a parsed body: ``error`` if present, else the body itself."""
    if isinstance(body, list) and body and isinstance(body[0], dict):
        body = body[0]
    if isinstance(body, dict) and "error" in body:
        return body["error"]
    return body


def _read(error: Any, facts: dict[str, Any]) -> None:
    """Fill ``facts`` from an OpenAI-shaped error object (a dict, a string or anything)."""
    if isinstance(error, str):
        facts.setdefault("message", error)
        return
    if not isinstance(error, dict):
        return
    message = error.get("message")
    if isinstance(message, str):
        facts["message"] = message
    elif isinstance(message, (dict, list)):
        facts["message"] = short(json.dumps(message))
    code = error.get("code")
    code_text = text_of(code) or (str(code) if integer(code) is not None else None)
    ids = list(facts.get("ids", ()))
    if code_text:
        facts["vendor_code"] = code_text
    error_type = text_of(error.get("type"))
    if error_type:
        facts["vendor_type"] = error_type
    extra: dict[str, Any] = facts.setdefault("extra", {})
    param = error.get("param")
    if isinstance(param, str):
        extra["param"] = param
    inner = error.get("innererror")
    if isinstance(inner, dict):
        ids.append(text_of(inner.get("code")))
        extra["innererror"] = inner
    metadata = error.get("metadata")
    if isinstance(metadata, dict):
        extra["metadata"] = metadata
    generation = error.get("failed_generation")  # Groq: what the model wrote instead
    if isinstance(generation, str):
        extra["failed_generation"] = short(generation, 2048)
    for name in ("n_ctx", "n_prompt_tokens"):  # llama.cpp: the context and the prompt size
        number = error.get(name)
        if type(number) is int:
            extra[name] = number
    listed = error.get("errors")  # Cloudflare's API envelope: {"success": false, "errors": [...]}
    if "message" not in facts and isinstance(listed, list) and listed:
        first = listed[0]
        if isinstance(first, dict):
            text = first.get("message")
            if isinstance(text, str):
                facts["message"] = text
            number = first.get("code")
            if "vendor_code" not in facts and (text_of(number) or integer(number) is not None):
                facts["vendor_code"] = text_of(number) or str(number)
    facts["ids"] = ids


def _facts(
    status: int | None,
    headers: dict[str, str],
    body: Any,
    text: str,
    *,
    exception: str | None = None,
    in_stream: bool = False,
    attempts: int | None = None,
) -> Facts:
    found: dict[str, Any] = {}
    _read(_inner(body), found)
    if body is None and text and not found.get("message") and not text.lstrip().startswith("<"):
        found["message"] = short(text.strip(), 2048) if len(text) < 2048 else None
    request_id = headers.get("x-request-id") or headers.get("apim-request-id")
    return Facts(
        NAME,
        status=status,
        headers=headers,
        body=body,
        text=text,
        message=found.get("message"),
        vendor_code=found.get("vendor_code"),
        vendor_type=found.get("vendor_type"),
        ids=found.get("ids", ()),
        request_id=request_id,
        exception=exception,
        in_stream=in_stream,
        attempts=attempts,
        extra=found.get("extra"),
    )


def looks_like(body: Any) -> bool:
    """Whether a parsed body has the OpenAI error shape (also vLLM, Ollama, Azure, ...)."""
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return False
    error = body.get("error")
    if isinstance(error, dict):
        return "message" in error or "code" in error
    if isinstance(error, str):
        return True
    return body.get("object") == "error" and "message" in body


def from_response(status: Any, headers: Any, body: Any) -> HarnessError:
    """The harness error for a raw HTTP error response in the OpenAI shape."""
    low = lower_headers(headers)
    code = integer(status)
    parsed = parse_body(body)
    facts = _facts(code, low, parsed, body_text(body))
    error_code, retryable = classify(TABLE, facts)
    return build(error_code, retryable, facts)


# -- SDK exceptions -----------------------------------------------------------------------------


def normalize(exc: BaseException) -> HarnessError | None:
    """The harness error for an exception of the ``openai`` SDK, or ``None``."""
    entry = class_entry(exc, CLASSES, NAME)
    if entry is None:
        return None
    name, fixed = entry
    qualname = f"{type(exc).__module__}.{type(exc).__qualname__}"
    if name in ("LengthFinishReasonError", "ContentFilterFinishReasonError"):
        completion = field(exc, "completion")
        found = diagnose(completion, None) if completion is not None else None
        if found is not None:
            found.upstream = {**found.upstream, "exception": qualname}
            return found
    response = field(exc, "response")
    headers = lower_headers(field(response, "headers"))
    status = integer(field(exc, "status_code"))
    body = field(exc, "body")
    text = body if isinstance(body, str) else ""
    parsed = None if isinstance(body, str) else body
    if isinstance(body, str):
        parsed = parse_body(body)
    in_stream = name == "APIError" and status is None
    facts = _facts(
        status,
        headers,
        parsed,
        text,
        exception=qualname,
        in_stream=in_stream,
        attempts=attempts_of(exc),
    )
    if fixed is not None:
        code, retryable = fixed
        if name == "APITimeoutError":
            facts.vendor_code = "timeout"
        elif name == "APIConnectionError":
            facts.vendor_code = "connection_error"
        message = field(exc, "message")
        if isinstance(message, str) and not facts.message:
            facts.message = message
        cause = exc.__cause__
        if cause is not None:
            origin = f"{type(cause).__module__}.{type(cause).__name__}"
            facts.extra = {**facts.extra, "cause": origin}
        return build(code, retryable, facts)
    if name == "OpenAIError" and not facts.message:
        message = field(exc, "message") or (exc.args[0] if exc.args else None)
        facts.message = message if isinstance(message, str) else None
        code, retryable = classify(_CREDENTIALS, facts)
        if code == "upstream.authentication_failed":
            return build(code, retryable, facts)
        return None
    code, retryable = classify(TABLE, facts)
    return build(code, retryable, facts)


# -- results ----------------------------------------------------------------------------------


def _stop(code: str, reason: str, detail: str, result: Any, **extra: Any) -> HarnessError:
    request_id = text_of(field(result, "_request_id", "id"))
    return stop_error(NAME, code, reason, detail, request_id=request_id, **extra)


def _usage(result: Any) -> dict[str, Any]:
    usage = field(result, "usage")
    out: dict[str, Any] = {}
    for name in ("completion_tokens", "output_tokens", "prompt_tokens", "input_tokens"):
        value = integer(field(usage, name))
        if value is not None:
            out[name] = value
    details = field(usage, "completion_tokens_details", "output_tokens_details")
    reasoning = integer(field(details, "reasoning_tokens"))
    if reasoning is not None:
        out["reasoning_tokens"] = reasoning
    return out


def _chat(result: Any, offered: frozenset[str] | None) -> HarnessError | None:
    for index, choice in enumerate(sequence(field(result, "choices"))):
        finish = text_of(field(choice, "finish_reason"))
        message = field(choice, "message") or {}
        content = field(message, "content")
        if content is None:
            content = field(choice, "text")
        if finish == "length":
            usage = _usage(result)
            spent = (
                " (all of them on reasoning)"
                if not content and usage.get("reasoning_tokens")
                else ""
            )
            return _stop(
                "output.truncated",
                finish,
                f"The output stopped at the output token limit{spent}.",
                result,
                usage=usage,
                choice=index,
            )
        if finish == "content_filter":
            return _stop(
                "policy.content_filtered",
                finish,
                "The provider's content filter stopped the output.",
                result,
                content_filter_results=field(choice, "content_filter_results"),
                choice=index,
            )
        refusal = field(message, "refusal")
        if isinstance(refusal, str) and refusal:
            return _stop("policy.model_refusal", finish or "refusal", refusal, result, choice=index)
        named = finish_failure(finish) if finish else None
        if named is not None and finish:
            return _stop(
                named,
                finish,
                f"The output ended with finish_reason {finish!r}.",
                result,
                model_feedback=_FINISH_FEEDBACK.get(named),
                choice=index,
            )
        calls = sequence(field(message, "tool_calls"))
        for call in calls:
            function = field(call, "function")
            found = tool_call_problem(
                field(function, "name"),
                field(function, "arguments"),
                field(call, "id"),
                offered,
                NAME,
            )
            if found is not None:
                found.result = result
                return found
        silent = not content and not calls and not field(message, "audio", "function_call")
        if finish in ("stop", None) and silent:
            return _stop("output.empty", finish or "none", "The model returned no content.", result)
    return None


def _completion(choice: dict[str, Any]) -> dict[str, Any]:
    return {"object": "chat.completion", "choices": [{"index": 0, **choice}]}


def _tool_call(name: str, arguments: str) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


_FINISH_FEEDBACK: Final = {
    "output.invalid_tool_arguments": "Your last tool call could not be parsed. Call the tool "
    "again with its arguments as one valid JSON object.",
    "output.unknown_tool": "You called a tool that is not available here; call only the tools "
    "offered.",
    "output.malformed": "Your last answer could not be read. Answer again in the expected format.",
}
"""``model_feedback`` for an unlisted finish reason that names a failure the model can fix."""

STOP_REASONS: Final[tuple[StopRow, ...]] = (
    StopRow(
        "chat `finish_reason: length`",
        "output.truncated",
        _completion({"finish_reason": "length", "message": {"content": "The fifty states are"}}),
    ),
    StopRow(
        "chat `finish_reason: content_filter` (Azure)",
        "policy.content_filtered",
        _completion({"finish_reason": "content_filter", "message": {"content": None}}),
    ),
    StopRow(
        "chat `message.refusal` (Structured Outputs)",
        "policy.model_refusal",
        _completion({"finish_reason": "stop", "message": {"refusal": "I can't help with that."}}),
    ),
    StopRow(
        "chat tool call whose `arguments` are not one JSON object",
        "output.invalid_tool_arguments",
        _completion(
            {
                "finish_reason": "tool_calls",
                "message": {"tool_calls": [_tool_call("judge", '{"success":true,"reason":"The')]},
            }
        ),
    ),
    StopRow(
        "chat tool call to a tool that was not offered (`tools=` given)",
        "output.unknown_tool",
        _completion(
            {
                "finish_reason": "tool_calls",
                "message": {"tool_calls": [_tool_call("delete_everything", "{}")]},
            }
        ),
        [{"type": "function", "function": {"name": "get_weather"}}],
    ),
    StopRow(
        "chat `finish_reason` nobody listed whose words name a failure: `malformed_function_call`"
        " (an OpenAI-shaped proxy in front of Gemini) and other `malformed`/`invalid` tool words",
        "output.invalid_tool_arguments",
        _completion({"finish_reason": "malformed_function_call", "message": {"content": None}}),
    ),
    StopRow(
        "chat unlisted `finish_reason` naming a filter (`safety`, `blocked`, `recitation`, ...)",
        "policy.content_filtered",
        _completion({"finish_reason": "SAFETY", "message": {"content": None}}),
    ),
    StopRow(
        "chat unlisted `finish_reason` naming a length (`max_tokens`, `token_limit`, ...)",
        "output.truncated",
        _completion({"finish_reason": "max_tokens", "message": {"content": "The fifty"}}),
    ),
    StopRow(
        "chat unlisted `finish_reason` naming an error (`error`, as OpenRouter ends a stream that "
        "failed mid-generation); any other unlisted reason is not a failure",
        "upstream.unavailable",
        _completion({"finish_reason": "error", "message": {"content": "The fifty"}}),
    ),
    StopRow(
        "chat `finish_reason: stop` with no content, tool call or refusal",
        "output.empty",
        _completion({"finish_reason": "stop", "message": {"content": ""}}),
    ),
    StopRow(
        "Responses `status: incomplete`, reason `max_output_tokens`",
        "output.truncated",
        {
            "object": "response",
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": [],
        },
    ),
    StopRow(
        "Responses `status: incomplete`, reason `content_filter`",
        "policy.content_filtered",
        {
            "object": "response",
            "status": "incomplete",
            "incomplete_details": {"reason": "content_filter"},
            "output": [],
        },
    ),
    StopRow(
        "Responses `status: failed` (here `server_error`; its `error.code` is read with the "
        "table above)",
        "upstream.unavailable",
        {
            "object": "response",
            "status": "failed",
            "output": [],
            "error": {
                "code": "server_error",
                "message": "The model failed to generate a response.",
            },
        },
    ),
    StopRow(
        "Responses `status: cancelled`",
        "harness.cancelled",
        {"object": "response", "status": "cancelled", "output": []},
    ),
    StopRow(
        "Responses `refusal` content part",
        "policy.model_refusal",
        {
            "object": "response",
            "status": "completed",
            "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}],
        },
    ),
    StopRow(
        "Responses `status: completed` with no output",
        "output.empty",
        {"object": "response", "status": "completed", "output": []},
    ),
)
"""Failure signals in successful results, with a minimal example of each."""


_INCOMPLETE: Final = {
    "max_output_tokens": ("output.truncated", "The output stopped at max_output_tokens."),
    "content_filter": ("policy.content_filtered", "The provider's content filter stopped it."),
}


def _responses(result: Any, offered: frozenset[str] | None) -> HarnessError | None:
    status = text_of(field(result, "status"))
    if status == "failed":
        return _from_error_object(
            field(result, "error"), stop_reason="failed", request_id=text_of(field(result, "id"))
        )
    if status == "incomplete":
        reason = text_of(field(field(result, "incomplete_details"), "reason")) or "incomplete"
        code, detail = _INCOMPLETE.get(
            reason, ("output.truncated", f"The response is incomplete ({reason}).")
        )
        return _stop(code, reason, detail, result, usage=_usage(result))
    if status == "cancelled":
        return _stop("harness.cancelled", status, "The response was cancelled.", result)
    if status not in ("completed", None):
        return None
    output = sequence(field(result, "output"))
    produced = False
    for item in output:
        kind = text_of(field(item, "type"))
        if kind == "message":
            for part in sequence(field(item, "content")):
                part_type = text_of(field(part, "type"))
                if part_type == "refusal":
                    refusal = text_of(field(part, "refusal")) or "The model refused."
                    return _stop("policy.model_refusal", "refusal", refusal, result)
                if text_of(field(part, "text")):
                    produced = True
        elif kind == "function_call":
            produced = True
            problem = tool_call_problem(
                field(item, "name"),
                field(item, "arguments"),
                field(item, "call_id"),
                offered,
                NAME,
            )
            if problem is not None:
                problem.result = result
                return problem
        elif kind not in ("reasoning", None):
            produced = True
    if not produced and status == "completed":
        return _stop("output.empty", "completed", "The model returned no output.", result)
    return None


def diagnose(result: Any, tools: Iterable[Any] | None) -> HarnessError | None:
    """The harness error a chat completion or Responses result means, or ``None``.

    Looks at every choice's ``finish_reason`` (``length``, ``content_filter``), refusals,
    tool calls (arguments that are not a JSON object; names outside ``tools`` when given)
    and empty output; for the Responses API at ``status`` (``failed``, ``incomplete``,
    ``cancelled``) and its output items.
    """
    offered = offered_names(tools)
    if field(result, "choices") is not None:
        found = _chat(result, offered)
    elif text_of(field(result, "object")) == "response" or (
        field(result, "output") is not None and field(result, "status") is not None
    ):
        found = _responses(result, offered)
    elif type(result) is dict or type(result).__module__.startswith("openai.types."):
        return _not_a_result(result)  # a body that is no result (the SDK builds one anyway)
    else:
        return None
    if found is not None and found.result is None:
        found.result = result
    return found


def _not_a_result(result: Any) -> HarnessError | None:
    """A 200 whose JSON is not a completion: an error object, or something else entirely.

    The SDK builds its result type from any JSON without checking it, so a gateway's
    ``{"html-message": "Network connection lost."}`` (Portkey) becomes a ``ChatCompletion``
    with no choices. Its ``error`` member is read like an error in a stream; any other body
    is ``upstream.invalid_response``. ``None`` when the body had none of its own members.
    """
    extra = result if type(result) is dict else getattr(result, "model_extra", None)
    if not isinstance(extra, dict) or not extra:
        return None
    error = extra.get("error")
    if isinstance(error, (dict, str)):
        found = _from_error_object(error if isinstance(error, dict) else {"message": error})
    else:
        from .._answers import not_a_result

        found = not_a_result(extra, NAME)
    found.result = result
    return found


def _from_error_object(error: Any, **context: Any) -> HarnessError:
    """The harness error for an OpenAI error object that came without an HTTP status.

    ``error`` is a dict or an SDK model with ``code``, ``message``, ``type`` and ``param``
    (a failed Response's ``error``, a stream's ``error`` event); ``context`` goes to ``Facts``.
    """
    if not isinstance(error, dict):
        error = {name: field(error, name) for name in ("code", "message", "type", "param")}
    found: dict[str, Any] = {}
    _read(error, found)
    facts = Facts(
        NAME,
        message=found.get("message"),
        vendor_code=found.get("vendor_code"),
        vendor_type=found.get("vendor_type"),
        ids=found.get("ids", ()),
        extra=found.get("extra"),
        **context,
    )
    code, retryable = classify(TABLE, facts)
    return build(code, retryable, facts)


def _error_event(event: Any) -> HarnessError:
    """A Responses ``error`` event that the SDK yields rather than raises.

    The documented shape is flat (``code``, ``message``, ``param`` beside ``"type":
    "error"``); the live API has been seen nesting them under ``error``. Both are read.
    """
    nested = field(event, "error")
    if not isinstance(nested, dict):
        nested = {name: field(event, name) for name in ("code", "message", "param")}
    return _from_error_object(nested, in_stream=True)


def _get(obj: Any, name: str) -> Any:
    """A member of a chunk: a key of a dict, else an attribute (``None`` if missing)."""
    if type(obj) is dict:
        return obj.get(name)
    try:  # free in CPython 3.11+ unless something raises
        return getattr(obj, name, None)
    except Exception:
        return None


def diagnose_stream(chunks: Iterable[Any], tools: Iterable[Any] | None) -> HarnessError | None:
    """The harness error a finished stream means: chat chunks or Responses events.

    Chat chunks are folded into one completion (finish reason, whether any content came,
    refusal text, tool-call arguments) and read like ``diagnose``. Responses events give
    their ``error`` event or the ``response`` of their final
    ``response.completed|failed|incomplete`` event. The kind of stream is decided once, from
    its first chunk, and only members chunks of that kind have are read: this runs at the
    end of every wrapped stream.
    """
    items = chunks if isinstance(chunks, list) else list(chunks)
    if not items:
        return None
    if _get(items[0], "choices") is None:
        return _events(items, tools)
    choices: dict[Any, dict[str, Any]] = {}
    for chunk in items:
        for choice in sequence(_get(chunk, "choices")):
            index = _get(choice, "index")
            if type(index) is not int:
                index = 0
            state = choices.get(index)
            if state is None:
                state = choices[index] = {
                    "content": False,
                    "refusal": [],
                    "calls": {},
                    "finish_reason": None,
                    "choice": choice,
                }
            finish = _get(choice, "finish_reason")
            if finish:
                state["finish_reason"] = finish
                state["choice"] = choice
            delta = _get(choice, "delta")
            if delta is None:
                continue
            if not state["content"] and _get(delta, "content"):
                state["content"] = True
            refusal = _get(delta, "refusal")
            if refusal:
                state["refusal"].append(refusal)
            calls = _get(delta, "tool_calls")
            if calls:
                _fold_calls(state["calls"], calls)
    folded = {"choices": [_folded(index, state) for index, state in choices.items()]}
    found = diagnose(folded, tools)
    if found is not None:
        found.result = None
    return found


def _fold_calls(slots: dict[Any, dict[str, Any]], calls: Any) -> None:
    """Add the tool-call pieces of one chunk to the calls assembled so far."""
    for call in sequence(calls):
        index = _get(call, "index")
        slot = slots.setdefault(
            index if type(index) is int else 0, {"id": None, "name": "", "arguments": ""}
        )
        slot["id"] = slot["id"] or text_of(_get(call, "id"))
        function = _get(call, "function")
        if function is not None:
            slot["name"] += text_of(_get(function, "name")) or ""
            slot["arguments"] += text_of(_get(function, "arguments")) or ""


def _folded(index: Any, state: dict[str, Any]) -> dict[str, Any]:
    """One choice of the completion a chat stream adds up to."""
    calls = [
        {"id": c["id"], "function": {"name": c["name"], "arguments": c["arguments"]}}
        for c in state["calls"].values()
    ]
    return {
        "index": index,
        "finish_reason": text_of(state["finish_reason"]),
        "content_filter_results": field(state["choice"], "content_filter_results")
        if state["finish_reason"] == "content_filter"
        else None,
        "message": {
            "content": "…" if state["content"] else None,
            "refusal": "".join(p for p in state["refusal"] if isinstance(p, str)) or None,
            "tool_calls": calls or None,
        },
    }


def _events(items: list[Any], tools: Iterable[Any] | None) -> HarnessError | None:
    """The failure a Responses event stream ends with, if any."""
    final: Any = None
    for event in items:
        kind = text_of(field(event, "type"))
        if kind == "error":
            return _error_event(event)
        if kind in ("response.completed", "response.failed", "response.incomplete"):
            final = field(event, "response")
    return None if final is None else diagnose(final, tools)
