"""Rules shared by every provider: headers, retry hints, bodies, statuses.

Adapters translate what a vendor said into facts; the decisions that do not depend on the
vendor live here, once: header lower-casing, ``Retry-After`` (delta-seconds or HTTP-date),
``retry-after-ms``, duration strings (``7s``, ``1.5s``, ``6m0s``, ``120ms``), reading a body
of any shape, an HTML page's title, and the code an HTTP status means when nothing more
specific is known.

Nothing here raises: malformed input gives ``None`` or a neutral value.
"""

from __future__ import annotations

import math
import time

from ._patterns import (
    DURATION_PART,
    HTML_HEADING,
    HTML_TITLE,
    MAX_HEADER_VALUE,
    MAX_MESSAGE,
    SECONDS,
)
from ._redact import cut

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

__all__ = [
    "MAX_JSON",
    "MAX_MESSAGE",
    "body_text",
    "field",
    "html_title",
    "integer",
    "lower_headers",
    "parse_body",
    "parse_duration",
    "retry_after",
    "sequence",
    "short",
    "status_code",
    "stream_error",
    "text_of",
]

MAX_JSON: Final = 1 << 20
"""Bodies longer than this (in characters) are not parsed as JSON."""
_MAX_HEADERS: Final = 256
_MAX_HEADER_VALUE: Final = MAX_HEADER_VALUE


def lower_headers(headers: Any) -> dict[str, str]:
    """A plain dict of ``headers`` with lower-case names; never raises.

    Accepts a mapping (``httpx.Headers``, ``httpx2.Headers``, a dict, a genai wrapper's dict),
    a list of pairs, or ``None``. Values that are lists (vcrpy) give their first item.
    """
    if not headers:
        return {}
    out: dict[str, str] = {}
    try:
        raw = getattr(headers, "raw", None)  # httpx and httpx2: (bytes, bytes) pairs
        if isinstance(raw, list):
            return {
                name.decode("latin-1").lower(): value[:_MAX_HEADER_VALUE].decode("latin-1")
                for name, value in raw[:_MAX_HEADERS]
            }
        items = headers.items() if hasattr(headers, "items") else headers
        for count, pair in enumerate(items):
            if count >= _MAX_HEADERS:
                break
            try:
                name, value = pair
            except (TypeError, ValueError):
                continue
            if isinstance(value, (list, tuple)):
                value = value[0] if value else ""
            if isinstance(name, bytes):
                name = name.decode("latin-1")
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            if isinstance(name, str) and isinstance(value, (str, int, float)):
                out[name.lower()] = str(value)[:_MAX_HEADER_VALUE]
    except Exception:  # a hostile headers object
        return out
    return out


def stainless_retry_count(headers: Any) -> int | None:
    """The ``x-stainless-retry-count`` of a request's headers (OpenAI and Anthropic SDKs).

    The SDKs send it on every attempt: 0 on the first, 1 on the first retry, and so on.
    Reads the raw header list when there is one, which is faster than a lookup.
    """
    raw = getattr(headers, "raw", None)
    try:
        if isinstance(raw, list):
            for name, value in raw:  # the SDKs send the name in lower case
                if name == b"x-stainless-retry-count":
                    return integer(value.decode("latin-1"))
            return None
        if headers is None:
            return None
        return integer(headers.get("x-stainless-retry-count"))
    except Exception:
        return None


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``Retry-After``, or ``None``.

    ``retry-after-ms`` (milliseconds, as OpenAI and Anthropic send) wins over
    ``Retry-After`` (delta-seconds, fractions accepted, or an HTTP-date; a date in the past
    gives 0). Malformed, negative or non-finite values are ignored. ``headers`` must have
    lower-case names (see ``lower_headers``).
    """
    ms = headers.get("retry-after-ms")
    if ms is not None:
        match = SECONDS.compiled().fullmatch(ms[:MAX_HEADER_VALUE])
        if match is not None:
            return float(match.group(1)) / 1000.0
    value = headers.get("retry-after")
    if value is None:
        return None
    match = SECONDS.compiled().fullmatch(value[:MAX_HEADER_VALUE])
    if match is not None:
        return float(match.group(1))
    return _http_date_delay(value, now)


def _http_date_delay(value: str, now: float | None) -> float | None:
    if len(value) > 64 or not any(ch.isalpha() for ch in value):
        return None
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if not math.isfinite(when):
        return None
    delay = when - (time.time() if now is None else now)
    return max(0.0, round(delay, 3))


def parse_duration(text: Any) -> float | None:
    """Seconds in a duration string: ``"7s"``, ``"1.5s"``, ``"6m0s"``, ``"120ms"``, ``"2h"``.

    Handles protobuf ``Duration`` strings (Gemini's ``RetryInfo.retryDelay``) and the reset
    values of OpenAI's rate-limit headers. Anything else gives ``None``.
    """
    if not isinstance(text, str) or not text or len(text) > 64:
        return None
    total = 0.0
    pos = 0
    for match in DURATION_PART.compiled().finditer(text):
        if match.start() != pos:
            return None
        number, unit = float(match.group(1)), match.group(2)
        total += number * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[unit]
        pos = match.end()
    if pos != len(text) or pos == 0:
        return None
    return total


def body_text(body: Any, limit: int = MAX_JSON) -> str:
    """``body`` as text: bytes are decoded as UTF-8 (bad bytes replaced); never raises."""
    if body is None:
        return ""
    if isinstance(body, str):
        return body[:limit] if len(body) > limit else body
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body[: limit * 4]).decode("utf-8", "replace")[:limit]
    import json

    try:
        return json.dumps(body, default=str)[:limit]
    except Exception:
        return f"<{type(body).__name__}>"


def parse_body(body: Any) -> Any:
    """The JSON value of ``body`` (a dict, list, ...) or ``None`` if it is not JSON.

    Already-parsed bodies (dicts, lists) are returned as they are. Text over ``MAX_JSON``
    characters, JSON nested too deeply for the parser and invalid UTF-8 give ``None``.
    """
    if isinstance(body, (dict, list)):
        return body
    if body is None:
        return None
    if isinstance(body, (bytes, bytearray, memoryview)):
        if len(body) > MAX_JSON * 4:
            return None
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            return None
    elif isinstance(body, str):
        text = body
    else:
        return None
    if len(text) > MAX_JSON:
        return None
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "{[":
        return None
    import json

    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def html_title(text: str) -> str | None:
    """The ``<title>`` (else first ``<h1>``) of an HTML page, or ``None`` if it is not HTML.

    Only the first 64 KiB are looked at; entities are decoded and white space folded.
    """
    head = text[:65536]
    if "<" not in head[:1024] or "html" not in head[:4096].lower():
        return None
    match = HTML_TITLE.compiled().search(head) or HTML_HEADING.compiled().search(head)
    if match is None:
        return ""
    from html import unescape

    return " ".join(unescape(match.group(1)).split())


def short(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` cut to ``limit`` characters (marked with ``…``), never inside a key.

    The cut moves back to the start of a run of key characters it would split, so the head
    of a key that straddles the cut does not survive unrecognised (see ``_redact.cut``).
    """
    return text if len(text) <= limit else cut(text, limit)


_STATUS_CODES: Final = {
    400: "upstream.invalid_request",
    401: "upstream.authentication_failed",
    402: "upstream.rate_limited",
    403: "upstream.authentication_failed",
    404: "upstream.invalid_request",
    405: "upstream.invalid_request",
    408: "upstream.unavailable",
    409: "upstream.invalid_request",
    413: "context.window_exceeded",
    422: "upstream.invalid_request",
    429: "upstream.rate_limited",
    499: "harness.cancelled",
    500: "upstream.unavailable",
    501: "upstream.invalid_request",
    502: "upstream.unavailable",
    503: "upstream.unavailable",
    504: "upstream.unavailable",
    529: "upstream.overloaded",
}
"""What an HTTP status means when nothing more specific is known (see ``status_code``)."""

_RETRYABLE_STATUS: Final = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def status_code(status: int | None) -> tuple[str, bool]:
    """The harness code and ``retryable`` an HTTP error status means on its own.

    402 (payment required) is a quota that retrying cannot fix; 408, 409, 429 and 5xx are
    retryable, as the vendor SDKs treat them; 413 means the input is too large. An error
    reported with no status or inside a 2xx response (a stream's error event) is a server
    error, ``upstream.unavailable``; any other status outside 400-599 is
    ``upstream.invalid_response``.
    """
    if status is None or 200 <= status <= 299:
        return "upstream.unavailable", True
    if not 400 <= status <= 599:
        return "upstream.invalid_response", True
    code = _STATUS_CODES.get(status)
    if code is None:
        code = "upstream.unavailable" if status >= 500 else "upstream.invalid_request"
    return code, status in _RETRYABLE_STATUS or (status >= 500 and status != 501)


def field(obj: Any, *names: str) -> Any:
    """The first of ``names`` that ``obj`` has, as a key or an attribute; ``None`` if none.

    Reads SDK result objects and their plain-JSON twins alike (pass both spellings, such
    as ``"finish_reason", "finishReason"``). Never raises.
    """
    for name in names:
        try:
            value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        except Exception:
            value = None
        if value is not None:
            return value
    return None


def text_of(value: Any) -> str | None:
    """``value`` if it is a non-empty string, its ``.value`` for enums, else ``None``."""
    if isinstance(value, str):
        return value or None
    if value is None or isinstance(value, (int, float, dict, list)):
        return None
    try:
        inner = getattr(value, "value", None)
    except Exception:  # a hostile object
        return None
    if isinstance(inner, str):
        return inner or None
    return None


def integer(value: Any) -> int | None:
    """``value`` as an int if it is one (or a string of ASCII digits), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and len(value) < 10:
        digits = value.strip()
        # isdigit() alone also accepts "²", which int() refuses.
        if digits.isascii() and digits.isdigit():
            return int(digits)
    return None


def stream_error(text: str) -> dict[str, Any] | None:
    """The first error event in a stream body (SSE ``data:`` lines or NDJSON), or ``None``.

    An event is an error when its JSON object has an ``error`` member or ``"type":
    "error"``. Only the first 256 KiB of lines are looked at.
    """
    if "error" not in text[: 1 << 18]:
        return None
    import json

    for count, line in enumerate(text[: 1 << 18].splitlines()):
        if count > 10_000:
            break
        data = line[5:].strip() if line.startswith("data:") else line.strip()
        if not data.startswith("{") or "error" not in data:
            continue
        try:
            event = json.loads(data)
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict) and ("error" in event or event.get("type") == "error"):
            return event
    return None


def sequence(value: Any) -> list[Any] | tuple[Any, ...]:
    """``value`` if it is a list or a tuple, else an empty tuple: vendor data said to be a list
    is iterated only when it is one."""
    return value if isinstance(value, (list, tuple)) else ()
