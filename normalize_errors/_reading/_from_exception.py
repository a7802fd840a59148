"""The one path from a vendor SDK exception to its harness error.

A provider module declares what differs between vendors: its exception classes
(``CLASSES``: class name -> a fixed code, or ``None`` to read the body with ``TABLE``), its
rule table, its body reader and the headers that carry a request id (an ``SDK`` value).
Everything else happens here, once, for every provider:

1. the class: the first class of the exception's MRO that ``CLASSES`` names, under the
   SDK's root module (decided once per type);
2. the facts: HTTP status, the body (parsed if it is text), what the body reader finds in
   it (message, vendor code and type, extra members), the response headers (lower-cased
   when the facts are made), the exception's qualified name; the facts are frozen, and
   each step returns new ones;
3. a fixed class: its code, with ``timeout``/``connection_error`` as the vendor code of the
   SDK's timeout and connection classes, the exception's own message when the body gave
   none, and the class of its ``__cause__``;
4. otherwise the table decides (``decide``: ``classify``, then ``build`` makes the error).

``build`` computes every member (``detail``, ``retry_after``, ``attempts``, ``limit``,
``upstream``) at once and hands them to the error's constructor: an error is a snapshot.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from .._base._http_wire import body_text, lower_headers, parse_body, short
from .._base._safe_read import field, integer, qualname
from .._model._exceptions import HarnessError
from ._envelopes import nested_error
from ._rules import Facts, Table, add_upstream, build, decide
from ._tables import class_entry

__all__ = [
    "SDK",
    "STAINLESS_CLASSES",
    "facts_of",
    "fixed_error",
    "inner_error",
    "message_of",
    "note_cause",
    "read_exception",
    "wrapped_error",
]

BodyReader = Callable[[Any], dict[str, Any]]
"""Returns what a parsed error body says, as members of ``Facts``: ``message``,
``vendor_code``, ``vendor_type``, ``more_ids`` (more vendor codes), ``request_id``, and
members to keep in ``upstream`` (``extra``); only the ones it found."""

_CONNECTION_CODES: Mapping[str, str] = {
    "APITimeoutError": "timeout",
    "APIConnectionError": "connection_error",
    "ContinuationTimeoutError": "timeout",  # google-genai
    "NoResponseError": "connection_error",  # google-genai's generated client
}
"""The vendor code given to the SDKs' timeout and connection classes, which carry none."""


STAINLESS_CLASSES: Mapping[str, tuple[str, bool] | None] = {
    "APIStatusError": None,
    "APIError": None,
    "APITimeoutError": ("upstream.unavailable", True),
    "APIConnectionError": ("upstream.unavailable", True),
    "APIResponseValidationError": ("upstream.invalid_response", True),
}
"""The exception classes every Stainless-generated SDK raises (openai, anthropic, groq,
together, cerebras, fireworks): an adapter's ``CLASSES`` starts with them. ``None``: read the
status and body with the adapter's table."""


class SDK(NamedTuple):
    """What one vendor SDK's exceptions need: the provider module's tables and reader."""

    name: str
    """The provider name (``upstream.provider``)."""
    roots: tuple[str, ...]
    """The SDKs' top-level modules; only classes under them are looked up in ``classes``."""
    classes: Mapping[str, tuple[str, bool] | None]
    table: Table
    read_body: BodyReader
    id_headers: tuple[str, ...] = ()
    """Response headers that carry the request id, first found wins."""


def message_of(exc: BaseException) -> str | None:
    """The exception's own message: its ``message`` attribute, else its first argument."""
    message = field(exc, "message")
    if isinstance(message, str) and message:
        return message
    try:
        first = exc.args[0] if exc.args else None
    except Exception:
        return None
    return first if isinstance(first, str) and first else None


def facts_of(
    sdk: SDK,
    status: int | None,
    headers: Any,
    body: Any,
    *,
    exception: str | None = None,
    source: BaseException | None = None,
    in_stream: bool = False,
) -> Facts:
    """The facts of one failure: ``body`` (parsed or text) read by the SDK's body reader.

    A body that is text and not JSON (a proxy's page, a plain message) is kept as ``text``;
    a short one that is not HTML is the message.
    """
    if isinstance(body, (str, bytes, bytearray)):
        text, parsed = body_text(body), parse_body(body)
    else:
        text, parsed = "", body
    found = sdk.read_body(parsed)
    if parsed is None and text and not found.get("message") and len(text) < 2048:
        plain = text.strip()
        if plain and not plain.startswith("<"):
            found["message"] = short(plain, 2048)
    return Facts(
        provider=sdk.name,
        status=status,
        headers=lower_headers(headers),
        body=parsed,
        text=text,
        id_headers=sdk.id_headers,
        exception=exception,
        source=source,
        in_stream=in_stream,
        **found,
    )


def read_exception(
    sdk: SDK,
    exc: BaseException,
    *,
    adjust: Callable[[str, BaseException, Facts], HarnessError | Facts | None] | None = None,
) -> HarnessError | None:
    """The harness error for an exception of ``sdk``, or ``None`` if it is not one of its.

    ``adjust(class_name, exc, facts)``, when given, sees the facts before the decision: it
    returns them with what only this SDK's exception carries, or the error itself, or
    ``None`` for an exception the SDK's tables do not answer.
    """
    entry = class_entry(exc, sdk.classes, sdk.roots)
    if entry is None:
        return None
    name, fixed = entry
    try:
        status: Any = getattr(exc, "status_code", None)
        response = getattr(exc, "response", None) or getattr(exc, "raw_response", None)
        headers = None if response is None else getattr(response, "headers", None)
        body = getattr(exc, "body", None)
    except Exception:  # a hostile exception object: what can be read, one member at a time
        status = field(exc, "status_code")
        headers = field(field(exc, "response", "raw_response"), "headers")
        body = field(exc, "body")
    status = integer(status)
    if fixed is None:
        inner = wrapped_error(body)
        if inner is not None:  # the error of the API behind, as JSON text in the message
            return inner_error(status, headers, inner, qualname(exc))
    facts = facts_of(
        sdk,
        status,
        headers,
        body,
        exception=qualname(exc),
        source=exc,
        in_stream=fixed is None and status is not None and 200 <= status <= 299,
    )
    if adjust is not None:
        adjusted = adjust(name, exc, facts)
        if adjusted is None:
            return None
        if isinstance(adjusted, HarnessError):
            return adjusted
        facts = adjusted
    if fixed is None:
        return decide(sdk.table, facts)
    return fixed_error(name, fixed, exc, facts)


def wrapped_error(body: Any) -> dict[str, Any] | None:
    """The error body whose JSON text a status error's message holds, or ``None``: a
    compatible layer or a client that wrapped the error of the API behind it in its own
    (Gemini's OpenAI-compatible endpoint: ``{"error": {"message": "{\\n  \\"error\\": {...}}",
    "code": 503}}``), found as ``from_response`` finds it (``_envelopes.nested_error``). An
    SDK may hand the envelope, the error object inside it (openai's ``body``) or its text."""
    if isinstance(body, (str, bytes, bytearray)):
        body = parse_body(body)
    if not isinstance(body, dict):
        return None
    if "error" not in body and isinstance(body.get("message"), str):
        body = {"error": body}
    return nested_error(body)


def inner_error(status: Any, headers: Any, inner: Any, exception: str) -> HarnessError:
    """The error of an SDK exception whose body wraps another error (``wrapped_error``):
    the inner body read as ``from_response`` reads it with the response's status and
    headers (the adapter of its shape decides), the SDK's exception kept in ``upstream``."""
    from .._facade import from_response

    err = from_response(status, headers, inner)
    add_upstream(err, {"exception": exception})
    return err


def fixed_error(
    name: str, fixed: tuple[str, bool], exc: BaseException, facts: Facts
) -> HarnessError:
    """The error of an exception class with a fixed code (``CLASSES[name]``).

    The SDKs' timeout and connection classes get ``timeout`` or ``connection_error`` as
    the vendor code; the exception's own message stands in when the body gave none; the
    class of its ``__cause__`` (the transport's error) is kept in ``upstream.cause``.
    """
    code, retryable = fixed
    changes: dict[str, Any] = {}
    vendor_code = _CONNECTION_CODES.get(name.rpartition(".")[2])
    if vendor_code is not None:
        changes["vendor_code"] = vendor_code
    if not facts.message:
        changes["message"] = message_of(exc)
    cause = exc.__cause__
    if cause is not None:
        changes["extra"] = {**facts.extra, "cause": qualname(cause)}
    return build(code, retryable, dataclasses.replace(facts, **changes) if changes else facts)


def note_cause(exc: BaseException, facts: Facts) -> Facts:
    """``facts``, keeping the class of ``exc.__cause__`` (the transport's error, say) as
    ``upstream.cause``."""
    cause = exc.__cause__
    if cause is None:
        return facts
    return dataclasses.replace(facts, extra={**facts.extra, "cause": qualname(cause)})
