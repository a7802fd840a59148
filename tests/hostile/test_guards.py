"""The never-raise guards of the binding readers answer a bug of their own.

Each reader wraps its work in a guard: whatever goes wrong inside becomes the library's own
``harness.internal_error`` naming the bug's class, never an exception in the caller's error
path. The hostile suite checks that no input reaches a guard (``valid`` fails on its
answer); these tests make the inside fail on purpose and check the answer.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

from ..support import valid

READERS: list[tuple[str, str, Callable[[Any], Any]]] = [
    ("site", "parse_body", lambda m: m.from_site_error(429, {}, b'{"error": {"code": "x"}}')),
    ("uhp", "lower_headers", lambda m: m.from_envelope(429, {}, b"{}")),
    ("a2a", "_from_task", lambda m: m.from_task({"status": {"state": "failed"}})),
    ("jsonrpc", "_from_jsonrpc", lambda m: m.from_jsonrpc({"code": -32603, "message": "x"})),
    ("mcp", "_from_tool_result", lambda m: m.from_tool_result({"isError": True})),
]


@pytest.mark.parametrize(("binding", "inner", "read"), READERS, ids=[r[0] for r in READERS])
def test_a_bug_inside_a_reader_is_its_internal_error(
    binding: str, inner: str, read: Callable[[Any], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader returns ``harness.internal_error`` (not retryable) naming the bug's class."""
    module = importlib.import_module(f"normalize_errors.bindings.{binding}")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(module, inner, broken)
    err = valid(read(module), last_resort=True)
    assert (err.code, err.retryable) == ("harness.internal_error", False)
    detail = err.detail or ""
    assert detail.startswith("normalize-errors could not read")
    assert "(ZeroDivisionError)" in detail


ENTRY_POINTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("_normalize", lambda m: m.normalize(RuntimeError("boom"))),
    ("_read_problem", lambda m: m.from_response(500, {}, b'{"error": {"message": "x"}}')),
    ("_routing", lambda m: m.diagnose_stream([{"choices": []}], provider="openai")),
]


@pytest.mark.parametrize(("inner", "read"), ENTRY_POINTS, ids=[e[0] for e in ENTRY_POINTS])
def test_a_bug_inside_an_entry_point_is_its_internal_error(
    inner: str, read: Callable[[Any], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``normalize``, ``from_response`` and ``diagnose_stream`` answer a bug of the library
    (here made on purpose) with ``harness.internal_error`` naming it, never an exception."""
    from normalize_errors import _facade

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(_facade, inner, broken)
    err = valid(read(_facade), last_resort=True)
    assert (err.code, err.retryable) == ("harness.internal_error", False)
    assert (err.detail or "").startswith("normalize-errors could not read")
    assert "(ZeroDivisionError)" in (err.detail or "")


GOOGLE: list[tuple[str, Callable[[Any], Any]]] = [
    ("_normalize", lambda g: g.normalize(RuntimeError("boom"))),
    ("_from_response", lambda g: g.from_response(429, {}, b"{}")),
    ("_diagnose", lambda g: g.diagnose({"candidates": []}, None)),
    ("_diagnose_stream", lambda g: g.diagnose_stream([{"candidates": []}], None)),
]


@pytest.mark.parametrize(("inner", "read"), GOOGLE, ids=[e[0] for e in GOOGLE])
def test_a_bug_inside_the_google_adapter_is_its_internal_error(
    inner: str, read: Callable[[Any], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The google adapter's own guards answer a bug inside it the same way."""
    from normalize_errors.providers import google

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(google, inner, broken)
    err = valid(read(google), last_resort=True)
    assert (err.code, err.retryable) == ("harness.internal_error", False)
    assert (err.detail or "").startswith("normalize-errors could not read")
    assert err.upstream["bug"] == "ZeroDivisionError"


def test_a_bug_reading_a_response_without_a_status_names_no_status(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The last-resort answer of ``from_response`` keeps the status only when there is one
    (a status that is no number is left out), and a redacted piece of the body."""
    from normalize_errors import _facade

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(_facade, "respond", broken)
    err = valid(_facade.from_response("not a status", {}, b"upstream said no"), last_resort=True)
    assert err.code == "harness.internal_error"
    assert err.upstream == {"provider": "http", "body": "upstream said no"}
    with_status = valid(_facade.from_response(502, {}, b"x", provider="openai"), last_resort=True)
    assert with_status.upstream == {"provider": "openai", "status": 502, "body": "x"}


def test_messages_say_what_was_given_with_the_right_article(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``normalize()`` of a wrong type says "given an int" (not "a int"), names None and a
    class as what they are, and never quotes the value (a string given may be a key); the
    google adapter's guard and the cassette reader's messages follow the same rule."""
    from normalize_errors import normalize
    from normalize_errors._wrapping._cassette import _kind
    from normalize_errors.providers import google

    given: Any = 42
    assert normalize(given).detail == "normalize() was given an int, not an exception."
    given = None
    assert normalize(given).detail == "normalize() was given None, not an exception."
    given = ValueError
    assert normalize(given).detail == (
        "normalize() was given the class builtins.ValueError, not an exception."
    )
    given = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    assert normalize(given).detail == "normalize() was given a str, not an exception."
    given = importlib
    assert (
        normalize(given).detail == "normalize() was given the module importlib, not an exception."
    )

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(google, "_normalize", broken)
    err = google.normalize(OSError("boom"))
    assert err is not None
    assert (err.detail or "").startswith("normalize-errors could not read an OSError (")
    assert (_kind(1.5), _kind(object()), _kind([1])) == ("a float", "an object", "a list")
