"""The native SDKs of OpenAI-compatible vendors (groq, together, cerebras-cloud-sdk,
fireworks-ai, mistralai), read by the openai adapter: every exception class each exports, the
same answer for the same failure whichever SDK raised it, and wrap() of their clients.

The recorded failures themselves replay through these SDKs in ``test_cassettes.py`` (the
``cassettes/openai/*_sdk_*.yaml`` scenarios name their SDK in ``metadata.sdk``).
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from normalize_errors import HarnessError, UpstreamRateLimitedError, normalize, wrap
from normalize_errors._reading._tables import class_entry
from normalize_errors._wrapping._replay_calls import SDKS, http_library
from normalize_errors.providers import openai as adapter

from ..support import is_instance, raised, recorded, valid

STAINLESS = ["groq", "together", "cerebras", "fireworks"]


def sdk(name: str) -> Any:
    """The SDK's top-level module, or a skip naming it."""
    return pytest.importorskip(SDKS[name].module)


def exported(module: Any) -> list[type[BaseException]]:
    """Every public exception class an SDK's top-level module exports."""
    return [
        value
        for key, value in list(vars(module).items())
        if isinstance(value, type) and issubclass(value, BaseException) and not key.startswith("_")
    ]


def _classes() -> list[Any]:
    found = []
    for name in [*STAINLESS, "mistralai"]:
        module_name = SDKS[name].module
        try:
            module = importlib.import_module(module_name)
            if name == "mistralai":
                module = importlib.import_module("mistralai.client.errors")
        except ImportError:
            continue
        found += [pytest.param(cls, id=f"{name}.{cls.__name__}") for cls in exported(module)]
    return found


BASES = {"GroqError", "TogetherError", "CerebrasError", "FireworksError", "MistralError"}


@pytest.mark.parametrize("cls", _classes())
def test_every_exported_exception_class_has_a_mapping(cls: type[BaseException]) -> None:
    """Each class resolves to a CLASSES entry more specific than its SDK's base class."""
    root = cls.__module__.partition(".")[0]
    entry = class_entry(cls.__new__(cls), adapter.CLASSES, root)
    assert entry is not None, cls
    if cls.__name__ not in BASES:
        assert entry[0] not in BASES, cls
    valid(normalize(cls.__new__(cls)))  # built without __init__: still a valid error


def stainless_client(name: str, handler: Any, mode: str = "sync") -> Any:
    """A real client of a Stainless-generated SDK whose transport is ``handler``."""
    module = sdk(name)
    class_name = ("Async" if mode == "async" else "") + SDKS[name].client
    http = http_library(SDKS[name].module)
    transport = http.MockTransport(handler)
    http_client = (http.AsyncClient if mode == "async" else http.Client)(transport=transport)
    return getattr(module, class_name)(api_key="test-key", max_retries=0, http_client=http_client)


def openai_client(handler: Any) -> Any:
    openai = pytest.importorskip("openai")
    http = http_library("openai")
    return openai.OpenAI(
        api_key="sk-test",
        max_retries=0,
        http_client=http.Client(transport=http.MockTransport(handler)),
    )


def answer(status: int, headers: dict[str, str], body: bytes) -> Any:
    def handler(request: Any) -> Any:
        module = importlib.import_module(type(request).__module__.partition(".")[0])
        return module.Response(status, headers=headers, content=body)

    return handler


MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]


@pytest.mark.parametrize("name", STAINLESS)
@pytest.mark.parametrize(
    "scenario", ["groq_sdk_rate_limit_tpm_429", "context_length_exceeded_400", "server_error_500"]
)
def test_the_same_failure_gives_the_same_error_whichever_sdk_raised_it(
    scenario: str, name: str
) -> None:
    """A recorded OpenAI-shaped answer through openai and a native SDK: equal problems, only
    ``upstream.exception`` names the SDK."""
    status, headers, body = recorded("openai", scenario)
    client = stainless_client(name, answer(status, headers, body))
    exc = raised(lambda: client.chat.completions.create(model="m", messages=MESSAGES))
    got = valid(normalize(exc)).to_dict()
    assert got["upstream"].pop("exception").startswith(SDKS[name].module + ".")
    base = normalize(
        raised(
            lambda: openai_client(answer(status, headers, body)).chat.completions.create(
                model="m", messages=MESSAGES
            )
        )
    ).to_dict()
    base["upstream"].pop("exception")
    assert got == base


@pytest.mark.parametrize("name", STAINLESS)
async def test_async_clients(name: str) -> None:
    status, headers, body = recorded("openai", "groq_sdk_rate_limit_tpm_429")
    client = stainless_client(name, answer(status, headers, body), mode="async")
    try:
        await client.chat.completions.create(model="m", messages=MESSAGES)
    except Exception as exc:
        err = valid(normalize(exc))
    else:
        raise AssertionError("no exception")
    assert (err.code, err.retry_after) == ("upstream.rate_limited", 51.0)


@pytest.mark.parametrize("name", STAINLESS)
def test_a_missing_api_key(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's base error for a missing key reads as a credentials problem."""
    module = sdk(name)
    for variable in ("GROQ_API_KEY", "TOGETHER_API_KEY", "CEREBRAS_API_KEY", "FIREWORKS_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    exc = raised(getattr(module, SDKS[name].client))
    err = valid(normalize(exc))
    assert err.code == "upstream.authentication_failed"


def test_wrap_of_a_groq_client() -> None:
    """wrap() of a native client: typed drop-ins, and the chat result is checked."""
    groq = sdk("groq")
    status, headers, body = recorded("openai", "groq_sdk_rate_limit_tpm_429")
    wrapped = wrap(stainless_client("groq", answer(status, headers, body)))
    err = raised(lambda: wrapped.chat.completions.create(model="m", messages=MESSAGES))
    assert isinstance(err, groq.RateLimitError)
    assert is_instance(err, UpstreamRateLimitedError)
    assert err.status_code == 429  # the vendor's member
    status, headers, body = recorded("openai", "finish_length_200")
    wrapped = wrap(stainless_client("groq", answer(status, headers, body)))
    err = raised(lambda: wrapped.chat.completions.create(model="m", messages=MESSAGES))
    assert isinstance(err, HarnessError)
    assert err.code == "output.truncated"


# -- mistralai (Speakeasy) ----------------------------------------------------------------------


def mistral_client(handler: Any) -> Any:
    mistralai = pytest.importorskip("mistralai.client")
    http = importlib.import_module("httpx2")
    return mistralai.Mistral(
        api_key="test-key", client=http.Client(transport=http.MockTransport(handler))
    )


def test_mistral_validation_error() -> None:
    """Mistral's own 422 body becomes HTTPValidationError: a wrong request."""
    body = json.dumps(
        {"detail": [{"type": "missing", "loc": ["body", "model"], "msg": "Field required"}]}
    ).encode()
    client = mistral_client(answer(422, {"content-type": "application/json"}, body))
    exc = raised(lambda: client.chat.complete(model="m", messages=MESSAGES))
    assert type(exc).__name__ == "HTTPValidationError"
    err = valid(normalize(exc))
    assert (err.code, err.upstream["status"]) == ("upstream.invalid_request", 422)


def test_wrap_of_a_mistral_client() -> None:
    """A Mistral chat answer cut at the token limit is output.truncated through wrap()."""
    body = json.dumps(
        {
            "id": "cmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "mistral-small-latest",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "The fifty"},
                    "finish_reason": "length",
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        }
    ).encode()
    wrapped = wrap(mistral_client(answer(200, {"content-type": "application/json"}, body)))
    err = raised(lambda: wrapped.chat.complete(model="m", messages=MESSAGES))
    assert isinstance(err, HarnessError)
    assert err.code == "output.truncated"
    status, headers, raw = recorded("openai", "mistral_sdk_rate_limited_429")
    wrapped = wrap(mistral_client(answer(status, headers, raw)))
    err = raised(lambda: wrapped.chat.complete(model="m", messages=MESSAGES))
    assert isinstance(err, UpstreamRateLimitedError)
    errors = importlib.import_module("mistralai.client.errors")
    assert isinstance(err, errors.SDKError)  # except mistralai's class still catches it
    assert err.problem.upstream["code"] == "1300"


def test_the_generating_methods_exist() -> None:
    """Every GENERATING entry of these SDKs names real methods, sync and async, and no other
    method of the resource is checked."""
    from normalize_errors._wrapping._wrap import GENERATING, generates

    checked = 0
    for (package, klass), methods in GENERATING.items():
        root = package.partition(".")[0]
        if root not in ("groq", "together", "cerebras", "fireworks", "mistralai"):
            continue
        try:
            module = importlib.import_module(package)
        except ImportError:  # fireworks-ai lives in its own environment; CI's older SDK
            continue  # lines install none of these SDKs
        for name in (klass, "Async" + klass):
            cls = getattr(module, name, None)
            if cls is None:
                continue
            owner: Any = object.__new__(cls)
            for method in methods:
                assert callable(getattr(cls, method)), (cls, method)
                assert generates(owner, method)
                checked += 1
            assert not generates(owner, "with_raw_response")
    if checked == 0:
        pytest.skip("needs a native SDK of the test-beyond extra (groq, together, ...)")
    assert checked >= 9
