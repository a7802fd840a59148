"""wrap() on every kind of client the library names: Anthropic (and its Vertex client) with
its stream helper, Google GenAI sync and async streams, Azure OpenAI, and httpx/httpx2.

Each client is real, answering from memory with the response a shipped cassette recorded.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

import anthropic
import openai
import pytest
from google import genai

from normalize_errors import (
    HarnessError,
    InvalidToolArgumentsError,
    ModelRefusalError,
    OutputTruncatedError,
    UpstreamInvalidResponseError,
    UpstreamOverloadedError,
    UpstreamRateLimitedError,
    UpstreamUnavailableError,
    wrap,
)
from normalize_errors._wrapping._replay_calls import http_library

from .support import is_instance, recorded, stream_of

MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]


def serving(library: Any, provider: str, name: str) -> Any:
    """A mock transport of ``library`` answering every request with a cassette's response."""
    status, headers, body = recorded(provider, name)

    def handler(request: Any) -> Any:
        return library.Response(status, headers=headers, content=body)

    return library.MockTransport(handler)


def anthropic_client(name: str, cls: Any = anthropic.Anthropic, **options: Any) -> Any:
    """A real Anthropic client (or Vertex client) answering with cassette ``name``."""
    http = http_library("anthropic")
    return cls(
        http_client=http.Client(transport=serving(http, "anthropic", name)),
        max_retries=0,
        **options,
    )


def test_anthropic_stream_helper_raises_the_refusal_at_the_end() -> None:
    """messages.stream(): events flow, then ModelRefusalError, which says how many events
    reached the caller."""
    client = wrap(anthropic_client("stream_refusal", api_key="sk-ant-test"))
    assert isinstance(client, anthropic.Anthropic)
    events: list[Any] = []

    def consume() -> None:
        with client.messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream:
            events.extend(stream)

    with pytest.raises(ModelRefusalError) as info:
        consume()
    assert events
    assert stream_of(info.value)["chunks"] == len(events)
    assert stream_of(info.value)["terminal"] is True
    with (
        pytest.raises(ModelRefusalError),
        client.messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream,
    ):
        stream.get_final_message()


def test_anthropic_text_stream_and_mid_stream_errors() -> None:
    """text_stream ends in the typed error too; an error event mid-stream raises as it comes."""
    client = wrap(anthropic_client("stream_refusal", api_key="sk-ant-test"))
    with (
        pytest.raises(ModelRefusalError),
        client.messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream,
    ):
        "".join(stream.text_stream)
    broken = wrap(anthropic_client("stream_error_overloaded", api_key="sk-ant-test"))
    with pytest.raises(UpstreamOverloadedError) as info:
        for _ in broken.messages.create(model="m", max_tokens=64, messages=MESSAGES, stream=True):
            pass
    assert is_instance(info.value, anthropic.APIStatusError)
    assert stream_of(info.value)["chunks"] > 0  # it says what reached the caller first


def test_anthropic_vertex_client() -> None:
    """The Vertex client wraps the same way; its 529 becomes a typed drop-in error."""
    vertex = anthropic_client(
        "overloaded_529",
        anthropic.AnthropicVertex,
        region="us-east5",
        project_id="p",
        access_token="ya29-not-a-real-token",
    )
    client = wrap(vertex)
    assert isinstance(client, anthropic.AnthropicVertex)
    with pytest.raises(UpstreamOverloadedError) as info:
        client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=MESSAGES)
    assert is_instance(info.value, anthropic.APIStatusError)


def genai_client(name: str) -> Any:
    """A real google-genai client whose sync and async transports answer from memory.

    Every google-genai line accepts httpx clients (1.x accepts nothing else).
    """
    import httpx

    options: Any = {
        "httpx_client": httpx.Client(transport=serving(httpx, "google", name)),
        "httpx_async_client": httpx.AsyncClient(transport=serving(httpx, "google", name)),
        "api_version": "v1beta",
    }
    return genai.Client(api_key="test-key", http_options=options)


def test_genai_streams_sync_and_async() -> None:
    """generate_content_stream: chunks flow, then the finish reason's typed error."""
    client = wrap(genai_client("stream_malformed_function_call_final_chunk"))
    assert isinstance(client, genai.Client)
    received: list[Any] = []

    def consume() -> None:
        stream = client.models.generate_content_stream(model="gemini-2.5-flash", contents="Hi")
        received.extend(stream)

    with pytest.raises(InvalidToolArgumentsError) as info:
        consume()
    assert stream_of(info.value)["chunks"] == len(received)

    async def main() -> None:
        stream = await client.aio.models.generate_content_stream(
            model="gemini-2.5-flash", contents="Hi"
        )
        async for _ in stream:
            pass

    with pytest.raises(InvalidToolArgumentsError):
        asyncio.run(main())


def test_genai_errors_are_drop_ins() -> None:
    """A Gemini 503 is UpstreamOverloadedError and google.genai.errors.ServerError at once."""
    from google.genai import errors

    client = wrap(genai_client("overloaded_503"))
    with pytest.raises(UpstreamOverloadedError) as info:
        client.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    assert is_instance(info.value, errors.ServerError)


def test_azure_openai_client() -> None:
    """AzureOpenAI wraps and keeps its type; Azure's 429 gives its wait from the message."""
    http = http_library("openai")
    azure = openai.AzureOpenAI(
        api_key="not-a-key",
        api_version="2024-06-01",
        azure_endpoint="https://example-resource.openai.azure.com",
        max_retries=0,
        http_client=http.Client(transport=serving(http, "http", "azure_token_rate_limit_429")),
    )
    client = wrap(azure)
    assert isinstance(client, openai.AzureOpenAI)
    with pytest.raises(UpstreamRateLimitedError) as info:
        client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert is_instance(info.value, openai.RateLimitError)
    assert info.value.retry_after is not None


@pytest.mark.parametrize("name", ["httpx", "httpx2"])
def test_httpx_clients(name: str) -> None:
    """A wrapped httpx/httpx2 client: raise_for_status() and transport errors are typed."""
    library = importlib.import_module(name)
    client = wrap(library.Client(transport=serving(library, "http", "groq_rate_limit_429")))
    assert isinstance(client, library.Client)
    response = client.post("https://api.groq.com/openai/v1/chat/completions", json={})
    assert isinstance(response, library.Response)
    assert response.status_code == 429
    with pytest.raises(UpstreamRateLimitedError) as info:
        response.raise_for_status()
    assert isinstance(info.value, library.HTTPStatusError)

    def refuse(request: Any) -> Any:
        raise library.ConnectError("connection refused", request=request)

    down = wrap(library.Client(transport=library.MockTransport(refuse)))
    with pytest.raises(UpstreamUnavailableError) as failed:
        down.get("https://example.invalid/")
    assert isinstance(failed.value, library.ConnectError)
    assert isinstance(failed.value, HarnessError)


def test_openai_responses_stream_helper() -> None:
    """responses.stream(): the recorded incomplete stream ends in OutputTruncatedError."""
    http = http_library("openai")
    client = wrap(
        openai.OpenAI(
            api_key="not-a-key",
            max_retries=0,
            http_client=http.Client(
                transport=serving(http, "openai", "responses_stream_incomplete")
            ),
        )
    )
    events: list[Any] = []

    def consume() -> None:
        with client.responses.stream(model="gpt-4o", input="List the fifty states") as stream:
            events.extend(stream)

    with pytest.raises(OutputTruncatedError) as info:
        consume()
    assert events
    assert info.value.upstream["stop_reason"] == "max_output_tokens"


def test_anthropic_stream_that_ends_before_its_first_event_is_an_invalid_response() -> None:
    """An empty event stream has no message snapshot yet (the SDK's property fails): the raw
    stream ends with no events and no error; the wrapped one ends with
    upstream.invalid_response, not with the failing property's error."""
    http = http_library("anthropic")

    def empty(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=b"")

    raw = anthropic.Anthropic(
        api_key="sk-ant-test",
        max_retries=0,
        http_client=http.Client(transport=http.MockTransport(empty)),
    )
    with raw.messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream:
        assert list(stream) == []
    with (
        pytest.raises(UpstreamInvalidResponseError) as info,
        wrap(raw).messages.stream(model="m", max_tokens=64, messages=MESSAGES) as stream,
    ):
        list(stream)
    assert stream_of(info.value)["chunks"] == 0
    assert info.value.upstream["provider"] == "anthropic"
