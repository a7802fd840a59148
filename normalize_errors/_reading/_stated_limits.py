"""The limits a vendor states beyond its codes, and whether waiting can ever meet them.

``_rules.build`` asks this module once the code is decided (and ``_rules.hints``, for what
the headers state):

- for ``context.window_exceeded``, the context size and prompt size a server puts in its
  error object as numbers (llama.cpp's ``n_ctx`` and ``n_prompt_tokens``) when the message
  states none;
- for ``upstream.rate_limited``, the ``limit`` the provider states, from its message
  ("Limit 10000, Used 9348, Requested 5086", "current: 1410, limit: 100", "limit: 0") or else
  from the rate-limit headers whose remaining count is 0 (``x-ratelimit-*``,
  ``anthropic-ratelimit-*``), and whether waiting can never help: a quota of 0, or one
  request larger than the whole allowance.

The tool call a provider refused is read by ``_tool_refusals``; the words of an unlisted
finish reason by ``_wording.finish_failure``. Every pattern is in ``_patterns`` with its
bound, and each runs only after a literal it needs was found in the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from .._base._patterns import RATE_LIMIT_STATED

__all__ = [
    "context_numbers",
    "never_met",
    "rate_limit_found",
    "rate_limit_headers",
    "stated_limit",
]

_PER: Final = {"min": "minute", "minute": "minute", "m": "minute", "h": "hour", "hour": "hour"}
_PER.update({"d": "day", "day": "day"})
_WHAT: Final = {"t": "tokens", "r": "requests"}
_RATE_WORDS: Final = (
    ("s per ", 12),
    (" rate limit, current: ", 4),
    ("quota exceeded for metric: ", 0),
)
"""The literal each pattern of ``RATE_LIMIT_STATED`` needs, and how far before it a match
can start: the search begins there instead of at the start of the message."""
_RATE: Final = tuple(
    zip(_RATE_WORDS, (pattern.compiled() for pattern in RATE_LIMIT_STATED), strict=True)
)
_HEADER_PREFIXES: Final = (
    ("x-ratelimit-remaining-", "x-ratelimit-limit-", ""),
    ("anthropic-ratelimit-", "anthropic-ratelimit-", "-remaining"),
)


def _count(value: Any) -> int | None:
    """A non-negative whole number from a JSON number or a short digit string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and 0 < len(value) <= 15 and value.isdigit():
        return int(value)
    return None


def context_numbers(extra: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``limit`` a server states as numbers in its error object (llama.cpp)."""
    size = _count(extra.get("n_ctx"))
    if size is None:
        return None
    limit: dict[str, Any] = {"name": "context_tokens", "value": size}
    prompt = _count(extra.get("n_prompt_tokens"))
    if prompt is not None:
        limit["observed"] = prompt
    return limit


def rate_limit_found(lowered: str) -> re.Match[str] | None:
    """Where the vendor's message (``lowered``: in lower case, cut to ``MAX_MESSAGE``)
    states its rate or quota limit, if it does: the match ``never_met`` and ``stated_limit``
    read."""
    if not lowered:
        return None
    for (word, back), pattern in _RATE:
        at = lowered.find(word)
        found = None if at == -1 else pattern.search(lowered, max(0, at - back))
        if found is not None:
            return found
    return None


def never_met(found: re.Match[str]) -> bool:
    """Whether waiting can never meet the stated limit: it is 0, or one request asks for more."""
    value = int(found["value"])
    requested = found["requested"] if "requested" in found.re.groupindex else None
    return value == 0 or (requested is not None and int(requested) > value)


def stated_limit(found: re.Match[str]) -> dict[str, Any]:
    """The ``limit`` member for a limit ``rate_limit_found`` found."""
    groups = found.groupdict()
    value = int(groups["value"])
    if groups.get("metric"):
        name = groups["metric"].rpartition("/")[2] or groups["metric"]
        return {"name": name, "value": value}
    what = _WHAT.get(groups["what"], groups["what"])
    limit: dict[str, Any] = {"name": f"{what}_per_{_PER[groups['per']]}", "value": value}
    used = int(groups["used"]) if groups.get("used") else None
    requested = int(groups["requested"]) if groups.get("requested") else None
    if used is not None or requested is not None:
        limit["observed"] = (used or 0) + (requested or 0)
    return limit


def rate_limit_headers(headers: Mapping[str, str]) -> dict[str, Any] | None:
    """The limit of the first rate-limit header family whose remaining count is 0
    (``x-ratelimit-remaining-*``, ``anthropic-ratelimit-*-remaining``)."""
    for name, value in headers.items():
        if value.strip() != "0":
            continue
        for prefix, limit_prefix, suffix in _HEADER_PREFIXES:
            if not name.startswith(prefix) or not name.endswith(suffix):
                continue
            kind = name[len(prefix) : len(name) - len(suffix)]
            if suffix:  # anthropic-ratelimit-<kind>-remaining -> -<kind>-limit
                ceiling = headers.get(f"{limit_prefix}{kind}-limit")
            else:  # x-ratelimit-remaining-<kind> -> x-ratelimit-limit-<kind>
                ceiling = headers.get(f"{limit_prefix}{kind}")
            top = _count(ceiling.strip()) if isinstance(ceiling, str) else None
            if kind and top is not None:
                return {"name": kind.replace("-", "_"), "value": top, "observed": top}
    return None
