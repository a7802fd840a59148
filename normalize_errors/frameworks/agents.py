"""The OpenAI Agents SDK's exceptions as harness errors (registered in ``BUILTIN``).

Duck-typed on class names and attributes; imports nothing. ``ModelBehaviorError`` is a
catch-all whose message decides (its wording is not a stable API; unknown wordings give
``upstream.invalid_response``):

* "Tool X not found" -> ``output.unknown_tool``; "Invalid JSON input for tool X" ->
  ``output.invalid_tool_arguments``; "Invalid JSON when parsing ..." (the final output) ->
  ``output.malformed``, or ``output.schema_violation`` with a pointer when the SDK kept the
  cause (it redacts it by default); "Responses stream ended ..." -> by the incomplete reason
  (``output.truncated``, ``policy.content_filtered``) else ``upstream.unavailable``; "Model did
  not produce a final response" -> ``output.empty``.
* ``MaxTurnsExceeded`` -> ``loop.max_turns_exceeded`` with ``limit`` (turns, from the text);
  ``ModelRefusalError`` -> ``policy.model_refusal`` (``policy.content_filtered`` for the SDK's
  fixed content-filter text); guardrail tripwires -> ``policy.guardrail_triggered`` (the
  guardrail's name and the stage in ``upstream``; the SDK's tool guardrail exceptions do not
  name the tool); ``ToolTimeoutError`` ->
  ``tool.timeout``; ``ModelTimeoutError`` -> ``upstream.unavailable``; ``UserError`` "Error
  running tool X" -> ``tool.execution_failed`` (else ``harness.internal_error``);
  ``MCPToolCancellationError`` -> ``tool.not_available``; sandbox errors by kind.
"""

from __future__ import annotations

from typing import Any, Final

from .. import HarnessError, from_response
from .._base._patterns import (
    AGENTS_ERROR_EVENT,
    AGENTS_RUN_TOOL,
    AGENTS_TOOL,
    AGENTS_TOOL_JSON,
    AGENTS_TURNS,
    MAX_MESSAGE,
)
from .._base._safe_read import qualname
from ._common import known, names, output_error

__all__ = ["retry_policy"]

_STAGES: Final = (
    ("ToolInput", "tool_input"),
    ("ToolOutput", "tool_output"),
    ("Input", "input"),
    ("Output", "output"),
)
_FILTERED: Final = "Response withheld by the provider's content filter."


def _facts(exc: BaseException, **more: Any) -> dict[str, Any]:
    cls = type(exc)
    return {"framework": "agents", "exception": qualname(cls), **more}


def _text(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    return message if isinstance(message, str) and message else str(exc)


def _read(exc: BaseException) -> HarnessError | None:
    """The harness error for an Agents SDK exception, or ``None``."""
    found = names(exc)
    text = _text(exc)
    if "MaxTurnsExceeded" in found:
        match = AGENTS_TURNS.compiled().search(text[:MAX_MESSAGE])
        limit = {"name": "turns", "value": float(match.group(1))} if match else None
        return HarnessError.from_code(
            "loop.max_turns_exceeded", text, limit=limit, upstream=_facts(exc)
        )
    if "ModelBehaviorError" in found:
        return _behaviour(exc, text)
    if "ModelRefusalError" in found:
        refusal = str(getattr(exc, "refusal", "") or text)
        code = "policy.content_filtered" if refusal == _FILTERED else "policy.model_refusal"
        return HarnessError.from_code(code, refusal, upstream=_facts(exc))
    if "TripwireTriggered" in "".join(found):
        return _guardrail(exc, found)
    if "ToolTimeoutError" in found:
        seconds = getattr(exc, "timeout_seconds", None)
        tool = getattr(exc, "tool_name", None)
        return HarnessError.from_code(
            "tool.timeout",
            text,
            limit={"name": "tool_timeout", "value": float(seconds), "unit": "s"}
            if isinstance(seconds, (int, float))
            else None,
            location={"tool_name": str(tool)} if tool else None,
            upstream=_facts(exc),
        )
    if "ModelTimeoutError" in found:
        return HarnessError.from_code(
            "upstream.unavailable", text, retryable=True, upstream=_facts(exc, code="timeout")
        )
    if "MCPToolCancellationError" in found:
        return HarnessError.from_code("tool.not_available", text, upstream=_facts(exc))
    if "SandboxError" in found:
        return _sandbox(exc, found, text)
    if "UserError" in found:
        match = AGENTS_RUN_TOOL.compiled().search(text[:MAX_MESSAGE])
        if match is not None:
            inner = known(exc.__cause__)
            return HarnessError.from_code(
                "tool.execution_failed",
                text,
                model_feedback=text,
                location={"tool_name": match.group(1)},
                causes=[inner] if inner is not None else (),
                upstream=_facts(exc),
            )
        return HarnessError.from_code("harness.internal_error", text, upstream=_facts(exc))
    return None


def _behaviour(exc: BaseException, text: str) -> HarnessError:
    facts = _facts(exc)
    match = AGENTS_TOOL.compiled().search(text[:MAX_MESSAGE])
    if match is not None:
        return HarnessError.from_code(
            "output.unknown_tool",
            text,
            model_feedback=text,
            location={"tool_name": match.group(1)},
            upstream=facts,
        )
    match = AGENTS_TOOL_JSON.compiled().search(text[:MAX_MESSAGE])
    if match is not None:
        parsed = output_error(exc.__cause__, match.group(1))
        return HarnessError.from_code(
            "output.invalid_tool_arguments",
            text,
            model_feedback=parsed.model_feedback if parsed else text,
            location=parsed.location if parsed else {"tool_name": match.group(1)},
            upstream=facts,
        )
    if text.startswith("Invalid JSON when parsing"):
        parsed = output_error(exc.__cause__)
        if parsed is not None:
            return HarnessError.from_code(
                parsed.code,
                text,
                model_feedback=parsed.model_feedback,
                location=parsed.location,
                causes=parsed.causes,
                upstream=facts,
            )
        return HarnessError.from_code("output.malformed", text, model_feedback=text, upstream=facts)
    if "stream ended" in text:
        lowered = text.lower()
        event = AGENTS_ERROR_EVENT.compiled().search(text[:MAX_MESSAGE])
        if event is not None:  # an error event: read like the provider's own error body
            body = {"error": {"code": event.group(1), "message": event.group(2) or text}}
            err = from_response(None, {}, body, provider="openai")
            if err.code != "harness.internal_error":
                err.upstream = {**err.upstream, **facts}
                return err
        if "max_output_tokens" in lowered:
            return HarnessError.from_code("output.truncated", text, upstream=facts)
        if "content_filter" in lowered:
            return HarnessError.from_code("policy.content_filtered", text, upstream=facts)
        return HarnessError.from_code("upstream.unavailable", text, upstream=facts)
    if "did not produce a final response" in text:
        return HarnessError.from_code("output.empty", text, upstream=facts)
    return HarnessError.from_code("upstream.invalid_response", text, upstream=facts)


def _guardrail(exc: BaseException, found: set[str]) -> HarnessError:
    result = getattr(exc, "guardrail_result", None)
    guardrail = getattr(result, "guardrail", None) or getattr(exc, "guardrail", None)
    getter = getattr(guardrail, "get_name", None)
    try:
        name = getter() if callable(getter) else getattr(guardrail, "name", None)
    except Exception:
        name = None
    joined = "".join(found)
    stage = next(
        (label for kind, label in _STAGES if f"{kind}GuardrailTripwireTriggered" in joined),
        None,
    )
    return HarnessError.from_code(
        "policy.guardrail_triggered",
        _text(exc),
        upstream=_facts(exc, guardrail=str(name) if name else None, stage=stage),
    )


def _sandbox(exc: BaseException, found: set[str], text: str) -> HarnessError:
    if "ExecTimeoutError" in found:
        code = "tool.timeout"
    elif "ExecNonZeroError" in found:
        code = "tool.execution_failed"
    elif any("Escape" in n or "Path" in n for n in found):
        code = "tool.sandbox_violation"
    else:
        code = "tool.execution_failed"
    retryable = getattr(exc, "retryable", None)
    return HarnessError.from_code(
        code,
        text,
        retryable=retryable if isinstance(retryable, bool) else None,
        upstream=_facts(exc, code=str(getattr(exc, "error_code", "") or "") or None),
    )


def retry_policy(*, cap: float = 60.0) -> Any:
    """An Agents SDK retry policy fed by the harness answer (``ModelRetrySettings(policy=...)``).

    It retries what is ``retryable``, waits its ``retry_after`` (else the SDK's backoff), and
    does not retry a ``retry_after`` longer than ``cap`` seconds. Use it with
    ``ModelSettings(retry=ModelRetrySettings(max_retries=N, policy=retry_policy()))``.
    """
    from agents.retry import RetryDecision

    from .. import normalize

    def policy(context: Any) -> Any:
        err = normalize(context.error).problem  # a drop-in's own code is the vendor's
        after = err.retry_after
        if not err.retryable or (after is not None and after > cap):
            return RetryDecision(retry=False, reason=err.code)
        return RetryDecision(retry=True, delay=after, reason=err.code)

    return policy
