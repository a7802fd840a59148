"""Anthropic's stream protocol as a state machine (see ``normalize_errors._reading._stream_state``).

A Messages stream is ``message_start``, then per content block ``content_block_start``,
its ``content_block_delta`` events (``text_delta``, ``input_json_delta`` pieces of a tool's
input, ``thinking_delta``, ``signature_delta``, ``citations_delta``) and
``content_block_stop``, then ``message_delta`` with the ``stop_reason`` and
``message_stop``. The stop reason is the terminal event (``message_stop`` after it closes
the stream; a connection lost between them cost nothing). ``messages.stream()`` yields
the same events and a few of its own (``text``, ``input_json``, ...), which are counted
and not read. The legacy Text Completions stream is ``completion`` events, the last with
its ``stop_reason``. An ``error`` event given as data is the stream's failure (the SDK
raises it). InvokeModelWithResponseStream carries these events for Claude models on
Bedrock (``_bedrock_stream``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .._base import _provider_files
from .._base._safe_read import integer, sequence, text_of
from .._model._exceptions import HarnessError
from .._reading._stream_state import StreamState, View
from . import anthropic

_MAX_BLOCKS: Final = 1024
"""Content blocks whose kind is kept for the verdict (a message has a few)."""


class MessagesState(StreamState):
    """The state of a Messages (or legacy Text Completions) stream."""

    __slots__ = ("_id", "_kinds", "_model", "_stop_details", "_text", "_tokens")

    provider = anthropic.NAME
    api = "messages"
    ends_with = _provider_files.stream(anthropic.NAME, "messages")["ends_with"]
    knows_end = True

    def __init__(self, keep_text: int = 0) -> None:
        super().__init__(keep_text)
        self._text = False
        self._kinds: dict[int, str] = {}
        self._id: str | None = None
        self._model: str | None = None
        self._stop_details: Any = None
        self._tokens: dict[str, int] = {}

    def feed(self, event: Any) -> None:
        self.chunks += 1
        if type(event) is dict:
            if event.get("type") == "error":
                if self.failure is None:
                    self.failure = anthropic._error_event(event)
                return
            event = View(event)
        kind = getattr(event, "type", None)
        if kind == "content_block_delta":
            self._delta(event)
        elif kind == "content_block_start":
            self._start(event)
        elif kind == "content_block_stop":
            index = getattr(event, "index", 0)
            call = (self.calls or {}).get(index)
            if call is not None:
                self.close_call(call)
        elif kind == "message_delta":
            delta = getattr(event, "delta", None)
            details = getattr(delta, "stop_details", None)
            if details is not None:
                self._stop_details = details
            self._count(getattr(getattr(event, "usage", None), "output_tokens", None), "output")
            reason = text_of(getattr(delta, "stop_reason", None))
            if reason:
                self.finish(reason)
        elif kind == "message_start":
            message = getattr(event, "message", None)
            self._id = text_of(getattr(message, "id", None))
            self._model = text_of(getattr(message, "model", None))
            usage = getattr(message, "usage", None)
            self._count(getattr(usage, "input_tokens", None), "input")
            self._count(getattr(usage, "output_tokens", None), "output")
            for index, block in enumerate(sequence(getattr(message, "content", None))):
                self._block(index, block)
            reason = text_of(getattr(message, "stop_reason", None))
            if reason:
                self.stop_reason = reason
        elif kind == "message_stop":
            self.finish()
        elif kind == "error":  # an error event given as the SDK's ``ErrorResponse``
            if self.failure is None:
                self.failure = anthropic._error_event(event)
        elif kind == "completion":  # the legacy Text Completions stream
            self.said(getattr(event, "completion", None))
            self._text = self._text or bool(self.output_chars)
            reason = text_of(getattr(event, "stop_reason", None))
            if reason:
                self.finish(reason)

    def _count(self, value: Any, which: str) -> None:
        count = integer(value)
        if count is not None:
            self._tokens[which + "_tokens"] = count

    def _start(self, event: Any) -> None:
        index = integer(getattr(event, "index", 0)) or 0
        self._block(index, getattr(event, "content_block", None))

    def _block(self, index: int, block: Any) -> None:
        kind = text_of(getattr(block, "type", None)) or "unknown"
        if len(self._kinds) < _MAX_BLOCKS:
            self._kinds[index] = kind
        if kind in ("tool_use", "server_tool_use"):
            self.open_call(index, getattr(block, "name", None), getattr(block, "id", None))
        elif kind == "text":
            text = getattr(block, "text", None)
            if text:
                self.said(text)
                self._text = True
        elif self.phase == "before_output" and kind not in ("thinking", "redacted_thinking"):
            self.output_chars += 1  # a block of another kind (a server tool's result, ...)
            self.phase = "text"

    def _delta(self, event: Any) -> None:
        delta = getattr(event, "delta", None)
        kind = getattr(delta, "type", None)
        if kind == "text_delta":
            text = getattr(delta, "text", None)
            if text:
                self.said(text)
                self._text = True
        elif kind == "input_json_delta":
            index = getattr(event, "index", 0)
            call = (self.calls or {}).get(index)
            if call is None:
                call = self.open_call(index, None, None)
            self.add_arguments(call, getattr(delta, "partial_json", None))
        elif kind == "thinking_delta":
            self.said(getattr(delta, "thinking", None))

    def usage_counts(self) -> dict[str, int]:
        return dict(self._tokens)

    def verdict(self, tools: Iterable[Any] | None) -> HarnessError | None:
        self.close_calls()
        calls = self.calls or {}
        content: list[dict[str, Any]] = []
        if self._text:
            content.append({"type": "text", "text": "…"})
        kinds = {kind for index, kind in self._kinds.items() if index not in calls}
        content.extend({"type": kind} for kind in sorted(kinds - {"text"}))
        content.extend(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            for call in calls.values()
        )
        message: dict[str, Any] = {
            "type": "message",
            "id": self._id,
            "model": self._model,
            "stop_reason": self.stop_reason,
            "stop_details": self._stop_details,
            "usage": dict(self._tokens),
            "content": content,
        }
        found = anthropic.diagnose(message, tools)
        if found is not None:
            found.result = None
        return found


__all__ = ["MessagesState"]
