"""Cohere's stream protocol as a state machine (see ``normalize_errors._reading._stream_state``).

A v2 ``chat_stream`` is ``message-start``, per content block ``content-start``,
``content-delta`` (its text) and ``content-end``, ``tool-plan-delta`` (the model's plan, as
text), per tool call ``tool-call-start`` (its id, name and first arguments),
``tool-call-delta`` (more arguments) and ``tool-call-end``, ``citation-*``, and
``message-end`` with the ``finish_reason`` and usage: the terminal event. The v1 stream
(``event_type``) is ``stream-start``, ``text-generation`` events and ``stream-end`` with its
``finish_reason``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._base import _provider_files
from .._base._safe_read import integer, sequence, text_of
from .._model._exceptions import HarnessError
from .._reading._rules import read_usage
from .._reading._stream_state import StreamState, View
from . import cohere


class ChatStreamState(StreamState):
    """The state of a Cohere chat stream (v2 events, and v1's)."""

    __slots__ = ("_id", "_text")

    provider = cohere.NAME
    api = "cohere"
    ends_with = _provider_files.stream(cohere.NAME, "cohere")["ends_with"]
    knows_end = True

    def __init__(self, keep_text: int = 0) -> None:
        super().__init__(keep_text)
        self._text = False
        self._id: str | None = None

    def feed(self, event: Any) -> None:
        self.chunks += 1
        if type(event) is dict:
            event = View(event)
        kind = getattr(event, "type", None) or getattr(event, "event_type", None)
        if kind == "content-delta":
            message = getattr(getattr(event, "delta", None), "message", None)
            text = getattr(getattr(message, "content", None), "text", None)
            if text:
                self.said(text)
                self._text = True
        elif kind == "tool-call-delta":
            call = (self.calls or {}).get(self._index(event))
            if call is None:
                call = self.open_call(self._index(event), None, None)
            function = getattr(self._tool_call(event), "function", None)
            self.add_arguments(call, getattr(function, "arguments", None))
        elif kind == "tool-plan-delta":
            message = getattr(getattr(event, "delta", None), "message", None)
            self.said(getattr(message, "tool_plan", None))
        elif kind == "tool-call-start":
            inner = self._tool_call(event)
            function = getattr(inner, "function", None)
            name = getattr(function, "name", None)
            call = self.open_call(self._index(event), name, getattr(inner, "id", None))
            self.add_arguments(call, getattr(function, "arguments", None))
        elif kind == "tool-call-end":
            call = (self.calls or {}).get(self._index(event))
            if call is not None:
                self.close_call(call)
        elif kind == "message-start":
            self._id = text_of(getattr(event, "id", None))
        elif kind == "message-end":
            delta = getattr(event, "delta", None)
            self.usage = getattr(delta, "usage", None)
            self.finish(text_of(getattr(delta, "finish_reason", None)) or "unknown")
        elif kind == "text-generation":  # v1
            text = getattr(event, "text", None)
            if text:
                self.said(text)
                self._text = True
        elif kind == "stream-end":  # v1
            self.finish(text_of(getattr(event, "finish_reason", None)) or "unknown")

    @staticmethod
    def _index(event: Any) -> int:
        return integer(getattr(event, "index", None)) or 0

    @staticmethod
    def _tool_call(event: Any) -> Any:
        message = getattr(getattr(event, "delta", None), "message", None)
        calls = getattr(message, "tool_calls", None)
        if isinstance(calls, (list, tuple)):  # one call per event, whatever the type says
            calls = next(iter(sequence(calls)), None)
        return calls

    def usage_counts(self) -> dict[str, int]:
        return read_usage({"usage": self.usage}, cohere._USAGE) if self.usage is not None else {}

    def verdict(self, tools: Iterable[Any] | None) -> HarnessError | None:
        self.close_calls()
        result: dict[str, Any] = {
            "id": self._id,
            "finish_reason": self.stop_reason,
            "usage": self.usage,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "…"}] if self._text else [],
                "tool_calls": [
                    {"id": c.id, "function": {"name": c.name, "arguments": c.arguments}}
                    for c in (self.calls or {}).values()
                ],
            },
        }
        found = cohere.diagnose(result, tools)
        if found is not None:
            found.result = None
        return found


__all__ = ["ChatStreamState"]
