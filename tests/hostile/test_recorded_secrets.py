"""Issue 22, finding 6: no secret reaches a written cassette, whatever the URL and headers.

URL user information is dropped; every query (and fragment) parameter and kept header whose
name says it is secret (``secret_name``) loses its value; every string written is redacted.
The properties run the recorder's own steps (vcrpy's request, the scrubbing hooks, the
metadata and the cassette text); the examples record real httpx calls, through ``record()``
and the ``normalize-errors record`` command.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from vcr.request import Request

from normalize_errors._base._redact import secret_name
from normalize_errors._cli import main
from normalize_errors.testing import record
from normalize_errors.testing._record import (
    _metadata,
    _scrub_request,
    _scrub_response,
    cassette_text,
)

from .test_secret_names import KEPT, SECRET

# Values no redaction pattern knows by their shape: only the names can say they are secret.
VALUES = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=12
).map(lambda v: "Zq" + v)
KEYS = st.sampled_from(
    [
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "AIzaBcD4f5G6h7J8k9L0zXcVbNmQwErTyUiOp12",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    ]
)
NAMES = (
    st.sampled_from(SECRET)
    .flatmap(
        lambda name: st.sampled_from([name, name.lower(), name.upper(), name.replace("-", "_")])
    )
    .filter(secret_name)  # XFunctionsKey lowered is one word: no longer a secret name
)
PATHS = st.sampled_from(
    [
        "/v1/chat/completions",
        "/v1/messages",
        "/v1beta/models/gemini-2.5-flash:generateContent",
        "/v1/other",
        "/",
    ]
)


def _written(
    *,
    userinfo: tuple[str, str] | None,
    params: list[tuple[str, str]],
    fragment: list[tuple[str, str]],
    headers: dict[str, str],
    path: str,
    status: int,
) -> str:
    """The cassette text the recorder writes for one exchange."""
    auth = f"{quote(userinfo[0], safe='')}:{quote(userinfo[1], safe='')}@" if userinfo else ""
    query = "&".join(f"{quote(n)}={quote(v)}" for n, v in params)
    tail = "#" + "&".join(f"{quote(n)}={quote(v)}" for n, v in fragment) if fragment else ""
    uri = f"https://{auth}api.example.com{path}{'?' + query if query else ''}{tail}"
    sent = Request("POST", uri, b'{"model": "m"}', {"content-type": "application/json", **headers})
    request = _scrub_request(sent)._to_dict()
    response = _scrub_response(
        {
            "status": {"code": status, "message": ""},
            "headers": {k: [v] for k, v in headers.items()} | {"content-type": ["text/plain"]},
            "body": {"string": b"failed"},
        }
    )
    item = {"request": request, "response": response}
    meta = _metadata(item, "recorded", "2026-12-01")
    return cassette_text(meta, [item])


@given(
    st.none() | st.tuples(VALUES, VALUES),
    st.lists(st.tuples(NAMES, VALUES), max_size=4),
    st.lists(st.tuples(NAMES, VALUES), max_size=2),
    st.lists(st.tuples(NAMES, VALUES), max_size=3),
    st.tuples(PATHS, st.sampled_from([200, 401, 429, 503])),
)
def test_no_secret_named_value_or_userinfo_reaches_a_cassette(
    userinfo: tuple[str, str] | None,
    params: list[tuple[str, str]],
    fragment: list[tuple[str, str]],
    header_names: list[tuple[str, str]],
    where: tuple[str, int],
) -> None:
    """In the URI, the metadata's base_url, url and summary, and the headers."""
    # Kept headers are allowlisted by prefix: x-stainless-* (request), x-ratelimit-* (response).
    headers = {f"x-stainless-{n}": v for n, v in header_names}
    headers |= {f"x-ratelimit-{n}": v for n, v in header_names}
    path, status = where
    text = _written(
        userinfo=userinfo,
        params=params,
        fragment=fragment,
        headers=headers,
        path=path,
        status=status,
    )
    secrets = [v for _, v in params + fragment + header_names]
    if userinfo:
        secrets += list(userinfo)
    for secret in secrets:
        assert secret not in text
    assert "@api.example.com" not in text
    data = yaml.safe_load(text)
    assert "api.example.com" in data["interactions"][0]["request"]["uri"]


@given(
    st.lists(st.tuples(st.sampled_from(KEPT), VALUES), max_size=3),
    st.lists(st.tuples(NAMES, KEYS), min_size=1, max_size=3),
    st.sampled_from(["q", "mode", "alt", "note", "x-ratelimit-remaining-tokens"]),
    KEYS,
)
def test_keys_go_and_harmless_parameters_stay(
    kept: list[tuple[str, str]], named: list[tuple[str, str]], plain: str, key: str
) -> None:
    """A key of a recognised kind under any name goes; a harmless parameter's value stays."""
    text = _written(
        userinfo=None,
        params=[*kept, *named, (plain, key)],
        fragment=[],
        headers={},
        path="/v1/other",
        status=429,
    )
    for _, value in kept:
        assert value in text  # rate-limit names and other vendor facts are not secrets
    for _, value in named:
        assert value not in text
    assert key not in text


# -- real calls, recorded -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = b'{"error": {"message": "no"}}'
            self.send_response_only(429)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


PLANTED = {  # the reviewer's findings, each with a value no key pattern knows by its shape
    "userinfo": "pw0Secret9931",
    "client_secret": "cs0Secret9931",
    "password": "pw1Secret9931",
    "X-Amz-Signature": "sig0Secret9931",
    "X-Amz-Security-Token": "tok0Secret9931",
    "subscription-key": "sub0Secret9931",
    "access_token": "frag0Secret9931",
    "x-stainless-api-key": "hdr0Secret9931",
}


def _call(origin: str) -> None:
    query = "&".join(
        f"{name}={PLANTED[name]}"
        for name in (
            "client_secret",
            "password",
            "X-Amz-Signature",
            "X-Amz-Security-Token",
            "subscription-key",
        )
    )
    httpx.post(
        f"http://alice:{PLANTED['userinfo']}@{origin}/v1/chat/completions?{query}&mode=fast"
        f"#access_token={PLANTED['access_token']}",
        json={"model": "gpt-4o-mini"},
        headers={"x-stainless-api-key": PLANTED["x-stainless-api-key"]},
    )


def _assert_clean(paths: list[Path]) -> None:
    assert paths
    for path in paths:
        text = path.read_text(encoding="utf-8")
        for name, value in PLANTED.items():
            assert value not in text, name
        assert "alice" not in text
        meta = yaml.safe_load(text)["metadata"]
        assert "@" not in meta["base_url"]
        assert "@" not in meta["summary"]
        assert meta["summary"].endswith(": HTTP 429")
        assert "mode=fast" in yaml.safe_load(text)["interactions"][0]["request"]["uri"]


def test_record_writes_no_userinfo_and_no_secret_named_value(origin: str, tmp_path: Path) -> None:
    with record(tmp_path) as written:
        _call(origin)
    _assert_clean(written)


def test_the_record_command_writes_no_secret(
    origin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "call.py"
    script.write_text(
        "import sys\nfrom tests.hostile.test_recorded_secrets import _call\n_call(sys.argv[1])\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))
    out = io.StringIO()
    assert main(["record", "--out", str(tmp_path / "out"), str(script), origin], out) == 0
    _assert_clean(sorted((tmp_path / "out").rglob("*.yaml")))


def test_verbatim_responses_keep_a_quoted_body_and_still_refuse_a_key() -> None:
    """``cassette_text(verbatim_responses=True)`` (``scripts/record.py`` serving a body quoted
    from a public source) writes the response body as it was quoted, where the default
    redacts what looks secret in it; the request is redacted either way, and a key-shaped
    text is refused before anything is written. The body is constructed."""
    body = '{"error": {"message": "password=hunter2 is not an API key"}}'
    sent = Request("POST", "https://api.example.com/v1/x", b"password=hunter2", {})
    item = {
        "request": _scrub_request(sent)._to_dict(),
        "response": {
            "status": {"code": 400, "message": ""},
            "headers": {},
            "body": {"string": body},
        },
    }
    redacted = yaml.safe_load(cassette_text({"name": "quoted"}, [item]))
    verbatim = yaml.safe_load(cassette_text({"name": "quoted"}, [item], verbatim_responses=True))
    assert "hunter2" not in redacted["interactions"][0]["response"]["body"]["string"]
    assert verbatim["interactions"][0]["response"]["body"]["string"] == body
    assert "hunter2" not in str(verbatim["interactions"][0]["request"])
    keyed = {**item, "response": {**item["response"], "body": {"string": KEY_BODY}}}
    with pytest.raises(ValueError, match="key-shaped"):
        cassette_text({"name": "keyed"}, [keyed], verbatim_responses=True)


KEY_BODY = (
    '{"error": {"message": "Incorrect API key provided: '
    'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"}}'
)
