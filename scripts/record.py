"""Record cassettes through the real SDK clients.

    python scripts/record.py SCENARIO.yaml ... [--out cassettes]
    python scripts/record.py cassettes/anthropic/overloaded_529.yaml          # re-record
    python scripts/record.py --live cassettes/openai/model_not_found_404.yaml  # live API

A scenario (or an existing cassette, whose ``metadata`` is the scenario) names a provider, an
SDK call and the response a public source shows. Without ``--live`` the script starts a
local HTTP server that serves exactly that response (status, headers, body), points the
real SDK client at it, and records the exchange with vcrpy. The request's URI is rewritten
to the real API host, so the cassette replays against the client's default base URL.

With ``--live`` the same call goes to the real API, using the key in ``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY`` or ``GEMINI_API_KEY``; the scenario's ``request`` members (a bad model
name, a tiny ``max_tokens``, ...) provoke the failure where the API allows it. The live
response replaces the sourced one and the source becomes ``kind: live``.

Either way, request and response headers are kept only if they are on the allowlists below
(a kept header whose name says it is secret loses its value), URLs lose their user information
and the values of secret-named parameters, the finished file is checked for key-shaped text,
and every string in it is redacted, except a response body quoted from a public source
(without ``--live``), which is written verbatim.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import vcr
import yaml

from normalize_errors._reading._rules import KEEP_HEADERS
from normalize_errors._wrapping import _replay_calls
from normalize_errors.testing._record import (  # what users record with
    REQUEST_HEADERS,
    cassette_text,
    scrub_url,
)
from normalize_errors.testing._record import _headers as kept_headers

ROOT = Path(__file__).resolve().parent.parent


RESPONSE_HEADERS = (
    *KEEP_HEADERS,
    "content-type",
    "date",
    "via",
    "cache-control",
    "x-ms-region",
    "cf-cache-status",
    "x-robots-tag",
    "openai-processing-ms",
    "openai-version",
    "x-envoy-upstream-service-time",
)
"""Response headers a cassette keeps: those the adapters read (``KEEP_HEADERS``) and a few that
describe the response; ``set-cookie`` and anything unknown are dropped."""

KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}


def read_scenario(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The scenario and the responses to serve, from a scenario file or a cassette."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if "interactions" in data and "metadata" in data:
        responses = []
        for item in data["interactions"]:
            response = item["response"]
            headers = {
                k.lower(): v[0] if isinstance(v, list) else v
                for k, v in (response.get("headers") or {}).items()
            }
            responses.append(
                {
                    "status": response["status"]["code"],
                    "headers": headers,
                    "body": response["body"]["string"],
                }
            )
        return dict(data["metadata"]), responses
    scenario = {k: v for k, v in data.items() if k not in ("response", "responses")}
    responses = data.get("responses") or [data["response"]]
    return scenario, responses


class Server:
    """A local HTTP server that answers each request with the next scripted response."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        self.responses = responses
        self.served = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                index = min(server.served, len(server.responses) - 1)
                server.served += 1
                response = server.responses[index]
                body = str(response.get("body") or "").encode("utf-8")
                self.send_response_only(int(response["status"]))
                for name, value in (response.get("headers") or {}).items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, str(value))
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST

            def log_message(self, fmt: str, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def real_base(scenario: dict[str, Any]) -> str:
    """Where the scenario's call really goes."""
    return str(
        scenario.get("url")
        or scenario.get("base_url")
        or _replay_calls.BASE_URLS[scenario["provider"]]
    )


def swap_origin(url: str, origin: str) -> str:
    """``url`` with its scheme, host and port taken from ``origin``."""
    parts, new = urlsplit(url), urlsplit(origin)
    return urlunsplit((new.scheme, new.netloc, parts.path, parts.query, parts.fragment))


class Literal(str):
    """A string YAML writes as a literal block."""


def _literal(dumper: yaml.SafeDumper, value: Literal) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")


yaml.SafeDumper.add_representer(Literal, _literal)


def blockify(value: Any) -> Any:
    """Multi-line strings become literal blocks, so bodies read as they were sent."""
    if isinstance(value, dict):
        return {k: blockify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [blockify(v) for v in value]
    if (
        isinstance(value, str)
        and "\n" in value
        and not any(ch in value for ch in "\r\t")
        and all(line == line.rstrip() for line in value.split("\n"))
    ):
        return Literal(value)
    return value


def record(path: Path, out: Path, live: bool) -> Path:
    """Record one scenario; returns the cassette's path."""
    scenario, responses = read_scenario(path)
    provider = scenario["provider"]
    base = real_base(scenario)
    with tempfile.TemporaryDirectory() as tmp:
        tape = Path(tmp) / "tape.yaml"
        recorder = vcr.VCR(record_mode="all", decode_compressed_response=True)
        options: dict[str, Any] = {
            "stream": bool(scenario.get("stream")),
            "request": scenario.get("request") or {},
            "client": scenario.get("client") or {},
        }
        if live:
            options["api_key"] = os.environ.get(KEYS.get(provider, ""), "")
            options["url" if provider == "http" else "base_url"] = base
            with recorder.use_cassette(str(tape)):
                _attempt(provider, scenario["call"], options)
        else:
            with Server(responses) as server, recorder.use_cassette(str(tape)):
                options["url" if provider == "http" else "base_url"] = swap_origin(
                    base, server.origin
                )
                _attempt(provider, scenario["call"], options)
        data = yaml.safe_load(tape.read_text(encoding="utf-8"))
    for item in data["interactions"]:
        request = item["request"]
        request["uri"] = scrub_url(swap_origin(request["uri"], base))
        request["headers"] = kept_headers(request["headers"], REQUEST_HEADERS)
        response = item["response"]
        response["headers"] = kept_headers(response["headers"], RESPONSE_HEADERS)
        body = response["body"]["string"]
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        response["body"]["string"] = body
    metadata = {k: v for k, v in scenario.items() if k != "quote"}
    metadata.setdefault("name", path.stem)
    source = dict(metadata.get("source") or {})
    source.pop("quote", None)
    if live:
        source = {
            "kind": "live",
            "recorded": datetime.date.today().isoformat(),
            "url": scrub_url(base),
        }
    metadata["source"] = source
    for name in ("url", "base_url"):
        if isinstance(metadata.get(name), str):
            metadata[name] = scrub_url(metadata[name])
    try:  # every string redacted; a key-shaped text left anywhere refuses the cassette
        text = cassette_text(metadata, data["interactions"], blockify, verbatim_responses=not live)
    except ValueError:
        raise SystemExit(
            f"{path}: the cassette would contain a key-shaped text; not written"
        ) from None
    target: Path = out / provider / f"{metadata['name']}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def _attempt(provider: str, name: str, options: dict[str, Any]) -> None:
    try:
        _replay_calls.call(provider, name, **options)
    except Exception as exc:  # the failure is the point; report what was raised
        print(f"  raised {type(exc).__module__}.{type(exc).__qualname__}", file=sys.stderr)


def main(argv: list[str]) -> int:
    """Record every scenario named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "cassettes")
    parser.add_argument("--live", action="store_true", help="call the real API")
    args = parser.parse_args(argv)
    for path in args.paths:
        target = record(path, args.out, args.live)
        print(f"{path} -> {json.dumps(str(target.relative_to(args.out.parent)))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
