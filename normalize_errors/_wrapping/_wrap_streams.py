"""The streams of a wrapped client: the same chunks, typed errors, and the truth at the end.

The SDKs' own stream objects (openai's and anthropic's ``Stream``, ``AsyncStream`` and their
helpers' streams, subclasses included) are watched in place (``_watch_in_place``): the
generator in their ``_iterator`` is replaced by one that yields the same chunks and types
their errors, so the caller keeps the SDK's object. Any other iterable (Gemini's generators,
boto3's event streams) is proxied by a ``_Stream`` or ``_AsyncStream``.

Every watched stream feeds each chunk it yields to a state machine (``_stream_state``): a
generating method's stream the machine of its wire protocol, any other stream the plain one
that only counts. Nothing else of a chunk is kept once it is yielded. At the end of a
checked generating stream the machine says what it means: an error the stream carried, the
verdict of its stop reason, or, for a stream that ended without its terminal event, the cut
(``upstream.invalid_response``). A transport failure while reading (``upstream.unavailable``:
a connection closed mid-body) is raised as it comes, unless the terminal event had already
come: then the stream ended whole. Every error raised in or at the end of a watched stream,
checked or not, carries the machine's summary (``HarnessError.stream``): what reached the
caller, which the retry, fallback and breaker helpers read before sending a call again.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable
from typing import Any, Final

from .._base._http_wire import stream_error, stream_events
from .._model._exceptions import HarnessError
from .._reading._stream_state import StreamState, fold, with_summary
from ._wrap import _fail, _Options, _Proxy

_LOST: Final = frozenset({"upstream.unavailable", "upstream.timeout"})
"""What a transport failure while reading a stream is (a connection lost, a read that timed out)."""


def _selected(err: HarnessError | None, options: _Options) -> HarnessError | None:
    if err is None or (options.codes is not None and err.problem.code not in options.codes):
        return None
    return err


class _Watch:
    """What a watched stream keeps: the tools offered, who made it, its state machine (made
    at its first chunk), and what ``_Tap`` saw of the events the SDK decoded (see ``saw``)."""

    __slots__ = (
        "__weakref__",
        "done",
        "feed",
        "frame",
        "options",
        "owner",
        "passed",
        "saw_done",
        "state",
        "tools",
    )

    def __init__(self, options: _Options, tools: Any, owner: Any) -> None:
        self.options = options
        self.tools = tools
        self.owner = owner
        self.done = False
        self.state: StreamState | None = None
        """The stream's state machine, from its first chunk on."""
        self.feed: Callable[[Any], None] | None = None
        """The state machine's ``feed``."""
        self.frame: str | None = None
        """The first error event the SDK decoded, as SSE text."""
        self.passed: list[str] | None = None
        """The data of the last ``_PASSED`` events decoded while the SDK had yielded no chunk
        (a list, not a deque: most streams pass their first event on as a chunk at once, and
        a deque takes a block of 64 entries for it)."""
        self.saw_done = False
        """Whether the SDK decoded a ``data: [DONE]`` line (it does not yield it)."""

    def provider(self, target: Any) -> str | None:
        """The provider whose stream this is: the one given, the SDK's, else its module's."""
        from ..providers._routing import provider_of_object

        owner = self.owner if self.owner is not None else target
        return self.options.reader or provider_of_object(owner)

    def begin(self, chunk: Any, target: Any) -> Callable[[Any], None]:
        """The state machine of the stream whose first chunk is ``chunk``: its protocol's for
        a generating method's stream, else the plain one. Returns its ``feed``."""
        options = self.options
        state: StreamState | None = None
        if options.generating:
            from ..providers._routing import adapter, provider_of_object

            name = self.provider(target) or provider_of_object(chunk)
            if name is not None:  # every adapter's stream_state takes any first chunk
                state = adapter(name).stream_state(chunk, options.stream_text)
        if state is None:
            state = StreamState(options.stream_text)
        self.state = state
        self.passed = None
        feed = self.feed = state.feed
        return feed

    def unreadable(self) -> Callable[[Any], None]:
        """A chunk the state machine could not read: from here on the stream is counted by
        the plain machine (what reached the caller so far carried over), and its end is not
        judged. Returns the new ``feed``."""
        state = self.state
        plain = StreamState()
        if state is not None:
            plain.chunks, plain.output_chars, plain.phase = (
                state.chunks,
                state.output_chars,
                state.phase,
            )
        self.state = plain
        feed = self.feed = plain.feed
        return feed

    def failed(self, exc: Exception) -> BaseException | None:
        """What to raise for ``exc``, raised while reading the stream: its typed error with
        the stream's summary, or ``exc`` itself (see ``_fail``); ``None`` when the terminal
        event had come and the transport failed after it (the stream ended whole; checked
        streams only: unchecked, the SDK's error is raised, typed)."""
        err = _fail(exc, self.options)
        if not isinstance(err, HarnessError):
            return err
        state = self.state
        problem = err.problem
        if (
            self.options.check  # unchecked, a stream ends as the SDK ends it
            and state is not None
            and state.terminal
            and problem.code in _LOST
            and not problem.upstream.get("in_stream")
        ):
            return None
        return with_summary(err, state)

    def saw(self, event: Any) -> None:
        """An event the SDK's SSE decoder gave its stream, before the SDK read it.

        Kept: the first error event (a data line whose JSON is an error object), whether a
        ``[DONE]`` line came, and while the SDK has yielded no chunk the data of the last
        ``_PASSED`` events. An SDK skips events it does not expect (anthropic's reads only
        events named by an ``event:`` line, as relays that send bare ``data:`` lines do not
        name theirs): what it passed over is read at the end of the stream (``passed_over``).
        Each event costs a look for the word ``error``; nothing is kept once a chunk has come."""
        data = getattr(event, "data", None)
        if not isinstance(data, str):
            return
        if self.frame is None and "error" in data:
            text = _sse(data, getattr(event, "event", None))
            if stream_error(text) is not None:
                self.frame = text
        if data.startswith("[DONE]"):
            self.saw_done = True
        if self.state is None:
            if self.passed is None:
                self.passed = []
            self.passed.append(data)
            if len(self.passed) > _PASSED:
                del self.passed[0]

    def frame_error(self) -> HarnessError | None:
        """The error event the SDK decoded but neither raised nor yielded, read as
        ``from_response`` reads it in a 2xx stream."""
        if self.frame is None:
            return None
        from .._facade import from_response

        headers = {"content-type": "text/event-stream"}
        err = from_response(200, headers, self.frame, provider=self.options.provider)
        return with_summary(err, self.state) if err.upstream.get("in_stream") else None

    def passed_over(self, target: Any) -> HarnessError | None:
        """For a stream the SDK yielded nothing of: the failure in the events it decoded but
        did not raise or yield: an error event, else what the events state (a stop reason,
        an error), read by the protocol's machine. ``None`` when they state nothing."""
        err = self.frame_error()
        if err is not None or not self.passed:
            return err
        from ..providers._routing import adapter, provider_of_stream

        events = stream_events("".join(_sse(data) for data in self.passed))
        name = self.provider(target) or provider_of_stream(events)
        if not events or name is None:
            return None
        machine = adapter(name).stream_state(events[0], 0)
        found = fold(machine, events, self.tools)
        if found is None or not (machine.terminal or machine.failure is not None):
            return None
        return with_summary(found, None)  # none of those events reached the caller

    def ended(self, target: Any) -> HarnessError | None:
        """The failure the end of the stream means, the first time it ends (checked
        generating streams only)."""
        if self.done:
            return None
        self.done = True
        options = self.options
        if not (options.check and options.generating):
            return None
        state = self.state
        if state is None:
            err = self.passed_over(target)
            if err is None and not _resumed(target):
                err = with_summary(self.no_chunk(target), None)
            return _selected(err, options)
        if self.saw_done:
            state.marked_done()
        err = state.end(self.tools)
        if self.frame is not None and (err is None or not state.terminal):
            err = self.frame_error() or err
        return _selected(err, options)

    def no_chunk(self, target: Any) -> HarnessError:
        """``upstream.invalid_response`` for a generating stream that ended without a chunk:
        no answer and no error (an empty body, a bare ``[DONE]``, events the SDK skips and that
        state no stop reason). Retryable, as the registry says: a gateway or proxy that cut
        the stream before its first event is the usual cause."""
        from .._model._code_classes import class_for_code

        where = self.provider(target) or "upstream"
        skipped = sum(data.strip() != "[DONE]" for data in self.passed or ())
        upstream: dict[str, Any] = {"provider": where, "in_stream": True, "events_skipped": skipped}
        said = f" (after {skipped} event{'' if skipped == 1 else 's'} the SDK did not yield)"
        return class_for_code("upstream.invalid_response")(
            f"{where}: the stream ended before its first chunk{said if skipped else ''}: "
            "no answer and no error.",
            upstream=upstream,
        )


def _resumed(target: Any) -> bool:
    """Whether ``target`` is a resumed Responses stream (``responses.retrieve(id,
    stream=True, starting_after=N)``, or ``responses.stream(response_id=...,
    starting_after=N)``): one that has nothing left to send is whole."""
    try:
        if getattr(target, "_starting_after", None) is not None:  # the SDK's ResponseStream
            return True
        raw = vars(target).get("_raw_stream", target) if hasattr(target, "__dict__") else target
        params = raw.response.request.url.params
        return "starting_after" in params
    except Exception:  # no SDK stream, or no request to read
        return False


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
    watch is held weakly: a stream read to its end keeps nothing of it."""

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
    options = watch.options
    if not (options.check and options.generating):
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
    return code in _WATCHERS


def _watched(stream: weakref.ref[Any], inner: Any, watch: _Watch) -> Any:
    """The chunks of ``inner`` (the generator of the stream ``stream`` refers to), each fed
    to the stream's state machine, its errors typed, the end checked. Closing this generator
    closes ``inner`` at once, as ``yield from`` would: the SDK closes a stream's
    ``_iterator`` to stop it (anthropic's tool runner)."""
    feed = None
    while True:
        try:
            chunk = next(inner)
        except StopIteration:
            break
        except Exception as exc:
            failure = watch.failed(exc)
            if failure is None:  # the connection went after the terminal event
                break
            if failure is exc:
                raise
        else:
            if feed is None:
                feed = watch.begin(chunk, stream())
            try:
                feed(chunk)
            except Exception:  # a chunk no machine can read: counted, never in the way
                feed = watch.unreadable()
            try:
                yield chunk
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
    feed = None
    while True:
        try:
            chunk = await inner.__anext__()
        except StopAsyncIteration:
            break
        except Exception as exc:
            failure = watch.failed(exc)
            if failure is None:  # the connection went after the terminal event
                break
            if failure is exc:
                raise
        else:
            if feed is None:
                feed = watch.begin(chunk, stream())
            try:
                feed(chunk)
            except Exception:  # a chunk no machine can read: counted, never in the way
                feed = watch.unreadable()
            try:
                yield chunk
            except GeneratorExit:
                await inner.aclose()
                raise
            continue
        raise failure
    err = watch.ended(stream())
    if err is not None:
        raise err


_WATCHERS: Final = (_watched.__code__, _awatched.__code__)


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

    def _ne_take(self, chunk: Any) -> Any:
        """``chunk``, fed to the stream's state machine (made at the first chunk)."""
        watch: _Watch = self._ne_watch
        feed = watch.feed
        if feed is None:
            feed = watch.begin(chunk, self._ne_target)
        try:
            feed(chunk)
        except Exception:  # a chunk no machine can read: counted, never in the way
            watch.unreadable()
        return chunk


class _Stream(_StreamState):
    """A wrapped synchronous stream: same chunks, typed errors, the truth at the end."""

    __slots__ = ()

    def __iter__(self) -> _Stream:
        return self

    def __next__(self) -> Any:
        watch: _Watch = self._ne_watch
        failure: BaseException | None
        iterator = self._ne_iter
        if iterator is None:
            # iter() of a generator or an SDK stream (its __iter__ is a generator) cannot fail
            iterator = iter(self._ne_target)
            object.__setattr__(self, "_ne_iter", iterator)
        try:
            chunk = next(iterator)
        except StopIteration:
            failure = watch.ended(self._ne_target)
            if failure is None:
                raise
        except Exception as exc:
            failure = watch.failed(exc)
            if failure is None:  # the connection went after the terminal event: whole
                failure = watch.ended(self._ne_target)
                if failure is None:
                    raise StopIteration from None
            elif failure is exc:
                raise
        else:
            return self._ne_take(chunk)
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
        failure: BaseException | None
        iterator = self._ne_iter
        if iterator is None:
            # the SDKs' __aiter__ are async generators (or return self): they cannot fail
            iterator = self._ne_target.__aiter__()
            object.__setattr__(self, "_ne_iter", iterator)
        try:
            chunk = await iterator.__anext__()
        except StopAsyncIteration:
            failure = watch.ended(self._ne_target)
            if failure is None:
                raise
        except Exception as exc:
            failure = watch.failed(exc)
            if failure is None:  # the connection went after the terminal event: whole
                failure = watch.ended(self._ne_target)
                if failure is None:
                    raise StopAsyncIteration from None
            elif failure is exc:
                raise
        else:
            return self._ne_take(chunk)
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
