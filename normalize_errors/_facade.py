"""The entry points: ``normalize``, ``from_response`` and ``check``.

They pick the provider adapter (by the exception's module, by the ``provider`` argument, or
by the shape of a body), let it translate, and guarantee the contract: whatever comes in, a
valid ``HarnessError`` comes out, with the original exception as ``__cause__`` and the raw
facts in ``upstream``. Nothing here imports a vendor SDK.
"""

from __future__ import annotations

from ._signals import short
from .exceptions import HarnessError, HarnessInternalError, class_for_code

__all__ = ["normalize"]


def safe_text(value: object, limit: int = 2048) -> str:
    """``str(value)`` cut to ``limit``, or the type name if ``str()`` itself fails."""
    try:
        text = str(value)
    except Exception:
        return f"<{type(value).__name__}>"
    return short(text, limit)


def _qualname(exc: BaseException) -> str:
    cls = type(exc)
    return f"{cls.__module__}.{cls.__qualname__}"


_STDLIB_UNAVAILABLE = ("ConnectionError", "SSLError", "gaierror", "herror")


def _builtin(exc: BaseException) -> HarnessError:
    """An exception of the standard library, or of code the library does not know."""
    names = {klass.__name__ for klass in type(exc).__mro__}
    facts = {"exception": _qualname(exc), "message": safe_text(exc)}
    if "CancelledError" in names or isinstance(exc, KeyboardInterrupt):
        return class_for_code("harness.cancelled")(
            "The call was cancelled.", retryable=False, upstream=facts
        )
    if "TimeoutError" in names or "timeout" in names:
        return class_for_code("upstream.unavailable")(
            "The call timed out.", retryable=True, upstream={**facts, "code": "timeout"}
        )
    if names.intersection(_STDLIB_UNAVAILABLE):
        return class_for_code("upstream.unavailable")(
            f"The connection failed: {facts['message'] or type(exc).__name__}.",
            retryable=True,
            upstream={**facts, "code": "connection_error"},
        )
    return HarnessInternalError(
        f"{type(exc).__name__}: {facts['message']}" if facts["message"] else type(exc).__name__,
        retryable=False,
        upstream=facts,
    )


def _group_members(exc: BaseException) -> list[BaseException] | None:
    """The members of an exception group (builtin, or the ``exceptiongroup`` backport)."""
    if not any(k.__name__.endswith("ExceptionGroup") for k in type(exc).__mro__):
        return None
    members = getattr(exc, "exceptions", None)
    if isinstance(members, (list, tuple)) and members:
        return [m for m in members if isinstance(m, BaseException)] or None
    return None


def _group(inner: list[BaseException], provider: str | None) -> HarnessError:
    members = [normalize(item, provider=provider) for item in inner]
    if len(members) == 1:
        return members[0]
    first = members[0]._clone()
    first.causes = members[1:]
    return first


def _normalize(exc: BaseException, provider: str | None) -> HarnessError:
    if isinstance(exc, HarnessError):
        return exc
    inner = _group_members(exc)
    if inner is not None:
        return _group(inner, provider)
    from .providers import adapter_for_exception

    adapter = adapter_for_exception(exc, provider)
    if adapter is not None:
        err = adapter.normalize(exc)
        if err is not None:
            return err
    return _builtin(exc)


def normalize(exc: BaseException, *, provider: str | None = None) -> HarnessError:
    """Turn any exception into its typed harness error; never raises.

    A ``HarnessError`` is returned as it is. A vendor exception (openai, anthropic,
    google-genai, httpx, httpx2) is read by its provider's adapter, found from the
    exception's module (or named by ``provider``). The standard library's cancellation,
    timeout and connection errors become ``harness.cancelled`` and ``upstream.unavailable``;
    anything else becomes ``harness.internal_error``. An exception group gives the error of
    its first member, with the others as ``causes``.

    The original exception is the result's ``__cause__`` (unless it already had one, for a
    ``HarnessError`` passed in).
    """
    try:
        err = _normalize(exc, provider)
    except Exception as bug:  # a bug here must never hide the caller's exception
        err = HarnessInternalError(
            f"normalize-errors could not read {type(exc).__name__} ({type(bug).__name__}).",
            retryable=False,
            upstream={"exception": _qualname(exc), "message": safe_text(exc)},
        )
    if err is not exc and err.__cause__ is None:
        err.__cause__ = exc
    return err
