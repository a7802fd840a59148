"""What Python's own exceptions mean, and the last resort for any other.

The standard library's cancellation (``CancelledError``, ``KeyboardInterrupt``), timeout and
connection errors become ``harness.cancelled`` and ``upstream.unavailable``; an exception of
code the library does not know becomes ``harness.internal_error``. Their text is cut and
never raises (``safe_text``).
"""

from __future__ import annotations

from .._base._http_wire import short
from .._base._safe_read import qualname
from .._model._code_classes import HarnessInternalError, class_for_code
from .._model._exceptions import HarnessError

__all__ = ["internal", "safe_text", "stdlib"]


def safe_text(value: object, limit: int = 2048) -> str:
    """``str(value)`` cut to ``limit``, or the type name if ``str()`` itself fails."""
    try:
        text = str(value)
    except Exception:
        return f"<{type(value).__name__}>"
    return short(text, limit)


_STDLIB_UNAVAILABLE = ("ConnectionError", "SSLError", "gaierror", "herror")


def stdlib(exc: BaseException) -> HarnessError | None:
    """The answer for the standard library's cancellation, timeout and connection errors."""
    names = {klass.__name__ for klass in type(exc).__mro__}
    if "CancelledError" in names or isinstance(exc, KeyboardInterrupt):
        return class_for_code("harness.cancelled")(
            "The call was cancelled.",
            retryable=False,
            upstream={"exception": qualname(exc), "message": safe_text(exc)},
        )
    if "TimeoutError" in names or "timeout" in names:
        return class_for_code("upstream.unavailable")(
            "The call timed out.",
            retryable=True,
            upstream={"exception": qualname(exc), "message": safe_text(exc), "code": "timeout"},
        )
    if names.intersection(_STDLIB_UNAVAILABLE):
        message = safe_text(exc)
        return class_for_code("upstream.unavailable")(
            f"The connection failed: {message or type(exc).__name__}.",
            retryable=True,
            upstream={
                "exception": qualname(exc),
                "message": message,
                "code": "connection_error",
            },
        )
    return None


def internal(exc: BaseException) -> HarnessError:
    """An exception of code the library does not know: ``harness.internal_error``."""
    message = safe_text(exc)
    return HarnessInternalError(
        f"{type(exc).__name__}: {message}" if message else type(exc).__name__,
        retryable=False,
        upstream={"exception": qualname(exc), "message": message},
    )
