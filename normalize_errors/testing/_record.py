"""Record your own calls as cassettes, with every credential removed before anything is written.

``record(out)`` (or ``normalize-errors record``) runs a block of code under vcrpy and
writes one cassette per HTTP exchange to ``out/<provider>/<name>.yaml``, in the format of
the shipped cassettes, so ``llm_faults.fail(path)`` and ``normalize-errors replay`` read
them alike. On the way to the file:

* request and response headers are kept only if they are on ``REQUEST_HEADERS`` and
  ``RESPONSE_HEADERS`` (so ``authorization``, ``x-api-key``, ``api-key``, ``x-goog-api-key``,
  cookies and anything unknown never reach it);
* query parameters named in ``SECRET_PARAMS`` are replaced by ``REDACTED``, and every other
  value passes through ``normalize_errors.redact``;
* request and response bodies pass through ``normalize_errors.redact`` (an OpenAI 401
  echoes part of the key; redaction can also hide harmless text that looks like a
  credential, such as ``Bearer YOUR_KEY``);
* the finished text is checked for key-shaped strings, and not written if one is left.

The metadata says where each cassette came from (``source.kind: recorded``), which provider
and SDK call it was (guessed from the host, the path and the client's headers), and the
harness code its response gives today (``expect.code``), which ``replay`` checks.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .. import from_response, redact
from .._redact import holds_key

__all__ = ["REQUEST_HEADERS", "RESPONSE_HEADERS", "SECRET_PARAMS", "record"]

REQUEST_HEADERS = (
    "accept",
    "content-type",
    "user-agent",
    "anthropic-version",
    "anthropic-beta",
    "openai-beta",
    "x-goog-api-client",
    "x-stainless-",
)
"""Request headers a recording keeps (exact names, or prefixes ending in '-')."""

RESPONSE_HEADERS = (
    "content-type",
    "date",
    "retry-after",
    "retry-after-ms",
    "x-should-retry",
    "x-ratelimit-",
    "anthropic-ratelimit-",
    "request-id",
    "x-request-id",
    "apim-request-id",
    "cf-ray",
    "server",
    "via",
    "openai-processing-ms",
    "openai-version",
    "x-ms-region",
)
"""Response headers a recording keeps: the ones the library reads, and a few harmless ones."""

SECRET_PARAMS = frozenset({"key", "api_key", "api-key", "apikey", "access_token", "token", "sig"})
"""Query parameters whose values are always replaced."""

_API_PATHS = (
    ("/chat/completions", "openai", "chat.completions.create"),
    ("/responses", "openai", "responses.create"),
    ("/images/generations", "openai", "images.generate"),
    ("/v1/messages", "anthropic", "messages.create"),
    (":streamGenerateContent", "google", "models.generate_content_stream"),
    (":generateContent", "google", "models.generate_content"),
)


def _allowed(name: str, allowlist: tuple[str, ...]) -> bool:
    low = name.lower()
    return any(low == item or (item.endswith("-") and low.startswith(item)) for item in allowlist)


def scrub_url(url: str) -> str:
    """``url`` with secret query parameters replaced and every other value redacted."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = [
        (name, "REDACTED" if name.lower() in SECRET_PARAMS else redact(value))
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(parts._replace(query=urlencode(pairs)))


def _text(body: Any) -> str:
    """A recorded body as text. vcrpy hands a request body that was a file back as a new
    ``BytesIO``, and one that was an iterator as an iterator over its chunks: their bytes are
    read, not their repr (a text, should one come, is read as the iterable of its
    characters)."""
    if hasattr(body, "read"):
        body = body.read()
    elif body is not None and not isinstance(body, (bytes, bytearray)):
        body = b"".join(c.encode("utf-8") if isinstance(c, str) else bytes(c) for c in body)
    return "" if body is None else bytes(body).decode("utf-8", errors="replace")


def _scrub_request(request: Any) -> Any:
    from vcr.request import Request

    headers = {k: v for k, v in request.headers.items() if _allowed(k, REQUEST_HEADERS)}
    return Request(request.method, scrub_url(request.uri), redact(_text(request.body)), headers)


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = {
        k: [redact(str(v)) for v in (vs if isinstance(vs, list) else [vs])]
        for k, vs in (response.get("headers") or {}).items()
        if _allowed(k, RESPONSE_HEADERS)
    }
    body = redact(_text((response.get("body") or {}).get("string")))
    return {**response, "headers": headers, "body": {"string": body}}


def _guess(uri: str, headers: dict[str, Any]) -> tuple[str, str, str]:
    """(provider, SDK call, the API path suffix) of a recorded request."""
    path = urlsplit(uri).path
    agent = " ".join(str(v) for v in _values(headers, "user-agent")).lower()
    for suffix, provider, call in _API_PATHS:
        if path.endswith(suffix) or (suffix.startswith(":") and suffix in path):
            if provider == "openai" and agent.startswith("anthropic"):
                continue
            return provider, call, suffix
    return "http", "post", ""


def _values(headers: dict[str, Any], name: str) -> list[Any]:
    for key, value in headers.items():
        if key.lower() == name:
            return value if isinstance(value, list) else [value]
    return []


def _metadata(item: dict[str, Any], name: str, today: str) -> dict[str, Any]:
    request, response = item["request"], item["response"]
    uri: str = request["uri"]
    provider, call, suffix = _guess(uri, request.get("headers") or {})
    try:
        sent = json.loads(request.get("body") or "null")
    except ValueError:
        sent = None
    path = urlsplit(uri).path
    meta: dict[str, Any] = {"provider": provider, "name": name, "call": call}
    meta["stream"] = bool(isinstance(sent, dict) and sent.get("stream") is True)
    origin = urlunsplit(urlsplit(uri)._replace(path="", query="", fragment=""))
    if provider == "http":
        meta["url"] = uri
    elif provider == "google":
        meta["base_url"] = origin
        meta["client"] = {"http_options": {"api_version": path.strip("/").split("/", 1)[0]}}
        meta["request"] = {"model": path.rsplit("/models/", 1)[-1].split(":", 1)[0]}
    else:
        meta["base_url"] = origin + path[: path.rfind(suffix)]
    if isinstance(sent, dict) and isinstance(sent.get("model"), str) and provider != "google":
        meta["request"] = {"model": sent["model"]}
    status = int(response["status"]["code"])
    meta["summary"] = (
        f"{request['method']} {urlunsplit(urlsplit(uri)._replace(query=''))}: HTTP {status}"
    )
    meta["source"] = {"kind": "recorded", "recorded": today, "constructed": []}
    if status >= 400:
        headers = {k: v[0] for k, v in response["headers"].items() if v}
        err = from_response(status, headers, response["body"]["string"], provider=provider)
        meta["expect"] = {"code": err.code}
    return meta


@contextlib.contextmanager
def record(out: str | Path, *, name: str | None = None) -> Iterator[list[Path]]:
    """Record every HTTP call made in the block; write one cassette per exchange under ``out``.

    Yields a list that holds the written paths once the block ends. Cassettes are named
    ``name`` (``name_2``, ``name_3``, ... for further exchanges), by default after the
    response status (``recorded_429``). Needs vcrpy and PyYAML (the ``testing`` extra).

    Raises:
        ValueError: a written cassette would still hold key-shaped text (nothing is written).
    """
    import vcr
    import yaml

    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        tape = Path(tmp) / "tape.yaml"
        recorder = vcr.VCR(
            record_mode="all",
            decode_compressed_response=True,
            before_record_request=_scrub_request,
            before_record_response=_scrub_response,
        )
        with recorder.use_cassette(str(tape)):
            yield written
        if not tape.exists():
            return
        data = yaml.safe_load(tape.read_text(encoding="utf-8"))
    today = datetime.date.today().isoformat()
    texts: list[tuple[Path, str]] = []
    taken: set[str] = set()
    for n, item in enumerate(data.get("interactions") or [], start=1):
        status = item["response"]["status"]["code"]
        stem = (name or f"recorded_{status}") + (f"_{n}" if name and n > 1 else "")
        while stem in taken:
            stem += "_2"
        taken.add(stem)
        meta = _metadata(item, stem, today)
        cassette = {"metadata": meta, "interactions": [item], "version": 1}
        text = yaml.safe_dump(cassette, sort_keys=False, allow_unicode=True, width=100)
        if holds_key(text):
            raise ValueError(f"{stem}: the cassette would hold a key-shaped text; nothing written")
        texts.append((Path(out) / meta["provider"] / f"{stem}.yaml", text))
    for path, text in texts:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
