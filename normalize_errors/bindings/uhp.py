"""UHP: the error envelope of a harness service (Unified Harness Protocol ``2026-09-12``).

A UHP service answers a failed *request* with a non-2xx status and the envelope
``{"error": {"type", "code", "message", "param", "detail"}}``, and reports a failed or
cancelled *task* as HTTP 200 with ``"status": "failed"`` or ``"cancelled"`` and the same
``error`` object.

``from_envelope(status, headers, body)`` reads either into a harness error (the table
``CODES`` below, then the ``type``, then the status); ``to_envelope(err)`` writes a harness
error as ``(status, headers, body)`` for a service that speaks UHP. Round trips are exact:
``to_envelope`` puts the whole harness object into ``error.detail`` and ``from_envelope``
prefers such an object over its own table.

``from_response`` asks this reader for every response that carries the ``UHP-Version``
header, and for every response when called with ``provider="uhp"``, so a ``quota_exhausted``
429 is not retryable, unlike the OpenAI-shaped body it resembles.

What is read:

* ``retry_after`` from ``Retry-After`` (or ``retry-after-ms``) for every code;
* ``param`` (a dotted path) as ``location.pointer`` (``a.b.0`` -> ``/a/b/0``), and back;
* ``detail.max_bytes`` of ``file_too_large`` as ``limit`` (when it is a finite number;
  ``upstream.detail`` keeps it either way);
* everything the service said (``type``, ``code``, ``message``, ``param``, ``detail``,
  the status, the task's ``id``) in ``upstream``, with ``provider`` ``"uhp"``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final, NamedTuple

from .._base._http_wire import lower_headers, parse_body, retry_after, short
from .._base._safe_read import finite
from .._model._code_classes import class_for_code
from .._model._exceptions import HarnessError, ProblemFormatError
from .._model._registry import TYPE_URIS, code_info, status_code
from .http import public_problem, response_status

__all__ = [
    "CODES",
    "TYPES",
    "VERSION",
    "VERSION_HEADER",
    "UhpCode",
    "from_envelope",
    "to_envelope",
    "uhp_type",
]

VERSION: Final = "2026-09-12"
"""The UHP version whose error chapter this module follows."""
VERSION_HEADER: Final = "uhp-version"
"""The header that marks a response as UHP (any value)."""


class UhpCode(NamedTuple):
    """How one UHP code reads as a harness error."""

    code: str
    """The harness error code."""
    retryable: bool | None
    """``retryable`` to set (``None``: the registry default of ``code``)."""
    status: int | None
    """The HTTP status UHP gives the code (``None``: carried in a 200 task response)."""


# fmt: off
CODES: Final[dict[str, UhpCode]] = {
    # 3.1 Request and routing: the request is wrong; retrying it unchanged fails again.
    "unsupported_protocol_version": UhpCode("upstream.invalid_request", None, 400),
    "invalid_input": UhpCode("upstream.invalid_request", None, 400),
    "harness_not_found": UhpCode("upstream.invalid_request", None, 404),
    "response_not_found": UhpCode("upstream.invalid_request", None, 404),
    "session_not_found": UhpCode("upstream.invalid_request", None, 404),
    "plugin_not_found": UhpCode("upstream.invalid_request", None, 404),
    "file_not_found": UhpCode("upstream.invalid_request", None, 404),
    "session_expired": UhpCode("upstream.invalid_request", None, 404),
    "harness_mismatch": UhpCode("upstream.invalid_request", None, 409),
    # UHP section 4: retry once the in-flight task is terminal.
    "session_busy": UhpCode("upstream.invalid_request", True, 409),
    "plugin_conflict": UhpCode("upstream.invalid_request", None, 409),
    "file_too_large": UhpCode("upstream.invalid_request", None, 413),
    "model_unavailable": UhpCode("upstream.invalid_request", None, 422),
    "unsupported_base": UhpCode("upstream.invalid_request", None, 422),
    "plugin_invalid": UhpCode("upstream.invalid_request", None, 422),
    "unsupported_plugin_schema": UhpCode("upstream.invalid_request", None, 422),
    "unsupported_transport": UhpCode("upstream.invalid_request", None, 422),
    # 3.2 Authentication and limits.
    "missing_credential": UhpCode("upstream.authentication_failed", None, 401),
    "invalid_credential": UhpCode("upstream.authentication_failed", None, 401),
    "insufficient_scope": UhpCode("upstream.authentication_failed", None, 403),
    "rate_limited": UhpCode("upstream.rate_limited", True, 429),
    # "A budget is spent; retrying now will not help."
    "quota_exhausted": UhpCode("upstream.rate_limited", False, 429),
    # 3.3 Execution.
    "harness_unavailable": UhpCode("upstream.overloaded", True, 503),
    "preview_unavailable": UhpCode("upstream.invalid_request", False, 501),
    "preview_failed": UhpCode("upstream.unavailable", True, 502),
    # In a failed task response (HTTP 200): the outer error is upstream.agent_failed and
    # this row is its cause.
    "harness_error": UhpCode("harness.internal_error", None, None),
    "provider_error": UhpCode("upstream.unavailable", None, None),
    "timeout": UhpCode("loop.timeout", None, None),
    "cancelled": UhpCode("harness.cancelled", None, None),
}
"""Every code of UHP's section 3 and the harness error it reads as."""

TYPES: Final[dict[str, str]] = {
    "invalid_request_error": "upstream.invalid_request",
    "authentication_error": "upstream.authentication_failed",
    "permission_error": "upstream.authentication_failed",
    "rate_limit_error": "upstream.rate_limited",
    "harness_error": "harness.internal_error",
    "server_error": "upstream.unavailable",
}
"""A code the table does not know (a vendor's ``acme_...``) is read by its ``type``."""

# Harness code -> the UHP code to_envelope writes (section 3 codes only; "harness_error",
# "The harness ran and could not complete the work", for everything UHP has no word for).
_TO_UHP: Final[dict[str, str]] = {
    "upstream.overloaded": "harness_unavailable",
    "upstream.unavailable": "harness_unavailable",
    "upstream.authentication_failed": "provider_error",
    "upstream.invalid_request": "provider_error",
    "upstream.invalid_response": "provider_error",
    "loop.timeout": "timeout",
    "harness.cancelled": "cancelled",
}
# fmt: on


def uhp_type(status: int) -> str:
    """The UHP error ``type`` of an HTTP status (UHP section 2), by status class."""
    if status == 401:
        return "authentication_error"
    if status == 403:
        return "permission_error"
    if status == 429:
        return "rate_limit_error"
    if 400 <= status <= 499:
        return "invalid_request_error"
    if 200 <= status <= 299:
        return "harness_error"
    return "server_error"


def _uhp_code(err: HarnessError) -> str:
    if err.code == "upstream.rate_limited":
        return "rate_limited" if err.retryable else "quota_exhausted"
    return _TO_UHP.get(err.code, "harness_error")


def _param(pointer: Any) -> str | None:
    """A JSON Pointer as UHP's dotted path (``/items/0/price`` -> ``items.0.price``)."""
    if not isinstance(pointer, str) or not pointer.startswith("/"):
        return None
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]
    return ".".join(parts)


def _pointer(param: Any) -> str | None:
    """UHP's dotted path as a JSON Pointer (``metadata.harness_id`` -> ``/metadata/harness_id``)."""
    if not isinstance(param, str) or not param:
        return None
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in param.split("."))


def to_envelope(
    err: HarnessError, *, status: int | None = None, public: bool = False
) -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` of a UHP error response carrying ``err``.

    The status is chosen as ``to_http`` chooses it (``response_status``: ``status``, else
    the error's own 4xx or 5xx ``status``, never a received error's in public mode, else
    the draft's section 6.1); ``type`` follows from the status class;
    ``code`` is the UHP code of the harness code (see the README's table; ``harness_error``
    where UHP has no word); ``message`` is the registry's title of the code (never text
    from the error, so it is safe to show a user);
    ``param`` is ``location.pointer`` as a dotted path; ``detail`` is the whole harness
    object (``public_problem(err)`` with ``public=True``). Headers: ``content-type``,
    ``uhp-version`` and ``retry-after`` (whole seconds, rounded up) when ``retry_after`` is
    set.
    """
    err = err.problem
    code = response_status(err, status=status, public=public)
    location = err.location or {}
    problem = public_problem(err) if public else err.to_dict()
    problem["status"] = code
    envelope = {
        "error": {
            "type": uhp_type(code),
            "code": _uhp_code(err),
            "message": f"{code_info(err.code).title}.",
            "param": _param(location.get("pointer")),
            "detail": problem,
        }
    }
    headers = {"content-type": "application/json", VERSION_HEADER: VERSION}
    if err.retry_after is not None:
        headers["retry-after"] = str(math.ceil(err.retry_after))
    body = json.dumps(envelope, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return code, headers, body


def _carried(detail: Any) -> HarnessError | None:
    """The harness error object a UHP ``detail`` carries, if it carries one."""
    kind = detail.get("type") if isinstance(detail, dict) else None
    if not isinstance(kind, str) or kind not in TYPE_URIS:
        return None
    try:
        return HarnessError.from_dict(detail)
    except ProblemFormatError:
        return None


def _text(value: Any) -> str | None:
    return short(value, 1024) if isinstance(value, str) and value else None


def _read_error(error: dict[str, Any], status: int | None, wait: float | None) -> HarnessError:
    """A UHP ``error`` object as a harness error, by code, then type, then status."""
    uhp_code, kind = error.get("code"), error.get("type")
    row = CODES.get(uhp_code) if isinstance(uhp_code, str) else None
    retryable: bool | None
    if row is not None:
        code, retryable = row.code, row.retryable
    elif isinstance(kind, str) and kind in TYPES:
        code, retryable = TYPES[kind], None
        if kind == "server_error":
            retryable = status != 501
    else:
        code, retryable = status_code(status)
    upstream: dict[str, Any] = {"provider": "uhp"}
    if status is not None:
        upstream["status"] = status
    upstream.update(_said(error))
    for name in ("param", "detail"):
        if error.get(name) is not None:
            upstream[name] = error[name]
    message = _text(error.get("message"))
    detail = error.get("detail")
    limit = None
    if uhp_code == "file_too_large" and isinstance(detail, dict):
        max_bytes = detail.get("max_bytes")
        if finite(max_bytes) is not None:  # a size no float holds is no limit (upstream keeps it)
            limit = {"name": "upload_bytes", "value": max_bytes, "unit": "bytes"}
    pointer = _pointer(error.get("param"))
    return class_for_code(code)(
        f"uhp: {message or uhp_code or kind or 'no error details'}",
        code=code,
        retryable=retryable,
        retry_after=wait,
        limit=limit,
        location=None if pointer is None else {"pointer": pointer},
        upstream=upstream,
    )


def _task(body: dict[str, Any], status: int | None, wait: float | None) -> HarnessError:
    """A task response whose ``status`` is ``failed`` or ``cancelled``."""
    state = body["status"]
    error = body.get("error")
    error = error if isinstance(error, dict) else {}
    upstream: dict[str, Any] = {"provider": "uhp", "task_status": state}
    if status is not None:
        upstream["status"] = status
    if isinstance(body.get("id"), str):
        upstream["task_id"] = body["id"]
    if state == "cancelled":
        return class_for_code("harness.cancelled")(
            "uhp: the task was cancelled.", upstream={**upstream, **_said(error)}
        )
    cause = _carried(error.get("detail")) or _read_error(error, None, None)
    return class_for_code("upstream.agent_failed")(
        f"uhp: the task failed: {cause.detail or cause.title}",
        retry_after=wait,
        upstream={**upstream, **_said(error)},
        causes=[cause],
    )


def _said(error: dict[str, Any]) -> dict[str, str]:
    """The service's ``type``, ``code`` and ``message`` (strings only: ``upstream.code`` is a
    string in the draft)."""
    return {
        name: error[name]
        for name in ("type", "code", "message")
        if isinstance(error.get(name), str) and error[name]
    }


def from_envelope(status: Any, headers: Any, body: Any) -> HarnessError:
    """The harness error a UHP response reports; never raises.

    ``status`` is the HTTP status, ``headers`` any mapping, ``body`` bytes, text or parsed
    JSON: an error envelope, or a task response whose ``status`` is ``failed`` (read as
    ``upstream.agent_failed`` with the task's error as its cause) or ``cancelled``
    (``harness.cancelled``). An envelope whose ``detail`` is a harness error object gives
    that object. A body that is neither gives the error its status means (a 2xx then gives
    ``upstream.invalid_response``).
    """
    code = status if isinstance(status, int) and not isinstance(status, bool) else None
    try:
        lowered = lower_headers(headers)
        wait = retry_after(lowered)
        obj = parse_body(body)
        if isinstance(obj, dict) and obj.get("status") in ("failed", "cancelled"):
            return _task(obj, code, wait)
        error = obj.get("error") if isinstance(obj, dict) else None
        if isinstance(error, dict):
            carried = _carried(error.get("detail"))
            if carried is not None:
                if carried.retry_after is None:
                    carried.retry_after = wait
                return carried
            return _read_error(error, code, wait)
        if code is not None and 200 <= code <= 299:
            return class_for_code("upstream.invalid_response")(
                f"uhp: HTTP {code}: a success response, it reports no error",
                retryable=False,
                upstream={"provider": "uhp", "status": code},
            )
        harness_code, retryable = status_code(code)
        return class_for_code(harness_code)(
            f"uhp: HTTP {code}: no error envelope",
            retryable=retryable,
            retry_after=wait,
            upstream={"provider": "uhp", **({"status": code} if code is not None else {})},
        )
    except Exception as bug:  # never raise: report the bug as the library's own failure
        return class_for_code("harness.internal_error")(
            f"normalize-errors could not read a UHP response ({type(bug).__name__}).",
            upstream={"provider": "uhp", **({"status": code} if code is not None else {})},
        )


def _read_response(status: int | None, headers: dict[str, str], body: Any) -> HarnessError | None:
    """The reader ``from_response`` asks (registered as ``"uhp"``).

    Answers for responses with the ``UHP-Version`` header only; ``from_response(...,
    provider="uhp")`` calls ``from_envelope`` directly, whatever the headers.
    """
    if VERSION_HEADER not in headers:
        return None
    return from_envelope(status, headers, body)
