"""What the OpenAI Agents SDK's MCP servers pass through, against a real MCPServer.

``agents.mcp.MCPServerStreamableHttp`` talks to the MCP SDK's Streamable HTTP app in-process
(``httpx2.ASGITransport``). The model-visible tool output is the text item; ``_meta`` and
``isError`` reach only a ``custom_data_extractor``, where ``from_tool_result`` reads the
object; a JSON-RPC error is raised as the MCP SDK's ``MCPError``.
"""

from __future__ import annotations

import json
from typing import Any, cast

import pytest

pytest.importorskip("mcp.server.mcpserver")
pytest.importorskip("agents.mcp")

import httpx2
from agents import RunContextWrapper
from agents.mcp import MCPServerStreamableHttp, MCPUtil
from mcp import MCPError
from mcp.server.mcpserver import MCPServer

from normalize_errors import (
    GuardrailTriggeredError,
    HarnessError,
    UpstreamRateLimitedError,
    normalize,
)
from normalize_errors.bindings.mcp import from_tool_result, tool_errors

FEEDBACK = "Search is rate limited; try again later."


def make_server() -> MCPServer:
    server = MCPServer("agents-test")

    @server.tool()
    @tool_errors
    def search(query: str) -> str:
        """A tool whose upstream is rate limited."""
        raise UpstreamRateLimitedError(
            "HTTP 429 from search-backend-7", retry_after=5, model_feedback=FEEDBACK
        )

    @server.tool()
    @tool_errors
    def guarded(text: str) -> str:
        """A tool whose input trips a guardrail (a JSON-RPC error, not a tool result)."""
        raise GuardrailTriggeredError("The input matched a blocked pattern.")

    return server


async def call(tool_name: str, arguments: dict[str, Any], seen: list[HarnessError | None]) -> Any:
    """Invoke one tool the way the Agents SDK does for a model's tool call."""
    app = make_server().streamable_http_app()

    def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
        transport = httpx2.ASGITransport(app=app)
        return httpx2.AsyncClient(transport=transport, headers=headers, timeout=timeout, auth=auth)

    def extractor(ctx: Any) -> None:
        meta = {"isError": ctx.is_error, "_meta": ctx.result_meta}
        seen.append(from_tool_result(meta, tool_name=ctx.tool_name))

    async with app.router.lifespan_context(app):
        # The app only accepts its own host (DNS rebinding protection): 127.0.0.1 with a port.
        params = {"url": "http://127.0.0.1:8000/mcp", "httpx_client_factory": factory}
        server: Any = MCPServerStreamableHttp(cast("Any", params), custom_data_extractor=extractor)
        await server.connect()
        try:
            tools = {tool.name: tool for tool in await server.list_tools()}
            return await MCPUtil.invoke_mcp_tool(
                server, tools[tool_name], RunContextWrapper(context=None), json.dumps(arguments)
            )
        finally:
            await server.cleanup()


async def test_the_model_sees_the_text_and_the_extractor_gets_the_object() -> None:
    """Tool output is the text item; from_tool_result in the extractor reads _meta."""
    seen: list[HarnessError | None] = []
    output = await call("search", {"query": "x"}, seen)
    assert output == {"type": "text", "text": FEEDBACK}
    [err] = seen
    assert err is not None
    assert (err.code, err.retry_after) == ("upstream.rate_limited", 5.0)
    assert err.location == {"tool_name": "search"}


async def test_a_jsonrpc_error_is_raised_as_mcperror() -> None:
    """The Agents SDK re-raises MCPError (here inside the session's exception groups)."""
    with pytest.raises(BaseException) as caught:  # noqa: PT011 - the SDK's exception groups
        await call("guarded", {"text": "x"}, [])
    assert isinstance(caught.value, MCPError) or caught.group_contains(MCPError, depth=None)
    err = normalize(caught.value)
    assert err.code == "policy.guardrail_triggered"
    assert err.detail == "The input matched a blocked pattern."
