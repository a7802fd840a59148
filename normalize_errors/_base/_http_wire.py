"""The HTTP wire, read without raising: headers, retry hints, durations, bodies, pages.

What every reader of a response needs, once: header lower-casing (bounded), ``Retry-After``
(delta-seconds or HTTP-date), ``retry-after-ms``, the SDKs' ``x-stainless-retry-count``,
duration strings (``7s``, ``1.5s``, ``6m0s``, ``120ms``), a body of any shape as text and as
JSON, an HTML page's title, a stream body's first error event, and cutting text to a
bound. Malformed input gives ``None`` or a neutral value.
"""

from __future__ import annotations

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
from ._safe_read import integer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

__all__ = [
    "MAX_JSON",
    "MAX_MESSAGE",
    "body_text",
    "html_title",
    "lower_headers",
    "parse_body",
    "parse_duration",
    "retry_after",
    "short",
    "stainless_retry_count",
    "stream_error",
    "stream_events",
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
    try:
        raw = getattr(headers, "raw", None)
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
        first = bytes(body[:256]).lstrip()[:1] or bytes(body).lstrip()[:1]
        if first not in (b"{", b"["):
            return None  # not JSON by its first character: nothing is decoded
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


def stream_error(text: str) -> dict[str, Any] | None:
    """The first error event in a stream body (SSE ``data:`` lines or NDJSON), or ``None``.

    An event is an error when its JSON object has an ``error`` member that is not empty or
    null, or ``"type": "error"``. Only the first 256 KiB of lines are looked at.
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
        if isinstance(event, dict) and (event.get("error") or event.get("type") == "error"):
            return event  # an "error": null (a result reporting none) is no error event
    return None


def stream_events(text: str) -> list[Any]:
    """The JSON events of a recorded stream body, in order: each SSE ``data:`` line's JSON
    (``[DONE]`` and lines that are not JSON skipped), else the body itself when it is one
    JSON value, else each NDJSON line's. Only the first 4 MiB and 100,000 lines are read."""
    import json

    head = text[: 1 << 22]
    lines = head.splitlines()[:100_000]
    sse = any(line.startswith("data:") for line in lines)
    if not sse:
        whole = parse_body(head)
        if whole is not None:
            return [whole]
    events: list[Any] = []
    for line in lines:
        if sse and not line.startswith("data:"):
            continue
        data = line[5:].strip() if sse else line.strip()
        if not data.startswith(("{", "[")):
            continue
        try:
            events.append(json.loads(data))
        except (ValueError, RecursionError):
            continue
    return events
