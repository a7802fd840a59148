"""Provider routing (``providers/__init__.py``): the one place that names the provider of a
module, an exception, a result."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from normalize_errors import normalize
from normalize_errors._reading._from_exception import message_of
from normalize_errors._wrapping._replay_calls import http_library
from normalize_errors.providers._routing import provider_of_module, provider_of_result


@pytest.mark.parametrize(
    ("module", "provider"),
    [
        ("openai.types.chat", "openai"),
        ("groq._client", "openai"),  # a native SDK of an OpenAI-compatible vendor
        ("anthropic._exceptions", "anthropic"),
        ("google.genai.errors", "google"),
        ("google.auth.exceptions", None),  # only google.genai is Gemini's SDK
        ("botocore.exceptions", "bedrock"),
        ("cohere.core.api_error", "cohere"),
        ("httpx", "http"),
        ("requests.exceptions", "http"),
        ("mycorp_gateway.errors", None),
        (None, None),
        (42, None),
    ],
)
def test_the_provider_of_a_module(module: Any, provider: str | None) -> None:
    assert provider_of_module(module) == provider


def test_the_provider_of_a_result_by_its_shape() -> None:
    """Plain JSON results: the members each vendor's result has."""
    assert provider_of_result({"choices": []}) == "openai"
    assert provider_of_result({"object": "response", "output": []}) == "openai"
    assert provider_of_result({"type": "message", "content": []}) == "anthropic"
    assert provider_of_result({"candidates": []}) == "google"
    assert provider_of_result({"stopReason": "end_turn"}) == "bedrock"
    assert provider_of_result({"finish_reason": "COMPLETE"}) == "cohere"
    assert provider_of_result({"finish_reason": "stop"}) is None  # OpenAI's is in choices
    assert provider_of_result("text") is None


def test_an_anthropic_error_without_a_response_reads_its_body() -> None:
    """``anthropic.APIError`` carries no response (an error event of a stream): no header
    to read the request id from, so the exception's own attribute is asked; the body's
    type decides."""
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    request = http_library("anthropic").Request("POST", "https://api.anthropic.com/v1/messages")
    exc = anthropic.APIError(json.dumps(body), request, body=body)
    err = normalize(exc)
    assert (err.code, err.retryable) == ("upstream.overloaded", True)
    assert "request_id" not in err.upstream


def test_the_message_of_an_exception_whose_args_cannot_be_read() -> None:
    """A hostile exception whose ``args`` raises has no message, and reading it never raises."""

    class Hostile(Exception):
        @property
        def args(self) -> Any:  # type: ignore[override]
            raise RuntimeError("no")

    assert message_of(Hostile()) is None
    assert message_of(ValueError("plain")) == "plain"


def test_an_unknown_provider_name_is_refused_naming_the_known_ones() -> None:
    from normalize_errors.providers import NAMES
    from normalize_errors.providers._routing import adapter

    with pytest.raises(
        ValueError, match="unknown provider 'mycorp'; expected one of anthropic, google, openai"
    ):
        adapter("mycorp")
    import importlib

    for name in NAMES:
        assert adapter(name) is importlib.import_module(f"normalize_errors.providers.{name}")


def raised_at_depth(depth: int, module: str) -> BaseException:
    """A TypeError raised by code of ``module`` under ``depth`` calls of the user's own."""
    import sys

    inner: dict[str, Any] = {"__name__": module}
    exec("def fail():\n    None + 1\n", inner)
    outer: dict[str, Any] = {"__name__": "mycorp.walk", "fail": inner["fail"]}
    exec("def down(n):\n    if n == 0:\n        fail()\n    down(n - 1)\n", outer)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, depth + 200))
    try:
        outer["down"](depth)
    except TypeError as exc:
        return exc
    finally:
        sys.setrecursionlimit(limit)
    raise AssertionError("no exception was raised")


def test_the_walk_to_the_innermost_frame_is_bounded() -> None:
    """The frame that raised a builtin exception names its vendor (google-genai's own
    TypeError), but the walk there stops after 1000 frames: a deeper traceback names none."""
    from normalize_errors.providers._routing import provider_of_traceback

    assert provider_of_traceback(raised_at_depth(900, "google.genai.errors")) == "google"
    assert provider_of_traceback(raised_at_depth(1500, "google.genai.errors")) is None
    assert provider_of_traceback(raised_at_depth(10, "mycorp.tools")) is None
    assert provider_of_traceback(TypeError("never raised")) is None


def test_the_shared_exception_reader_decides_without_an_sdks_adjustment() -> None:
    """``_from_exception.read_exception`` with no ``adjust`` (the SDK-specific step every built-in
    adapter passes) reads a real SDK status error from its status, headers and body alone,
    to the answer the adapter gives. The body is the recorded one of the cassette."""
    import openai

    from normalize_errors._reading._from_exception import read_exception
    from normalize_errors.providers.openai import _errors as openai_errors

    from ..support import recorded

    status, headers, body = recorded("openai", "rate_limit_tpm_429")
    http = http_library("openai")
    request = http.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = http.Response(status, headers=headers, content=body, request=request)
    exc = openai.RateLimitError("rate limited", response=response, body=json.loads(body)["error"])
    plain = read_exception(openai_errors.SDK, exc)
    assert plain is not None
    adapted = normalize(exc)
    assert (plain.code, plain.retryable, plain.retry_after) == (
        adapted.code,
        adapted.retryable,
        adapted.retry_after,
    )
    assert plain.upstream["status"] == 429
    assert read_exception(openai_errors.SDK, ValueError("not the SDK's")) is None


def test_the_call_helpers_refuse_what_they_cannot_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay helpers name what they cannot do: a provider with no SDK client to build,
    and an SDK whose ``_base_client`` (a module made here) sends with neither httpx nor
    httpx2; a Stainless SDK's library is found."""
    import sys
    import types

    from normalize_errors._wrapping import _replay_calls

    with pytest.raises(ValueError, match="no SDK client for provider 'bedrock'"):
        _replay_calls.call("bedrock", "converse")
    monkeypatch.setitem(sys.modules, "mycorp_sdk", types.ModuleType("mycorp_sdk"))
    monkeypatch.setitem(
        sys.modules, "mycorp_sdk._base_client", types.ModuleType("mycorp_sdk._base_client")
    )
    with pytest.raises(RuntimeError, match="mycorp_sdk uses neither httpx nor httpx2"):
        http_library("mycorp_sdk")
    assert http_library("anthropic").__name__ in ("httpx", "httpx2")


def test_an_anthropic_error_without_a_response_keeps_the_sdks_request_id() -> None:
    """An ``anthropic.APIError`` with no response (no header to read) that carries the
    request id as an attribute, as the SDK sets it on status errors: that id is reported."""
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    request = http_library("anthropic").Request("POST", "https://api.anthropic.com/v1/messages")
    exc = anthropic.APIError(json.dumps(body), request, body=body)
    exc.request_id = "req_011CSHoEeqs5C35K2UUqR7Fy"  # type: ignore[attr-defined]
    err = normalize(exc)
    assert (err.code, err.upstream["request_id"]) == (
        "upstream.overloaded",
        "req_011CSHoEeqs5C35K2UUqR7Fy",
    )


def test_every_routing_table_is_derived_from_the_one_declaration() -> None:
    """Issue 23, item 3: each provider is declared once (``PROVIDERS``); the roots of every
    adapter, the hosts, the generating methods of ``wrap()`` and the CLI's choices are read
    from it, so a row added there reaches all of them."""
    from normalize_errors._wrapping import _wrap
    from normalize_errors.providers import NAMES, PROVIDERS
    from normalize_errors.providers import http as http_adapter
    from normalize_errors.providers._routing import adapter, declared
    from normalize_errors.providers.google import _errors as google_errors
    from normalize_errors.providers.openai import _errors as openai_errors

    assert tuple(p.name for p in PROVIDERS) == NAMES
    assert len(set(NAMES)) == len(NAMES)
    for provider in PROVIDERS:
        assert declared(provider.name) is provider
        assert provider.name == adapter(provider.name).NAME
        for root in provider.roots:
            assert provider_of_module(root) == provider.name
            assert provider_of_module(root + ".errors") == provider.name
    for module in (openai_errors, google_errors):  # the adapters with a ROOTS of their own
        assert declared(module.NAME).roots == module.ROOTS
    assert openai_errors.SDK.roots == declared("openai").roots
    assert {name for _, name in http_adapter._HOSTS} == {p.name for p in PROVIDERS if p.hosts}
    assert set(_wrap.GENERATING) == {
        (package, klass) for p in PROVIDERS for package, klass, _ in p.generating
    }
    with pytest.raises(ValueError, match="unknown provider"):
        declared("nobody")


@pytest.mark.parametrize("name", ["bedrock", "cohere"])
def test_the_cli_classifies_as_every_declared_provider(
    name: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from normalize_errors._cli import main

    body = tmp_path / "body.json"
    body.write_text(json.dumps({"message": "Too many requests"}))
    main(["classify", str(body), "--provider", name])
    out = json.loads(capsys.readouterr().out)
    assert out["upstream"]["provider"] == name


# --- a recorded stream's provider, from its events (Provider.stream_events) ---------------

_ANTHROPIC_STREAM = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":'
    '"message","role":"assistant","model":"claude-3-opus-20240229","content":[],'
    '"stop_reason":null}}\n\n'
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"The"}}\n\n'
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"}}'
    '\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
)


@pytest.mark.parametrize(
    ("events", "provider"),
    [
        ([{"type": "ping"}, {"type": "message_start", "message": {}}], "anthropic"),
        ([{"type": "content_block_delta", "index": 0}], "anthropic"),
        ([{"type": "completion", "completion": " Hi", "stop_reason": None}], "anthropic"),
        ([{"type": "response.created", "response": {}}], "openai"),
        ([{"object": "chat.completion.chunk", "choices": []}], "openai"),
        ([{"candidates": [{"finishReason": "MAX_TOKENS"}]}], "google"),
        ([{"type": "ping"}, {"type": "something_else"}], None),
        ([], None),
    ],
)
def test_provider_of_stream_reads_the_event_types(events: list[Any], provider: str | None) -> None:
    from normalize_errors.providers._routing import provider_of_stream

    assert provider_of_stream(events) == provider


def test_diagnose_stream_reads_a_recorded_stream_body_without_a_provider() -> None:
    """A stream's final stop reason reads like a non-stream result's, from its raw text."""
    from normalize_errors._facade import diagnose_stream

    err = diagnose_stream(_ANTHROPIC_STREAM)
    assert err is not None
    assert (err.code, err.upstream["provider"]) == ("output.truncated", "anthropic")
    assert diagnose_stream(_ANTHROPIC_STREAM.encode()).code == "output.truncated"  # type: ignore[union-attr]
    legacy = (
        'event: completion\ndata: {"type":"completion","completion":" Hi","stop_reason":null}\n\n'
        'event: completion\ndata: {"type":"completion","completion":"\'m","stop_reason":'
        '"max_tokens"}\n\n'
    )
    assert diagnose_stream(legacy).code == "output.truncated"  # type: ignore[union-attr]
    chat = (
        'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"A"},'
        '"finish_reason":null}]}\n\n'
        'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},'
        '"finish_reason":"length"}]}\n\ndata: [DONE]\n\n'
    )
    assert diagnose_stream(chat).code == "output.truncated"  # type: ignore[union-attr]
    assert diagnose_stream("data: [DONE]\n\n") is None
    assert diagnose_stream("not a stream") is None
