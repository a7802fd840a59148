"""LangChain core's exceptions as harness errors (registered in ``BUILTIN``; imports nothing).

* ``OutputParserException``: a ``JSONDecodeError`` cause (or no JSON at all) is
  ``output.malformed``, a pydantic ``ValidationError`` cause ``output.schema_violation`` with
  ``location.pointer``; ``model_feedback`` is the parser's ``observation``, else its message
  (LangChain's JSON and Pydantic parsers leave ``observation`` empty).
* The model error classes (``ModelRateLimitError``, ``ModelAPIError``, ...): an exception
  that is also a provider SDK's (langchain-openai raises classes that inherit both
  ``openai.RateLimitError`` and ``ModelRateLimitError``) is left to the provider adapter,
  which reads its status, headers and body; otherwise the class decides.
* ``ContextOverflowError``: ``context.window_exceeded``, by name. Every integration that raises
  it (langchain-openai, langchain-aws, langchain-anthropic, langchain-google-genai...) raises a
  class that is also its SDK's (``openai.BadRequestError``, botocore's ``ValidationException``),
  which the provider adapter reads like its other errors; ``ModelRefusalError``:
  ``policy.model_refusal``; ``ToolException``: ``tool.execution_failed`` with its message as
  ``model_feedback``. A tool's input ``ValidationError`` is read by the model-output reader
  (``output.invalid_tool_arguments``).
"""

from __future__ import annotations

from typing import Any, Final

from .. import HarnessError
from .._base._safe_read import qualname
from ._common import names, output_error

__all__ = ["retry_if"]

_MODEL: Final = (
    ("ContextOverflowError", "context.window_exceeded"),
    ("ModelRefusalError", "policy.model_refusal"),
    ("ModelAuthenticationError", "upstream.authentication_failed"),
    ("ModelPermissionDeniedError", "upstream.authentication_failed"),
    ("ModelInvalidRequestError", "upstream.invalid_request"),
    ("ModelNotFoundError", "upstream.invalid_request"),
    ("ModelRateLimitError", "upstream.rate_limited"),
    ("ModelTimeoutError", "upstream.unavailable"),
    ("ModelConnectionError", "upstream.unavailable"),
    ("ModelAPIError", "upstream.unavailable"),
)


def _facts(exc: BaseException, **more: Any) -> dict[str, Any]:
    cls = type(exc)
    return {"framework": "langchain", "exception": qualname(cls), **more}


def _from_vendor(exc: BaseException) -> bool:
    """Whether a provider's adapter reads ``exc`` (a class of its MRO is a vendor's)."""
    from ..providers._routing import provider_of

    return provider_of(exc) is not None


def _message(exc: BaseException) -> str:
    """The message without LangChain's troubleshooting link."""
    return str(exc).split("\nFor troubleshooting", 1)[0].strip()


def _read(exc: BaseException) -> HarnessError | None:
    """The harness error for a langchain_core exception, or ``None``."""
    found = names(exc)
    if "OutputParserException" in found:
        return _parser(exc)
    if "ToolException" in found:
        text = _message(exc)
        return HarnessError.from_code(
            "tool.execution_failed", text, model_feedback=text or None, upstream=_facts(exc)
        )
    if "ModelError" in found or "ContextOverflowError" in found:
        if _from_vendor(exc):
            return None  # the provider adapter reads the SDK exception with its facts
        code = next((c for name, c in _MODEL if name in found), "upstream.unavailable")
        retryable = getattr(type(exc), "is_retryable", None)
        return HarnessError.from_code(
            code,
            _message(exc) or type(exc).__name__,
            retryable=retryable if isinstance(retryable, bool) else None,
            upstream=_facts(exc),
        )
    return None


def _parser(exc: BaseException) -> HarnessError:
    cause = exc.__cause__
    parsed = output_error(cause)
    observation = getattr(exc, "observation", None)
    text = _message(exc)
    feedback = str(observation) if observation else text.split("\n", 1)[0]
    llm_output = getattr(exc, "llm_output", None)
    facts = _facts(exc, llm_output=str(llm_output)[:1024]) if llm_output else _facts(exc)
    if parsed is None:
        return HarnessError.from_code(
            "output.malformed", text, model_feedback=feedback, upstream=facts
        )
    return HarnessError.from_code(
        parsed.code,
        text.split("\n", 1)[0],
        model_feedback=str(observation) if observation else parsed.model_feedback or feedback,
        location=parsed.location,
        causes=parsed.causes,
        upstream=facts,
    )


def retry_if(exc: BaseException) -> bool:
    """A ``with_retry`` predicate: retry only what the harness answer calls retryable.

    ``runnable.with_retry(retry_if_exception_type=retry_if, stop_after_attempt=3)``; by
    default LangChain retries every ``Exception``, a spent quota and a bad request included.
    LangChain's ``with_fallbacks`` takes exception types only, not a predicate: catch
    ``HarnessError`` around a ``wrap()``-ped client, or pass the vendor classes.
    """
    from .. import normalize

    return normalize(exc).retryable
