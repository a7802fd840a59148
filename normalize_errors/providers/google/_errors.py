"""Gemini's and Vertex AI's error bodies and the google-genai SDK's exceptions (the
package's doc says what is worth knowing)."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any, Final

from ..._base._http_wire import body_text, lower_headers, parse_body, short
from ..._base._patterns import (
    GOOGLE_CANONICAL,
    GOOGLE_FUNCTION,
    GOOGLE_PRINTED_REASON,
    GOOGLE_PRINTED_STATUS,
    MAX_MESSAGE,
)
from ..._base._safe_read import field, innermost, integer, module_of, qualname, sequence, text_of
from ..._model._exceptions import HarnessError
from ..._reading._from_exception import (
    fixed_error,
    inner_error,
    message_of,
    note_cause,
    wrapped_error,
)
from ..._reading._rules import Facts, Rule, build, decide
from ..._reading._tables import class_entry, load_classes, load_codes, load_rows, load_table
from .._routing import declared

NAME: Final = "google"
ROOTS: Final = declared(NAME).roots
"""The modules whose exceptions this adapter reads."""

_CANONICAL: Final = GOOGLE_CANONICAL.compiled()
_STATUSES: Final = frozenset(
    {
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    }
)
"""The canonical statuses of errors (google.rpc.Code), known without the pattern."""
"""A canonical status (``RESOURCE_EXHAUSTED``), as opposed to an HTTP reason phrase."""


_CREDENTIAL_REASONS: Final = (
    "API_KEY_INVALID",
    "API_KEY_EXPIRED",
    "API_KEY_SERVICE_BLOCKED",
    "API_KEY_HTTP_REFERRER_BLOCKED",
    "API_KEY_IP_ADDRESS_BLOCKED",
    "API_KEY_ANDROID_APP_BLOCKED",
    "API_KEY_IOS_APP_BLOCKED",
    "CONSUMER_SUSPENDED",
    "CONSUMER_INVALID",
    "CREDENTIALS_MISSING",
    "ACCESS_TOKEN_EXPIRED",
    "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
    "ACCESS_TOKEN_TYPE_UNSUPPORTED",
    "ACCOUNT_STATE_INVALID",
    "SERVICE_DISABLED",
    "BILLING_DISABLED",
    "USER_PROJECT_DENIED",
    "SECURITY_POLICY_VIOLATED",
)
_RATE_IDS: Final = (
    "RESOURCE_EXHAUSTED",
    "RATE_LIMIT_EXCEEDED",
    "RESOURCE_QUOTA_EXCEEDED",
    "rateLimitExceeded",
    "userRateLimitExceeded",
    "quotaExceeded",
)


class _QuotaRule(Rule):
    """A rate-limit row that also needs a daily (or monthly) quota among the violations."""

    __slots__ = ()

    def holds(self, facts: Facts) -> bool:
        """The row's own conditions, and some quota id says per day (the ``QuotaFailure``
        quota ids are among ``more_ids``, beside reasons that never say it)."""
        if not super().holds(facts):
            return False
        for name in facts.more_ids:
            if isinstance(name, str):
                low = name[:256].lower()
                if "perday" in low or "permonth" in low:
                    return True
        return False


def _quota_rule(code: str, when: str, *, ids: Iterable[str]) -> Rule:
    return _QuotaRule(code, when, False, frozenset(), frozenset(i.lower() for i in ids), None)


TABLE: Final = load_table(NAME)
"""The mapping, first matching row wins; otherwise the HTTP status decides."""

CLOSE_CODES: Final = load_codes(NAME, "close_codes")
"""Live API WebSocket close codes that ``TABLE`` does not decide by the close reason:
from the data file (1007, 1008, 1013); any other close code is ``upstream.unavailable``,
retryable."""

_SOCKET: Final = load_rows(NAME, "socket_rows")
"""How an Interactions WebSocket error with no status and no server code is read by its
wording before its close code (the data file's ``socket_rows``)."""

CLASSES: Final = load_classes(NAME)
"""SDK exception class -> fixed (code, retryable), or ``None`` to read it with ``TABLE``.

The first class of the exception's MRO found here decides. Classes of the Interactions
API (those under ``GeminiNextGenAPIClientError``) are keyed ``interactions.<Name>``. A bare
``GeminiNextGenAPIClientError`` is the root of that hierarchy and is left to the caller
(``harness.internal_error``). A test checks that every exception class the SDK exports is
covered by an entry more specific than that root.
"""

_INTERACTIONS_ROOT: Final = "GeminiNextGenAPIClientError"


def _word(value: Any) -> str | None:
    """An enum member or a string as a plain string (``FinishReason.SAFETY`` -> ``"SAFETY"``)."""
    try:
        text = text_of(value)
        if text is None or type(text) is str:
            return text
        inner = getattr(text, "value", text)
    except Exception:  # a hostile object
        return None
    return str.__str__(inner) if isinstance(inner, str) else None


# -- reading error bodies -----------------------------------------------------------------------


def _inner(body: Any) -> Any:
    """The error object of a parsed body: ``error`` if present, else the body itself."""
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            return error
    return body


def _violations(detail: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in sequence(detail.get("violations")):
        if not isinstance(item, dict):
            continue
        kept = {k: item[k] for k in ("quotaId", "quotaMetric", "quotaValue") if k in item}
        if kept:
            out.append(kept)
    return out


def _kinds(details: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """The ``google.rpc`` details of a body (at most 32), as (kind, detail): ``ErrorInfo``, ..."""
    if not isinstance(details, list):
        return
    for detail in details[:32]:
        kind = detail.get("@type") if isinstance(detail, dict) else None
        if isinstance(kind, str):
            yield kind.rpartition(".")[2], detail


def _read_ids(details: Any, ids: list[Any]) -> str | None:
    """The ids the decision reads in the details (ErrorInfo reasons and QuotaFailure quota
    ids, into ``ids``); returns the first reason."""
    reason: str | None = None
    if not isinstance(details, list):
        return None
    for detail in details[:32]:  # as _kinds, without a generator: this is on every path
        kind = detail.get("@type") if isinstance(detail, dict) else None
        if not isinstance(kind, str):
            continue
        kind = kind.rpartition(".")[2]
        if kind == "ErrorInfo":
            found = text_of(detail.get("reason"))
            if found:
                ids.append(found)
                reason = reason or found
        elif kind == "QuotaFailure":
            for item in sequence(detail.get("violations")):
                quota = item.get("quotaId") if isinstance(item, dict) else None
                if isinstance(quota, str):
                    ids.append(quota)
    return reason


def _details_extra(details: Any) -> dict[str, Any]:
    """What the details say beyond the ids, for ``upstream`` and the retry hint: domain,
    metadata, violations, retry delay, fields, help."""
    extra: dict[str, Any] = {}
    for kind, detail in _kinds(details):
        if kind == "ErrorInfo":
            if isinstance(detail.get("domain"), str):
                extra.setdefault("domain", detail["domain"])
            if isinstance(detail.get("metadata"), dict):
                extra.setdefault("metadata", detail["metadata"])
        elif kind == "QuotaFailure":
            extra.setdefault("violations", []).extend(_violations(detail))
        elif kind == "RetryInfo":
            delay = detail.get("retryDelay")
            if isinstance(delay, str):
                extra["retry_delay"] = delay
        elif kind == "BadRequest":
            fields = [
                {k: v[k] for k in ("field", "description") if k in v}
                for v in sequence(detail.get("fieldViolations"))
                if isinstance(v, dict)
            ]
            if fields:
                extra["field_violations"] = fields
        elif kind == "Help":
            links = [
                link["url"]
                for link in sequence(detail.get("links"))
                if isinstance(link, dict) and isinstance(link.get("url"), str)
            ]
            if links:
                extra["help"] = links
    return extra


def _read(error: Any) -> tuple[dict[str, Any], int | None]:
    """What a Google-shaped error object says (a dict, a string or anything), as members of
    ``Facts``, and the HTTP status the body itself states (its numeric ``code``), if any."""
    if isinstance(error, str):
        return {"message": error}, None
    found: dict[str, Any] = {}
    if not isinstance(error, dict):
        return found, None
    message = error.get("message")
    if isinstance(message, str):
        found["message"] = message
    ids: list[Any] = []
    status = text_of(error.get("status"))
    if status and (status in _STATUSES or _CANONICAL.fullmatch(status)):
        found["vendor_code"] = status
    code = error.get("code")
    body_code = integer(code)
    if body_code is None and isinstance(code, str) and code:
        # The Interactions API reportedly sends a string code ("invalid_request").
        ids.append(code)
        if found.get("vendor_code") is None:
            found["vendor_code"] = code
    details = error.get("details")
    reason = _read_ids(details, ids)
    if isinstance(details, list) and details:
        found["extra"] = _details_extra(details)
    if "errors" in error:
        for item in sequence(error["errors"]):
            # The older Google API error shape: "errors": [{"reason": "rateLimitExceeded"}].
            if isinstance(item, dict) and isinstance(item.get("reason"), str):
                ids.append(item["reason"])
                reason = reason or item["reason"]
    if reason:
        found["vendor_type"] = reason
    if ids:
        found["more_ids"] = tuple(ids)
    return found, body_code


def _read_printed(text: str, found: dict[str, Any]) -> int | None:
    """Add to ``found`` what an SDK's printed error text says (no JSON body): the ErrorInfo
    reasons it quotes (protobuf text, JSON or a Python repr of the details); return the
    status it states (google.api_core's leading ``400 ``, the JS SDK's ``[403 Forbidden]``),
    if any."""
    head = text[:MAX_MESSAGE]
    reasons = GOOGLE_PRINTED_REASON.compiled().finditer(head)
    ids = [m.group(1) for _, m in zip(range(8), reasons, strict=False)]
    if ids:
        found["vendor_type"] = ids[0]
        found["more_ids"] = (*found.get("more_ids", ()), *ids)
    stated = GOOGLE_PRINTED_STATUS.compiled().search(head)
    return integer(stated.group(1) or stated.group(2)) if stated is not None else None


def _looks_html(text: str) -> bool:
    head = text.lstrip()[:256]
    if not head.startswith("<"):
        return False
    head = head.lower()
    return "html" in head or "<head" in head or "<body" in head


_ID_HEADERS: Final = ("x-request-id", "x-goog-request-id")


def _facts(
    status: int | None,
    headers: Any,
    body: Any,
    text: str,
    *,
    exception: str | None = None,
    in_stream: bool = False,
    extra: dict[str, Any] | None = None,
) -> Facts:
    """The facts of a Google error body (or its text), made once; ``extra`` is kept in
    ``upstream`` beside what the body gives (and wins over it)."""
    found, stated = _read(_inner(body))
    message = found.get("message")
    if isinstance(message, str) and _looks_html(message):
        # A non-JSON page the SDK put in ``details["message"]``: keep it as text.
        text = message
        found["message"] = None
    if body is None and text and found.get("message") is None and not _looks_html(text):
        found["message"] = short(text.strip(), 2048) if len(text) < 2048 else None
        stated = _read_printed(text, found)
    if extra:
        found["extra"] = {**found.get("extra", {}), **extra}
    return Facts(  # RetryInfo's retryDelay stays in extra; ``build`` reads it (``hints``)
        provider=NAME,
        status=stated if status is None and stated is not None else status,
        headers=lower_headers(headers),
        body=body,
        text=text,
        exception=exception,
        in_stream=in_stream,
        id_headers=_ID_HEADERS,
        **found,
    )


def _decide(facts: Facts) -> HarnessError:
    """Classify ``facts`` with ``TABLE`` and build the error."""
    return decide(TABLE, facts)


def looks_like(body: Any) -> bool:
    """Whether a parsed body has the Google error shape (canonical status or rpc details)."""
    try:
        return _looks_like(body)
    except Exception:  # a hostile mapping
        return False


def _looks_like(body: Any) -> bool:
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return False
    error = body.get("error")
    if not isinstance(error, dict):
        return False
    status = error.get("status")
    if isinstance(status, str) and _CANONICAL.fullmatch(status):
        return True
    details = error.get("details")
    if isinstance(details, list):
        for detail in details[:8]:
            kind = detail.get("@type") if isinstance(detail, dict) else None
            if isinstance(kind, str) and kind.startswith("type.googleapis.com/"):
                return True
    return False


def _from_response(status: Any, headers: Any, body: Any) -> HarnessError:
    parsed = parse_body(body)
    facts = _facts(integer(status), headers, parsed, body_text(body))
    return _decide(facts)


# -- SDK exceptions -----------------------------------------------------------------------------


_INTERACTION_CLASSES: Final = {
    key.partition(".")[2]: entry
    for key, entry in CLASSES.items()
    if key.startswith("interactions.")
}
_INTERACTIONS: Final[weakref.WeakKeyDictionary[type, bool]] = weakref.WeakKeyDictionary()
"""Whether an exception class is of the Interactions hierarchy, per class while it lives (held
weakly: a class made at run time is collected as if it had never been read)."""


def _entry(exc: BaseException) -> tuple[str, tuple[str, bool] | None] | None:
    """The ``CLASSES`` key and entry that decide for ``exc``, if any (the shared lookup).

    A class of the Interactions hierarchy (under ``GeminiNextGenAPIClientError``) is looked
    up among the ``interactions.*`` keys, any other among the rest.
    """
    cls = type(exc)
    inside = _INTERACTIONS.get(cls)
    if inside is None:
        inside = _INTERACTIONS[cls] = any(k.__name__ == _INTERACTIONS_ROOT for k in cls.__mro__)
    if not inside:
        return class_entry(exc, CLASSES, "google.genai")
    found = class_entry(exc, _INTERACTION_CLASSES, "google.genai")
    return None if found is None else (f"interactions.{found[0]}", found[1])


def _response_status(response: Any) -> int | None:
    """The status of any response object: httpx, requests, aiohttp, SDK wrappers."""
    if response is None:
        return None
    return integer(field(response, "status_code")) or integer(field(response, "status"))


def _headers_of(response: Any) -> Any:
    return field(response, "headers") if response is not None else None


_FUNCTION: Final = GOOGLE_FUNCTION.compiled()


def _api_error(exc: BaseException, qualname: str) -> HarnessError:
    """A ``google.genai.errors.APIError`` (or subclass): an HTTP, stream or Live API error."""
    try:
        response: Any = getattr(exc, "response", None)
        details: Any = getattr(exc, "details", None)
        code: Any = getattr(exc, "code", None)
        headers = http = None
        if response is not None:  # httpx's and requests' status_code, aiohttp's status
            headers = getattr(response, "headers", None)
            http = getattr(response, "status_code", None) or getattr(response, "status", None)
    except Exception:  # a hostile exception object: what can be read, one member at a time
        response, details, code = field(exc, "response"), field(exc, "details"), field(exc, "code")
        headers, http = field(response, "headers"), _response_status(response)
    code, http = integer(code), integer(http)
    if response is None and code is not None and 1000 <= code <= 4999:
        return _closed(code, details, qualname)
    in_stream = http is not None and 200 <= http <= 299 and code is not None and code >= 400
    if isinstance(details, str):
        parsed = parse_body(details)
        text = details if parsed is None else ""
    else:
        parsed, text = details, ""
    if parsed is None and not text:
        # Only the attributes survived (a pickled or hand-made error).
        parsed = {
            "code": code,
            "message": field(exc, "message"),
            "status": field(exc, "status"),
        }
    inner = None if in_stream else wrapped_error(parsed)
    if inner is not None:  # the error of the API behind, as JSON text in the message
        return inner_error(http or code, headers, inner, qualname)
    facts = _facts(
        code,
        headers,
        parsed,
        text,
        exception=qualname,
        in_stream=in_stream,
        extra={"status": http} if in_stream else None,  # the stream's own status
    )
    return _decide(facts)


def _closed(code: int, reason: Any, qualname: str) -> HarnessError:
    """A Live API session closed with a WebSocket close code and a reason."""
    found: dict[str, Any] = {}
    if isinstance(reason, dict):
        found, _ = _read(_inner(reason))
    elif isinstance(reason, str) and reason:
        found["message"] = reason
    found["extra"] = {**found.get("extra", {}), "close_code": code}
    facts = Facts(provider=NAME, exception=qualname, **found)
    for row in TABLE:
        if row.matches(facts):
            return _decide(facts)
    fixed = CLOSE_CODES.get(code, ("upstream.unavailable", True))
    return build(fixed[0], fixed[1], facts)


def _interactions(exc: BaseException, name: str, qualname: str) -> HarnessError | None:
    """An exception of the Interactions API hierarchy (or the generated client's)."""
    response = field(exc, "response", "raw_response")
    headers = _headers_of(response)
    status = integer(field(exc, "status_code")) or _response_status(response)
    if name == "interactions.APIWebSocketError":
        status = integer(field(exc, "http_status"))
    body = field(exc, "body")
    parsed = parse_body(body) if isinstance(body, (str, bytes)) else body
    text = body if isinstance(body, str) and parsed is None else ""
    facts = _facts(status, headers, parsed, text, exception=qualname)
    message = field(exc, "message")
    if facts.message is None and isinstance(message, str):
        facts = replace(facts, message=message)
    if name == "interactions.APIWebSocketError":
        close = integer(field(exc, "close_code"))
        server = text_of(field(exc, "server_code"))
        if close:
            facts = replace(facts, extra={**facts.extra, "close_code": close})
        if server:
            facts = replace(facts, vendor_code=server)
        if status is None and not server:
            row = _SOCKET.first_match(facts)
            if row is not None and row.retryable is not None:
                return build(row.code, row.retryable, facts)
            fixed = CLOSE_CODES.get(close or 0, ("upstream.unavailable", True))
            return build(fixed[0], fixed[1], facts)
    elif name == "interactions.GeminiNextGenAPIClientError":
        return None
    return _decide(facts)


def _function_error(exc: BaseException, code: str, facts: Facts) -> HarnessError:
    """Automatic function calling: the tool failed, or the model's arguments do not fit."""
    message = facts.message or ""
    match = _FUNCTION.search(message[:MAX_MESSAGE])
    location = {"tool_name": match["name"]} if match else None
    name = f" {match['name']!r}" if match else ""
    if code == "output.invalid_tool_arguments":
        feedback = (
            f"The arguments you gave to the tool{name} do not fit its parameters: "
            f"{short(message, 1024)} Call it again with valid arguments."
        )
    elif code == "tool.execution_failed":
        feedback = f"The tool{name} failed: {short(message, 1024)}"
    else:
        feedback = None
    return build(code, False, facts, model_feedback=feedback, location=location)


def _sdk_type_error(exc: BaseException) -> HarnessError | None:
    """The SDK's own crash on an error chunk without a numeric ``code`` (see module doc)."""
    frame = innermost(exc)
    if frame is None or module_of(frame) != "google.genai.errors":
        return None
    if not frame.f_code.co_name.startswith("raise_error"):
        return None
    try:
        body = frame.f_locals.get("response_json")
    except Exception:  # a frame whose locals cannot be read
        body = None
    facts = _facts(
        None,
        {},
        body if isinstance(body, (dict, list)) else None,
        body if isinstance(body, str) else "",
        exception="builtins.TypeError",
        in_stream=True,
    )
    facts = replace(facts, extra={**facts.extra, "sdk_error": short(str(exc), 256)})
    return _decide(facts)


def _normalize(exc: BaseException) -> HarnessError | None:
    if type(exc) is TypeError:
        return _sdk_type_error(exc)
    entry = _entry(exc)
    if entry is None:
        return None
    name, fixed = entry
    exception = qualname(exc)
    if name in ("APIError", "ClientError", "ServerError"):
        return _api_error(exc, exception)
    if fixed is None and (name.startswith("interactions.") or name == "GenAiError"):
        return _interactions(exc, name, exception)
    if fixed is None:
        return None
    facts = Facts(provider=NAME, message=message_of(exc), exception=exception)
    if name == "ContinuationInterruptedError":
        kept = {a: field(exc, a) for a in ("continuation_token", "interaction_id")}
        facts = replace(facts, extra={a: v for a, v in kept.items() if isinstance(v, str)})
    if name in ("UnknownFunctionCallArgumentError", "FunctionInvocationError"):
        return _function_error(exc, fixed[0], note_cause(exc, facts))
    return fixed_error(name, fixed, exc, facts)
