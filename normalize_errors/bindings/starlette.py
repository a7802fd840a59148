"""Return harness errors from a Starlette or FastAPI service as problem+json responses.

One line:

```python
from normalize_errors.bindings.starlette import install
install(app)  # HarnessError -> application/problem+json
```

``install(app, catch_all=True)`` also turns every other exception into a harness error with
``normalize()`` (a bug becomes ``harness.internal_error``, status 500), so a service never
answers with a stack trace. The status, ``Retry-After`` header and body come from the HTTP
binding (``normalize_errors.bindings.http.to_http``).

Public mode (``public=True``, the default with ``catch_all=True``) answers with
``public_problem(err)``: no ``detail``, ``model_feedback``, ``upstream`` (provider, request
ids, the vendor's rate-limit headers) or unknown members, so an internal exception's text
and the vendor's words never reach the client (draft section 10). Log the full error on
the server instead.

Needs the ``starlette`` extra (FastAPI includes Starlette). The old path
``normalize_errors.frameworks.starlette`` still works and warns that it moved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._model._exceptions import HarnessError
from .http import to_http

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = ["harness_error_handler", "install", "problem_response", "public_error_handler"]


def problem_response(err: HarnessError, *, public: bool = False) -> Response:
    """A Starlette ``Response`` carrying ``err`` as ``application/problem+json``."""
    from starlette.responses import Response

    status, headers, body = to_http(err, public=public)
    return Response(content=body, status_code=status, headers=headers, media_type=None)


def _harness(exc: Exception) -> HarnessError:
    if isinstance(exc, HarnessError):
        return exc
    from .._facade import normalize

    return normalize(exc)


async def harness_error_handler(request: Request, exc: Exception) -> Response:
    """An exception handler: a ``HarnessError`` as it is, anything else normalized; the
    whole object, ``upstream`` included (for trusted clients)."""
    return problem_response(_harness(exc))


async def public_error_handler(request: Request, exc: Exception) -> Response:
    """Like ``harness_error_handler``, in public mode (see the module doc)."""
    return problem_response(_harness(exc), public=True)


def install(app: Any, *, catch_all: bool = False, public: bool | None = None) -> None:
    """Register an exception handler on a Starlette or FastAPI ``app``.

    With ``catch_all`` every exception is answered as a harness error, not only
    ``HarnessError``. ``public`` (default: the value of ``catch_all``) answers in public
    mode, without ``detail``, ``model_feedback`` or ``upstream``.
    """
    if public is None:
        public = catch_all
    handler = public_error_handler if public else harness_error_handler
    app.add_exception_handler(HarnessError, handler)
    if catch_all:
        app.add_exception_handler(Exception, handler)
