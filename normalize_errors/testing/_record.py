"""Record your own calls as cassettes, with every credential removed before anything is written.

``record(out)`` (or ``normalize-errors record``) runs a block of code under vcrpy and
writes one cassette per HTTP exchange to ``out/<provider>/<name>.yaml``, in the format of
the shipped cassettes, so ``llm_faults.fail(path)`` and ``normalize-errors replay`` read
them alike. On the way to the file:

* request and response headers are kept only if they are on ``REQUEST_HEADERS`` and
  ``RESPONSE_HEADERS`` (so ``authorization``, ``x-api-key``, ``api-key``, ``x-goog-api-key``,
  cookies and anything unknown never reach it), and a kept header whose name says it is
  secret (``secret_name``, the library's one rule for names) has its value replaced;
* a URL loses its user information (``user:password@``); its query parameters (and those of
  its fragment) whose names say they are secret (``secret_name``: ``key``, ``client_secret``,
  ``password``, ``X-Amz-Signature``, ``X-Amz-Security-Token``, ``subscription-key``...) are
  replaced by ``REDACTED``, and every other value passes through ``normalize_errors.redact``;
* request and response bodies pass through ``normalize_errors.redact`` (an OpenAI 401
  echoes part of the key; redaction can also hide harmless text that looks like a
  credential, such as ``Bearer YOUR_KEY``);
* the finished text is checked for key-shaped strings, and not written if one is left;
* then every string written (the URI, the metadata's ``base_url``, ``url`` and ``summary``,
  header values, bodies, even mapping keys) passes through ``normalize_errors.redact``.

The metadata says where each cassette came from (``source.kind: recorded``), which provider
and SDK call it was (guessed from the host, the path and the client's headers), and the
harness code its response gives today (``expect.code``), which ``replay`` checks.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .. import from_response, redact
from .._base._redact import holds_key, secret_name

__all__ = ["REQUEST_HEADERS", "RESPONSE_HEADERS", "SECRET_PARAMS", "record", "scrub_url"]

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
"""Examples of query parameters whose values are always replaced: every name ``secret_name``
says is secret is (``client_secret``, ``password``, ``X-Amz-Signature``...)."""

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
    """``url`` without user information, with its secret-named query parameters (and those of
    its fragment) replaced and every other value redacted."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]  # user:password@host -> host
    fragment = _scrub_params(parts.fragment) if "=" in parts.fragment else parts.fragment
    return urlunsplit(
        parts._replace(netloc=netloc, query=_scrub_params(parts.query), fragment=fragment)
    )


def _scrub_params(query: str) -> str:
    if not query:
        return query
    pairs = [
        (name, "REDACTED" if _secret_param(name) else redact(value))
        for name, value in parse_qsl(query, keep_blank_values=True)
    ]
    return urlencode(pairs)


def _secret_param(name: str) -> bool:
    return name.lower() in SECRET_PARAMS or secret_name(name)


def _headers(headers: dict[str, Any], allowlist: tuple[str, ...]) -> dict[str, Any]:
    """The allowlisted headers, those whose names say they are secret with their values
    replaced (``REDACTED``), the others redacted."""
    out: dict[str, Any] = {}
    for name, values in headers.items():
        if _allowed(name, allowlist):
            items = values if isinstance(values, list) else [values]
            out[name] = ["REDACTED" if secret_name(name) else redact(str(v)) for v in items]
    return out


def redact_all(value: Any) -> Any:
    """``value`` (a cassette's data) with every string in it, mapping keys too, redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_all(k): redact_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_all(v) for v in value]
    return value


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

    headers = {
        name: values[0] if isinstance(values, list) and len(values) == 1 else values
        for name, values in _headers(dict(request.headers), REQUEST_HEADERS).items()
    }
    return Request(request.method, scrub_url(request.uri), redact(_text(request.body)), headers)


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = _headers(response.get("headers") or {}, RESPONSE_HEADERS)
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
        f"{request['method']} {urlunsplit(urlsplit(uri)._replace(query='', fragment=''))}: "
        f"HTTP {status}"
    )
    meta["source"] = {"kind": "recorded", "recorded": today, "constructed": []}
    if status >= 400:
        headers = {k: v[0] for k, v in response["headers"].items() if v}
        err = from_response(status, headers, response["body"]["string"], provider=provider)
        meta["expect"] = {"code": err.code}
    return meta


def cassette_text(
    metadata: dict[str, Any],
    interactions: list[Any],
    shape: Callable[[Any], Any] = lambda data: data,
    *,
    verbatim_responses: bool = False,
    **dump: Any,
) -> str:
    """The YAML text of a cassette, every string in it redacted (``redact_all``), then
    passed through ``shape`` (which may only restyle it) and dumped with ``dump``'s options.
    With ``verbatim_responses`` the response bodies are written as they are (a body quoted
    from a public source, served to the SDK by ``scripts/record.py``), after the same check.

    Raises:
        ValueError: the cassette holds key-shaped text (a key in a URL's path, say) before
            that last redaction: a recording that carries a key is refused, not patched.
    """
    import yaml

    cassette = {"metadata": metadata, "interactions": interactions, "version": 1}
    options = {"sort_keys": False, "allow_unicode": True, "width": 100, **dump}
    name = metadata.get("name")
    if holds_key(yaml.safe_dump(cassette, **options)):
        raise ValueError(f"{name}: the cassette would hold a key-shaped text; nothing written")
    clean = redact_all(cassette)
    if verbatim_responses:
        for item, original in zip(clean["interactions"], interactions, strict=True):
            item["response"]["body"] = original["response"]["body"]
    text: str = yaml.safe_dump(shape(clean), **options)
    return text


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
        texts.append((Path(out) / meta["provider"] / f"{stem}.yaml", cassette_text(meta, [item])))
    for path, text in texts:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
