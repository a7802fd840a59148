"""Hostile input to the http adapter: exceptions, responses, results and streams that
must never make it raise (moved from ``tests/providers/test_http.py``)."""

from __future__ import annotations

import json
from typing import Any, cast

import requests
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from normalize_errors._facade import from_response, normalize
from normalize_errors.providers import NAMES

from ..providers.test_http import KEY, leaks
from ..support import examples, raised, valid

# -- hostile input ------------------------------------------------------------------------------

HEADER_NAMES = st.sampled_from(
    ["retry-after", "Retry-After", "retry-after-ms", "content-type", "x-request-id", "server", "x"]
)
HEADER_VALUES = st.one_of(
    st.sampled_from(
        ["abc", "-5", "Wed, 21 Oct 2015 07:28:00 GMT", "1e309", "nan", "inf", "9" * 30, "0", "1.5"]
    ),
    st.text(max_size=40),
    st.integers(),
    st.binary(max_size=12),
    st.just(f"Bearer {KEY}"),
    st.just(KEY),
)
HEADERS = st.one_of(
    st.none(),
    st.dictionaries(st.one_of(HEADER_NAMES, st.text(max_size=12)), HEADER_VALUES, max_size=6),
    st.lists(st.tuples(st.text(max_size=10), HEADER_VALUES), max_size=4),
    st.text(max_size=10),
    st.integers(),
)
STATUSES = st.one_of(
    st.none(),
    st.integers(min_value=-1000, max_value=100_000),
    st.sampled_from([200, 204, 302, 400, 402, 413, 429, 499, 500, 502, 503, 520, 522, 529, 599]),
    st.text(max_size=5),
    st.floats(allow_nan=True),
    st.booleans(),
    st.binary(max_size=4),
)
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
SHAPES = [
    '{"error": {"message": "%s", "code": 429}}',
    '{"type": "error", "error": {"type": "overloaded_error", "message": "%s"}}',
    '{"error": {"code": 503, "status": "UNAVAILABLE", "message": "%s"}}',
    '{"object": "error", "message": "%s", "code": 400}',
    '{"error": "%s"}',
    '{"message": "%s"}',
    '[{"detail": "%s"}]',
    '{"type": "https://agenterrors.org/problems/harness-error", "code": "upstream.overloaded", '
    '"detail": "%s", "retry_after": 5}',
    "<html><head><title>%s</title></head><body>%s</body></html>",
    "upstream connect error or disconnect/reset before headers. reset reason: overflow %s",
    'data: {"error": {"message": "%s"}}\n\n',
    '{"done": false}\n{"error": "%s"}\n',
]


@st.composite
def bodies(draw: st.DrawFn) -> Any:
    """Bodies of every kind: shaped, broken, deep, binary, parsed, with a planted key."""
    kind = draw(st.integers(min_value=0, max_value=7))
    if kind == 0:
        template = draw(st.sampled_from(SHAPES))
        words = draw(
            st.sampled_from(["", "Please retry after 9 seconds", "overloaded", KEY, f"x {KEY}"])
        )
        text = template.replace("%s", words)
        cut = draw(st.integers(min_value=0, max_value=len(text)))
        return draw(st.sampled_from([text, text[:cut], text.encode()]))
    if kind == 1:
        return draw(st.binary(max_size=200))
    if kind == 2:
        return draw(st.text(max_size=200))
    if kind == 3:
        return draw(JSON)
    if kind == 4:
        depth = draw(st.integers(min_value=1, max_value=200_000))
        return "[" * depth + "]" * draw(st.integers(min_value=0, max_value=depth))
    if kind == 5:
        return b"\xff\xfe" + f'{{"error": {{"message": "{KEY}"}}}}'.encode() + b"\xc3\x28"
    if kind == 6:
        return draw(st.sampled_from([None, 0, 1.5, object(), [1, 2], {"error": {"message": 5}}]))
    return json.dumps({"error": {"message": f"see {KEY}", "code": [1], "type": {"a": 1}}})


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(status=STATUSES, headers=HEADERS, body=bodies(), provider=st.sampled_from([None, *NAMES]))
@example(status="²", headers=None, body=b"", provider=None)  # isdigit() but not int()
@example(status=None, headers=None, body=b"", provider="http")
def test_from_response_never_raises_and_never_leaks(
    status: Any, headers: Any, body: Any, provider: str | None
) -> None:
    """Any status, headers and body, any provider: a valid error without the planted key."""
    err = valid(from_response(status, headers, body, provider=provider))
    assert not leaks(err)


class Hostile:
    """An object whose every attribute read raises."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")


def hostile_status_errors(lib: Any) -> list[BaseException]:
    """HTTPStatusError-like exceptions with broken responses, requests and messages."""

    class Unprintable(lib.HTTPStatusError):  # type: ignore[misc]
        def __str__(self) -> str:
            raise ValueError("no str")

    class Weird:
        status_code = "abc"
        headers = Hostile()
        _content = 12
        request = Hostile()

    class Huge:
        status_code = 10**30
        headers = (("retry-after", "1e309"), (b"x-request-id", KEY.encode()))
        _content = f"<html><title>{KEY}</title></html>".encode()
        url = f"https://api.openai.com/x?key={KEY}"

    out: list[BaseException] = []
    for response in (Hostile(), Weird(), Huge(), None, 5):
        exc = lib.HTTPStatusError.__new__(lib.HTTPStatusError)
        exc.args = (f"failed {KEY}",)
        exc.response = response
        out.append(exc)
    unprintable = Unprintable.__new__(Unprintable)
    unprintable.response = Huge()
    out.append(unprintable)
    timeout = lib.ReadTimeout(f"timed out at https://x.example/?key={KEY}")
    timeout.request = Hostile()
    out.append(timeout)
    return out


def test_hostile_exceptions_never_raise_and_never_leak(lib: Any) -> None:
    """Broken attributes, wrong types and absurd values give valid errors without the key."""
    for exc in hostile_status_errors(lib):
        err = valid(normalize(exc))
        assert not leaks(err), err.to_json()
        assert err.__cause__ is exc


def test_hostile_requests_exceptions(closed_port: int) -> None:
    """requests exceptions with broken responses and requests never raise."""
    for response in (Hostile(), None, requests.Response()):
        exc = requests.HTTPError(f"bad {KEY}")
        exc.response = cast("Any", response)  # the types say Response | None
        err = valid(normalize(exc))
        assert not leaks(err)
    weird = requests.ConnectionError(KEY)
    weird.request = Hostile()  # type: ignore[assignment]
    err = valid(normalize(weird))
    assert (err.code, err.upstream["code"]) == ("upstream.unavailable", "connection_error")
    assert not leaks(err)


@settings(max_examples=examples(150), deadline=None)
@given(
    status=st.integers(min_value=100, max_value=999),
    headers=st.dictionaries(
        st.sampled_from(["retry-after", "retry-after-ms", "content-type", "x-request-id", "x"]),
        st.one_of(HEADER_VALUES.filter(lambda v: isinstance(v, str)), st.just("text/html")),
        max_size=4,
    ),
    body=st.one_of(st.binary(max_size=200), bodies().map(lambda b: str(b).encode())),
    host=st.sampled_from(["api.openai.com", "api.anthropic.com", "gw.example", "127.0.0.1"]),
)
def test_any_status_error_of_a_real_client_is_valid(
    status: int, headers: dict[str, str], body: bytes, host: str
) -> None:
    """Real httpx responses of any status, headers and body: valid, no key, no path."""
    import httpx

    ascii_headers = {k: v for k, v in headers.items() if v.isascii() and v.isprintable()}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers=ascii_headers, content=body)

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        response = client.post(f"https://{host}/secret/path?key={KEY}", json={})
    if response.is_success:
        err = valid(from_response(response.status_code, response.headers, response.content))
    else:
        err = valid(normalize(raised(response.raise_for_status)))
        assert err.upstream.get("host", host) == host
    assert not leaks(err)
    assert "/secret/path" not in err.to_json()
