"""The JSON-RPC binding (draft section 6.3): a harness error object in an error's ``data``.

``to_jsonrpc(err, code=None)`` gives the JSON-RPC error object ``{"code", "message",
"data"}``: ``data`` is the harness error object, ``message`` its ``detail`` (else its
title), and ``code`` the one given, else ``-32602`` (Invalid params) for
``output.unknown_tool`` and ``output.invalid_tool_arguments`` and ``-32603`` (Internal
error) for every other code. The draft allocates no JSON-RPC codes: the protocol in use
chooses them, so pass ``code`` when it says otherwise.

``from_jsonrpc(error, protocol=None)`` reads a JSON-RPC error back. ``error`` is the error
object as a dict, a whole response (``{"jsonrpc", "id", "error"}``) or any object with
``code``, ``message`` and ``data`` attributes (the MCP SDK's ``ErrorData`` and ``MCPError``).
A harness error object in ``data`` is recognised by its ``type`` and preferred over the
JSON-RPC code; it is also found inside a list (A2A 1.x sends ``data`` as a list of
``google.rpc.ErrorInfo`` entries whose ``metadata`` holds it). Without one, the JSON-RPC
code is read by the protocol's own table, because codes differ between protocols: ``-32001``
is the MCP SDK's request timeout but A2A's ``TaskNotFoundError``. ``protocol`` is
``"mcp"`` (draft Table 5), ``"a2a"`` (Table 7) or ``None`` for plain JSON-RPC 2.0. The
JSON-RPC code (as a string) and message always go to ``upstream`` with
``provider`` set to the protocol (``"jsonrpc"`` for plain JSON-RPC).

What a received object turns into also depends on the protocol: for MCP it is used as is,
with ``origin`` set to ``tool`` when absent (section 7.3); for A2A it is wrapped as
``upstream.agent_failed`` with the object in ``causes`` and its ``retryable`` copied
(section 8.4); for plain JSON-RPC it is used as is. A received object is always marked
``untrusted``. ``from_jsonrpc`` never raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._base._patterns import JSONRPC_UNKNOWN_TOOL, MAX_MESSAGE
from .._model._code_classes import class_for_code
from .._model._exceptions import HarnessError, ProblemFormatError
from .._model._registry import TYPE_URIS

__all__ = [
    "A2A_CODES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JSONRPC_CODES",
    "MCP_CODES",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "from_jsonrpc",
    "to_jsonrpc",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

_PARAMS_CODES: Final = frozenset({"output.unknown_tool", "output.invalid_tool_arguments"})

JSONRPC_CODES: Final[dict[int, str]] = {
    PARSE_ERROR: "upstream.invalid_request",
    INVALID_REQUEST: "upstream.invalid_request",
    METHOD_NOT_FOUND: "upstream.invalid_request",
    INVALID_PARAMS: "upstream.invalid_request",
    INTERNAL_ERROR: "upstream.unavailable",
}
"""Plain JSON-RPC 2.0: the peer is an upstream service. Any other code (server-defined
errors included) is ``upstream.unavailable``."""

MCP_CODES: Final[dict[int, str]] = {
    PARSE_ERROR: "harness.internal_error",
    INVALID_REQUEST: "harness.internal_error",
    METHOD_NOT_FOUND: "tool.not_available",
    INVALID_PARAMS: "output.invalid_tool_arguments",  # or output.unknown_tool, by the message
    INTERNAL_ERROR: "tool.execution_failed",
    -32000: "tool.not_available",  # the SDK's CONNECTION_CLOSED, never on the wire
    -32001: "tool.timeout",  # the SDK's REQUEST_TIMEOUT, never on the wire
    -32020: "tool.not_available",  # HEADER_MISMATCH (2026-07-28): the tool list changed
    -32021: "upstream.invalid_request",  # MISSING_REQUIRED_CLIENT_CAPABILITY
    -32022: "upstream.invalid_request",  # UNSUPPORTED_PROTOCOL_VERSION
    -32042: "upstream.authentication_failed",  # URL_ELICITATION_REQUIRED, not completed
}
"""MCP (draft Table 5, plus the MCP SDK's own codes). Any other code is
``tool.execution_failed`` ("other server error")."""

A2A_CODES: Final[dict[int, str]] = {
    **JSONRPC_CODES,
    -32001: "upstream.invalid_request",  # TaskNotFoundError
    -32002: "upstream.invalid_request",  # TaskNotCancelableError
    -32003: "upstream.invalid_request",  # PushNotificationNotSupportedError
    -32004: "upstream.invalid_request",  # UnsupportedOperationError
    -32005: "upstream.invalid_request",  # ContentTypeNotSupportedError
    -32006: "upstream.invalid_response",  # InvalidAgentResponseError
    -32007: "upstream.invalid_request",  # ExtendedAgentCardNotConfiguredError (A2A 1.0)
    -32008: "upstream.invalid_request",  # ExtensionSupportRequiredError (A2A 1.0)
    -32009: "upstream.invalid_request",  # VersionNotSupportedError (A2A 1.0)
}
"""A2A (draft Table 7, plus the three codes A2A 1.0 added). Any other code is
``upstream.unavailable``."""

_TABLES: Final[dict[str | None, tuple[dict[int, str], str]]] = {
    None: (JSONRPC_CODES, "upstream.unavailable"),
    "jsonrpc": (JSONRPC_CODES, "upstream.unavailable"),
    "mcp": (MCP_CODES, "tool.execution_failed"),
    "a2a": (A2A_CODES, "upstream.unavailable"),
}


def to_jsonrpc(err: HarnessError, code: int | None = None) -> dict[str, Any]:
    """The JSON-RPC error object carrying ``err`` in ``data`` (see the module doc)."""
    err = err.problem
    if code is None:
        code = INVALID_PARAMS if err.code in _PARAMS_CODES else INTERNAL_ERROR
    problem = err.to_dict()
    problem.pop("status", None)  # outside HTTP (section 6.2)
    return {"code": code, "message": err.detail or err.title, "data": problem}


def _integral(value: Any) -> Any:
    """``value`` as plain JSON, with every integral float, at any depth, read as an ``int``.

    Carriers that store numbers as doubles (A2A data parts are ``google.protobuf.Value``)
    turn ``3`` into ``3.0``; the draft's integer members read back as integers. Read-only
    mappings (the Agents SDK hands ``_meta`` over as ``MappingProxyType``) become dicts.
    """
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_integral(item) for item in value]
    return value


def _is_problem(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    kind = obj.get("type")  # any JSON value: a list or an object is not hashable
    return isinstance(kind, str) and kind in TYPE_URIS and isinstance(obj.get("code"), str)


def _find_problem(data: Any) -> HarnessError | None:
    """The harness error object carried in ``data``, read with ``HarnessError.from_dict``.

    ``data`` may be the object itself, or a list whose entry is the object or holds it in
    ``metadata`` (A2A 1.x's ``google.rpc.ErrorInfo``). An object that claims the type but is
    not valid gives ``None``. Integral floats read back as integers.
    """
    data = _integral(data)
    candidates: list[Any] = [data]
    if isinstance(data, list):
        candidates = [*data, *(item.get("metadata") for item in data if isinstance(item, dict))]
    for candidate in candidates:
        if _is_problem(candidate):
            try:
                return HarnessError.from_dict(candidate)
            except ProblemFormatError:
                return None
    return None


def _member(error: Any, name: str) -> Any:
    if isinstance(error, dict):
        return error.get(name)
    try:
        return getattr(error, name, None)
    except Exception:
        return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def from_jsonrpc(error: Any, protocol: str | None = None) -> HarnessError:
    """The harness error for a received JSON-RPC error (see the module doc); never raises."""
    try:
        return _from_jsonrpc(error, protocol)
    except Exception as bug:
        return class_for_code("harness.internal_error")(
            f"normalize-errors could not read a JSON-RPC error ({type(bug).__name__}).",
            retryable=False,
            upstream={"provider": protocol or "jsonrpc"},
        )


def _from_jsonrpc(error: Any, protocol: str | None) -> HarnessError:
    if isinstance(error, dict) and isinstance(error.get("error"), dict):
        error = error["error"]  # a whole response
    raw_code, message = _member(error, "code"), _text(_member(error, "message"))
    code = raw_code if isinstance(raw_code, int) and not isinstance(raw_code, bool) else None
    provider = protocol or "jsonrpc"
    upstream: dict[str, Any] = {"provider": provider}
    if code is not None:
        upstream["code"] = str(code)
    if message:
        upstream["message"] = message
    received = _find_problem(_member(error, "data"))
    if received is not None:
        return _adopt(received, protocol, upstream)
    table, default = _TABLES.get(protocol, _TABLES[None])
    harness_code = default if code is None else table.get(code, default)
    if (
        protocol == "mcp"
        and code == INVALID_PARAMS
        and JSONRPC_UNKNOWN_TOOL.compiled().search(message[:MAX_MESSAGE])
    ):
        harness_code = "output.unknown_tool"
    detail = f"{provider}: JSON-RPC error {code if code is not None else '(no code)'}"
    if message:
        detail += f": {message}"
    return class_for_code(harness_code)(detail, upstream=upstream)


def _adopt(received: HarnessError, protocol: str | None, upstream: dict[str, Any]) -> HarnessError:
    """What a harness reports for an object received over ``protocol`` (see the module doc).

    For A2A, ``upstream`` (the carrier's facts: JSON-RPC code and message, task state) goes
    to the outer ``upstream.agent_failed``; for MCP and plain JSON-RPC the received object is
    used as is (for MCP with ``origin`` set to ``tool`` when it has none).
    """
    if protocol == "a2a":
        return class_for_code("upstream.agent_failed")(
            f"The remote agent reported {received.code}.",
            retryable=received.retryable,
            upstream=upstream,
            causes=[received],
        )
    if protocol == "mcp" and "origin" not in received.to_dict():
        received.origin = "tool"
    return received
