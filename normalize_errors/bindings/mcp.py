"""The Model Context Protocol binding (draft section 7), both directions, on the MCP SDK.

Server side (section 7.2):

* ``to_tool_result(err)`` is the ``CallToolResult`` of a tool execution error: ``isError``
  true, one text item with ``model_feedback`` (else ``detail``, else the title), and the
  harness error object in ``_meta`` under ``org.agenterrors/harness-error``. Only text that
  is already in the object goes into the content, so nothing reaches the model that would
  not also be allowed in ``model_feedback``.
* ``to_mcp_error(err)`` is the ``MCPError`` to raise for the errors that are not tool
  execution errors (draft Table 4: ``-32602`` for ``output.unknown_tool``, ``-32603`` for
  the rest), with the object in ``data``.
* ``reply(err)`` picks one of the two: a tool result for the codes of section 7.2
  (``is_tool_error(err)``), else the ``MCPError``.
* ``@tool_errors`` makes a tool function (sync or async) answer that way when it raises:
  a ``HarnessError`` as it is, the SDK's ``ToolError`` as ``tool.execution_failed`` with its
  own text (the SDK's "anticipated failure", written for the model), any other exception
  through ``normalize``; an exception ``normalize`` does not know becomes
  ``tool.execution_failed`` naming only its class, so its text (which may hold anything)
  never reaches the model.
* ``install(server)`` does the same for every tool of an ``MCPServer``, and answers a
  call to a tool the server does not offer with ``-32602`` (the SDK's default is an
  ``isError`` result with the text "Unknown tool").

Client side (section 7.3):

* ``from_tool_result(result, tool_name=None)`` reads a ``CallToolResult`` (or its JSON)
  and returns ``None`` unless ``isError`` is set. An object in ``_meta`` is used as is
  (``origin`` defaults to ``tool``); otherwise the result is ``tool.execution_failed``
  (``output.unknown_tool`` for the SDK's "Unknown tool:" text), with its text as
  ``model_feedback``. The result is marked ``untrusted``: ``feedback_for_model()`` quotes it.
* ``normalize(exc)`` reads the SDK's ``MCPError`` (and the OAuth errors of its HTTP
  transport) with ``provider`` ``mcp``: the JSON-RPC code and message go to ``upstream``
  and Table 5 decides the code (see ``normalize_errors.bindings.jsonrpc``).

HTTP 401 and 403 (Table 5): the SDK's Streamable HTTP client reports them as ``-32603``
"Server returned an error response", so the status is lost. Pass
``httpx2.AsyncClient(event_hooks={"response": [raise_for_auth]})`` as its ``http_client``:
the 401 or 403 then surfaces as ``httpx2.HTTPStatusError`` (inside the SDK's exception
groups), which ``normalize`` reads as ``upstream.authentication_failed`` with the status in
``upstream`` (provider ``http``, the transport that answered).

Sampling (section 7.4): ``sampling_error(err)`` is the ``ErrorData`` a client's
``sampling_callback`` returns when its harness fails; ``sampling_declined()`` is the one for
a user who declines (``policy.approval_denied``, JSON-RPC code ``-1`` as in the MCP
specification's example). ``sampling_error`` is in public mode by default for an error read
from another party (``public=``, as ``install`` decides for tools).

Supported: the ``mcp`` SDK 2.x (``MCPServer``, ``MCPError``). Every function imports the SDK
only when it runs.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from .._facade import normalize
from .._model._code_classes import class_for_code
from .._model._exceptions import HarnessError
from ._public import full_view, is_public, public_view, read_from_another_party
from .jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, _adopt, _find_problem, from_jsonrpc, to_jsonrpc

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp.server.mcpserver import MCPServer
    from mcp.shared.exceptions import MCPError
    from mcp.types import CallToolResult, ErrorData

    _F = TypeVar("_F", bound=Callable[..., Any])

__all__ = [
    "META_KEY",
    "SAMPLING_DECLINED",
    "TOOL_RESULT_CODES",
    "from_tool_result",
    "install",
    "is_tool_error",
    "raise_for_auth",
    "reply",
    "sampling_declined",
    "sampling_error",
    "to_mcp_error",
    "to_tool_result",
    "tool_errors",
]

META_KEY: Final = "org.agenterrors/harness-error"
"""The ``_meta`` key that carries a harness error object (section 7.1)."""

TOOL_RESULT_CODES: Final = frozenset(
    {
        "tool.execution_failed",
        "tool.timeout",
        "tool.permission_denied",
        "tool.not_available",
        "tool.sandbox_violation",
        "output.invalid_tool_arguments",
    }
)
"""Codes reported as tool execution errors (section 7.2), with every ``upstream.*`` code."""

SAMPLING_DECLINED: Final = -1
"""The JSON-RPC code of a declined sampling request (the MCP specification's example)."""

_UNKNOWN_TOOL_TEXT: Final = "Unknown tool:"


def is_tool_error(err: HarnessError) -> bool:
    """Whether ``err`` is reported as a tool execution error rather than a JSON-RPC error."""
    err = err.problem
    return err.code in TOOL_RESULT_CODES or err.category == "upstream"


def to_tool_result(err: HarnessError, *, public: bool = False) -> CallToolResult:
    """The ``CallToolResult`` of a tool execution error carrying ``err`` (section 7.2).

    With ``public=True`` the result carries ``public_problem(err)`` and its title only (no
    ``detail``, ``model_feedback`` or ``upstream``); the full object is logged at WARNING on
    the ``normalize_errors`` logger.
    """
    from mcp.types import CallToolResult, TextContent

    err = err.problem
    if public:
        problem = public_view(err)
        text = str(problem.get("title") or err.title)
    else:
        problem = full_view(err)
        text = err.model_feedback or err.detail or err.title
    return CallToolResult(
        is_error=True,
        content=[TextContent(type="text", text=text)],
        _meta={META_KEY: problem},
    )


def to_mcp_error(err: HarnessError, code: int | None = None, *, public: bool = False) -> MCPError:
    """The ``MCPError`` carrying ``err`` in ``data``, with the JSON-RPC code of Table 4.

    With ``public=True``: ``public_problem(err)`` in ``data``, the title as ``message``.
    """
    from mcp.shared.exceptions import MCPError

    err = err.problem
    if code is None:
        code = INVALID_PARAMS if err.code == "output.unknown_tool" else INTERNAL_ERROR
    if public:
        problem = public_view(err)
        failure = MCPError(code, str(problem.get("title") or err.title), problem)
    else:
        error = to_jsonrpc(err, code)
        failure = MCPError(error["code"], error["message"], error["data"])
    failure.__cause__ = err
    return failure


def reply(err: HarnessError, *, public: bool = False) -> CallToolResult | MCPError:
    """A tool result for the codes of section 7.2, else the ``MCPError`` to raise."""
    if is_tool_error(err):
        return to_tool_result(err, public=public)
    return to_mcp_error(err, public=public)


def _for_tool(exc: BaseException, tool_name: str | None) -> HarnessError:
    """The harness error a tool's exception reports; unknown exceptions keep their text out."""
    if _anticipated(exc):  # the SDK's ToolError or ResourceError: its text is for the model
        text = str(exc)
        err = class_for_code("tool.execution_failed")(text, origin="tool", model_feedback=text)
        err.__cause__ = exc
    else:
        err = normalize(exc)
    if err.code == "harness.internal_error" and not isinstance(exc, HarnessError):
        err = class_for_code("tool.execution_failed")(
            f"The tool failed ({type(exc).__name__}).", origin="tool"
        )
        err.__cause__ = exc
    if tool_name is not None:
        location = dict(err.location or {})
        if "tool_name" not in location:
            location["tool_name"] = tool_name
            err.location = location
    return err


def _answer(exc: Exception, tool_name: str | None, public: bool = True) -> CallToolResult:
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, MCPError):
        raise exc  # already a protocol error the tool chose
    err = _for_tool(exc, tool_name)
    # Public unless the tool meant it for the model: the SDK's ToolError, or an error that
    # holds nothing read from another party (the tool's own, or this binding's own text).
    withheld = public and not _anticipated(exc) and read_from_another_party(err)
    answer = reply(err, public=withheld)
    if isinstance(answer, BaseException):
        raise answer from exc
    return answer


def tool_errors(function: _F) -> _F:
    """Decorate a tool function so that what it raises reaches the client per section 7.2.

    The function keeps its name, signature and annotations (servers build the tool's
    schema from them); it returns a ``CallToolResult`` or raises an ``MCPError`` on failure.
    """
    name = getattr(function, "__name__", None)
    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await function(*args, **kwargs)
            except Exception as exc:
                return _answer(exc, name)

        return run_async  # type: ignore[return-value]  # same signature, by functools.wraps

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except Exception as exc:
            return _answer(exc, name)

    return run  # type: ignore[return-value]  # same signature, by functools.wraps


def install(server: MCPServer, *, public: bool = True) -> MCPServer:
    """Make every tool of ``server`` report failures per section 7.2 and Table 4.

    A harness error (or any exception) raised by a tool becomes a tool execution error or
    an ``MCPError`` as ``reply`` decides; a call to a tool the server does not offer is
    answered with ``-32602`` and an ``output.unknown_tool`` object. Arguments that fail the
    tool's input schema become ``output.invalid_tool_arguments`` naming the fields only
    (the rejected values are the caller's data). Returns ``server``.

    Public mode (``public=True``, the default): an error the tool did not mean as its answer
    to the model (one read from an HTTP client's, an SDK's or the standard library's
    exception, or a drop-in from ``wrap()``) reaches the client as ``public_problem(err)``
    with its title as the text; the full object is logged at WARNING on the
    ``normalize_errors`` logger. The SDK's ``ToolError`` and a harness error the tool built
    itself are forwarded whole. ``public=False`` forwards every error whole.
    """
    from mcp.server.mcpserver.exceptions import ToolError

    call_tool = server.call_tool

    @functools.wraps(call_tool)
    async def checked(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        offered = {tool.name for tool in await server.list_tools()}
        if name not in offered:
            raise to_mcp_error(
                class_for_code("output.unknown_tool")(
                    f"The server offers no tool named {name!r}.",
                    model_feedback=f"There is no tool named {name!r}. "
                    f"Available tools: {', '.join(sorted(offered)) or 'none'}.",
                    location={"tool_name": name},
                )
            )
        try:
            return await call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if _is_validation_error(cause):
                fields = sorted(
                    {".".join(str(p) for p in item["loc"]) for item in cast("Any", cause).errors()}
                )
                return to_tool_result(
                    class_for_code("output.invalid_tool_arguments")(
                        f"Arguments of {name!r} failed validation: {', '.join(fields)}.",
                        model_feedback=f"Invalid arguments for tool {name!r}: "
                        f"check {', '.join(fields)} against the tool's input schema.",
                        location={"tool_name": name},
                    )
                )
            if isinstance(cause, Exception) and not _anticipated(cause):
                return _answer(cause, name, public)
            return _answer(exc, name, public)  # anticipated: its own text, as the SDK does

    # The instance's own entry point (MCPServer's call handler calls self.call_tool).
    setattr(server, "call_tool", checked)  # noqa: B010 - a method assignment, typed or not
    return server


def _anticipated(exc: BaseException) -> bool:
    """Whether ``exc`` is an ``MCPServer`` failure its author meant the model to read."""
    return any(
        klass.__name__ == "MCPServerError" and klass.__module__.startswith("mcp.")
        for klass in type(exc).__mro__
    )


def _is_validation_error(exc: BaseException | None) -> bool:
    return any(
        klass.__name__ == "ValidationError" and klass.__module__.startswith("pydantic")
        for klass in type(exc).__mro__
    )


# -- client side --------------------------------------------------------------------------


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, dict):
            if name in obj:
                return obj[name]
        else:
            value = getattr(obj, name, None)
            if value is not None:
                return value
    return None


def _first_text(content: Any) -> str | None:
    if not isinstance(content, (list, tuple)):
        return None
    for item in content:
        if _get(item, "type") == "text":
            text = _get(item, "text")
            if isinstance(text, str):
                return text
    return None


def from_tool_result(result: Any, tool_name: str | None = None) -> HarnessError | None:
    """The harness error a ``tools/call`` result reports, or ``None`` if it is no error.

    ``result`` is the SDK's ``CallToolResult``, its JSON (``isError``, ``_meta``) or a whole
    JSON-RPC response holding it. Never raises.
    """
    try:
        return _from_tool_result(result, tool_name)
    except Exception as bug:
        return class_for_code("harness.internal_error")(
            f"normalize-errors could not read an MCP tool result ({type(bug).__name__}).",
            retryable=False,
            upstream={"provider": "mcp"},
        )


def _from_tool_result(result: Any, tool_name: str | None) -> HarnessError | None:
    if isinstance(result, dict) and isinstance(result.get("result"), dict):
        result = result["result"]
    if _get(result, "is_error", "isError") is not True:
        return None
    meta = _get(result, "meta", "_meta")
    received = _find_problem(meta.get(META_KEY)) if isinstance(meta, Mapping) else None
    if received is not None:
        err = _adopt(received, "mcp", {})
    else:
        text = _first_text(_get(result, "content"))
        code = "tool.execution_failed"
        if text is not None and text.startswith(_UNKNOWN_TOOL_TEXT):
            code = "output.unknown_tool"
        where = f"Tool {tool_name!r}" if tool_name else "The tool"
        err = class_for_code(code)(
            f"{where} reported an error." if text is None else f"{where} reported an error: {text}",
            origin="tool",
            model_feedback=text,
            upstream={"provider": "mcp", "is_error": True},
            untrusted=True,
        )
    if tool_name is not None and not (err.location or {}).get("tool_name"):
        err.location = {**(err.location or {}), "tool_name": tool_name}
    return err


def _read(exc: BaseException) -> HarnessError | None:
    """The reader ``normalize`` uses for exceptions of the ``mcp`` package."""
    error = getattr(exc, "error", None)
    if error is not None and isinstance(getattr(error, "code", None), int):
        return from_jsonrpc(error, "mcp")
    names = {klass.__name__ for klass in type(exc).__mro__}
    if names & {"OAuthFlowError", "OAuthTokenError", "OAuthRegistrationError"}:
        return class_for_code("upstream.authentication_failed")(
            f"mcp: {type(exc).__name__}: {exc}", upstream={"provider": "mcp"}
        )
    return None


async def raise_for_auth(response: Any) -> None:
    """An ``httpx2`` response hook that raises on HTTP 401 and 403 (see the module doc)."""
    if response.status_code in (401, 403):
        await response.aread()
        response.raise_for_status()


# -- sampling ------------------------------------------------------------------------------


def sampling_error(
    err: HarnessError, code: int | None = None, *, public: bool | None = None
) -> ErrorData:
    """The ``ErrorData`` a ``sampling_callback`` returns when the harness fails (7.4).

    Public mode (draft section 10): ``public=None`` (the default) is public when ``err`` was
    read from another party (the client's own model call: an HTTP client's, an SDK's or the
    standard library's exception through ``normalize()``, a drop-in, a received object);
    ``True`` always, ``False`` never. In public mode ``data`` is ``public_problem(err)`` and
    the message its title; the full object is logged at WARNING on the ``normalize_errors``
    logger. A harness error the client built itself is sent whole by default.
    """
    from mcp.types import ErrorData

    err = err.problem
    if code is None:
        code = SAMPLING_DECLINED if err.code == "policy.approval_denied" else INTERNAL_ERROR
    if is_public(err, public):
        problem = public_view(err)
        return ErrorData(code=code, message=str(problem.get("title") or err.title), data=problem)
    error = to_jsonrpc(err, code)
    return ErrorData(code=error["code"], message=error["message"], data=error["data"])


def sampling_declined(detail: str = "The user declined the sampling request.") -> ErrorData:
    """The ``ErrorData`` for a sampling request the user declined: ``policy.approval_denied``."""
    return sampling_error(class_for_code("policy.approval_denied")(detail, origin="user"))
