"""The HTTP binding (draft section 6.1): ``application/problem+json`` with ``Retry-After``.

``to_http(err)`` renders an error as ``(status, headers, body)``: the status the draft
recommends for the code (or the error's own ``status``, only a 4xx or 5xx, and in public
mode only of an error the harness built itself: ``response_status``), the problem media type, and a
``Retry-After`` header in whole seconds, rounded up from ``retry_after`` so that a client
obeying the header never retries early. The body carries the same ``status`` member.

``to_http(err, public=True)`` is for clients that may not see the harness's internals (draft
section 10): see ``public_problem`` for what it leaves out.

``read_problem(status, headers, body)`` reads such a response back: it returns the typed
error when the body is a harness error object and ``None`` otherwise (``from_response`` then
reads the response as a provider error). ``retry_after`` missing from the body is taken from
``retry-after-ms`` or ``Retry-After`` (delta-seconds or HTTP-date).
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from .._base._http_wire import lower_headers, parse_body, retry_after
from .._model._exceptions import HarnessError, ProblemFormatError
from .._model._registry import TYPE_URIS, code_info

__all__ = [
    "PROBLEM_JSON",
    "PUBLIC_MEMBERS",
    "public_problem",
    "read_problem",
    "response_status",
    "to_http",
]

PROBLEM_JSON: Final = "application/problem+json"

PUBLIC_MEMBERS: Final = frozenset(
    {
        "type",
        "title",
        "status",
        "instance",
        "code",
        "origin",
        "retryable",
        "model_recoverable",
        "retry_after",
        "attempts",
        "max_attempts",
        "limit",
        "location",
        "causes",
    }
)
"""The members a public client is shown: what to do next, never what was said internally."""


def public_problem(err: HarnessError) -> dict[str, Any]:
    """The problem object of ``err`` as a client outside the harness may see it.

    Draft section 10: ``detail``, ``model_feedback``, ``upstream`` and ``causes`` can hold
    prompts, model output, tool data, vendor messages (with organisation and request ids) or
    an internal exception's text, so only ``PUBLIC_MEMBERS`` are kept: ``detail``,
    ``model_feedback``, ``upstream`` and unknown members are left out, here and in every
    entry of ``causes``; ``title`` is the registry's title of the code (a received object's
    own title is another party's text). The client still learns what happened (``code``,
    ``title``) and what to do (``retryable``, ``retry_after``, ``limit``...).
    """
    return _public(err.problem.to_dict())


def _public(problem: dict[str, Any]) -> dict[str, Any]:
    out = {key: value for key, value in problem.items() if key in PUBLIC_MEMBERS}
    code = out.get("code")
    if isinstance(code, str) and "title" in out:
        out["title"] = code_info(code).title
    causes = out.get("causes")
    if isinstance(causes, list):
        out["causes"] = [_public(cause) for cause in causes if isinstance(cause, dict)]
    return out


def to_http(
    err: HarnessError, *, status: int | None = None, public: bool = False
) -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` of an HTTP response carrying ``err``.

    The status is chosen by ``response_status``: ``status`` if given, else the error's own
    ``status`` member when it is a 4xx or 5xx (and, with ``public=True``, only when the
    error was not received from another party), else the draft's recommendation for its
    code (``err.http_status``). With ``public=True`` the body is ``public_problem(err)``:
    no ``detail``, ``model_feedback``, ``upstream`` or unknown members. A drop-in is
    rendered from its harness view (``err.problem``).

    Raises:
        ValueError: ``status`` is given and is not a 4xx or 5xx status.
    """
    err = err.problem
    code = response_status(err, status=status, public=public)
    problem = public_problem(err) if public else err.to_dict()
    problem["status"] = code
    headers = {"content-type": PROBLEM_JSON}
    if err.retry_after is not None:
        headers["retry-after"] = str(math.ceil(err.retry_after))
    body = json.dumps(problem, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return code, headers, body


def response_status(err: HarnessError, *, status: int | None = None, public: bool = False) -> int:
    """The HTTP status of a response carrying ``err``: always a 4xx or 5xx.

    ``status`` when given. Else the error's own ``status`` member, but only when it is 4xx or
    5xx, and never in public mode for an error received from another party (``untrusted``:
    read by ``from_dict``, ``from_json``, ``read_problem``, ``from_response``): a remote
    object saying ``"status": 200`` (or 204, 304) must not make the harness answer its own
    client 200 OK, nor a 204 or 304 with a body. Else the draft's status for the code
    (``err.http_status``, section 6.1).

    Raises:
        ValueError: ``status`` is given and is not a 4xx or 5xx status.
    """
    if status is not None:
        if not _error_status(status):
            raise ValueError(f"an error response needs a 4xx or 5xx status, not {status!r}")
        return status
    err = err.problem
    own = err.status
    if own is not None and _error_status(own) and not (public and err.untrusted):
        return own
    return err.http_status


def _error_status(status: Any) -> bool:
    return isinstance(status, int) and not isinstance(status, bool) and 400 <= status <= 599


def _is_problem(obj: Any) -> bool:
    """Whether ``obj`` looks like a harness error object (by its ``type`` and ``code``)."""
    if not isinstance(obj, dict):
        return False
    kind = obj.get("type")
    return isinstance(kind, str) and kind in TYPE_URIS and isinstance(obj.get("code"), str)


def read_problem(status: Any, headers: Any, body: Any) -> HarnessError | None:
    """The harness error carried by an HTTP response, or ``None`` if it carries none.

    A body is read as a harness error when its ``type`` is one of the two harness error type
    URIs. A body that claims the type but breaks the format also gives ``None``, so the
    caller can report it as an invalid response. Never raises.
    """
    obj = parse_body(body)
    if not _is_problem(obj):
        return None
    try:
        err = HarnessError.from_dict(obj)
    except (ProblemFormatError, ValueError, TypeError, OverflowError, RecursionError):
        return None
    if err.retry_after is None:
        err.retry_after = retry_after(lower_headers(headers))
    return err
