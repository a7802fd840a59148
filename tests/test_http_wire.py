"""The wire readers (`_http_wire`): headers, retry hints, durations, bodies, HTML titles."""

from __future__ import annotations

import pytest

from normalize_errors._base._http_wire import (
    MAX_JSON,
    body_text,
    html_title,
    lower_headers,
    parse_body,
    parse_duration,
    retry_after,
    stainless_retry_count,
    stream_error,
)
from normalize_errors._base._safe_read import text_of

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "20"}, 20.0),
        ({"retry-after": " 1.5 "}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "abc", "retry-after": "9"}, 9.0),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:50 GMT"}, 30.0),
        ({"retry-after": "Tue, 14 Nov 2023 22:00:00 GMT"}, 0.0),
        ({"retry-after": "abc"}, None),
        ({"retry-after": "-5"}, None),
        ({"retry-after": "NaN"}, None),
        ({"retry-after": "1e309"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "99999999999999999999"}, None),
        ({"retry-after": ""}, None),
        ({}, None),
    ],
)
def test_retry_after(headers: dict[str, str], expected: float | None) -> None:
    """retry-after-ms wins; delta-seconds or HTTP-date; nonsense is ignored."""
    assert retry_after(headers, now=NOW) == expected


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("7s", 7.0),
        ("1.5s", 1.5),
        ("6m0s", 360.0),
        ("120ms", 0.12),
        ("1h2m3s", 3723.0),
        ("0s", 0.0),
        ("s", None),
        ("7", None),
        ("7x", None),
        ("", None),
        (None, None),
        ("1s2", None),
        ("-1s", None),
    ],
)
def test_parse_duration(text: str | None, seconds: float | None) -> None:
    """Protobuf Duration and rate-limit reset strings."""
    assert parse_duration(text) == seconds


def test_lower_headers_accepts_every_shape() -> None:
    """Mappings, pairs, vcrpy lists, bytes; hostile objects give what could be read."""
    assert lower_headers({"Retry-After": "1"}) == {"retry-after": "1"}
    assert lower_headers([("X-A", "1"), (b"X-B", b"2")]) == {"x-a": "1", "x-b": "2"}
    assert lower_headers({"X-A": ["1", "2"]}) == {"x-a": "1"}
    assert lower_headers(None) == {}
    assert lower_headers(42) == {}
    assert lower_headers([("only-one",), (1, 2)]) == {}


def test_parse_body() -> None:
    """JSON of any shape or None; never an exception."""
    assert parse_body('{"a": 1}') == {"a": 1}
    assert parse_body(b'[{"error": {}}]') == [{"error": {}}]
    assert parse_body({"a": 1}) == {"a": 1}
    for bad in [None, "", "<html>", b"\xff", "{", "[" * 10_000, 3, "x" * 10]:
        assert parse_body(bad) is None
    # bytes that open like JSON but are not UTF-8 (a Latin-1 "é" inside): not JSON, not a crash
    assert parse_body(b'{"error": {"message": "r\xe9essayez"}}') is None
    assert parse_body(bytearray(b'{"a": 1}')) == {"a": 1}


def test_html_title() -> None:
    """The page's title (or h1), never the page; None when it is not HTML."""
    page = "<html><head><title>api.openai.com | 502: Bad gateway</title></head><body>x</body>"
    assert html_title(page) == "api.openai.com | 502: Bad gateway"
    assert html_title("<html><body><h1>504 Gateway Time-out</h1></body></html>") == (
        "504 Gateway Time-out"
    )
    assert html_title("plain text") is None
    assert html_title("<html><body>no title</body></html>") == ""


def test_headers_past_the_first_256_are_not_read() -> None:
    pairs = [(f"x-h{i}", str(i)) for i in range(300)]
    assert len(lower_headers(pairs)) == 256
    assert "x-h299" not in lower_headers(pairs)


class Exploding:
    """An object whose every attribute read raises (what a hostile caller may pass)."""

    def __getattr__(self, name: str) -> object:
        raise RuntimeError(name)

    def get(self, name: str) -> object:
        raise RuntimeError(name)


def test_the_sdks_retry_count_from_a_mapping_or_nothing() -> None:
    """The SDKs' x-stainless-retry-count read from plain headers; a broken mapping gives None."""
    assert stainless_retry_count({"x-stainless-retry-count": "2"}) == 2
    assert stainless_retry_count(None) is None

    class Broken(dict[str, str]):
        def get(self, *args: object) -> str:
            raise RuntimeError("broken mapping")

    assert stainless_retry_count(Broken()) is None
    assert stainless_retry_count(Exploding()) is None  # its getattr raises a RuntimeError


def test_bodies_too_big_or_unprintable() -> None:
    """A body over the JSON limit is not parsed; one JSON cannot print names its type."""
    assert parse_body(b"[" + b" " * (MAX_JSON * 4) + b"]") is None
    circular: dict[str, object] = {}
    circular["self"] = circular
    assert body_text(circular) == "<dict>"


def test_text_of_enum_like_values() -> None:
    """An enum-like object gives its string ``value``; a hostile one gives None."""

    class Reason:
        value = "SAFETY"

    assert text_of(Reason()) == "SAFETY"
    assert text_of(Exploding()) is None


def test_stream_error_passes_over_what_is_no_error_event() -> None:
    """Lines that mention "error" without being an error event, a line cut mid-JSON, and
    lines past the first 10,000 are passed over."""
    text = 'data: {"text": "no error here"}\ndata: {"error": {"message": "Overlo\n'
    assert stream_error(text) is None
    found = stream_error(text + 'data: {"error": {"message": "Overloaded"}}\n')
    assert found == {"error": {"message": "Overloaded"}}
    late = "\n" * 10_050 + 'data: {"error": {"message": "Overloaded"}}\n'
    assert stream_error(late) is None
