"""Google Gen AI: the Gemini API and Vertex AI through ``google-genai`` (1.x, 2.x, 3.x).

Reads the exceptions of the ``google.genai`` SDK by class name and attributes, raw error
bodies of the Google shape (``{"error": {"code": 429, "message", "status":
"RESOURCE_EXHAUSTED", "details": [google.rpc.*]}}``, also wrapped in a one-element list
as ``streamGenerateContent`` sends it), and ``GenerateContentResponse`` results (SDK
objects or REST JSON, camelCase) for failure finish and block reasons.

Facts worth knowing (see ``TABLE`` for the mapping):

* ``e.code`` is the HTTP status and ``e.status`` the canonical status
  (``RESOURCE_EXHAUSTED``); ``e.details`` is the *whole* parsed body, the inner error
  object in the SDK's replay mode, or ``{"message": <page>, "status": <reason phrase>}``
  for a body that is not JSON;
* the identifiers the table matches are the canonical status, every
  ``google.rpc.ErrorInfo`` reason (``API_KEY_INVALID`` arrives as a 400
  ``INVALID_ARGUMENT``) and every ``QuotaFailure`` quota id; the table reads the
  credential reasons and the statuses of one meaning (``RESOURCE_EXHAUSTED``,
  ``UNAVAILABLE``) before the message's words, and the generic statuses
  (``INVALID_ARGUMENT``, ``INTERNAL``, ...) last, after the words and the HTTP status;
* the decision reads only the ids of ``details``; the rest (domain, metadata,
  violations, ``RetryInfo``, field violations, help links) goes into ``upstream`` and
  ``retry_after`` when the error is made;
* the wait is in ``RetryInfo.retryDelay`` (``"26s"``), which the SDK never reads; a
  daily or zero free-tier quota cannot be waited out, whatever ``RetryInfo`` says;
* an ``{"error": ...}`` chunk inside a stream (``error`` its first member: the SDK drops
  an ``error`` after other members) raises ``ClientError``/``ServerError``
  chosen by the body's code, with a response wrapper whose status is always 200
  (reported as ``upstream.in_stream``); an error chunk with no numeric code makes the SDK
  itself fail with ``TypeError: '<=' not supported between 'int' and 'NoneType'``,
  which this adapter recognises by the innermost frame of its traceback
  (``google.genai.errors.raise_error``) and reads from that frame's ``response_json``
  (a builtin ``TypeError`` names no SDK module, so the caller has to route it here:
  ``normalize(exc, provider="google")``);
* the Live API raises ``APIError`` with a WebSocket close code (1000-4999) as ``code``
  and the close reason as ``details``;
* transport errors (httpx, httpx2, aiohttp) are never wrapped by the SDK: the http
  adapter reads them.

The Interactions API has an OpenAI-like hierarchy of its own (``APIStatusError`` per
status, ``APIConnectionError``, ``APITimeoutError``, ``APIWebSocketError``, under
``GeminiNextGenAPIClientError``); its classes are keyed ``interactions.<Name>`` in
``CLASSES`` because one of them is also called ``APIError``.

Decisions a reader may not expect: ``FAILED_PRECONDITION`` (region, free tier, billing)
and the finish reason ``PUP_LIMITED_DISABLED`` are ``upstream.authentication_failed``
(the account or project is refused, not the request); ``UNAVAILABLE`` is
``upstream.overloaded`` even for 'Deadline expired before operation could complete.';
``ESCALATION`` is a content filter; ``CONTINUATION`` and other unknown finish reasons are
not failures while the candidate has output; ``upstream.request_id`` of a result is its
``responseId``. google-genai drops ``finishMessage`` when it converts a Gemini API
response, so only REST JSON gives it to ``detail`` and ``model_feedback``.

Coverage: every row of ``TABLE`` and every failure finish or block reason is exercised,
by the cassettes in ``cassettes/google/`` where a public page shows the body, otherwise by
focused tests in ``tests/providers/test_google.py`` on bodies built from Google's
documented error shape (no public page shows one for them): the ``status 429`` and
``status 401 or 403`` rows on non-JSON pages, the message-only key and quota rows,
payload size, ``DEADLINE_EXCEEDED``, ``UNKNOWN``, ``DATA_LOSS``, ``CANCELLED``, ``ABORTED``,
``ALREADY_EXISTS``, ``OUT_OF_RANGE``, ``UNIMPLEMENTED``, the ErrorInfo reasons
``SERVICE_DISABLED`` and ``ACCESS_TOKEN_EXPIRED``, the Live API close codes, the SDK's
``TypeError``, and every finish reason but ``MAX_TOKENS``, ``SAFETY``, ``RECITATION`` and
``MALFORMED_FUNCTION_CALL`` (and the blocked prompts ``SAFETY`` and ``PROHIBITED_CONTENT``),
which have cassettes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..._base._safe_read import described, qualname
from ..._model._exceptions import HarnessError
from ..._reading._rules import Facts, build
from ._errors import CLASSES, NAME, TABLE, _from_response, _normalize, looks_like
from ._results import STOP_REASONS, _diagnose
from ._stream import diagnose_stream as _diagnose_stream
from ._stream import stream_state

__all__ = [
    "CLASSES",
    "NAME",
    "STOP_REASONS",
    "TABLE",
    "diagnose",
    "diagnose_stream",
    "from_response",
    "looks_like",
    "normalize",
    "stream_state",
]


# -- the interface: nothing escapes -------------------------------------------------------------


def _unreadable(what: str, bug: Exception, exception: str | None = None) -> HarnessError:
    facts = Facts(provider=NAME, exception=exception, extra={"bug": type(bug).__name__})
    detail = f"normalize-errors could not read {what} ({type(bug).__name__})."
    return build("harness.internal_error", False, facts, detail=detail)


def normalize(exc: BaseException) -> HarnessError | None:
    """The harness error for an exception of the ``google-genai`` SDK, or ``None``."""
    try:
        return _normalize(exc)
    except Exception as bug:  # a hostile exception object
        return _unreadable(described(exc), bug, qualname(exc))


def from_response(status: Any, headers: Any, body: Any) -> HarnessError:
    """The harness error for a raw HTTP error response in the Google shape."""
    try:
        return _from_response(status, headers, body)
    except Exception as bug:  # a hostile body or headers object
        return _unreadable("an HTTP response", bug)


def diagnose(result: Any, tools: Iterable[Any] | None) -> HarnessError | None:
    """The harness error a ``GenerateContentResponse`` (SDK object or REST JSON) means.

    The prompt's block reason, then each candidate's finish reason, function calls (names
    outside ``tools`` when given) and output; ``None`` when nothing is wrong. Never raises.
    """
    try:
        return _diagnose(result, tools)
    except Exception as bug:  # a hostile result object
        return _unreadable("a result", bug)


def diagnose_stream(chunks: Iterable[Any], tools: Iterable[Any] | None) -> HarnessError | None:
    """The harness error a finished ``generate_content_stream`` means, or ``None``.

    The chunks (SDK objects or REST JSON) are folded and read like ``diagnose``; an
    ``{"error": ...}`` chunk gives its own error. Never raises.
    """
    try:
        return _diagnose_stream(chunks, tools)
    except Exception as bug:  # a hostile chunk
        return _unreadable("a stream", bug)
