"""Credential redaction and JSON-safe, size-bounded copies (draft section 10).

Every text that enters a ``HarnessError`` passes through ``redact`` (strings) or
``sanitize`` (nested data) when it is set, so no credential can come out of the error's
attributes, ``str()``, ``repr()``, ``to_dict()`` or ``to_json()``.

What is recognised:

* API keys of OpenAI (``sk-...``, ``sk-proj-...``), Anthropic (``sk-ant-...``) and
  Google (``AIza...``), Google OAuth access tokens (``ya29.``) and JSON Web Tokens;
* ``Bearer`` / ``Basic`` credentials;
* the headers ``Authorization``, ``Proxy-Authorization``, ``x-api-key``, ``api-key``,
  ``x-goog-api-key`` and ``Cookie``, written as ``name: value`` or ``name=value`` in text,
  and as keys of a mapping (any case);
* the query parameters ``key``, ``api_key``, ``api-key``, ``access_token`` and ``token``.

Each is replaced by ``[REDACTED]``.
"""

from __future__ import annotations

import math

from ._lazy import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any, Final

__all__ = ["KEY_SHAPES", "REDACTED", "redact", "sanitize"]

REDACTED: Final = "[REDACTED]"

SECRET_KEYS: Final = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "api_key",
        "apikey",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "access_token",
        "password",
        "secret",
        "client_secret",
    }
)
"""Mapping keys whose values are always replaced, whatever they look like."""

KEY_SHAPES: Final = (
    r"\bsk-[A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic (sk-ant-...)
    r"|\bAIza[0-9A-Za-z_-]{30,}"  # Google API key
    r"|\bya29\.[0-9A-Za-z_-]{10,}"  # Google OAuth access token
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"  # JSON Web Token
)
"""The shapes of API keys and tokens, whatever surrounds them."""

# One alternation, no nested quantifiers: linear time on any input.
_PATTERN: Final = LazyPattern(
    rf"""(?xi)
    (?P<key>{KEY_SHAPES})
    |(?P<scheme>\b(?:[Bb]earer|[Bb]asic)\s+)[A-Za-z0-9._~+/=-]{{8,}}
    |(?P<header>\b(?:proxy-)?authorization|\bx-api-key|\bx-goog-api-key|\bapi-key|\bcookie)
      (?P<hsep>["']?\s*[:=]\s*["']?)(?:(?:[Bb]earer|[Bb]asic)\s+)?[^\s"',;&}}]+
    |(?P<param>[?&](?:key|api_key|api-key|access_token|token)=)[^&\s"'#]+
    """
)


def _replace(match: re.Match[str]) -> str:
    if match.group("key") is not None:
        return REDACTED
    scheme = match.group("scheme")
    if scheme is not None:
        return scheme + REDACTED
    header = match.group("header")
    if header is not None:
        return header + match.group("hsep") + REDACTED
    return match.group("param") + REDACTED


_ANCHORS: Final = (
    "sk-",
    "aiza",
    "ya29.",
    "eyj",
    "bearer",
    "basic",
    "authoriz",
    "api-key",
    "api_key",
    "x-goog",
    "cookie",
    "key=",
    "token=",
)
"""Lower-case text every credential form contains; text without any of them is clean."""
_SHORTEST: Final = 12
"""No recognised credential form fits in fewer characters."""
_MEMO: dict[str, str] = {}
_MEMO_SIZE: Final = 1024
_MEMO_TEXT: Final = 2048


def redact(text: str) -> str:
    """Return ``text`` with every credential it contains replaced by ``[REDACTED]``.

    Fast on clean text: short strings and strings without any credential's tell-tale
    substring skip the pattern, and recent results for repeated texts (the same vendor
    message, error after error) are remembered.
    """
    if len(text) < _SHORTEST:
        return text
    known = _MEMO.get(text)
    if known is not None:
        return known
    low = text.lower()
    for anchor in _ANCHORS:
        if anchor in low:
            pattern = _PATTERN.compiled()
            clean = pattern.sub(_replace, text) if pattern.search(text) else text
            break
    else:
        clean = text
    if len(text) <= _MEMO_TEXT:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        _MEMO[text] = clean
    return clean


MAX_TEXT: Final = 4096
"""Longest string kept inside ``upstream`` and unknown members; longer ones are cut."""
MAX_ITEMS: Final = 64
"""Most entries kept from one mapping or sequence inside ``upstream``."""
MAX_DEPTH: Final = 8
"""Deepest nesting kept inside ``upstream``; deeper values become a short text."""


def _text(value: str, limit: int) -> str:
    if len(value) > limit:
        value = value[:limit] + "…"
    return redact(value)


def sanitize(value: Any, limit: int = MAX_TEXT, depth: int = 0) -> Any:
    """Return a JSON-ready, redacted, size-bounded copy of ``value``.

    Mappings keep string keys (others are turned into text) and lose the values of
    secret-named keys; sequences become lists; non-finite floats become ``None``; any
    other object becomes its redacted ``repr``. Strings over ``limit`` characters are cut
    and marked with ``…``. Never raises.
    """
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return _text(value, limit)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if depth >= MAX_DEPTH:
        return "…"
    if isinstance(value, dict) or (hasattr(value, "items") and hasattr(value, "keys")):
        out: dict[str, Any] = {}
        try:
            items = list(value.items())[:MAX_ITEMS]
        except Exception:  # a hostile mapping
            return _text(_safe_repr(value), limit)
        for key, item in items:
            name = key if isinstance(key, str) else _safe_repr(key)
            name = _text(name, 256)
            if name.lower() in SECRET_KEYS:
                out[name] = REDACTED
            else:
                out[name] = sanitize(item, limit, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [sanitize(item, limit, depth + 1) for item in value[:MAX_ITEMS]]
    if isinstance(value, (bytes, bytearray)):
        return _text(bytes(value[: limit * 4]).decode("utf-8", "replace"), limit)
    return _text(_safe_repr(value), limit)


def _safe_repr(value: object) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"
