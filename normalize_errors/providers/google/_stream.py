"""Gemini's stream protocol as a state machine (see ``normalize_errors._reading._stream_state``).

``generate_content_stream`` (and ``streamGenerateContent?alt=sse``) sends
``GenerateContentResponse`` chunks; each candidate's last chunk states its ``finishReason``,
which is the terminal event (there is no ``[DONE]``), and a blocked prompt ends the stream
with ``promptFeedback.blockReason`` and no candidate. Text parts are output (thought parts
too, though they are no usable answer on their own), function calls come whole in a part,
and usage rides on the chunks (the last one has it all). An ``{"error": ...}`` chunk given
as JSON is the stream's failure (the SDK raises it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from ..._base import _provider_files
from ..._base._safe_read import integer
from ..._model._exceptions import HarnessError
from ..._reading._rules import read_usage
from ..._reading._stream_state import StreamState, View, fold
from ._errors import NAME, _word
from ._results import USAGE, _diagnose, _error_chunk

_MAX_CANDIDATES: Final = 16
_USABLE: Final = ("inline_data", "file_data", "executable_code", "code_execution_result")


class _Candidate:
    """One candidate of a stream: its finish reason and message, its last safety ratings,
    and whether it produced usable output."""

    __slots__ = ("finish", "message", "ratings", "usable")

    def __init__(self) -> None:
        self.finish: str | None = None
        self.message: str | None = None
        self.ratings: Any = None
        self.usable = False


class GeminiState(StreamState):
    """The state of a Gemini stream (see the module doc)."""

    __slots__ = ("_candidates", "_feedback", "_ids")

    provider = NAME
    api = "gemini"
    ends_with = _provider_files.stream(NAME, "gemini")["ends_with"]
    knows_end = True

    def __init__(self, keep_text: int = 0) -> None:
        super().__init__(keep_text)
        self._candidates: dict[int, _Candidate] = {}
        self._feedback: Any = None
        self._ids: dict[str, str] = {}

    def feed(self, chunk: Any) -> None:
        self.chunks += 1
        if type(chunk) is dict:
            if isinstance(chunk.get("error"), dict):
                if self.failure is None:
                    self.failure = _error_chunk(chunk)
                return
            chunk = View(chunk)
        feedback = getattr(chunk, "prompt_feedback", None)
        if feedback is not None:
            blocked = _word(getattr(feedback, "block_reason", None))
            if self._feedback is None or blocked:
                self._feedback = feedback
            if blocked and blocked != "BLOCKED_REASON_UNSPECIFIED":
                self.finish(blocked)
        usage = getattr(chunk, "usage_metadata", None)
        if usage is not None:
            self.usage = usage
        if not self._ids:
            for snake, camel in (("response_id", "responseId"), ("model_version", "modelVersion")):
                value = _word(getattr(chunk, snake, None))
                if value:
                    self._ids[camel] = value
        candidates = getattr(chunk, "candidates", None)
        if type(candidates) is list:
            for position, candidate in enumerate(candidates[:_MAX_CANDIDATES]):
                self._candidate(position, candidate)

    def _candidate(self, position: int, candidate: Any) -> None:
        index = integer(getattr(candidate, "index", None))
        index = position if index is None else index
        slot = self._candidates.get(index)
        if slot is None:
            if len(self._candidates) >= _MAX_CANDIDATES:
                return
            slot = self._candidates[index] = _Candidate()
        content = getattr(candidate, "content", None)
        parts = getattr(content, "parts", None) if content is not None else None
        if type(parts) is list:
            for part in parts:
                self._part(index, slot, part)
        ratings = getattr(candidate, "safety_ratings", None)
        if ratings is not None:
            slot.ratings = ratings
        finish = getattr(candidate, "finish_reason", None)
        if finish is not None:
            slot.finish = _word(finish) or "unknown"
            slot.message = _word(getattr(candidate, "finish_message", None))
            if all(s.finish for s in self._candidates.values()):
                self.finish(slot.finish)

    def _part(self, index: int, slot: _Candidate, part: Any) -> None:
        text = getattr(part, "text", None)
        if text:
            self.said(text)
            if getattr(part, "thought", None) is not True and type(text) is str:
                slot.usable = True
            return
        call = getattr(part, "function_call", None)
        if call is not None:
            slot.usable = True
            key = (index, len(self.calls or {}))
            found = self.open_call(key, getattr(call, "name", None), getattr(call, "id", None))
            args = getattr(call, "args", None)
            found.pieces = None
            found.arguments = {} if args is None or isinstance(args, (dict, View)) else args
            self.close_call(found)
            return
        if any(getattr(part, name, None) is not None for name in _USABLE):
            slot.usable = True
            self.output_chars += 1
            if self.phase == "before_output":
                self.phase = "text"

    def usage_counts(self) -> dict[str, int]:
        return read_usage({"usageMetadata": self.usage}, USAGE) if self.usage is not None else {}

    def verdict(self, tools: Iterable[Any] | None) -> HarnessError | None:
        calls = self.calls or {}
        candidates = []
        for index, slot in sorted(self._candidates.items()):
            parts: list[dict[str, Any]] = [{"text": "…"}] if slot.usable else []
            parts.extend(
                {"functionCall": {"name": call.name, "args": call.arguments, "id": call.id}}
                for key, call in calls.items()
                if key[0] == index
            )
            candidates.append(
                {
                    "finishReason": slot.finish,
                    "finishMessage": slot.message,
                    "safetyRatings": slot.ratings,
                    "content": {"parts": parts},
                }
            )
        folded = {
            "promptFeedback": self._feedback,
            "usageMetadata": self.usage,
            **self._ids,
            "candidates": candidates,
        }
        found = _diagnose(folded, tools)
        if found is not None:
            found.result = None
        return found


def stream_state(first: Any, keep_text: int = 0) -> StreamState:
    """The state machine of a Gemini stream."""
    return GeminiState(keep_text)


def diagnose_stream(chunks: Iterable[Any], tools: Iterable[Any] | None) -> HarnessError | None:
    """``diagnose_stream`` without its guard: every chunk fed to the stream's machine."""
    items = list(chunks)
    if not items:
        return None
    return fold(GeminiState(), items, tools)  # type: ignore[no-any-return]


__all__ = ["GeminiState", "diagnose_stream", "stream_state"]
