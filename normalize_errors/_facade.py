"""The entry points: ``normalize``, ``from_response`` and ``check``.

They pick the provider adapter (by the exception's module, by the ``provider`` argument, or
by the shape of a body), let it translate, and guarantee the contract: whatever comes in, a
valid ``HarnessError`` comes out, with the original exception as ``__cause__`` and the raw
facts in ``upstream``. Nothing here imports a vendor SDK. Python's own exceptions are read in
``_stdlib``, chains and exception groups in ``_groups``; ``respond`` is the one dispatcher of
HTTP responses.
"""

from __future__ import annotations

from ._base._http_wire import body_text, lower_headers, parse_body, short, stream_error
from ._base._safe_read import described, integer, qualname
from ._model._code_classes import HarnessInternalError, class_for_code
from ._model._exceptions import HarnessError
from ._model._groups import Walk, group, group_members, group_type, through_chain
from ._reading._readers import exception_reader, response_readers, routes
from ._reading._stdlib import internal, safe_text, stdlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import ModuleType
    from typing import Any, Final, TypeVar

    from .providers import Adapter

    _R = TypeVar("_R")

__all__ = ["check", "diagnose", "diagnose_stream", "from_response", "normalize"]


_ROUTING: list[ModuleType] = []
_READERS: list[Callable[[Any, Any, Any], HarnessError | None]] = []


def _read_problem() -> Callable[[Any, Any, Any], HarnessError | None]:
    """The HTTP binding's reader, imported on first use."""
    if not _READERS:
        from .bindings.http import read_problem

        _READERS.append(read_problem)
    return _READERS[0]


def _routing() -> ModuleType:
    """The providers' routing (``providers._routing``), imported on first use (it is not
    needed to import us)."""
    if not _ROUTING:
        from .providers import _routing

        _ROUTING.append(_routing)
    return _ROUTING[0]


def _registered(exc: BaseException) -> HarnessError | None:
    """The answer of the reader registered for ``exc``'s module, if any (see ``_readers``).

    A reader that raises is skipped: the built-in path answers instead.
    """
    try:
        reader = exception_reader(type(exc))
        return None if reader is None else reader(exc)
    except Exception:
        return None


def _route(cls: type) -> Callable[[BaseException], HarnessError | None] | None:
    """The adapter's ``normalize`` for exceptions of ``cls`` when nothing else can come first.

    That is: no reader is registered for ``cls``, it is no exception group, and its module
    names the adapter (so ``provider=`` cannot change which adapter reads it). Else ``None``,
    and ``_known`` takes every step. Decided once per class (see ``_readers.routes``).
    """
    if exception_reader(cls) is not None or group_type(cls):
        return None
    name = _routing().provider_of_type(cls)
    return None if name is None else _routing().adapter(name).normalize


_UNSET: Final = object()


def _known(exc: BaseException, provider: str | None, walk: Walk) -> HarnessError | None:
    """The answer for an exception the library knows, or ``None``.

    An exception group is read through its members, unless ``walk`` is reading it already
    (a member's chain led back to it): then it is read as an exception like any other.
    """
    if isinstance(exc, HarnessError):
        return exc.problem  # a drop-in's harness side; a plain error itself
    cls = type(exc)
    known = routes()
    route = known.get(cls, _UNSET)
    if route is _UNSET:
        route = known[cls] = _route(cls)
    if route is not None:
        found = route(exc)  # type: ignore[operator]
        return found if found is not None else stdlib(exc)
    err = _registered(exc)
    if err is not None:
        return err
    inner = group_members(exc)
    if inner is not None and walk.enter(exc):
        try:
            return group(inner, provider, walk, _guarded)
        finally:
            walk.leave(exc)
    adapter: Adapter | None = _routing().adapter_for_exception(exc, provider)
    if adapter is not None:
        err = adapter.normalize(exc)
        if err is not None:
            return err
    if type(exc).__name__ == "JSONDecodeError":  # from inside an SDK's call, or the caller's
        from ._not_answers import decode_error

        err = decode_error(exc)
        if err is not None:
            return err
    return stdlib(exc)


def _normalize(exc: BaseException, provider: str | None, walk: Walk) -> HarnessError:
    err = _known(exc, provider, walk)
    if err is None:
        err = through_chain(exc, provider, _known, walk)
    return internal(exc) if err is None else err


def _guarded(exc: BaseException, provider: str | None, walk: Walk) -> HarnessError:
    """``_normalize`` that never raises, the result's ``__cause__`` being ``exc``: the work of
    ``normalize`` for the exception it was given and for each member of a group."""
    try:
        err = _normalize(exc, provider, walk)
    except Exception as bug:  # a bug here must never hide the caller's exception
        err = HarnessInternalError(
            f"normalize-errors could not read {type(exc).__name__} ({type(bug).__name__}).",
            retryable=False,
            upstream={"exception": qualname(exc), "message": safe_text(exc)},
        )
    if err is not exc and err.__cause__ is None:
        err.__cause__ = exc
    return err


def normalize(
    exc: BaseException, *, provider: str | None = None, model_output: bool = False
) -> HarnessError:
    """Turn any exception into its typed harness error; never raises.

    A ``HarnessError`` is returned as it is; a drop-in (raised through ``wrap()``) gives its
    plain harness error, ``err.problem``. A vendor exception (openai, anthropic,
    google-genai, httpx, httpx2) is read by its provider's adapter, found from the
    exception's module (or named by ``provider``). The standard library's cancellation,
    timeout and connection errors become ``harness.cancelled`` and ``upstream.unavailable``;
    an exception the library does not know is read through its ``__cause__`` (else its
    ``__context__``) when a link of that chain is known (at most ``MAX_CHAIN`` links, cycles
    stop the walk); anything else becomes ``harness.internal_error``. An exception group
    gives the error of its most telling member, with the others as ``causes`` (a
    non-retryable member first, then a specific code before ``upstream.unavailable`` and
    ``harness.internal_error``, then order). One call reads at most ``MAX_WALK`` group
    members and chain links in all, and a chain that leads back to a group or link being
    read (a member re-raised inside its group's ``except`` block) ends there.

    The original exception is the result's ``__cause__`` (unless it already had one, for a
    ``HarnessError`` passed in). Something that is not an exception at all gives
    ``harness.internal_error`` without a cause; a ``provider`` that is not a string is
    ignored (the library works the provider out).

    ``model_output=True`` says the caller's own code raised ``exc`` parsing a model's text
    (``TypeAdapter.validate_json``, ``model_validate_json``, ``json.loads``): a pydantic
    ``ValidationError`` is then ``output.schema_violation`` (``output.malformed`` when the
    text is no JSON at all), one cause per error with its ``location.pointer``, and a
    ``JSONDecodeError`` is ``output.malformed``, both with ``model_feedback`` for the
    re-prompt. Any other exception is read as without it. The library keeps no memory of
    model outputs: without the keyword, such an error from the caller's own code stays
    ``harness.internal_error``.
    """
    given: object = exc  # typed as an exception; callers pass anything
    if not isinstance(given, BaseException):
        return HarnessInternalError(
            f"normalize() was given {described(exc)}, not an exception.",
            retryable=False,
            upstream={"exception": type(exc).__name__, "message": safe_text(exc)},
        )
    if model_output is True:
        err = _model_output(exc)
        if err is not None:
            return err
    return _guarded(exc, _provider_name(provider), Walk())


def _model_output(exc: BaseException) -> HarnessError | None:
    """The output error of a parse of model text the caller says ``exc`` was, or ``None``."""
    try:
        from .frameworks._common import output_error

        err = output_error(exc)
    except Exception:  # read as without the keyword
        return None
    if err is not None and err.__cause__ is None:
        err.__cause__ = exc
    return err


def _provider_name(provider: object) -> str | None:
    """``provider`` when it is a string; anything else is ignored (worked out instead)."""
    return provider if isinstance(provider, str) else None


def from_response(
    status: Any, headers: Any, body: Any, *, provider: str | None = None
) -> HarnessError:
    """Turn a raw HTTP error response into its typed harness error; never raises.

    ``status`` is the HTTP status (anything else, ``None`` included, is accepted),
    ``headers`` any mapping or list of pairs, ``body`` bytes, text or parsed JSON. A harness
    error object (``application/problem+json``) is read as it is. Otherwise the adapter of
    ``provider`` reads it; with ``provider=None`` the shape of the body decides (Anthropic's
    ``{"type": "error", ...}``, Google's ``{"error": {"status": ...}}``, the OpenAI shape,
    else plain HTTP: an HTML page gives its title as ``detail``, never the page).

    A 2xx response has no error status: an error event inside its body (a stream) is
    reported like its HTTP twin, and a 2xx that carries no error at all gives
    ``upstream.invalid_response`` with a ``detail`` that says so (use ``check`` for
    results). A ``provider`` that is not a string, or names no adapter and no registered
    response reader, is ignored (the body's shape decides).
    """
    provider = _provider_name(provider)
    try:
        return respond(status, headers, body, provider=provider)
    except Exception as bug:
        upstream: dict[str, Any] = {"provider": provider or _routing().GENERIC}
        if integer(status) is not None:
            upstream["status"] = integer(status)
        upstream["body"] = short(body_text(body, 4096), 1024)
        return HarnessInternalError(
            f"normalize-errors could not read an HTTP response ({type(bug).__name__}).",
            retryable=False,
            upstream=upstream,
        )


def respond(
    status: Any, headers: Any, body: Any, *, provider: str | None = None, host: str | None = None
) -> HarnessError:
    """The one dispatcher of an HTTP response to its reader (``from_response`` guards it; the
    plain HTTP adapter calls it for the error responses of httpx, requests and aiohttp).

    First, an error whose ``message`` is another error body as JSON text (a client wrapping
    the provider's error) is replaced by that inner body. Then, in order: a harness error
    object (``application/problem+json``) as it is; the response readers registered for
    ``provider`` (or for any provider); a 2xx: the error event inside its body, or an SDK's
    printed error text (``Provider.printed``), else ``upstream.invalid_response``; else the
    adapter of ``provider``, or of the body's shape (of the SDK that printed a text body).
    A body of no known shape is read as plain HTTP, reported as the provider whose API lives
    at ``host`` when that is known. May raise: callers guard.
    """
    parsed, lowered, code = parse_body(body), lower_headers(headers), integer(status)
    if isinstance(parsed, dict) and "error" in parsed:
        from ._reading._envelopes import nested_error

        inner = nested_error(parsed)  # a client's error wrapping the provider's, as text
        if inner is not None:
            parsed = body = inner
    problem = _read_problem()(status, lowered, parsed) if parsed is not None else None
    if problem is not None:
        return problem
    readers = response_readers(provider)
    if readers:
        problem = _registered_response(readers, code, lowered, parsed)
        if problem is not None:
            return problem
        if provider is not None:  # a registered reader's name, and it gave no answer
            provider = None
    routing = _routing()
    if provider is not None and provider not in routing.NAMES:
        provider = None  # a name no adapter or reader has: the body's shape decides
    if code is not None and 200 <= code <= 299:
        from ._reading._envelopes import error_object

        found = stream_error(body_text(body)) or error_object(parsed)  # a vendor envelope
        printed = None if found is not None or parsed is not None else body_text(body, 4096)
        name = routing.provider_of_text(printed) if printed else None
        if name is not None and provider in (None, name):  # an SDK's error text in the body
            err: HarnessError = routing.adapter(name).from_response(None, headers, body)
            err.upstream = {**err.upstream, "status": code, "in_stream": True}
            return err
        if found is None:
            where = provider or routing.GENERIC
            return class_for_code("upstream.invalid_response")(
                f"{where}: HTTP {code}: a success response, it reports no error",
                retryable=False,
                upstream={"provider": where, "status": code},
            )
        name = provider or routing.detect(found, lowered)
        err = routing.adapter(name).from_response(None, headers, found)
        err.upstream = {**err.upstream, "status": code, "in_stream": True}
        return err
    text = body_text(body, 4096) if parsed is None else ""
    name = provider or routing.detect(parsed, lowered, text)
    if name == routing.GENERIC and host:  # the provider whose API lives at ``host``
        generic: Any = routing.adapter(name)
        read: HarnessError = generic._read(
            status, lowered, body, provider=generic._provider_for_host(host) or name
        )
        return read
    answer: HarnessError = routing.adapter(name).from_response(status, headers, body)
    return answer


def _registered_response(
    readers: list[Callable[[Any, Any, Any], HarnessError | None]],
    status: int | None,
    headers: dict[str, str],
    body: Any,
) -> HarnessError | None:
    """The answer of the first registered response reader that gives one (see ``_readers``):
    each gets the status as an int, lower-case headers and the parsed body."""
    for reader in readers:
        try:
            err = reader(status, headers, body)
        except Exception:  # a reader's bug never makes from_response raise
            continue
        if err is not None:
            return err
    return None


def _answers_in_objects(provider: str | None) -> bool:
    """Whether ``provider``'s SDK never returns text as a generating call's answer."""
    from .providers import PROVIDERS

    return any(p.name == provider and p.answers_in_objects for p in PROVIDERS)


def diagnose(
    result: Any, *, provider: str | None = None, tools: Iterable[Any] | None = None
) -> HarnessError | None:
    """The harness error a successful result means, or ``None`` if nothing is wrong.

    Never raises; see ``check``. The SDK result stays on the error as ``result``.
    """
    provider = _provider_name(provider)
    try:
        if isinstance(result, (str, bytes, bytearray)) and _answers_in_objects(provider):
            from ._not_answers import not_an_answer

            found = not_an_answer(result, provider)
            found.result = result
            return found
        name = provider or _routing().provider_of_result(result)
        if name is None or name == _routing().GENERIC:
            return None
        reader: Adapter = _routing().adapter(name)
    except Exception as bug:
        return unreadable_result(bug, provider)
    try:
        return reader.diagnose(result, tools)
    except Exception as bug:
        return unreadable_result(bug, provider)


def unreadable_result(bug: Exception, provider: str | None) -> HarnessError:
    """What a result no reader could read gives (``diagnose``'s answer to a reader's bug,
    and ``wrap()``'s, which calls a client's reader itself): ``harness.internal_error``."""
    return HarnessInternalError(
        f"normalize-errors could not read a result ({type(bug).__name__}).",
        retryable=False,
        upstream={
            "exception": type(bug).__name__,
            **({"provider": provider} if provider else {}),
        },
    )


def diagnose_stream(
    chunks: Any, *, provider: str | None = None, tools: Iterable[Any] | None = None
) -> HarnessError | None:
    """The harness error a finished stream's chunks mean, or ``None``; never raises.

    ``chunks`` are what the SDK's stream yielded (chat chunks, Responses or Anthropic events,
    Gemini responses), in order, or a recorded stream body (text or bytes: the JSON of its
    ``data:`` lines, or of its NDJSON lines, and its ``data: [DONE]``). ``provider`` names the
    SDK that made them; left out, the events' shape decides (``None`` when no event has a
    known shape). They are fed to the protocol's state machine (``_stream_state``), then its
    end is read: an error the stream carried; the final stop reason, read like a
    non-stream result's (a stream stopped at the token limit is ``output.truncated`` as its
    result would be); or, for chunks that end without the protocol's terminal event after
    the first one, the cut (``upstream.invalid_response``).
    """
    provider = _provider_name(provider)
    try:
        if isinstance(chunks, (str, bytes, bytearray, memoryview)):
            from ._base._http_wire import stream_events
            from ._reading._stream_state import DONE_MARK

            text = body_text(chunks)
            chunks = stream_events(text)
            if "data: [DONE]" in text or "data:[DONE]" in text:  # the SDKs do not yield it
                chunks.append(DONE_MARK)
        if provider is None:
            chunks = chunks if isinstance(chunks, list) else list(chunks)
            provider = _routing().provider_of_stream(chunks)
            if provider is None or provider == _routing().GENERIC:
                return None
        reader: Adapter = _routing().adapter(provider)
        return reader.diagnose_stream(chunks, tools)
    except Exception as bug:
        return HarnessInternalError(
            f"normalize-errors could not read a stream ({type(bug).__name__}).",
            retryable=False,
            upstream={
                "exception": type(bug).__name__,
                **({"provider": provider} if provider else {}),
            },
        )


def check(result: _R, *, provider: str | None = None, tools: Iterable[Any] | None = None) -> _R:
    """Return ``result`` untouched, or raise the typed error its stop reason means.

    ``result`` is an SDK result (a chat completion, a Responses ``Response``, an Anthropic
    ``Message``, a Gemini ``GenerateContentResponse``) or the same result as plain JSON.
    Failures: output cut at the token limit (``output.truncated``), content filters and
    blocked prompts (``policy.content_filtered``), refusals (``policy.model_refusal``),
    context overflow (``context.window_exceeded``), malformed or unknown tool calls
    (``output.invalid_tool_arguments``, ``output.unknown_tool`` when ``tools`` names the
    offered tools), failed or cancelled responses, and empty output (``output.empty``).
    The raised error carries the result as ``result``.
    """
    err = diagnose(result, provider=provider, tools=tools)
    if err is not None:
        raise err
    return result
