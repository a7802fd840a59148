"""Recording a user's own calls: no credential reaches the file, and the file replays.

A local HTTP server plays the vendors, echoing every key it was sent (in the body, in a
cookie, in headers), which is the worst a real API does; each SDK calls it with a planted
key of its provider.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai

from normalize_errors import normalize
from normalize_errors._cli import main
from normalize_errors.testing import Faults, record
from normalize_errors.testing._record import scrub_url
from tests.support import cassette, raised

PLANTED = {
    "openai": "sk-proj-PLANTEDopenaiKEY0123456789abcdefghijklmnop",
    "anthropic": "sk-ant-api03-PLANTEDanthropicKEY0123456789abcdefghij",
    "google": "AIzaSyPLANTEDgoogleKEY0123456789abcdefgh",
    "azure": "0123456789abcdef0123456789abcdef",  # Azure keys are 32 hex digits: no shape
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZA",
}


class Vendor(BaseHTTPRequestHandler):
    """Answers like the vendor the path belongs to, echoing every credential it received."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        sent = " ".join(f"{k}={v}" for k, v in self.headers.items()) + " " + self.path
        path = self.path.split("?")[0]
        headers = {"content-type": "application/json", "set-cookie": f"session={PLANTED['jwt']}"}
        body: dict[str, Any]
        if path.endswith("/chat/completions"):
            status, body = (
                401,
                {
                    "error": {
                        "message": f"Incorrect API key provided: {PLANTED['openai']}. ({sent})",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_api_key",
                    }
                },
            )
        elif path.endswith("/v1/messages"):
            status = 429
            headers |= {"retry-after": "12", "request-id": "req_recorded", "x-api-key": sent}
            body = {
                "type": "error",
                "error": {"type": "rate_limit_error", "message": f"Slow down ({sent})"},
            }
        elif ":generateContent" in path:
            status, body = (
                400,
                {
                    "error": {
                        "code": 400,
                        "message": f"API key not valid. Please pass a valid API key. ({sent})",
                        "status": "INVALID_ARGUMENT",
                        "details": [
                            {
                                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                "reason": "API_KEY_INVALID",
                                "domain": "googleapis.com",
                            }
                        ],
                    }
                },
            )
        else:
            # a 503 whose words say "overloaded" reads as upstream.overloaded (_wording)
            status, body = 503, {"detail": f"upstream overloaded ({sent})"}
            headers["retry-after"] = "4"
        data = json.dumps(body).encode()
        self.send_response_only(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        """A successful listing (what a ``GET /v1/models`` answers)."""
        data = json.dumps({"object": "list", "data": []}).encode()
        self.send_response_only(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt: str, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def vendor() -> Iterator[str]:
    """The origin (``http://127.0.0.1:PORT``) of a local server playing every vendor."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Vendor)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def gemini(origin: str) -> Any:
    """A Gemini call (the client must stay referenced: google-genai closes it when dropped)."""
    client = genai.Client(
        api_key=PLANTED["google"], http_options={"base_url": origin, "api_version": "v1beta"}
    )
    return client.models.generate_content(model="gemini-2.5-flash", contents="Hi")


def call_every_vendor(origin: str) -> None:
    """One failing call per SDK, each with its provider's planted key."""
    clients: list[Any] = [
        lambda: openai.OpenAI(
            api_key=PLANTED["openai"], base_url=origin + "/v1", max_retries=0
        ).chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}]
        ),
        lambda: anthropic.Anthropic(
            api_key=PLANTED["anthropic"], base_url=origin, max_retries=0
        ).messages.create(
            model="claude-sonnet-4-6", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
        ),
        lambda: gemini(origin),
        lambda: httpx.post(
            f"{origin}/v1/generate?key={PLANTED['google']}&api_key={PLANTED['azure']}&mode=fast",
            headers={"api-key": PLANTED["azure"], "authorization": f"Bearer {PLANTED['jwt']}"},
            json={"prompt": "Hi", "note": f"my key is {PLANTED['openai']}"},
        ).raise_for_status(),
    ]
    for make_call in clients:
        raised(make_call)


@pytest.fixture(scope="module")
def recorded(vendor: str, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The cassettes of one failing call per SDK."""
    out = tmp_path_factory.mktemp("recorded")
    with record(out) as written:
        call_every_vendor(vendor)
    return written


def test_no_planted_key_reaches_a_cassette(recorded: list[Path]) -> None:
    """Not in headers, query parameters, bodies or cookies; whatever the server echoed."""
    assert len(recorded) == 4
    for path in recorded:
        text = path.read_text(encoding="utf-8")
        for name, key in PLANTED.items():
            assert key not in text, (path.name, name)
        exchange = cassette(path).interactions[0]
        sent = {name.lower() for name in exchange["request"]["headers"]}
        got = {name.lower() for name in exchange["response"]["headers"]}
        assert not sent & {"authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"}
        assert not got & {"set-cookie", "x-api-key"}
        assert "[REDACTED]" in text  # the echoes were there, and were redacted


def test_the_metadata_names_provider_call_and_code(recorded: list[Path]) -> None:
    """Provider and call are read off the request; the harness code off the response."""
    metas = {}
    for path in recorded:
        meta = cassette(path).metadata
        metas[meta["provider"]] = meta
        assert path.parent.name == meta["provider"]
        assert meta["source"]["kind"] == "recorded"
    assert sorted(metas) == ["anthropic", "google", "http", "openai"]
    assert metas["openai"]["call"] == "chat.completions.create"
    assert metas["openai"]["expect"] == {"code": "upstream.authentication_failed"}
    assert metas["anthropic"]["call"] == "messages.create"
    assert metas["anthropic"]["expect"] == {"code": "upstream.rate_limited"}
    assert metas["google"]["call"] == "models.generate_content"
    assert metas["google"]["request"] == {"model": "gemini-2.5-flash"}
    assert metas["http"]["expect"] == {"code": "upstream.overloaded"}
    assert "REDACTED" in metas["http"]["url"]
    assert "mode=fast" in metas["http"]["url"]


def test_replay_reads_the_recordings_like_the_shipped_ones(recorded: list[Path]) -> None:
    """`normalize-errors replay DIR` replays every recording as it expects, sync and async."""
    folder = str(recorded[0].parent.parent)
    for mode in ("sync", "async"):
        out = io.StringIO()
        assert main(["replay", folder, "--json", "--mode", mode], out) == 0, out.getvalue()
        rows = [json.loads(line) for line in out.getvalue().splitlines()]
        assert len(rows) == 4
        assert all(row["expected"] for row in rows)


def test_the_fixture_serves_a_recording(recorded: list[Path]) -> None:
    """A recorded 429 retried by the SDK: it waits what the recording's header says."""
    path = next(p for p in recorded if p.parent.name == "anthropic")
    with Faults() as faults:
        faults.fail(path)
        client = anthropic.Anthropic(api_key="sk-ant-test", max_retries=1)
        reply = client.messages.create(
            model="m", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
        )
        assert reply.content[0].text == "Hello!"  # type: ignore[union-attr]
        faults.fail(path)
        err = raised(
            lambda: anthropic.Anthropic(api_key="k", max_retries=0).messages.create(
                model="m", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
            )
        )
    assert faults.waits == [12.0]
    assert normalize(err).upstream["request_id"] == "req_recorded"


def test_the_command_records_a_script(vendor: str, tmp_path: Path) -> None:
    """`normalize-errors record --out DIR --name NAME SCRIPT ARG` runs the script and writes."""
    script = tmp_path / "my_call.py"
    script.write_text(
        "import sys\n"
        "from tests.testing.test_record import call_every_vendor\n"
        "call_every_vendor(sys.argv[1])\n",
        encoding="utf-8",
    )
    out = io.StringIO()
    target = tmp_path / "mine"
    assert main(["record", "--out", str(target), "--name", "mine", str(script), vendor], out) == 0
    written = sorted(p.relative_to(target).as_posix() for p in target.rglob("*.yaml"))
    assert written == [
        "anthropic/mine_2.yaml",
        "google/mine_3.yaml",
        "http/mine_4.yaml",
        "openai/mine.yaml",
    ]
    assert out.getvalue().count("recorded ") == 4
    listing = io.StringIO()
    assert main(["cassettes", str(target)], listing) == 0
    assert "openai/mine " in listing.getvalue()


def test_scrub_url_keeps_harmless_parameters() -> None:
    """Secret parameters are replaced, the others kept (redacted if they look like keys)."""
    url = f"https://x.example/v1/m:generateContent?alt=sse&key=abc&q={PLANTED['openai']}"
    assert (
        scrub_url(url)
        == "https://x.example/v1/m:generateContent?alt=sse&key=REDACTED&q=%5BREDACTED%5D"
    )
    assert scrub_url("https://x.example/v1") == "https://x.example/v1"


def test_two_answers_with_the_same_status_get_two_names(vendor: str, tmp_path: Path) -> None:
    """Unnamed recordings are called by status; a second one of the same status gets ``_2``.
    A request body that is not JSON is kept out of the metadata's request."""
    with record(tmp_path) as written:
        for _ in range(2):
            httpx.post(f"{vendor}/v1/other", content=b"plain text, not JSON")
    names = sorted(path.relative_to(tmp_path).as_posix() for path in written)
    assert names == ["http/recorded_503.yaml", "http/recorded_503_2.yaml"]
    meta = cassette(written[0]).metadata
    assert (meta["provider"], meta["call"], meta["expect"]) == (
        "http",
        "post",
        {"code": "upstream.overloaded"},
    )
    assert "request" not in meta  # the text body is no JSON request to replay


def test_a_successful_call_without_a_body_is_recorded_without_an_expectation(
    vendor: str, tmp_path: Path
) -> None:
    """A GET (no request body) that succeeds: recorded, named by its status, no ``expect``."""
    with record(tmp_path) as written:
        httpx.get(f"{vendor}/v1/models").raise_for_status()
    assert [path.name for path in written] == ["recorded_200.yaml"]
    found = cassette(written[0])
    assert "expect" not in found.metadata
    assert found.status == 200
    assert found.interactions[0]["request"]["body"] == ""


def test_a_key_in_the_urls_path_stops_the_recording(vendor: str, tmp_path: Path) -> None:
    """Query parameters are scrubbed, a path is not: a URL path holding a key (an API that
    takes it there) makes ``record`` refuse to write, and nothing is written."""
    with (
        pytest.raises(ValueError, match="would hold a key-shaped text; nothing written"),
        record(tmp_path) as written,
    ):
        httpx.post(f"{vendor}/v1/keys/{PLANTED['openai']}/check", json={"q": 1})
    assert written == []
    assert list(tmp_path.iterdir()) == []


def test_clients_other_than_httpx_are_recorded_too(vendor: str, tmp_path: Path) -> None:
    """requests (a GET sends no body at all) and the standard library's http.client (which
    sends no user-agent) are recorded like httpx: named by status, without a request body."""
    import http.client
    from urllib.parse import urlsplit

    import requests

    with record(tmp_path, name="listing") as written:
        requests.get(f"{vendor}/v1/models", timeout=5).raise_for_status()
        parts = urlsplit(vendor)
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
        connection.request("POST", "/v1/other", body=b"plain text", headers={})
        assert connection.getresponse().status == 503
        connection.close()
    assert [path.relative_to(tmp_path).as_posix() for path in written] == [
        "http/listing.yaml",
        "http/listing_2.yaml",
    ]
    got, sent = cassette(written[0]), cassette(written[1])
    assert got.interactions[0]["request"]["body"] == ""
    assert (got.status, "expect" in got.metadata) == (200, False)
    assert sent.metadata["expect"] == {"code": "upstream.overloaded"}
    assert "user-agent" not in {k.lower() for k in sent.interactions[0]["request"]["headers"]}


def test_an_openai_path_called_by_the_anthropic_sdk_is_not_taken_for_openai() -> None:
    """The provider is guessed from the path, except that an OpenAI-shaped path called with
    the Anthropic SDK's user-agent (its generic ``client.post``) is not OpenAI's."""
    from normalize_errors.testing._record import _guess

    url = "https://gateway.example/v1/chat/completions"
    assert _guess(url, {"User-Agent": ["Anthropic/Python 0.49.0"]}) == ("http", "post", "")
    assert _guess(url, {"user-agent": "OpenAI/Python 1.0"})[:2] == (
        "openai",
        "chat.completions.create",
    )
    assert _guess(url, {}) == ("openai", "chat.completions.create", "/chat/completions")


def test_a_request_body_sent_from_a_file_or_an_iterator_is_recorded_as_its_text(
    vendor: str, tmp_path: Path
) -> None:
    """requests streams a file or an iterator as the body; vcrpy hands those back as a file
    and an iterator: the cassette holds their text (redacted), not a Python repr."""
    import io

    import requests

    body = json.dumps({"prompt": "Hi", "note": f"my key is {PLANTED['openai']}"}).encode()
    with record(tmp_path, name="streamed") as written:
        requests.post(f"{vendor}/v1/other", data=io.BytesIO(body), timeout=5)
        requests.post(f"{vendor}/v1/other", data=iter([body[:10], body[10:]]), timeout=5)
    sent = [cassette(path).interactions[0]["request"]["body"] for path in written]
    assert len(sent) == 2
    for text in sent:
        assert json.loads(text) == {"prompt": "Hi", "note": "my key is [REDACTED]"}
