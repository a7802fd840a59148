"""The streams of a wrapped client: the same chunks, typed errors, a stop-reason check at the end.

The SDKs' own stream objects (openai's and anthropic's ``Stream``, ``AsyncStream`` and their
helpers' streams, subclasses included) are watched in place (``_watch_in_place``): the
generator in their ``_iterator`` is replaced by one that yields the same chunks and types
their errors, so the caller keeps the SDK's object. Any other iterable (Gemini's generators,
boto3's event streams) is proxied by a ``_Stream`` or ``_AsyncStream``. Only a checked
generating method's stream keeps its chunks (``_Watch``): the end-of-stream check folds them,
and an error raised in or at the end of it carries them as ``chunks``.
"""

from __future__ import annotations

import collections
import functools
import inspect
import weakref
from typing import Any, Final

from . import _facade
from ._exceptions import HarnessError
from ._http_wire import stream_error
from ._wrap import _fail, _Options, _Proxy

_SNAPSHOTS: Final = ("current_message_snapshot", "current_completion_snapshot")


def _stream_problem(
    target: Any, owner: Any, chunks: list[Any] | None, options: _Options, tools: Any
) -> HarnessError | None:
    """The failure a finished stream means: from its owner's snapshot, else its chunks."""
    if not options.check or not options.generating:
        return None
    from .providers._routing import provider_of_object

    for holder in (target, owner):
        for attr in _SNAPSHOTS:
            try:
                snapshot = getattr(holder, attr, None) if holder is not None else None
            except Exception:  # a snapshot property of a stream that never started
                snapshot = None
            if snapshot is not None:
                found = _facade.diagnose(snapshot, provider=options.provider, tools=tools)
                return _selected(found, options)
    name = options.provider or provider_of_object(owner if owner is not None else target)
    # Only an SDK resource's method is generating, and its module names the provider.
    if name is None and chunks:  # pragma: no cover
        name = provider_of_object(chunks[-1])
    if name is None or not chunks:
        return None
    return _selected(_facade.diagnose_stream(chunks, provider=name, tools=tools), options)


def _selected(err: HarnessError | None, options: _Options) -> HarnessError | None:
    if err is None or (options.codes is not None and err.problem.code not in options.codes):
        return None
    return err


class _Watch:
    """What a watched stream keeps: the tools offered, who made it and, for a checked
    generating stream only, the chunks so far (``None`` for every other stream: a byte,
    text or line stream holds none of what it yielded) and what ``_Tap`` saw of the events
    the SDK decoded (see ``saw``)."""

    __slots__ = ("__weakref__", "chunks", "done", "frame", "options", "owner", "passed", "tools")

    def __init__(self, options: _Options, tools: Any, owner: Any) -> None:
        self.options = options
        self.tools = tools
        self.owner = owner
        self.chunks: list[Any] | None = [] if options.check and options.generating else None
        self.done = False
        self.frame: str | None = None
        """The first error event the SDK decoded, as SSE text."""
        self.passed: collections.deque[str] | None = None
        """The data of the last events decoded while the SDK had yielded no chunk."""

    def kept(self, chunk: Any) -> Any:
        if self.chunks is not None:
            self.chunks.append(chunk)
            self.passed = None
        return chunk

    def saw(self, event: Any) -> None:
        """An event the SDK's SSE decoder gave its stream, before the SDK read it.

        Kept: the first error event (a data line whose JSON is an error object), and while
        the SDK has yielded no chunk the data of the last ``_PASSED`` events. An SDK skips
        events it does not expect (anthropic's reads only events named by an ``event:`` line,
        as relays that send bare ``data:`` lines do not name theirs): what it passed over is
        read at the end of the stream (``passed_over``). Each event costs a look for the word
        ``error``; nothing is kept once a chunk has come."""
        data = getattr(event, "data", None)
        if not isinstance(data, str):
            return
        if self.frame is None and "error" in data:
            text = _sse(data, getattr(event, "event", None))
            if stream_error(text) is not None:
                self.frame = text
        if self.chunks is not None and not self.chunks:
            if self.passed is None:
                self.passed = collections.deque(maxlen=_PASSED)
            self.passed.append(data)

    def passed_over(self, target: Any) -> HarnessError | None:
        """The failure in events the SDK decoded but did not raise or yield: an error event
        (read as ``from_response`` reads it in a 2xx stream), else, when the SDK yielded
        nothing, the final stop reason of the events it passed over."""
        from .providers._routing import provider_of_object

        options = self.options
        if self.frame is not None:
            headers = {"content-type": "text/event-stream"}
            err = _facade.from_response(200, headers, self.frame, provider=options.provider)
            if err.upstream.get("in_stream"):
                return _selected(err, options)
        if not self.passed or self.chunks:
            return None
        name = options.provider or provider_of_object(
            self.owner if self.owner is not None else target
        )
        events = "".join(_sse(data) for data in self.passed)
        found = _facade.diagnose_stream(events, provider=name, tools=self.tools)
        return _selected(found, options)

    def ended(self, target: Any) -> HarnessError | None:
        """The failure the end of the stream means, the first time it ends."""
        if self.done:
            return None
        self.done = True
        err = _stream_problem(target, self.owner, self.chunks, self.options, self.tools)
        if err is None and self.chunks is not None:
            err = self.passed_over(target)
            if err is None and not self.chunks:
                err = _selected(self.no_chunk(target), self.options)
        if err is not None:
            err.chunks = self.chunks
        return err

    def no_chunk(self, target: Any) -> HarnessError:
        """``upstream.invalid_response`` for a generating stream that ended without a chunk:
        no answer and no error (an empty body, a bare ``[DONE]``, events the SDK skips and that
        state no stop reason). Retryable, as the registry says: a gateway or proxy that cut
        the stream before its first event is the usual cause."""
        from ._code_classes import class_for_code
        from .providers._routing import provider_of_object

        name = self.options.provider or provider_of_object(
            self.owner if self.owner is not None else target
        )
        where = name or "upstream"
        skipped = sum(data.strip() != "[DONE]" for data in self.passed or ())
        upstream: dict[str, Any] = {"provider": where, "in_stream": True, "events_skipped": skipped}
        said = f" (after {skipped} event{'' if skipped == 1 else 's'} the SDK did not yield)"
        return class_for_code("upstream.invalid_response")(
            f"{where}: the stream ended before its first chunk{said if skipped else ''}: "
            "no answer and no error.",
            upstream=upstream,
        )


def _sse(data: str, name: str | None = None) -> str:
    """An event as server-sent event text: its ``event:`` line and one ``data:`` line per
    line of its data."""
    head = f"event: {name}\n" if name else ""
    return head + "".join(f"data: {line}\n" for line in data.split("\n")) + "\n"


_PASSED: Final = 64
"""How many events passed over before the first chunk a watch keeps (the last ones): a
stream's final stop reason is in its last events."""


class _Tap:
    """An SDK stream's SSE decoder (``_decoder`` of openai's and anthropic's streams), seen
    through: every event it decodes goes to the watch (``_Watch.saw``), then to the SDK. The
    watch is held weakly: a stream read to its end keeps none of its chunks."""

    __slots__ = ("_ne_decoder", "_ne_watch")

    def __init__(self, decoder: Any, watch: _Watch) -> None:
        self._ne_decoder = decoder
        self._ne_watch = weakref.ref(watch)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ne_decoder, name)

    def iter_bytes(self, iterator: Any) -> Any:
        held = self._ne_watch
        for event in self._ne_decoder.iter_bytes(iterator):
            watch = held()
            if watch is not None:
                watch.saw(event)
            yield event

    async def aiter_bytes(self, iterator: Any) -> Any:
        held = self._ne_watch
        async for event in self._ne_decoder.aiter_bytes(iterator):
            watch = held()
            if watch is not None:
                watch.saw(event)
            yield event


def _tap(stream: Any, watch: _Watch) -> None:
    """Put a ``_Tap`` on the decoder of ``stream`` (or of the raw stream a helper's stream
    reads, anthropic's ``MessageStream``) before its iteration starts: the SDK's generator
    looks its decoder up when it starts, and anthropic's iterates a copy of the stream made
    on first use, which takes the tap with it. Only a checked generating stream is tapped."""
    if watch.chunks is None:
        return
    raw = vars(stream).get("_raw_stream", stream)
    decoder = getattr(raw, "__dict__", {}).get("_decoder")
    if decoder is None or isinstance(decoder, _Tap) or not hasattr(decoder, "iter_bytes"):
        return
    raw._decoder = _Tap(decoder, watch)


def _watch_in_place(stream: Any, options: _Options, tools: Any, owner: Any) -> bool:
    """Watch an SDK stream (openai's and anthropic's ``Stream``, ``AsyncStream`` and their
    helpers' streams) in place: its iteration runs through the generator in its own
    ``_iterator``, which is replaced by one yielding the same chunks and typing its errors,
    and the events its decoder gives it pass a ``_Tap``. The stream stays the SDK's object:
    ``type()``, ``next()``, a subclass's methods and every member are its own. ``False``
    for a stream of any other shape (then it is proxied)."""
    inner = vars(stream).get("_iterator") if hasattr(stream, "__dict__") else None
    if _is_watched(inner):
        return True  # watched already (the same stream read twice)
    # anthropic 2.16 makes it on first use, on a copy of the stream (so that a subclass's
    # ``__init__`` has run): it is made below, once the tap is on the decoder the copy takes
    lazy = inner is None and isinstance(
        inspect.getattr_static(type(stream), "_iterator", None), functools.cached_property
    )
    if not (lazy or inspect.isgenerator(inner) or inspect.isasyncgen(inner)):
        return False
    # The generator holds the stream weakly: a strong reference would make a cycle (stream,
    # its ``_iterator``, the generator's frame), and a dropped stream would wait for the garbage
    # collector to close its response (anthropic 2.16 iterates a copy of itself for this reason).
    try:
        held = weakref.ref(stream)
    except TypeError:  # pragma: no cover - an SDK stream with __dict__ takes weak references
        return False
    watch = _Watch(options, tools, owner)
    _tap(stream, watch)
    if lazy:
        inner = stream._iterator  # a generator that has not started reads nothing
    if inspect.isasyncgen(inner):
        stream._iterator = _awatched(held, inner, watch)
    else:
        stream._iterator = _watched(held, inner, watch)
    return True


def _is_watched(inner: Any) -> bool:
    """Whether ``inner`` is the generator ``_watch_in_place`` put in a stream."""
    code = getattr(inner, "gi_code", None) or getattr(inner, "ag_code", None)
    return code is _watched.__code__ or code is _awatched.__code__


def _watched(stream: weakref.ref[Any], inner: Any, watch: _Watch) -> Any:
    """The chunks of ``inner`` (the generator of the stream ``stream`` refers to), its errors
    typed, the end checked. Closing this generator closes ``inner`` at once, as ``yield from``
    would: the SDK closes a stream's ``_iterator`` to stop it (anthropic's tool runner)."""
    while True:
        try:
            chunk = next(inner)
        except StopIteration:
            break
        except Exception as exc:
            failure = _fail(exc, watch.options, watch.chunks)
            if failure is exc:
                raise
        else:
            try:
                yield watch.kept(chunk)
            except GeneratorExit:
                inner.close()
                raise
            continue
        raise failure
    err = watch.ended(stream())
    if err is not None:
        raise err


async def _awatched(stream: weakref.ref[Any], inner: Any, watch: _Watch) -> Any:
    """The asynchronous twin of ``_watched``. Closing it closes ``inner`` before ``aclose()``
    returns (left to itself, a dropped async generator is closed later, when the event loop
    gets round to finalising it)."""
    while True:
        try:
            chunk = await inner.__anext__()
        except StopAsyncIteration:
            break
        except Exception as exc:
            failure = _fail(exc, watch.options, watch.chunks)
            if failure is exc:
                raise
        else:
            try:
                yield watch.kept(chunk)
            except GeneratorExit:
                await inner.aclose()
                raise
            continue
        raise failure
    err = watch.ended(stream())
    if err is not None:
        raise err


class _StreamState(_Proxy):
    """A proxied stream (a generator, or an object whose iteration the wrapper cannot watch
    in place) and its ``_Watch``."""

    __slots__ = ("_ne_iter", "_ne_watch")

    @classmethod
    def _ne_make(cls, target: Any, options: _Options, tools: Any = None, owner: Any = None) -> Any:
        proxy = super()._ne_make(target, options)
        object.__setattr__(proxy, "_ne_watch", _Watch(options, tools, owner))
        object.__setattr__(proxy, "_ne_iter", None)
        return proxy

    @property
    def _ne_chunks(self) -> list[Any] | None:
        chunks: list[Any] | None = self._ne_watch.chunks
        return chunks


class _Stream(_StreamState):
    """A wrapped synchronous stream: same chunks, typed errors, a stop-reason check at the end."""

    __slots__ = ()

    def __iter__(self) -> _Stream:
        return self

    def __next__(self) -> Any:
        watch: _Watch = self._ne_watch
        iterator = self._ne_iter
        if iterator is None:
            # iter() of a generator or an SDK stream (its __iter__ is a generator) cannot fail
            iterator = iter(self._ne_target)
            object.__setattr__(self, "_ne_iter", iterator)
        try:
            chunk = next(iterator)
        except StopIteration:
            err = watch.ended(self._ne_target)
            if err is None:
                raise
        except Exception as exc:
            failure = _fail(exc, watch.options, watch.chunks)
            if failure is exc:
                raise
            err = None
        else:
            return watch.kept(chunk)
        if err is not None:
            raise err
        raise failure

    def __enter__(self) -> Any:
        enter = getattr(self._ne_target, "__enter__", None)
        # A generator stream has no __enter__ (no code that runs unwrapped enters one), and
        # the SDK streams' __enter__ returns the stream: it has nothing to fail on.
        if enter is not None:  # pragma: no branch
            enter()
        return self

    def __exit__(self, *exc_info: Any) -> Any:
        leave = getattr(self._ne_target, "__exit__", None)
        return None if leave is None else leave(*exc_info)


class _AsyncStream(_StreamState):
    """A wrapped asynchronous stream, the twin of ``_Stream``."""

    __slots__ = ()

    def __aiter__(self) -> _AsyncStream:
        return self

    async def __anext__(self) -> Any:
        watch: _Watch = self._ne_watch
        iterator = self._ne_iter
        if iterator is None:
            # the SDKs' __aiter__ are async generators (or return self): they cannot fail
            iterator = self._ne_target.__aiter__()
            object.__setattr__(self, "_ne_iter", iterator)
        try:
            chunk = await iterator.__anext__()
        except StopAsyncIteration:
            err = watch.ended(self._ne_target)
            if err is None:
                raise
        except Exception as exc:
            failure = _fail(exc, watch.options, watch.chunks)
            if failure is exc:
                raise
            err = None
        else:
            return watch.kept(chunk)
        if err is not None:
            raise err
        raise failure

    async def __aenter__(self) -> Any:
        enter = getattr(self._ne_target, "__aenter__", None)
        # as in _Stream.__enter__: no code enters an async generator; the SDKs' return self
        if enter is not None:  # pragma: no branch
            await enter()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        leave = getattr(self._ne_target, "__aexit__", None)
        return None if leave is None else await leave(*exc_info)
