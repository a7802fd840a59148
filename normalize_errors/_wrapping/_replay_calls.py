"""The SDK calls a cassette scenario makes, through the real clients of each vendor.

Used to record cassettes (against a local server or the live API) and to replay them.
Each call builds a real client (``openai.OpenAI``, ``anthropic.Anthropic``,
``google.genai.Client``, ``httpx.Client``), makes the scenario's call with SDK retries
turned off, and returns what the caller gets: the result, or for a stream the list of
chunks received. A failure propagates as the SDK raised it.

``prepare`` (optional) receives each client before the call, so callers can wrap it;
``client`` holds constructor options (``max_retries`` for openai and anthropic,
``http_options`` for google-genai) for scenarios where the SDK's own retries matter.

``sdk`` names another vendor's SDK that speaks the provider's API: the native SDKs of
OpenAI-compatible vendors (``SDKS``, from the registry's ``Provider.sdks``) make an
``"openai"`` scenario's chat call through their own client (``groq.Groq``,
``mistralai.Mistral``, ...).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Final

from ..providers import PROVIDERS, Sdk

__all__ = ["BASE_URLS", "CALLS", "SDKS", "acall", "call", "http_library"]

BASE_URLS: Final = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "google": "https://generativelanguage.googleapis.com",
    "cohere": "https://api.cohere.com",
}
"""The live API of each provider; cassettes record their requests against these hosts."""

DUMMY_KEYS: Final = {
    "openai": "sk-test-replay",
    "anthropic": "sk-ant-test-replay",
    "google": "test-replay-key",
    "cohere": "test-replay-key",
}

CALLS: Final = {
    "openai": ("chat.completions.create", "responses.create", "images.generate"),
    "anthropic": ("messages.create",),
    "google": ("models.generate_content", "models.generate_content_stream"),
    "cohere": ("chat", "chat_stream"),
    "http": ("post",),
}
"""The calls a scenario can name, per provider."""

_MODELS: Final = {
    "openai": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-6",
    "google": "gemini-2.5-flash",
    "cohere": "command-a-03-2025",
}

SDKS: Final[dict[str, Sdk]] = {sdk.name: sdk for p in PROVIDERS for sdk in p.sdks}
"""The native SDKs of OpenAI-compatible vendors, by name (``Sdk``: the module and class of its
client, its live API), as the registry declares them."""

Prepare = Callable[[Any], Any]


def _keep(client: Any) -> Any:
    return client


def _kwargs(provider: str, name: str, stream: bool, request: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of an OpenAI or Anthropic scenario call."""
    if provider == "anthropic":
        kwargs: dict[str, Any] = {
            "model": _MODELS["anthropic"],
            "max_tokens": 1024,
            "messages": [{"role": "user", "content": "Hello"}],
        }
    elif name == "responses.create":
        kwargs = {"model": _MODELS["openai"], "input": "Hello"}
    elif name == "images.generate":
        kwargs = {"model": "dall-e-3", "prompt": "A painting"}
    else:
        kwargs = {"model": _MODELS["openai"], "messages": [{"role": "user", "content": "Hello"}]}
    if stream:
        kwargs["stream"] = True
    kwargs.update(request)
    return kwargs


def _method(client: Any, dotted: str) -> Any:
    target = client
    for part in dotted.split("."):
        target = getattr(target, part)
    return target


def _client(
    provider: str,
    mode: str,
    base_url: str | None,
    api_key: str | None,
    *,
    prepare: Prepare,
    options: dict[str, Any],
    sdk: str | None = None,
) -> Any:
    key = api_key or DUMMY_KEYS.get(provider, "")
    if sdk is not None:
        native = SDKS[sdk]
        module, name, live = native.module, native.client, native.api
        cls = getattr(importlib.import_module(module), name)
        if native.generator == "speakeasy":  # no retries unless configured, server_url
            return prepare(cls(api_key=key, server_url=base_url or live))
        if mode == "async":
            cls = getattr(importlib.import_module(module), "Async" + name)
        settings = {"max_retries": 0, **options}
        return prepare(cls(api_key=key, base_url=base_url or live, **settings))
    if provider in ("openai", "anthropic"):
        package = importlib.import_module(provider)
        name = {"openai": "OpenAI", "anthropic": "Anthropic"}[provider]
        cls = getattr(package, ("Async" + name) if mode == "async" else name)
        settings = {"max_retries": 0, **options}
        return prepare(cls(api_key=key, base_url=base_url or BASE_URLS[provider], **settings))
    if provider == "google":
        genai = importlib.import_module("google.genai")
        # google-genai 3.x calls the Gemini API's v1 by default, 1.x and 2.x v1beta: pin
        # v1beta (where every Gemini feature lives) so one cassette replays on every line.
        http_options = {"api_version": "v1beta", **({"base_url": base_url} if base_url else {})}
        http_options.update(options.get("http_options") or {})
        return prepare(genai.Client(api_key=key, http_options=http_options))
    if provider == "cohere":
        cohere = importlib.import_module("cohere")
        httpx = importlib.import_module("httpx")  # cohere's own HTTP library
        # an httpx client given explicitly: cohere's async client would otherwise take
        # aiohttp when httpx-aiohttp is installed
        if mode == "async":
            cls, http_client = cohere.AsyncClientV2, httpx.AsyncClient(timeout=30)
        else:
            cls, http_client = cohere.ClientV2, httpx.Client(timeout=30)
        url = base_url or BASE_URLS["cohere"]
        return prepare(cls(api_key=key, base_url=url, httpx_client=http_client))
    raise ValueError(f"no SDK client for provider {provider!r}")


def _cohere_kwargs(request: dict[str, Any]) -> dict[str, Any]:
    """A Cohere v2 chat call's arguments, with the SDK's own retries off."""
    kwargs: dict[str, Any] = {
        "model": _MODELS["cohere"],
        "messages": [{"role": "user", "content": "Hello"}],
        "request_options": {"max_retries": 0},
    }
    kwargs.update(request)
    return kwargs


def call(
    provider: str,
    name: str,
    *,
    stream: bool = False,
    base_url: str | None = None,
    url: str | None = None,
    api_key: str | None = None,
    request: dict[str, Any] | None = None,
    client: dict[str, Any] | None = None,
    prepare: Prepare = _keep,
    sdk: str | None = None,
) -> Any:
    """Make the scenario's call synchronously; return the result or the stream's chunks."""
    request = dict(request or {})
    if provider == "http":
        return _http_post(url or base_url or "", request, stream, "sync", prepare)
    made = _client(
        provider, "sync", base_url, api_key, prepare=prepare, options=client or {}, sdk=sdk
    )
    if sdk is not None and SDKS[sdk].generator == "speakeasy":
        return _method(made, name)(**_kwargs(provider, name, False, request))
    sdk_client = made
    if provider == "cohere":
        out = _method(sdk_client, name)(**_cohere_kwargs(request))
        return list(out) if name.endswith("_stream") else out
    if provider == "google":
        model = request.pop("model", _MODELS["google"])
        contents = request.pop("contents", "Hello")
        method = _method(sdk_client, name)
        out = method(model=model, contents=contents, **request)
        return list(out) if name.endswith("_stream") else out
    kwargs = _kwargs(provider, name, stream, request)
    out = _method(sdk_client, name)(**kwargs)
    if stream:
        with out as events:
            return list(events)
    return out


async def acall(
    provider: str,
    name: str,
    *,
    stream: bool = False,
    base_url: str | None = None,
    url: str | None = None,
    api_key: str | None = None,
    request: dict[str, Any] | None = None,
    client: dict[str, Any] | None = None,
    prepare: Prepare = _keep,
    sdk: str | None = None,
) -> Any:
    """The asynchronous twin of ``call``, through the SDK's async client."""
    request = dict(request or {})
    if provider == "http":
        return await _ahttp_post(url or base_url or "", request, stream, prepare)
    made = _client(
        provider, "async", base_url, api_key, prepare=prepare, options=client or {}, sdk=sdk
    )
    if sdk is not None and SDKS[sdk].generator == "speakeasy":  # ``_async`` twins of methods
        return await _method(made, name + "_async")(**_kwargs(provider, name, False, request))
    sdk_client = made
    if provider == "cohere":
        if name.endswith("_stream"):
            return [event async for event in _method(sdk_client, name)(**_cohere_kwargs(request))]
        return await _method(sdk_client, name)(**_cohere_kwargs(request))
    if provider == "google":
        model = request.pop("model", _MODELS["google"])
        contents = request.pop("contents", "Hello")
        method = _method(sdk_client.aio, name)
        out = await method(model=model, contents=contents, **request)
        if name.endswith("_stream"):
            return [chunk async for chunk in out]
        return out
    kwargs = _kwargs(provider, name, stream, request)
    out = await _method(sdk_client, name)(**kwargs)
    if stream:
        async with out as events:
            return [event async for event in events]
    return out


def http_library(sdk: str) -> Any:
    """The HTTP library (``httpx`` or ``httpx2``) that the installed ``sdk`` sends with.

    openai 3.x and anthropic 1.x+ use httpx2; their older lines use httpx. Tests and
    benchmarks build in-memory transports of the right library with it.
    """
    base = importlib.import_module(f"{sdk}._base_client")
    for name in ("httpx2", "httpx"):
        module = getattr(base, name, None)
        if module is not None and hasattr(module, "MockTransport"):
            return module
    raise RuntimeError(f"{sdk} uses neither httpx nor httpx2")


def _http_module() -> Any:
    try:
        return importlib.import_module("httpx")
    except ImportError:  # pragma: no cover - httpx2-only installs
        return importlib.import_module("httpx2")


def _http_body(request: dict[str, Any]) -> dict[str, Any]:
    body = {"model": "model", "messages": [{"role": "user", "content": "Hello"}]}
    body.update(request)
    return body


def _http_post(url: str, request: dict[str, Any], stream: bool, mode: str, prepare: Prepare) -> Any:
    httpx = _http_module()
    with prepare(httpx.Client(timeout=30)) as client:
        response = client.post(url, json=_http_body(request))
        response.read()
        return response


async def _ahttp_post(url: str, request: dict[str, Any], stream: bool, prepare: Prepare) -> Any:
    httpx = _http_module()
    async with prepare(httpx.AsyncClient(timeout=30)) as client:
        response = await client.post(url, json=_http_body(request))
        await response.aread()
        return response
