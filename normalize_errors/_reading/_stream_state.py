"""What a stream has delivered so far: one small state machine per wire protocol.

Each provider module makes the machine of its protocols (``stream_state(first, keep_text)``:
OpenAI chat chunks and Responses events, Anthropic message events, Gemini chunks, Bedrock's
ConverseStream and InvokeModelWithResponseStream events, Cohere's events); a watched
stream feeds it every chunk the caller receives, one at a time (``feed``), and asks it at
the end what the stream means (``end``). This module holds what they share: ``StreamState``,
the interface and the state every protocol keeps, in constant memory:

* ``chunks``: how many chunks (or events) reached the caller;
* ``output_chars``: how many characters of output reached the caller (text, refusals,
  reasoning, tool-call names and arguments);
* ``phase``: ``before_output``, ``text`` (output has begun, no tool call is open),
  ``tool_call`` (inside a tool call's arguments) or ``done`` (after the terminal event);
* ``terminal``: whether the protocol's terminal event came (OpenAI's ``finish_reason`` or
  ``[DONE]``, ``response.completed``, Anthropic's stop reason, Gemini's ``finishReason``, ...);
* ``stop_reason`` and ``usage``, as the stream stated them;
* the tool calls, whose argument text is kept only while a call is in flight and within
  ``MAX_ARGUMENTS`` characters: a call that ends is checked at once and keeps no text unless
  it is broken;
* the output text itself, only when the caller asked for it (``keep_text`` bytes, at most
  ``MAX_KEPT_TEXT``).

A stream that ends without its terminal event after its first chunk was cut: ``end`` gives
``upstream.invalid_response`` (``cut``), whatever the last chunk was, a tool call's broken
arguments included (the transport lost them; the model did not make them). A whole stream
is judged by its stop reason as its non-stream result would be (``verdict``). Every error
``end`` gives carries ``summary()`` as ``upstream["stream"]`` (``HarnessError.stream``).
"""

from __future__ import annotations

import json

from .._model._code_classes import class_for_code
from .._model._exceptions import HarnessError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, ClassVar, Final

__all__ = [
    "BEFORE_OUTPUT",
    "DONE",
    "DONE_MARK",
    "MAX_ARGUMENTS",
    "MAX_CALLS",
    "MAX_KEPT_TEXT",
    "TEXT",
    "TOOL_CALL",
    "Call",
    "StreamState",
    "View",
    "delivered_output",
    "fold",
    "with_summary",
]

BEFORE_OUTPUT: Final = "before_output"
TEXT: Final = "text"
TOOL_CALL: Final = "tool_call"
DONE: Final = "done"

MAX_ARGUMENTS: Final = 1 << 20
"""Most characters of tool-call arguments held at once (the calls in flight, and the broken
ones); past it a call's arguments are no longer kept, and not checked."""
MAX_CALLS: Final = 256
"""Most tool calls of one stream checked at its end; later ones are counted, not checked."""
MAX_KEPT_TEXT: Final = 4096
"""The most bytes of output text a caller may ask a failed stream's error to keep."""


class _DoneMark:
    """``DONE_MARK``: a recorded stream's ``data: [DONE]`` line, given to ``fold``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DONE_MARK"


DONE_MARK: Final = _DoneMark()
"""Stands for ``data: [DONE]`` in a list of chunks (the SDKs do not yield it)."""


class View:
    """A chunk given as JSON (a dict) read as the SDK's object is: ``view.member``.

    A missing member is ``None``; a snake_case name also finds its camelCase spelling
    (Gemini's REST JSON); nested dicts are views too. ``__pydantic_extra__`` is the dict
    itself, as a model's extra members are."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[Any, Any]) -> None:
        self._data = data

    @property
    def __pydantic_extra__(self) -> dict[Any, Any]:
        return self._data

    def __getattr__(self, name: str) -> Any:
        data = self._data
        value = data.get(name)
        if value is None and "_" in name:
            head, *rest = name.split("_")
            value = data.get(head + "".join(part.title() for part in rest))
        return _viewed(value)


def _viewed(value: Any) -> Any:
    if type(value) is dict:
        return View(value)
    if type(value) is list:
        return [View(item) if type(item) is dict else item for item in value]
    return value


class Call:
    """One tool call of a stream: its name and id, and its arguments.

    ``pieces`` holds the argument text while the call is in flight (``None`` once it is over
    ``MAX_ARGUMENTS``); once it ends, ``arguments`` is ``{}`` for arguments that are one JSON
    object (nothing of them is kept), else their text (the broken ones, for the check), or
    ``None`` when they were not kept."""

    __slots__ = ("arguments", "chars", "id", "name", "pieces")

    def __init__(self, name: str | None, call_id: str | None) -> None:
        self.name = name
        self.id = call_id
        self.pieces: list[str] | None = []
        self.chars = 0
        self.arguments: Any = None


class StreamState:
    """The state of one stream; the base of every protocol's machine.

    This class itself is the machine of a stream of no known protocol (bytes, text, lines,
    events of a provider this library does not read): every chunk is output, and nothing says
    whether it ended whole (``knows_end`` is false: ``end`` never calls it cut). A protocol's
    machine overrides ``feed`` (count the chunk, then read it), ``verdict`` (what a whole
    stream's stop reason means) and ``marked_done`` (a ``[DONE]`` line, where the protocol
    sends one), and sets the class members below.
    """

    __slots__ = (
        "_held",
        "_kept",
        "_kept_bytes",
        "_open",
        "calls",
        "chunks",
        "failure",
        "keep_text",
        "output_chars",
        "phase",
        "stop_reason",
        "terminal",
        "usage",
    )

    provider: ClassVar[str] = "upstream"
    """The provider name its errors report."""
    api: ClassVar[str] = "stream"
    """The protocol's name in the summary (``chat``, ``responses``, ``messages``, ...)."""
    ends_with: ClassVar[str] = ""
    """The terminal event, in words, for the cut error's ``detail``."""
    knows_end: ClassVar[bool] = False
    """Whether the protocol has a terminal event (a stream without it was cut)."""

    def __init__(self, keep_text: int = 0) -> None:
        self.chunks = 0
        self.output_chars = 0
        self.phase = BEFORE_OUTPUT
        self.terminal = False
        self.stop_reason: str | None = None
        self.usage: Any = None
        self.failure: HarnessError | None = None
        """An error the stream carried as data (an error event the SDK yielded)."""
        self.calls: dict[Any, Call] | None = None
        self._open: Call | None = None
        self._held = 0
        self.keep_text = min(max(int(keep_text), 0), MAX_KEPT_TEXT)
        self._kept: list[str] | None = [] if self.keep_text else None
        self._kept_bytes = 0

    # -- reading chunks (a protocol overrides feed) -------------------------------------------

    def feed(self, chunk: Any) -> None:
        """Read one chunk the caller receives. Here (no known protocol) every chunk is output:
        text and bytes count their length, anything else one character."""
        self.chunks += 1
        if isinstance(chunk, (str, bytes, bytearray)):
            self.output_chars += len(chunk)
        else:
            self.output_chars += 1
        if self.phase == BEFORE_OUTPUT:
            self.phase = TEXT

    def said(self, text: Any) -> None:
        """Output text reached the caller (a text, refusal or reasoning delta)."""
        if type(text) is not str or not text:
            return
        self.output_chars += len(text)
        if self.phase == BEFORE_OUTPUT:
            self.phase = TEXT
        if self._kept is not None:
            self._keep(text)

    def _keep(self, text: str) -> None:
        room = self.keep_text - self._kept_bytes
        if room <= 0 or self._kept is None:
            return
        data = text.encode("utf-8", "replace")[:room]
        piece = data.decode("utf-8", "ignore")  # a character cut at the cap is left out
        self._kept.append(piece)
        self._kept_bytes += len(data)

    def open_call(self, key: Any, name: Any, call_id: Any, *, keep: bool = True) -> Call:
        """A tool call began (``key`` names it among the stream's calls). ``keep=False``: its
        arguments are counted, never held (the protocol states the finished call itself)."""
        calls = self.calls
        if calls is None:
            calls = self.calls = {}
        call = calls.get(key)
        if call is None:
            call = Call(name if isinstance(name, str) else None, None)
            if not keep:
                call.pieces = None
            if len(calls) < MAX_CALLS:
                calls[key] = call
        elif isinstance(name, str) and name:
            call.name = (call.name or "") + name  # a name given in pieces (OpenAI chat)
        if isinstance(call_id, str) and call_id and call.id is None:
            call.id = call_id
        if isinstance(name, str):
            self.output_chars += len(name)
        self._open = call
        if self.phase != DONE:
            self.phase = TOOL_CALL
        return call

    def add_arguments(self, call: Call, piece: Any) -> None:
        """A piece of a tool call's argument text reached the caller."""
        if type(piece) is not str or not piece:
            return
        self.output_chars += len(piece)
        call.chars += len(piece)
        pieces = call.pieces
        if pieces is not None:
            if self._held + len(piece) > MAX_ARGUMENTS:
                self._held -= sum(len(p) for p in pieces)
                call.pieces = None
            else:
                pieces.append(piece)
                self._held += len(piece)

    def close_call(self, call: Call) -> None:
        """A tool call ended: its arguments are checked now, and kept only when broken."""
        pieces = call.pieces
        if pieces is not None:
            text = "".join(pieces)
            call.pieces = None
            self._held -= len(text)
            call.arguments = {} if _one_object(text) else text
            if call.arguments != {}:
                self._held += len(text)
        if self._open is call:
            self._open = None
            if self.phase == TOOL_CALL:
                self.phase = TEXT

    def close_calls(self) -> None:
        """End every tool call still open (where the protocol closes none of them itself)."""
        for call in (self.calls or {}).values():
            if call.pieces is not None:
                self.close_call(call)

    def finish(self, reason: Any = None) -> None:
        """The terminal event came (with its stop reason, where it states one)."""
        if isinstance(reason, str) and reason:
            self.stop_reason = reason
        self.terminal = True
        self._open = None
        self.phase = DONE

    def marked_done(self) -> None:
        """A ``data: [DONE]`` line came: the end of a stream of the protocols that send one."""

    # -- the end ------------------------------------------------------------------------------

    def end(self, tools: Iterable[Any] | None = None) -> HarnessError | None:
        """What the stream means once it has ended: an error it carried, the verdict of its
        stop reason when it ended whole, the cut when it did not; ``None`` when nothing is
        wrong (and for a stream with no chunk: the watch decides that case). The error
        carries ``summary()`` as ``upstream["stream"]``."""
        if self.failure is not None:
            return with_summary(self.failure, self)
        if not self.chunks:
            return None
        if self.terminal:
            found = self.verdict(tools)
            return None if found is None else with_summary(found, self)
        if not self.knows_end:
            return None
        return self.cut()

    def verdict(self, tools: Iterable[Any] | None) -> HarnessError | None:
        """What a whole stream's stop reason means, as its non-stream result would."""
        return None

    def cut(self) -> HarnessError:
        """``upstream.invalid_response`` for a stream that ended before its terminal event."""
        summary = self.summary()
        chunks, chars = self.chunks, self.output_chars
        where = ""
        if self.phase == TOOL_CALL:
            call = self._open
            named = f" {call.name!r}" if call is not None and call.name else ""
            where = f", inside the tool call{named}"
        elif self.phase == BEFORE_OUTPUT:
            where = ", before any output"
        awaited = f" ({self.ends_with})" if self.ends_with else ""
        return class_for_code("upstream.invalid_response")(
            f"{self.provider}: the stream ended before its terminal event{awaited}: "
            f"{chunks} chunk{'' if chunks == 1 else 's'} and {chars} character"
            f"{'' if chars == 1 else 's'} of output had reached the caller{where}.",
            upstream={"provider": self.provider, "in_stream": True, "stream": summary},
        )

    def summary(self) -> dict[str, Any]:
        """The stream's state as JSON (``HarnessError.stream``): ``api``, ``chunks``,
        ``phase``, ``output_chars``, ``terminal``, and where known ``stop_reason``,
        ``tool_call`` (the call in flight: ``name``, ``id``, ``arguments_chars``), ``usage``
        and ``text`` (the output so far, only when the caller asked for it)."""
        out: dict[str, Any] = {
            "api": self.api,
            "chunks": self.chunks,
            "phase": self.phase,
            "output_chars": self.output_chars,
            "terminal": self.terminal,
        }
        if self.stop_reason is not None:
            out["stop_reason"] = self.stop_reason
        call = self._open
        if call is not None and self.phase == TOOL_CALL:
            out["tool_call"] = {"name": call.name, "id": call.id, "arguments_chars": call.chars}
        usage = self.usage_counts()
        if usage:
            out["usage"] = usage
        if self._kept is not None:
            out["text"] = "".join(self._kept)
        return out

    def usage_counts(self) -> dict[str, int]:
        """The token counts the stream stated (a protocol reads its own ``usage``)."""
        return {}


def _one_object(text: str) -> bool:
    """Whether ``text`` is one JSON object (or nothing: no arguments)."""
    if not text.strip():
        return True
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def with_summary(err: HarnessError, state: StreamState | None) -> HarnessError:
    """``err`` with the stream's summary as ``upstream["stream"]`` (on its harness view);
    a stream with no chunk yet has the summary of a fresh state."""
    problem = err.problem
    summary = (state or StreamState()).summary()
    problem.upstream = {**problem.upstream, "stream": summary}
    return err


def delivered_output(err: BaseException) -> int | None:
    """How much output a failed stream delivered before ``err`` (characters, or chunks for a
    stream whose output is not counted in characters), from ``upstream["stream"]``; ``0``
    for a stream that delivered none; ``None`` when ``err`` is no stream's error."""
    problem = getattr(err, "problem", None)
    summary = getattr(problem, "upstream", {}).get("stream") if problem is not None else None
    if not isinstance(summary, dict):
        return None
    chars = summary.get("output_chars")
    phase = summary.get("phase")
    if type(chars) is int and chars > 0:
        return chars
    if phase in (TEXT, TOOL_CALL):
        chunks = summary.get("chunks")
        return chunks if type(chunks) is int and chunks > 0 else 1
    return 0


def fold(state: StreamState, chunks: Iterable[Any], tools: Iterable[Any] | None) -> Any:
    """``state`` fed every chunk of ``chunks``, then its end: ``diagnose_stream`` of a list."""
    for chunk in chunks:
        if chunk is DONE_MARK:
            state.marked_done()
            continue
        try:
            state.feed(chunk)
        except Exception:  # a chunk that cannot be read is counted, and the fold goes on
            continue
    return state.end(tools)
