"""pydantic-ai's exceptions as harness errors (registered in ``BUILTIN``; imports nothing).

Duck-typed on the class names of the exception's MRO (pydantic-ai's HTTP errors are private
classes such as ``_HTTPModelRateLimitError``), its attributes and, where pydantic-ai keeps a
fact only in text, its message:

* ``ModelAPIError`` family: read through the provider SDK exception it wraps (its
  ``__cause__``), keeping pydantic-ai's ``retry_after``; without a cause, from
  ``status_code``/``headers``/``body``; else by class.
* ``UsageLimitExceeded``: ``request_limit`` is the turn limit (``loop.max_turns_exceeded``);
  the token, tool-call and cost limits are ``loop.budget_exceeded``; ``limit`` from the text.
* "Exceeded maximum output retries (N)": ``output.retries_exhausted``, ``attempts`` =
  ``max_attempts`` = N+1, the last failure in ``causes``.
* "Tool 'x' exceeded max retries count of N": the cause decides: an unknown tool or invalid
  arguments give ``output.retries_exhausted`` with that cause, "Timed out after T seconds."
  ``tool.timeout``, any other ``ModelRetry`` ``tool.execution_failed``.
* ``ContentFilterError``: ``policy.model_refusal`` when the finish reason was ``refusal`` or
  the message carries the model's refusal text with no ``content_filter`` finish reason
  (OpenAI's ``message.refusal``), else ``policy.content_filtered``;
  ``OutputTokenLimitExceeded``: ``output.truncated``.
* ``FallbackExceptionGroup``: the core's group precedence picks the most telling attempt;
  every attempt is in ``causes``.
* ``RunTimedOut``: ``loop.timeout``; ``RunCancelled``: ``harness.cancelled``.
"""

from __future__ import annotations

from typing import Any, Final

from .. import HarnessError, from_response, normalize
from .._base._patterns import (
    MAX_MESSAGE,
    PYDANTIC_AI_LIMIT,
    PYDANTIC_AI_OUTPUT_RETRIES,
    PYDANTIC_AI_TIMED_OUT,
    PYDANTIC_AI_TOOL_RETRIES,
)
from .._base._safe_read import qualname
from ._common import known, names, output_error, through

__all__ = ["fallback_on"]

_API: Final = (
    ("ModelContextWindowExceededError", "context.window_exceeded", None),
    ("ModelAuthenticationError", "upstream.authentication_failed", None),
    ("ModelNotFoundError", "upstream.invalid_request", None),
    ("ModelRequestRejectedError", "upstream.invalid_request", None),
    ("ModelQuotaExceededError", "upstream.rate_limited", False),
    ("ModelRateLimitError", "upstream.rate_limited", None),
    ("ModelOverloadedError", "upstream.overloaded", None),
    ("ModelUnavailableError", "upstream.unavailable", None),
    ("ModelServerError", "upstream.unavailable", None),
    ("ModelTimeoutError", "upstream.unavailable", None),
    ("ModelConnectionError", "upstream.unavailable", None),
    ("ModelRequestTimeout", "upstream.unavailable", None),
)


def _read(exc: BaseException) -> HarnessError | None:
    """The harness error for a pydantic-ai exception, or ``None`` for one it does not know."""
    found = names(exc)
    if "FallbackExceptionGroup" in found:
        return None  # an exception group: the core's precedence decides
    if "ModelAPIError" in found:
        return _api(exc, found)
    if "UsageLimitExceeded" in found:
        return _usage(exc)
    if "RunTimedOut" in found:
        return HarnessError.from_code("loop.timeout", str(exc), upstream=_facts(exc))
    if "RunCancelled" in found:
        return HarnessError.from_code("harness.cancelled", str(exc), upstream=_facts(exc))
    if "ContentFilterError" in found:
        said = str(exc).partition("body:")[0]
        # a finish reason 'refusal', or the refusal text a provider sent without a filter's
        # finish reason (OpenAI's message.refusal: "Content filter triggered. Refusal: '...'")
        refusal = (
            "'refusal'" in said
            or "refusal" in _finish(exc)
            or ("Refusal: " in said and "'content_filter'" not in said)
        )
        code = "policy.model_refusal" if refusal else "policy.content_filtered"
        return HarnessError.from_code(code, _first_line(exc), upstream=_facts(exc))
    if "OutputTokenLimitExceeded" in found:
        return HarnessError.from_code("output.truncated", _first_line(exc), upstream=_facts(exc))
    if "UnexpectedModelBehavior" in found:
        return _behaviour(exc)
    if "ConcurrencyLimitExceeded" in found:
        return HarnessError.from_code(
            "harness.internal_error", str(exc), retryable=True, upstream=_facts(exc)
        )
    if "SuspendedResponseExpired" in found:
        return HarnessError.from_code("upstream.invalid_request", str(exc), upstream=_facts(exc))
    if "ToolFailedError" in found or "ToolFailed" in found:
        return HarnessError.from_code("tool.execution_failed", str(exc), upstream=_facts(exc))
    return None


def _facts(exc: BaseException) -> dict[str, Any]:
    cls = type(exc)
    return {"framework": "pydantic_ai", "exception": qualname(cls)}


def _first_line(exc: BaseException) -> str:
    return str(exc).partition(", body:")[0].strip() or type(exc).__name__


def _finish(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    return body if isinstance(body, str) and '"finish_reason": "refusal"' in body else ""


def _api(exc: BaseException, found: set[str]) -> HarnessError:
    err = known(exc.__cause__)
    status = getattr(exc, "status_code", None)
    if err is None and isinstance(status, int):
        headers = getattr(exc, "headers", None) or {}
        body = getattr(exc, "body", None)
        if isinstance(body, dict) and "error" not in body:
            body = {"error": body}  # pydantic-ai keeps the inner error object of the body
        err = from_response(status, headers, body)
    if err is None:
        code, retryable = next(
            ((c, r) for name, c, r in _API if name in found), ("upstream.unavailable", None)
        )
        err = HarnessError.from_code(
            code, str(getattr(exc, "message", exc)), retryable=retryable, upstream=_facts(exc)
        )
    after = getattr(exc, "retry_after", None)
    if err.retry_after is None and isinstance(after, (int, float)) and after >= 0:
        err.retry_after = float(after)
    return err


def _usage(exc: BaseException) -> HarnessError:
    text = str(exc)
    match = PYDANTIC_AI_LIMIT.compiled().search(text[:MAX_MESSAGE])
    if match is None:
        return HarnessError.from_code("loop.budget_exceeded", text, upstream=_facts(exc))
    name, value, observed = match.group(1), float(match.group(2)), match.group(3)
    limit: dict[str, Any] = {"name": "requests" if name == "request" else name, "value": value}
    if observed is not None:
        limit["observed"] = float(observed)
    code = "loop.max_turns_exceeded" if name == "request" else "loop.budget_exceeded"
    return HarnessError.from_code(
        code, text.partition(". ")[0] + ".", limit=limit, upstream=_facts(exc)
    )


def _behaviour(exc: BaseException) -> HarnessError | None:
    text = str(exc)
    cause = exc.__cause__
    match = PYDANTIC_AI_OUTPUT_RETRIES.compiled().search(text[:MAX_MESSAGE])
    if match is not None:
        retries = int(match.group(1))
        last = _failure(cause)
        return HarnessError.from_code(
            "output.retries_exhausted",
            text,
            attempts=retries + 1,
            max_attempts=retries + 1,
            causes=[last] if last is not None else (),
            upstream=_facts(exc),
        )
    match = PYDANTIC_AI_TOOL_RETRIES.compiled().search(text[:MAX_MESSAGE])
    if match is not None:
        return _tool_retries(exc, match.group(1), int(match.group(2)), cause)
    if "did not produce" in text or "empty" in text.lower():
        return HarnessError.from_code("output.empty", text, upstream=_facts(exc))
    return HarnessError.from_code("upstream.invalid_response", text, upstream=_facts(exc))


def _tool_retries(
    exc: BaseException, tool: str, retries: int, cause: BaseException | None
) -> HarnessError:
    where = {"tool_name": tool}
    found = names(cause) if cause is not None else set()
    message = str(cause) if cause is not None else ""
    timed_out = PYDANTIC_AI_TIMED_OUT.compiled().match(message[:MAX_MESSAGE])
    if "_UnknownTool" in found:
        last = HarnessError.from_code(
            "output.unknown_tool", message, model_feedback=message, location=where
        )
    elif "ValidationError" in found:
        last = output_error(cause, tool) or through(cause)  # type: ignore[arg-type]
        last = HarnessError.from_code(
            "output.invalid_tool_arguments",
            last.detail,
            model_feedback=last.model_feedback,
            location=last.location,
            causes=last.causes,
        )
    elif timed_out is not None:
        return HarnessError.from_code(
            "tool.timeout",
            f"Tool {tool!r} timed out after {timed_out.group(1)} s, {retries + 1} times",
            attempts=retries + 1,
            max_attempts=retries + 1,
            limit={"name": "tool_timeout", "value": float(timed_out.group(1)), "unit": "s"},
            location=where,
            upstream=_facts(exc),
        )
    else:
        return HarnessError.from_code(
            "tool.execution_failed",
            f"Tool {tool!r} failed {retries + 1} times; the last: {message}",
            model_feedback=message or None,
            attempts=retries + 1,
            max_attempts=retries + 1,
            location=where,
            upstream=_facts(exc),
        )
    return HarnessError.from_code(
        "output.retries_exhausted",
        str(exc).partition(". ")[0] + ".",
        attempts=retries + 1,
        max_attempts=retries + 1,
        location=where,
        causes=[last],
        upstream=_facts(exc),
    )


def _failure(cause: BaseException | None) -> HarnessError | None:
    """The last output failure pydantic-ai kept: a ValidationError, ToolRetryError or ModelRetry."""
    if cause is None:
        return None
    parsed = output_error(cause)
    if parsed is not None:
        return parsed
    found = names(cause)
    if "ToolRetryError" in found:
        part = getattr(cause, "tool_retry", None)
        content = getattr(part, "content", None)
        if isinstance(content, list) and content:
            kinds = {str(e.get("type")) for e in content if isinstance(e, dict)}
            code = "output.malformed" if kinds == {"json_invalid"} else "output.schema_violation"
            return HarnessError.from_code(code, str(cause), model_feedback=str(cause))
        if "return text" in str(content):
            return HarnessError.from_code("output.empty", str(content), model_feedback=str(content))
        return HarnessError.from_code(
            "output.schema_violation", str(cause), model_feedback=str(content or cause)
        )
    if "ModelRetry" in found:
        return HarnessError.from_code(
            "output.schema_violation", str(cause), model_feedback=str(cause)
        )
    return normalize(cause)._clone()


def fallback_on(exc: BaseException) -> bool:
    """A ``FallbackModel(..., fallback_on=fallback_on)`` predicate fed by the harness answer.

    Fall back to the next model when another model or provider may succeed: the failure is
    the provider's (``upstream.*``: overloaded, rate-limited or a spent quota, credentials,
    a request this model refuses) or a limit another model may not have (advice ``retry`` or
    ``adjust``, e.g. ``context.window_exceeded``). Policy, output, tool, loop and harness
    errors do not fall back: another model would get the same input from the same run. No
    wait happens here, whatever the ``retry_after``: the next model is asked at once.
    """
    from .. import normalize

    err = normalize(exc)
    return err.category == "upstream" or err.advice in ("retry", "adjust")
