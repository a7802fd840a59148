"""The plain HTTP adapter: httpx/httpx2/requests failures, gateway pages, hostile input.

(a) every exception class httpx, httpx2, httpcore, httpcore2, requests and urllib3 export
maps to a specific entry; (b) real clients made to fail (refused connections, silent and
closing servers, redirect loops, bad encodings, misused streams) give the expected codes;
every OpenAI-compatible cassette gives the same code, retryable and retry_after through
the openai SDK as through httpx; (c) ``from_response`` on the cassettes' responses as
plain bytes and dicts, and ``diagnose``/``check`` on them; (d) hostile input never
raises, always validates against the schema and never shows a planted key.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import inspect
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import openai
import pytest
import requests

from normalize_errors import HarnessError
from normalize_errors._facade import check, diagnose, from_response, normalize
from normalize_errors._reading._envelopes import MEANINGS
from normalize_errors._wrapping import _replay_calls
from normalize_errors.providers import http as adapter
from normalize_errors.providers._routing import detect
from normalize_errors.replay import Scenario, load, run, use_cassette

from ..support import cassette, cassettes, raised, valid

KEY = "sk-proj-" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCd"
"""A planted key: it must never come out of an error."""

HTTP_CASSETTES = [item.path for item in cassettes("http")]
SCENARIOS = [load(path) for path in HTTP_CASSETTES]


def scenario(name: str) -> Scenario:
    """The shipped http scenario called ``name``."""
    return next(s for s in SCENARIOS if s.name == name)


def leaks(err: HarnessError) -> bool:
    """Whether the planted key shows anywhere in the error."""
    return any(KEY in text for text in (str(err), repr(err), err.to_json(), err.detail or ""))


# -- (a) every exported exception class maps -----------------------------------------------------


def exported(module: ModuleType) -> list[type[BaseException]]:
    """The exception classes a module exports (its top level and its exceptions module)."""
    found: dict[str, type[BaseException]] = {}
    places = [module]
    for name in ("_exceptions", "exceptions"):
        with contextlib.suppress(ImportError):
            places.append(importlib.import_module(f"{module.__name__}.{name}"))
    for place in places:
        for name, value in vars(place).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and not issubclass(value, Warning)
                and value.__module__.partition(".")[0] == module.__name__
                and not name.startswith("_")
            ):
                found[value.__name__] = value
    return sorted(found.values(), key=lambda cls: cls.__name__)


SDK_MODULES = tuple(
    f"{root}{place}"
    for root in ("httpx", "httpx2", "httpcore", "httpcore2")
    for place in ("", "._exceptions")
)
"""The clients whose classes ``CLASSES`` names (``test_completeness.py`` checks each maps);
requests, urllib3 and aiohttp are read by class-name patterns, see ``OTHER_CLIENTS``."""


def _envelope_body(name: str, number: int) -> str:
    """A vendor envelope carrying ``number`` (constructed: the shape each vendor documents,
    no recorded message; the corpus holds recorded ones)."""
    if name == "qianfan":
        return json.dumps({"error_code": number, "error_msg": "x"})
    if name == "spark":
        return json.dumps({"header": {"code": number, "message": "x", "sid": "s", "status": 2}})
    return json.dumps({"base_resp": {"status_code": number, "status_msg": "x"}})


ENVELOPE_CASES = [
    (name, number, code, retryable)
    for name, rows in MEANINGS.items()
    for code, retryable, numbers, _ in rows
    for number in numbers
]
"""Every documented envelope code and the answer its row gives."""

TABLE_CASES = [
    functools.partial(adapter.from_response, 204, {}, ""),
    *(
        functools.partial(adapter.from_response, None, {}, _envelope_body(name, number))
        for name, number, _, _ in ENVELOPE_CASES
    ),
]
"""A success given as an error (the 1xx-3xx row), asserted in
``test_a_success_given_as_an_error_uses_the_1xx_to_3xx_row``; the envelope rows, asserted in
``test_each_envelope_code_gives_its_documented_meaning``."""


@pytest.mark.parametrize(("name", "number", "code", "retryable"), ENVELOPE_CASES)
def test_each_envelope_code_gives_its_documented_meaning(
    name: str, number: int, code: str, retryable: bool
) -> None:
    """A Qianfan, Spark or MiniMax code reads as its vendor documents it, with no status and
    inside a 200 (where the envelope is the only sign of the error)."""
    body = _envelope_body(name, number)
    for status in (None, 200):
        err = from_response(status, {}, body)
        assert (err.code, err.retryable) == (code, retryable), (status, err.upstream)
        assert err.upstream["code"] == str(number)


def test_an_envelope_reporting_success_is_no_error() -> None:
    """Code 0 is each envelope's success: a 200 carrying it reports no error."""
    for name in MEANINGS:
        assert from_response(200, {}, _envelope_body(name, 0)).code == "upstream.invalid_response"


def entry(cls: type[BaseException]) -> str | None:
    """The name of the first class of the MRO that ``CLASSES`` has."""
    return next((k.__name__ for k in cls.__mro__ if k.__name__ in adapter.CLASSES), None)


@pytest.mark.parametrize("name", ["httpx", "httpx2", "httpcore", "httpcore2"])
def test_every_httpx_exception_class_maps_to_a_specific_entry(name: str) -> None:
    """Each exported class has an entry more specific than the root, and normalizes to it."""
    classes = exported(importlib.import_module(name))
    assert len(classes) >= 15
    for cls in classes:
        found = entry(cls)
        assert found is not None, cls
        if cls.__name__ != "HTTPError":
            assert found != "HTTPError", cls
        fixed = adapter.CLASSES[found] or ("upstream.unavailable", True)
        err = valid(normalize(cls.__new__(cls)))
        assert (err.code, err.retryable) == fixed, cls
        assert err.upstream["exception"].endswith(cls.__name__)
        if fixed[0] == "upstream.unavailable":
            timeout = "Timeout" in cls.__name__
            assert err.upstream["code"] == ("timeout" if timeout else "connection_error"), cls


def test_httpx2_adds_only_sse_error() -> None:
    """httpx2 exports httpx's classes plus SSEError, read as an invalid response."""
    one = {cls.__name__ for cls in exported(importlib.import_module("httpx"))}
    two = {cls.__name__ for cls in exported(importlib.import_module("httpx2"))}
    assert two - one == {"SSEError"}
    assert adapter.CLASSES["SSEError"] == ("upstream.invalid_response", True)


OTHER_CLIENTS = {
    "requests": {
        "ChunkedEncodingError": "upstream.unavailable",
        "ConnectTimeout": "upstream.unavailable",
        "ConnectionError": "upstream.unavailable",
        "ContentDecodingError": "upstream.invalid_response",
        "HTTPError": "harness.internal_error",  # with no response; see the status tests
        "InvalidHeader": "harness.internal_error",
        "InvalidJSONError": "harness.internal_error",
        "InvalidProxyURL": "harness.internal_error",
        "InvalidSchema": "harness.internal_error",
        "InvalidURL": "harness.internal_error",
        "JSONDecodeError": "upstream.invalid_response",
        "MissingSchema": "harness.internal_error",
        "ProxyError": "upstream.unavailable",
        "ReadTimeout": "upstream.unavailable",
        "RequestException": "harness.internal_error",
        "RetryError": "upstream.unavailable",
        "SSLError": "upstream.unavailable",
        "StreamConsumedError": "harness.internal_error",
        "Timeout": "upstream.unavailable",
        "TooManyRedirects": "upstream.invalid_response",
        "URLRequired": "harness.internal_error",
        "UnrewindableBodyError": "harness.internal_error",
    },
    "urllib3": {
        "BodyNotHttplibCompatible": "harness.internal_error",
        "ClosedPoolError": "harness.internal_error",
        "ConnectTimeoutError": "upstream.unavailable",
        "DecodeError": "upstream.invalid_response",
        "EmptyPoolError": "upstream.unavailable",
        "FullPoolError": "upstream.unavailable",
        "HTTPError": "harness.internal_error",
        "HeaderParsingError": "upstream.invalid_response",
        "HostChangedError": "harness.internal_error",
        "IncompleteRead": "upstream.unavailable",
        "InvalidChunkLength": "upstream.unavailable",
        "InvalidHeader": "harness.internal_error",
        "LocationParseError": "harness.internal_error",
        "LocationValueError": "harness.internal_error",
        "MaxRetryError": "upstream.unavailable",
        "NameResolutionError": "upstream.unavailable",
        "NewConnectionError": "upstream.unavailable",
        "PoolError": "upstream.unavailable",
        "ProtocolError": "upstream.unavailable",
        "ProxyError": "upstream.unavailable",
        "ProxySchemeUnknown": "harness.internal_error",
        "ProxySchemeUnsupported": "harness.internal_error",
        "ReadTimeoutError": "upstream.unavailable",
        "RequestError": "upstream.unavailable",
        "ResponseError": "upstream.unavailable",
        "ResponseNotChunked": "upstream.invalid_response",
        "SSLError": "upstream.unavailable",
        "TimeoutError": "upstream.unavailable",
        "TimeoutStateError": "harness.internal_error",
        "URLSchemeUnknown": "harness.internal_error",
        "UnrewindableBodyError": "harness.internal_error",
    },
}


@pytest.mark.parametrize("name", sorted(OTHER_CLIENTS))
def test_every_requests_and_urllib3_exception_class_is_read_by_its_name(name: str) -> None:
    """Every exported class of requests and urllib3 gives the code its name pattern means."""
    expected = OTHER_CLIENTS[name]
    classes = [cls for cls in exported(importlib.import_module(name)) if cls.__name__ != "Error"]
    assert {cls.__name__ for cls in classes} == set(expected)
    for cls in classes:
        err = valid(normalize(cls.__new__(cls)))
        assert err.code == expected[cls.__name__], cls
        assert err.retryable is (
            err.code == "upstream.unavailable"
            or (err.code == "upstream.invalid_response" and "Redirect" not in cls.__name__)
        ), cls


def test_unknown_exceptions_are_not_this_adapters() -> None:
    """An exception of no HTTP client module is left to the caller."""
    assert adapter.normalize(ValueError("x")) is None
    assert adapter.normalize(TimeoutError()) is None


def test_an_httpx_package_exception_of_no_listed_class_is_left_to_the_caller() -> None:
    """A class of the httpx packages that is none of ``CLASSES`` (httpx2's WebSocket errors
    are such; they need wsproto, so a class of that module's name is made here): not read
    as an HTTP failure, and the general path names it."""

    class WebSocketDisconnect(Exception):
        pass

    WebSocketDisconnect.__module__ = "httpx2.websockets._exceptions"
    exc = WebSocketDisconnect("closed 1011")
    assert adapter.normalize(exc) is None
    err = valid(normalize(exc))
    assert err.code == "harness.internal_error"
    assert err.upstream["exception"].startswith("httpx2.websockets._exceptions.")
    assert err.upstream["exception"].endswith(".WebSocketDisconnect")


def test_the_request_behind_an_exception_is_read_without_trusting_it() -> None:
    """The request an exception carries: httpcore's (bytes method, a URL of bytes) gives the
    method and no host; a requests ``PreparedRequest`` whose URL cannot be parsed (set by
    hand here: requests refuses to build one) gives the method and no host either."""
    import httpcore
    import httpx

    raw = httpcore.Request(b"POST", "https://api.example.test/v1/chat")
    err = valid(normalize(httpx.ConnectError("refused", request=raw)))  # type: ignore[arg-type]
    assert (err.code, err.upstream["method"]) == ("upstream.unavailable", "POST")
    assert "host" not in err.upstream
    assert err.detail == "ConnectError: refused"

    prepared = requests.Request("GET", "https://api.example.test/v1").prepare()
    prepared.url = "http://[::1/v1/models"  # an unclosed IPv6 literal: urlsplit refuses it
    exc = requests.exceptions.ConnectionError("connection refused", request=prepared)
    err = valid(normalize(exc))
    assert (err.code, err.upstream["method"]) == ("upstream.unavailable", "GET")
    assert "host" not in err.upstream


# -- (b) real clients made to fail ---------------------------------------------------------------


class Server:
    """A local TCP server whose connections get ``answer`` (None: read and hold them)."""

    def __init__(self, answer: bytes | None, *, close: bool = False) -> None:
        self.answer = answer
        self.close = close
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port: int = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.stopped = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        """Accept connections until stopped."""
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with contextlib.suppress(OSError):
                conn.settimeout(2)
                conn.recv(65536)
                if self.answer is not None:
                    conn.sendall(self.answer)
            if self.close or self.answer is not None:
                conn.close()
            else:
                self.held.append(conn)

    def stop(self) -> None:
        """Close the listening socket and every held connection."""
        self.stopped = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(2)
        for conn in self.held:
            conn.close()


@contextlib.contextmanager
def serving(answer: bytes | None, *, close: bool = False) -> Iterator[int]:
    """A running ``Server``'s port."""
    server = Server(answer, close=close)
    try:
        yield server.port
    finally:
        server.stop()


def test_refused_connection_is_unavailable_with_method_and_host_only(
    lib: Any, closed_port: int
) -> None:
    """ConnectError: retryable, the host is kept, the path and the query (a key) are not."""
    exc = raised(lambda: lib.post(f"http://127.0.0.1:{closed_port}/v1/chat?key={KEY}", json={}))
    assert type(exc).__name__ == "ConnectError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.advice) == ("upstream.unavailable", True, "retry")
    assert err.upstream["code"] == "connection_error"
    assert err.upstream["method"] == "POST"
    assert err.upstream["host"] == "127.0.0.1"
    assert err.upstream["provider"] == "http"
    assert err.upstream["exception"] == f"{lib.__name__}.ConnectError"
    assert err.upstream["cause"].startswith("httpcore")
    assert err.__cause__ is exc
    assert "/v1/chat" not in err.to_json()
    assert not leaks(err)


def test_silent_server_gives_a_read_timeout(lib: Any) -> None:
    """ReadTimeout: upstream.unavailable, retryable, upstream.code timeout."""
    with serving(None) as port:
        exc = raised(lambda: lib.post(f"http://127.0.0.1:{port}/", json={}, timeout=0.2))
    assert type(exc).__name__ == "ReadTimeout"
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.upstream["code"]) == (
        "upstream.unavailable",
        True,
        "timeout",
    )
    assert err.detail == "ReadTimeout: timed out (POST 127.0.0.1)"


def test_pool_timeout_is_a_timeout(lib: Any) -> None:
    """PoolTimeout: no free connection in time (one connection, held by another request)."""
    with serving(None) as port:
        timeout = lib.Timeout(1.0, pool=0.05)
        with lib.Client(limits=lib.Limits(max_connections=1), timeout=timeout) as client:
            holder = threading.Thread(
                target=lambda: raised(lambda: client.get(f"http://127.0.0.1:{port}/"))
            )
            holder.start()
            time.sleep(0.2)
            exc = raised(lambda: client.get(f"http://127.0.0.1:{port}/"))
            holder.join(5)
    assert type(exc).__name__ == "PoolTimeout"
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.upstream["code"]) == (
        "upstream.unavailable",
        True,
        "timeout",
    )


def test_server_closing_the_connection_is_a_remote_protocol_error(lib: Any) -> None:
    """RemoteProtocolError ("Server disconnected"): the server's fault, retryable."""
    with serving(None, close=True) as port:
        exc = raised(lambda: lib.get(f"http://127.0.0.1:{port}/"))
    assert type(exc).__name__ == "RemoteProtocolError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.upstream["code"]) == (
        "upstream.unavailable",
        True,
        "connection_error",
    )


def test_proxy_refusing_the_tunnel_is_a_proxy_error(lib: Any) -> None:
    """ProxyError: the proxy answered CONNECT with 403; the provider is named by the host."""
    answer = b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n"
    with serving(answer) as port, lib.Client(proxy=f"http://127.0.0.1:{port}") as client:
        exc = raised(lambda: client.get("https://api.openai.com/v1/models"))
    assert type(exc).__name__ == "ProxyError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.unavailable", True)
    assert err.upstream["provider"] == "openai"
    assert err.upstream["host"] == "api.openai.com"


def test_async_client_failures_read_the_same(lib: Any, closed_port: int) -> None:
    """The async client's ConnectError gives the same error as the sync one."""

    async def call() -> None:
        async with lib.AsyncClient() as client:
            await client.post(f"http://127.0.0.1:{closed_port}/", json={})

    exc = raised(lambda: asyncio.run(call()))
    err = valid(normalize(exc))
    assert (err.code, err.upstream["code"], err.upstream["method"]) == (
        "upstream.unavailable",
        "connection_error",
        "POST",
    )


def mock_client(lib: Any, handler: Callable[[Any], Any], **options: Any) -> Any:
    """A real client over a mock transport (the request never leaves the process)."""
    return lib.Client(transport=lib.MockTransport(handler), **options)


def test_redirect_loop_is_an_invalid_response_not_retried(lib: Any) -> None:
    """TooManyRedirects: the server's answer is wrong, and waiting does not fix a loop."""

    def loop(request: Any) -> Any:
        return lib.Response(302, headers={"location": str(request.url)})

    with mock_client(lib, loop, follow_redirects=True, max_redirects=3) as client:
        exc = raised(lambda: client.get("https://gateway.example/v1/models"))
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.advice) == ("upstream.invalid_response", False, "stop")
    assert err.upstream["host"] == "gateway.example"


def test_undecodable_body_is_a_retryable_invalid_response(lib: Any) -> None:
    """DecodingError: a gzip header over a body that is not gzip."""

    def broken(request: Any) -> Any:
        return lib.Response(200, headers={"content-encoding": "gzip"}, content=b"not gzip")

    with mock_client(lib, broken) as client:
        exc = raised(lambda: client.get("https://gateway.example/"))
    assert type(exc).__name__ == "DecodingError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.invalid_response", True)


def test_sse_error_of_httpx2_is_an_invalid_response() -> None:
    """httpx2's SSEError: an SSE call answered by an HTML page (content type not SSE)."""
    import httpx2

    def page(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/html"}, content=b"<html>")

    def listen() -> None:
        with mock_client(httpx2, page) as client, client.sse("https://api.openai.com/v1/x") as es:
            list(es)

    exc = raised(listen)
    assert type(exc).__name__ == "SSEError"
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("upstream.invalid_response", True)
    assert err.upstream["provider"] == "openai"


def streaming(lib: Any) -> Callable[[Any], Any]:
    """A handler answering with a one-shot streamed body."""

    def handler(request: Any) -> Any:
        def chunks() -> Iterator[bytes]:
            yield b"abc"

        return lib.Response(200, content=chunks())

    return handler


def test_caller_mistakes_are_internal_errors(lib: Any) -> None:
    """Misused streams, bad URLs, unsupported schemes, cookie conflicts, illegal headers."""
    mistakes: dict[str, Callable[[], object]] = {}

    def consumed() -> None:
        with (
            mock_client(lib, streaming(lib)) as client,
            client.stream("GET", "https://x.example/") as r,
        ):
            list(r.iter_bytes())
            list(r.iter_bytes())

    def not_read() -> None:
        with (
            mock_client(lib, streaming(lib)) as client,
            client.stream("GET", "https://x.example/") as r,
        ):
            r.content  # noqa: B018 - reading it is the mistake

    def request_not_read() -> None:
        def body() -> Iterator[bytes]:
            yield b"a"

        lib.Request("POST", "https://x.example/", content=body()).content  # noqa: B018

    def conflict() -> None:
        cookies = lib.Cookies()
        cookies.set("a", "1", domain="x.example")
        cookies.set("a", "2", domain="y.example")
        cookies.get("a")

    mistakes["StreamConsumed"] = consumed
    mistakes["ResponseNotRead"] = not_read
    mistakes["RequestNotRead"] = request_not_read
    mistakes["CookieConflict"] = conflict
    mistakes["InvalidURL"] = lambda: lib.get("http://[::1/")
    mistakes["UnsupportedProtocol"] = lambda: lib.get("ftp://example.com/")
    with serving(None, close=True) as port:
        mistakes["LocalProtocolError"] = lambda: lib.post(
            f"http://127.0.0.1:{port}/", headers={"x-bad": "a\r\nb"}
        )
        for name, action in mistakes.items():
            exc = raised(action)
            assert type(exc).__name__ == name
            err = valid(normalize(exc))
            assert (err.code, err.retryable, err.advice) == (
                "harness.internal_error",
                False,
                "stop",
            )
            assert "code" not in err.upstream


# -- HTTPStatusError: the response decides ------------------------------------------------------

ENVOY_OVERFLOW = "upstream connect error or disconnect/reset before headers. reset reason: overflow"


def status_error(lib: Any, url: str, status: int, body: bytes, **headers: str) -> BaseException:
    """The HTTPStatusError a real client raises for this response."""

    def handler(request: Any) -> Any:
        return lib.Response(status, headers=headers, content=body)

    with mock_client(lib, handler) as client:
        response = client.post(url, json={})
    return raised(response.raise_for_status)


def test_status_error_with_an_openai_body_goes_to_the_openai_adapter(lib: Any) -> None:
    """A body of a known shape is read by its adapter, with the request's method and host."""
    body = (
        b'{"error":{"message":"Rate limit reached. Please try again in 1.5s.",'
        b'"code":"rate_limit_exceeded"}}'
    )
    exc = status_error(lib, f"https://api.groq.com/openai/v1/chat/completions?k={KEY}", 429, body)
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.retry_after) == ("upstream.rate_limited", True, 1.5)
    assert err.upstream["provider"] == "openai"
    assert (err.upstream["method"], err.upstream["host"]) == ("POST", "api.groq.com")
    assert err.upstream["exception"] == f"{lib.__name__}.HTTPStatusError"
    assert not leaks(err)


def test_status_error_with_a_gateway_page_is_named_by_the_host(lib: Any) -> None:
    """A page of no known shape: the host names the provider, the title is the detail."""
    page = b"<html><head><title>503 Service Temporarily Unavailable</title></head></html>"
    url = "https://my-resource.openai.azure.com/openai/deployments/d/chat/completions"
    exc = status_error(lib, url, 503, page, **{"retry-after": "7", "content-type": "text/html"})
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.retry_after) == ("upstream.unavailable", True, 7.0)
    assert err.detail == "openai: HTTP 503: 503 Service Temporarily Unavailable"
    assert err.upstream["provider"] == "openai"
    assert "<html>" not in err.to_json()


def test_status_error_of_an_unread_stream_is_read_from_its_status(lib: Any) -> None:
    """A streamed response that was not read: no I/O in the normalizer, the status decides."""
    with (
        mock_client(lib, lambda request: lib.Response(429, content=iter([b"{}"]))) as client,
        client.stream("POST", "https://api.anthropic.com/v1/messages") as response,
    ):
        exc = raised(response.raise_for_status)
        err = valid(normalize(exc))
        assert not response.is_stream_consumed
    assert (err.code, err.retryable) == ("upstream.rate_limited", True)
    assert err.upstream["provider"] == "anthropic"
    assert err.detail == "anthropic: HTTP 429 with an empty body"


def test_status_error_carrying_a_harness_error_is_read_as_it_is(lib: Any) -> None:
    """A problem+json body from another harness comes back as its own typed error."""
    problem = {
        "type": "https://agenterrors.org/problems/harness-error",
        "code": "loop.max_turns_exceeded",
        "title": "Maximum Turns Exceeded",
    }
    exc = status_error(lib, "https://agent.example/run", 422, json.dumps(problem).encode())
    err = valid(normalize(exc))
    assert err.code == "loop.max_turns_exceeded"


def test_requests_http_error_is_read_from_its_response() -> None:
    """requests: raise_for_status through a real Session; the body and headers decide."""

    class Replying(requests.adapters.BaseAdapter):
        def send(self, request: Any, *args: Any, **kwargs: Any) -> requests.Response:
            response = requests.Response()
            response.status_code = 503
            response.headers.update({"content-type": "text/plain", "retry-after": "3"})
            response._content = ENVOY_OVERFLOW.encode()
            response.request = request
            response.url = request.url
            return response

        def close(self) -> None:
            return None

    with requests.Session() as session:
        session.mount("https://", Replying())
        response = session.post(f"https://api.anthropic.com/v1/messages?key={KEY}", json={})
        exc = raised(response.raise_for_status)
    err = valid(normalize(exc))
    assert (err.code, err.retryable, err.retry_after) == ("upstream.overloaded", True, 3.0)
    assert err.upstream["gateway"] == "envoy"
    assert err.upstream["provider"] == "anthropic"
    assert err.upstream["exception"] == "requests.exceptions.HTTPError"
    assert not leaks(err)


def test_requests_connection_failures(closed_port: int) -> None:
    """requests: a refused connection and a read timeout through a real Session."""
    with requests.Session() as session:
        url = f"http://127.0.0.1:{closed_port}/x?sig=plainsecret&key={KEY}"
        refused = raised(lambda: session.get(url))
        with serving(None) as port:
            slow = raised(lambda: session.get(f"http://127.0.0.1:{port}/", timeout=0.2))
    err = valid(normalize(refused))
    assert (err.code, err.upstream["code"], err.upstream["host"]) == (
        "upstream.unavailable",
        "connection_error",
        "127.0.0.1",
    )
    assert "sig=plainsecret" in str(refused)  # requests prints the URL it failed on
    assert "plainsecret" not in err.to_json()
    assert not leaks(err)
    err = valid(normalize(slow))
    assert (err.code, err.upstream["code"]) == ("upstream.unavailable", "timeout")


# -- the same cassettes through the openai SDK ---------------------------------------------------

CHAT = "/chat/completions"
SDK_SCENARIOS = [
    s
    for s in SCENARIOS
    if s.url
    and (urlsplit(s.url).path.endswith(CHAT) or urlsplit(s.url).path == "/api/generate")
    and not s.stream
]


def sdk_error(s: Scenario) -> HarnessError:
    """Replay ``s`` through the openai SDK client and normalize what it raises."""
    assert s.url is not None
    parts = urlsplit(s.url)
    query = dict(parse_qsl(parts.query))
    with use_cassette(s.path):
        if parts.path.endswith(CHAT):
            base = urlunsplit((parts.scheme, parts.netloc, parts.path[: -len(CHAT)], "", ""))
            request: dict[str, Any] = {"extra_query": query} if query else {}
            exc = raised(
                lambda: _replay_calls.call(
                    "openai", "chat.completions.create", base_url=base, request=request
                )
            )
        else:  # Ollama's native endpoint, through the SDK's generic post
            client = openai.OpenAI(
                api_key="sk-test-replay",
                base_url=f"{parts.scheme}://{parts.netloc}",
                max_retries=0,
            )
            exc = raised(lambda: client.post(parts.path, cast_to=object, body={"model": "m"}))
    assert isinstance(exc, openai.APIStatusError)
    return valid(normalize(exc))


def test_every_chat_completions_cassette_is_compared() -> None:
    """The comparison covers the OpenAI-compatible servers and the gateways in front of them."""
    names = {s.name for s in SDK_SCENARIOS}
    assert len(names) >= 20
    assert {
        "vllm_context_length_400",
        "ollama_model_not_found_404",
        "nginx_504_gateway_timeout",
    } <= names


@pytest.mark.parametrize("s", SDK_SCENARIOS, ids=[s.name for s in SDK_SCENARIOS])
def test_openai_sdk_and_httpx_give_the_same_answer(s: Scenario) -> None:
    """The same response read through the openai SDK and through httpx agrees."""
    through_httpx = run(s).error
    assert through_httpx is not None
    through_sdk = sdk_error(s)
    assert (through_sdk.code, through_sdk.retryable, through_sdk.retry_after) == (
        through_httpx.code,
        through_httpx.retryable,
        through_httpx.retry_after,
    )
    assert through_sdk.code == s.expect["code"]


# -- (c) the cassettes' responses as plain bytes and dicts ---------------------------------------


@pytest.mark.parametrize("path", HTTP_CASSETTES, ids=[p.stem for p in HTTP_CASSETTES])
def test_from_response_agrees_with_the_cassette(path: Path) -> None:
    """from_response on bytes, text and parsed JSON gives the cassette's code and retry facts."""
    s = load(path)
    recorded = cassette(path)
    status, headers, body = recorded.status, recorded.headers, recorded.body
    parsed = json.loads(body) if body.lstrip().startswith("{") and status >= 400 else None
    for given_body in (body.encode(), body, parsed):
        if given_body is None:
            continue
        err = valid(from_response(status, headers, given_body))
        assert err.code == s.expect["code"]
        assert err.retryable is s.expect["retryable"]
        assert err.advice == s.expect["advice"]
        assert err.retry_after == s.expect.get("retry_after")
        upstream = s.expect["upstream"]
        # Without a request there is no host to name the provider of a page.
        wanted = "http" if "gateway" in upstream else upstream["provider"]
        assert err.upstream["provider"] == wanted
        for name in ("status", "code", "gateway", "reset_reason", "title"):
            if name in upstream:
                assert err.upstream[name] == upstream[name], name


@pytest.mark.parametrize("path", HTTP_CASSETTES, ids=[p.stem for p in HTTP_CASSETTES])
def test_diagnose_and_check_find_nothing_in_plain_http(path: Path) -> None:
    """A raw HTTP body is no SDK result: diagnose gives None and check returns it untouched."""
    body = cassette(path).body
    assert diagnose(body, provider="http") is None
    assert check(body, provider="http") is body
    assert adapter.diagnose(body, None) is None
    assert adapter.diagnose_stream(body.splitlines(), None) is None
    assert adapter.looks_like(parse(body)) is False


def parse(body: str) -> Any:
    """``body`` as JSON, or ``None``."""
    try:
        return json.loads(body)
    except ValueError:
        return None


# -- responses of no known shape -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "headers", "gateway"),
    [
        (
            "<html><head><title>502</title></head><hr><center>openresty/1.21</center></html>",
            {},
            "openresty",
        ),
        ('<html><div id="cf-wrapper">x</div></html>', {}, "cloudflare"),
        ("<html><title>Error 404 (Not Found)!!1</title></html>", {}, "google_front_end"),
        ("no healthy upstream", {"content-type": "text/plain"}, "envoy"),
        ("<html><title>502 Bad Gateway</title></html>", {"server": "awselb/2.0"}, None),
    ],
)
def test_gateway_is_read_from_the_page(
    body: str, headers: dict[str, str], gateway: str | None
) -> None:
    """Footers, Cloudflare's template, Google's '!!1' titles and Envoy's wording."""
    err = valid(from_response(503, headers, body))
    assert err.upstream.get("gateway") == gateway
    assert err.code == "upstream.unavailable"


@pytest.mark.parametrize(
    ("status", "body", "code", "detail"),
    [
        (
            504,
            b'{"message": "Endpoint request timed out"}',
            "upstream.unavailable",
            "http: HTTP 504: Endpoint request timed out",
        ),
        (404, b'{"detail": "Not Found"}', "upstream.invalid_request", "http: HTTP 404: Not Found"),
        (
            422,
            b'[{"detail": [{"loc": ["body"], "msg": "field required"}]}]',
            "upstream.invalid_request",
            None,
        ),
        (500, b"", "upstream.unavailable", "http: HTTP 500 with an empty body"),
        (503, b"<!-- only markup -->", "upstream.unavailable", "http: HTTP 503 (markup)"),
        (
            413,
            b"<html><body>too big</body></html>",
            "context.window_exceeded",
            "http: HTTP 413 (an HTML page)",
        ),
        (
            200,
            b'{"ok": true}',
            "upstream.invalid_response",
            "http: HTTP 200: a success response, it reports no error",
        ),
        (302, b"", "upstream.invalid_response", None),
        (None, b"", "upstream.unavailable", "http: a response with an empty body"),
    ],
)
def test_bodies_of_no_known_shape(
    status: int | None, body: bytes, code: str, detail: str | None
) -> None:
    """JSON of other shapes, empty bodies, markup, pages, and statuses that are no errors."""
    err = valid(from_response(status, {}, body))
    assert err.code == code
    assert err.upstream["provider"] == "http"
    if detail is not None:
        assert err.detail == detail


def test_the_detail_names_the_first_line_of_text_however_far_down() -> None:
    """A plain-text body whose text starts after many blank lines (made up here, in the
    shape of Envoy's reply): the detail quotes its first line, the message the whole text;
    before, blank lines past the 50th left the detail ending in an empty quote."""
    text = "\r\n" * 60 + "upstream connect error or disconnect/reset before headers\nline 2"
    err = valid(from_response(503, {}, text.encode()))
    assert err.detail == (
        "http: HTTP 503: upstream connect error or disconnect/reset before headers"
    )
    assert err.upstream["message"] == (
        "upstream connect error or disconnect/reset before headers\nline 2"
    )
    long_line = valid(from_response(500, {}, "x" * 2000))
    assert long_line.detail is not None
    assert len(long_line.detail) <= len("http: HTTP 500: ") + 301


def test_a_success_given_as_an_error_uses_the_1xx_to_3xx_row() -> None:
    """The TABLE row for statuses that are no errors: invalid response, not retryable.

    Asking again cannot turn a success into the error the caller expected; the facade
    answers a 2xx the same way for every provider.
    """
    for status in (101, 204, 304):
        err = valid(adapter.from_response(status, {}, ""))
        assert (err.code, err.retryable) == ("upstream.invalid_response", False)
    for provider in ("openai", "anthropic", "google", None):
        err = valid(from_response(200, {}, "{}", provider=provider))
        assert (err.code, err.retryable) == ("upstream.invalid_response", False)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("abc", None), ("-5", None), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0), ("12", 12.0)],
)
def test_retry_after_of_a_gateway_page(value: str, expected: float | None) -> None:
    """Retry-After: malformed or negative is ignored, a past date means now."""
    err = valid(from_response(503, {"Retry-After": value}, "<html><title>x</title></html>"))
    assert err.retry_after == expected


@pytest.mark.parametrize(
    ("host", "provider"),
    [
        ("api.openai.com", "openai"),
        ("my-res.openai.azure.com", "openai"),
        ("API.ANTHROPIC.COM.", "anthropic"),
        ("generativelanguage.googleapis.com", "google"),
        ("us-central1-aiplatform.googleapis.com", "google"),
        ("aiplatform.googleapis.com", "google"),
        ("evil-api.openai.com.example", None),
        ("evil-api.openai.com", None),
        ("openai.azure.com", None),
        ("", None),
        (None, None),
    ],
)
def test_provider_for_host(host: str | None, provider: str | None) -> None:
    """Only the providers' own API hosts name a provider."""
    assert adapter._provider_for_host(host) == provider


def test_detect_skips_an_adapter_that_cannot_be_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build without an adapter still reads responses: that shape falls back to http."""
    from normalize_errors.providers import _routing

    body = {"error": {"message": "Bad gateway.", "code": 502}}
    headers = {"anthropic-ratelimit-requests-limit": "5"}
    assert detect(body, {}) == "openai"
    real = _routing.adapter

    def missing(name: str) -> Any:
        if name in ("openai", "anthropic"):
            raise ImportError(f"no {name} adapter in this build")
        return real(name)

    monkeypatch.setattr(_routing, "adapter", missing)
    assert detect(body, {}) == "http"
    assert detect(None, headers) == "http"
    err = valid(from_response(502, {}, json.dumps(body)))
    assert (err.code, err.upstream["provider"]) == ("upstream.unavailable", "http")
    assert err.detail == "http: HTTP 502: Bad gateway."
