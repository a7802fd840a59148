"""Hostile input for the UHP and site readers: the invariants of ``test_hostile``."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from normalize_errors import HarnessError, from_response
from normalize_errors.bindings.http import public_problem
from normalize_errors.bindings.otel import attributes
from normalize_errors.bindings.site import from_site_error
from normalize_errors.bindings.uhp import from_envelope, to_envelope

from ..support import valid
from .conftest import timed
from .test_hostile import BODIES, HEADERS, JSONISH, KEY, STATUSES

WORDS = st.sampled_from(
    [
        *("rate_limited", "quota_exhausted", "file_too_large", "harness_error", "cancelled"),
        *("failed", "after_delay", "once", "no", "internal", "needs_human", "acme_x", KEY),
    ]
)
VALUES = st.one_of(JSONISH, WORDS)
ERRORS = st.dictionaries(
    st.sampled_from(
        ["type", "code", "message", "param", "detail", "field", "retry", "retry_after"]
    ),
    VALUES,
    max_size=8,
)
SHAPED = st.one_of(
    st.builds(lambda e: {"error": e}, ERRORS),
    st.builds(
        lambda state, e, i: {"id": i, "status": state, "error": e},
        st.sampled_from(["failed", "cancelled", "completed"]) | VALUES,
        ERRORS | VALUES,
        VALUES,
    ),
    st.builds(lambda e: json.dumps({"error": e}, default=str), ERRORS),
    BODIES,
)
WITH_VERSION = HEADERS.map(
    lambda h: {**(dict(h) if isinstance(h, dict) else {}), "UHP-Version": "2026-09-12"}
)


@given(STATUSES, WITH_VERSION | HEADERS, SHAPED)
def test_from_envelope_answers_anything(status: Any, headers: Any, body: Any) -> None:
    """Any status, headers and body: a valid, leak-free error, and its envelope reads back."""
    err = valid(timed("from_envelope", lambda: from_envelope(status, headers, body), status, body))
    code, out_headers, out = to_envelope(err)
    back = valid(from_response(code, out_headers, out))
    assert back.to_dict() == {**err.to_dict(), "status": code}
    assert KEY not in json.dumps(public_problem(err))
    fields = attributes(err)  # what record_error and log_fields write
    for value in fields.values():
        assert isinstance(value, (str, bool, int, float)) or all(
            isinstance(item, str) for item in value
        )
    assert KEY[8:30] not in json.dumps(fields)


@given(STATUSES, HEADERS, SHAPED)
def test_from_site_error_answers_anything(status: Any, headers: Any, body: Any) -> None:
    """Any status, headers and body: a valid, leak-free error."""
    err = timed("from_site_error", lambda: from_site_error(status, headers, body), status, body)
    valid(err)


@given(STATUSES, WITH_VERSION, SHAPED, st.sampled_from([None, "uhp", "site"]))
def test_from_response_with_the_wire_readers_answers_anything(
    status: Any, headers: Any, body: Any, provider: str | None
) -> None:
    """Through from_response, recognised by header or named."""
    err = from_response(status, headers, body, provider=provider)
    assert isinstance(err, HarnessError)
    valid(err)
