"""The Agent2Agent binding (draft section 8), both directions, on the A2A SDK.

Remote agent side:

* ``agent_extension()`` is the Agent Card extension declaration (section 8.1): URI
  ``https://agenterrors.org/ext/a2a/v1``, not required. Put it in
  ``AgentCard.capabilities.extensions``.
* ``to_task_status(err)`` is the ``TaskStatus`` of a task that ends because of ``err``
  (section 8.2): the state of Table 6 (``harness.cancelled`` -> canceled; refusals,
  guardrails and content filters -> rejected; every other code -> failed) and a status
  message with a text part (``detail``, else the title) and a data part holding the
  harness error object. ``to_message(err)`` is that message alone, and
  ``await finish(updater, err)`` ends a task through the SDK's ``TaskUpdater`` that way.
* ``to_a2a_error(err)`` is the A2A protocol error to raise (section 8.3), an
  ``InternalError`` unless you pass another class, with the object in ``data`` (the SDK's
  JSON-RPC server sends it as ``google.rpc.ErrorInfo.metadata``; its gRPC server drops it).
* Public mode (draft section 10): these writers take ``public``. By default (``None``) an
  error read from another party (``normalize()`` of an HTTP client's, an SDK's or the
  standard library's exception, a drop-in, a received object) is sent as
  ``public_problem(err)`` with its title as the text, and logged whole at WARNING on the
  ``normalize_errors`` logger; a harness error the agent built itself is sent whole.
  ``public=True`` always sends the public view, ``public=False`` always the whole object.

Delegating side (section 8.4):

* ``from_task(task)`` reads a ``Task`` (or a status update, or their JSON in the 1.0 or
  the 0.3 form) and returns ``None`` unless the task failed, was rejected or was cancelled.
  A harness error object in a data part becomes ``upstream.agent_failed`` with the object in
  ``causes`` and its ``retryable`` copied; without one, Table 7 decides (failed ->
  ``upstream.agent_failed``, rejected -> ``policy.model_refusal``, canceled ->
  ``upstream.agent_failed`` unless ``cancel_requested=True``, then ``harness.cancelled``).
  ``model_recoverable`` of the outer error is decided here, never copied: pass it, or the
  registry default of ``upstream.agent_failed`` applies. The task state (the draft's
  names: ``failed``), id and status text go to ``upstream`` with ``provider`` ``a2a``.
* ``normalize(exc)`` reads the SDK's exceptions: its protocol errors by their JSON-RPC code
  (Table 7), a harness error object in their ``data`` as above, ``A2AClientTimeoutError``
  and network failures as ``upstream.unavailable``, HTTP 429 as ``upstream.rate_limited``
  (with ``Retry-After``), 401/403 as ``upstream.authentication_failed`` and 5xx as
  ``upstream.unavailable``.

A received object is marked ``untrusted`` (its ``model_feedback`` is quoted by
``feedback_for_model()``), keeps its own ``causes`` (nested agents: bounded, the innermost
kept), and every integral float in it reads back as an integer (data parts store numbers
as doubles). Supported: ``a2a-sdk`` 1.x (protocol 1.0, protobuf types); 0.3-form JSON is
read too. Every function imports the SDK only when it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .._base._http_wire import lower_headers, retry_after
from .._base._patterns import A2A_JSONRPC_TEXT, MAX_MESSAGE
from .._model._code_classes import class_for_code
from .._model._exceptions import HarnessError
from ._public import full_view, is_public, public_view
from .jsonrpc import _adopt, _find_problem, from_jsonrpc

if TYPE_CHECKING:
    from a2a.server.tasks import TaskUpdater
    from a2a.types import AgentExtension, Message, TaskStatus
    from a2a.utils.errors import A2AError

__all__ = [
    "EXTENSION_URI",
    "REJECTED_CODES",
    "agent_extension",
    "finish",
    "from_task",
    "task_state",
    "to_a2a_error",
    "to_message",
    "to_task_status",
]

EXTENSION_URI: Final = "https://agenterrors.org/ext/a2a/v1"
"""The extension URI of this binding (section 8.1)."""

REJECTED_CODES: Final = frozenset(
    {"policy.model_refusal", "policy.guardrail_triggered", "policy.content_filtered"}
)
"""Codes whose task state is ``rejected`` (Table 6)."""

_FAILED_STATES: Final = frozenset({"failed", "rejected", "canceled"})


def task_state(err: HarnessError) -> str:
    """The A2A task state for ``err`` in the draft's names: canceled, rejected or failed."""
    err = err.problem
    if err.code == "harness.cancelled":
        return "canceled"
    return "rejected" if err.code in REJECTED_CODES else "failed"


def agent_extension(
    description: str = "Task failures and errors carry agent harness error objects.",
) -> AgentExtension:
    """The Agent Card extension declaration of this binding (``required`` false)."""
    from a2a.types import AgentExtension

    return AgentExtension(uri=EXTENSION_URI, description=description, required=False)


def _view(err: HarnessError, public: bool | None) -> tuple[dict[str, Any], bool]:
    """The object sent for ``err`` and whether it is the public view (see ``to_message``)."""
    if is_public(err, public):
        return public_view(err), True
    return full_view(err), False


def to_message(
    err: HarnessError,
    *,
    text: str | None = None,
    task_id: str = "",
    context_id: str = "",
    public: bool | None = None,
) -> Message:
    """The status message for ``err``: a text part, a data part with the object.

    The text part is ``text`` if given, else ``detail``, else the title.

    Public mode (draft section 10): ``public=None`` (the default) is public when ``err`` was
    read from another party (an HTTP client's, an SDK's or the standard library's exception
    through ``normalize()``, a drop-in from ``wrap()``, a received object); ``True`` always,
    ``False`` never. In public mode the data part is ``public_problem(err)`` (no ``detail``,
    ``model_feedback``, ``upstream`` or unknown members) and the text part is ``text`` if
    given, else the title; the full object is logged at WARNING on the ``normalize_errors``
    logger. A harness error the agent built itself is sent whole by default.
    """
    import uuid

    from a2a.helpers.proto_helpers import new_data_part, new_text_part
    from a2a.types import Message, Role

    err = err.problem
    problem, withheld = _view(err, public)
    fallback = str(problem.get("title") or err.title) if withheld else err.detail or err.title
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_AGENT,
        parts=[new_text_part(text or fallback), new_data_part(problem)],
        task_id=task_id,
        context_id=context_id,
    )


def to_task_status(
    err: HarnessError,
    *,
    text: str | None = None,
    task_id: str = "",
    context_id: str = "",
    public: bool | None = None,
) -> TaskStatus:
    """The ``TaskStatus`` of a task that ends because of ``err`` (Table 6); see ``to_message``."""
    from a2a.types import TaskState, TaskStatus

    state = TaskState.Value("TASK_STATE_" + task_state(err).upper())
    return TaskStatus(
        state=state,
        message=to_message(err, text=text, task_id=task_id, context_id=context_id, public=public),
    )


async def finish(
    updater: TaskUpdater,
    err: HarnessError,
    *,
    text: str | None = None,
    public: bool | None = None,
) -> None:
    """End a task through the SDK's ``TaskUpdater`` in the state of Table 6, with the message.

    ``public`` as for ``to_message``: by default an error read from another party is sent in
    its public view and logged whole.
    """
    message = to_message(
        err, text=text, task_id=updater.task_id, context_id=updater.context_id, public=public
    )
    state = task_state(err)
    if state == "canceled":
        await updater.cancel(message)
    elif state == "rejected":
        await updater.reject(message)
    else:
        await updater.failed(message)


def to_a2a_error(
    err: HarnessError,
    error_class: type[A2AError] | None = None,
    *,
    public: bool | None = None,
) -> A2AError:
    """The A2A protocol error carrying ``err`` in ``data`` (``InternalError`` by default).

    The message is ``detail``, else the title. ``public`` as for ``to_message``: in public
    mode ``data`` is ``public_problem(err)`` and the message is the title.
    """
    err = err.problem
    if error_class is None:
        from a2a.utils.errors import InternalError

        error_class = InternalError
    problem, withheld = _view(err, public)
    message = str(problem.get("title") or err.title) if withheld else err.detail or err.title
    failure = error_class(message, data=problem)
    failure.__cause__ = err
    return failure


# -- delegating side ----------------------------------------------------------------------


def _as_json(value: Any) -> Any:
    """A protobuf message, a pydantic model or JSON, as JSON."""
    if hasattr(value, "DESCRIPTOR") and hasattr(value, "ListFields"):
        from google.protobuf.json_format import MessageToDict

        return MessageToDict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    return value


def _state_name(state: Any) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` (1.0) or ``input-required`` (0.3) -> ``input-required``."""
    text = str(state)
    if text.startswith("TASK_STATE_"):
        text = text[len("TASK_STATE_") :]
    return text.lower().replace("_", "-")


def _parts(status: dict[str, Any]) -> tuple[str | None, Any]:
    """The first text and the first harness error object among a status message's parts."""
    message = status.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    text, problem = None, None
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        if text is None and isinstance(part.get("text"), str):
            text = part["text"]
        if problem is None and "data" in part:
            problem = _find_problem(part["data"])
    return text, problem


def from_task(
    task: Any, *, cancel_requested: bool = False, model_recoverable: bool | None = None
) -> HarnessError | None:
    """The harness error a remote task reports, or ``None`` (see the module doc).

    ``task`` is an A2A ``Task``, ``TaskStatusUpdateEvent`` or ``StreamResponse``, or their
    JSON. ``cancel_requested`` says this harness asked for the cancellation. Never raises.
    """
    try:
        return _from_task(task, cancel_requested, model_recoverable)
    except Exception as bug:
        return class_for_code("harness.internal_error")(
            f"normalize-errors could not read an A2A task ({type(bug).__name__}).",
            retryable=False,
            upstream={"provider": "a2a"},
        )


def _from_task(
    task: Any, cancel_requested: bool, model_recoverable: bool | None
) -> HarnessError | None:
    obj = _as_json(task)
    if not isinstance(obj, dict):
        return None
    for wrapper in ("task", "statusUpdate", "status_update", "result"):
        if isinstance(obj.get(wrapper), dict):
            obj = obj[wrapper]
            break
    status = obj.get("status")
    if not isinstance(status, dict):
        return None
    state = _state_name(status.get("state", ""))
    if state not in _FAILED_STATES:
        return None
    text, received = _parts(status)
    upstream: dict[str, Any] = {"provider": "a2a", "task_state": state}
    task_id = obj.get("id") or obj.get("taskId") or obj.get("task_id")
    if isinstance(task_id, str) and task_id:
        upstream["task_id"] = task_id
    if text:
        upstream["message"] = text
    if state == "canceled" and cancel_requested:
        return class_for_code("harness.cancelled")(
            "The remote task was cancelled at this harness's request.",
            upstream=upstream,
            causes=[] if received is None else [received],
        )
    if received is not None:
        err = _adopt(received, "a2a", upstream)
    else:
        code = "policy.model_refusal" if state == "rejected" else "upstream.agent_failed"
        what = {"failed": "failed", "rejected": "was rejected", "canceled": "was cancelled"}[state]
        err = class_for_code(code)(
            f"The remote agent's task {what}" + (f": {text}" if text else "."),
            upstream=upstream,
        )
    if model_recoverable is not None:
        err.model_recoverable = model_recoverable
    return err


# -- exceptions ---------------------------------------------------------------------------


def _protocol_code(exc: BaseException) -> int | None:
    """The JSON-RPC code of an A2A protocol error, by its class (the SDK's own table)."""
    try:
        from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP
    except ImportError:  # pragma: no cover - the exception came from the SDK
        return None
    for klass in type(exc).__mro__:
        code = JSON_RPC_ERROR_CODE_MAP.get(klass)
        if code is not None:
            return int(code)
    return None


def _status_error(exc: BaseException, status: int, headers: Any) -> HarnessError:
    upstream: dict[str, Any] = {"provider": "a2a", "status": status}
    detail = f"a2a: HTTP {status}"
    if status == 429:
        wait = retry_after(lower_headers(headers)) if headers is not None else None
        return class_for_code("upstream.rate_limited")(
            detail, retryable=True, retry_after=wait, upstream=upstream
        )
    if status in (401, 403):
        return class_for_code("upstream.authentication_failed")(detail, upstream=upstream)
    if status >= 500:
        return class_for_code("upstream.unavailable")(detail, upstream=upstream)
    return class_for_code("upstream.invalid_request")(detail, upstream=upstream)


def _read(exc: BaseException) -> HarnessError | None:
    """The reader ``normalize`` uses for exceptions of the ``a2a`` package."""
    names = {klass.__name__ for klass in type(exc).__mro__}
    message = str(getattr(exc, "message", "") or exc)
    if "A2AClientTimeoutError" in names:
        return class_for_code("upstream.unavailable")(
            "a2a: the request timed out.",
            upstream={"provider": "a2a", "code": "timeout", "message": message},
        )
    status = getattr(exc, "status_code", None)
    if "AgentCardResolutionError" in names and isinstance(status, int):
        return _status_error(exc, status, None)
    cause = exc.__cause__
    response = getattr(cause, "response", None) if cause is not None else None
    if response is not None and isinstance(getattr(response, "status_code", None), int):
        return _status_error(exc, response.status_code, getattr(response, "headers", None))
    if cause is not None and any(
        k.__name__ in ("RequestError", "TransportError") for k in type(cause).__mro__
    ):
        return class_for_code("upstream.unavailable")(
            f"a2a: {message}", upstream={"provider": "a2a", "code": "connection_error"}
        )
    code = _protocol_code(exc)
    if code is None:
        found = A2A_JSONRPC_TEXT.compiled().search(message[:MAX_MESSAGE])
        code = int(found.group(1)) if found else None
    if code is None and "A2AClientError" in names:
        return class_for_code("upstream.invalid_response")(
            f"a2a: {message}", upstream={"provider": "a2a", "message": message}
        )
    if code is None:
        return None
    return from_jsonrpc(
        {"code": code, "message": message, "data": getattr(exc, "data", None)}, "a2a"
    )
