"""Hostile input to the anthropic adapter: exceptions, responses, results and streams that
must never make it raise (moved from ``tests/providers/test_anthropic.py``)."""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from normalize_errors import HarnessError
from normalize_errors._facade import diagnose, from_response, normalize
from normalize_errors.providers import anthropic as adapter_module

from ..providers.test_anthropic import answer, envelope, raised
from ..support import valid

# -- hostile input never raises ----------------------------------------------------------------


class _Boom:
    """An object whose every attribute access raises."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(name)

    def __iter__(self) -> Iterator[Any]:
        raise RuntimeError("iter")


class _Headers:
    def items(self) -> Any:
        raise RuntimeError("items")


def _hostile_exceptions() -> list[BaseException]:
    made: list[BaseException] = []
    for base_name in ("APIStatusError", "APIConnectionError", "APIError", "CredentialsError"):

        class Fake(Exception):
            pass

        Fake.__name__ = Fake.__qualname__ = base_name
        Fake.__module__ = "anthropic"
        for attrs in (
            {},
            {"status_code": "529", "body": b"\xff\xfe", "response": _Boom()},
            {"status_code": 10**12, "body": {"error": []}, "response": None},
            {"status_code": None, "body": {"error": {"message": {"nested": [1]}}}},
            {
                "status_code": 429,
                "body": [1, 2],
                "response": type("R", (), {"headers": _Headers()})(),
            },
            {"status_code": 400, "body": "x" * 100_000, "request": _Boom(), "type": 5},
            {"status_code": 200, "body": {"error": {"type": None, "details": "text"}}},
            {
                "status_code": 500,
                "body": {"type": "error", "error": {"details": {"error_code": 7}}},
            },
            {"status_code": True, "body": json.dumps({"a": [[[[[]]]]]}), "error_code": ["x"]},
        ):
            exc = Fake("hostile")
            for key, value in attrs.items():
                setattr(exc, key, value)
            made.append(exc)
    boom = type("APIStatusError", (Exception,), {"__module__": "anthropic"})
    trap = boom("x")
    trap.__class__ = type(
        "APIStatusError",
        (boom,),
        {
            "__module__": "anthropic",
            "status_code": property(lambda self: 1 / 0),
            "body": property(lambda self: 1 / 0),
        },
    )
    made.append(trap)
    return made


@pytest.mark.parametrize("exc", _hostile_exceptions(), ids=lambda e: type(e).__name__)
def test_hostile_exceptions_never_raise(exc: BaseException) -> None:
    """Odd attributes on SDK-named classes give a valid error, never an exception."""
    err = valid(normalize(exc))
    assert err.__cause__ is exc
    direct = adapter_module.normalize(exc)
    assert direct is None or isinstance(valid(direct), HarnessError)


ABSURD_BODIES: list[Any] = [
    None,
    b"",
    b"\x00\xff" * 100,
    "",
    "[" * 100_000 + "]" * 100_000,
    json.dumps({"type": "error", "error": {"type": "x" * 10_000, "message": "y" * 100_000}}),
    {"type": "error", "error": {"type": ["a"], "message": None, "details": {"error_code": None}}},
    {"type": "error", "error": {"message": 12, "details": []}, "request_id": 5},
    {"error": {"message": {"deep": {"er": [1, 2, 3]}}}},
    [{"error": "list body"}],
    12,
    "<html><title>" + "T" * 10_000 + "</title></html>",
    {"error": "just text"},
    {"message": "top-level message", "type": "weird"},
]


@pytest.mark.parametrize("body", ABSURD_BODIES, ids=range(len(ABSURD_BODIES)))
@pytest.mark.parametrize("status", [None, "abc", -1, 0, 200, 400, 429, 529, 999, 10**20])
def test_absurd_responses_never_raise(body: Any, status: Any) -> None:
    """``from_response`` answers anything with a valid error."""
    valid(adapter_module.from_response(status, {"retry-after": "soon"}, body))
    valid(from_response(status, [("x", "y"), ("bad",)], body, provider="anthropic"))


HOSTILE_RESULTS: list[Any] = [
    None,
    5,
    "message",
    [],
    _Boom(),
    {"stop_reason": 12, "content": "text"},
    {"stop_reason": "end_turn", "content": [None, 1, "x", {"type": None}]},
    {"stop_reason": "tool_use", "content": [{"type": "tool_use", "name": 5, "input": "{bad"}]},
    {"stop_reason": "refusal", "stop_details": "text"},
    {"stop_reason": "refusal", "stop_details": _Boom()},
    {"stop_reason": "max_tokens", "usage": {"input_tokens": "lots"}},
    {"type": "message", "content": _Boom()},
    {"stop_reason": "end_turn", "content": [{"type": "tool_use", "input": _Boom()}]},
]


@pytest.mark.parametrize("result", HOSTILE_RESULTS, ids=range(len(HOSTILE_RESULTS)))
def test_hostile_results_never_raise(result: Any) -> None:
    """``diagnose`` answers anything with ``None`` or a valid error.

    Offered ``tools`` that raise when read are the caller's bug: the adapter lets the error
    through and the facade's guard answers (its last-resort error), for a result it must
    check against them.
    """
    for tools in (None, [], [{"name": 3}], ["get_weather"], _Boom()):
        err = diagnose(result, provider="anthropic", tools=tools)
        assert err is None or isinstance(
            valid(err, last_resort=isinstance(tools, _Boom)), HarnessError
        )


HOSTILE_STREAMS: list[Any] = [
    [None, 1, "x", _Boom()],
    [{"type": "content_block_delta", "index": "x", "delta": {"type": "text_delta", "text": 5}}],
    [{"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta"}}],
    [{"type": "message_start", "message": _Boom()}, {"type": "message_delta", "delta": None}],
    [{"type": "message_start", "message": {"content": "nope"}}, {"type": "message_stop"}],
    [{"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_details": [1]}}],
    [{"type": "error"}],
    [{"type": "error", "error": "text"}],
    [_Boom()],
]


@pytest.mark.parametrize("chunks", HOSTILE_STREAMS, ids=range(len(HOSTILE_STREAMS)))
def test_hostile_streams_never_raise(chunks: Any) -> None:
    """``diagnose_stream`` answers odd events with ``None`` or a valid error."""
    err = adapter_module.diagnose_stream(chunks, [{"name": "get_weather"}])
    assert err is None or isinstance(valid(err), HarnessError)


def test_what_cannot_be_iterated_is_no_stream() -> None:
    """Not a sequence of events at all (a number, an object whose ``__iter__`` raises): no
    answer, rather than an exception."""

    class Unlistable:
        def __iter__(self) -> Any:
            raise RuntimeError("no events")

    assert adapter_module.diagnose_stream(5, None) is None  # type: ignore[arg-type]
    assert adapter_module.diagnose_stream(Unlistable(), None) is None


def test_normalized_errors_pickle() -> None:
    """An error read from a real SDK exception pickles with its members and its cause.

    Before ``AnthropicError`` had its own ``__reduce__`` (0.x), the SDK's status exceptions
    pickle but cannot be unpickled (their ``__init__`` wants ``response`` and ``body``); the
    harness error then carries a copy of the cause rebuilt without calling ``__init__``.
    """
    exc = raised(answer(529, envelope("overloaded_error", "Overloaded")))
    err = valid(normalize(exc))
    if "__reduce__" not in vars(anthropic.AnthropicError):
        with pytest.raises(TypeError):
            pickle.loads(pickle.dumps(exc))
    again = pickle.loads(pickle.dumps(err))
    assert (again.code, again.upstream) == (err.code, err.upstream)
    assert again.retryable is True
    assert type(again.__cause__) is type(exc)
    assert again.__cause__.status_code == 529  # type: ignore[attr-defined]
