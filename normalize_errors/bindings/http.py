"""The HTTP binding (draft section 6.1): ``application/problem+json`` with ``Retry-After``.

``to_http(err)`` renders an error as ``(status, headers, body)``: the status the draft
recommends for the code (or the error's own ``status``), the problem media type, and a
``Retry-After`` header in whole seconds, rounded up from ``retry_after`` so that a client
obeying the header never retries early. The body carries the same ``status`` member.

``read_problem(status, headers, body)`` reads such a response back: it returns the typed
error when the body is a harness error object and ``None`` otherwise (``from_response`` then
reads the response as a provider error). ``retry_after`` missing from the body is taken from
``retry-after-ms`` or ``Retry-After`` (delta-seconds or HTTP-date).
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from .._registry import TYPE_URIS
from .._signals import lower_headers, parse_body, retry_after
from ..exceptions import HarnessError, ProblemFormatError

__all__ = ["PROBLEM_JSON", "read_problem", "to_http"]

PROBLEM_JSON: Final = "application/problem+json"


def to_http(err: HarnessError, *, status: int | None = None) -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` of an HTTP response carrying ``err``.

    The status is ``status`` if given, else the error's own ``status`` member, else the
    draft's recommendation for its code (``err.http_status``).
    """
    code = status or err.status or err.http_status
    problem = err.to_dict()
    problem["status"] = code
    headers = {"content-type": PROBLEM_JSON}
    if err.retry_after is not None:
        headers["retry-after"] = str(math.ceil(err.retry_after))
    body = json.dumps(problem, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return code, headers, body


def is_problem(obj: Any) -> bool:
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
    if not is_problem(obj):
        return None
    try:
        err = HarnessError.from_dict(obj)
    except (ProblemFormatError, ValueError, TypeError, OverflowError, RecursionError):
        return None
    if err.retry_after is None:
        err.retry_after = retry_after(lower_headers(headers))
    return err
