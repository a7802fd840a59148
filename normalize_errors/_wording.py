"""Families of wording that say what a failure means, whatever status came with it.

A server's status does not always mean what it says: a spent balance comes as a 429 or a
500, a content filter as a 400, 403 or 500, an overflowing context as a 413 or 500, an
overload as a 429 or with no status at all; a gateway wraps its own failure to reach the
model in an envelope of its own. The words of the message still say what happened. Each
``Family`` below is one meaning, with the words (English, and Chinese where the providers
answer in it) and the vendor ids that say it, and the answers it overrides (``over``):
the plain answers a status alone, or a generic code, would give.

``classify`` (``_rules``) asks ``reread`` once the table or the status has decided: if the
answer is one a family may override and the message (or an id) is in the family, the family
decides. Families are tried in order, so a spent balance that also says "rate limit" is a
spent balance. A provider's specific rows (a code such as ``context_length_exceeded``) come
first and are never overridden unless their answer is itself a plain one.

``finish_failure`` reads a finish reason nobody listed (``malformed_function_call``,
``error``, ``SAFETY``) by the same kind of word families.

Words are plain lower-case substrings of ``Facts.lowered`` (the message, cut to
``MAX_MESSAGE``): one substring test each, no pattern, on the failure path only. The few
meanings words cannot say (a count between the words) have a pattern in ``_patterns``,
run only behind one of its words.

Where the words come from (public documentation and recorded answers): the OpenAI, Anthropic,
Gemini, Mistral, Groq, vLLM, llama.cpp, LM Studio and TGI messages the provider tables
already read; MiniMax's error-code page (``insufficient balance``, ``new_sensitive``,
``rate limit``); iFlytek Spark's (``输入内容审核不通过，涉嫌违规``, ``输出内容涉及敏感信息``,
``服务忙，请稍后再试``, ``服务容量不足``, ``流控超限``, ``token数量超过上限``); Zhipu's
(``余额不足``, ``账户余额已用完``, ``不安全或敏感内容``, ``并发数过高``, ``访问量过大``,
``鉴权失败``); DashScope's (``Arrearage``, ``DataInspectionFailed``, ``inappropriate
content``, ``good standing``); Moonshot's (``considered high risk``, ``exceeded model token
limit``); DeepSeek's (``Content Exists Risk``, ``Insufficient Balance``); new-api's
(``负载已饱和``, ``额度不足``); LiteLLM's (``Budget has been exceeded``); Qianfan's
(``Access token invalid``, ``request limit reached``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, NamedTuple

from ._patterns import MODEL_MISSING, WAIT_IN_WORDS, rule_pattern

if TYPE_CHECKING:
    from ._rules import Facts

__all__ = [
    "AUTH",
    "BILLING",
    "CONTENT_FILTER",
    "CONTEXT",
    "CONTEXT_COUNT",
    "CONTEXT_COUNT_WORDS",
    "CONTEXT_WORDS",
    "FAMILIES",
    "INVALID_ARGUMENT",
    "MODEL_NOT_FOUND",
    "OVERLOAD",
    "RATE_LIMIT",
    "UNREACHABLE",
    "UNSUPPORTED",
    "Family",
    "finish_failure",
    "reread",
    "wait_in_words",
]

# -- context overflow -----------------------------------------------------------------------

CONTEXT_WORDS: Final = (
    "context_length_exceeded",
    "context length exceeded",
    "maximum context length",
    "context window",
    "context limit",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "too many input tokens",
    "reduce the length of the messages",
    "max_tokens must be at least 1, got -",
    # families: a context size or length that the input exceeds or overflows (llama.cpp,
    # LM Studio, Ollama, vLLM), input or prompt lengths over a stated range (TGI, DashScope)
    "context size",
    "context_size",
    "context the overflows",
    "context overflow",
    "context length of only",
    "exceeds the available context",
    "exceeds the context",
    "exceed the context",
    "maximum model length",
    "maximum sequence length",
    "max_model_len",
    "range of input length",
    "`inputs` tokens + `max_new_tokens`",
    "`inputs` must have less than",
    "prompt too long",
    "prompt exceed",
    "prompt length exceed",
    "prompt token exceed",
    "prompt tokens exceed",
    "input exceed",
    "input length exceed",
    "input token exceed",
    "input tokens exceed",
    "input length too long",
    "input length is too long",
    "message too long",
    "message is too long",
    "messages too long",
    "messages are too long",
    "messages is too long",
)
"""How providers and OpenAI-compatible servers say the input is over the context window."""

CONTEXT_COUNT_WORDS: Final = ("input token count", "the max", "too large for model with")
CONTEXT_COUNT: Final = (
    r"input token count.{0,40}exceeds|exceeds? the (?:maximum|max)(?: number of)? "
    r"(?:allowed )?(?:input )?tokens|too large for model with \d{1,12} maximum context"
)
"""The context-window wording that needs a pattern (a count between the words), behind
``CONTEXT_COUNT_WORDS``, so it runs only on a message that has one of them."""

_MORE_CONTEXT: Final = (
    "max_seq_len",  # SiliconFlow, lmdeploy: "prompt_tokens (N) must be less than max_seq_len"
    "exceeded model token limit",  # Moonshot
    "tokens_too_long",
    "prompt tokens too long",
    "token数量超过上限",  # iFlytek Spark 10907
    "prompt 超长",  # Zhipu 1261
)

# -- the families ----------------------------------------------------------------------------

_PLAIN: Final = frozenset(
    {"upstream.invalid_request", "upstream.unavailable", "upstream.invalid_response"}
)
"""The answers of a status alone or of a generic code ("invalid request", "server error")."""


class Family(NamedTuple):
    """One meaning, the words and ids that say it, and the answers it overrides."""

    name: str
    code: str
    retryable: bool
    over: frozenset[str]
    """The answers (codes) this meaning replaces: what a status or a generic code gave."""
    words: tuple[str, ...]
    """Lower-case substrings of the message, any one of which says it."""
    ids: frozenset[str] = frozenset()
    """Vendor codes or types (lower case), any one of which says it."""
    pattern: re.Pattern[str] | None = None
    """A pattern for what words cannot say, run only when one of ``behind`` is in the text."""
    behind: tuple[str, ...] = ()

    def says(self, facts: Facts) -> bool:
        """Whether the vendor's ids or message say this family's meaning."""
        if self.ids and not self.ids.isdisjoint(facts.ids):
            return True
        text = facts.lowered
        if not text:
            return False
        for word in self.words:
            if word in text:
                return True
        if self.pattern is not None:
            for word in self.behind:
                if word in text:
                    return self.pattern.search(text) is not None
        return False


BILLING: Final = Family(
    "billing",
    "upstream.rate_limited",
    False,
    _PLAIN | {"upstream.authentication_failed", "upstream.rate_limited", "upstream.overloaded"},
    (
        "insufficient balance",
        "insufficient account balance",
        "insufficient credit",
        "insufficient quota",
        "insufficient_quota",
        "credit limit",
        "out of credits",
        "more credits",
        "monthly spending limit",
        "past invoices",
        "budget has been exceeded",
        "budget exceeded",
        "exceeded budget",
        "arrearage",
        "in arrears",
        "overdue payment",
        "account is in good standing",
        "quota is not enough",
        "余额不足",
        "余额已用完",
        "欠费",
        "请充值",
        "额度不足",
        "额度已用尽",
    ),
    frozenset(
        {
            "arrearage",
            "budget_exceeded",
            "insufficient_quota",
            "insufficient_balance",
            "insufficient_user_quota",
            "billing_hard_limit_reached",
            "payment_required",
        }
    ),
)
"""A spent balance, quota or budget, or an account in arrears: waiting will not help (a
status of 429 or 500 says otherwise, and is wrong). Not "exceeded your current quota": Gemini
says that of a per-minute free-tier limit, which passes (OpenAI's table reads it with its
code)."""

CONTENT_FILTER: Final = Family(
    "content_filter",
    "policy.content_filtered",
    False,
    _PLAIN | {"upstream.authentication_failed"},
    (
        "content filter",
        "content_filter",
        "content management policy",
        "content policy",
        "safety system",
        "inappropriate content",
        "data_inspection_failed",
        "datainspectionfailed",
        "sensitive content",
        "considered high risk",
        "content exists risk",
        "new_sensitive",
        "敏感内容",
        "敏感信息",
        "审核不通过",
        "涉嫌违规",
        "违规信息",
        "高风险",
    ),
    frozenset(
        {
            "data_inspection_failed",
            "datainspectionfailed",
            "content_filter",
            "sensitive_check_error",
        }
    ),
)
"""A content filter or moderation refused the input or the output (a 400, 403 or 500)."""

CONTEXT: Final = Family(
    "context",
    "context.window_exceeded",
    False,
    _PLAIN,
    # "too many tokens" alone also says an output limit was asked too high (Cohere's "too many
    # tokens: max tokens must be less than or equal to 4096"): the family leaves it out
    (*(word for word in CONTEXT_WORDS if word != "too many tokens"), *_MORE_CONTEXT),
    frozenset({"context_length_exceeded", "tokens_too_long"}),
    rule_pattern(CONTEXT_COUNT),
    CONTEXT_COUNT_WORDS,
)
"""The input is over the context window (a 400, 413 or 500)."""

AUTH: Final = Family(
    "auth",
    "upstream.authentication_failed",
    False,
    _PLAIN,
    (
        "invalid api key",
        "incorrect api key",
        "api key not found",
        "api key not valid",
        "api key is invalid",
        "pass a valid api key",
        "invalid_api_key",
        "access token invalid",
        "access token expired",
        "invalid access token",
        "authentication failed",
        "authentication fails",
        "鉴权失败",
        "鉴权错误",
        "认证失败",
        "无效的令牌",
    ),
    frozenset({"invalid_api_key", "invalidapikey"}),
)
"""The key or token is wrong, missing or expired (a Gemini 400, a status-less envelope)."""

MODEL_NOT_FOUND: Final = Family(
    "model_not_found",
    "upstream.invalid_request",
    False,
    frozenset({"upstream.unavailable", "upstream.invalid_response"}),
    ("model_not_found", "no such model", "unknown model", "模型不存在"),
    frozenset({"model_not_found", "modelnotfound"}),
    MODEL_MISSING.compiled(),
    ("not found", "does not exist", "not exist"),
)
"""The model the request named does not exist here: a request to fix, not a server to
wait for (a 404 with a server-error type, or no status)."""

OVERLOAD: Final = Family(
    "overload",
    "upstream.overloaded",
    True,
    _PLAIN,
    (
        "overloaded",
        "over capacity",
        "at capacity",
        "saturated",
        "server is busy",
        "service is busy",
        "负载已饱和",
        "服务忙",
        "繁忙",
        "访问量过大",
        "服务容量不足",
    ),
    frozenset({"engine_overloaded", "overloaded_error"}),
)
"""The model or server is overloaded or at capacity: wait and retry (in words, or a 500)."""

RATE_LIMIT: Final = Family(
    "rate_limit",
    "upstream.rate_limited",
    True,
    frozenset({"upstream.unavailable", "upstream.invalid_response"}),
    (
        "rate limit",
        "ratelimit",
        "too many requests",
        "request limit reached",
        "requests per minute",
        "enqueued token limit",  # OpenAI Batch: the organisation's queued tokens
        "请求过多",
        "请求过于频繁",
        "频率超限",
        "并发数过高",
        "流控超限",
        "限流",
    ),
    frozenset({"throttling", "throttling.ratequota", "throttling.allocationquota"}),
)
"""Too many requests, said in words where no status (or a server error's) came with them."""

UNSUPPORTED: Final = Family(
    "unsupported",
    "upstream.invalid_request",
    False,
    frozenset({"upstream.unavailable", "upstream.invalid_response"}),
    (
        "does not support tools",
        "does not support tool",
        "doesn't support tools",
        "does not support function calling",
        "tools are not supported",
        "tool use is not supported",
        "function calling is not supported",
        "does not support images",
        "does not support image input",
        "does not support vision",
    ),
)
"""The model lacks a capability the request asked for (tools, images): a request to change,
not a server to wait for (Ollama sends it as a 400 typed ``api_error``)."""

INVALID_ARGUMENT: Final = Family(
    "invalid_argument",
    "upstream.invalid_request",
    False,
    frozenset({"upstream.unavailable", "upstream.invalid_response"}),
    ("client specified an invalid argument", "invalid argument", "invalid request:"),
    # xAI puts gRPC's description of INVALID_ARGUMENT in its "code" member
    frozenset({"invalid_argument", "client specified an invalid argument"}),
)
"""The server says the request itself is wrong, where no status (or a server error's type)
came with it: gRPC's INVALID_ARGUMENT in words (xAI's ``{"code": "Client specified an
invalid argument", ...}``), Cohere's ``invalid request: ...``."""

UNREACHABLE: Final = Family(
    "unreachable",
    "upstream.unavailable",
    True,
    frozenset({"upstream.invalid_request", "upstream.invalid_response"}),
    (
        "upstream connect error",
        "no healthy upstream",
        "bad gateway",
        "upstream request timeout",
        "upstream timed out",
        "failed to connect to upstream",
        "apiconnectionerror",
    ),
)
"""A gateway or proxy could not reach the model behind it (its own envelope, any status)."""

FAMILIES: Final = (
    BILLING,
    CONTENT_FILTER,
    CONTEXT,
    AUTH,
    MODEL_NOT_FOUND,
    OVERLOAD,
    RATE_LIMIT,
    UNSUPPORTED,
    INVALID_ARGUMENT,
    UNREACHABLE,
)
"""The families, first match wins: a spent balance that also says "rate limit" is a spent
balance; a filter that names the context is a filter."""

_OVERRIDABLE: Final = frozenset(code for family in FAMILIES for code in family.over)


def reread(code: str, retryable: bool, facts: Facts) -> tuple[str, bool]:
    """The answer the wording gives when ``code`` is one a family overrides, else as given.

    A family whose answer is the one given (same code and ``retryable``) changes nothing.
    """
    if code not in _OVERRIDABLE:
        return code, retryable
    for family in FAMILIES:
        if code in family.over and family.says(facts):
            if family.code == code and family.retryable == retryable:
                return code, retryable
            return family.code, family.retryable
    return code, retryable


# -- waits said in words --------------------------------------------------------------------

_WAIT: Final = WAIT_IN_WORDS.compiled()
_WAIT_UNITS: Final = {"毫秒": 0.001, "秒": 1.0, "秒钟": 1.0, "分钟": 60.0, "分": 60.0}
MAX_WAIT: Final = 86400.0
"""The longest wait read from words (a day): a larger number is no wait a caller can use."""


def wait_in_words(text: str) -> float | None:
    """Seconds to wait when a Chinese message says so ("请 20 秒后重试", "1分钟后再试").

    ``text`` is the lower-cased message cut to ``MAX_MESSAGE``; the pattern runs only when
    "后" is in it. The wait is finite, at least 0 and at most ``MAX_WAIT``.
    """
    if "后" not in text:
        return None
    match = _WAIT.search(text)
    if match is None or (match.start() > 0 and text[match.start() - 1].isdigit()):
        return None  # none, or the tail of a longer run of digits: no number of seconds
    seconds = float(match["n"]) * _WAIT_UNITS[match["unit"]]
    return min(max(seconds, 0.0), MAX_WAIT)


# -- finish reasons nobody listed ------------------------------------------------------------------

_KNOWN_FINISH: Final = frozenset(
    {"stop", "length", "tool_calls", "content_filter", "function_call", "eos", "end_turn"}
    | {"stop_sequence", "tool_use", "null", "none", ""}
)
_FINISH_WORDS: Final = (
    (
        ("malformed_function", "malformed_tool", "invalid_function", "invalid_tool"),
        "output.invalid_tool_arguments",
    ),
    (("unexpected_tool", "unknown_tool"), "output.unknown_tool"),
    (("malformed", "invalid"), "output.malformed"),
    (("refus",), "policy.model_refusal"),
    (
        ("safety", "filter", "block", "prohibited", "recitation", "spii", "moderat", "guardrail"),
        "policy.content_filtered",
    ),
    (
        ("length", "max_tokens", "max_output", "token_limit", "token limit", "tokens"),
        "output.truncated",
    ),
    (("error", "fail", "abort"), "upstream.unavailable"),
)
"""Words that name a failure in a finish reason nobody listed, first family found wins."""


def finish_failure(reason: str) -> str | None:
    """The code an unlisted finish reason names by its words, or ``None``.

    A proxy in front of Gemini passes ``malformed_function_call``; OpenRouter ends a failed
    stream with ``error``; other servers say ``SAFETY`` or ``token_limit``. A reason in none
    of these families (or a known one: ``stop``, ``tool_calls``, ...) is not a failure.
    """
    low = reason[:64].lower()
    if low in _KNOWN_FINISH:
        return None
    for words, code in _FINISH_WORDS:
        if any(word in low for word in words):
            return code
    return None
