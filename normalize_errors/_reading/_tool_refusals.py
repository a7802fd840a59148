"""The tool call a provider refused: the tool's name, and the ``model_feedback`` to give the model.

``_rules.build`` asks ``tool_failure`` for the three tool-call codes (``TOOL_CODES``) when the
provider refused a tool call (Groq's ``tool_use_failed``, with the model's
``failed_generation``): the tool it names (``TOOL_NAME_STATED``, each pattern behind a
literal it needs) and what to tell the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from .._base._patterns import MAX_MESSAGE, TOOL_NAME_STATED

__all__ = ["TOOL_CODES", "tool_failure"]

TOOL_CODES: Final = frozenset(
    {"output.unknown_tool", "output.invalid_tool_arguments", "output.malformed"}
)
"""Codes whose ``model_feedback`` and tool name are read from a provider's refusal."""

_TOOL_WORDS: Final = ("call tool '", "parameters for tool ")
_TOOL: Final = tuple(
    zip(_TOOL_WORDS, (pattern.compiled() for pattern in TOOL_NAME_STATED), strict=True)
)


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
