"""UHP error envelopes: every row of the mapping both ways, and the round trips.

The envelopes are built from the shapes and examples of UHP's error chapter (version
``2026-09-12``, sections 1 to 3); they are constructed, not recorded.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from normalize_errors import (
    CODES,
    HarnessError,
    UpstreamRateLimitedError,
    class_for_code,
    from_response,
)
from normalize_errors.bindings import uhp
from normalize_errors.bindings.uhp import from_envelope, to_envelope, uhp_type
from tests.support import is_instance

HEADERS = {"Content-Type": "application/json", "UHP-Version": "2026-09-12"}

# UHP code -> (HTTP status, harness code, retryable), written out from UHP sections 3 and 4.
REQUEST_ROWS: dict[str, tuple[int, str, bool]] = {
    "unsupported_protocol_version": (400, "upstream.invalid_request", False),
    "invalid_input": (400, "upstream.invalid_request", False),
    "harness_not_found": (404, "upstream.invalid_request", False),
    "response_not_found": (404, "upstream.invalid_request", False),
    "session_not_found": (404, "upstream.invalid_request", False),
    "plugin_not_found": (404, "upstream.invalid_request", False),
    "file_not_found": (404, "upstream.invalid_request", False),
    "session_expired": (404, "upstream.invalid_request", False),
    "harness_mismatch": (409, "upstream.invalid_request", False),
    "session_busy": (409, "upstream.invalid_request", True),
    "plugin_conflict": (409, "upstream.invalid_request", False),
    "file_too_large": (413, "upstream.invalid_request", False),
    "model_unavailable": (422, "upstream.invalid_request", False),
    "unsupported_base": (422, "upstream.invalid_request", False),
    "plugin_invalid": (422, "upstream.invalid_request", False),
    "unsupported_plugin_schema": (422, "upstream.invalid_request", False),
    "unsupported_transport": (422, "upstream.invalid_request", False),
    "missing_credential": (401, "upstream.authentication_failed", False),
    "invalid_credential": (401, "upstream.authentication_failed", False),
    "insufficient_scope": (403, "upstream.authentication_failed", False),
    "rate_limited": (429, "upstream.rate_limited", True),
    "quota_exhausted": (429, "upstream.rate_limited", False),
    "harness_unavailable": (503, "upstream.overloaded", True),
    "preview_unavailable": (501, "upstream.invalid_request", False),
    "preview_failed": (502, "upstream.unavailable", True),
}
# Codes carried in a failed task response (HTTP 200): the cause of upstream.agent_failed.
TASK_ROWS: dict[str, str] = {
    "harness_error": "harness.internal_error",
    "provider_error": "upstream.unavailable",
    "timeout": "loop.timeout",
}


def envelope(code: str, status: int, **error: Any) -> dict[str, Any]:
    """A UHP error envelope with every required field."""
    body: dict[str, Any] = {
        "type": uhp_type(status),
        "code": code,
        "message": f"It failed: {code}.",
    }
    body.update({"param": None, "detail": None})
    body.update(error)
    return {"error": body}


def test_the_tables_cover_every_code_of_uhp_section_3() -> None:
    """Every UHP code has a row in the module and in this test."""
    assert set(uhp.CODES) == {*REQUEST_ROWS, *TASK_ROWS, "cancelled"}


@pytest.mark.parametrize(("name", "row"), list(REQUEST_ROWS.items()))
def test_every_request_code_reads_as_its_row(name: str, row: tuple[int, str, bool]) -> None:
    """from_envelope, from_response with the version header and with provider="uhp" agree."""
    status, code, retryable = row
    body = envelope(name, status)
    for err in (
        from_envelope(status, HEADERS, body),
        from_response(status, HEADERS, json.dumps(body).encode()),
        from_response(status, {}, body, provider="uhp"),
    ):
        assert (err.code, err.retryable) == (code, retryable)
        assert err.detail == f"uhp: It failed: {name}."
        assert err.upstream == {
            "provider": "uhp",
            "status": status,
            "type": uhp_type(status),
            "code": name,
            "message": f"It failed: {name}.",
        }


def test_quota_exhausted_is_not_retryable_through_from_response() -> None:
    """The issue's case: a UHP quota_exhausted 429 (OpenAI-shaped) comes out not retryable."""
    body = envelope("quota_exhausted", 429, message="Monthly task budget spent.")
    err = from_response(429, HEADERS, body)
    assert isinstance(err, UpstreamRateLimitedError)
    assert (err.retryable, err.advice) == (False, "human")
    assert err.upstream["provider"] == "uhp"


def test_rate_limited_takes_retry_after_from_the_header() -> None:
    """UHP: Retry-After SHOULD be set on rate_limited."""
    err = from_envelope(429, {**HEADERS, "Retry-After": "12"}, envelope("rate_limited", 429))
    assert (err.retryable, err.retry_after, err.advice) == (True, 12, "retry")


def test_param_becomes_a_pointer_and_max_bytes_a_limit() -> None:
    """The spec's own example, and file_too_large's detail.max_bytes."""
    example = {
        "error": {
            "type": "invalid_request_error",
            "code": "harness_not_found",
            "message": "No harness with id 'chrn_deadbeef'.",
            "param": "metadata.harness_id",
            "detail": None,
        }
    }
    err = from_envelope(404, HEADERS, example)
    assert err.location == {"pointer": "/metadata/harness_id"}
    assert err.upstream["param"] == "metadata.harness_id"
    big = from_envelope(413, HEADERS, envelope("file_too_large", 413, detail={"max_bytes": 1024}))
    assert big.limit == {"name": "upload_bytes", "value": 1024, "unit": "bytes"}
    assert big.upstream["detail"] == {"max_bytes": 1024}


@pytest.mark.parametrize(("name", "cause"), list(TASK_ROWS.items()))
def test_a_failed_task_is_agent_failed_with_its_cause(name: str, cause: str) -> None:
    """HTTP 200, status failed: upstream.agent_failed, the task's error as the cause."""
    body = {
        "id": "resp_01",
        "status": "failed",
        "error": {"type": "harness_error", "code": name, "message": "The task did not finish."},
    }
    err = from_response(200, HEADERS, body)
    assert (err.code, err.retryable, err.advice) == ("upstream.agent_failed", False, "feedback")
    assert [c.code for c in err.causes] == [cause]
    assert err.upstream == {
        "provider": "uhp",
        "task_status": "failed",
        "status": 200,
        "task_id": "resp_01",
        "type": "harness_error",
        "code": name,
        "message": "The task did not finish.",
    }


def test_a_cancelled_task_is_harness_cancelled() -> None:
    """HTTP 200, status cancelled."""
    body = {"id": "resp_02", "status": "cancelled", "error": {"code": "cancelled"}}
    err = from_envelope(200, HEADERS, body)
    assert err.code == "harness.cancelled"
    assert err.upstream["task_id"] == "resp_02"


def test_a_failed_task_carrying_a_harness_object_keeps_it_as_the_cause() -> None:
    """A remote harness that speaks the draft puts its object in detail: it is the cause."""
    inner = class_for_code("loop.max_turns_exceeded")("25 turns.", attempts=25)
    body = {
        "status": "failed",
        "error": {"type": "harness_error", "code": "harness_error", "detail": inner.to_dict()},
    }
    err = from_envelope(200, HEADERS, body)
    (cause,) = err.causes
    assert cause.to_dict() == inner.to_dict()
    assert cause.untrusted


@pytest.mark.parametrize(
    ("kind", "status", "code", "retryable"),
    [
        ("invalid_request_error", 400, "upstream.invalid_request", False),
        ("authentication_error", 401, "upstream.authentication_failed", False),
        ("permission_error", 403, "upstream.authentication_failed", False),
        ("rate_limit_error", 429, "upstream.rate_limited", True),
        ("harness_error", 200, "harness.internal_error", False),
        ("server_error", 500, "upstream.unavailable", True),
        ("server_error", 501, "upstream.unavailable", False),
    ],
)
def test_a_vendor_code_is_read_by_its_type(
    kind: str, status: int, code: str, retryable: bool
) -> None:
    """UHP lets servers add acme_-prefixed codes: the type decides."""
    body = envelope("acme_widget_jammed", status, type=kind)
    err = from_envelope(status, HEADERS, body)
    assert (err.code, err.retryable) == (code, retryable)
    assert err.upstream["code"] == "acme_widget_jammed"


def test_unknown_type_and_no_envelope_fall_back_to_the_status() -> None:
    """An unknown type, an HTML page and a 2xx without an error."""
    odd = from_envelope(503, HEADERS, envelope("acme_x", 503, type="acme_error"))
    assert (odd.code, odd.retryable) == ("upstream.unavailable", True)
    page = from_response(502, HEADERS, b"<html><title>Bad gateway</title></html>")
    assert (page.code, page.upstream) == (
        "upstream.unavailable",
        {"provider": "uhp", "status": 502},
    )
    fine = from_envelope(200, HEADERS, {"id": "resp_3", "status": "completed"})
    assert (fine.code, fine.retryable) == ("upstream.invalid_response", False)


def test_the_deprecated_top_level_detail_is_ignored() -> None:
    """UHP's compatibility note: a top-level detail string repeats error.message."""
    body = {**envelope("session_busy", 409, message="A task is running."), "detail": "old text"}
    err = from_envelope(409, HEADERS, body)
    assert err.detail == "uhp: A task is running."
    assert "old text" not in json.dumps(err.to_dict())


@pytest.mark.parametrize(
    "body",
    [None, b"", b"\xff", "[]", {"error": "text"}, {"error": {"code": 3}}, {"status": "failed"}],
)
def test_never_raises(body: Any) -> None:
    """Whatever the body, a harness error comes out."""
    assert isinstance(from_envelope(500, HEADERS, body), HarnessError)
    assert isinstance(from_envelope("x", None, body), HarnessError)


def test_without_the_header_the_reader_stays_out() -> None:
    """Only the version header (or provider="uhp") makes a response UHP."""
    assert uhp._read_response(429, {}, envelope("quota_exhausted", 429)) is None
    assert uhp._read_response(429, {"uhp-version": "x"}, envelope("quota_exhausted", 429))


# Harness code -> (HTTP status, UHP type, UHP code) that to_envelope writes.
OUT_ROWS: dict[str, tuple[int, str, str]] = {
    **{
        code: (422, "invalid_request_error", "harness_error")
        for code in CODES
        if code.split(".")[0] in ("output", "loop", "context", "tool")
    },
    "loop.timeout": (504, "server_error", "timeout"),
    "tool.timeout": (504, "server_error", "harness_error"),
    "tool.permission_denied": (403, "permission_error", "harness_error"),
    **{
        code: (403, "permission_error", "harness_error")
        for code in CODES
        if code.startswith("policy.")
    },
    "upstream.rate_limited": (429, "rate_limit_error", "rate_limited"),
    "upstream.overloaded": (503, "server_error", "harness_unavailable"),
    "upstream.unavailable": (503, "server_error", "harness_unavailable"),
    "upstream.authentication_failed": (502, "server_error", "provider_error"),
    "upstream.invalid_request": (502, "server_error", "provider_error"),
    "upstream.invalid_response": (502, "server_error", "provider_error"),
    "upstream.agent_failed": (502, "server_error", "harness_error"),
    "harness.cancelled": (422, "invalid_request_error", "cancelled"),
    "harness.internal_error": (500, "server_error", "harness_error"),
}


def test_the_out_table_covers_every_registered_code() -> None:
    """Every code of the registry has a row."""
    assert set(OUT_ROWS) == set(CODES)


@pytest.mark.parametrize(("code", "row"), list(OUT_ROWS.items()))
def test_every_harness_code_writes_its_row_and_reads_back(
    code: str, row: tuple[int, str, str]
) -> None:
    """Status, type, code, a safe message, the whole object in detail; exact round trip."""
    err = class_for_code(code)("internal words", upstream={"provider": "openai", "status": 500})
    status, headers, body = to_envelope(err)
    error = json.loads(body)["error"]
    assert (status, error["type"], error["code"]) == row
    assert error["message"] == f"{CODES[code].title}."
    assert error["param"] is None
    assert error["detail"] == {**err.to_dict(), "status": status}
    assert headers == {"content-type": "application/json", "uhp-version": "2026-09-12"}
    for back in (from_envelope(status, headers, body), from_response(status, headers, body)):
        assert back.to_dict() == {**err.to_dict(), "status": status}
        assert type(back) is type(err)
        assert back.untrusted


def test_quota_exhausted_is_written_for_a_rate_limit_that_is_not_retryable() -> None:
    """The two rate_limited rows, with Retry-After rounded up."""
    status, headers, body = to_envelope(UpstreamRateLimitedError(retryable=False, retry_after=1.5))
    assert (status, json.loads(body)["error"]["code"]) == (429, "quota_exhausted")
    assert headers["retry-after"] == "2"
    assert from_envelope(status, headers, body).retry_after == 1.5


def test_param_comes_from_the_pointer() -> None:
    """JSON Pointer to a dotted path, escapes undone; the round trip keeps the pointer."""
    err = class_for_code("output.schema_violation")(location={"pointer": "/items/0/a~1b"})
    status, headers, body = to_envelope(err)
    assert json.loads(body)["error"]["param"] == "items.0.a/b"
    assert from_envelope(status, headers, body).location == {"pointer": "/items/0/a~1b"}


def test_public_envelope_leaves_out_upstream_and_detail() -> None:
    """public=True puts the public view into detail."""
    err = class_for_code("upstream.unavailable")(
        "openai said: org-secretorg is over capacity", upstream={"provider": "openai"}
    )
    _, _, body = to_envelope(err, public=True)
    detail = json.loads(body)["error"]["detail"]
    assert "upstream" not in detail
    assert "detail" not in detail
    assert "org-secretorg" not in body.decode()


@pytest.mark.parametrize(("name", "row"), list(REQUEST_ROWS.items()))
def test_uhp_to_harness_to_uhp_to_harness_is_stable(name: str, row: tuple[int, str, bool]) -> None:
    """A relayed UHP error reads back as the same harness error."""
    first = from_envelope(row[0], HEADERS, envelope(name, row[0], param="a.b"))
    status, headers, body = to_envelope(first)
    again = from_envelope(status, headers, body)
    assert again.to_dict() == {**first.to_dict(), "status": status}


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (404, "invalid_request_error"),
        (409, "invalid_request_error"),
        (413, "invalid_request_error"),
        (422, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (429, "rate_limit_error"),
        (200, "harness_error"),
        (500, "server_error"),
        (502, "server_error"),
        (503, "server_error"),
        (504, "server_error"),
    ],
)
def test_type_by_status_class(status: int, kind: str) -> None:
    """UHP section 2."""
    assert uhp_type(status) == kind


def test_a_drop_in_from_wrap_is_written_by_its_harness_code() -> None:
    """What a wrapped client raises goes out as its harness error and reads back so."""
    import openai

    from normalize_errors import wrap
    from normalize_errors.replay import load, run, shipped

    drop_in = run(load(shipped() / "openai" / "invalid_api_key_401.yaml"), prepare=wrap).exception
    assert isinstance(drop_in, HarnessError)
    assert is_instance(drop_in, openai.AuthenticationError)
    status, headers, body = to_envelope(drop_in)
    assert (status, json.loads(body)["error"]["code"]) == (502, "provider_error")
    back = from_response(status, headers, body)
    assert (back.code, back.upstream["code"]) == (
        "upstream.authentication_failed",
        "invalid_api_key",
    )


def test_the_message_is_the_registrys_title_never_received_text() -> None:
    """A received object's own title (another party's text) does not become the message."""
    received = HarnessError.from_dict(
        {"code": "tool.execution_failed", "title": "Failed at /srv/tools/run.py"}
    )
    _, _, body = to_envelope(received)
    assert json.loads(body)["error"]["message"] == "Tool Execution Failed."
    private = HarnessError.from_dict({"code": "x-acme.jammed", "title": "internal"})
    assert json.loads(to_envelope(private)[2])["error"]["message"] == "Agent Harness Error."


def test_a_users_reader_named_uhp_wins_over_the_librarys() -> None:
    """register_response_reader("uhp", ...) replaces the built-in reader for provider="uhp"."""
    from normalize_errors import register_response_reader, unregister_response_reader

    def mine(status: Any, headers: Any, body: Any) -> HarnessError:
        return class_for_code("upstream.overloaded")("mine")

    register_response_reader("uhp", mine)
    try:
        assert (
            from_response(429, {}, envelope("rate_limited", 429), provider="uhp").detail == "mine"
        )
    finally:
        unregister_response_reader("uhp")
    assert from_response(429, {}, envelope("rate_limited", 429), provider="uhp").detail == (
        "uhp: It failed: rate_limited."
    )


def test_a_detail_that_only_looks_like_a_harness_object_is_read_as_uhp() -> None:
    """A ``detail`` with the harness problem type but no valid object (its code is a number)
    is no harness object: the UHP code decides. A file_too_large without ``max_bytes``
    has no limit."""
    from normalize_errors._model._registry import IANA_TYPE

    odd = envelope("session_busy", 409, detail={"type": IANA_TYPE, "code": 42})
    err = from_envelope(409, HEADERS, odd)
    assert (err.code, err.upstream["provider"]) == (REQUEST_ROWS["session_busy"][1], "uhp")
    big = from_envelope(413, HEADERS, envelope("file_too_large", 413, detail={"note": "big"}))
    assert big.limit is None


def test_a_huge_max_bytes_gives_no_limit_and_the_error_reads_back() -> None:
    """``file_too_large`` with ``max_bytes`` 1 followed by 400 zeros used to give a
    ``limit`` that ``from_json(to_json())`` refused: a number no float holds is no limit."""
    huge = envelope("file_too_large", 413, detail={"max_bytes": 10**400})
    err = from_envelope(413, HEADERS, huge)
    assert err.code == "upstream.invalid_request"
    assert err.limit is None
    back = HarnessError.from_json(err.to_json())
    assert (back.code, back.limit) == ("upstream.invalid_request", None)
    infinite = from_envelope(
        413, HEADERS, envelope("file_too_large", 413, detail={"max_bytes": 1e309})
    )
    assert infinite.limit is None


def test_a_received_status_outside_4xx_5xx_is_not_the_envelopes() -> None:
    """Issue 22, finding 10: ``to_envelope`` chooses the status as ``to_http`` does."""
    body = {
        "type": "https://iana.org/assignments/http-problem-types#agent-harness-error",
        "status": 200,
        "code": "upstream.unavailable",
    }
    received = HarnessError.from_dict(body)
    assert to_envelope(received)[0] == 503
    assert to_envelope(received, public=True)[0] == 503
    kept = HarnessError.from_dict({**body, "status": 529})
    assert (to_envelope(kept)[0], to_envelope(kept, public=True)[0]) == (529, 503)
