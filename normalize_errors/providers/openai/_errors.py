"""OpenAI's error bodies and the SDK's exceptions, and those of the native SDKs of
OpenAI-compatible vendors (the package's doc says what is worth knowing)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Final

from ..._base._http_wire import short
from ..._base._safe_read import field, integer, text_of
from ..._model._exceptions import HarnessError
from ..._reading._from_exception import SDK as _SDK
from ..._reading._from_exception import facts_of, message_of, read_exception
from ..._reading._rules import (
    Facts,
    Table,
    add_upstream,
    build,
    classify,
    decide,
    with_stated_status,
)
from ..._reading._tables import load_classes, load_table
from .._routing import declared

NAME: Final = "openai"

ROOTS: Final = declared(NAME).roots
"""The top-level modules whose exceptions this adapter reads (openai's and the native SDKs of
OpenAI-compatible vendors)."""

_STAINLESS_BASES: Final = tuple(
    sdk.base for sdk in declared(NAME).sdks if sdk.generator == "stainless"
)
"""The base exception classes of the native Stainless-generated SDKs of OpenAI-compatible
vendors (``Provider.sdks`` in the registry)."""

_BASES: Final = frozenset({"OpenAIError", *_STAINLESS_BASES})
"""The base exception class of each Stainless-generated SDK: a client-side error, read only
for the missing-key wording."""

_QUOTA_IDS: Final = (
    "insufficient_quota",
    "exceeded_current_quota_error",
    "billing_hard_limit_reached",
    "billing_not_active",
    "credit_balance_exhausted",
    "insufficient_balance",
    "insufficient_credits",
)
_FILTER_IDS: Final = (
    "content_filter",
    "content_policy_violation",
    "responsibleaipolicyviolation",
    "invalid_prompt",
    "image_content_policy_violation",
    "bio_policy",
    "misalignment_policy_violation",
    "moderation_blocked",
)
_AUTH_IDS: Final = (
    "invalid_api_key",
    "invalid_authentication",
    "unsupported_country_region_territory",
    "invalid_organization",
    "account_deactivated",
    "authentication_error",
    "permission_error",
    "permissiondenied",
)
_RATE_IDS: Final = (
    "rate_limit_exceeded",
    "too_many_requests",
    "rate_limit_error",
    "throttling_error",
    "429",  # OpenRouter's error.code is the HTTP status, also inside a 200 stream
)
_REQUEST_IDS: Final = (
    "model_not_found",
    "deploymentnotfound",
    "not_found_error",
    "invalid_request_error",
    "invalid_value",
    "unsupported_parameter",
    "unsupported_value",
    "invalid_image",
    "invalid_image_format",
    "invalid_base64_image",
    "invalid_image_url",
    "image_too_large",
    "image_too_small",
    "image_parse_error",
    "invalid_image_mode",
    "image_file_too_large",
    "unsupported_image_media_type",
    "empty_image_file",
    "failed_to_download_image",
    "image_file_not_found",
    "data_residency_mismatch",
)
_SERVER_IDS: Final = (
    "server_error",
    "internal_error",
    "service_unavailable",
    "service_unavailable_error",
    "api_error",
)

TABLE: Final = load_table(NAME)
"""The mapping, first matching row wins; otherwise the HTTP status decides.

In four tiers: the vendor's own specific code (it says what happened), then the message's
words (for the many servers whose code says nothing specific), then the HTTP status, then
the generic codes and types. A specific code is found by dictionary, so its message is
scanned for one wording at most.
"""

CLASSES: Final = {**load_classes(NAME), **dict.fromkeys(_STAINLESS_BASES)}
"""SDK exception class -> fixed (code, retryable), or ``None`` to read it with ``TABLE``.

The first class of the exception's MRO found here, in the SDK's own modules, decides; a test
checks that every exception class each SDK of ``ROOTS`` exports is covered by an entry more
specific than its base class. together's ``DownloadError`` (a file download that failed) is a
transient failure; its ``FileTypeError`` (a file rejected before upload) a wrong request.
"""

_CREDENTIALS: Final = Table(*(row for row in TABLE if row.code == "upstream.authentication_failed"))


# -- reading error objects ----------------------------------------------------------------------


_OWN: Final = frozenset({"message", "code", "type", "param"})
"""The members of OpenAI's own error object; ``_read_more`` reads the others that servers add."""


def _read(error: Any) -> dict[str, Any]:
    """What an OpenAI-shaped error object says (a dict, a string or anything), as members of
    ``Facts``."""
    if isinstance(error, str):
        return {"message": error}
    found: dict[str, Any] = {}
    if not isinstance(error, dict):
        return found
    message = error.get("message")
    if isinstance(message, str):
        found["message"] = message
    elif isinstance(message, (dict, list)):
        found["message"] = short(json.dumps(message))
    code = error.get("code")
    code_text = text_of(code) or (str(code) if integer(code) is not None else None)
    if code_text:
        found["vendor_code"] = code_text
    error_type = text_of(error.get("type"))
    if error_type:
        found["vendor_type"] = error_type
    extra: dict[str, Any] = {}
    param = error.get("param")
    if isinstance(param, str):
        extra["param"] = param
    if not _OWN.issuperset(error):
        _read_more(error, found, extra)
    if extra:
        found["extra"] = extra
    return found


def _read_more(error: dict[Any, Any], found: dict[str, Any], extra: dict[str, Any]) -> None:
    """The members other servers add to OpenAI's four (Azure, OpenRouter, Groq, llama.cpp,
    Cloudflare, NVIDIA NIM): more ids, a message and a code into ``found`` (the members
    ``_read`` gives the facts), what to keep into ``extra``."""
    inner = error.get("innererror")
    if isinstance(inner, dict):
        found["more_ids"] = (text_of(inner.get("code")),)
        extra["innererror"] = inner
    metadata = error.get("metadata")
    if isinstance(metadata, dict):
        extra["metadata"] = metadata
    generation = error.get("failed_generation")  # Groq: what the model wrote instead
    if isinstance(generation, str):
        extra["failed_generation"] = short(generation, 2048)
    for name in ("n_ctx", "n_prompt_tokens"):  # llama.cpp: the context and the prompt size
        number = error.get(name)
        if type(number) is int:
            extra[name] = number
    listed = error.get("errors")  # Cloudflare's API envelope: {"success": false, "errors": [...]}
    if found.get("message") is None and isinstance(listed, list) and listed:
        first = listed[0]
        if isinstance(first, dict):
            text = first.get("message")
            if isinstance(text, str):
                found["message"] = text
            number = first.get("code")
            said = text_of(number) or integer(number) is not None
            if found.get("vendor_code") is None and said:
                found["vendor_code"] = text_of(number) or str(number)
    if found.get("message") is None and integer(error.get("status")) is not None:
        text = error.get("detail") or error.get("title")  # an RFC 9457 problem (NVIDIA NIM)
        if isinstance(text, str):
            found["message"] = text


def read_body(body: Any) -> dict[str, Any]:
    """The body reader: an OpenAI-shaped body (``{"error": {...}}``, a bare error, a list)."""
    if isinstance(body, list) and body and isinstance(body[0], dict):
        body = body[0]
    code_text = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        # the message as "error", the code beside it (xAI: {"code": "Client specified an
        # invalid argument", "error": "..."})
        code = body.get("code")
        code_text = text_of(code) or (str(code) if integer(code) is not None else None)
    if isinstance(body, dict) and "error" in body:
        body = body["error"]  # the error object inside the envelope
        inner = body.get("error") if isinstance(body, dict) else None
        if isinstance(inner, dict) and "message" not in body:
            body = inner  # nested two levels (OpenRouter): the innermost holds the words
    found = _read(body)
    if code_text:
        found.setdefault("vendor_code", code_text)
    return found


SDK: Final = _SDK(
    NAME, ROOTS, CLASSES, TABLE, read_body, id_headers=("x-request-id", "apim-request-id")
)


def looks_like(body: Any) -> bool:
    """Whether a parsed body has the OpenAI error shape (also vLLM, Ollama, Azure, ...)."""
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return False
    error = body.get("error")
    if isinstance(error, dict):
        return "message" in error or "code" in error
    if isinstance(error, str):
        return True
    if {"code", "message", "param"} <= body.keys() and isinstance(body["message"], str):
        return True  # the error object itself, outside its envelope (a Batch's errors.data)
    return body.get("object") == "error" and "message" in body


def from_response(status: Any, headers: Any, body: Any) -> HarnessError:
    """The harness error for a raw HTTP error response in the OpenAI shape."""
    return decide(TABLE, facts_of(SDK, integer(status), headers, body))


# -- SDK exceptions -----------------------------------------------------------------------------


def _adjust(name: str, exc: BaseException, facts: Facts) -> HarnessError | Facts | None:
    """What only the openai SDK's exceptions say: a stream's error, a finish-reason error."""
    if name in ("LengthFinishReasonError", "ContentFilterFinishReasonError"):
        completion = field(exc, "completion")
        from ._results import diagnose

        found = diagnose(completion, None) if completion is not None else None
        if found is not None:
            add_upstream(found, {"exception": facts.exception})
            return found
    if name == "APIError" and facts.status is None:
        facts = replace(facts, in_stream=True)  # an {"error": ...} event inside a stream
    if name in _BASES and not facts.message:
        facts = with_stated_status(replace(facts, message=message_of(exc)))
        code, retryable = classify(_CREDENTIALS, facts)
        if code == "upstream.authentication_failed":
            return build(code, retryable, facts)
        return None  # the SDK's base class, raised for the client's own misuse
    return facts


def normalize(exc: BaseException) -> HarnessError | None:
    """The harness error for an exception of the ``openai`` SDK, or ``None``."""
    return read_exception(SDK, exc, adjust=_adjust)
