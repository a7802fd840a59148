"""Gemini's results and streams: block and finish reasons, function calls, usage (the
package's doc says what is worth knowing)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..._base._http_wire import short
from ..._base._safe_read import field
from ..._model._exceptions import HarnessError
from ..._reading._rules import (
    StopRow,
    Usage,
    offered_names,
    read_usage,
    stop_error,
    tool_call_problem,
)
from ._errors import NAME, _decide, _facts, _word

# -- results ------------------------------------------------------------------------------------

_FILTERED: Final = frozenset(
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
_REQUEST: Final = {
    "MISSING_THOUGHT_SIGNATURE": "A thought signature of an earlier turn is missing from the "
    "request.",
    "LANGUAGE": "The output was stopped for using an unsupported language.",
}

_USABLE: Final = (
    ("function_call", "functionCall"),
    ("inline_data", "inlineData"),
    ("file_data", "fileData"),
    ("executable_code", "executableCode"),
    ("code_execution_result", "codeExecutionResult"),
)


USAGE: Final = Usage(
    at=(("usage_metadata", "usageMetadata"),),
    counts={
        "prompt_token_count": (("prompt_token_count", "promptTokenCount"),),
        "candidates_token_count": (("candidates_token_count", "candidatesTokenCount"),),
        "thoughts_token_count": (("thoughts_token_count", "thoughtsTokenCount"),),
        "cached_content_token_count": (("cached_content_token_count", "cachedContentTokenCount"),),
        "total_token_count": (("total_token_count", "totalTokenCount"),),
    },
)
"""Token counts of a generate_content result (``upstream.usage``)."""


def _ratings(ratings: Any) -> list[dict[str, Any]]:
    """The safety ratings that blocked (else those rated MEDIUM or HIGH), as plain dicts."""
    if not isinstance(ratings, (list, tuple)):
        return []
    flat = []
    for item in ratings[:32]:
        entry: dict[str, Any] = {
            "category": _word(field(item, "category")),
            "probability": _word(field(item, "probability")),
        }
        if field(item, "blocked") is True:
            entry["blocked"] = True
        flat.append({k: v for k, v in entry.items() if v is not None})
    blocked = [r for r in flat if r.get("blocked")]
    return blocked or [r for r in flat if r.get("probability") in ("MEDIUM", "HIGH")]


def _calls_and_output(candidate: Any) -> tuple[list[Any], bool]:
    """The function calls of a candidate and whether it holds any usable output."""
    calls: list[Any] = []
    usable = False
    parts = field(field(candidate, "content"), "parts")
    if not isinstance(parts, (list, tuple)):
        return calls, False
    for part in parts:
        call = field(part, "function_call", "functionCall")
        if call is not None:
            calls.append(call)
            usable = True
            continue
        thought = field(part, "thought") is True
        if (not thought and _word(field(part, "text"))) or any(
            field(part, *names) is not None for names in _USABLE
        ):
            usable = True
    return calls, usable


def _stop(
    code: str,
    reason: str,
    detail: str,
    result: Any,
    *,
    retryable: bool | None = None,
    model_feedback: str | None = None,
    limit: dict[str, Any] | None = None,
    **extra: Any,
) -> HarnessError:
    request_id = _word(field(result, "response_id", "responseId"))
    return stop_error(
        NAME,
        code,
        reason,
        detail,
        request_id=request_id,
        retryable=retryable,
        model_feedback=model_feedback,
        limit=limit,
        **extra,
    )


def _candidate(
    result: Any, candidate: Any, index: int, offered: frozenset[str] | None
) -> HarnessError | None:
    finish = _word(field(candidate, "finish_reason", "finishReason"))
    message = _word(field(candidate, "finish_message", "finishMessage"))
    calls, usable = _calls_and_output(candidate)
    common: dict[str, Any] = {
        "finish_message": message,
        "usage": read_usage(result, USAGE),
        "model_version": _word(field(result, "model_version", "modelVersion")),
        "candidate": index,
    }
    if finish == "MAX_TOKENS":
        spent = (
            " (all of them on thinking)"
            if not usable and common["usage"].get("thoughts_token_count")
            else ""
        )
        return _stop(
            "output.truncated",
            finish,
            f"The output stopped at the output token limit{spent}.",
            result,
            usable_output=usable,
            **common,
        )
    if finish in _FILTERED:
        return _stop(
            "policy.content_filtered",
            finish,
            message or f"The provider's filter stopped the output ({finish}).",
            result,
            safety_ratings=_ratings(field(candidate, "safety_ratings", "safetyRatings")),
            **common,
        )
    if finish == "MALFORMED_FUNCTION_CALL":
        said = f" ({short(message, 1024)})" if message else ""
        return _stop(
            "output.invalid_tool_arguments",
            finish,
            message or "The model produced a function call that could not be parsed.",
            result,
            model_feedback=f"Your last function call could not be parsed{said}. Call the "
            "function again as a function call with arguments in valid JSON, not as code.",
            **common,
        )
    if finish == "UNEXPECTED_TOOL_CALL":
        listing = ", ".join(sorted(offered)) if offered else None
        return _stop(
            "output.unknown_tool",
            finish,
            message or "The model called a tool that is not declared or not enabled.",
            result,
            model_feedback="You called a tool that is not available in this request."
            + (f" The tools you can call are: {listing}." if listing else ""),
            **common,
        )
    if finish == "TOO_MANY_TOOL_CALLS":
        made = len(calls)
        return _stop(
            "loop.budget_exceeded",
            finish,
            message or "The server-side tool loop stopped: the model made too many tool calls.",
            result,
            limit={"name": "tool_calls", "value": made} if made else None,
            **common,
        )
    if finish == "PUP_LIMITED_DISABLED":
        return _stop(
            "upstream.authentication_failed",
            finish,
            message or "The account is limited or disabled for Prohibited Use Policy violations.",
            result,
            **common,
        )
    if finish in _REQUEST:
        return _stop(
            "upstream.invalid_request", finish, message or _REQUEST[finish], result, **common
        )
    if finish == "MALFORMED_RESPONSE":
        return _stop(
            "upstream.invalid_response",
            finish,
            message or "The model's response was malformed.",
            result,
            retryable=True,
            **common,
        )
    for call in calls:
        found = tool_call_problem(
            field(call, "name"), field(call, "args"), field(call, "id"), offered, NAME
        )
        if found is not None:
            return found
    if finish == "NO_IMAGE" or not usable:
        # STOP, OTHER, no reason or one this adapter does not know, and nothing usable.
        return _stop(
            "output.empty",
            finish or "none",
            message or "The model returned no content.",
            result,
            **common,
        )
    return None


def _diagnose(result: Any, tools: Iterable[Any] | None) -> HarnessError | None:
    """``diagnose`` without its guard.

    Looks at ``prompt_feedback.block_reason`` (the prompt was blocked), then at every
    candidate's ``finish_reason`` (``MAX_TOKENS``, the safety and recitation family,
    ``MALFORMED_FUNCTION_CALL``, ``UNEXPECTED_TOOL_CALL``, ``TOO_MANY_TOOL_CALLS``, ...),
    its function calls (names outside ``tools`` when given) and empty output. A finish
    reason this adapter does not know is not a failure when the candidate has output.
    """
    offered = offered_names(tools)
    feedback = field(result, "prompt_feedback", "promptFeedback")
    blocked = _word(field(feedback, "block_reason", "blockReason"))
    found: HarnessError | None = None
    if blocked and blocked != "BLOCKED_REASON_UNSPECIFIED":
        message = _word(field(feedback, "block_reason_message", "blockReasonMessage"))
        found = _stop(
            "policy.content_filtered",
            blocked,
            message or f"The provider blocked the prompt ({blocked}).",
            result,
            block_reason=blocked,
            block_reason_message=message,
            safety_ratings=_ratings(field(feedback, "safety_ratings", "safetyRatings")),
            usage=read_usage(result, USAGE),
            model_version=_word(field(result, "model_version", "modelVersion")),
        )
    else:
        candidates = field(result, "candidates")
        if not isinstance(candidates, (list, tuple)) or not candidates:
            found = _stop(
                "output.empty",
                "none",
                "The model returned no candidates.",
                result,
                usage=read_usage(result, USAGE),
            )
        else:  # several candidates fail only together: then the first one's error
            for index, candidate in enumerate(candidates[:16]):
                problem = _candidate(result, candidate, index, offered)
                if problem is None:
                    found = None
                    break
                found = found or problem
    if found is not None and found.result is None:
        found.result = result
    return found


def _error_chunk(chunk: Mapping[str, Any]) -> HarnessError:
    """An ``{"error": ...}`` chunk in a stream of REST JSON chunks.

    The body's ``code`` decides like a status, but is not reported as one: the HTTP
    status of a stream that delivered chunks was a success.
    """
    err = _decide(_facts(None, None, dict(chunk), "", in_stream=True))
    err.upstream = {k: v for k, v in err.upstream.items() if k != "status"}
    return err


def _response(finish: str | None, parts: list[Any], **more: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **more}


_TEXT: Final = [{"text": "The fifty states are"}]

STOP_REASONS: Final[tuple[StopRow, ...]] = (
    StopRow(
        "`promptFeedback.blockReason` (any: SAFETY, PROHIBITED_CONTENT, JAILBREAK, ...)",
        "policy.content_filtered",
        {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}},
    ),
    StopRow("`finishReason: MAX_TOKENS`", "output.truncated", _response("MAX_TOKENS", _TEXT)),
    StopRow(
        "`finishReason` SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_SAFETY, "
        "IMAGE_PROHIBITED_CONTENT, IMAGE_RECITATION, MODEL_ARMOR, ESCALATION",
        "policy.content_filtered",
        _response("SAFETY", []),
    ),
    StopRow(
        "`finishReason: MALFORMED_FUNCTION_CALL` (the model may fix it)",
        "output.invalid_tool_arguments",
        _response("MALFORMED_FUNCTION_CALL", []),
    ),
    StopRow(
        "`finishReason: UNEXPECTED_TOOL_CALL`, or a function call to a tool not offered",
        "output.unknown_tool",
        _response("UNEXPECTED_TOOL_CALL", []),
    ),
    StopRow(
        "`finishReason: TOO_MANY_TOOL_CALLS` (limit `tool_calls`)",
        "loop.budget_exceeded",
        _response("TOO_MANY_TOOL_CALLS", []),
    ),
    StopRow(
        "`finishReason` MISSING_THOUGHT_SIGNATURE or LANGUAGE",
        "upstream.invalid_request",
        _response("MISSING_THOUGHT_SIGNATURE", []),
    ),
    StopRow(
        "`finishReason: MALFORMED_RESPONSE`",
        "upstream.invalid_response",
        _response("MALFORMED_RESPONSE", []),
    ),
    StopRow(
        "`finishReason: PUP_LIMITED_DISABLED` (the account is limited)",
        "upstream.authentication_failed",
        _response("PUP_LIMITED_DISABLED", []),
    ),
    StopRow(
        "`finishReason` STOP, OTHER, NO_IMAGE or one this library does not know, with no "
        "usable part (or no candidates at all)",
        "output.empty",
        _response("STOP", []),
    ),
)
"""Failure signals in successful results, with a minimal example of each. An unknown
finish reason is not a failure while the output has usable parts."""
