"""OpenAI's stream protocols, one state machine each: chat (and legacy completions) chunks,
and Responses events (see ``normalize_errors._reading._stream_state`` for the shared interface).

* **Chat chunks** end with a ``finish_reason`` on every choice, and ``data: [DONE]``. An
  OpenAI-compatible server may leave out ``[DONE]`` (the finish reason is enough), send a
  last chunk with usage and no choices, open with Azure's ``prompt_filter_results`` chunk (no
  choices), or put an ``error`` member in a chunk (the SDK raises it; as JSON it is the
  stream's failure). A tool call's arguments come in pieces keyed by its ``index``; nothing
  closes a call, so they are checked at the end. ``chat.completions.stream()`` yields its
  own events: its ``chunk`` events carry the chunks. mistralai's events carry them as ``data``.
* **Responses events** end with ``response.completed``, ``response.incomplete`` or
  ``response.failed``, whose ``response`` is the whole result and is judged as one; an
  ``error`` event is the stream's failure. Text, refusal and reasoning deltas are output;
  a function call opens with ``response.output_item.added`` and closes with
  ``response.output_item.done`` (its arguments are counted, never kept: the final response
  states them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from ..._base import _provider_files
from ..._base._safe_read import sequence, text_of
from ..._model._exceptions import HarnessError
from ..._reading._rules import read_usage
from ..._reading._stream_state import StreamState, View, fold
from ._errors import NAME
from ._results import USAGE, _error_event, _from_error_object, diagnose

_MAX_CHOICES: Final = 16
_MAX_REFUSAL: Final = 4096


class _Choice:
    """One choice of a chat stream: whether content came, its refusal text (bounded), its
    finish reason and the chunk's choice that stated it."""

    __slots__ = ("choice", "content", "finish", "refusal")

    def __init__(self) -> None:
        self.content = False
        self.refusal = ""
        self.finish: str | None = None
        self.choice: Any = None


class ChatState(StreamState):
    """The state of a chat completions stream (see the module doc)."""

    __slots__ = ("_choices",)

    provider = NAME
    api = "chat"
    ends_with = _provider_files.stream(NAME, "chat")["ends_with"]
    knows_end = True

    def __init__(self, keep_text: int = 0) -> None:
        super().__init__(keep_text)
        self._choices: dict[int, _Choice] = {}

    def feed(self, chunk: Any) -> None:
        self.chunks += 1
        if type(chunk) is dict:
            error = chunk.get("error")
            if error and self.failure is None:
                body = error if isinstance(error, dict) else {"message": str(error)}
                self.failure = _from_error_object(body, in_stream=True)
            chunk = View(chunk)
        choices = getattr(chunk, "choices", None)
        if choices is None:
            # chat.completions.stream()'s ``chunk`` event, mistralai's ``data``
            chunk = getattr(chunk, "chunk", None) or getattr(chunk, "data", None)
            if chunk is None:
                return
            choices = getattr(chunk, "choices", None)
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage
        if type(choices) is list:
            for choice in choices:
                self._choice(choice)

    def _choice(self, choice: Any) -> None:
        index = getattr(choice, "index", 0)
        if type(index) is not int:
            index = 0
        slot = self._choices.get(index)
        if slot is None:
            if len(self._choices) >= _MAX_CHOICES:
                return
            slot = self._choices[index] = _Choice()
        delta = getattr(choice, "delta", None)
        if delta is not None:
            content = getattr(delta, "content", None)
            if content:
                self.said(content)
                slot.content = True
            refusal = getattr(delta, "refusal", None)
            if refusal and type(refusal) is str:
                self.said(refusal)
                slot.refusal = (slot.refusal + refusal)[:_MAX_REFUSAL]
            calls = getattr(delta, "tool_calls", None)
            if calls:
                self._calls(index, calls)
            legacy = getattr(delta, "function_call", None)
            if legacy is not None:
                call = self.open_call((index, "function_call"), getattr(legacy, "name", None), None)
                self.add_arguments(call, getattr(legacy, "arguments", None))
            extra = getattr(delta, "__pydantic_extra__", None)
            if extra:  # reasoning, as DeepSeek, vLLM and OpenRouter stream it
                self.said(extra.get("reasoning_content") or extra.get("reasoning"))
        else:  # a legacy completions chunk
            text = getattr(choice, "text", None)
            if text:
                self.said(text)
                slot.content = True
        finish = getattr(choice, "finish_reason", None)
        if finish:
            slot.finish = text_of(finish) or "unknown"
            slot.choice = choice
            if all(s.finish for s in self._choices.values()):
                self.finish(slot.finish)

    def _calls(self, index: int, calls: Any) -> None:
        for piece in sequence(calls):
            number = getattr(piece, "index", 0)
            function = getattr(piece, "function", None)
            name = getattr(function, "name", None) if function is not None else None
            key = (index, number if type(number) is int else 0)
            call = self.open_call(key, name, getattr(piece, "id", None))
            if function is not None:
                self.add_arguments(call, getattr(function, "arguments", None))

    def marked_done(self) -> None:
        if not self.terminal:
            self.finish()

    def usage_counts(self) -> dict[str, int]:
        return read_usage({"usage": self.usage}, USAGE) if self.usage is not None else {}

    def verdict(self, tools: Iterable[Any] | None) -> HarnessError | None:
        self.close_calls()
        choices = [self._folded(index, slot) for index, slot in self._choices.items()]
        found = diagnose({"choices": choices}, tools)
        if found is not None:
            found.result = None
        return found

    def _folded(self, index: int, slot: _Choice) -> dict[str, Any]:
        """One choice of the completion the stream adds up to (its text stands as ``…``)."""
        calls = [
            {"id": call.id, "function": {"name": call.name or "", "arguments": call.arguments}}
            for key, call in (self.calls or {}).items()
            if key[0] == index
        ]
        choice = slot.choice
        finish = slot.finish
        return {
            "index": index,
            "finish_reason": finish,
            "native_finish_reason": text_of(getattr(choice, "native_finish_reason", None))
            if finish == "error"
            else None,
            "content_filter_results": getattr(choice, "content_filter_results", None)
            if finish == "content_filter"
            else None,
            "message": {
                "content": "…" if slot.content else None,
                "refusal": slot.refusal or None,
                "tool_calls": calls or None,
            },
        }


class CompletionsState(ChatState):
    """The legacy completions stream (``completions.create(stream=True)``): chat's rules."""

    __slots__ = ()

    api = "completions"


_RESPONSES: Final = _provider_files.stream(NAME, "responses")
_TERMINAL: Final = frozenset(_RESPONSES["terminal_events"])
_CALL_ITEMS: Final = frozenset({"function_call", "custom_tool_call", "mcp_call"})
_ARGUMENTS: Final = frozenset(
    {
        "response.function_call_arguments.delta",
        "response.custom_tool_call_input.delta",
        "response.mcp_call_arguments.delta",
    }
)
_TEXT: Final = frozenset(
    {
        "response.output_text.delta",
        "response.refusal.delta",
        "response.reasoning_text.delta",
        "response.reasoning_summary_text.delta",
        "response.audio.transcript.delta",
        "response.code_interpreter_call_code.delta",
    }
)


class ResponsesState(StreamState):
    """The state of a Responses event stream (see the module doc)."""

    __slots__ = ("_final",)

    provider = NAME
    api = "responses"
    ends_with = _RESPONSES["ends_with"]
    knows_end = True

    def __init__(self, keep_text: int = 0) -> None:
        super().__init__(keep_text)
        self._final: Any = None

    def feed(self, event: Any) -> None:
        self.chunks += 1
        if type(event) is dict:
            event = View(event)
        kind = getattr(event, "type", None)
        if type(kind) is not str:
            return
        if kind in _TEXT:
            self.said(getattr(event, "delta", None))
        elif kind in _ARGUMENTS:
            index = getattr(event, "output_index", None)
            call = (self.calls or {}).get(index) or self.open_call(index, None, None, keep=False)
            self.add_arguments(call, getattr(event, "delta", None))
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = getattr(event, "item", None)
            if getattr(item, "type", None) in _CALL_ITEMS:
                index = getattr(event, "output_index", None)
                if kind.endswith(".added"):
                    name, call_id = getattr(item, "name", None), getattr(item, "call_id", None)
                    self.open_call(index, name, call_id, keep=False)
                else:
                    ended = (self.calls or {}).get(index)
                    if ended is not None:
                        self.close_call(ended)
        elif kind in _TERMINAL:
            final = self._final = getattr(event, "response", None)
            self.usage = getattr(final, "usage", None)
            self.finish(text_of(getattr(final, "status", None)) or kind.rpartition(".")[2])
        elif kind == "error":
            if self.failure is None:
                self.failure = _error_event(event._data if type(event) is View else event)
            self.finish("error")
        elif kind.endswith(".delta"):  # other output: audio, images, ...
            self.output_chars += 1
            if self.phase == "before_output":
                self.phase = "text"

    def usage_counts(self) -> dict[str, int]:
        return read_usage({"usage": self.usage}, USAGE) if self.usage is not None else {}

    def verdict(self, tools: Iterable[Any] | None) -> HarnessError | None:
        final = self._final
        if final is None:
            return None
        return diagnose(final._data if type(final) is View else final, tools)


def stream_state(first: Any, keep_text: int = 0) -> StreamState:
    """The state machine of the stream whose first chunk is ``first``: Responses events
    (a ``type`` of ``response.*`` or ``error``), else chat chunks (legacy completions
    by their ``object``)."""
    probe = View(first) if type(first) is dict else first
    try:
        kind = getattr(probe, "type", None)
        if type(kind) is str and (kind.startswith("response.") or kind == "error"):
            return ResponsesState(keep_text)
        if getattr(probe, "object", None) == "text_completion":
            return CompletionsState(keep_text)
    except Exception:  # a chunk that cannot be read: chat's rules, and the watch goes on
        pass
    return ChatState(keep_text)


def diagnose_stream(chunks: Iterable[Any], tools: Iterable[Any] | None) -> HarnessError | None:
    """The harness error a finished stream means: chat chunks or Responses events, each fed
    to its state machine (``stream_state``) and read at the end: an error the stream
    carried, the verdict of its stop reason when it ended whole (a chat stream's folded
    choices read like ``diagnose``; a Responses stream's final ``response``), else the cut
    (``upstream.invalid_response``)."""
    items = chunks if isinstance(chunks, list) else list(chunks)
    if not items:
        return None
    return fold(stream_state(items[0]), items, tools)  # type: ignore[no-any-return]


__all__ = ["ChatState", "CompletionsState", "ResponsesState", "diagnose_stream"]
