"""The registry against the draft's tables 2 and 3, copied here by hand from the draft text."""

from __future__ import annotations

import re

import pytest

import normalize_errors
from normalize_errors import CATEGORIES, CODES, class_for_code
from normalize_errors._model._registry import code_info, status_code

# Table 2 of draft-ouchi-agent-harness-errors (section 5.2): code | title | origin | R | M
TABLE_2 = """
output.malformed               | Malformed Output               | model    | false | true
output.schema_violation        | Output Schema Violation        | model    | false | true
output.truncated               | Output Truncated               | model    | false | false
output.empty                   | Empty Output                   | model    | true  | true
output.unknown_tool            | Unknown Tool Requested         | model    | false | true
output.invalid_tool_arguments  | Invalid Tool Arguments         | model    | false | true
output.retries_exhausted       | Output Retries Exhausted       | harness  | false | false
loop.max_turns_exceeded        | Maximum Turns Exceeded         | harness  | false | false
loop.budget_exceeded           | Budget Exceeded                | harness  | false | false
loop.timeout                   | Run Timeout                    | harness  | false | false
loop.repetition_detected       | Repetition Detected            | harness  | false | true
context.window_exceeded        | Context Window Exceeded        | harness  | false | false
context.compaction_failed      | Context Compaction Failed      | harness  | true  | false
tool.not_available             | Tool Not Available             | tool     | false | true
tool.execution_failed          | Tool Execution Failed          | tool     | false | true
tool.timeout                   | Tool Timeout                   | tool     | true  | true
tool.permission_denied         | Tool Permission Denied         | harness  | false | true
tool.sandbox_violation         | Sandbox Violation              | harness  | false | false
policy.guardrail_triggered     | Guardrail Triggered            | harness  | false | false
policy.model_refusal           | Model Refusal                  | model    | false | false
policy.content_filtered        | Content Filtered               | upstream | false | false
policy.approval_denied         | Approval Denied                | user     | false | true
upstream.rate_limited          | Upstream Rate Limited          | upstream | true  | false
upstream.overloaded            | Upstream Overloaded            | upstream | true  | false
upstream.unavailable           | Upstream Unavailable           | upstream | true  | false
upstream.authentication_failed | Upstream Authentication Failed | upstream | false | false
upstream.invalid_request       | Upstream Invalid Request       | upstream | false | false
upstream.invalid_response      | Upstream Invalid Response      | upstream | true  | false
upstream.agent_failed          | Remote Agent Failed            | upstream | false | true
harness.cancelled              | Run Cancelled                  | harness  | false | false
harness.internal_error         | Harness Internal Error         | harness  | false | false
"""


def table_3_status(code: str) -> int:
    """Table 3 of the draft (section 6.1), as its rows read, first match wins."""
    if code == "upstream.rate_limited":
        return 429
    if code in ("upstream.overloaded", "upstream.unavailable"):
        return 503
    if code.startswith("upstream."):
        return 502
    if code in ("loop.timeout", "tool.timeout"):
        return 504
    if code.startswith("policy.") or code == "tool.permission_denied":
        return 403
    if code == "harness.internal_error":
        return 500
    return 422


ROWS = [[cell.strip() for cell in line.split("|")] for line in TABLE_2.strip().splitlines()]


def test_the_registry_has_exactly_the_31_codes_of_table_2() -> None:
    """No code is missing and none is added."""
    assert [row[0] for row in ROWS] == list(CODES)
    assert len(CODES) == 31


@pytest.mark.parametrize(("code", "title", "origin", "r", "m"), ROWS, ids=[r[0] for r in ROWS])
def test_each_row_matches_tables_2_and_3(
    code: str, title: str, origin: str, r: str, m: str
) -> None:
    """Title, origin, defaults and HTTP status agree with the draft."""
    info = CODES[code]
    assert (info.title, info.origin) == (title, origin)
    assert (info.retryable, info.model_recoverable) == (r == "true", m == "true")
    assert info.http_status == table_3_status(code)
    assert info.description.endswith(".")


def test_codes_is_read_only() -> None:
    """CODES cannot be changed by a user."""
    with pytest.raises(TypeError):
        CODES["output.malformed"] = CODES["output.empty"]  # type: ignore[index]


def test_code_syntax() -> None:
    """Every registered code has the draft's syntax, in a registered category."""
    for code in CODES:
        assert re.fullmatch(r"[a-z0-9_]+\.[a-z0-9_]+", code)
        assert code.partition(".")[0] in CATEGORIES


@pytest.mark.parametrize("code", list(CODES))
def test_every_code_has_its_class_named_from_its_title(code: str) -> None:
    """The class name is the title in CamelCase plus Error (kept once), and it is exported."""
    title = CODES[code].title
    name = "".join(word[:1].upper() + word[1:] for word in title.split())
    if not name.endswith("Error"):
        name += "Error"
    cls = class_for_code(code)
    assert cls.__name__ == name
    assert getattr(normalize_errors, name) is cls
    assert name in normalize_errors.__all__
    assert cls.code == code
    assert cls().code == code


def test_unknown_codes_fall_back_to_their_category() -> None:
    """Section 4.1: an unknown code of a known category is a generic error of it."""
    assert class_for_code("upstream.gone_fishing") is normalize_errors.UpstreamError
    assert class_for_code("x-acme.broke") is normalize_errors.HarnessError
    info = code_info("policy.new_rule")
    assert (info.code, info.http_status, info.reaction) == ("policy.new_rule", 403, "human")
    assert code_info("x-acme.broke").origin is None


def test_registry_defaults_drive_advice() -> None:
    """The advice with registry defaults, for a few codes whose reaction matters most."""
    advice = {code: class_for_code(code)().advice for code in CODES}
    assert advice["upstream.rate_limited"] == "retry"
    assert advice["output.schema_violation"] == "feedback"
    assert advice["context.window_exceeded"] == "adjust"
    assert advice["output.truncated"] == "adjust"
    assert advice["upstream.invalid_request"] == "fix"
    assert advice["upstream.authentication_failed"] == "credentials"
    assert advice["policy.content_filtered"] == "human"
    assert advice["harness.internal_error"] == "stop"
    quota = normalize_errors.UpstreamRateLimitedError(retryable=False)
    assert quota.advice == "human"


def test_registry_rows_are_read_only_values() -> None:
    """A row cannot be changed; it compares, hashes and pickles by value, and shows itself."""
    import pickle

    row = CODES["upstream.rate_limited"]
    with pytest.raises(AttributeError, match="read-only"):
        row.retryable = False
    copy = pickle.loads(pickle.dumps(row))
    assert copy == row
    assert copy is not row
    assert hash(copy) == hash(row)
    assert row != CODES["upstream.overloaded"]
    assert row != "upstream.rate_limited"
    assert repr(row).startswith("CodeInfo(code='upstream.rate_limited', title='Upstream Rate")
    assert "http_status=429" in repr(row)


@pytest.mark.parametrize(
    ("status", "code", "retryable"),
    [
        (400, "upstream.invalid_request", False),
        (401, "upstream.authentication_failed", False),
        (402, "upstream.rate_limited", False),
        (403, "upstream.authentication_failed", False),
        (404, "upstream.invalid_request", False),
        (408, "upstream.unavailable", True),
        (409, "upstream.invalid_request", True),
        (413, "context.window_exceeded", False),
        (418, "upstream.invalid_request", False),
        (429, "upstream.rate_limited", True),
        (500, "upstream.unavailable", True),
        (501, "upstream.invalid_request", False),
        (502, "upstream.unavailable", True),
        (520, "upstream.unavailable", True),
        (529, "upstream.overloaded", True),
        (200, "upstream.unavailable", True),
        (None, "upstream.unavailable", True),
        (302, "upstream.invalid_response", True),
        (999, "upstream.invalid_response", True),
    ],
)
def test_status_code(status: int | None, code: str, retryable: bool) -> None:
    """What a status means when nothing more specific is known."""
    assert status_code(status) == (code, retryable)
