"""The corpus's cases through the real SDK clients, wrapped by ``wrap()``, sync and async.

Each case whose API an SDK in scope speaks (openai, for OpenAI and Azure OpenAI and every
OpenAI-compatible server or gateway; anthropic; google-genai, for the Gemini API and Vertex
AI) is served by an in-memory transport of the SDK's own HTTP library (``http_library``)
with the case's status, headers and body, and read by the SDK itself:

* an ``http`` case (of OpenAI, Azure OpenAI, Anthropic and the Gemini API) through the call
  the provider's tests use, which raises the SDK's status error;
* a ``response`` case (a failure inside a 2xx) through the call whose answer has the body's
  shape: a chat completion, a text completion, a Responses ``response``, an Anthropic
  ``message``, a Gemini ``GenerateContentResponse``; a body of none of these shapes (an error
  object or a gateway's page in a 200) through the provider's own call;
* a ``stream_event`` case through the SDK's own stream reader (``create(stream=True)``,
  anthropic's ``messages.stream()`` too, ``generate_content_stream``), iterated to its end.

``wrap()`` checks by default: a failure inside a 2xx raises its typed error like an HTTP
error does. Outside ``known_misses.json`` the answer must be right, as from the raw response.
A case no SDK can be served is left out by one of the rules of ``route``, each with its
reason (``test_every_left_out_case_has_a_reason_of_the_rules`` lists them).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Final

import pytest

from normalize_errors import HarnessError, corpus, wrap
from normalize_errors._wrapping._replay_calls import http_library

CASES: Final = corpus.load()
MISSES: Final = corpus.known_misses()
MESSAGES: Final[list[Any]] = [{"role": "user", "content": "Hello"}]
MODES: Final = ("sync", "async")

SDK_MODULES: Final = {"openai": "openai", "anthropic": "anthropic", "google": "google.genai"}
"""The module each SDK is imported as (what a missing SDK's skip names)."""

FAMILIES: Final = {"anthropic": "anthropic", "gemini": "google", "vertex": "google"}
"""The SDK of a provider with its own API in scope; every other provider not in
``OWN_APIS`` speaks OpenAI's API (OpenAI, Azure OpenAI, the compatible servers, relays and
gateways), which the openai SDK calls."""

HTTP_PROVIDERS: Final = ("openai", "azure-openai", "anthropic", "gemini")
"""The providers whose ``http`` cases run through their SDK: the first-party APIs."""

OWN_APIS: Final = {
    "bedrock": "Bedrock answers through boto3's bedrock-runtime client, no SDK in scope "
    "(tests/providers/test_bedrock.py reads these bodies through the real boto3 client)",
    "cohere": "Cohere's own v2 chat API, which the openai, anthropic and google-genai "
    "clients do not call",
    "baidu": "Baidu Qianfan's v1 API (error_code/error_msg), which no SDK in scope calls",
    "iflytek-spark": "iFlytek Spark's WebSocket API, which no SDK in scope calls",
    "dify": "Dify's application API, which no SDK in scope calls",
}
"""Providers whose API is none that an SDK in scope calls, and why."""

UNFRAMED: Final = (
    "the body holds no server-sent event (no 'data:' line): the source showed an event's "
    "data alone, or NDJSON or WebSocket frames, and the SDKs read server-sent events only; "
    "which event line the frame came with is not known"
)
RETIRED: Final = (
    "an answer of Anthropic's retired Text Completions API (type 'completion'), which the "
    "anthropic SDK no longer calls"
)
NO_STATUS: Final = "the source did not show the HTTP status, which the SDK reads first"
SUCCESS_STATUS: Final = "an http case whose status is a success is no error response"

ANTHROPIC_EVENTS: Final = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
    }
)
"""The event types of Anthropic's Messages stream."""


TEXT_COMPLETIONS: Final = ("text_completion", "text.completion")
"""The ``object`` of a legacy Completions answer (Together writes ``text.completion``)."""


@dataclass(frozen=True)
class Route:
    """How a case is served: the SDK, its call, and whether it streams."""

    sdk: str
    """``openai``, ``anthropic`` or ``google``."""
    call: str
    """``chat``, ``completions``, ``responses``, ``messages`` or ``generate_content``."""
    stream: bool = False


def _family(case: corpus.Case) -> str:
    return FAMILIES.get(case.provider, "openai")


def _data_lines(body: str) -> list[Any]:
    """The JSON of each ``data:`` line (text where it is none)."""
    found: list[Any] = []
    for line in body.splitlines():
        if line.startswith("data:"):
            text = line[5:].strip()
            try:
                found.append(json.loads(text))
            except ValueError:
                found.append(text)
    return found


def _by_result_shape(data: dict[str, Any]) -> Route | None:
    """The call whose answer (a result or a stream chunk) has the shape of ``data``."""
    if "candidates" in data or "promptFeedback" in data:
        return Route("google", "generate_content")
    if data.get("type") == "message" or ("stop_reason" in data and "content" in data):
        return Route("anthropic", "messages")
    if data.get("object") == "response":
        return Route("openai", "responses")
    choices = data.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        legacy = "text" in choices[0] or data.get("object") in TEXT_COMPLETIONS
        return Route("openai", "completions" if legacy else "chat")
    return None


def _own_call(case: corpus.Case) -> Route:
    """The provider's own generating call, for a body of no result shape."""
    sdk = _family(case)
    return Route(sdk, {"openai": "chat", "anthropic": "messages"}.get(sdk, "generate_content"))


def _stream_route(case: corpus.Case) -> Route | str:
    events = [d for d in _data_lines(case.body) if isinstance(d, dict)]
    if not _data_lines(case.body):
        return UNFRAMED
    types = {e.get("type") for e in events}
    if "completion" in types:  # the events of Anthropic's Text Completions stream
        return RETIRED
    if any(isinstance(t, str) and t.startswith("response.") for t in types) or any(
        "sequence_number" in e for e in events
    ):  # the Responses API's events, each numbered
        return Route("openai", "responses", stream=True)
    if types & ANTHROPIC_EVENTS:
        return Route("anthropic", "messages", stream=True)
    for event in events:
        found = _by_result_shape(event)
        if found is not None:
            return Route(found.sdk, found.call, stream=True)
    own = _own_call(case)
    if own.sdk == "openai" and "error" in types:  # {"type": "error", ...}: a Responses event
        return Route("openai", "responses", stream=True)
    return Route(own.sdk, own.call, stream=True)


def route(case: corpus.Case) -> Route | str:
    """How ``case`` is served to an SDK, or why it is left out (the rules, in order).

    1. A provider whose API no SDK in scope calls (``OWN_APIS``) is left out.
    2. An ``http`` case runs for the first-party providers (``HTTP_PROVIDERS``) with an error
       status, through the provider's own call.
    3. A ``response`` case goes to the call whose answer has its shape (``_by_result_shape``);
       a body of no result shape (an error object, a gateway's JSON, a page) to the
       provider's own call, as a client of that API receives it; an answer of a retired API
       no SDK call returns any more is left out.
    4. A ``stream_event`` case needs server-sent events (``data:`` lines); the events' shape
       tells the SDK and the call (Anthropic's event types, the Responses API's numbered
       events, chat or Gemini chunks), else the provider's own streaming call.
    """
    if case.provider in OWN_APIS:
        return OWN_APIS[case.provider]
    if case.kind == "http":
        if case.provider not in HTTP_PROVIDERS:
            return "an http case of a server or gateway (tests/test_wording.py runs some)"
        if case.status is None:
            return NO_STATUS
        if case.status < 400:
            return SUCCESS_STATUS
        return _own_call(case)
    if case.kind == "response":
        try:
            data = json.loads(case.body)
        except ValueError:
            return _own_call(case)
        if isinstance(data, dict) and data.get("type") == "completion":
            return RETIRED
        found = _by_result_shape(data) if isinstance(data, dict) else None
        return found or _own_call(case)
    return _stream_route(case)


def served_body(case: corpus.Case) -> str:
    """The body the transport sends: the case's own. A stream whose last event does not end
    with the blank line that dispatches it (a source quoting one frame leaves it out) gets
    that blank line: an SSE reader discards an event left open at the end of the stream
    (WHATWG HTML, server-sent events, "dispatch the event"), and the event's lines are
    unchanged."""
    body = case.body
    if case.kind == "stream_event" and not body.endswith(("\n\n", "\r\n\r\n", "\r\r")):
        body = body.rstrip("\r\n") + "\n\n"
    return body


def serving(library: Any, case: corpus.Case) -> Any:
    """A mock transport of ``library`` (httpx or httpx2) answering with the case's response."""
    stream = case.kind == "stream_event"
    headers = dict(case.headers)  # as the source showed them; a 2xx body says what it is
    if case.kind != "http":
        kind = "text/event-stream" if stream else "application/json"
        headers = {"content-type": kind, **headers}
    status = 200 if stream else case.status or 200
    content = served_body(case).encode()

    def handler(request: Any) -> Any:
        return library.Response(status, headers=headers, content=content)

    return library.MockTransport(handler)


def client(case: corpus.Case, sdk: str, mode: str) -> Any:
    """The real client of ``sdk`` (async for ``mode`` "async") over the case's transport,
    wrapped by ``wrap()`` with its defaults."""
    if sdk == "google":
        import httpx
        from google import genai

        name = "httpx_async_client" if mode == "async" else "httpx_client"
        made = httpx.AsyncClient if mode == "async" else httpx.Client
        options: Any = {name: made(transport=serving(httpx, case)), "api_version": "v1beta"}
        vertex = case.provider == "vertex"  # Vertex AI in express mode: an API key, no project
        return wrap(genai.Client(api_key="test-key", vertexai=vertex, http_options=options))
    library = http_library(sdk)
    http = (library.AsyncClient if mode == "async" else library.Client)(
        transport=serving(library, case)
    )
    prefix = "Async" if mode == "async" else ""
    if sdk == "anthropic":
        import anthropic

        cls = getattr(anthropic, prefix + "Anthropic")
        return wrap(cls(api_key="sk-ant-test", max_retries=0, http_client=http))
    import openai

    if case.provider == "azure-openai":
        azure = getattr(openai, prefix + "AzureOpenAI")
        return wrap(
            azure(
                api_key="not-a-key",
                api_version="2024-06-01",
                azure_endpoint="https://example-resource.openai.azure.com",
                max_retries=0,
                http_client=http,
            )
        )
    cls = getattr(openai, prefix + "OpenAI")
    return wrap(cls(api_key="not-a-key", max_retries=0, http_client=http))


def _request(sdk: str, call: str, stream: bool) -> tuple[str, dict[str, Any]]:
    """The method (dotted) and keyword arguments of a call."""
    if sdk == "google":
        name = "models.generate_content_stream" if stream else "models.generate_content"
        return name, {"model": "gemini-2.5-flash", "contents": "Hello"}
    if sdk == "anthropic":
        return "messages.create", {
            "model": "claude-sonnet-4-6",
            "max_tokens": 64,
            "messages": MESSAGES,
            **({"stream": True} if stream else {}),
        }
    calls: dict[str, dict[str, Any]] = {
        "chat": {"model": "gpt-4o", "messages": MESSAGES},
        "completions": {"model": "gpt-3.5-turbo-instruct", "prompt": "Hello"},
        "responses": {"model": "gpt-4o", "input": "Hello"},
    }
    kwargs = calls[call]
    name = {"chat": "chat.completions.create"}.get(call, f"{call}.create")
    return name, {**kwargs, **({"stream": True} if stream else {})}


def _method(target: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        target = getattr(target, part)
    return target


def run_sync(case: corpus.Case, found: Route, *, helper: bool = False) -> Any:
    """Make the call and read a stream to its end; returns the result (the test expects a
    raise before that)."""
    made = client(case, found.sdk, "sync")
    if helper:  # anthropic's messages.stream(): the SDK's MessageStream accumulates events
        name, kwargs = _request(found.sdk, found.call, False)
        with made.messages.stream(**kwargs) as events:
            for _ in events:
                pass
            return events.get_final_message()
    name, kwargs = _request(found.sdk, found.call, found.stream)
    result = _method(made, name)(**kwargs)
    if found.stream:
        for _ in result:
            pass
    return result


async def run_async(case: corpus.Case, found: Route, *, helper: bool = False) -> Any:
    """The asynchronous twin of ``run_sync``, through the SDK's async client."""
    made = client(case, found.sdk, "async")
    if found.sdk == "google":
        made = made.aio
    if helper:
        name, kwargs = _request(found.sdk, found.call, False)
        async with made.messages.stream(**kwargs) as events:
            async for _ in events:
                pass
            return await events.get_final_message()
    name, kwargs = _request(found.sdk, found.call, found.stream)
    result = await _method(made, name)(**kwargs)
    if found.stream:
        async for _ in result:
            pass
    return result


def raised_through(
    case: corpus.Case, found: Route, mode: str, *, helper: bool = False
) -> BaseException | None:
    """What the wrapped SDK raised for the case, or ``None`` when the call returned."""
    try:
        if mode == "async":
            asyncio.run(run_async(case, found, helper=helper))
        else:
            run_sync(case, found, helper=helper)
    except Exception as exc:  # the test asserts what it is
        return exc
    return None


def _whole(case: corpus.Case) -> bool:
    """Whether ``messages.stream()`` can read the stream: it builds the message from its
    ``message_start`` on, and anthropic 0.x refuses message events that come before one
    (``RuntimeError: Unexpected event order``). A quoted fragment that starts later (a lone
    ``message_delta``) is read through ``create(stream=True)`` only; a stream of error or
    ping events alone is read by both."""
    types = {e.get("type") for e in _data_lines(case.body) if isinstance(e, dict)}
    return "message_start" in types or not types & (ANTHROPIC_EVENTS - {"ping"})


ROUTED: Final = [(c, r) for c in CASES if isinstance(r := route(c), Route)]
LEFT_OUT: Final = [(c, r) for c in CASES if isinstance(r := route(c), str)]
HELPED: Final = [(c, r) for c, r in ROUTED if r.sdk == "anthropic" and r.stream and _whole(c)]
"""Anthropic streams, read once more through ``messages.stream()``."""


def _ids(pairs: list[tuple[corpus.Case, Route]]) -> list[str]:
    return [case.id for case, _ in pairs]


def check_answer(case: corpus.Case, raised: BaseException | None) -> None:
    """Outside ``known_misses.json``, a typed error with the right answer, and the wait the
    raw reading finds (a ``retry-after``, a RetryInfo inside a wrapped error, a wait in words)
    is the wrapped client's too, stated by the case or not; a listed case is wrong through
    the SDK too (a typed error with another answer, or none raised)."""
    if case.id in MISSES:
        if isinstance(raised, HarnessError):
            assert not corpus.judge(case, raised.problem).right, f"{case.id} is right now"
        return
    assert isinstance(raised, HarnessError), f"expected a typed error, got {raised!r:.300}"
    result = corpus.judge(case, raised.problem)
    assert result.right, (case.expected_code, result.code, result.wrong)
    assert raised.problem.retry_after == corpus.run(case).retry_after


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("case", "found"), ROUTED, ids=_ids(ROUTED))
def test_every_sdk_case_through_the_wrapped_client(
    case: corpus.Case, found: Route, mode: str
) -> None:
    """The wrapped SDK raises a typed error; outside known_misses it is the right answer."""
    pytest.importorskip(SDK_MODULES[found.sdk], reason=f"needs the {SDK_MODULES[found.sdk]} SDK")
    check_answer(case, raised_through(case, found, mode))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("case", "found"), HELPED, ids=_ids(HELPED))
def test_anthropic_streams_through_the_message_stream_helper(
    case: corpus.Case, found: Route, mode: str
) -> None:
    """``messages.stream()`` reads the same events through the SDK's MessageStream."""
    pytest.importorskip("anthropic", reason="needs the anthropic SDK")
    check_answer(case, raised_through(case, found, mode, helper=True))


def test_every_kind_and_sdk_runs() -> None:
    """Response and stream cases reach every SDK; every kind runs."""
    pairs = {(case.kind, found.sdk) for case, found in ROUTED}
    for kind in ("response", "stream_event"):
        for sdk in ("openai", "anthropic", "google"):
            assert (kind, sdk) in pairs
    assert {case.kind for case, _ in ROUTED} == set(corpus.KINDS)
    assert {case.provider for case, found in ROUTED if case.kind == "http"} == set(HTTP_PROVIDERS)
    calls = {(found.sdk, found.call, found.stream) for _, found in ROUTED}
    for call in ("chat", "completions", "responses"):
        assert ("openai", call, True) in calls
        assert ("openai", call, False) in calls


def test_every_left_out_case_has_a_reason_of_the_rules() -> None:
    """Cases are left out by the rules of ``route`` alone, never by id."""
    reasons = {
        *OWN_APIS.values(),
        UNFRAMED,
        RETIRED,
        NO_STATUS,
        SUCCESS_STATUS,
        "an http case of a server or gateway (tests/test_wording.py runs some)",
    }
    for case, reason in LEFT_OUT:
        assert reason in reasons, case.id
    for case, reason in LEFT_OUT:
        if reason == UNFRAMED:
            assert case.kind == "stream_event", case.id
            assert not _data_lines(case.body), case.id
        elif reason == RETIRED:
            events = (
                _data_lines(case.body) if case.kind == "stream_event" else [json.loads(case.body)]
            )
            assert any(e.get("type") == "completion" for e in events if isinstance(e, dict))
        elif case.kind != "http":
            assert case.provider in OWN_APIS, case.id


def test_a_stream_event_is_served_with_the_blank_line_that_ends_it() -> None:
    """Only the end changes, and only where the blank line is missing."""
    case = next(c for c, r in ROUTED if r.stream and c.body.endswith("\n\n"))
    assert served_body(case) == case.body
    cut = next(c for c, r in ROUTED if r.stream and not c.body.endswith("\n\n"))
    assert served_body(cut) == cut.body.rstrip("\r\n") + "\n\n"
