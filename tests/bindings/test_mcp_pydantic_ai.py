"""What pydantic-ai's MCP toolset passes through, against a real MCPServer in-process.

The toolset (pydantic-ai-slim[mcp], on fastmcp's client) gives the model the first text item of
an ``isError`` result and drops ``_meta``; a JSON-RPC error is retried as text, or raised as
the MCP SDK's ``MCPError`` with ``tool_error_behavior="error"``, which ``normalize`` reads.
"""

from __future__ import annotations

import pytest

pytest.importorskip("mcp.server.mcpserver")
pytest.importorskip("pydantic_ai.mcp")

from mcp import MCPError
from mcp.server.mcpserver import MCPServer
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from normalize_errors import GuardrailTriggeredError, UpstreamRateLimitedError, normalize
from normalize_errors.bindings.mcp import tool_errors

FEEDBACK = "Search is rate limited; try again later."


def make_server() -> MCPServer:
    server = MCPServer("pydantic-ai-test")

    @server.tool()
    @tool_errors
    def search(query: str) -> str:
        """A tool whose upstream is rate limited."""
        raise UpstreamRateLimitedError("HTTP 429 from search-backend-7", model_feedback=FEEDBACK)

    @server.tool()
    @tool_errors
    def guarded(text: str) -> str:
        """A tool whose input trips a guardrail (a JSON-RPC error, not a tool result)."""
        raise GuardrailTriggeredError("The input matched a blocked pattern.")

    return server


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Call the tool the prompt names once; then repeat what the tool's failure said."""
    seen = [
        str(part.content)
        for part in messages[-1].parts
        if isinstance(part, (ToolReturnPart, RetryPromptPart))
    ]
    if seen:
        return ModelResponse(parts=[TextPart("saw: " + " | ".join(seen))])
    prompt = str(getattr(messages[0].parts[-1], "content", ""))
    args = {"query": "x"} if prompt == "search" else {"text": "x"}
    return ModelResponse(parts=[ToolCallPart(prompt, args)])


async def test_the_model_sees_the_feedback_and_nothing_else() -> None:
    """An isError result reaches the model as its text item: model_feedback, no _meta."""
    agent = Agent(FunctionModel(model), toolsets=[MCPToolset(make_server())])
    result = await agent.run("search")
    assert result.output == f"saw: {FEEDBACK}"
    assert "search-backend-7" not in result.output  # detail and _meta stay with the harness


async def test_a_jsonrpc_error_is_raised_as_mcperror_with_the_object() -> None:
    """tool_error_behavior="error": the SDK's MCPError propagates; normalize reads its data."""
    toolset = MCPToolset(make_server(), tool_error_behavior="error")
    agent = Agent(FunctionModel(model), toolsets=[toolset])
    with pytest.raises(MCPError) as caught:
        await agent.run("guarded")
    err = normalize(caught.value)
    assert err.code == "policy.guardrail_triggered"
    assert err.detail == "The input matched a blocked pattern."
    assert err.upstream == {}  # the object is used as is (section 7.3)
