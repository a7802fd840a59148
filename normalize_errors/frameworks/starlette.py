"""Return harness errors from a Starlette or FastAPI service as problem+json responses.

One line::

    from normalize_errors.frameworks.starlette import install
    install(app)            # HarnessError -> application/problem+json

``install(app, catch_all=True)`` also turns every other exception into a harness error with
``normalize()`` (a bug becomes ``harness.internal_error``, status 500), so a service never
answers with a stack trace. The status, ``Retry-After`` header and body come from the HTTP
binding (``normalize_errors.bindings.http.to_http``).

Needs the ``starlette`` extra (FastAPI includes Starlette).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..bindings.http import to_http
from ..exceptions import HarnessError

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = ["harness_error_handler", "install", "problem_response"]


def problem_response(err: HarnessError) -> Response:
    """A Starlette ``Response`` carrying ``err`` as ``application/problem+json``."""
    from starlette.responses import Response

    status, headers, body = to_http(err)
    return Response(content=body, status_code=status, headers=headers, media_type=None)


async def harness_error_handler(request: Request, exc: Exception) -> Response:
    """An exception handler: a ``HarnessError`` as it is, anything else normalized."""
    if not isinstance(exc, HarnessError):
        from .._facade import normalize

        exc = normalize(exc)
    return problem_response(exc)


def install(app: Any, *, catch_all: bool = False) -> None:
    """Register ``harness_error_handler`` on a Starlette or FastAPI ``app``.

    With ``catch_all`` every exception is answered as a harness error, not only
    ``HarnessError``.
    """
    app.add_exception_handler(HarnessError, harness_error_handler)
    if catch_all:
        app.add_exception_handler(Exception, harness_error_handler)
