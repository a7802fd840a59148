"""Plain HTTP: httpx and httpx2 errors, other HTTP clients, and responses of no known shape.

What this adapter reads:

* exceptions of ``httpx`` and ``httpx2`` (and ``httpcore``/``httpcore2`` below them), by the
  class names in the MRO (see ``CLASSES``). ``HTTPStatusError`` is read from its response:
  a body of a known shape (OpenAI, Anthropic, Google) goes to that adapter; otherwise this
  adapter reads it, and the request's host names the provider when it is one of theirs
  (``api.openai.com``, ``*.openai.azure.com``, ``api.anthropic.com``,
  ``generativelanguage.googleapis.com``, ``*aiplatform.googleapis.com``);
* exceptions of ``requests``, ``urllib3`` and ``aiohttp``, by class-name patterns
  (``_PATTERNS``), or from their response when they carry an error status;
* raw responses of no known shape (``from_response``): HTML pages of gateways (Cloudflare,
  nginx, AWS load balancers, Google Front End), Envoy's text replies, JSON of other shapes
  (``{"message": ...}``, ``{"detail": ...}``), empty bodies.

``upstream`` holds the request's method and host (never its path or query: a query can
hold a key), the exception's class, and for a page its title and the gateway that wrote it
(``gateway``: read from the page's footer or template, such as ``cloudflare``, ``nginx``,
``envoy``, ``google_front_end``). ``detail`` is the page's title, never the page.

Evidence: the ``TABLE`` rows for Envoy (overflow, connection refused) and Cloudflare
(520, 522) are exercised by cassettes in ``cassettes/http/``; the row for a 1xx-3xx
response given to ``from_response`` has no public source (it is a caller's mistake, not a
vendor's answer) and is exercised by a focused test. The exception classes are exercised by
tests that make real httpx, httpx2 and requests clients fail (``tests/providers/test_http.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from .._base._http_wire import MAX_MESSAGE, body_text, html_title, lower_headers, parse_body, short
from .._base._patterns import (
    HTTP_CONNECTION,
    HTTP_CUT_SHORT,
    HTTP_DECODING,
    HTTP_FOOTER,
    HTTP_GFE_TITLE,
    HTTP_MISUSE,
    HTTP_QUERY,
    HTTP_REDIRECT,
    HTTP_RESET,
    HTTP_RESPONSE,
    HTTP_TIMEOUT,
)
from .._base._safe_read import field, integer, qualname, text_of
from .._model._exceptions import HarnessError
from .._reading._envelopes import MEANINGS, read_envelope
from .._reading._rules import Facts, Rule, add_upstream, build, decide, rule
from .._reading._stream_state import StreamState
from .._reading._tables import load_classes, load_table
from . import PROVIDERS
from ._routing import declared

__all__ = [
    "CLASSES",
    "NAME",
    "TABLE",
    "diagnose",
    "diagnose_stream",
    "from_response",
    "looks_like",
    "normalize",
    "stream_state",
]

NAME: Final = "http"

_CLOUDFLARE_ORIGIN: Final = (520, 521, 522, 523, 524, 525, 526, 527, 530)

_ENVELOPE_ROWS: Final[tuple[Rule, ...]] = tuple(
    rule(
        code,
        f"{name} {', '.join(map(str, numbers))}: {what}",
        retryable=retryable,
        ids=[f"{name}:{number}" for number in numbers],
    )
    for name, rows in MEANINGS.items()
    for code, retryable, numbers, what in rows
)
"""The documented codes of vendors' own envelopes (``_envelopes``), matched on the id
``<envelope>:<code>`` the reader gives such a body."""

TABLE: Final = load_table(NAME)
"""The mapping for responses of no known shape; otherwise the HTTP status decides."""

_UNAVAILABLE: Final = ("upstream.unavailable", True)
_INTERNAL: Final = ("harness.internal_error", False)

CLASSES: Final = load_classes(NAME)
"""httpx/httpx2/httpcore class -> fixed (code, retryable), or ``None`` to read the response.

The first class of the exception's MRO found here decides, so the most specific wins:

* a timeout, a network failure, a protocol error of the server or a proxy failure is
  ``upstream.unavailable`` (retryable; ``upstream.code`` is ``timeout`` or
  ``connection_error``);
* an invalid URL, an unsupported scheme, a local protocol error (an illegal header we
  sent), a cookie conflict or a misused stream is a bug on the caller's side,
  ``harness.internal_error``;
* a body that cannot be decoded, and httpx2's ``SSEError`` (a stream that is not SSE,
  typically a gateway's error page), are ``upstream.invalid_response`` (retryable); a
  redirect loop is too, but not retryable;
* ``HTTPStatusError`` (and a bare ``HTTPError``) is read from its response; without one it
  is ``upstream.unavailable``.

A test checks that every exception class httpx, httpx2, httpcore and httpcore2 export has an
entry more specific than ``HTTPError``.
"""

_TIMEOUTS: Final = frozenset(
    {"TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout"}
)
_HTTPX_ROOTS: Final = frozenset(
    r for r in declared(NAME).roots if r.startswith(("httpx", "httpcore"))
)
"""The httpx family: exceptions read by class name (``CLASSES``)."""
_OTHER_ROOTS: Final = frozenset(declared(NAME).roots) - _HTTPX_ROOTS
"""The other HTTP libraries: exceptions read by their response, else by ``_PATTERNS``."""

_PATTERNS: Final[tuple[tuple[re.Pattern[str], str, bool, str | None], ...]] = (
    (HTTP_REDIRECT.compiled(), "upstream.invalid_response", False, None),
    (HTTP_CUT_SHORT.compiled(), "upstream.unavailable", True, "connection_error"),
    (HTTP_MISUSE.compiled(), "harness.internal_error", False, None),
    (HTTP_TIMEOUT.compiled(), "upstream.unavailable", True, "timeout"),
    (HTTP_DECODING.compiled(), "upstream.invalid_response", True, None),
    (HTTP_CONNECTION.compiled(), "upstream.unavailable", True, "connection_error"),
    (HTTP_RESPONSE.compiled(), "upstream.unavailable", True, None),
)
"""How ``requests``, ``urllib3`` and ``aiohttp`` exceptions are read: (class-name pattern,
code, retryable, ``upstream.code``), tried in order on each class of the MRO from the most
specific; an exception with an error status is read from its response first, and one that
matches nothing is ``harness.internal_error``."""

_HOSTS: Final = tuple((host, p.name) for p in PROVIDERS for host in p.hosts)
"""Request hosts that name the provider of a response of no known shape: exact names, and
suffixes (starting with ``.`` or ``-``, as in ``us-central1-aiplatform.googleapis.com``)."""

_REQUEST_IDS: Final = ("x-request-id", "request-id", "apim-request-id", "x-amzn-requestid")
_MESSAGE_KEYS: Final = (
    "message",
    "Message",
    "detail",
    "error_description",
    "errorMessage",
    "error_message",
    "msg",
    "title",
)
_CODE_KEYS: Final = ("code", "error_code", "errorCode", "type")

_FOOTER: Final = HTTP_FOOTER.compiled()
_RESET: Final = HTTP_RESET.compiled()
_GFE_TITLE: Final = HTTP_GFE_TITLE.compiled()
_ENVOY: Final = ("upstream connect error", "disconnect/reset before headers", "no healthy upstream")


# -- reading a response of no known shape ---------------------------------------------------


def _provider_for_host(host: str | None) -> str | None:
    """The provider whose API lives at ``host``, or ``None`` (see ``_HOSTS``)."""
    if not host:
        return None
    host = host.lower().rstrip(".")
    for known, name in _HOSTS:
        if host == known or (known[0] in ".-" and host.endswith(known)):
            return name
    return None


def _gateway(text: str, title: str | None) -> str | None:
    """Who wrote an error page or text: its footer, template or wording."""
    head = text[:65536]
    match = _FOOTER.search(head)
    if match is not None:
        return match.group(1).split("/")[0].lower()
    low = head.lower()
    if "cf-error-details" in low or "/cdn-cgi/styles/" in low or "cf-wrapper" in low:
        return "cloudflare"
    if title is not None and _GFE_TITLE.match(title[:500]):
        return "google_front_end"
    if any(marker in low[:1024] for marker in _ENVOY):
        return "envoy"
    return None


def _json_facts(parsed: Any, found: dict[str, Any]) -> None:
    """The message and code of a JSON error body of no known shape."""
    if isinstance(parsed, list):
        parsed = next((item for item in parsed[:8] if isinstance(item, dict)), None)
    if not isinstance(parsed, dict):
        return
    envelope = read_envelope(parsed)
    if envelope is not None:  # Qianfan, iFlytek Spark, MiniMax: the vendor's own envelope
        name, number, message = envelope
        if message and message.strip():
            found["message"] = short(message, MAX_MESSAGE)
        found["vendor_code"] = str(number)
        found["ids"] = [f"{name}:{number}"]
        found["envelope"] = name
    error = parsed.get("error")
    if isinstance(error, dict) and isinstance(error.get("error"), dict):
        error = error["error"]  # nested two levels (OpenRouter): the innermost holds the words
    for obj in (error, parsed) if isinstance(error, dict) else (parsed,):
        for key in _MESSAGE_KEYS:
            value = obj.get(key)
            if isinstance(value, str) and value.strip():
                found.setdefault("message", short(value, MAX_MESSAGE))
                break
            if isinstance(value, (dict, list)) and value and key == "detail":
                found.setdefault("message", short(body_text(value, 4096), 1024))
                break
        for key in _CODE_KEYS:
            value = obj.get(key)
            code = text_of(value) or (str(value) if integer(value) is not None else None)
            if code:
                found.setdefault("vendor_code", short(code, 128))
                break
    if isinstance(error, str) and error.strip():
        found.setdefault("message", short(error, MAX_MESSAGE))


def _read(
    status: Any,
    headers: Any,
    body: Any,
    *,
    provider: str = NAME,
    extra: Mapping[str, Any] | None = None,
) -> HarnessError:
    """The harness error for a response of no known shape, reported as ``provider``."""
    code = integer(status)
    text = body_text(body)
    parsed = parse_body(body)
    found: dict[str, Any] = {}
    more: dict[str, Any] = dict(extra or {})
    title = html_title(text) if text and parsed is None else None
    where = f"{provider}: HTTP {code}" if code is not None else f"{provider}: a response"
    if parsed is not None:
        _json_facts(parsed, found)
        message = found.get("message")
        detail = f"{where}: {message}" if message else f"{where} (JSON with no message)"
        text = ""
    elif title is not None:
        if title:
            more["title"] = short(title, 300)
        detail = f"{where}: {short(title, 300)}" if title else f"{where} (an HTML page)"
    elif text.strip():
        found["message"] = short(text.strip(), 1024)
        first = short(found["message"].splitlines()[0].strip(), 300)  # stripped: never empty
        detail = f"{where}: {first}" if not first.startswith("<") else f"{where} (markup)"
    else:
        detail = f"{where} with an empty body"
    if "envelope" in found:
        more["envelope"] = found["envelope"]
    gateway = _gateway(text, title) if text else None
    if gateway:
        more["gateway"] = gateway
    reset = _RESET.search(text[:1024]) if gateway == "envoy" else None
    if reset is not None:
        more["reset_reason"] = reset.group(1)
    if code is not None and 200 <= code <= 299 and not found.get("message"):
        detail = f"{where}: a success response, it reports no error"
    facts = Facts(
        provider=provider,
        status=code,
        headers=lower_headers(headers),
        body=parsed,
        # An HTML page stays out of ``upstream``: its title is kept instead.
        text="" if title is not None else text,
        message=found.get("message"),
        vendor_code=found.get("vendor_code"),
        more_ids=tuple(found.get("ids", ())),
        id_headers=_REQUEST_IDS,
        extra=more,
    )
    return decide(TABLE, facts, detail=short(" ".join(detail.split()), 1024))


def from_response(status: Any, headers: Any, body: Any) -> HarnessError:
    """The harness error for a raw HTTP response of no known shape (see the module doc)."""
    return _read(status, headers, body)


def looks_like(body: Any) -> bool:
    """Always ``False``: plain HTTP has no error shape of its own; it is the fallback."""
    return False


def diagnose(result: Any, tools: Iterable[Any] | None) -> HarnessError | None:
    """Always ``None``: a plain HTTP response has no stop reason to read."""
    return None


def diagnose_stream(chunks: Iterable[Any], tools: Iterable[Any] | None) -> HarnessError | None:
    """Always ``None``: a plain HTTP stream's errors are read by ``from_response``."""
    return None


def stream_state(first: Any, keep_text: int = 0) -> StreamState:
    """A plain HTTP stream has no protocol this library reads: every chunk is output, and
    nothing says whether it ended whole (``StreamState`` itself)."""
    return StreamState(keep_text)


# -- exceptions -------------------------------------------------------------------------------


def _request_of(exc: BaseException, response: Any) -> tuple[str | None, str | None]:
    """The method and host of the request behind ``exc`` (never its path or query)."""
    # urllib3 keeps the host on the connection or the pool; ``conn`` first, because reading
    # ``pool`` on a NewConnectionError warns that it is deprecated.
    for owner, name in (
        (exc, "request"),
        (response, "request"),
        (exc, "request_info"),  # aiohttp
        (exc, "conn"),  # urllib3
        (exc, "pool"),  # urllib3
    ):
        request = field(owner, name)
        if request is None:
            continue
        method = field(request, "method")
        url = field(request, "url")
        host = field(url, "host") or field(request, "host")
        if not isinstance(host, str):
            try:
                host = urlsplit(url).hostname if isinstance(url, str) else None
            except ValueError:
                host = None
        if isinstance(method, bytes):
            method = method.decode("latin-1")
        method = method.upper()[:16] if isinstance(method, str) and method else None
        host = host.lower()[:255] if isinstance(host, str) and host else None
        if method or host:
            return method, host
    return None, None


def _body_of(response: Any) -> Any:
    """The bytes of a response that was read; never reads (no I/O in a normalizer)."""
    content = field(response, "_content")
    if isinstance(content, (bytes, bytearray, str)):
        return content
    return None


_QUERY: Final = HTTP_QUERY.compiled()
"""A query string inside a message (requests and urllib3 print the URL they failed on)."""


def _message(exc: BaseException) -> str | None:
    """``str(exc)`` without query strings (they can hold keys), or ``None``."""
    try:
        text = str(exc)
    except Exception:
        return None
    if not text:
        return None
    text = short(text, 1024)
    return _QUERY.sub("?…", text) if "?" in text else text


def _response_error(
    exc: BaseException,
    response: Any,
    status: Any,
    headers: Any,
    *,
    method: str | None,
    host: str | None,
) -> HarnessError:
    """An error status: read by the one dispatcher (``_facade.respond``), as a response given
    to ``from_response`` is; the exception, method and host join ``upstream`` (a harness
    error object the response carried is returned as it came)."""
    from .._facade import respond

    err = respond(status, headers, _body_of(response), host=host)
    if err.untrusted:
        return err
    more: dict[str, Any] = {"exception": qualname(exc)}
    if method:
        more["method"] = method
    if host:
        more["host"] = host
    add_upstream(err, more)
    return err


def _fixed(
    exc: BaseException,
    code: str,
    retryable: bool,
    vendor_code: str | None,
    *,
    method: str | None,
    host: str | None,
) -> HarnessError:
    """An exception with a fixed code: its class, message, and the request's method and host."""
    kind = type(exc).__name__
    message = _message(exc)
    extra: dict[str, Any] = {}
    if method:
        extra["method"] = method
    if host:
        extra["host"] = host
    cause = exc.__cause__
    if cause is not None:
        extra["cause"] = qualname(cause)
    facts = Facts(
        provider=_provider_for_host(host) or NAME,
        message=message,
        vendor_code=vendor_code,
        exception=qualname(exc),
        extra=extra,
    )
    where = f" ({method or 'request to'} {host})" if host else ""
    detail = f"{kind}: {message}{where}" if message else f"{kind}{where}"
    return build(code, retryable, facts, detail=detail)


def _httpx(exc: BaseException) -> HarnessError | None:
    """httpx, httpx2 and httpcore exceptions: the first class of the MRO in ``CLASSES``."""
    for cls in type(exc).__mro__:
        if cls.__module__.partition(".")[0] in _HTTPX_ROOTS and cls.__name__ in CLASSES:
            fixed = CLASSES[cls.__name__]
            break
    else:
        return None
    response = field(exc, "response")
    method, host = _request_of(exc, response)
    if fixed is None:
        status = integer(field(response, "status_code"))
        if status is not None:
            headers = field(response, "headers")
            return _response_error(exc, response, status, headers, method=method, host=host)
        fixed = _UNAVAILABLE
    code, retryable = fixed
    vendor_code = None
    if code == "upstream.unavailable":
        is_timeout = any(k.__name__ in _TIMEOUTS for k in type(exc).__mro__)
        vendor_code = "timeout" if is_timeout else "connection_error"
    return _fixed(exc, code, retryable, vendor_code, method=method, host=host)


def _other(exc: BaseException) -> HarnessError | None:
    """``requests``, ``urllib3`` and ``aiohttp`` exceptions, by status or class name."""
    response = field(exc, "response")
    method, host = _request_of(exc, response)
    status = integer(field(response, "status_code"))
    headers = field(response, "headers")
    if status is None:
        status = integer(field(exc, "status"))  # aiohttp's ClientResponseError
        headers = field(exc, "headers")
    if status is not None and 400 <= status <= 599:
        return _response_error(exc, response, status, headers, method=method, host=host)
    for cls in type(exc).__mro__:
        if cls.__module__.partition(".")[0] not in _OTHER_ROOTS:
            continue
        for pattern, code, retryable, vendor_code in _PATTERNS:
            if pattern.search(cls.__name__[:256]):
                return _fixed(exc, code, retryable, vendor_code, method=method, host=host)
    code, retryable = _INTERNAL
    return _fixed(exc, code, retryable, None, method=method, host=host)


def normalize(exc: BaseException) -> HarnessError | None:
    """The harness error for an exception of an HTTP client library, or ``None``.

    httpx and httpx2 (and httpcore) exceptions are read with ``CLASSES``; ``requests``,
    ``urllib3`` and ``aiohttp`` ones with ``_PATTERNS``. Anything else gives ``None``.
    """
    roots = {cls.__module__.partition(".")[0] for cls in type(exc).__mro__}
    if roots & _HTTPX_ROOTS:
        return _httpx(exc)
    if roots & _OTHER_ROOTS:
        return _other(exc)
    return None
