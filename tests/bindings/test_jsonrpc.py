"""The JSON-RPC binding (section 6.3): the object in ``data``, per-protocol code tables."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalize_errors import (
    CODES,
    IANA_TYPE,
    PRE_REGISTRATION_TYPE,
    HarnessError,
    InvalidToolArgumentsError,
    UnknownToolRequestedError,
    UpstreamRateLimitedError,
    class_for_code,
)
from normalize_errors.bindings.jsonrpc import (
    A2A_CODES,
    MCP_CODES,
    _find_problem,
    _integral,
    from_jsonrpc,
    to_jsonrpc,
)
from tests.support import examples, valid


@pytest.mark.parametrize("code", list(CODES))
def test_to_jsonrpc_puts_the_object_in_data(code: str) -> None:
    """data is the harness error object (no status outside HTTP); message is the detail."""
    err = class_for_code(code)("It failed.", status=500)
    error = to_jsonrpc(err)
    assert error["data"]["code"] == code
    assert error["data"]["type"] == IANA_TYPE
    assert "status" not in error["data"]
    assert error["message"] == "It failed."
    expected = (
        -32602 if code in ("output.unknown_tool", "output.invalid_tool_arguments") else -32603
    )
    assert error["code"] == expected


def test_to_jsonrpc_takes_the_protocols_code_and_falls_back_to_the_title() -> None:
    """An explicit code wins; without detail the message is the title."""
    error = to_jsonrpc(UpstreamRateLimitedError(), code=-32050)
    assert error["code"] == -32050
    assert error["message"] == "Upstream Rate Limited"


@pytest.mark.parametrize("protocol", [None, "jsonrpc", "mcp"])
def test_round_trip_keeps_every_member(protocol: str | None) -> None:
    """A harness error read back from data is the same object, marked untrusted."""
    err = UpstreamRateLimitedError(
        "slow down",
        origin="upstream",
        retry_after=2.5,
        attempts=3,
        upstream={"provider": "openai", "status": 429},
        location={"run_id": "r1", "turn": 2},
    )
    back = valid(from_jsonrpc(to_jsonrpc(err), protocol))
    assert isinstance(back, UpstreamRateLimitedError)
    assert back.to_dict() == err.to_dict()
    assert back.untrusted


def test_the_object_in_data_wins_over_the_jsonrpc_code() -> None:
    """A -32601 whose data says upstream.rate_limited is upstream.rate_limited."""
    data = UpstreamRateLimitedError("busy").to_dict()
    for protocol in (None, "mcp"):
        err = from_jsonrpc({"code": -32601, "message": "Method not found", "data": data}, protocol)
        assert err.code == "upstream.rate_limited"


def test_a_whole_response_and_attribute_objects_are_read() -> None:
    """{"jsonrpc", "id", "error"} and objects with code/message/data attributes both work."""

    class ErrorData:
        code = -32602
        message = "Unknown tool: q"
        data = None

    whole = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "nope"}}
    assert from_jsonrpc(whole, "mcp").code == "tool.not_available"
    assert from_jsonrpc(ErrorData(), "mcp").code == "output.unknown_tool"


def test_the_pre_registration_type_is_recognised() -> None:
    """Either type URI marks a harness error object; another type does not."""
    data = {"type": PRE_REGISTRATION_TYPE, "code": "tool.timeout"}
    assert from_jsonrpc({"code": -32603, "message": "x", "data": data}).code == "tool.timeout"
    other = {"type": "about:blank", "code": "tool.timeout"}
    err = from_jsonrpc({"code": -32603, "message": "x", "data": other})
    assert err.code == "upstream.unavailable"


def test_an_invalid_object_falls_back_to_the_table() -> None:
    """An object that claims the type but breaks the format is not trusted as one."""
    data = {"type": IANA_TYPE, "code": "tool.timeout", "retryable": "yes"}
    err = from_jsonrpc({"code": -32603, "message": "boom", "data": data}, "mcp")
    assert err.code == "tool.execution_failed"


def test_minus_32001_depends_on_the_protocol() -> None:
    """-32001 is the MCP SDK's request timeout but A2A's TaskNotFoundError."""
    error = {"code": -32001, "message": "x"}
    assert from_jsonrpc(error, "mcp").code == "tool.timeout"
    assert from_jsonrpc(error, "a2a").code == "upstream.invalid_request"
    assert from_jsonrpc(error).code == "upstream.unavailable"


# -- Table 5 (MCP), every row that is a JSON-RPC code ---------------------------------------

TABLE_5: list[tuple[int, str, str]] = [
    (-32602, "Unknown tool: book_meeting", "output.unknown_tool"),
    (-32602, "Tool book_meeting not found", "output.unknown_tool"),
    (-32602, "Invalid arguments for tool book_meeting", "output.invalid_tool_arguments"),
    (-32601, "Method not found", "tool.not_available"),
    (-32700, "Parse error", "harness.internal_error"),
    (-32600, "Invalid Request", "harness.internal_error"),
    (-32603, "Internal error", "tool.execution_failed"),
    (-32050, "a server-defined error", "tool.execution_failed"),
    (-32001, "Request 'tools/call' timed out", "tool.timeout"),
    (-32000, "Connection closed", "tool.not_available"),
]


@pytest.mark.parametrize(("code", "message", "expected"), TABLE_5)
def test_table_5(code: int, message: str, expected: str) -> None:
    """Each MCP JSON-RPC signal, with its code and message kept in upstream."""
    err = valid(from_jsonrpc({"code": code, "message": message}, "mcp"))
    assert err.code == expected
    assert err.upstream == {"provider": "mcp", "code": str(code), "message": message}


def test_mcp_sets_origin_tool_on_a_received_object_without_one() -> None:
    """Section 7.3: the code is used as is and origin defaults to tool."""
    data = {"type": IANA_TYPE, "code": "upstream.rate_limited", "retry_after": 4}
    err = from_jsonrpc({"code": -32603, "message": "x", "data": data}, "mcp")
    assert (err.code, err.origin, err.retry_after) == ("upstream.rate_limited", "tool", 4.0)
    with_origin = {**data, "origin": "upstream"}
    err = from_jsonrpc({"code": -32603, "message": "x", "data": with_origin}, "mcp")
    assert err.origin == "upstream"


# -- Table 7 (A2A), every row that is a JSON-RPC code ---------------------------------------

TABLE_7: list[tuple[int, str]] = [
    (-32001, "upstream.invalid_request"),  # TaskNotFoundError
    (-32002, "upstream.invalid_request"),  # TaskNotCancelableError
    (-32003, "upstream.invalid_request"),  # PushNotificationNotSupportedError
    (-32004, "upstream.invalid_request"),  # UnsupportedOperationError
    (-32005, "upstream.invalid_request"),  # ContentTypeNotSupportedError
    (-32006, "upstream.invalid_response"),  # InvalidAgentResponseError
    (-32007, "upstream.invalid_request"),  # A2A 1.0 additions
    (-32008, "upstream.invalid_request"),
    (-32009, "upstream.invalid_request"),
    (-32700, "upstream.invalid_request"),
    (-32600, "upstream.invalid_request"),
    (-32601, "upstream.invalid_request"),
    (-32602, "upstream.invalid_request"),
    (-32603, "upstream.unavailable"),
]


@pytest.mark.parametrize(("code", "expected"), TABLE_7)
def test_table_7(code: int, expected: str) -> None:
    """Each A2A JSON-RPC error code, with provider a2a."""
    err = valid(from_jsonrpc({"code": code, "message": "m"}, "a2a"))
    assert err.code == expected
    assert err.upstream == {"provider": "a2a", "code": str(code), "message": "m"}


def test_tables_cover_every_code_they_name() -> None:
    """Every entry of the tables is a registered code."""
    for table in (MCP_CODES, A2A_CODES):
        assert set(table.values()) <= set(CODES)


def test_a2a_wraps_a_received_object_as_agent_failed() -> None:
    """Section 8.4: upstream.agent_failed, object in causes, retryable copied."""
    inner = UpstreamRateLimitedError("busy", retry_after=3)
    err = from_jsonrpc(to_jsonrpc(inner), "a2a")
    assert err.code == "upstream.agent_failed"
    assert err.retryable is True
    assert [c.code for c in err.causes] == ["upstream.rate_limited"]
    assert err.upstream["provider"] == "a2a"


def test_a2a_error_info_list_carries_the_object_in_metadata() -> None:
    """A2A 1.x sends data as a list of google.rpc.ErrorInfo; the object is in metadata."""
    obj = InvalidToolArgumentsError("bad", attempts=2).to_dict()
    data = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "INTERNAL",
             "domain": "a2a-protocol.org", "metadata": obj}]  # fmt: skip
    err = from_jsonrpc({"code": -32603, "message": "x", "data": data}, "a2a")
    assert err.causes[0].to_dict() == obj


def test_integral_floats_read_back_as_integers() -> None:
    """attempts 3.0 and limit 50.0 come back as 3 and 50; 2.5 stays a float."""
    obj = {"type": IANA_TYPE, "code": "loop.max_turns_exceeded", "attempts": 3.0,
           "limit": {"name": "turns", "value": 50.0, "observed": 50.0},
           "upstream": {"x": [1.0, 2.5]}}  # fmt: skip
    err = _find_problem(obj)
    assert err is not None
    out = err.to_dict()
    assert out["attempts"] == 3
    assert isinstance(out["attempts"], int)
    assert out["limit"] == {"name": "turns", "value": 50, "observed": 50}
    assert all(isinstance(v, int) for v in (out["limit"]["value"], out["limit"]["observed"]))
    assert _integral({"a": (1.0, 2.5, True)}) == {"a": [1, 2.5, True]}


def test_a_type_member_that_is_no_string_carries_no_problem() -> None:
    """``data.type`` of any JSON value: a list or an object is no type URI (it used to raise
    inside ``find_problem``, and A2A's ``from_task`` fell back to its last-resort error)."""
    kinds: list[Any] = [[], {}, [IANA_TYPE], 5, None]
    for kind in kinds:
        assert _find_problem({"type": kind, "code": "upstream.unavailable"}) is None
        err = valid(from_jsonrpc({"code": -32603, "message": "x", "data": {"type": kind}}, "a2a"))
        assert err.causes == []


@pytest.mark.parametrize(
    "error", [None, 42, "text", {"code": "x"}, {"message": 5}, [], {"data": {"type": IANA_TYPE}}]
)
def test_from_jsonrpc_never_raises(error: Any) -> None:
    """Anything at all gives a valid harness error."""
    for protocol in (None, "mcp", "a2a"):
        assert isinstance(valid(from_jsonrpc(error, protocol)), HarnessError)


def test_unknown_tool_codes_use_minus_32602() -> None:
    """output.unknown_tool goes out as Invalid params."""
    assert to_jsonrpc(UnknownToolRequestedError("no such tool"))["code"] == -32602


def test_binding_modules_import_no_sdk() -> None:
    """Importing the bindings loads neither the MCP nor the A2A SDK (only calling them does)."""
    code = (
        "import sys\n"
        "import normalize_errors.bindings.jsonrpc, normalize_errors.bindings.mcp\n"
        "import normalize_errors.bindings.a2a\n"
        "roots = {name.partition('.')[0] for name in sys.modules}\n"
        "sdks = {'mcp', 'mcp_types', 'a2a', 'google', 'pydantic', 'httpx', 'anyio'}\n"
        "print(sorted(roots & sdks))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_drop_in_is_carried_by_its_harness_view() -> None:
    """Bindings read ``err.problem`` (issue 16: a drop-in's own ``code`` is the vendor's)."""
    view = UpstreamRateLimitedError("slow down", retry_after=2)

    class DropIn(UpstreamRateLimitedError):
        @property
        def problem(self) -> HarnessError:
            return view

    dropin = DropIn("vendor text")
    dropin.code = "rate_limit_exceeded"  # what a vendor class would say
    assert to_jsonrpc(dropin)["data"] == view.to_dict()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
ERRORS = st.fixed_dictionaries(
    {},
    optional={
        "code": st.integers(-33000, 0) | JSON,
        "message": st.text(max_size=40) | JSON,
        "data": JSON
        | st.fixed_dictionaries(
            {"type": st.just(IANA_TYPE), "code": st.sampled_from(sorted(CODES)) | st.text()},
            optional={"retryable": JSON, "attempts": JSON, "causes": JSON, "limit": JSON},
        ),
    },
)


@settings(max_examples=examples(300), deadline=None)
@given(error=ERRORS, protocol=st.sampled_from([None, "mcp", "a2a"]))
def test_from_jsonrpc_never_raises_on_any_json(error: dict[str, Any], protocol: str | None) -> None:
    """Whatever a peer sends, the answer is a valid harness error."""
    valid(from_jsonrpc(error, protocol))


def test_an_error_object_whose_members_raise_is_read_without_them() -> None:
    """An attribute that raises (not only AttributeError) counts as absent: the members that
    can be read still are, and the answer is the table's default for no code."""

    class Broken:
        message = "tool crashed"

        @property
        def code(self) -> int:
            raise RuntimeError("a property that breaks")

        @property
        def data(self) -> Any:
            raise KeyError("data")

    for protocol, expected in ((None, "upstream.unavailable"), ("mcp", "tool.execution_failed")):
        err = valid(from_jsonrpc(Broken(), protocol))
        assert err.code == expected
        assert err.upstream.get("message") == "tool crashed"
        assert "code" not in err.upstream
        assert err.detail == f"{protocol or 'jsonrpc'}: JSON-RPC error (no code): tool crashed"
