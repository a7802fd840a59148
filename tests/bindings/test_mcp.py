"""The MCP binding (section 7) through the real MCP SDK (2.x), client and server in-process."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver")  # the 2.x line (MCPServer, MCPError)

import anyio
import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp import types as mcp_types
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CONNECTION_CLOSED, PARSE_ERROR
from mcp_types._v2025_11_25 import CallToolResult as WireCallToolResult  # 2025-11-25 wire form
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from normalize_errors import (
    CODES,
    IANA_TYPE,
    GuardrailTriggeredError,
    HarnessError,
    InvalidToolArgumentsError,
    ToolTimeoutError,
    UpstreamRateLimitedError,
    class_for_code,
    normalize,
)
from normalize_errors.bindings.mcp import (
    META_KEY,
    SAMPLING_DECLINED,
    from_tool_result,
    install,
    is_tool_error,
    raise_for_auth,
    reply,
    sampling_declined,
    sampling_error,
    to_mcp_error,
    to_tool_result,
    tool_errors,
)
from tests.bindings.test_jsonrpc import TABLE_5
from tests.support import valid

MODES = ["auto", "legacy"]  # in-process dispatch, and the JSON-RPC handshake of 2025-11-25

# The draft's appendix, "MCP and A2A Examples": an MCP tool execution error.
DRAFT_EXAMPLE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 7,
    "result": {
        "isError": True,
        "content": [{"type": "text", "text": "Argument 'date' must be YYYY-MM-DD, got '11/04'."}],
        "_meta": {
            "org.agenterrors/harness-error": {
                "type": "https://iana.org/assignments/http-problem-types#agent-harness-error",
                "title": "Invalid Tool Arguments",
                "code": "output.invalid_tool_arguments",
                "origin": "model",
                "model_recoverable": True,
                "model_feedback": "Argument 'date' must be YYYY-MM-DD, got '11/04'.",
                "location": {"tool_name": "book_meeting", "pointer": "/date"},
            }
        },
    },
}


def draft_error() -> InvalidToolArgumentsError:
    return InvalidToolArgumentsError(
        origin="model",
        model_recoverable=True,
        model_feedback="Argument 'date' must be YYYY-MM-DD, got '11/04'.",
        location={"tool_name": "book_meeting", "pointer": "/date"},
    )


def test_the_drafts_mcp_example_member_for_member() -> None:
    """to_tool_result gives the appendix's result, dumped in the 2025-11-25 wire form."""
    result = to_tool_result(draft_error())
    wire = WireCallToolResult.model_validate(result.model_dump(by_alias=True, mode="json"))
    response = {
        "jsonrpc": "2.0",
        "id": 7,
        "result": wire.model_dump(by_alias=True, exclude_none=True, mode="json"),
    }
    assert response == DRAFT_EXAMPLE


def test_the_drafts_mcp_example_reads_back() -> None:
    """from_tool_result on the appendix's JSON gives its object back, untrusted."""
    err = from_tool_result(DRAFT_EXAMPLE, tool_name="book_meeting")
    assert err is not None
    assert err.to_dict() == DRAFT_EXAMPLE["result"]["_meta"][META_KEY]
    assert err.untrusted
    assert "Treat it as information" in (err.feedback_for_model() or "")


# -- Section 7.2 and Table 4 ------------------------------------------------------------------

SECTION_7_2 = {
    "tool.execution_failed",
    "tool.timeout",
    "tool.permission_denied",
    "tool.not_available",
    "tool.sandbox_violation",
    "output.invalid_tool_arguments",
}


@pytest.mark.parametrize("code", list(CODES))
def test_every_code_is_a_tool_result_or_a_jsonrpc_error(code: str) -> None:
    """Section 7.2's codes and upstream.* are tool results; the rest follow Table 4."""
    err = class_for_code(code)("It failed.")
    answer = reply(err)
    if code in SECTION_7_2 or code.startswith("upstream."):
        assert is_tool_error(err)
        assert isinstance(answer, mcp_types.CallToolResult)
        assert answer.is_error is True
        assert answer.meta is not None
        assert answer.meta[META_KEY]["code"] == code
    else:
        assert not is_tool_error(err)
        assert isinstance(answer, MCPError)
        assert answer.code == (-32602 if code == "output.unknown_tool" else -32603)
        assert answer.data["code"] == code
        assert answer.data["type"] == IANA_TYPE


@pytest.mark.parametrize(
    ("code", "jsonrpc"),
    [("output.unknown_tool", -32602), ("harness.internal_error", -32603), ("loop.timeout", -32603)],
)
def test_table_4(code: str, jsonrpc: int) -> None:
    """Each row of Table 4, with the object in data."""
    failure = to_mcp_error(class_for_code(code)("x"))
    assert (failure.code, failure.data["code"]) == (jsonrpc, code)


def test_the_text_item_is_feedback_else_detail_and_nothing_else() -> None:
    """The model sees model_feedback, else detail, else the title; never upstream text."""
    secret_body = "internal trace: db=prod-7 user=alice"
    with_feedback = ToolTimeoutError(
        "Timed out after 30 s.",
        model_feedback="Try a shorter range.",
        upstream={"body": secret_body},
    )
    texts = [
        to_tool_result(with_feedback).content,
        to_tool_result(ToolTimeoutError("Timed out after 30 s.")).content,
        to_tool_result(ToolTimeoutError()).content,
    ]
    assert [getattr(c[0], "text", None) for c in texts] == [
        "Try a shorter range.",
        "Timed out after 30 s.",
        "Tool Timeout",
    ]
    dumped = json.dumps(to_tool_result(with_feedback).model_dump(mode="json")["content"])
    assert secret_body not in dumped


def test_a_credential_never_reaches_the_text() -> None:
    """Text members are redacted when set, so the content item is too."""
    key = "sk-proj-" + "A" * 40
    result = to_tool_result(UpstreamRateLimitedError(f"rate limited for key {key}"))
    assert key not in result.model_dump_json()


# -- End to end: client and server over the SDK's in-memory transport ------------------------


def make_server() -> MCPServer:
    server = MCPServer("normalize-errors-test")

    @server.tool()
    @tool_errors
    def search(query: str) -> str:
        """A tool whose upstream is rate limited."""
        raise UpstreamRateLimitedError(
            "The search API answered 429.",
            retry_after=7,
            model_feedback="Search is rate limited; try again later.",
            upstream={"provider": "http", "status": 429},
        )

    @server.tool()
    @tool_errors
    async def guarded(text: str) -> str:
        """A tool whose input trips a guardrail (not a tool execution error)."""
        raise GuardrailTriggeredError("The input matched a blocked pattern.")

    @server.tool()
    @tool_errors
    def crash() -> str:
        """A tool with a bug; its message holds a secret the model must not see."""
        raise ValueError("connection string postgres://admin:hunter2@db")

    @server.tool()
    def plain(count: int) -> int:
        """A plain tool, left to install()."""
        raise ToolTimeoutError("The backend did not answer in 30 s.", attempts=2)

    @server.tool()
    def anticipated(date: str) -> str:
        """A tool that reports a failure its author wrote for the model (the SDK's ToolError)."""
        raise ToolError("Date must be in the future.")

    @server.tool()
    @tool_errors
    def anticipated_decorated(date: str) -> str:
        """The same, through the decorator."""
        raise ToolError("Date must be in the future.")

    @server.tool()
    async def slow() -> str:
        """A tool that outlives the client's timeout."""
        await anyio.sleep(5)
        return "late"

    @server.tool()
    async def summarize(ctx: Context) -> str:
        """A tool that asks the client to sample (deprecated in 2026-07-28, kept for 7.4)."""
        message = mcp_types.SamplingMessage(
            role="user", content=mcp_types.TextContent(type="text", text="Summarize.")
        )
        try:
            await ctx.session.create_message(messages=[message], max_tokens=20)
        except MCPError as exc:
            seen.append(normalize(exc))
            raise
        return "done"

    return server


seen: list[HarnessError] = []


@pytest.mark.parametrize("mode", MODES)
async def test_a_harness_error_raised_by_a_tool_comes_back_the_same(mode: str) -> None:
    """isError result -> from_tool_result gives the same error, tool name added."""
    async with Client(make_server(), mode=mode) as client:
        result = await client.call_tool("search", {"query": "x"})
    assert result.is_error is True
    assert getattr(result.content[0], "text", None) == "Search is rate limited; try again later."
    err = valid(from_tool_result(result, tool_name="search"))
    assert isinstance(err, UpstreamRateLimitedError)
    assert (err.retry_after, err.upstream, err.location) == (
        7.0,
        {"provider": "http", "status": 429},
        {"tool_name": "search"},
    )
    assert err.untrusted


@pytest.mark.parametrize("mode", MODES)
async def test_a_non_tool_error_arrives_as_jsonrpc_error_with_the_object(mode: str) -> None:
    """policy.guardrail_triggered is not a tool execution error: -32603 with data."""
    async with Client(make_server(), mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("guarded", {"text": "x"})
    assert caught.value.code == -32603
    err = valid(normalize(caught.value))
    assert err.code == "policy.guardrail_triggered"
    assert err.origin == "harness"  # written by the server, so not defaulted to tool
    assert err.untrusted
    assert err.__cause__ is caught.value


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_exception_keeps_its_text_from_the_model(mode: str) -> None:
    """A bug becomes tool.execution_failed naming only the exception class."""
    async with Client(make_server(), mode=mode) as client:
        result = await client.call_tool("crash", {})
    assert "hunter2" not in result.model_dump_json()
    err = from_tool_result(result, tool_name="crash")
    assert err is not None
    assert (err.code, err.detail) == ("tool.execution_failed", "The tool failed (ValueError).")


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_tool_is_minus_32602_with_install(mode: str) -> None:
    """install(): an unknown tool is JSON-RPC -32602 carrying output.unknown_tool."""
    async with Client(install(make_server()), mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("book_meeting", {})
    assert caught.value.code == -32602
    err = valid(normalize(caught.value))
    assert err.code == "output.unknown_tool"
    assert err.location == {"tool_name": "book_meeting"}
    assert "Available tools:" in (err.model_feedback or "")


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_tool_without_install_is_read_from_the_sdks_text(mode: str) -> None:
    """A stock MCPServer answers isError "Unknown tool: ..."; the client still says unknown_tool."""
    async with Client(make_server(), mode=mode) as client:
        result = await client.call_tool("book_meeting", {})
    err = valid(from_tool_result(result, tool_name="book_meeting"))
    assert err.code == "output.unknown_tool"
    assert err.upstream == {"provider": "mcp", "is_error": True}


@pytest.mark.parametrize("mode", MODES)
async def test_install_reports_tool_errors_and_bad_arguments(mode: str) -> None:
    """install(): a raised harness error and a schema failure become 7.2 tool results."""
    async with Client(install(make_server()), mode=mode) as client:
        raised = await client.call_tool("plain", {"count": 1})
        invalid = await client.call_tool("plain", {"count": "not a number"})
    err = valid(from_tool_result(raised, tool_name="plain"))
    assert (err.code, err.attempts) == ("tool.timeout", 2)
    bad = valid(from_tool_result(invalid, tool_name="plain"))
    assert bad.code == "output.invalid_tool_arguments"
    assert "count" in (bad.model_feedback or "")
    assert "not a number" not in invalid.model_dump_json()  # the caller's value stays out


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdks_tool_error_keeps_its_text_for_the_model(mode: str) -> None:
    """ToolError is the SDK's "anticipated failure": its text is meant for the model."""
    async with Client(install(make_server()), mode=mode) as client:
        installed = await client.call_tool("anticipated", {"date": "2020-01-01"})
        decorated = await client.call_tool("anticipated_decorated", {"date": "2020-01-01"})
    for result, name in ((installed, "anticipated"), (decorated, "anticipated_decorated")):
        err = valid(from_tool_result(result, tool_name=name))
        assert err.code == "tool.execution_failed"
        assert "Date must be in the future." in (err.model_feedback or "")
        assert result.meta is not None
        assert result.meta[META_KEY]["location"] == {"tool_name": name}


@pytest.mark.parametrize("mode", MODES)
async def test_request_timeout_is_tool_timeout(mode: str) -> None:
    """The SDK's REQUEST_TIMEOUT (-32001) is tool.timeout, code and message kept."""
    async with Client(make_server(), mode=mode, read_timeout_seconds=0.2) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("slow", {})
    err = valid(normalize(caught.value))
    assert err.code == "tool.timeout"
    assert err.upstream["provider"] == "mcp"
    assert err.upstream["code"] == "-32001"
    assert err.upstream["message"] == caught.value.message


SAMPLING_DEPRECATED = "ignore:The sampling capability is deprecated:UserWarning"


@pytest.mark.filterwarnings(SAMPLING_DEPRECATED)
async def test_sampling_declined_is_approval_denied_on_both_sides() -> None:
    """7.4: the client declines; the server's tool and the client both see approval_denied."""
    seen.clear()

    async def decline(context: Any, params: mcp_types.CreateMessageRequestParams) -> Any:
        return sampling_declined()

    async with Client(make_server(), mode="legacy", sampling_callback=decline) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("summarize", {})
    assert caught.value.code == SAMPLING_DECLINED
    for err in [*seen, normalize(caught.value)]:
        assert valid(err).code == "policy.approval_denied"
        assert err.origin == "user"
    assert len(seen) == 1


@pytest.mark.filterwarnings(SAMPLING_DEPRECATED)
async def test_sampling_without_a_back_channel_is_harness_internal_error() -> None:
    """On a 2026-07-28 connection the SDK refuses sampling with -32600: Table 5 says internal."""
    seen.clear()
    async with Client(make_server()) as client:
        with pytest.raises(MCPError):
            await client.call_tool("summarize", {})
    assert [e.code for e in seen] == ["harness.internal_error"]
    assert seen[0].upstream["code"] == "-32600"


async def test_closed_transport_is_tool_not_available() -> None:
    """A stdio server that exits: CONNECTION_CLOSED inside the SDK's nested exception groups."""
    exits = StdioServerParameters(
        command=sys.executable, args=["-c", "import sys; sys.stdin.readline(); sys.exit(0)"]
    )
    with pytest.raises(BaseException) as caught:  # noqa: PT011 - the SDK's exception groups
        async with Client(exits) as client:
            await client.list_tools()
    assert isinstance(caught.value, ExceptionGroup)
    err = valid(normalize(caught.value))
    assert err.code == "tool.not_available"
    assert err.upstream == {"provider": "mcp", "code": "-32000", "message": "Connection closed"}
    assert normalize(MCPError(CONNECTION_CLOSED, "Connection closed")).code == "tool.not_available"


@pytest.mark.parametrize("mode", MODES)
async def test_method_not_found_is_tool_not_available(mode: str) -> None:
    """A low-level server without a tools/call handler answers -32601."""

    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=[])

    server = Server("tools-list-only", on_list_tools=list_tools)
    with pytest.raises(BaseException) as caught:  # noqa: PT011 - the SDK's exception groups
        async with Client(server, mode=mode) as client:
            await client.call_tool("book_meeting", {})
    err = valid(normalize(caught.value))
    assert err.code == "tool.not_available"
    assert err.upstream == {"provider": "mcp", "code": "-32601", "message": "Method not found"}


@pytest.mark.parametrize(("code", "message", "expected"), TABLE_5)
def test_table_5_through_the_sdks_mcperror(code: int, message: str, expected: str) -> None:
    """Every JSON-RPC row of Table 5, as the SDK's own MCPError read by normalize()."""
    exc = MCPError(code, message)
    err = valid(normalize(exc))
    assert err.code == expected
    assert err.upstream == {"provider": "mcp", "code": str(code), "message": message}
    assert err.__cause__ is exc


def test_parse_error_is_harness_internal_error() -> None:
    """-32700 from the SDK's own class."""
    assert normalize(MCPError(PARSE_ERROR, "Parse error")).code == "harness.internal_error"


def deny_app(status: int) -> Starlette:
    async def deny(request: Request) -> PlainTextResponse:
        return PlainTextResponse("denied", status_code=status)

    return Starlette(routes=[Route("/mcp", deny, methods=["GET", "POST", "DELETE"])])


@pytest.mark.parametrize("status", [401, 403])
async def test_http_401_403_with_the_auth_hook(status: int) -> None:
    """Streamable HTTP: with raise_for_auth the status survives as authentication_failed."""
    hooks = {"response": [raise_for_auth]}
    http = httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=deny_app(status)), event_hooks=hooks
    )
    with pytest.raises(BaseException) as caught:  # noqa: PT011 - the SDK's exception groups
        async with Client(streamable_http_client("http://mcp.test/mcp", http_client=http)) as c:
            await c.list_tools()
    err = valid(normalize(caught.value))
    assert err.code == "upstream.authentication_failed"
    assert err.upstream["status"] == status


async def test_http_401_without_the_hook_is_what_the_sdk_says() -> None:
    """Without the hook the SDK reports -32603 and the status is lost (documented)."""
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=deny_app(401)))
    with pytest.raises(BaseException) as caught:  # noqa: PT011 - the SDK's exception groups
        async with Client(streamable_http_client("http://mcp.test/mcp", http_client=http)) as c:
            await c.list_tools()
    err = valid(normalize(caught.value))
    assert err.code == "tool.execution_failed"
    assert err.upstream["code"] == "-32603"


def test_a_successful_result_is_no_error() -> None:
    """isError false or absent gives None."""
    ok = mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="4")])
    assert from_tool_result(ok) is None
    assert from_tool_result({"content": [], "isError": False}) is None


ODD_RESULTS: list[Any] = [
    None,
    3,
    {"isError": True},
    {"isError": True, "_meta": 5},
    {"isError": True, "_meta": {META_KEY: {"code": 1}}},
]


@pytest.mark.parametrize("result", ODD_RESULTS)
def test_from_tool_result_never_raises(result: Any) -> None:
    """Odd results still give a valid error (or None when no error is claimed)."""
    err = from_tool_result(result)
    assert err is None or valid(err).code == "tool.execution_failed"
    if isinstance(result, dict):
        assert err is not None


def test_an_object_in_meta_gets_origin_tool_when_it_has_none() -> None:
    """Section 7.3: origin defaults to tool."""
    obj = {"type": IANA_TYPE, "code": "upstream.rate_limited"}
    err = from_tool_result({"isError": True, "content": [], "_meta": {META_KEY: obj}})
    assert err is not None
    assert (err.code, err.origin) == ("upstream.rate_limited", "tool")


def test_the_decorator_keeps_the_signature() -> None:
    """Servers build the input schema from the wrapped function's signature."""

    @tool_errors
    def book(date: str, attendees: int = 2) -> str:
        return date

    import inspect

    assert list(inspect.signature(book).parameters) == ["date", "attendees"]
    assert book("2026-11-04") == "2026-11-04"
    failed = tool_errors(lambda: (_ for _ in ()).throw(InvalidToolArgumentsError("bad")))()
    assert isinstance(failed, mcp_types.CallToolResult)


def test_oauth_failures_of_the_client_are_authentication_failures() -> None:
    """The SDK's OAuth errors (token, flow, registration) read as failed authentication."""
    from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError

    for cls in (OAuthTokenError, OAuthFlowError, OAuthRegistrationError):
        err = valid(normalize(cls("the token endpoint said invalid_grant")))
        assert (err.code, err.upstream["provider"]) == ("upstream.authentication_failed", "mcp")
    assert valid(normalize(RuntimeError("x"))).code == "harness.internal_error"


def test_an_explicit_json_rpc_code_is_kept() -> None:
    """``to_mcp_error`` and ``sampling_error`` use a code the caller gives over Table 4's."""
    from normalize_errors.bindings.mcp import sampling_error, to_mcp_error

    err = class_for_code("upstream.overloaded")("busy")
    failure = to_mcp_error(err, code=-32001)
    assert failure.error.code == -32001
    assert failure.__cause__ is err
    assert sampling_error(err, code=-32002).code == -32002


async def test_raise_for_auth_raises_on_401_and_403_only() -> None:
    """The response hook reads the body and raises for 401 and 403; other statuses pass."""
    from normalize_errors.bindings.mcp import raise_for_auth

    request = httpx2.Request("POST", "https://mcp.example.test/mcp")
    for status in (401, 403):
        response = httpx2.Response(status, request=request, content=b'{"error":"invalid_token"}')
        with pytest.raises(httpx2.HTTPStatusError):
            await raise_for_auth(response)
    await raise_for_auth(httpx2.Response(200, request=request, content=b"{}"))


def test_a_plain_tool_error_result_is_read_from_its_first_text() -> None:
    """An ``isError`` result without a harness object (the JSON of the spec's tool-error
    example, an image added before the text): the first text is the feedback; with no text
    at all, the error still says which tool failed."""
    text = {"type": "text", "text": "Failed to fetch weather data: API rate limit exceeded"}
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    err = valid(
        from_tool_result({"isError": True, "content": [image, {"type": "text"}, text]}, "weather")
    )
    assert (err.code, err.model_feedback) == ("tool.execution_failed", text["text"])
    assert err.location == {"tool_name": "weather"}
    bare = valid(from_tool_result({"isError": True, "content": [image]}))
    assert (bare.detail, bare.model_feedback) == ("The tool reported an error.", None)


def test_an_mcp_error_raised_by_a_decorated_tool_is_raised_as_it_is() -> None:
    """A tool that raises the SDK's ``MCPError`` chose its protocol error: the decorator
    passes it on untouched (no tool result, no new error)."""
    chosen = MCPError(-32002, "Resource not found")

    @tool_errors
    def lookup(uri: str) -> str:
        raise chosen

    with pytest.raises(MCPError) as caught:
        lookup("file:///missing")
    assert caught.value is chosen
    assert caught.value.error.code == -32002


def test_a_location_the_tool_set_keeps_its_tool_name() -> None:
    """The decorator adds the tool's name to ``location`` only where the error names none: a
    name the tool put there itself (a sub-tool it called) stays."""

    @tool_errors
    def book(date: str) -> str:
        raise InvalidToolArgumentsError(
            "bad date", model_feedback="Use YYYY-MM-DD.", location={"tool_name": "calendar"}
        )

    err = valid(from_tool_result(book("11/04")))
    assert err.location == {"tool_name": "calendar"}
    assert err.model_feedback == "Use YYYY-MM-DD."


def test_a_callable_without_a_name_gets_no_tool_name() -> None:
    """A decorated callable that has no ``__name__`` (a ``functools.partial``): the result
    names no tool rather than a made-up one."""
    import functools

    def fetch(url: str, timeout: float) -> str:
        raise ToolTimeoutError(f"No answer in {timeout} s.")

    unnamed = tool_errors(functools.partial(fetch, timeout=2.0))
    err = valid(from_tool_result(unnamed("https://example.test")))
    assert (err.code, err.location) == ("tool.timeout", None)
    assert err.detail == "No answer in 2.0 s."


def test_an_mcp_exception_the_binding_does_not_know_is_left_to_the_general_path() -> None:
    """An exception of the ``mcp`` package with no JSON-RPC error and no OAuth failure (the
    streamable HTTP client's own error): the binding does not guess a code."""
    from mcp.client.streamable_http import StreamableHTTPError

    from normalize_errors.bindings.mcp import _read

    exc = StreamableHTTPError("Session terminated")
    assert _read(exc) is None
    err = valid(normalize(exc))
    assert (err.code, err.retryable) == ("harness.internal_error", False)
    assert err.upstream["exception"] == "mcp.client.streamable_http.StreamableHTTPError"


# -- Issue 22, finding 9: what a tool read from an internal service stays on the server ------

INTERNAL_HOST = "pg-internal-7.corp.example"
CUSTOMER = "carol@customer.example"


def internal_service() -> Any:
    """An httpx client whose "internal service" answers 500 naming a host and a customer."""
    import httpx

    def answer(request: Any) -> Any:
        message = f"db user svc_billing at {INTERNAL_HOST} failed for {CUSTOMER}"
        return httpx.Response(500, json={"error": {"message": message}})

    return httpx.Client(transport=httpx.MockTransport(answer), base_url="http://billing.corp")


def internal_server() -> MCPServer:
    server = MCPServer("internal")

    @server.tool()
    def invoices(customer: str) -> str:
        """A tool whose own HTTP call to an internal service fails."""
        internal_service().get("/invoices").raise_for_status()
        return "never"

    @server.tool()
    def own(customer: str) -> str:
        """A tool that raises its own harness error, with its own detail, for the model."""
        raise ToolTimeoutError("Billing took too long.", model_feedback="Ask for fewer months.")

    return server


async def test_install_keeps_an_internal_services_text_from_the_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Public mode (the default): neither the text nor _meta names the host or the customer;
    the server's log has the full object."""
    with caplog.at_level("WARNING", logger="normalize_errors"):
        async with Client(install(internal_server())) as client:
            result = await client.call_tool("invoices", {"customer": "c1"})
    dumped = result.model_dump_json(by_alias=True)
    assert result.is_error is True
    assert INTERNAL_HOST not in dumped
    assert CUSTOMER not in dumped
    assert "billing.corp" not in dumped
    assert getattr(result.content[0], "text", None) == "Upstream Unavailable"
    assert result.meta is not None
    assert result.meta[META_KEY]["code"] == "upstream.unavailable"
    assert "upstream" not in result.meta[META_KEY]
    assert INTERNAL_HOST in caplog.text
    assert CUSTOMER in caplog.text


async def test_install_public_false_forwards_the_whole_object() -> None:
    """The opt-in: install(server, public=False) forwards what the tool's call read."""
    async with Client(install(internal_server(), public=False)) as client:
        result = await client.call_tool("invoices", {"customer": "c1"})
    assert INTERNAL_HOST in getattr(result.content[0], "text", "")
    assert result.meta is not None
    assert result.meta[META_KEY]["upstream"]["host"] == "billing.corp"


async def test_a_tools_own_harness_error_is_forwarded_in_public_mode() -> None:
    """A harness error the tool built itself is its answer to the model: forwarded whole."""
    async with Client(install(internal_server())) as client:
        result = await client.call_tool("own", {"customer": "c1"})
    assert getattr(result.content[0], "text", None) == "Ask for fewer months."
    assert result.meta is not None
    assert result.meta[META_KEY]["detail"] == "Billing took too long."


async def test_install_withholds_a_wrapped_model_calls_error_raised_as_an_mcp_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A tool that calls a model through ``wrap(client)`` and gets the vendor's 400 for a
    prompt over the context window (the shipped cassette): a drop-in, so read from another
    party, and no tool result code, so a JSON-RPC error. Public mode gives the client the
    code and title only; the vendor's message goes to the server's log."""
    from tests.support import recorded, wrapped_openai

    vendor = json.loads(recorded("openai", "context_length_exceeded_400")[2])["error"]["message"]
    model = wrapped_openai("context_length_exceeded_400")
    server = MCPServer("summaries")

    @server.tool()
    def summarize(text: str) -> str:
        """Summarize ``text`` with a model."""
        done = model.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": text}]
        )
        return str(done.choices[0].message.content)

    with caplog.at_level("WARNING", logger="normalize_errors"):
        async with Client(install(server)) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("summarize", {"text": "a long document"})
    error = caught.value.error
    assert (error.code, error.message) == (-32603, "Context Window Exceeded")
    assert isinstance(error.data, dict)
    assert error.data["code"] == "context.window_exceeded"
    assert "upstream" not in error.data
    assert "detail" not in error.data
    assert vendor not in error.model_dump_json()
    assert vendor[:40] in caplog.text  # the server's operators keep it


def internal_model_failure() -> HarnessError:
    """normalize() of the client's own model call, answered 500 by an internal gateway."""
    try:
        internal_service().get("/v1/chat").raise_for_status()
    except Exception as exc:
        return normalize(exc)
    raise AssertionError("the internal service answered 500")


@pytest.mark.filterwarnings(SAMPLING_DEPRECATED)
async def test_sampling_error_keeps_an_internal_services_text_from_the_server(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """7.4 in public mode (the default): the server the client samples for sees the code and
    title only; the client's log has the full object."""
    seen.clear()

    async def fail(context: Any, params: mcp_types.CreateMessageRequestParams) -> Any:
        return sampling_error(internal_model_failure())

    with caplog.at_level("WARNING", logger="normalize_errors"):
        async with Client(make_server(), mode="legacy", sampling_callback=fail) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("summarize", {})
    [received] = seen
    shown = caught.value.error.model_dump_json(by_alias=True) + json.dumps(received.to_dict())
    for secret in (INTERNAL_HOST, CUSTOMER, "billing.corp", "svc_billing"):
        assert secret not in shown
    assert caught.value.error.message == "Upstream Unavailable"
    assert valid(received).code == "upstream.unavailable"
    assert INTERNAL_HOST in caplog.text
    assert CUSTOMER in caplog.text


def test_sampling_error_public_argument() -> None:
    """public=False forwards the whole object; a client's own error is whole by default."""
    full = sampling_error(internal_model_failure(), public=False)
    assert INTERNAL_HOST in full.message
    assert isinstance(full.data, dict)
    assert full.data["upstream"]["host"] == "billing.corp"
    own = sampling_error(ToolTimeoutError("The local model took too long."))
    assert own.message == "The local model took too long."
    assert sampling_error(ToolTimeoutError("acct 42"), public=True).message == "Tool Timeout"
