"""The wording families: what a message means wins over a status that says otherwise.

Messages quoted here come from the corpus (``normalize_errors/corpus``, each case with its
public source) or from the vendors' documented error tables named in ``_wording``; the
bodies around them are constructed (the shape each server answers in).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from normalize_errors import HarnessError, corpus, from_response, wrap
from normalize_errors._reading._envelopes import stated_status
from normalize_errors._reading._rules import retry_hint
from normalize_errors._wrapping._replay_calls import http_library
from tests.test_corpus_sdks import MESSAGES, serving


def _openai(message: str, **more: object) -> str:
    return json.dumps({"error": {"message": message, **more}})


@pytest.mark.parametrize(
    ("status", "message", "code", "retryable"),
    [
        # a spent balance sent as a 429 or a 500: not retryable
        (429, "余额不足或无可用资源包,请充值。", "upstream.rate_limited", False),
        (500, "insufficient balance", "upstream.rate_limited", False),
        (429, "Budget has been exceeded! Current cost: 10.51", "upstream.rate_limited", False),
        (
            403,
            "Access denied, please make sure your account is in good standing.",
            "upstream.rate_limited",
            False,
        ),
        # a content filter sent as a 400, 403 or 500
        (400, "系统检测到输入或生成内容可能包含不安全或敏感内容", "policy.content_filtered", False),
        (
            403,
            "Input text data may contain inappropriate content.",
            "policy.content_filtered",
            False,
        ),
        (500, "输出内容涉及敏感信息，审核不通过", "policy.content_filtered", False),
        # a context overflow sent as a 400 or 500
        (
            500,
            "length of prompt_tokens (68957) must be less than max_seq_len (65536).",
            "context.window_exceeded",
            False,
        ),
        (400, "token数量超过上限", "context.window_exceeded", False),
        # an overload or a rate limit in words, with no status
        (None, "当前分组上游负载已饱和，请稍后再试", "upstream.overloaded", True),
        (None, "You have been rate limited.", "upstream.rate_limited", True),
        # a missing model, a wrong key
        (None, "model 'llama3' not found, try pulling it first", "upstream.invalid_request", False),
        (
            400,
            "API Key not found. Please pass a valid API key.",
            "upstream.authentication_failed",
            False,
        ),
        # a capability the model lacks, an invalid argument said in words (no status)
        (400, "model x does not support tools", "upstream.invalid_request", False),
        (None, "The model does not support images.", "upstream.invalid_request", False),
        (
            None,
            "invalid request: message must be at least 1 token long",
            "upstream.invalid_request",
            False,
        ),
        # OpenAI Batch's enqueued-token limit, with no status
        (None, "Enqueued token limit reached for gpt-4o-mini", "upstream.rate_limited", True),
        # a gateway that could not reach its upstream
        (
            400,
            "upstream connect error or disconnect/reset before headers",
            "upstream.unavailable",
            True,
        ),
    ],
)
def test_the_words_decide_over_a_plain_status(
    status: int | None, message: str, code: str, retryable: bool
) -> None:
    err = from_response(status, {}, _openai(message))
    assert (err.code, err.retryable) == (code, retryable)


def test_a_specific_code_is_not_overridden() -> None:
    """The vendor's own specific code decides; the words only replace a plain answer."""
    body = _openai("insufficient balance", code="context_length_exceeded")
    assert from_response(400, {}, body).code == "context.window_exceeded"
    limited = _openai("Rate limit reached; you have been rate limited", code="rate_limit_exceeded")
    assert from_response(429, {}, limited).retryable is True


def test_an_output_limit_is_no_context_overflow() -> None:
    """'too many tokens' alone also says max_tokens was asked too high (Cohere)."""
    body = json.dumps({"message": "too many tokens: max tokens must be less than or equal to 4096"})
    assert from_response(400, {}, body).code == "upstream.invalid_request"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"status": 429, "message": "m"}, 429),
        ({"error": {"code": 404, "message": "m"}}, 404),
        ({"error": {"error": {"code": 402}}}, 402),
        ({"statusCode": "400"}, 400),
        ({"object": "error", "type": "NotFoundError", "code": 1}, 404),
        ({"code": 1301}, None),
        ({"code": 200}, None),
        ([{"status": 503}], 503),
        ("text", None),
    ],
)
def test_the_status_a_body_states(body: object, status: int | None) -> None:
    assert stated_status(body) == status


def test_a_stated_status_stands_in_only_when_none_is_known() -> None:
    body = json.dumps({"error": {"message": "The model `m` does not exist.", "code": 404}})
    assert from_response(None, {}, body).code == "upstream.invalid_request"
    busy = json.dumps({"message": "Provider returned error", "code": 429})
    assert from_response(200, {}, busy).code == "upstream.rate_limited"  # an error in a 200
    assert from_response(503, {}, busy).code == "upstream.unavailable"  # the HTTP status wins


@pytest.mark.parametrize(
    ("message", "wait"),
    [
        ("max request per minute reached: 3, please try again after 1 seconds", 1.0),
        ("please retry in 20s", 20.0),
        ("请求过于频繁，请 20 秒后重试", 20.0),
        ("请1分钟后再试", 60.0),
        ("请 500 毫秒后重试", 0.5),
        ("请 999999 分钟后重试", 86400.0),
        ("请 " + "9" * 40 + " 秒后重试", None),
        ("请稍后再试", None),
    ],
)
def test_waits_said_in_words(message: str, wait: float | None) -> None:
    assert retry_hint(message) == wait


def test_a_wait_in_words_reaches_retry_after() -> None:
    body = _openai("max request per minute reached: 3, please try again after 1 seconds")
    assert from_response(429, {}, body).retry_after == 1.0


@given(st.text(max_size=300), st.one_of(st.none(), st.integers(100, 599)))
def test_any_message_gives_a_bounded_answer(message: str, status: int | None) -> None:
    err = from_response(status, {}, _openai(message))
    assert err.code
    wait = err.retry_after
    assert wait is None or 0.0 <= wait <= 10**7


# --- the corpus cases these tables changed, through the real openai client, sync and async ---

CHANGED = (
    "zhipu-insufficient-balance-1113-zh",
    "zhipu-sensitive-content-1301",
    "qwen-dashscope-arrearage-400",
    "qwen-dashscope-data-inspection-failed-400",
    "qwen-dashscope-algo-data-inspection-400",
    "siliconflow-max-seq-len-20015",
    "litellm-proxy-budget-exceeded-429",
    "moonshot-rpm-try-again-after-429",
    "ollama-openai-compat-model-not-found-404",
    "ollama-picobot-openai-compat-does-not-support-tools-400",
)
"""Dev-split cases with an HTTP error status whose answer the families, envelopes or waits
changed (each came from its public source; see the corpus)."""


def _case(case_id: str) -> corpus.Case:
    return next(c for c in corpus.load() if c.id == case_id)


@pytest.mark.parametrize("case_id", CHANGED)
def test_changed_cases_through_the_wrapped_openai_client(case_id: str) -> None:
    import openai

    case = _case(case_id)
    http = http_library("openai")
    sdk = openai.OpenAI(
        api_key="not-a-key",
        max_retries=0,
        http_client=http.Client(transport=serving(http, case)),
    )
    client: Any = wrap(sdk)
    with pytest.raises(HarnessError) as raised:
        client.chat.completions.create(model="m", messages=MESSAGES)
    assert corpus.judge(case, raised.value.problem).right
    vendor: Any = raised.value
    assert isinstance(vendor, openai.APIStatusError)  # still the vendor's exception


@pytest.mark.parametrize("case_id", CHANGED)
def test_changed_cases_through_the_wrapped_async_openai_client(case_id: str) -> None:
    import openai

    case = _case(case_id)
    http = http_library("openai")
    sdk = openai.AsyncOpenAI(
        api_key="not-a-key",
        max_retries=0,
        http_client=http.AsyncClient(transport=serving(http, case)),
    )
    client: Any = wrap(sdk)

    async def call() -> None:
        await client.chat.completions.create(model="m", messages=MESSAGES)

    with pytest.raises(HarnessError) as raised:
        asyncio.run(call())
    assert corpus.judge(case, raised.value.problem).right


def test_a_whole_2xx_body_that_is_an_error_object_reads_like_its_twin() -> None:
    """An ``error`` member with its message, or OpenAI's bare error object (code, message,
    param), as the whole body of a 2xx (a stream frame without its ``data:`` line, a Realtime
    ``failed`` status, a Batch's error entry): read as the HTTP error it reports."""
    frame = {"error": {"type": "server_error", "code": None, "message": "The server had an error"}}
    err = from_response(200, {"content-type": "text/event-stream"}, json.dumps(frame, indent=2))
    assert (err.code, err.upstream["in_stream"]) == ("upstream.unavailable", True)
    bare = {"code": "rate_limit_exceeded", "message": "Slow down", "param": None}
    assert from_response(200, {}, json.dumps(bare)).code == "upstream.rate_limited"
    # a result whose error is null, or an object with no message, reports no error
    quiet: list[dict[str, Any]] = [
        {"object": "response", "error": None},
        {"error": {}},
        {"code": "x", "param": 1},
    ]
    for body in quiet:
        assert from_response(200, {}, json.dumps(body)).code == "upstream.invalid_response"


def test_an_error_wrapped_in_a_clients_error_message_is_read_inside() -> None:
    """Gemini CLI's ``{"error": {"message": "<Gemini's error as JSON text>", ...}}``."""
    inner = {
        "error": {
            "code": 400,
            "message": "API key expired. Please renew the API key.",
            "status": "INVALID_ARGUMENT",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
            ],
        }
    }
    outer = {"error": {"message": json.dumps(inner), "code": 400, "status": "Bad Request"}}
    err = from_response(None, {}, json.dumps(outer))
    assert (err.code, err.upstream["provider"]) == ("upstream.authentication_failed", "google")
    not_json = {"error": {"message": "{not json", "code": 400}}
    assert from_response(400, {}, json.dumps(not_json)).code == "upstream.invalid_request"


# Constructed bodies of each shape ``_envelopes.error_object`` takes inside a 2xx (the shape
# each vendor documents; the messages are placeholders): MiniMax's ``base_resp`` (1002: its
# error-code page's rate limit), Qianfan's ``error_code`` (18: QPS limit), a status the body
# states (OpenRouter's ``{"message", "code": 429}`` shape), OpenAI's bare error object.
ERROR_OBJECTS_IN_A_200 = [
    {"base_resp": {"status_code": 1002, "status_msg": "x"}},
    {"error_code": 18, "error_msg": "x"},
    {"message": "x", "code": 429},
    {"code": "rate_limit_exceeded", "message": "x", "param": None},
    {"html-message": "x"},  # no error at all: a gateway's JSON, upstream.invalid_response
]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("body", ERROR_OBJECTS_IN_A_200, ids="-".join)
def test_a_200_that_is_an_error_reads_alike_through_the_wrapped_openai_client(
    body: dict[str, Any], mode: str
) -> None:
    """The openai SDK builds a ChatCompletion of any JSON; the wrapped client reads its
    members as ``from_response`` reads the 2xx body: the error they report, by the adapter
    of their shape."""
    import openai

    raw = from_response(200, {"content-type": "application/json"}, json.dumps(body))
    http = http_library("openai")
    content = json.dumps(body).encode()

    def answer(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "application/json"}, content=content)

    transport = http.MockTransport(answer)
    if mode == "async":
        made: Any = openai.AsyncOpenAI(
            api_key="not-a-key", max_retries=0, http_client=http.AsyncClient(transport=transport)
        )
        client: Any = wrap(made)

        async def call() -> None:
            await client.chat.completions.create(model="m", messages=MESSAGES)

        with pytest.raises(HarnessError) as raised:
            asyncio.run(call())
    else:
        made = openai.OpenAI(
            api_key="not-a-key", max_retries=0, http_client=http.Client(transport=transport)
        )
        client = wrap(made)
        with pytest.raises(HarnessError) as raised:
            client.chat.completions.create(model="m", messages=MESSAGES)
    problem = raised.value.problem
    assert problem.code == raw.code
    if raw.code != "upstream.invalid_response":
        assert problem.code == "upstream.rate_limited"
        assert (problem.retryable, problem.detail) == (raw.retryable, raw.detail)
    assert problem.result is not None  # the ChatCompletion the SDK made stays on the error
