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
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from .._base import _provider_files
from .._base._patterns import WAIT_IN_WORDS, rule_pattern

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

# -- the word lists rows name, and the families (providers/_families.toml) -------------------

CONTEXT_WORDS: Final = _provider_files.shared_words("context")
"""How providers and OpenAI-compatible servers say the input is over the context window."""

CONTEXT_COUNT_WORDS: Final = _provider_files.shared_words("context_count")
CONTEXT_COUNT: Final = _provider_files.shared_pattern("context_count")
"""The context-window wording that needs a pattern (a count between the words), behind
``CONTEXT_COUNT_WORDS``, so it runs only on a message that has one of them."""


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


def _family(data: dict[str, Any]) -> Family:
    """A ``Family`` from one ``[[families]]`` table of ``_families.toml``."""
    pattern = data.get("pattern")
    return Family(
        data["name"],
        data["code"],
        data["retryable"],
        frozenset(data["over"]),
        tuple(data["words"]),
        frozenset(name.lower() for name in data.get("ids", ())),
        None if pattern is None else rule_pattern(pattern),
        tuple(data.get("behind", ())),
    )


FAMILIES: Final = tuple(_family(data) for data in _provider_files.families_data())
"""The families, first match wins: a spent balance that also says "rate limit" is a spent
balance; a filter that names the context is a filter (their order in ``_families.toml``)."""
_BY_NAME: Final = {family.name: family for family in FAMILIES}
BILLING: Final = _BY_NAME["billing"]
"""A spent balance, quota or budget, or an account in arrears (``_walls`` reads it too)."""
CONTENT_FILTER: Final = _BY_NAME["content_filter"]
CONTEXT: Final = _BY_NAME["context"]
AUTH: Final = _BY_NAME["auth"]
MODEL_NOT_FOUND: Final = _BY_NAME["model_not_found"]
OVERLOAD: Final = _BY_NAME["overload"]
RATE_LIMIT: Final = _BY_NAME["rate_limit"]
UNSUPPORTED: Final = _BY_NAME["unsupported"]
INVALID_ARGUMENT: Final = _BY_NAME["invalid_argument"]
UNREACHABLE: Final = _BY_NAME["unreachable"]

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
