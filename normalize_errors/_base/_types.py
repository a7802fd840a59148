"""The typed shapes of five members: ``Origin``, ``Advice``, ``Limit``, ``Location`` and
``StreamSummary``.

They are real types at run time (``typing.get_args(Advice)`` lists the words, ``Limit``
is a ``TypedDict``), but building them needs ``typing``, which costs several milliseconds
to import. So ``import normalize_errors`` does not load this module: the package's
``__getattr__`` imports it the first time one of these names is read, and the rest of
the package refers to them only under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from typing import Literal, TypedDict

__all__ = ["Advice", "Limit", "Location", "Origin", "StreamSummary", "ToolCallInFlight"]

Origin = Literal["model", "harness", "tool", "upstream", "user"]
"""Where an error originated (draft section 4.2)."""

Advice = Literal["retry", "feedback", "adjust", "fix", "credentials", "human", "stop"]
"""One word a program can switch on; see ``HarnessError.advice``."""


class Limit(TypedDict, total=False):
    """The limit that was exceeded (draft section 4.9)."""

    name: str
    value: float
    observed: float
    unit: str


class Location(TypedDict, total=False):
    """Where in the run the error happened (draft section 4.10)."""

    run_id: str
    turn: int
    tool_name: str
    tool_call_id: str
    pointer: str


class ToolCallInFlight(TypedDict, total=False):
    """The tool call a stream was inside when it was cut."""

    name: str | None
    id: str | None
    arguments_chars: int


class StreamSummary(TypedDict, total=False):
    """What a watched stream had delivered when it failed (``HarnessError.stream``, the
    ``stream`` member of ``upstream``)."""

    api: str
    """The protocol: ``chat``, ``completions``, ``responses``, ``messages``, ``gemini``,
    ``converse``, ``invoke``, ``cohere``, or ``stream`` (none this library reads)."""
    chunks: int
    """Chunks (or events) that reached the caller."""
    phase: str
    """``before_output``, ``text``, ``tool_call`` or ``done`` (after the terminal event)."""
    output_chars: int
    """Characters of output that reached the caller (text, refusals, reasoning, tool calls)."""
    terminal: bool
    """Whether the protocol's terminal event came."""
    stop_reason: str
    tool_call: ToolCallInFlight
    usage: dict[str, int]
    text: str
    """The output text so far, when the caller asked for it (``wrap(..., stream_text=N)``)."""
