"""What a vendor states beyond its codes: the limit it names, the tool call it refused.

``_rules.build`` asks this module once the code is decided (and ``_rules.hints``, for what
the headers state):

- for ``context.window_exceeded``, the context size and prompt size a server puts in its
  error object as numbers (llama.cpp's ``n_ctx`` and ``n_prompt_tokens``) when the message
  states none;
- for ``upstream.rate_limited``, the ``limit`` the provider states, from its message
  ("Limit 10000, Used 9348, Requested 5086", "current: 1410, limit: 100", "limit: 0") or else
  from the rate-limit headers whose remaining count is 0 (``x-ratelimit-*``,
  ``anthropic-ratelimit-*``), and whether waiting can never help: a quota of 0, or one
  request larger than the whole allowance;
- for the three tool-call codes, the tool's name and the ``model_feedback`` to give the model
  when the provider refused its tool call (Groq's ``tool_use_failed``, with the model's
  ``failed_generation``).

Every pattern is in ``_patterns`` with its bound, and each runs only after a literal it needs
was found in the text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from ._patterns import MAX_MESSAGE, RATE_LIMIT_STATED, TOOL_NAME_STATED

__all__ = [
    "TOOL_CODES",
    "context_numbers",
    "finish_failure",
    "never_met",
    "rate_limit_found",
    "rate_limit_headers",
    "stated_limit",
    "tool_failure",
]

TOOL_CODES: Final = frozenset(
    {"output.unknown_tool", "output.invalid_tool_arguments", "output.malformed"}
)
"""Codes whose ``model_feedback`` and tool name are read from a provider's refusal."""

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
_TOOL_WORDS: Final = ("call tool '", "parameters for tool ")
_TOOL: Final = tuple(
    zip(_TOOL_WORDS, (pattern.compiled() for pattern in TOOL_NAME_STATED), strict=True)
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


def _tool_name(message: str, extra: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The tool the provider names, and the schema errors it lists, if any."""
    text = message[:MAX_MESSAGE]
    for word, pattern in _TOOL:
        found = pattern.search(text) if word in text else None
        if found is not None:
            groups = found.groupdict()
            return groups["name"], groups.get("errors")
    generation = extra.get("failed_generation")
    if isinstance(generation, str) and generation.lstrip().startswith("{"):
        try:
            call = json.loads(generation[:MAX_MESSAGE])
        except (ValueError, RecursionError):
            return None, None
        name = call.get("name") if isinstance(call, dict) else None
        if isinstance(name, str) and 0 < len(name) <= 128:
            return name, None
    return None, None


def tool_failure(
    code: str, message: str | None, extra: Mapping[str, Any]
) -> tuple[str | None, dict[str, Any] | None]:
    """``model_feedback`` and ``location`` for a tool call the provider refused.

    Returns ``(None, None)`` when the provider said nothing about a tool call (the code came
    from elsewhere, as for a tool call checked in a result, which brings its own).
    """
    generation = extra.get("failed_generation")
    text = message or ""
    if not text and not isinstance(generation, str):
        return None, None
    name, errors = _tool_name(text, extra)
    location = {"tool_name": name} if name else None
    lowered = text[:MAX_MESSAGE].lower()
    if code == "output.unknown_tool":
        if "tool choice is none" in lowered:
            feedback = "Tool calls are not allowed here; answer without calling a tool."
        elif name:
            feedback = f"There is no tool named {name!r} here; call only the tools offered."
        else:
            feedback = "You called a tool that is not offered here; call only the tools offered."
    elif code == "output.invalid_tool_arguments":
        target = f"the tool {name!r}" if name else "the tool"
        problems = f" ({errors.strip()})" if errors else ""
        feedback = (
            f"The arguments you gave to {target} do not match its schema{problems}. Call it "
            "again with arguments that match the schema."
        )
    elif "did not call" in lowered:
        feedback = "This request requires a tool call; answer by calling one of the tools."
    else:
        wrote = ""
        if isinstance(generation, str) and generation.strip():
            snippet = " ".join(generation.split())
            wrote = f" (you wrote: {snippet[:300]}{'…' if len(snippet) > 300 else ''})"
        feedback = (
            f"Your tool call could not be read{wrote}. Call the tool again with its name and "
            "one JSON object of arguments, in the tool-call format."
        )
    return feedback, location


_KNOWN_FINISH: Final = frozenset(
    {"stop", "length", "tool_calls", "content_filter", "function_call", "eos", "end_turn"}
    | {"stop_sequence", "tool_use", "null", "none", ""}
)
_FINISH_WORDS: Final = (
    (
        ("malformed_function", "malformed_tool", "invalid_function", "invalid_tool"),
        "output.invalid_tool_arguments",
    ),
    (("unexpected_tool", "unknown_tool"), "output.unknown_tool"),
    (("malformed", "invalid"), "output.malformed"),
    (("refus",), "policy.model_refusal"),
    (
        ("safety", "filter", "block", "prohibited", "recitation", "spii", "moderat", "guardrail"),
        "policy.content_filtered",
    ),
    (
        ("length", "max_tokens", "max_output", "token_limit", "token limit", "tokens"),
        "output.truncated",
    ),
    (("error", "fail", "abort"), "upstream.unavailable"),
)
"""Words that name a failure in a finish reason nobody listed, first family found wins."""


def finish_failure(reason: str) -> str | None:
    """The code an unlisted finish reason names by its words, or ``None``.

    A proxy in front of Gemini passes ``malformed_function_call``; OpenRouter ends a failed
    stream with ``error``; other servers say ``SAFETY`` or ``token_limit``. A reason in none
    of these families (or a known one: ``stop``, ``tool_calls``, ...) is not a failure.
    """
    low = reason[:64].lower()
    if low in _KNOWN_FINISH:
        return None
    for words, code in _FINISH_WORDS:
        if any(word in low for word in words):
            return code
    return None
