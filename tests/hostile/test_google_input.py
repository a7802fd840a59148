"""Hostile input to the google adapter: exceptions, responses, results and streams that
must never make it raise (moved from ``tests/providers/test_google.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import errors

from normalize_errors._facade import diagnose, from_response, normalize
from normalize_errors.providers import google

from ..providers.test_google import AiohttpLikeResponse, info
from ..support import valid

# -- hostile input -----------------------------------------------------------------------------


class Explosive:
    """Every attribute read raises."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(f"no {name}")


class ExplosiveMapping(dict[str, Any]):
    """A mapping whose reads raise."""

    def get(self, key: str, default: Any = None) -> Any:
        raise RuntimeError("no")


HOSTILE: list[Any] = [
    None,
    "",
    "x" * 5_000_000,
    b"\xff\xfe\x00",
    b"{" * 100_000,
    "[" * 100_000,
    [],
    [None, 1, "x"],
    {"error": None},
    {"error": "text"},
    {"error": {"code": "abc", "status": 7, "message": ["not", "text"], "details": "no"}},
    {"error": {"code": 10**30, "status": "A" * 10_000, "details": [None, 1, {"@type": 5}]}},
    {"error": {"details": [{"@type": "x.QuotaFailure", "violations": [None, {"quotaId": 5}]}]}},
    {"error": {"details": [{"@type": "x.RetryInfo", "retryDelay": "-5s"}]}},
    {"error": {"details": [{"@type": "x.RetryInfo", "retryDelay": "1e309s"}]}},
    {
        "error": {
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "x.RetryInfo", "retryDelay": "999999999999s"}],
        }
    },
    {"error": {"errors": [None, {"reason": 5}], "code": 429}},
    json.loads("[" * 50 + "]" * 50),
]


@pytest.mark.parametrize("body", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("status", [None, 200, 429, 503, 999, "abc", -1])
def test_hostile_responses(body: Any, status: Any) -> None:
    """from_response never raises and always gives a valid error."""
    err = valid(google.from_response(status, {"retry-after": "x" * 10_000}, body))
    assert "bug" not in err.upstream, err.upstream
    valid(from_response(status, [("a", "b"), ("bad",)], body, provider="google"))
    google.looks_like(body)


@pytest.mark.parametrize(
    "value", [*HOSTILE, Explosive(), ExplosiveMapping(candidates=[1])], ids=range(len(HOSTILE) + 2)
)
def test_hostile_results_and_streams(value: Any) -> None:
    """diagnose and diagnose_stream never raise; whatever they return is valid."""
    for found in (
        diagnose(value, provider="google"),
        google.diagnose({"candidates": [value]}, None),
        google.diagnose(
            {"candidates": [{"content": {"parts": [value]}, "finishReason": value}]},
            [value] if isinstance(value, str) else None,
        ),
        google.diagnose_stream([value, {"candidates": value}], None),
    ):
        if found is not None:
            valid(found)
            if not isinstance(value, (Explosive, ExplosiveMapping)):
                assert "bug" not in found.upstream, found.upstream


@pytest.mark.parametrize(
    "attributes",
    [
        {"code": "abc", "details": 5, "response": Explosive()},
        {"code": None, "details": None, "response": None},
        {"code": 1011, "details": {"error": {"message": "Internal error encountered."}}},
        {"code": 429, "details": "not json", "response": AiohttpLikeResponse()},
        {"code": 429, "details": '{"error": {"status": "RESOURCE_EXHAUSTED"}}'},
        {"code": 400, "details": ["a", "b"], "status": 5, "message": object()},
        {"code": 10**12, "details": {"error": {"details": [info("X")] * 500}}},
    ],
)
def test_hostile_sdk_errors(attributes: dict[str, Any]) -> None:
    """APIError objects with missing or absurd attributes still give valid errors."""
    exc = errors.ClientError.__new__(errors.ClientError)
    for name, value in attributes.items():
        setattr(exc, name, value)
    err = valid(normalize(exc))
    assert err.upstream.get("provider") == "google"
    if not isinstance(attributes.get("response"), Explosive):
        assert "bug" not in err.upstream, err.upstream


class UnreadableEnum(str):
    """A str subclass (as SDK enums are) whose ``.value`` raises."""

    @property
    def value(self) -> str:
        raise RuntimeError("no value")


def test_an_enum_whose_value_raises_is_read_as_no_word() -> None:
    """A finish reason whose ``.value`` raises is no finish reason: an empty candidate is then
    an empty answer (``output.empty``), not a content filter and not a crash."""
    from enum import Enum

    class Finish(str, Enum):  # noqa: UP042 - as google-genai's enums are (str, Enum), not StrEnum
        SAFETY = "SAFETY"

    def result(finish: Any) -> dict[str, Any]:
        return {"candidates": [{"content": {"parts": []}, "finishReason": finish}]}

    assert valid(diagnose(result(Finish.SAFETY), provider="google")).code == (
        "policy.content_filtered"
    )
    err = valid(diagnose(result(UnreadableEnum("SAFETY")), provider="google"))
    assert err.code == "output.empty"


def test_looks_like_is_false_for_a_mapping_that_raises() -> None:
    assert google.looks_like(ExplosiveMapping()) is False
    assert google.looks_like([ExplosiveMapping()]) is False


def raised_in(module: str, name: str, depth: int = 0, frame_locals: Any = None) -> TypeError:
    """A TypeError raised by code whose frame claims ``module`` and function ``name``, under
    ``depth`` calls of the caller's own. Made by hand: the SDK's own crash is tested in
    tests/providers/test_google.py; these are the frames the adapter must not misread."""
    import sys

    code = compile("None + 1\n", f"<{module}>", "exec").replace(co_name=name)
    space: dict[str, Any] = {"__name__": module}

    def fail() -> None:
        exec(code, space, frame_locals if frame_locals is not None else {})

    def down(n: int) -> None:
        if n == 0:
            fail()
        else:
            down(n - 1)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, depth + 200))
    try:
        down(depth)
    except TypeError as exc:
        return exc
    finally:
        sys.setrecursionlimit(limit)
    raise AssertionError("no TypeError was raised")


class UnreadableLocals(dict[str, Any]):
    """Frame locals whose ``get`` raises."""

    def get(self, key: str, default: Any = None) -> Any:
        raise RuntimeError("locals cannot be read")


def test_a_type_error_is_the_sdks_only_from_its_raise_error_frame() -> None:
    """The adapter reads a TypeError as google-genai's crash on an error chunk only when the
    innermost frame is the SDK's ``raise_error*`` in ``google.genai.errors``: not another
    function of that module, not a frame deeper than any walk goes (``MAX_FRAMES``), and a
    frame whose locals cannot be read still gives the stream's failure (without the chunk)."""
    assert google.normalize(raised_in("google.genai.errors", "raise_error")) is not None
    assert google.normalize(raised_in("google.genai.errors", "_get_code")) is None
    from normalize_errors._base._safe_read import MAX_FRAMES

    deep = raised_in("google.genai.errors", "raise_error", depth=MAX_FRAMES + 50)
    assert google.normalize(deep) is None
    exc = raised_in("google.genai.errors", "raise_error", frame_locals=UnreadableLocals())
    err = google.normalize(exc)
    assert err is not None
    assert (valid(err).code, err.upstream["in_stream"]) == ("upstream.unavailable", True)
    assert err.upstream["exception"] == "builtins.TypeError"
