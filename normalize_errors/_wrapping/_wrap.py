"""``wrap(client)``: the same client, raising typed harness errors.

A wrapped client is a transparent proxy. Attribute access reaches the real client;
resources (``client.chat.completions``, ``client.messages``, ``client.models``,
``client.aio``), ``with_options(...)``, ``with_raw_response`` and stream managers come back
wrapped too; every method call runs the real method and:

* on an exception, raises its typed harness error, built as a *drop-in*: an instance of
  both the harness class and the vendor class it replaces (``except openai.RateLimitError``
  and ``except UpstreamRateLimitedError`` both catch it). Every member the vendor defines
  (``code``, ``type``, ``status``, ``message``, ``body``, ...) reads as the vendor's, every
  other harness member as the harness's, and ``err.problem`` is the plain harness error.
  The drop-in is the vendor exception as the vendor raised it: its ``__cause__``,
  ``__context__``, ``__suppress_context__`` and traceback are the vendor exception's own,
  and the vendor exception itself is ``err.problem.__cause__``. ``wrap(client,
  dropin=False)`` raises the plain harness error instead, raised from the vendor exception;
* on an exception that neither the SDK nor its HTTP transport raised (the application's own,
  from an event hook or a custom transport; see ``_raised_by_sdk``), re-raises it untouched:
  the same object;
* on the result of a *generating* method (see ``GENERATING``), runs ``check()`` (unless
  turned off) and returns the *same* result object (a raw response of ``with_raw_response``
  too, parsed at the call to be checked); every other result (``models.get``,
  ``count_tokens``, ``embed_content``, ``conversations.items.retrieve``, lists, files...)
  is returned untouched, whatever its shape: the method called decides, never the result;
* on a stream, returns a stream that yields the same chunks, raises typed errors for errors
  inside the stream and, at the end of a generating method's stream, for a failure stop
  reason or a stream cut before its terminal event. The SDKs' own stream objects (openai's
  and anthropic's ``Stream``, ``AsyncStream`` and their helpers' streams, subclasses
  included) are returned themselves, watched in place (see ``_wrap_streams``); other
  iterables are proxied. No stream keeps its chunks: each is fed to the stream's state
  machine as it passes (``_stream_state``), and an error raised in or at the end of a
  stream carries what had reached the caller (``err.stream``).

Streams are watched by ``_wrap_streams``; a call runs from a copy of a one-line function
that carries the caller's line (``_caller_line``); ``normalized()`` is ``_normalized``.

A typed error's ``max_attempts`` follows the client's ``max_retries`` at the time of the
failure (``wrapped.max_retries = 2`` is seen by the next call). Warnings the SDK issues
during a call name the caller's line, as without ``wrap()`` (see ``_caller_line``).

``isinstance(wrapped, openai.OpenAI)`` holds. Only ``Exception`` subclasses are converted:
cancellation (``asyncio.CancelledError``) and ``KeyboardInterrupt`` pass through untouched.
"""

from __future__ import annotations

import copy
import functools
import inspect
import sys
import weakref
from collections.abc import Callable, Collection, Iterable
from typing import Any, Final, TypeVar, cast

from .. import _facade
from .._base._caller_line import _as_caller
from .._base._safe_read import described, module_of
from .._model._dropin import dropin_class, make_dropin
from .._model._exceptions import HarnessError
from .._reading._stream_state import MAX_KEPT_TEXT
from ..providers import GENERIC, NAMES, PROVIDERS
from ..providers._routing import provider_of_module, provider_of_type
from ._wrap_kinds import APAGER, ASTREAM, AWAIT, DATA, MODEL, PAGE, PLAIN, STREAM, kind_of

__all__ = ["typed_error", "wrap"]

_T = TypeVar("_T")


def typed_error(
    exc: BaseException,
    *,
    provider: str | None = None,
    dropin: bool = True,
    model_output: bool = False,
) -> HarnessError:
    """The typed error for ``exc``, as a drop-in instance of ``type(exc)`` too when possible.

    On the drop-in, every member ``exc``'s class defines reads as ``exc`` has it (``code``,
    ``type``, ``status``, ``body``, ...; ``code``, ``type`` and ``status`` are absent where
    that class has none), and its ``__cause__``, ``__context__``, ``__suppress_context__`` and
    traceback are ``exc``'s own, so vendor code and frameworks see the vendor's exception;
    the other harness members and ``err.problem`` (the plain harness error, whose
    ``__cause__`` is ``exc``) give the harness view. With ``dropin=False`` the plain harness
    error is returned. A ``HarnessError`` is returned as it is.
    """
    if isinstance(exc, HarnessError):
        return exc
    err = _facade.normalize(exc, provider=provider, model_output=model_output)
    if not dropin or err is exc or not isinstance(exc, Exception):
        return err
    cls = dropin_class(type(err), type(exc))
    if cls is type(err):
        return err
    return make_dropin(cls, err, exc)


GENERATING: Final[dict[tuple[str, str], frozenset[str]]] = {
    (package, klass): methods
    for provider in PROVIDERS
    for package, klass, methods in provider.generating
}
"""The methods whose results ``wrap()`` checks: (resource package, class) -> method names,
from each provider's ``Provider.generating``.

The class is the SDK's resource class without its ``Async`` prefix and its
``WithRawResponse``/``WithStreamingResponse`` suffix, in that package or a module below
it. What these methods return (a result, a stream, a stream manager, a raw response whose
``parse()`` gives the result) is checked; what any other method returns is not.
"""


def _resource_key(cls: type) -> tuple[str, str]:
    name = cls.__name__.removeprefix("Async")
    for suffix in ("WithRawResponse", "WithStreamingResponse"):
        name = name.removesuffix(suffix)
    return cls.__module__, name


def generates(owner: Any, name: str) -> bool:
    """Whether ``owner.name(...)`` is one of the generating methods of ``GENERATING``."""
    module, cls = _resource_key(type(owner))
    for (package, klass), methods in GENERATING.items():
        if (
            cls == klass
            and name in methods
            and (module == package or module.startswith(package + "."))
        ):
            return True
    return False


class _Options:
    """What a wrapped client was asked to do; shared by every proxy it hands out.

    ``generating`` is set on the options of what a generating method returned: only those
    results and streams are checked.
    """

    __slots__ = (
        "_generating",
        "check",
        "client",
        "codes",
        "dropin",
        "generating",
        "http",
        "judge",
        "ledger",
        "provider",
        "reader",
        "sdk",
        "stream_text",
    )

    def __init__(
        self,
        provider: str | None,
        check: bool | Collection[str],
        client: Any,
        generating: bool = False,
        dropin: bool = True,
        *,
        ledger: Any = None,
        stream_text: int = 0,
    ) -> None:
        if type(stream_text) is not int or not 0 <= stream_text <= MAX_KEPT_TEXT:
            raise ValueError(f"stream_text must be a number of bytes from 0 to {MAX_KEPT_TEXT}")
        self.stream_text = stream_text
        self.judge: Callable[[Any, Any], HarnessError | None] | None = None
        """What reads this client's results (``_judge``), found at the first one."""
        self.provider = provider
        self.ledger = ledger
        self.check = bool(check)
        self.codes: frozenset[str] | None = None if isinstance(check, bool) else frozenset(check)
        self.client = client
        self.generating = generating
        self.dropin = dropin
        self._generating: _Options | None = self if generating else None
        # the wrapped client is an SDK's or an HTTP library's: what neither raised passes
        # through (see ``_raised_by_sdk``); an HTTP library's results are watched only then
        library = provider_of_module(getattr(type(client), "__module__", None))
        self.sdk = library is not None
        self.http = library == GENERIC
        # who reads its results: the provider given when it names an adapter (another name,
        # a gateway's, is ignored here as ``from_response`` ignores it), else the SDK's own
        # adapter (its results are its own types, which route there), found once here
        # instead of at every result
        named = provider if provider in NAMES else None
        self.reader = named or (library if self.sdk and not self.http else None)

    @property
    def max_attempts(self) -> int | None:
        """The client's ``max_retries`` + 1, read now (it may have been set since)."""
        return _max_attempts(self.client)

    def _same(self, client: Any, generating: bool) -> _Options:
        check = self.codes if self.codes is not None else self.check
        return _Options(
            self.provider,
            check,
            client,
            generating,
            self.dropin,
            ledger=self.ledger,
            stream_text=self.stream_text,
        )

    def for_generation(self) -> _Options:
        """These options, for what a generating method returned."""
        found = self._generating
        if found is None:
            found = self._generating = self._same(self.client, True)
        return found

    def child(self, client: Any) -> _Options:
        """The options for a new client (``with_options``): its own ``max_retries``."""
        if client is self.client or _max_attempts(client) is None:
            return self
        return self._same(client, self.generating)


def _max_attempts(client: Any) -> int | None:
    try:
        retries = getattr(client, "max_retries", None)
    except Exception:
        return None
    if isinstance(retries, int) and not isinstance(retries, bool):
        return retries + 1
    return None


def _checked(result: Any, options: _Options, tools: Any) -> Any:
    if options.check and options.generating:
        judge = options.judge
        if judge is None:  # found once per client: its adapter's diagnose
            judge = options.judge = _judge(options.reader)
        try:
            err = judge(result, tools)
        except Exception as bug:  # as check() answers a reader's bug: never the exception
            err = _facade.unreadable_result(bug, options.reader)
        if err is not None and (options.codes is None or err.problem.code in options.codes):
            err.max_attempts = err.max_attempts or options.max_attempts
            raise err
    return result


def _judge(reader: str | None) -> Callable[[Any, Any], HarnessError | None]:
    """What reads a generating method's results: the adapter of ``reader`` (the provider given,
    else the SDK's), or, with none, the adapter each result's own type routes to."""
    if reader is None:
        return _by_result
    from ..providers._routing import adapter

    judge: Callable[[Any, Any], HarnessError | None] = adapter(reader).diagnose
    return judge


def _by_result(result: Any, tools: Any) -> HarnessError | None:
    return _facade.diagnose(result, tools=tools)


_DATA_LAYER: Final = frozenset({"pydantic", "pydantic_core"})
"""The packages the SDKs build their models with: a frame of theirs is the SDK's doing."""


def _raised_by_sdk(exc: BaseException) -> bool:
    """Whether the SDK or its HTTP transport raised ``exc``: its class is theirs, or the
    innermost frame of its traceback outside the standard library (and the SDKs' model
    library, pydantic) is their code. An exception raised by the application's own code
    (an event hook, a custom transport) is neither's."""
    if provider_of_type(type(exc)) is not None:
        return True
    decisive = None
    tb = exc.__traceback__
    while tb is not None:
        root = module_of(tb.tb_frame).partition(".")[0]
        if root not in sys.stdlib_module_names and root not in _DATA_LAYER:
            decisive = tb.tb_frame
        tb = tb.tb_next
    return decisive is None or provider_of_module(module_of(decisive)) is not None


def _fail(exc: Exception, options: _Options) -> BaseException:
    """What to raise for ``exc``: its typed error (a drop-in with ``exc``'s chain and frames,
    or a plain error whose cause is ``exc``), or ``exc`` itself when the wrapped client is an
    SDK's and neither the SDK nor its transport raised it, or when a drop-in was asked for
    and no drop-in class can be made of ``exc``'s class. Raise it outside the ``except``
    clause (or re-raise ``exc`` with a bare ``raise``)."""
    if options.sdk and not _raised_by_sdk(exc):
        return exc
    err = typed_error(exc, provider=options.provider, dropin=options.dropin)
    if options.dropin and err.problem is err:
        # no drop-in class can be made of ``exc``'s (pydantic's ValidationError refuses
        # subclasses): a plain harness error would escape the caller's ``except`` of the
        # vendor's class, so ``exc`` goes on as raised (``normalize(exc)`` types it)
        return exc
    problem = err.problem  # the harness view: a drop-in's own code is the vendor's
    if problem.max_attempts is None and problem.code.startswith("upstream."):
        problem.max_attempts = options.max_attempts
    if err is not exc and problem is err:  # a plain error: raised from ``exc``
        err.__cause__ = exc
    return err


def _after(
    value: Any, options: _Options, tools: Any, owner: Any = None, *, from_call: bool = True
) -> Any:
    if isinstance(value, _Proxy):  # wrapped already (the SDK built a wrapped client)
        return value
    kind = kind_of(value, from_call)
    if kind == MODEL:  # a generating call's answer, the most common value of all
        return _checked(value, options, tools)
    if kind == AWAIT:
        return _awaited(value, options, tools, owner)
    if kind == APAGER:  # an async paginator: awaited or iterated
        return _AsyncPager._ne_make(value, options)
    if kind == PLAIN:
        # text from a generating call is a page or a gateway, not an answer
        if from_call and type(value) is str and options.check and options.generating:
            raise _not_an_answer(value, options.provider, owner)
        if options.generating and type(value) is dict:  # boto3: results are plain dicts
            return _plain_result(value, options, tools, owner)
        return value
    if kind in (STREAM, ASTREAM):
        # a wrapped stream is a proxy (``_wrap_streams`` imports this module): imported here
        from ._wrap_streams import _AsyncStream, _Stream, _watch_in_place

        if _watch_in_place(value, options, tools, owner):
            return value
        made = _Stream if kind == STREAM else _AsyncStream
        return made._ne_make(value, options, tools, owner)
    if kind == PAGE:
        _checked(value, options, tools)
    module = getattr(type(value), "__module__", "") or ""
    if module.partition(".")[0] in ("httpx", "httpx2") and not options.http:
        return value  # an SDK's call returned an HTTP response (cast_to=httpx.Response)
    if from_call and _is_raw_response(value):
        return _raw_checked(value, options, tools)
    return _Proxy._ne_make(value, options.child(value))


def _is_raw_response(value: Any) -> bool:
    """Whether ``value`` is an SDK's raw response (``with_raw_response``), parsed on demand:
    it has the HTTP response it came from and a ``parse()``."""
    return hasattr(value, "http_response") and callable(getattr(type(value), "parse", None))


def _raw_checked(value: Any, options: _Options, tools: Any) -> Any:
    """A raw response, returned as the SDK's; a generating call's is parsed now (the SDK
    keeps what it parsed: the caller's ``parse()`` gives the same object) and its result
    checked. A streamed one (its ``parse()`` gives a stream) is not checked; one whose
    ``parse()`` is a coroutine is checked by ``_araw_checked`` on the async paths."""
    if not (options.check and options.generating):
        return value
    if inspect.iscoroutinefunction(type(value).parse):
        return value
    try:
        parsed = value.parse()
    except Exception:  # the caller's own parse() raises it, as without wrap()
        return value
    if kind_of(parsed, True) == MODEL:
        _checked(parsed, options, tools)
    return value


async def _araw_checked(value: Any, options: _Options, tools: Any) -> Any:
    """``_raw_checked`` for the raw response of an async client, whose ``parse()`` is a
    coroutine (anthropic's ``AsyncAPIResponse``)."""
    if not (options.check and options.generating):
        return value
    if not inspect.iscoroutinefunction(type(value).parse):
        return _raw_checked(value, options, tools)
    try:
        parsed = await value.parse()
    except Exception:  # the caller's own parse() raises it, as without wrap()
        return value
    if kind_of(parsed, True) == MODEL:
        _checked(parsed, options, tools)
    return value


def _plain_result(value: dict[str, Any], options: _Options, tools: Any, owner: Any) -> Any:
    """A generating method's plain-dict result (boto3's Bedrock runtime): checked; its event
    ``stream`` (ConverseStream, InvokeModelWithResponseStream) wrapped in place."""
    stream = value.get("stream", value.get("body"))
    if stream is not None and hasattr(stream, "__iter__") and not isinstance(stream, DATA):
        from ._wrap_streams import _Stream

        key = "stream" if "stream" in value else "body"
        value[key] = _Stream._ne_make(stream, options, tools, owner)
        return value
    return _checked(value, options, tools)


class _TargetInit:
    """``proxy.__init__``: the target's own (``inspect.signature`` reads the client's). A
    proxy is made by ``_Proxy.make``, never by calling its class."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return object.__init__
        return obj._ne_target.__init__


class _TargetDict:
    """``proxy.__dict__`` and ``vars(proxy)``: the target's own namespace."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        return vars(obj._ne_target)


class _Proxy:
    """Stands in for an SDK object: forwards everything, wraps what comes out.

    A proxy's ``type()`` is a subclass of ``_Proxy`` made for its target's class (see
    ``_proxy_class``): calling it builds an instance of that class, as SDK code that
    rebuilds an object with ``type(resource)(client)`` expects.
    """

    # Wrapped resources and methods are kept in ``_ne_cache``, so a second
    # ``client.chat.completions.create`` never reaches __getattr__.
    __slots__ = ("__weakref__", "_ne_cache", "_ne_options", "_ne_target")

    _ne_class: weakref.ref[type] | None = None
    """The target's class, on the subclass made for it (held weakly: see ``_PROXY_CLASSES``)."""

    __init__ = _TargetInit()
    __dict__ = _TargetDict()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """``type(proxy)(...)``: an instance of the target's class, as the SDK builds it."""
        target_class = cls._ne_class() if cls._ne_class is not None else None
        if target_class is None:
            raise TypeError("a wrapped object is made by wrap(), not by calling its class")
        return target_class(*args, **kwargs)

    @classmethod
    def _ne_make(cls, target: Any, options: _Options) -> Any:
        """A proxy of ``target``."""
        proxy = object.__new__(_proxy_class(type(target)) if cls is _Proxy else cls)
        object.__setattr__(proxy, "_ne_target", target)
        object.__setattr__(proxy, "_ne_options", options)
        object.__setattr__(proxy, "_ne_cache", {})
        return proxy

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(proxy, openai.OpenAI) holds
        cls: type = self._ne_target.__class__  # a wrapped target's is its own target's
        return cls

    def __getattr__(self, name: str) -> Any:
        # A proxy made without ``_ne_make`` would recurse here for ever; none is made (copies go
        # through __copy__, and pickling a proxy fails before it builds one).
        if name.startswith("_ne_"):  # pragma: no cover
            raise AttributeError(name)
        cache = self._ne_cache
        found = cache.get(name)
        if found is not None:
            return found
        target = self._ne_target
        value = getattr(target, name)
        if name.startswith("_"):
            return value
        if inspect.ismethod(value) or inspect.isfunction(value) or inspect.isbuiltin(value):
            options = self._ne_options
            if not options.generating and generates(target, name):
                options = options.for_generation()
            wrapped = _method(value, options, target)
            cache[name] = wrapped
            _keep(type(self), name)
            return wrapped
        out = _after(value, self._ne_options, None, owner=target, from_call=False)
        if isinstance(out, _Proxy):
            cache[name] = out
            _keep(type(self), name)
        return out

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._ne_target, name, value)
        self._ne_cache.pop(name, None)

    def __delattr__(self, name: str) -> None:
        delattr(self._ne_target, name)
        self._ne_cache.pop(name, None)

    def __dir__(self) -> Iterable[str]:
        return dir(self._ne_target)

    def __repr__(self) -> str:
        return repr(self._ne_target)

    def __copy__(self) -> Any:
        return type(self)._ne_copy(self, copy.copy(self._ne_target))

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return type(self)._ne_copy(self, copy.deepcopy(self._ne_target, memo))

    @staticmethod
    def _ne_copy(proxy: _Proxy, target: Any) -> Any:
        options = proxy._ne_options
        if options.client is proxy._ne_target:
            options = options._same(target, options.generating)
        return _Proxy._ne_make(target, options)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        options = self._ne_options
        try:
            result = self._ne_target(*args, **kwargs)
        except Exception as exc:
            failure = _fail(exc, options)
            if failure is exc:
                raise
        else:
            return _after(result, options, _tools(kwargs))
        raise failure

    def __enter__(self) -> Any:
        options = self._ne_options
        try:
            entered = self._ne_target.__enter__()
        except Exception as exc:
            failure = _fail(exc, options)
            if failure is exc:
                raise
        else:
            return self._ne_entered(entered)
        raise failure

    def _ne_entered(self, entered: Any) -> Any:
        """What entering the target gave, as ``with`` gives it: this proxy for the target
        itself; a streamed raw response (``with_streaming_response``) as the SDK's, its body
        the caller's to read."""
        if entered is self._ne_target:
            return self
        if _is_raw_response(entered):
            return entered
        return _after(entered, self._ne_options, None)

    def __exit__(self, *exc_info: Any) -> Any:
        return self._ne_target.__exit__(*exc_info)

    async def __aenter__(self) -> Any:
        options = self._ne_options
        try:
            entered = await self._ne_target.__aenter__()
        except Exception as exc:
            failure = _fail(exc, options)
            if failure is exc:
                raise
        else:
            return self._ne_entered(entered)
        raise failure

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._ne_target.__aexit__(*exc_info)

    def __iter__(self) -> Any:
        from ._wrap_streams import _Stream

        return _Stream._ne_make(iter(self._ne_target), self._ne_options, None, self._ne_target)

    def __aiter__(self) -> Any:
        from ._wrap_streams import _AsyncStream

        target = self._ne_target
        return _AsyncStream._ne_make(target.__aiter__(), self._ne_options, None, target)


_PROXY_CLASSES: Final[weakref.WeakKeyDictionary[type, type[_Proxy]]] = weakref.WeakKeyDictionary()
"""The proxy class made for each target class. The target class is a weak key and the proxy
class holds it only weakly (``_ne_class``): a class botocore makes per session is collected
with its proxy class once nothing else holds it."""


class _Kept:
    """A name some proxy of this class keeps in its ``_ne_cache`` (a resource such as
    ``chat``, a wrapped method such as ``create``), put on the proxy class (``_keep``) so
    that ``wrapped.chat.completions.create`` reads each link from the proxy's cache without
    first failing the ordinary lookup (which costs an ``AttributeError`` per link before
    ``__getattr__`` runs). A proxy that keeps nothing under the name (not yet, or not any more:
    ``__setattr__`` and ``__delattr__`` drop it) reads it through ``__getattr__``, as before."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        found = obj._ne_cache.get(self.name)
        return found if found is not None else obj.__getattr__(self.name)


def _keep(cls: type[_Proxy], name: str) -> None:
    """Put a ``_Kept`` for ``name`` on ``cls``, a proxy class made for a target class (see
    ``_proxy_class``), once."""
    if "_ne_class" in vars(cls) and name not in vars(cls) and not hasattr(_Proxy, name):
        setattr(cls, name, _Kept(name))


def _proxy_class(cls: type) -> type[_Proxy]:
    """The ``_Proxy`` subclass for proxies of instances of ``cls``, named as ``cls``."""
    found = _PROXY_CLASSES.get(cls)
    if found is None:
        made = type(cls.__name__, (_Proxy,), {"__slots__": (), "_ne_class": weakref.ref(cls)})
        found = _PROXY_CLASSES.setdefault(cls, made)
    return found


def _tools(kwargs: dict[str, Any]) -> Any:
    """The tools a call offered: ``tools=``, or boto3 Converse's ``toolConfig=``.

    A one-shot iterator (a generator, ``iter(list)``) is ``None``, nothing to check against:
    the SDK has read it, and the wrapper never consumes a caller's argument.
    """
    tools = kwargs.get("tools")
    if tools is None:
        return kwargs.get("toolConfig")
    try:
        return None if iter(tools) is tools else tools
    except Exception:  # not iterable: offered_names makes nothing of it either
        return tools


def _method(method: Any, options: _Options, owner: Any) -> Callable[..., Any]:
    """The wrapper of one bound method of an SDK object."""
    if options.ledger is not None and options.generating:  # walls and budgets around the call
        made_by = options.reader or options.provider or GENERIC
        method = options.ledger.guarded(method, options.client, made_by)
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def acall(*args: Any, **kwargs: Any) -> Any:
            try:
                result = await _as_caller(sys._getframe(1))(method, args, kwargs)
            except Exception as exc:
                failure = _fail(exc, options)
                if failure is exc:
                    raise
            else:
                if _is_raw_response(result):
                    return await _araw_checked(result, options, _tools(kwargs))
                return _after(result, options, _tools(kwargs), owner)
            raise failure

        return acall

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            result = _as_caller(sys._getframe(1))(method, args, kwargs)
        except Exception as exc:
            failure = _fail(exc, options)
            if failure is exc:
                raise
        else:  # only a generating call's answer is checked against the tools it offered
            return _after(result, options, _tools(kwargs) if options.generating else None, owner)
        raise failure

    return call


class _AsyncPager(_Proxy):
    """What an async client's list method returns (the SDKs' ``AsyncPaginator``): awaited,
    it gives the first page; iterated with ``async for``, every item; failures typed."""

    __slots__ = ()

    def __await__(self) -> Any:
        return _awaited(self._ne_target, self._ne_options, None, None).__await__()


async def _awaited(awaitable: Any, options: _Options, tools: Any, owner: Any) -> Any:
    try:
        result = await awaitable
    except Exception as exc:
        failure = _fail(exc, options)
        if failure is exc:
            raise
    else:
        if _is_raw_response(result):
            return await _araw_checked(result, options, tools)
        return _after(result, options, tools, owner)
    raise failure


def wrap(
    client: _T,
    *,
    provider: str | None = None,
    check: bool | Collection[str] = True,
    dropin: bool = True,
    ledger: Any = None,
    stream_text: int = 0,
) -> _T:
    """The same client, raising typed harness errors for every failure.

    Args:
        client: an ``openai.OpenAI``/``AsyncOpenAI`` (or Azure) client, an
            ``anthropic.Anthropic``/``AsyncAnthropic`` (or Bedrock/Vertex) client, a
            ``google.genai.Client``, an ``httpx``/``httpx2`` ``Client``/``AsyncClient``, a
            native client of an OpenAI-compatible vendor (groq, together, cerebras,
            fireworks, mistralai), a ``cohere.ClientV2``/``AsyncClientV2``, or a boto3
            ``bedrock-runtime`` client (whose ``converse`` results are plain dicts: checked
            as they are; the event ``stream`` of its streaming calls is wrapped in place).
        provider: the provider name, when the library should not work it out (an
            OpenAI-compatible server reached through the ``openai`` client is ``"openai"``);
            a name that is no adapter's (a gateway's) is ignored, as ``from_response``
            ignores it: the SDK's own adapter reads the results.
        check: run ``check()`` on every result and at the end of every stream, raising the
            typed error of a failure stop reason, and ``upstream.invalid_response`` for a
            stream that ended before its terminal event (``True``, the default); ``False``
            returns results untouched and lets streams end as they end (their errors still
            say what they had delivered); a collection of codes raises only those codes.
        dropin: raise drop-ins (the default): errors that are also the vendor's exception,
            whose vendor members (``code``, ``type``, ``status``, ...) keep the vendor's
            meaning while ``err.problem`` and the other harness members give the harness
            view. ``False`` raises the plain harness errors, with the vendor exception as
            ``__cause__``, for code that wants no vendor semantics at all.
        ledger: a ``normalize_errors.resilience.Ledger``: each generating call is checked
            against the walls and budgets it holds before it is sent, and teaches it what
            the response said (see ``normalize_errors.resilience``).
        stream_text: how many bytes (0 to 4096) of a failed stream's output text its error
            keeps, as ``err.stream["text"]``; 0, the default, keeps none (the error says how
            much output reached the caller, never what it was, unless asked).

    Returns:
        A proxy with the same interface that type checkers see as the client's own type;
        ``isinstance`` checks against the client's class hold.

    Raises:
        TypeError: ``client`` is ``None``, a number, text or bytes (a key?), a class
            (``openai.OpenAI`` without parentheses) or a module; any other object is taken.
    """
    if isinstance(client, _NOT_CLIENTS) or inspect.ismodule(client):
        raise TypeError(_refusal(client))
    options = _Options(
        provider, check, client, dropin=dropin, ledger=ledger, stream_text=stream_text
    )
    return cast("_T", _Proxy._ne_make(client, options))


_NOT_CLIENTS: Final = (type(None), int, float, complex, str, bytes, bytearray, memoryview, type)
"""What ``wrap()`` refuses (and modules): values that make no call it could watch, a class."""


def _refusal(client: object) -> str:
    """Why ``wrap()`` refuses ``client``: what it takes, what it was given (never the value)."""
    given = described(client)
    if isinstance(client, type):
        given += f"; call it first: wrap({client.__name__}(...))"
    return (
        "wrap() takes a client object: an SDK or HTTP client such as openai.OpenAI(...), "
        "anthropic.Anthropic(...), google.genai.Client(...), httpx.Client() or a boto3 client, "
        f"or any object or function of yours whose calls can fail; it was given {given}"
    )


def _not_an_answer(result: str | bytes, provider: str | None, owner: Any) -> HarnessError:
    """The error for text an SDK's generating call returned (the caller raises it)."""
    from .._not_answers import not_an_answer, provider_of

    err = not_an_answer(result, provider or provider_of(owner))
    err.result = result
    return err
