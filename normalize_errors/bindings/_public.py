"""Public mode shared by the bindings that answer a peer outside HTTP (MCP, A2A).

Draft section 10: a peer is shown only what it is authorised to see. ``read_from_another_party``
is the rule for when that applies by default (an error whose text another party wrote), and
``public_view`` is what the peer then gets: ``http.public_problem(err)`` without the HTTP-only
``status``, after the full object is logged at WARNING on the ``normalize_errors`` logger so the
server's own operators keep it.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final

from .._model._exceptions import HarnessError
from .http import public_problem

__all__ = ["full_view", "is_public", "public_view", "read_from_another_party"]

_LOG: Final = logging.getLogger("normalize_errors")


def read_from_another_party(err: HarnessError) -> bool:
    """Whether ``err`` holds what another party said: a drop-in raised through ``wrap()``,
    an object received from a peer (``untrusted``), or an error read from an exception
    (``normalize()`` of an HTTP client's, an SDK's or the standard library's exception: that
    exception as ``__cause__`` and what it said in ``upstream``)."""
    if err.problem is not err or err.untrusted:
        return True
    cause = err.__cause__
    return cause is not None and not isinstance(cause, HarnessError) and bool(err.upstream)


def is_public(err: HarnessError, public: bool | None) -> bool:
    """``public`` as given, or for ``None`` whether ``err`` was read from another party."""
    return read_from_another_party(err) if public is None else public


def full_view(err: HarnessError) -> dict[str, Any]:
    """The whole object of ``err`` outside HTTP: ``to_dict()`` without ``status`` (6.2)."""
    problem = err.problem.to_dict()
    problem.pop("status", None)
    return problem


def public_view(err: HarnessError) -> dict[str, Any]:
    """The public view of ``err`` (``public_problem``); the full object goes to the log."""
    _LOG.warning(
        "harness error withheld from the peer (public mode): %s",
        json.dumps(full_view(err), ensure_ascii=False, default=str),
    )
    problem = public_problem(err)
    problem.pop("status", None)
    return problem
