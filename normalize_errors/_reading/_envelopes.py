"""Vendors' own error envelopes, and the status a body states when no HTTP status came.

Some servers never put their errors in the OpenAI shape: Baidu Qianfan answers
``{"error_code": 17, "error_msg": "..."}`` (often inside a 200), iFlytek Spark's WebSocket
frames carry ``{"header": {"code": 11200, "message": "..."}}`` and MiniMax puts
``{"base_resp": {"status_code": 1008, "status_msg": "..."}}`` in its answers. Each is one row
of ``ENVELOPES`` (where its code and message are, which code means success), and each
vendor's documented code meanings are rows of ``MEANINGS``, which the plain HTTP adapter
turns into rule rows matched on the id ``<envelope>:<code>`` (``qianfan:17``), so one
vendor's numbers never mean another's.

``stated_status`` reads the status a body states about itself (``{"status": 429}``,
``{"error": {"code": 404}}``, ``{"statusCode": 400}``, a vLLM ``type`` such as
``NotFoundError``), used by ``classify`` only when no HTTP status is known.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from .._base._safe_read import integer

__all__ = [
    "ENVELOPES",
    "MEANINGS",
    "Envelope",
    "error_object",
    "nested_error",
    "read_envelope",
    "stated_status",
]


class Envelope(NamedTuple):
    """Where one vendor's envelope keeps its error code and message."""

    name: str
    within: str | None
    """The member that holds the code and message, or ``None`` for the top level."""
    code: str
    message: str
    source: str
    """The vendor's page that documents the codes."""


ENVELOPES: Final = (
    Envelope(
        "qianfan",
        None,
        "error_code",
        "error_msg",
        "https://cloud.baidu.com/doc/WENXINWORKSHOP/s/tlmyncueh",
    ),
    Envelope("spark", "header", "code", "message", "https://www.xfyun.cn/doc/spark/Web.html"),
    Envelope(
        "minimax",
        "base_resp",
        "status_code",
        "status_msg",
        "https://platform.minimax.io/docs/api-reference/errorcode",
    ),
)
"""Vendor envelopes: a code of 0 (or none) means success, any other number an error."""

_RATE: Final = "upstream.rate_limited"
_AUTH: Final = "upstream.authentication_failed"
_REQUEST: Final = "upstream.invalid_request"
_DOWN: Final = "upstream.unavailable"
_BUSY: Final = "upstream.overloaded"
_FILTER: Final = "policy.content_filtered"
_CONTEXT: Final = "context.window_exceeded"

MEANINGS: Final[Mapping[str, tuple[tuple[str, bool, tuple[int, ...], str], ...]]] = {
    "qianfan": (
        (_RATE, False, (17, 19), "the daily or total request limit is reached"),
        (_RATE, True, (4, 18, 336501, 336502), "the cluster, QPS, RPM or TPM limit is reached"),
        (_AUTH, False, (6, 13, 14, 15, 110, 111), "no permission, or an invalid or expired token"),
        (_REQUEST, False, (3, 100, 336001, 336002, 336003), "an invalid method or argument"),
        (_BUSY, True, (336100,), "the service asks to try again later"),
        (_DOWN, True, (1, 2, 336000), "an unknown or internal error, or the service is down"),
    ),
    "spark": (
        (_FILTER, False, (10013, 10014, 10019), "the input or output failed moderation"),
        (_CONTEXT, False, (10907,), "the history and question are over the token limit"),
        (_AUTH, False, (11200, 11500), "the app id is not authorised for it, or auth failed"),
        (_RATE, False, (11201,), "the daily flow limit is exceeded"),
        (_RATE, True, (10007, 11202, 11203), "the per-second or concurrency limit is exceeded"),
        (_BUSY, True, (10008, 10110), "the service is busy or short of capacity"),
        (_REQUEST, False, (10003, 10004, 10005, 10163), "the message, schema or a value is wrong"),
        (_DOWN, True, (10009, 10010, 10011, 10012, 10222), "the engine failed or is unreachable"),
    ),
    "minimax": (
        (_RATE, False, (1008,), "insufficient balance"),
        (_RATE, False, (2056,), "the usage limit of the 5-hour window is exceeded"),
        (_RATE, True, (1002, 1039, 1041, 2045), "a rate, token, connection or growth limit"),
        (_AUTH, False, (1004, 2049), "not authorised, or an invalid API key"),
        (_FILTER, False, (1026, 1027), "the input or output is sensitive"),
        (_REQUEST, False, (1042, 2013), "invalid parameters or characters"),
        (_DOWN, True, (1000, 1001, 1024, 1033), "an unknown, internal or timeout error"),
    ),
}
"""Each envelope's documented codes: (code, retryable, the vendor's numbers, what they say)."""


def _number(value: Any) -> int | None:
    """An envelope code: a JSON number or a short digit string."""
    return integer(value)


def read_envelope(body: Any) -> tuple[str, int, str | None] | None:
    """``(envelope, code, message)`` when ``body`` is a vendor envelope reporting an error."""
    if not isinstance(body, dict):
        return None
    for envelope in ENVELOPES:
        holder = body if envelope.within is None else body.get(envelope.within)
        if not isinstance(holder, dict) or envelope.code not in holder:
            continue
        code = _number(holder.get(envelope.code))
        if code is None or code == 0:
            continue
        message = holder.get(envelope.message)
        return envelope.name, code, message if isinstance(message, str) else None
    return None


def error_object(body: Any) -> dict[str, Any] | None:
    """``body`` itself when, inside a 2xx, it is an error all the same: a vendor envelope
    reporting one, an object stating an error status (OpenRouter's ``{"message": "Provider
    returned error", "code": 429}``), an ``error`` member holding an error object with its
    message (a stream's error frame without its ``data:`` line, a Realtime ``failed``
    status), or OpenAI's error object itself (``code``, ``message`` and ``param``, as a
    Batch's ``errors.data`` lists them); else ``None``."""
    if not isinstance(body, dict):
        return None
    if read_envelope(body) is not None or stated_status(body) is not None:
        return body
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
        return body
    if {"code", "message", "param"} <= body.keys() and all(
        isinstance(body[k], str) and body[k] for k in ("code", "message")
    ):
        return body
    return None


def nested_error(body: Any) -> dict[str, Any] | None:
    """The error body an error's ``message`` holds as JSON text, or ``None``: a client that
    wrapped the provider's error in its own (Gemini CLI's ``{"error": {"message": "{\"error\":
    {...}}", "code": 400, "status": "Bad Request"}}``). At most three levels are unwrapped."""
    found: dict[str, Any] | None = None
    for _ in range(3):
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if not isinstance(message, str) or not message.lstrip().startswith("{"):
            break
        import json

        try:
            inner = json.loads(message) if len(message) <= 1 << 20 else None
        except (ValueError, RecursionError):
            break
        if not isinstance(inner, dict) or not isinstance(inner.get("error"), (dict, str)):
            break
        found = body = inner
    return found


_STATUS_KEYS: Final = ("status", "statusCode", "status_code", "http_status", "code")
_TYPE_STATUS: Final = {
    "badrequesterror": 400,
    "authenticationerror": 401,
    "permissiondeniederror": 403,
    "notfounderror": 404,
    "conflicterror": 409,
    "unprocessableentityerror": 422,
    "ratelimiterror": 429,
    "internalservererror": 500,
}
"""Error types named after the OpenAI SDK's status classes (vLLM answers with them)."""


def stated_status(body: Any) -> int | None:
    """The HTTP error status (400-599) a body states about itself, or ``None``.

    Looked for in the body, its ``error`` object and an ``error`` nested in that (OpenRouter
    nests two levels): ``status``, ``statusCode``, ``status_code``, ``http_status`` or
    ``code`` as a number or a digit string, else a ``type`` named after a status class.
    """
    if isinstance(body, list):
        body = next((item for item in body[:8] if isinstance(item, dict)), None)
    layer = body
    for _ in range(3):
        if not isinstance(layer, dict):
            return None
        for key in _STATUS_KEYS:
            number = _number(layer.get(key))
            if number is not None and 400 <= number <= 599:
                return number
        kind = layer.get("type")
        if isinstance(kind, str) and len(kind) < 40:
            found = _TYPE_STATUS.get(kind.lower())
            if found is not None:
                return found
        layer = layer.get("error")
    return None
