"""Round trips of the problem details object: the draft's examples, formats, and any JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalize_errors import (
    CODES,
    IANA_TYPE,
    PRE_REGISTRATION_TYPE,
    HarnessError,
    OutputRetriesExhaustedError,
    OutputSchemaViolationError,
    ProblemFormatError,
    UpstreamError,
    class_for_code,
)

from .support import VALIDATOR, examples

# Section 9 of the draft.
SECTION_9 = """{ "type": "https://iana.org/assignments/http-problem-types#agent-harness-error",
"title": "Output Retries Exhausted", "detail": "Structured output failed validation after 3 attempts.",
"code": "output.retries_exhausted", "origin": "harness", "retryable": false, "model_recoverable": false,
"attempts": 3, "max_attempts": 3, "location": { "run_id": "run_8f2c", "turn": 5 }, "causes": [ { "type":
"https://iana.org/assignments/http-problem-types#agent-harness-error", "title": "Output Schema Violation",
"code": "output.schema_violation", "origin": "model", "model_recoverable": true, "model_feedback": "Field
'price' must be a number, got string.", "location": { "turn": 5, "pointer": "/items/0/price" } } ] }"""

# The problem-type page (harness-error-problem-type.md), with the pre-registration URI.
PROBLEM_TYPE_PAGE = """{
  "type": "https://agenterrors.org/problems/harness-error",
  "title": "Output Retries Exhausted",
  "code": "output.retries_exhausted",
  "origin": "harness",
  "retryable": false,
  "attempts": 3,
  "max_attempts": 3,
  "causes": [
    {
      "type": "https://agenterrors.org/problems/harness-error",
      "title": "Output Schema Violation",
      "code": "output.schema_violation",
      "origin": "model",
      "model_feedback": "Field 'price' must be a number, got string.",
      "location": { "turn": 5, "pointer": "/items/0/price" }
    }
  ]
}"""

# The harness object inside the draft's MCP example (_meta["org.agenterrors/harness-error"]).
MCP_EXAMPLE = """{ "type": "https://iana.org/assignments/http-problem-types#agent-harness-error",
"title": "Invalid Tool Arguments", "code": "output.invalid_tool_arguments", "origin": "model",
"model_recoverable": true, "model_feedback": "Argument 'date' must be YYYY-MM-DD, got '11/04'.",
"location": { "tool_name": "book_meeting", "pointer": "/date" } }"""

# The harness object inside the draft's A2A example (a data part of the task status).
A2A_EXAMPLE = """{ "type": "https://iana.org/assignments/http-problem-types#agent-harness-error",
"title": "Maximum Turns Exceeded", "code": "loop.max_turns_exceeded", "origin": "harness",
"retryable": false, "model_recoverable": false, "limit": { "name": "turns", "value": 50,
"observed": 50 } }"""

EXAMPLES = {
    "section-9": SECTION_9.replace("\n", " "),
    "problem-type-page": PROBLEM_TYPE_PAGE,
    "mcp": MCP_EXAMPLE.replace("\n", " "),
    "a2a": A2A_EXAMPLE.replace("\n", " "),
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_the_drafts_examples_round_trip_member_for_member(name: str) -> None:
    """from_json then to_dict gives back exactly the received object."""
    obj = json.loads(EXAMPLES[name])
    err = HarnessError.from_json(EXAMPLES[name])
    assert err.to_dict() == obj
    assert HarnessError.from_dict(err.to_dict()).to_dict() == obj
    assert json.loads(err.to_json()) == obj
    VALIDATOR.validate(err.to_dict())


def test_section_9_reads_as_typed_errors() -> None:
    """The example's outer error and its cause come back as their classes, with members."""
    err = HarnessError.from_json(EXAMPLES["section-9"])
    assert isinstance(err, OutputRetriesExhaustedError)
    assert (err.attempts, err.max_attempts, err.retryable) == (3, 3, False)
    assert err.location == {"run_id": "run_8f2c", "turn": 5}
    (cause,) = err.causes
    assert isinstance(cause, OutputSchemaViolationError)
    assert cause.location is not None
    assert cause.location["pointer"] == "/items/0/price"
    assert cause.retryable is False  # absent: the registry default
    assert err.untrusted
    assert cause.untrusted


def test_both_type_uris_are_kept_as_received() -> None:
    """Either URI is accepted and written back unchanged."""
    for uri in (IANA_TYPE, PRE_REGISTRATION_TYPE):
        err = HarnessError.from_dict({"type": uri, "code": "output.empty"})
        assert err.to_dict()["type"] == uri
    assert HarnessError.from_dict({"code": "output.empty"}).to_dict() == {"code": "output.empty"}


def test_unknown_members_are_kept_and_written_back() -> None:
    """Members this library does not know survive, also inside known ones."""
    obj = {
        "code": "upstream.rate_limited",
        "x-vendor": {"a": [1, 2]},
        "upstream": {"provider": "openai", "status": 429, "extra": True},
        "location": {"turn": 2, "span": "abc"},
    }
    assert HarnessError.from_dict(obj).to_dict() == obj


def test_unknown_codes_and_private_categories() -> None:
    """An unknown code of a known category is that category's class; x- codes are allowed."""
    err = HarnessError.from_dict({"code": "upstream.brand_new"})
    assert type(err) is UpstreamError
    assert err.http_status == 502
    private = HarnessError.from_dict({"code": "x-acme.cache_miss", "retryable": True})
    assert type(private) is HarnessError
    assert private.advice == "retry"


def test_status_is_left_out_outside_http() -> None:
    """Section 6.2: a locally built error has no status member; a received one keeps it."""
    assert "status" not in class_for_code("upstream.overloaded")().to_dict()
    received = HarnessError.from_dict({"code": "upstream.overloaded", "status": 503})
    assert received.to_dict()["status"] == 503


def test_integral_floats_are_accepted_for_integers() -> None:
    """A2A data parts turn integers into floats; 3.0 reads as 3."""
    err = HarnessError.from_dict(
        {"code": "loop.max_turns_exceeded", "attempts": 3.0, "location": {"turn": 5.0}}
    )
    assert err.attempts == 3
    assert isinstance(err.attempts, int)
    assert err.location == {"turn": 5}


BAD = [
    ([], ""),
    ({}, "/code"),
    ({"code": 5}, "/code"),
    ({"code": "Output.Bad"}, "/code"),
    ({"code": "nodot"}, "/code"),
    ({"code": "output.empty", "type": "about:blank"}, "/type"),
    ({"code": "output.empty", "origin": "martians"}, "/origin"),
    ({"code": "output.empty", "retryable": "yes"}, "/retryable"),
    ({"code": "output.empty", "retry_after": -1}, "/retry_after"),
    ({"code": "output.empty", "retry_after": True}, "/retry_after"),
    ({"code": "output.empty", "attempts": 1.5}, "/attempts"),
    ({"code": "output.empty", "status": 42}, "/status"),
    ({"code": "output.empty", "detail": 7}, "/detail"),
    ({"code": "output.empty", "limit": {"value": 3}}, "/limit/name"),
    ({"code": "output.empty", "limit": {"name": "turns"}}, "/limit/value"),
    ({"code": "output.empty", "location": {"turn": 0}}, "/location/turn"),
    ({"code": "output.empty", "location": {"pointer": "items/0"}}, "/location/pointer"),
    ({"code": "output.empty", "location": {"pointer": "/a~2"}}, "/location/pointer"),
    ({"code": "output.empty", "upstream": {"status": "429"}}, "/upstream/status"),
    ({"code": "output.empty", "upstream": {"provider": 5}}, "/upstream/provider"),
    ({"code": "output.empty", "status": True}, "/status"),  # a boolean is no integer
    ({"code": "output.empty", "location": {"turn": False}}, "/location/turn"),
    ({"code": "output.empty", "upstream": {"stop_reason": ["x"]}}, "/upstream/stop_reason"),
    ({"code": "output.empty", "upstream": []}, "/upstream"),
    ({"code": "output.empty", "causes": {}}, "/causes"),
    ({"code": "output.empty", "causes": [{"code": "output.empty"}, {"code": 1}]}, "/causes/1/code"),
]


@pytest.mark.parametrize(("obj", "pointer"), BAD, ids=[p or "root" for _, p in BAD])
def test_malformed_objects_name_the_offending_member(obj: Any, pointer: str) -> None:
    """One documented ValueError subclass, whose pointer names the member."""
    with pytest.raises(ProblemFormatError) as info:
        HarnessError.from_dict(obj)
    assert info.value.pointer == pointer
    assert isinstance(info.value, ValueError)
    assert (pointer or "the top level") in str(info.value)


@pytest.mark.parametrize("text", ["", "{", "[1,", b"\xff\xfe", "{" * 100_000, "null"])
def test_from_json_rejects_what_is_not_a_json_object(text: str | bytes) -> None:
    """Bad JSON, bad UTF-8 and absurd nesting all give ProblemFormatError."""
    with pytest.raises(ProblemFormatError):
        HarnessError.from_json(text)


def test_deep_causes_are_cut_to_the_innermost_entry_when_read() -> None:
    """A received chain 5000 deep reads in bounded depth and keeps its innermost entry."""
    obj: dict[str, Any] = {"code": "tool.execution_failed", "detail": "root"}
    for level in range(5000):
        obj = {"code": "upstream.agent_failed", "detail": f"{level}", "causes": [obj]}
    err = HarnessError.from_dict(obj)
    depth = 0
    while err.causes:
        err = err.causes[-1]
        depth += 1
    assert err.detail == "root"
    assert depth < 10


def innermost_of(err: HarnessError) -> tuple[HarnessError, int]:
    """The last entry of the last entry ... of ``err.causes``, and how deep it is."""
    depth = 0
    while err.causes:
        err = err.causes[-1]
        depth += 1
    return err, depth


def test_the_innermost_entry_is_read_without_an_empty_or_looping_causes_list() -> None:
    """Past the depth limit the innermost entry is kept, and read without its ``causes``:
    an empty list, or one that contains itself (what a YAML anchor makes), is no cause."""
    root: dict[str, Any] = {"code": "tool.timeout", "detail": "root", "causes": []}
    obj = root
    for level in range(50):
        obj = {"code": "upstream.agent_failed", "detail": f"{level}", "causes": [obj]}
    leaf, depth = innermost_of(HarnessError.from_dict(obj))
    assert (leaf.code, leaf.detail, leaf.causes) == ("tool.timeout", "root", [])
    assert depth < 10

    looping: list[Any] = []
    looping.append({"code": "tool.execution_failed", "detail": "loop", "causes": looping})
    obj = {"code": "upstream.agent_failed", "causes": looping}
    leaf, depth = innermost_of(HarnessError.from_dict(obj))
    assert (leaf.code, leaf.detail, leaf.causes) == ("tool.execution_failed", "loop", [])
    assert 0 < depth < 10


def test_the_walk_to_the_innermost_entry_is_bounded_too() -> None:
    """A chain longer than ``MAX_LEAF_STEPS`` past the depth limit: the walk stops where its
    budget ends, and the entry it reached is kept without its remaining causes."""
    from normalize_errors._model._problem import MAX_LEAF_STEPS

    obj: dict[str, Any] = {"code": "tool.execution_failed", "detail": "root"}
    for level in range(MAX_LEAF_STEPS + 100):
        obj = {"code": "upstream.agent_failed", "detail": f"{level}", "causes": [obj]}
    leaf, depth = innermost_of(HarnessError.from_dict(obj))
    assert leaf.code == "upstream.agent_failed"
    assert leaf.detail is not None
    assert int(leaf.detail) == 99 - depth  # MAX_LEAF_STEPS entries below the cut, no more
    assert leaf.causes == []
    assert depth < 10


def test_to_dict_output_validates_against_the_shipped_schema() -> None:
    """Every registered code, fully populated, validates."""
    for code in CODES:
        err = class_for_code(code)(
            "detail",
            retryable=False,
            model_recoverable=True,
            model_feedback="fix it",
            retry_after=0.25,
            attempts=1,
            max_attempts=2,
            limit={"name": "output_tokens", "value": 1024, "observed": 1024, "unit": "tokens"},
            location={
                "run_id": "r",
                "turn": 1,
                "tool_name": "t",
                "tool_call_id": "c",
                "pointer": "/a~1b/0",
            },
            upstream={"provider": "anthropic", "status": 529, "code": "overloaded_error"},
            causes=[class_for_code("output.malformed")()],
            extensions={"x-extra": 1},
        )
        VALIDATOR.validate(err.to_dict())


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=6)
    ),
    max_leaves=30,
)
MEMBER_NAMES = st.sampled_from(
    [
        "type",
        "title",
        "status",
        "detail",
        "instance",
        "code",
        "origin",
        "retryable",
        "model_recoverable",
        "model_feedback",
        "retry_after",
        "attempts",
        "max_attempts",
        "limit",
        "location",
        "upstream",
        "causes",
        "x-other",
    ]
)
CODE_VALUES = st.sampled_from([*CODES, "upstream.new", "x-acme.fail", "bad", "A.b"])
PROBLEMISH = st.fixed_dictionaries(
    {"code": CODE_VALUES}, optional={"type": st.sampled_from([IANA_TYPE, "about:blank"])}
).flatmap(lambda base: st.dictionaries(MEMBER_NAMES, JSON, max_size=6).map(lambda d: {**d, **base}))


@settings(max_examples=examples(400), deadline=None)
@given(st.one_of(JSON, PROBLEMISH))
def test_from_dict_on_any_json_returns_a_typed_error_or_the_documented_error(obj: Any) -> None:
    """Property: a typed, schema-valid error, or ProblemFormatError; never anything else."""
    try:
        err = HarnessError.from_dict(obj)
    except ProblemFormatError as exc:
        pointer: str | None = exc.pointer
    else:
        pointer = None
    if pointer is not None:
        assert pointer == "" or pointer.startswith("/")
        return
    assert isinstance(err, class_for_code(err.code))
    out = err.to_dict()
    VALIDATOR.validate(out)
    json.dumps(out, allow_nan=False)
    assert HarnessError.from_dict(out) == err


@pytest.mark.parametrize(
    ("obj", "pointer"),
    [
        ({"limit": {"name": "turns", "value": 5, "observed": "5"}}, "/limit/observed"),
        ({"limit": {"name": "turns", "value": 5, "unit": 5}}, "/limit/unit"),
        ({"location": {"tool_name": 5}}, "/location/tool_name"),
        ({"location": {"pointer": ["a"]}}, "/location/pointer"),
        (
            {"causes": [{"code": "x.y", "limit": {"name": "n", "value": "v"}}]},
            "/causes/0/limit/value",
        ),
    ],
)
def test_from_dict_names_the_member_that_is_wrong(obj: dict[str, Any], pointer: str) -> None:
    """A received object with a member of the wrong type: the pointer names it."""
    with pytest.raises(ProblemFormatError) as caught:
        HarnessError.from_dict({"code": "loop.max_turns_exceeded", **obj})
    assert caught.value.pointer == pointer


def test_from_json_of_what_is_no_json_text() -> None:
    """Bytes that are not UTF-8 JSON, and a value that is no text at all."""
    with pytest.raises(ProblemFormatError, match="not JSON"):
        HarnessError.from_json(b"\xff{")
    with pytest.raises(ProblemFormatError, match="not JSON text"):
        HarnessError.from_json(5)  # type: ignore[arg-type]
