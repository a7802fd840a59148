"""Bedrock's stream protocols as state machines (see ``normalize_errors._reading._stream_state``).

* **ConverseStream** events (boto3 gives each as a dict of one member): ``messageStart``,
  per content block ``contentBlockStart`` (a tool use's name and id), ``contentBlockDelta``
  (``text``, a piece of a ``toolUse`` input, ``reasoningContent``) and ``contentBlockStop``,
  then ``messageStop`` with the ``stopReason`` (the terminal event) and ``metadata`` with
  usage and the guardrail ``trace``. An exception event given as data
  (``throttlingException``, ``modelStreamErrorException``, ...) is the stream's failure
  (botocore raises it).
* **InvokeModelWithResponseStream** events are ``chunk``s whose ``bytes`` are the model's
  own JSON: Anthropic's events for Claude (read by the Messages machine, see
  ``_anthropic_stream``), or a native body of another family (Cohere Command, Meta Llama,
  Mistral, Amazon Titan) whose stop reason ends it. Bedrock adds
  ``amazon-bedrock-invocationMetrics`` to the last chunk of every family (a terminal event
  too) and ``amazon-bedrock-guardrailAction`` where a guardrail acted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .._base import _provider_files
from .._base._safe_read import integer, text_of
from .._model._exceptions import HarnessError
from .._reading._rules import read_usage, stop_error
from .._reading._stream_state import StreamState
from . import bedrock
from ._anthropic_stream import MessagesState

_METRICS: Final = "amazon-bedrock-invocationMetrics"
_GUARDRAIL: Final = "amazon-bedrock-guardrailAction"


def _guarded() -> HarnessError:
    return stop_error(
        bedrock.NAME,
        "policy.guardrail_triggered",
        "guardrail_intervened",
        "A Bedrock guardrail intervened and replaced the output.",
    )


class ConverseState(StreamState):
    """The state of a ConverseStream (see the module doc)."""

    __slots__ = ("_text", "_trace")

    provider = bedrock.NAME
    api = "converse"
    ends_with = _provider_files.stream(bedrock.NAME, "converse")["ends_with"]
    knows_end = True

    def __init__(self, keep_text: int = 0) -> None:
        super().__init__(keep_text)
        self._text = False
        self._trace: Any = None

    def feed(self, event: Any) -> None:
        self.chunks += 1
        if type(event) is not dict:
            return
        for kind, body in event.items():
            if kind == "contentBlockDelta":
                self._delta(body)
            elif kind == "contentBlockStart":
                use = _get(_get(body, "start"), "toolUse")
                if use is not None:
                    index = integer(_get(body, "contentBlockIndex")) or 0
                    self.open_call(index, _get(use, "name"), _get(use, "toolUseId"))
            elif kind == "contentBlockStop":
                call = (self.calls or {}).get(integer(_get(body, "contentBlockIndex")) or 0)
                if call is not None:
                    self.close_call(call)
            elif kind == "messageStop":
                self.finish(text_of(_get(body, "stopReason")))
            elif kind == "metadata":
                usage, trace = _get(body, "usage"), _get(body, "trace")
                if usage is not None:
                    self.usage = usage
                if trace is not None:
                    self._trace = trace
            elif kind in bedrock._STREAM_ERRORS and self.failure is None:
                self.failure = bedrock._stream_error(kind, body)

    def _delta(self, body: Any) -> None:
        delta = _get(body, "delta")
        text = _get(delta, "text")
        if text:
            self.said(text)
            self._text = True
            return
        use = _get(delta, "toolUse")
        if use is not None:
            index = integer(_get(body, "contentBlockIndex")) or 0
            call = (self.calls or {}).get(index) or self.open_call(index, None, None)
            self.add_arguments(call, _get(use, "input"))
            return
        self.said(_get(_get(delta, "reasoningContent"), "text"))

    def usage_counts(self) -> dict[str, int]:
        return read_usage({"usage": self.usage}, bedrock._USAGE)

    def verdict(self, tools: Iterable[Any] | None) -> HarnessError | None:
        self.close_calls()
        content: list[dict[str, Any]] = [{"text": "…"}] if self._text else []
        content.extend(
            {"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments}}
            for call in (self.calls or {}).values()
        )
        result: dict[str, Any] = {
            "stopReason": self.stop_reason,
            "output": {"message": {"role": "assistant", "content": content}},
        }
        if self.usage is not None:
            result["usage"] = self.usage
        if self._trace is not None:
            result["trace"] = self._trace
        if not self.stop_reason:
            return None
        return bedrock.diagnose(result, tools)


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if type(obj) is dict else None


def _decoded(event: Any) -> Any:
    """The JSON inside an InvokeModelWithResponseStream ``chunk`` event, or ``None``."""
    return bedrock._chunk_json(event) if type(event) is dict else None


class InvokeMessagesState(MessagesState):
    """InvokeModelWithResponseStream for a Claude model: Anthropic's events in ``chunk``s."""

    __slots__ = ("_guardrail",)

    provider = bedrock.NAME
    api = "invoke"

    def __init__(self, keep_text: int = 0) -> None:
        super().__init__(keep_text)
        self._guardrail = False

    def feed(self, event: Any) -> None:
        data = _decoded(event)
        if type(data) is not dict:
            self.chunks += 1
            if type(event) is dict:
                for kind in bedrock._STREAM_ERRORS:
                    if kind in event and self.failure is None:
                        self.failure = bedrock._stream_error(kind, event[kind])
            return
        super().feed(data)
        if data.get(_GUARDRAIL) == "INTERVENED":
            self._guardrail = True
        if _METRICS in data:
            self.finish()

    def verdict(self, tools: Iterable[Any] | None) -> HarnessError | None:
        if self._guardrail:
            return _guarded()
        return super().verdict(tools)


_NATIVE_TEXT: Final = ("outputText", "generation", "text", "completion")


class InvokeNativeState(StreamState):
    """InvokeModelWithResponseStream for a model family with a body of its own: its text
    members are output, and the last chunk that states a stop reason is judged as
    ``bedrock.diagnose`` judges that family's InvokeModel body."""

    __slots__ = ("_guardrail", "_stopped")

    provider = bedrock.NAME
    api = "invoke"
    ends_with = f"a stop reason, or {_METRICS}"
    knows_end = True

    def __init__(self, keep_text: int = 0) -> None:
        super().__init__(keep_text)
        self._guardrail = False
        self._stopped: dict[str, Any] | None = None

    def feed(self, event: Any) -> None:
        self.chunks += 1
        data = _decoded(event)
        if type(data) is not dict:
            if type(event) is dict:
                for kind in bedrock._STREAM_ERRORS:
                    if kind in event and self.failure is None:
                        self.failure = bedrock._stream_error(kind, event[kind])
            return
        for name in _NATIVE_TEXT:
            self.said(data.get(name))
        for name in ("outputs", "generations", "results"):
            for output in data.get(name) or ():
                if type(output) is dict:
                    self.said(output.get("text") or output.get("outputText"))
        if data.get(_GUARDRAIL) == "INTERVENED":
            self._guardrail = True
        if bedrock._native_stop(data) is not None or _stated_stop(data):
            self._stopped = data
            self.finish()
        if _METRICS in data:
            self.finish()

    def verdict(self, tools: Iterable[Any] | None) -> HarnessError | None:
        if self._guardrail:
            return _guarded()
        if self._stopped is None:
            return None
        return bedrock.diagnose(self._stopped, tools)


def _stated_stop(data: dict[str, Any]) -> bool:
    """Whether a native chunk states a stop reason (any of its family's members)."""
    for body in bedrock._NATIVE_BODIES:
        if body.marker not in data:
            continue
        outputs = [data] if body.outputs is None else data.get(body.outputs) or ()
        return any(type(out) is dict and out.get(body.reason) for out in outputs)
    return False


def stream_state(first: Any, keep_text: int = 0) -> StreamState:
    """The state machine of a Bedrock stream, from its first event: a ``chunk`` of
    InvokeModelWithResponseStream (Claude's events or a native body), else ConverseStream."""
    if type(first) is dict and "chunk" in first:
        data = _decoded(first)
        if type(data) is dict and "type" in data:
            return InvokeMessagesState(keep_text)
        return InvokeNativeState(keep_text)
    return ConverseState(keep_text)


__all__ = ["ConverseState", "InvokeMessagesState", "InvokeNativeState", "stream_state"]
