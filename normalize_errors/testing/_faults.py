"""Fault injection: serve recorded failures to real SDK clients from the real transport.

``Faults`` patches the real transports of httpx and httpx2 (``HTTPTransport.handle_request``
and ``AsyncHTTPTransport.handle_async_request``) process-wide, so every client built while
it is active, by your test or by the code under test, gets its answers from a script instead
of the network. It also replaces ``time.sleep``, ``asyncio.sleep`` and ``anyio.sleep`` with
versions that note the wait and return at once, so the SDKs' own retry back-off and
tenacity's waits cost no time and can be asserted on.

The sleeps are skipped only for the code that runs in the context that started ``Faults``:
that thread, the asyncio tasks it starts, and the threads that carry its context along
(``asyncio.to_thread``, anyio's worker threads, ``contextvars.copy_context().run``). Any
other thread, such as a library's background worker (the OpenAI Agents SDK's trace
exporter polls with ``time.sleep(0.2)``), sleeps for real and its waits are not noted: it
neither spins nor fills ``waits`` with sleeps the code under test never asked for.
"""

from __future__ import annotations

import contextvars
import importlib
import importlib.util
import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ._success import api_of, success_events, success_response, wants_stream

__all__ = ["Faults", "Reply", "Request"]

_DROP_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding", "connection"})
_CUT_MESSAGE = (
    "peer closed connection without sending complete message body (cut by normalize-errors)"
)
_ACTIVE: list[Faults] = []
_OWNER: contextvars.ContextVar[Faults | None] = contextvars.ContextVar(
    "normalize_errors_faults", default=None
)
"""The ``Faults`` whose sleeps this context skips: set by ``start`` in the context that
called it, inherited by the tasks and threads that copy that context, unseen elsewhere."""
_INHERITED = object()  # what _patch found when the attribute was not set on the owner itself


class Request:
    """One request the code under test sent: method, URL, lower-case headers and body bytes."""

    def __init__(self, method: str, url: str, headers: dict[str, str], content: bytes) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.content = content

    @property
    def path(self) -> str:
        """The URL's path (``/v1/messages``)."""
        return urlsplit(self.url).path

    @property
    def host(self) -> str:
        """The URL's host name."""
        return urlsplit(self.url).hostname or ""

    def json(self) -> Any:
        """The body parsed as JSON, or None if it is not JSON."""
        try:
            return json.loads(self.content)
        except ValueError:
            return None

    @property
    def api(self) -> str | None:
        """``chat``, ``responses``, ``messages``, ``gemini`` or None (see ``Faults``)."""
        return api_of(self.path)

    @property
    def stream(self) -> bool:
        """Whether the request asked for a stream."""
        return wants_stream(self.path, self.json())

    def __repr__(self) -> str:
        return f"Request({self.method} {self.url})"


class Reply:
    """A response to serve: a status, headers and a body.

    ``body`` may be bytes, text, or a JSON-ready value (sent as ``application/json`` unless
    ``headers`` names a content type). ``label`` names it in ``Faults.served``.
    """

    def __init__(
        self,
        status: int,
        headers: Mapping[str, Any] | None = None,
        body: Any = b"",
        *,
        label: str | None = None,
    ) -> None:
        self.status = status
        self.headers: list[tuple[str, str]] = []
        for name, value in (headers or {}).items():
            for one in value if isinstance(value, list) else [value]:
                self.headers.append((name.lower(), str(one)))
        if isinstance(body, bytes):
            self.body = body
        elif isinstance(body, str):
            self.body = body.encode("utf-8")
        else:
            self.body = json.dumps(body).encode("utf-8")
            if not any(name == "content-type" for name, _ in self.headers):
                self.headers.append(("content-type", "application/json"))
        self.label = label or f"HTTP {status}"

    @classmethod
    def from_cassette(cls, source: str | Path) -> list[Reply]:
        """The responses of a cassette, in order: a shipped one by name or a file of yours.

        ``source`` is a shipped cassette's name (``"anthropic/overloaded_529"``) or the path
        of a vcrpy cassette (``.yaml``), such as one ``normalize-errors record`` wrote.

        Raises:
            CassetteError: (a ``ValueError``) the file is refused: larger than the cap
                (``normalize_errors.replay.MAX_BYTES``), YAML anchors or aliases, a body that
                is not text, or no interactions; the message names the file.
        """
        from .._wrapping._cassette import CassetteError
        from .._wrapping._cassette import read as read_cassette
        from ..replay import find

        path = find(source)
        data = read_cassette(path)
        interactions = data.get("interactions")
        if not interactions:
            raise CassetteError(path, "no interactions to serve")
        meta = data.get("metadata") or {}
        label = (
            f"{meta['provider']}/{meta.get('name', path.stem)}"
            if "provider" in meta
            else str(source)
        )
        replies = []
        for item in interactions:
            response = item["response"]
            headers = {
                k: v
                for k, v in (response.get("headers") or {}).items()
                if k.lower() not in _DROP_HEADERS
            }
            body = (response.get("body") or {}).get("string") or b""
            replies.append(cls(int(response["status"]["code"]), headers, body, label=label))
        return replies

    def _answer(self, request: Request, text: str) -> _Answer:
        return _Answer(self.status, list(self.headers), [self.body], cut=False, label=self.label)


class _Success:
    label = "success"

    def __init__(self, text: str | None) -> None:
        self.text = text

    def _answer(self, request: Request, text: str) -> _Answer:
        content_type, chunks = success_response(request.path, request.json(), self.text or text)
        return _Answer(200, [("content-type", content_type)], chunks, cut=False, label="success")


class _Cut:
    label = "cut"

    def __init__(self, after: int) -> None:
        self.after = after

    def _answer(self, request: Request, text: str) -> _Answer:
        events = success_events(request.path, request.json(), text)
        if not events:
            raise ValueError(f"cut_stream(): no stream format is known for {request.url}")
        chunks = events[: self.after]
        return _Answer(200, [("content-type", "text/event-stream")], chunks, cut=True, label="cut")


class _Answer:
    def __init__(
        self,
        status: int,
        headers: list[tuple[str, str]],
        chunks: list[bytes],
        *,
        cut: bool,
        label: str,
    ) -> None:
        self.status = status
        self.headers = headers
        self.chunks = chunks
        self.cut = cut
        self.label = label


Step = Reply | _Success | _Cut


def _resolve(source: Any, headers: Mapping[str, Any] | None, body: Any) -> list[Reply]:
    if isinstance(source, Reply):
        return [source]
    if isinstance(source, int) and not isinstance(source, bool):
        return [Reply(source, headers, b"" if body is None else body)]
    if isinstance(source, (str, Path)):
        return Reply.from_cassette(source)
    raise TypeError(
        f"fail(): expected a cassette name or path, a status or a Reply; got {source!r}"
    )


class Faults:
    """A script of responses served to every HTTP request, and a record of what was asked.

    Build the script with ``fail`` (a shipped cassette by name, your own cassette file, or an
    inline status, headers and body), ``succeed`` and ``cut_stream``; each request takes the
    next step. Once the script is used up, every request gets a success that fits the API
    it called (a chat completion, a Responses object, a Messages object, a Gemini response,
    or their streams) whose text is ``text``; unknown APIs get ``{}``.

    Use it as the pytest fixture ``llm_faults``, or as a context manager anywhere:

    ```python
    with Faults() as faults:
        faults.fail("anthropic/overloaded_529", times=2)
        ...                          # code that calls the API
    assert faults.calls == 3 and len(faults.waits) == 2
    ```

    Attributes:
        requests: every request received, in order (``Request``).
        waits: every wait asked for while active, in seconds (sleeps of 0 are not noted), by
            the code that runs in the context that started it: its thread, the asyncio tasks
            started from it and the threads that carry its context (``asyncio.to_thread``,
            anyio's worker threads). Other threads (a library's background worker, a thread
            pool's worker, which does not copy the context) sleep for real and are not noted.
        served: what each request got: a cassette's name, ``HTTP <status>``, ``success``, ``cut``.
        strict: when True (the default), ``check()`` fails if a scripted step was never served.
    """

    def __init__(self, *, text: str = "Hello!", strict: bool = True) -> None:
        self.text = text
        self.strict = strict
        self.requests: list[Request] = []
        self.waits: list[float] = []
        self.served: list[str] = []
        self._script: list[Step] = []
        self._forever: list[Step] = []
        self._lock = threading.Lock()
        self._undo: list[tuple[Any, str, Any]] = []

    # -- the script ------------------------------------------------------------------------

    def _add(self, steps: list[Step], times: int | None) -> Faults:
        with self._lock:
            if times is None:
                self._forever = steps
            elif times < 0:
                raise ValueError("times must be 0 or more, or None for every request")
            else:
                self._script.extend(steps * times)
        return self

    def fail(
        self,
        source: str | Path | int | Reply,
        *,
        times: int | None = 1,
        headers: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> Faults:
        """Answer the next ``times`` requests with a failure.

        ``times=None`` answers every request once the steps scripted before are served.

        ``source`` is a shipped cassette's name (``"openai/rate_limit_tpm_429"``), the path of
        a cassette file (every interaction in it is served, in order), a ``Reply``, or an
        HTTP status given with ``headers`` and ``body``. Returns the injector, for chaining.
        """
        return self._add(list(_resolve(source, headers, body)), times)

    def succeed(self, *, times: int | None = 1, text: str | None = None) -> Faults:
        """Answer the next ``times`` requests with a success fitting the API called."""
        return self._add([_Success(text)], times)

    def cut_stream(self, *, after: int = 2, times: int | None = 1) -> Faults:
        """Start a successful stream, then drop the connection after ``after`` events.

        The client sees the transport's own ``RemoteProtocolError`` while reading the
        stream, as when a proxy or the vendor cuts a long response.
        """
        return self._add([_Cut(after)], times)

    @property
    def calls(self) -> int:
        """How many requests were received."""
        return len(self.requests)

    @property
    def pending(self) -> int:
        """How many scripted steps were not served yet."""
        return len(self._script)

    def check(self) -> None:
        """Fail (``AssertionError``) if ``strict`` and a scripted step was never served."""
        if self.strict and self._script:
            labels = ", ".join(step.label for step in self._script)
            raise AssertionError(
                f"llm_faults: {len(self._script)} scripted response(s) never requested "
                f"({labels}); {self.calls} request(s) were made. Set strict = False to allow it."
            )

    def _next(self, request: Request) -> _Answer:
        with self._lock:
            self.requests.append(request)
            if self._script:
                step: Step = self._script.pop(0)
            elif self._forever:
                step = self._forever[(len(self.requests) - 1) % len(self._forever)]
            else:
                step = _Success(None)
        answer = step._answer(request, self.text)
        self.served.append(answer.label)
        return answer

    # -- patching ----------------------------------------------------------------------------

    def _wait(self, seconds: Any) -> None:
        try:
            value = float(seconds)
        except (TypeError, ValueError):
            return
        if value > 0:
            self.waits.append(value)

    def _patch(self, owner: Any, name: str, new: Any) -> None:
        self._undo.append((owner, name, vars(owner).get(name, _INHERITED)))
        setattr(owner, name, new)

    def start(self) -> Faults:
        """Patch the transports and the sleeps; ``stop()`` undoes it."""
        if _ACTIVE:
            raise RuntimeError("another Faults is already active")
        _ACTIVE.append(self)
        _OWNER.set(self)
        try:
            for name in ("httpx", "httpx2"):
                if importlib.util.find_spec(name) is not None:
                    self._patch_http(importlib.import_module(name))
            self._patch_sleeps()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Undo every patch (safe to call twice)."""
        while self._undo:
            owner, name, old = self._undo.pop()
            if old is _INHERITED:
                delattr(owner, name)
            else:
                setattr(owner, name, old)
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        if _OWNER.get() is self:
            _OWNER.set(None)

    def __enter__(self) -> Faults:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _patch_http(self, mod: Any) -> None:
        faults = self

        def record(request: Any) -> Request:
            headers = {k.lower(): v for k, v in request.headers.items()}
            return Request(request.method, str(request.url), headers, bytes(request.content))

        def handle_request(transport: Any, request: Any) -> Any:
            request.read()
            return _response(mod, faults._next(record(request)), is_async=False)

        async def handle_async_request(transport: Any, request: Any) -> Any:
            await request.aread()
            return _response(mod, faults._next(record(request)), is_async=True)

        self._patch(mod.HTTPTransport, "handle_request", handle_request)
        self._patch(mod.AsyncHTTPTransport, "handle_async_request", handle_async_request)

    def _patch_sleeps(self) -> None:
        import asyncio
        import time

        real_sleep = time.sleep

        def sleep(seconds: float) -> None:
            if _OWNER.get() is not self:  # another thread's own wait: sleep it
                real_sleep(seconds)
                return
            self._wait(seconds)

        self._patch(time, "sleep", sleep)
        self._patch(asyncio, "sleep", self._async_sleep(asyncio.sleep))
        if importlib.util.find_spec("anyio") is not None:
            anyio = importlib.import_module("anyio")
            self._patch(anyio, "sleep", self._async_sleep(anyio.sleep))

    def _async_sleep(self, real: Callable[..., Any]) -> Callable[..., Any]:
        """``real`` (``asyncio.sleep`` or ``anyio.sleep``) that notes the wait and yields to the
        loop once instead, in a task of the context that started this ``Faults``."""

        async def async_sleep(delay: float, *args: Any, **kwargs: Any) -> Any:
            if _OWNER.get() is not self:  # a task of another thread's loop: really wait
                return await real(delay, *args, **kwargs)
            self._wait(delay)
            return await real(0, *args, **kwargs)

        return async_sleep


def _response(mod: Any, answer: _Answer, *, is_async: bool) -> Any:
    """An httpx (or httpx2) response carrying ``answer``."""
    if not answer.cut:
        return mod.Response(answer.status, headers=answer.headers, content=b"".join(answer.chunks))
    chunks = answer.chunks
    stream: Any
    if is_async:

        class AsyncCut(mod.AsyncByteStream):  # type: ignore[misc]
            async def __aiter__(self) -> Any:
                for chunk in chunks:
                    yield chunk
                raise mod.RemoteProtocolError(_CUT_MESSAGE)

        stream = AsyncCut()
    else:

        class Cut(mod.SyncByteStream):  # type: ignore[misc]
            def __iter__(self) -> Any:
                yield from chunks
                raise mod.RemoteProtocolError(_CUT_MESSAGE)

        stream = Cut()
    return mod.Response(answer.status, headers=answer.headers, stream=stream)
