"""OpenAI's results and streams: finish reasons, refusals, tool calls, Responses
events, usage (the package's doc says what is worth knowing)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from ..._base._safe_read import field, member, sequence, text_of
from ..._model._exceptions import HarnessError
from ..._reading._rules import (
    Facts,
    StopRow,
    Usage,
    decide,
    offered_names,
    read_usage,
    stop_error,
    tool_call_problem,
)
from ..._reading._wording import finish_failure
from ._errors import NAME, TABLE, _read

# -- results ----------------------------------------------------------------------------------


def _stop(code: str, reason: str, detail: str, result: Any, **extra: Any) -> HarnessError:
    request_id = text_of(field(result, "_request_id", "id"))
    return stop_error(NAME, code, reason, detail, request_id=request_id, **extra)


USAGE: Final = Usage(
    at=("usage",),
    counts={
        "completion_tokens": ("completion_tokens",),
        "output_tokens": ("output_tokens",),
        "prompt_tokens": ("prompt_tokens",),
        "input_tokens": ("input_tokens",),
        "reasoning_tokens": (
            ("completion_tokens_details", "output_tokens_details"),
            "reasoning_tokens",
        ),
    },
)
"""Token counts of a Chat Completions or Responses result (``upstream.usage``)."""


def _chat(result: Any, choices: Any, tools: Iterable[Any] | None) -> HarnessError | None:
    """A result of several choices (``n`` > 1) fails only when every choice fails, with
    the first one's error: one usable choice is an answer."""
    first: HarnessError | None = None
    for index, choice in enumerate(sequence(choices)):
        problem = _choice(result, index, choice, tools)
        if problem is None:
            return None
        first = first or problem
    return first


def _choice(
    result: Any, index: int, choice: Any, tools: Iterable[Any] | None
) -> HarnessError | None:
    finish = text_of(member(choice, "finish_reason"))
    if finish == "error":  # OpenRouter's word for any failure; the upstream's own says which
        native = text_of(field(choice, "native_finish_reason"))
        if native and finish_failure(native):
            finish = native
    message = member(choice, "message") or {}
    content = member(message, "content")
    if content is None:
        content = member(choice, "text")
    if finish == "length":
        usage = read_usage(result, USAGE)
        spent = (
            " (all of them on reasoning)" if not content and usage.get("reasoning_tokens") else ""
        )
        calls = sequence(field(message, "tool_calls"))
        return _stop(
            "output.truncated",
            finish,
            f"The output stopped at the output token limit{spent}.",
            result,
            usage=usage,
            choice=index,
            usable_output=bool(content) or bool(calls),
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
    refusal = member(message, "refusal")
    if isinstance(refusal, str) and refusal:
        return _stop("policy.model_refusal", finish or "refusal", refusal, result, choice=index)
    named = finish_failure(finish) if finish and finish != "stop" else None
    if named is not None and finish:
        return _stop(
            named,
            finish,
            f"The output ended with finish_reason {finish!r}.",
            result,
            model_feedback=_FINISH_FEEDBACK.get(named),
            choice=index,
        )
    calls = sequence(member(message, "tool_calls"))
    offered = offered_names(tools) if calls else None
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
        "chat `finish_reason: error` with OpenRouter's `native_finish_reason` (the upstream's own "
        "reason, e.g. Gemini's `MALFORMED_FUNCTION_CALL`): the native reason is read as above",
        "output.invalid_tool_arguments",
        _completion(
            {
                "finish_reason": "error",
                "native_finish_reason": "MALFORMED_FUNCTION_CALL",
                "message": {"content": ""},
            }
        ),
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


def _usable(result: Any) -> bool:
    """Whether a Responses result holds output a caller can use: text or a function call."""
    for item in sequence(field(result, "output")):
        kind = text_of(field(item, "type"))
        if kind == "function_call":
            return True
        if kind == "message" and any(
            text_of(field(part, "text")) for part in sequence(field(item, "content"))
        ):
            return True
    return False


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
        usable = _usable(result) if code == "output.truncated" else None
        return _stop(
            code, reason, detail, result, usage=read_usage(result, USAGE), usable_output=usable
        )
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
    choices = member(result, "choices")
    if choices is not None:
        found = _chat(result, choices, tools)
    elif text_of(field(result, "object")) == "response" or (
        field(result, "output") is not None and field(result, "status") is not None
    ):
        found = _responses(result, offered_names(tools))
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
    with no choices. Its ``error`` member is read like an error in a stream; a body that is
    an error all the same (``_envelopes.error_object``: a vendor envelope such as MiniMax's
    ``base_resp``, a stated status such as OpenRouter's ``{"code": 429, ...}``, OpenAI's bare
    error object) is read as ``from_response`` reads it inside a 2xx, by the adapter of its
    shape (``_not_answers.reported``); any other body is ``upstream.invalid_response``.
    ``None`` when the body had none of its own members.
    """
    extra = result if type(result) is dict else getattr(result, "model_extra", None)
    if not isinstance(extra, dict) or not extra:
        return None
    error = extra.get("error")
    if isinstance(error, (dict, str)):
        found = _from_error_object(error if isinstance(error, dict) else {"message": error})
    else:
        from ..._not_answers import reported

        found = reported(extra, NAME)
    found.result = result
    return found


def _from_error_object(error: Any, **context: Any) -> HarnessError:
    """The harness error for an OpenAI error object that came without an HTTP status.

    ``error`` is a dict or an SDK model with ``code``, ``message``, ``type`` and ``param``
    (a failed Response's ``error``, a stream's ``error`` event); ``context`` goes to ``Facts``.
    """
    if not isinstance(error, dict):
        error = {name: field(error, name) for name in ("code", "message", "type", "param")}
    return decide(TABLE, Facts(provider=NAME, **context, **_read(error)))


def _error_event(event: Any) -> HarnessError:
    """A Responses ``error`` event that the SDK yields rather than raises.

    The documented shape is flat (``code``, ``message``, ``param`` beside ``"type":
    "error"``); the live API has been seen nesting them under ``error``. Both are read.
    """
    nested = field(event, "error")
    if not isinstance(nested, dict):
        nested = {name: field(event, name) for name in ("code", "message", "param")}
    return _from_error_object(nested, in_stream=True)
