"""Site errors: the error vocabulary web sites give agents (Agent Index "Agent errors" 0.1).

A site answers an agent with ``{"error": {"code", "message", "field", "retry_after",
"retry"}}``: one of fourteen codes and a ``retry`` word an agent can switch on
(``fix_input``, ``no``, ``refetch``, ``get_grant``, ``pay``, ``ask_human``, ``after_delay``,
``once``). ``from_site_error(status, headers, body)`` reads it into a harness error; the
site's own words stay in ``upstream`` (``code``, ``retry``, ``field``), so a program that
knows the vocabulary can still switch on them.

The harness code of each site code is in ``CODES``; the ``advice`` it gives next to the
site's ``retry`` word is in the README's table and ``ADVICE``. They agree except where the
two vocabularies cut differently: ``not_found`` and ``out_of_stock`` (``no``) advise
``fix`` (the request names something that does not exist or cannot be had), ``conflict``
(``refetch``) advises ``feedback`` (tell the model to re-read the state), ``not_allowed``
(``no``) advises ``human`` (a policy stopped it), and ``internal`` (``once``) advises
``retry``, which does not say *once*: bound it yourself (``upstream["retry"]`` keeps the
word).

Codes a site defines itself are read by their ``retry`` word (``RETRY_WORDS``); with no
known word, as ``internal`` (the vocabulary says agents treat unknown codes so).
``from_response`` recognises a site error by a known ``retry`` word in the error object;
``from_response(..., provider="site")`` reads any response as one.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from .._base._http_wire import lower_headers, parse_body, retry_after, short
from .._base._safe_read import finite
from .._base._types import Advice
from .._model._code_classes import class_for_code
from .._model._exceptions import HarnessError
from .._model._registry import status_code

__all__ = ["ADVICE", "CODES", "RETRY_WORDS", "SiteCode", "from_site_error"]


class SiteCode(NamedTuple):
    """How one site code reads as a harness error."""

    code: str
    """The harness error code."""
    retryable: bool
    model_recoverable: bool
    retry: str
    """The ``retry`` word the vocabulary gives this code."""


# fmt: off
CODES: Final[dict[str, SiteCode]] = {
    "invalid_input": SiteCode("upstream.invalid_request", False, False, "fix_input"),
    "missing_field": SiteCode("upstream.invalid_request", False, False, "fix_input"),
    "not_found": SiteCode("upstream.invalid_request", False, False, "no"),
    "not_allowed": SiteCode("policy.guardrail_triggered", False, False, "no"),
    "conflict": SiteCode("upstream.invalid_request", False, True, "refetch"),
    "out_of_stock": SiteCode("upstream.invalid_request", False, False, "no"),
    "auth_required": SiteCode("upstream.authentication_failed", False, False, "get_grant"),
    "scope_missing": SiteCode("upstream.authentication_failed", False, False, "get_grant"),
    "payment_required": SiteCode("upstream.rate_limited", False, False, "pay"),
    "payment_declined": SiteCode("upstream.rate_limited", False, False, "ask_human"),
    "rate_limited": SiteCode("upstream.rate_limited", True, False, "after_delay"),
    "temporarily_unavailable": SiteCode("upstream.unavailable", True, False, "after_delay"),
    "needs_human": SiteCode("policy.guardrail_triggered", False, False, "ask_human"),
    "internal": SiteCode("upstream.unavailable", True, False, "once"),
}
"""Every code of the vocabulary and the harness error it reads as."""

RETRY_WORDS: Final[dict[str, SiteCode]] = {
    "fix_input": CODES["invalid_input"],
    "no": CODES["not_found"],
    "refetch": CODES["conflict"],
    "get_grant": CODES["auth_required"],
    "pay": CODES["payment_required"],
    "ask_human": CODES["needs_human"],
    "after_delay": CODES["rate_limited"],
    "once": CODES["internal"],
}
"""How a code the vocabulary does not list is read, by its ``retry`` word."""

ADVICE: Final[dict[str, Advice]] = {
    "fix_input": "fix",
    "no": "fix",
    "refetch": "feedback",
    "get_grant": "credentials",
    "pay": "human",
    "ask_human": "human",
    "after_delay": "retry",
    "once": "retry",
}
"""The ``advice`` a site error gets for each ``retry`` word (for a code read by its word)."""
# fmt: on


def _pointer(field: str) -> str:
    """A field name as a JSON Pointer (``product_id`` -> ``/product_id``)."""
    return "/" + field.replace("~", "~0").replace("/", "~1")


def _site_code(code: Any, retry: Any) -> SiteCode:
    if isinstance(code, str) and code in CODES:
        return CODES[code]
    if isinstance(retry, str) and retry in RETRY_WORDS:
        return RETRY_WORDS[retry]
    return CODES["internal"]


def from_site_error(status: Any, headers: Any, body: Any) -> HarnessError:
    """The harness error a site's error response reports; never raises.

    ``body`` is bytes, text or parsed JSON: ``{"error": {...}}`` or the inner object. The
    code decides (``CODES``), else the ``retry`` word (``RETRY_WORDS``), else the status
    (as ``from_response`` reads a plain HTTP error). ``retry_after`` comes from the body,
    else from ``Retry-After``; ``field`` becomes ``location.pointer`` (``/field``). A body
    ``retry_after`` that is no finite number >= 0 (``1e400`` written out, which no float
    holds) is dropped, not capped: it says nothing about how long to wait, so the header's
    wait (or none) stands and the code still decides.
    """
    code = status if isinstance(status, int) and not isinstance(status, bool) else None
    upstream: dict[str, Any] = {"provider": "site"}
    if code is not None:
        upstream["status"] = code
    try:
        obj = parse_body(body)
        error = obj.get("error", obj) if isinstance(obj, dict) else None
        wait = retry_after(lower_headers(headers))
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            harness_code, retryable = status_code(code)
            return class_for_code(harness_code)(
                f"site: HTTP {code}: no site error object",
                retryable=retryable,
                retry_after=wait,
                upstream=upstream,
            )
        site_code, retry = error["code"], error.get("retry")
        row = _site_code(site_code, retry)
        upstream["code"] = site_code
        upstream["retry"] = retry if isinstance(retry, str) else row.retry
        field = error.get("field")
        if isinstance(field, str) and field:
            upstream["field"] = field
        message = error.get("message")
        if isinstance(message, str) and message:
            upstream["message"] = short(message, 1024)
        seconds = finite(error.get("retry_after"))
        if seconds is not None and seconds >= 0:
            wait = seconds  # a wait no float holds is dropped, not capped: it means nothing
        return class_for_code(row.code)(
            f"site: {upstream.get('message') or site_code}",
            code=row.code,
            origin="upstream",
            retryable=row.retryable,
            model_recoverable=row.model_recoverable,
            retry_after=wait,
            location={"pointer": _pointer(field)} if isinstance(field, str) and field else None,
            upstream=upstream,
        )
    except Exception as bug:  # never raise
        return class_for_code("harness.internal_error")(
            f"normalize-errors could not read a site error ({type(bug).__name__}).",
            upstream=upstream,
        )


def _read_response(status: int | None, headers: dict[str, str], body: Any) -> HarnessError | None:
    """The reader ``from_response`` asks (registered as ``"site"``): answers for a body
    whose error object carries a ``retry`` word of the vocabulary, else ``None``."""
    error = body.get("error") if isinstance(body, dict) else None
    retry = error.get("retry") if isinstance(error, dict) else None
    if not isinstance(retry, str) or retry not in RETRY_WORDS:
        return None
    return from_site_error(status, headers, body)
