"""wrap() checks what generating methods return, and nothing else.

The method called decides, never the shape of the result: ``models.count_tokens``,
``embed_content`` and ``models.get`` of a wrapped Gemini client, or an OpenAI
``conversations.items.retrieve`` of a completed ``function_call_output`` (it has ``status``
and ``output`` members, like a Responses result), return what the raw client returns. Every
pydantic model class of ``openai.types``, ``anthropic.types`` and ``google.genai.types``
passes a non-generating method of a real client untouched, even filled with every member the
result checks look at. Clients are real, on in-memory transports.
"""

from __future__ import annotations

import copy
import importlib
import pkgutil
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import anthropic
import openai
import pydantic
import pytest
from google import genai
from google.genai import types as genai_types

from normalize_errors import (
    ContentFilteredError,
    EmptyOutputError,
    OutputTruncatedError,
    UpstreamUnavailableError,
    wrap,
)
from normalize_errors._wrapping._replay_calls import http_library
from normalize_errors._wrapping._wrap import GENERATING, generates

MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]

# Every member a result check reads, with a failure value: any model carrying them would be
# read as a failed generation if the shape decided.
HOSTILE: dict[str, Any] = {
    "object": "response",
    "status": "completed",
    "output": [],
    "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant"}}],
    "type": "message",
    "role": "assistant",
    "content": [],
    "stop_reason": "max_tokens",
    "candidates": [{"finishReason": "SAFETY", "finish_reason": "SAFETY"}],
    "prompt_feedback": {"block_reason": "SAFETY"},
    "promptFeedback": {"blockReason": "SAFETY"},
}


def model_classes(package: ModuleType) -> list[type[pydantic.BaseModel]]:
    """Every pydantic model class defined in ``package`` and its modules."""
    found: dict[str, type[pydantic.BaseModel]] = {}
    modules = [package]
    for info in pkgutil.walk_packages(getattr(package, "__path__", []), package.__name__ + "."):
        modules.append(importlib.import_module(info.name))
    for module in modules:
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, pydantic.BaseModel)
                and value.__module__.startswith(package.__name__)
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


def json_transport(library: Any, route: Callable[[Any], tuple[int, Any]]) -> Any:
    """A mock transport of ``library`` answering with ``route(request)``'s status and JSON."""

    def handler(request: Any) -> Any:
        status, body = route(request)
        return library.Response(status, json=body)

    return library.MockTransport(handler)


def openai_client(route: Callable[[Any], tuple[int, Any]], **options: Any) -> Any:
    http = http_library("openai")
    return openai.OpenAI(
        api_key="sk-test",
        http_client=http.Client(transport=json_transport(http, route)),
        **{"max_retries": 0, **options},
    )


def anthropic_client(route: Callable[[Any], tuple[int, Any]]) -> Any:
    http = http_library("anthropic")
    return anthropic.Anthropic(
        api_key="sk-ant-test",
        http_client=http.Client(transport=json_transport(http, route)),
        max_retries=0,
    )


def genai_client(route: Callable[[Any], tuple[int, Any]]) -> Any:
    import httpx

    options: Any = {
        "httpx_client": httpx.Client(transport=json_transport(httpx, route)),
        "httpx_async_client": httpx.AsyncClient(transport=json_transport(httpx, route)),
        "api_version": "v1beta",
    }
    return genai.Client(api_key="test-key", http_options=options)


# -- the reported cases ---------------------------------------------------------------------------


def gemini_route(request: Any) -> tuple[int, Any]:
    path = request.url.path
    if path.endswith(":countTokens"):
        return 200, {"totalTokens": 3}
    if path.endswith(":embedContent"):
        return 200, {"embedding": {"values": [0.1, 0.2]}}
    if path.endswith(":generateContent"):
        return 200, {"candidates": [{"finishReason": "SAFETY", "index": 0}]}
    return 200, {"name": "models/gemini-2.5-flash", "displayName": "Gemini 2.5 Flash"}


def test_gemini_calls_that_are_not_generation_pass() -> None:
    """count_tokens, embed_content and models.get return what the raw client returns."""
    raw = genai_client(gemini_route)
    client = wrap(genai_client(gemini_route))
    model = "gemini-2.5-flash"
    counted = client.models.count_tokens(model=model, contents="Hi")
    assert counted == raw.models.count_tokens(model=model, contents="Hi")
    assert counted.total_tokens == 3
    embedded = client.models.embed_content(model=model, contents="Hi")
    assert embedded == raw.models.embed_content(model=model, contents="Hi")
    got = client.models.get(model=model)
    assert got == raw.models.get(model=model)
    assert got.display_name == "Gemini 2.5 Flash"
    with pytest.raises(ContentFilteredError):  # generation is still checked
        client.models.generate_content(model=model, contents="Hi")


def test_gemini_async_calls_that_are_not_generation_pass() -> None:
    """The async twins: count_tokens and models.get pass, generate_content is checked."""
    import asyncio

    client = wrap(genai_client(gemini_route))

    async def main() -> Any:
        counted = await client.aio.models.count_tokens(model="gemini-2.5-flash", contents="Hi")
        got = await client.aio.models.get(model="gemini-2.5-flash")
        with pytest.raises(ContentFilteredError):
            await client.aio.models.generate_content(model="gemini-2.5-flash", contents="Hi")
        return counted.total_tokens, got.name

    assert asyncio.run(main()) == (3, "models/gemini-2.5-flash")


ITEM = {
    "type": "function_call_output",
    "id": "fco_1",
    "call_id": "call_1",
    "output": "ok",
    "status": "completed",
}
EMPTY_RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "model": "gpt-4.1",
    "status": "completed",
    "output": [],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}


def test_openai_result_with_status_and_output_is_not_a_response() -> None:
    """A conversation item passes; the same members from responses.create still check."""

    def route(request: Any) -> tuple[int, Any]:
        return 200, ITEM if "/conversations/" in request.url.path else EMPTY_RESPONSE

    client = wrap(openai_client(route))
    item = client.conversations.items.retrieve("fco_1", conversation_id="conv_1")
    assert item.type == "function_call_output"
    assert item.status == "completed"
    with pytest.raises(EmptyOutputError):
        client.responses.create(model="gpt-4.1", input="Hi")
    with pytest.raises(EmptyOutputError):
        client.responses.retrieve("resp_1")


def test_raw_and_streaming_response_views_of_generating_methods_still_check() -> None:
    """with_raw_response.create(...) is checked (its parse() at the call); the same view of a
    list is not."""
    truncated = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "finish_reason": "length", "message": {"role": "assistant"}},
        ],
    }
    client = wrap(openai_client(lambda request: (200, truncated)))
    with pytest.raises(OutputTruncatedError):
        client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
    listed = client.models.with_raw_response.list()
    assert listed.parse() is not None


def test_anthropic_count_tokens_passes_and_create_checks() -> None:
    """messages.count_tokens is not generation; messages.create is."""
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }

    def route(request: Any) -> tuple[int, Any]:
        if request.url.path.endswith("/count_tokens"):
            return 200, {"input_tokens": 7, **{k: message[k] for k in ("stop_reason", "type")}}
        return 200, message

    client = wrap(anthropic_client(route))
    counted = client.messages.count_tokens(model="claude-sonnet-4-6", messages=MESSAGES)
    assert counted.input_tokens == 7
    with pytest.raises(OutputTruncatedError):
        client.messages.create(model="claude-sonnet-4-6", max_tokens=8, messages=MESSAGES)


NEWEST_MAJOR = {"openai": 3, "anthropic": 2, "google": 3}
"""The newest SDK lines, where every method of GENERATING exists; older lines lack some
(anthropic 0.x has no ``messages.parse``)."""


def _newest(module: str) -> bool:
    root = module.partition(".")[0]
    sdk = {"openai": openai, "anthropic": anthropic, "google": genai}[root]
    version = getattr(sdk, "__version__", "0")
    return int(str(version).partition(".")[0]) >= NEWEST_MAJOR[root]


def test_the_allowlist_names_real_sdk_methods() -> None:
    """Every method of GENERATING exists on its SDK class (sync and async) on the newest
    lines; on older lines the methods that exist are the ones checked."""
    resources = [
        openai.resources.chat.completions.Completions,
        openai.resources.chat.completions.AsyncCompletions,
        openai.resources.responses.Responses,
        openai.resources.responses.AsyncResponses,
        openai.resources.completions.Completions,
        openai.resources.completions.AsyncCompletions,
        anthropic.resources.messages.Messages,
        anthropic.resources.messages.AsyncMessages,
        anthropic.resources.beta.messages.Messages,
        anthropic.resources.beta.messages.AsyncMessages,
        genai.models.Models,
        genai.models.AsyncModels,
        genai.chats.Chat,
        genai.chats.AsyncChat,
    ]
    covered = set()
    for cls in resources:
        owner: Any = object.__new__(cls)
        for (package, klass), methods in GENERATING.items():
            if cls.__name__.removeprefix("Async") == klass and cls.__module__.startswith(package):
                covered.add((package, klass))
                present = [name for name in methods if hasattr(cls, name)]
                assert present, (cls, methods)
                if _newest(cls.__module__):
                    assert present == list(methods), (cls, set(methods) - set(present))
                for name in present:
                    assert callable(getattr(cls, name)), (cls, name)
                    assert generates(owner, name)
        assert not generates(owner, "count_tokens")
    three = {
        key for key in GENERATING if key[0].partition(".")[0] in ("openai", "anthropic", "google")
    }
    # the other SDKs' entries are checked where those SDKs are tested
    # (tests/providers/test_native.py, test_cohere.py, test_bedrock.py)
    assert covered == three - {("openai.resources.beta.chat.completions", "Completions")}


# -- every model class of each SDK, through a non-generating method --------------------------------


def filled(cls: type[pydantic.BaseModel]) -> pydantic.BaseModel:
    """An instance of ``cls`` carrying every member a result check reads (unvalidated)."""
    return cls.model_construct(**HOSTILE)


def classes_of(package: ModuleType) -> Iterator[type[pydantic.BaseModel]]:
    classes = model_classes(package)
    assert len(classes) > 50  # the walk found the SDK's types (85 in anthropic 0.49)
    yield from classes


def test_every_openai_model_passes_a_non_generating_method() -> None:
    """client.get(path, cast_to=cls) for every openai.types model: same object, no error."""
    raw = openai_client(lambda request: (200, HOSTILE))
    client = wrap(openai_client(lambda request: (200, HOSTILE)))
    checked = 0
    for cls in classes_of(openai.types):
        try:
            expected = raw.get("/x", cast_to=cls)
        except Exception:  # a class the SDK itself cannot build from this body
            continue
        result = client.get("/x", cast_to=cls)
        assert type(result) is cls
        assert result == expected
        checked += 1
    assert checked > 500


def test_every_anthropic_model_passes_a_non_generating_method() -> None:
    """client.get(path, cast_to=cls) for every anthropic.types model: same object, no error."""
    raw = anthropic_client(lambda request: (200, HOSTILE))
    client = wrap(anthropic_client(lambda request: (200, HOSTILE)))
    checked = 0
    for cls in classes_of(anthropic.types):
        try:
            expected = raw.get("/x", cast_to=cls)
        except Exception:
            continue
        result = client.get("/x", cast_to=cls)
        assert type(result) is cls
        assert result == expected
        checked += 1
    assert checked > 50  # 85 model classes in anthropic 0.49, over 300 in 2.x


def test_every_genai_model_passes_a_non_generating_method(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """models.get through the real client, answering each google.genai.types model."""
    client = wrap(genai_client(lambda request: (200, {"name": "models/m"})))
    current: list[pydantic.BaseModel] = []

    def answer(cls: Any, *args: Any, **kwargs: Any) -> pydantic.BaseModel:
        return current[0]

    monkeypatch.setattr(genai_types.Model, "_from_response", classmethod(answer))
    classes = list(classes_of(genai_types))
    for cls in classes:
        current[:] = [filled(cls)]
        assert client.models.get(model="m") is current[0]
    from normalize_errors import check

    generated = filled(genai_types.GenerateContentResponse)
    with pytest.raises(ContentFilteredError):  # the same filled result does fail a check
        check(generated)


# -- copies and retries ----------------------------------------------------------------------------


def unavailable(request: Any) -> tuple[int, Any]:
    return 503, {"error": {"message": "down", "type": "server_error"}}


def test_copy_of_a_wrapped_client_is_wrapped() -> None:
    """copy.copy gives a wrapped copy of the client (it used to recurse)."""
    client = wrap(openai_client(unavailable))
    copied = copy.copy(client)
    assert isinstance(copied, openai.OpenAI)
    assert copied.api_key == "sk-test"
    with pytest.raises(UpstreamUnavailableError):
        copied.models.list()


def test_max_attempts_follows_the_clients_current_max_retries() -> None:
    """After wrapped.max_retries = 2 the error says attempts=3, max_attempts=3."""
    raw = openai_client(unavailable)
    raw.max_retries = 2
    with pytest.raises(openai.InternalServerError):
        raw.with_options(timeout=1).models.list()
    client = wrap(openai_client(unavailable))
    client.max_retries = 2
    with pytest.raises(UpstreamUnavailableError) as info:
        client.with_options(timeout=1).models.list()
    err = info.value
    assert (err.attempts, err.max_attempts) == (3, 3)
    with pytest.raises(UpstreamUnavailableError) as info:
        client.models.list()
    assert (info.value.attempts, info.value.max_attempts) == (3, 3)


# -- warnings the SDK issues during a call ---------------------------------------------------

WARNING_SCRIPT = """
import warnings
import openai
from openai.resources.models import Models
from normalize_errors import wrap
from tests.test_wrap_methods import openai_client

original = Models.list

def deprecated_list(self, *args, **kwargs):  # what a deprecated SDK method does
    warnings.warn("models.list is deprecated", DeprecationWarning, stacklevel=2)
    return original(self, *args, **kwargs)

Models.list = deprecated_list
client = openai_client(lambda request: (200, {"object": "list", "data": []}))
client.models.list()
wrap(client).models.list()
"""


def test_a_wrapped_call_warns_as_the_raw_call_does() -> None:
    """Python's default filters show the SDK's DeprecationWarning for both calls, naming
    the caller's own line each time (not the wrapper's module, where it would be hidden)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", WARNING_SCRIPT],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={"PATH": "", "PYTHONPATH": str(root), "PYTHONWARNINGS": ""},
    )
    shown = [line for line in out.stderr.splitlines() if "DeprecationWarning" in line]
    assert len(shown) == 2, out.stderr
    lines = WARNING_SCRIPT.splitlines()
    raw_line = lines.index("client.models.list()") + 1
    assert shown == [
        f"<string>:{raw_line}: DeprecationWarning: models.list is deprecated",
        f"<string>:{raw_line + 1}: DeprecationWarning: models.list is deprecated",
    ]


def test_a_wrapped_call_warns_with_the_callers_file_and_line() -> None:
    """Recorded warnings name this test's file and lines, raw and wrapped alike."""
    import warnings

    from openai.resources.models import Models

    original = Models.list

    def deprecated_list(self: Any, *args: Any, **kwargs: Any) -> Any:
        warnings.warn("models.list is deprecated", DeprecationWarning, stacklevel=2)
        return original(self, *args, **kwargs)

    client = openai_client(lambda request: (200, {"object": "list", "data": []}))
    wrapped = wrap(client)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Models.list = deprecated_list  # type: ignore[method-assign]
        try:
            client.models.list()
            wrapped.models.list()
        finally:
            Models.list = original  # type: ignore[method-assign]
    assert [w.filename for w in caught] == [__file__, __file__]
    assert caught[1].lineno == caught[0].lineno + 1
