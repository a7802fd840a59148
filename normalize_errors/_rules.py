"""How adapters decide: facts in, rule table, harness error out.

An adapter reads what the vendor said into ``Facts`` (status, headers, the vendor's own
codes, message, request id, ...). Its mapping table is a tuple of ``Rule`` rows, tried in
order; the first row whose conditions all hold gives the code and ``retryable``. When no
row matches, the HTTP status decides (``_signals.status_code``). ``build`` then makes the
error: ``retry_after`` from the headers or the message, a ``limit`` read from a
context-window message, and ``upstream`` with the vendor's facts.

Wording shared by all providers (context-window overflow, retry hints in messages) is
matched here, once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple

from . import _stated
from ._patterns import CONTEXT_LIMITS, RETRY_HINT, RULE_ESCAPE, rule_pattern
from ._readers import extra_rules
from ._redact import redact, sanitize
from ._registry import code_info
from ._signals import (
    MAX_MESSAGE,
    field,
    html_title,
    retry_after,
    sequence,
    short,
    stainless_retry_count,
    status_code,
)
from .exceptions import Deferred, HarnessError, class_for_code

__all__ = [
    "CONTEXT_WORDING",
    "Facts",
    "Rule",
    "StopRow",
    "attempts_of",
    "build",
    "class_entry",
    "classify",
    "context_limit",
    "needles_of",
    "offered_names",
    "retry_hint",
    "stop_error",
    "tool_call_problem",
]


class Facts:
    """What an upstream said about one failure, as read by an adapter."""

    __slots__ = (
        "_message",
        "attempts",
        "body",
        "exception",
        "extra",
        "headers",
        "ids",
        "in_stream",
        "lowered",
        "provider",
        "request_id",
        "status",
        "stop_reason",
        "text",
        "vendor_code",
        "vendor_type",
    )

    def __init__(
        self,
        provider: str,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        text: str = "",
        message: str | None = None,
        vendor_code: str | None = None,
        vendor_type: str | None = None,
        ids: Iterable[Any] = (),
        request_id: str | None = None,
        exception: str | None = None,
        stop_reason: str | None = None,
        in_stream: bool = False,
        attempts: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        self.provider = provider
        self.status = status
        self.headers: Mapping[str, str] = headers or {}
        self.body = body
        self.text = text
        self.message = message
        self.vendor_code = vendor_code
        self.vendor_type = vendor_type
        found = {str(i).lower() for i in ids if i is not None and i != ""}
        for value in (vendor_code, vendor_type):
            if value:
                found.add(value.lower())
        self.ids: frozenset[str] = frozenset(found)
        self.request_id = request_id
        self.exception = exception
        self.stop_reason = stop_reason
        self.in_stream = in_stream
        self.attempts = attempts
        self.extra: Mapping[str, Any] = extra or {}

    @property
    def message(self) -> str | None:
        """The vendor's message; setting it also sets ``lowered``, which rules match."""
        return self._message

    @message.setter
    def message(self, value: str | None) -> None:
        self._message = value
        self.lowered = "" if not value else value[:MAX_MESSAGE].lower()


class Rule(NamedTuple):
    """One row of a provider's mapping table: conditions, then the code they mean.

    Every condition given must hold: ``status`` (the HTTP status is one of these),
    ``ids`` (one of the vendor's codes, types or reasons, in lower case, is one of these)
    and ``message`` (the pattern is found in the vendor's message, lower-cased: write
    patterns in lower case). ``retryable`` of ``None`` keeps what the status says (408, 409,
    429 and 5xx are retryable).
    """

    code: str
    when: str
    retryable: bool | None = None
    status: frozenset[int] = frozenset()
    ids: frozenset[str] = frozenset()
    message: re.Pattern[str] | None = None
    parts: tuple[tuple[str, re.Pattern[str]], ...] | None = None
    """``message`` split into its alternatives, each with the literal text it starts with:
    an alternative runs only when its literal occurs (see ``needles_of``)."""

    def matches(self, facts: Facts) -> bool:
        """Whether every condition of the row holds for ``facts``."""
        if self.status and facts.status not in self.status:
            return False
        if self.ids and self.ids.isdisjoint(facts.ids):
            return False
        if self.message is None:
            return True
        text = facts.lowered
        if self.parts is None:
            return self.message.search(text) is not None
        for needle, part in self.parts:  # noqa: SIM110 - faster than any() on a generator
            if needle in text and part.search(text) is not None:
                return True
        return False


class StopRow(NamedTuple):
    """A row of a provider's stop-reason table: a failure signal in a successful result.

    ``example`` is a minimal result (plain JSON) showing the signal, and ``tools`` the
    offered tools it is checked against; a test runs every example through ``diagnose``
    and the docs print the rows, so the table cannot drift from what the adapter does.
    """

    signal: str
    code: str
    example: dict[str, Any]
    tools: list[Any] | None = None


def rule(
    code: str,
    when: str,
    *,
    retryable: bool | None = None,
    status: Iterable[int] = (),
    ids: Iterable[str] = (),
    message: str | None = None,
) -> Rule:
    """A ``Rule`` from plain values.

    ``message`` is matched against the lower-cased message, so it must be written in lower
    case (escapes such as ``\\d`` aside); a case-sensitive pattern on lowered text is many
    times faster than a case-insensitive one.
    """
    if message is not None:
        literal = RULE_ESCAPE.compiled().sub("", message)
        if literal != literal.lower():
            raise ValueError(f"rule patterns are matched on lower-cased text: {message!r}")
    return Rule(
        code,
        when,
        retryable,
        frozenset(status),
        frozenset(i.lower() for i in ids),
        None if message is None else rule_pattern(message),
        None if message is None else _parts(message),
    )


def _parts(pattern: str) -> tuple[tuple[str, re.Pattern[str]], ...] | None:
    """Each top-level alternative of ``pattern`` with its literal prefix, or ``None``."""
    needles = needles_of(pattern)
    if needles is None:
        return None
    return tuple(
        (needle, rule_pattern(alternative))
        for needle, alternative in zip(needles, _alternatives(pattern), strict=True)
    )


_SPECIAL: Final = frozenset(".^$*+?{}[]()|\\")


def needles_of(pattern: str) -> tuple[str, ...] | None:
    """The literal prefix of each top-level alternative of ``pattern``, or ``None``.

    A match of the pattern must contain one of them, so when none occurs in a text the
    pattern need not run: a handful of substring tests cost a fraction of one search
    through a long alternation. ``None`` when some alternative has no literal prefix of
    three characters or more (then the pattern always runs).
    """
    needles = []
    for alternative in _alternatives(pattern):
        literal = _literal_prefix(alternative)
        if len(literal) < 3:
            return None
        needles.append(literal)
    return tuple(needles)


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of ``pattern`` (``|`` outside groups and classes)."""
    depth, start, found = 0, 0, []
    escaped = False
    for index, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "|" and depth == 0:
            found.append(pattern[start:index])
            start = index + 1
    found.append(pattern[start:])
    return found


def _literal_prefix(alternative: str) -> str:
    """The text an alternative surely starts with (after a leading ``\\b``)."""
    out: list[str] = []
    index = 2 if alternative.startswith("\\b") else 0
    while index < len(alternative):
        char = alternative[index]
        if char == "\\":
            nxt = alternative[index + 1 : index + 2]
            if not nxt or nxt.isalnum():  # \d, \s, \b, ...: not a literal
                break
            char, step = nxt, 2
        elif char in _SPECIAL:
            if char in "?*{" and out:  # the last character was optional
                out.pop()
            break
        else:
            step = 1
        following = alternative[index + step : index + step + 1]
        if following in ("?", "*", "{"):
            break
        out.append(char)
        index += step
    return "".join(out)


Entry = tuple[str, "tuple[str, bool] | None"]
_ENTRIES: dict[tuple[type, str], Entry | None] = {}


def class_entry(
    exc: BaseException, classes: Mapping[str, tuple[str, bool] | None], root: str
) -> Entry | None:
    """The first class of ``exc``'s MRO named in ``classes`` whose module is under ``root``.

    Returns ``(class name, fixed (code, retryable) or None)``; decided once per type. An
    SDK's subclasses (anthropic's ~130 error-code classes, a user's own subclass) resolve
    to the nearest class the table names.
    """
    cls = type(exc)
    key = (cls, root)
    if key in _ENTRIES:
        return _ENTRIES[key]
    found: Entry | None = None
    for klass in cls.__mro__:
        module = getattr(klass, "__module__", None)
        in_root = isinstance(module, str) and module.partition(".")[0] == root
        if in_root and klass.__name__ in classes:
            found = klass.__name__, classes[klass.__name__]
            break
    _ENTRIES[key] = found
    return found


def attempts_of(exc: BaseException) -> int | None:
    """Attempts an OpenAI or Anthropic SDK made, from its last request's retry count."""
    request = field(exc, "request")
    if request is None:
        request = field(field(exc, "response"), "_request")
    count = stainless_retry_count(field(request, "headers"))
    return None if count is None else count + 1


def classify(table: Iterable[Rule], facts: Facts) -> tuple[str, bool]:
    """The code and ``retryable`` of the first matching row, else of the HTTP status.

    Rules added with ``normalize_errors.add_rules`` for ``facts.provider`` are tried first.
    """
    added = extra_rules(facts.provider)
    for row in (*added, *table) if added else table:
        if row.matches(facts):
            if row.retryable is not None:
                return row.code, row.retryable
            by_status, retryable = status_code(facts.status)
            if by_status == row.code:
                return row.code, retryable
            return row.code, code_info(row.code).retryable
    return status_code(facts.status)


# -- wording shared by providers and OpenAI-compatible servers ------------------------------

CONTEXT_WORDING: Final = (
    r"context[_ ]length[_ ]exceeded|maximum context length|context window|context limit"
    r"|prompt is too long|input is too long|too many (?:input )?tokens"
    r"|input token count.{0,40}exceeds|exceeds? the (?:maximum|max)(?: number of)? "
    r"(?:allowed )?(?:input )?tokens|reduce the length of the messages"
    r"|max_tokens must be at least 1, got -\d|too large for model with \d{1,12} maximum context"
    # families: a context size or length that the input exceeds or overflows (llama.cpp,
    # LM Studio, Ollama, vLLM), input or prompt lengths over a stated range (TGI, DashScope)
    r"|context size|context_size|context the overflows|context overflow|context length of only"
    r"|exceeds the available context|exceeds the context|exceed the context"
    r"|maximum model length|maximum sequence length|max_model_len"
    r"|range of input length|`inputs` tokens \+ `max_new_tokens`|`inputs` must have less than"
    r"|prompt too long|prompt (?:length |tokens? )?exceeds?|input (?:length |tokens? )?exceeds?"
    r"|input length (?:is )?too long|messages? (?:is |are )?too long"
)
"""How providers and OpenAI-compatible servers say the input is over the context window."""

_LIMIT_WORDS: Final = (
    " > ",
    "context limit: ",
    "input token count (",
    "maximum context length is ",
    "maximum context length is ",
    "contains ",
    "trying to keep the first ",
    "must be <= ",
    "must have less than ",
    "exceeds the available context size (",
    "range of input length ",
)
"""A literal each pattern of ``CONTEXT_LIMITS`` needs: a message without it skips the pattern."""
_LIMITS: Final = tuple(
    zip(_LIMIT_WORDS, (pattern.compiled() for pattern in CONTEXT_LIMITS), strict=True)
)


def context_limit(message: str | None) -> dict[str, Any] | None:
    """The ``limit`` member a context-window message states, if it states one."""
    if not message:
        return None
    text = message[:MAX_MESSAGE].lower()  # the patterns are lower case: no (?i), faster
    for word, pattern in _LIMITS:
        match = pattern.search(text) if word in text else None
        if match is not None and match.start() > 0 and text[match.start() - 1].isdigit():
            match = None  # the tail of a longer run of digits: no token count
        if match is not None:
            limit: dict[str, Any] = {"name": "context_tokens", "value": int(match["value"])}
            groups = match.groupdict()
            if groups.get("observed") is not None:
                limit["observed"] = int(match["observed"]) + int(groups.get("more") or 0)
            return limit
    return None


_HINT_ANCHORS: Final = ("try again in ", "retry in ", "retry after ")
_HINT: Final = RETRY_HINT.compiled()


def retry_hint(message: str | None) -> float | None:
    """Seconds to wait when a message says so: "Please try again in 1.2s", "976ms", ...

    OpenAI, Groq and Azure put the wait in the message ("Please try again in 20s",
    "Please retry after 6 seconds", "Try again in 50 seconds") rather than a header.
    """
    if not message:
        return None
    text = message[:MAX_MESSAGE].lower()
    for anchor in _HINT_ANCHORS:
        at = text.find(anchor)
        if at == -1:
            continue
        match = _HINT.match(text, at + len(anchor))
        if match is None:
            continue
        number = float(match["n"])
        unit = match["unit"]
        if unit.startswith("m") and unit != "m" and not unit.startswith("min"):
            return number / 1000.0  # ms, millisecond(s)
        if unit == "m" or unit.startswith("min"):
            return number * 60.0
        return number
    return None


# -- building the error ------------------------------------------------------------------------

KEEP_HEADERS: Final = (
    "retry-after",
    "retry-after-ms",
    "x-should-retry",
    "x-ratelimit-",
    "anthropic-ratelimit-",
    "x-request-id",
    "request-id",
    "apim-request-id",
    "cf-ray",
    "server",
)
"""Response headers kept in ``upstream.headers`` (names starting with one of these)."""


def kept_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers worth keeping for diagnosis: retry hints, rate limits, ids, server."""
    return {k: v for k, v in headers.items() if k.startswith(KEEP_HEADERS)}


def upstream_of(facts: Facts) -> dict[str, Any]:
    """The ``upstream`` member for ``facts``: provider first, then what the vendor said.

    Every text is redacted and every nested value the vendor sent is sanitized here, so the
    result can be stored as it is.
    """
    up: dict[str, Any] = {"provider": facts.provider}
    if facts.status is not None:
        up["status"] = facts.status
    code = facts.vendor_code or facts.vendor_type
    if code:
        up["code"] = redact(short(code, 256))
    if facts.vendor_type:
        up["type"] = redact(short(facts.vendor_type, 256))
    if facts.stop_reason:
        up["stop_reason"] = redact(short(facts.stop_reason, 256))
    if facts.message:
        up["message"] = redact(short(facts.message))
    if facts.request_id:
        up["request_id"] = redact(short(facts.request_id, 256))
    if facts.exception:
        up["exception"] = facts.exception
    if facts.in_stream:
        up["in_stream"] = True
    headers = kept_headers(facts.headers)
    if headers:
        up["headers"] = {name: redact(value) for name, value in headers.items()}
    for key, value in facts.extra.items():
        up[redact(short(str(key), 256))] = sanitize(value)
    if facts.text and facts.body is None and not facts.message:
        up["body"] = redact(short(facts.text, 1024))
    return up


def detail_of(facts: Facts) -> str:
    """A one-line account for people: the vendor's message, a page title, or the status."""
    if facts.message:
        return short(" ".join(facts.message.split()), 1024)
    title = html_title(facts.text) if facts.text else None
    if title:
        return f"{facts.provider}: HTTP {facts.status}: {title}"
    if facts.text and facts.body is None:
        first = facts.text.strip().splitlines()[0] if facts.text.strip() else ""
        if first and not first.lstrip().startswith("<"):
            return f"{facts.provider}: HTTP {facts.status}: {short(first, 200)}"
    if facts.status is not None:
        return f"{facts.provider}: HTTP {facts.status} error."
    return f"{facts.provider}: {facts.exception or 'error'}."


def build(
    code: str,
    retryable: bool,
    facts: Facts,
    *,
    detail: str | None = None,
    model_feedback: str | None = None,
    limit: Mapping[str, Any] | None = None,
    location: Mapping[str, Any] | None = None,
) -> HarnessError:
    """The typed error for ``code``, with the retry hints, limit and upstream of ``facts``."""
    cls = class_for_code(code)
    wait = retry_after(facts.headers) if facts.headers else None
    if wait is None and code in ("upstream.rate_limited", "upstream.overloaded"):
        wait = retry_hint(facts.message)
    if limit is None and code == "context.window_exceeded":
        limit = context_limit(facts.message) or _stated.context_numbers(facts.extra)
    elif limit is None and code == "upstream.rate_limited":
        limit, never = _stated.rate_limit(facts.lowered, facts.headers)
        if never:
            retryable = False  # a quota of 0, or one request over the whole allowance
    if model_feedback is None and code in _stated.TOOL_CODES:
        model_feedback, stated = _stated.tool_failure(code, facts.message, facts.extra)
        location = location or stated
    err = cls(
        detail if detail is not None else detail_of(facts),
        code=code,
        retryable=retryable,
        model_recoverable=code_info(code).model_recoverable,
        model_feedback=model_feedback,
        retry_after=wait,
        attempts=facts.attempts,
        limit=limit,
        location=location,
    )
    err._upstream = Deferred(upstream_of, facts)  # built, redacted and bounded on first use
    return err


def stop_error(
    provider: str,
    code: str,
    reason: str,
    detail: str,
    *,
    request_id: str | None = None,
    retryable: bool | None = None,
    model_feedback: str | None = None,
    limit: Mapping[str, Any] | None = None,
    **extra: Any,
) -> HarnessError:
    """The error a failure stop reason means, for a call that itself succeeded.

    ``retryable`` defaults to the registry's value for ``code``: only ``output.empty`` is
    worth asking again unchanged. ``extra`` members that are empty are left out.
    """
    facts = Facts(
        provider,
        stop_reason=reason,
        request_id=request_id,
        extra={k: v for k, v in extra.items() if v},
    )
    chosen = code_info(code).retryable if retryable is None else retryable
    return build(code, chosen, facts, detail=detail, model_feedback=model_feedback, limit=limit)


# -- tool calls in results ---------------------------------------------------------------------


def offered_names(tools: Any) -> frozenset[str] | None:
    """The names of the offered tools, from names or OpenAI/Anthropic/Gemini tool specs."""
    if tools is None:
        return None
    try:
        offered = list(tools)
    except TypeError:  # not a collection of tools: nothing can be checked against it
        return None
    names: set[str] = set()
    for tool in offered:
        if isinstance(tool, str):
            names.add(tool)
            continue
        name = field(field(tool, "function"), "name") or field(tool, "name")
        if isinstance(name, str):
            names.add(name)
            continue
        for decl in sequence(field(tool, "function_declarations", "functionDeclarations")):
            inner = field(decl, "name")
            if isinstance(inner, str):
                names.add(inner)
    return frozenset(names)


def tool_call_problem(
    name: Any, arguments: Any, call_id: Any, offered: frozenset[str] | None, provider: str
) -> HarnessError | None:
    """``output.unknown_tool`` or ``output.invalid_tool_arguments`` for one tool call."""
    facts = Facts(provider)
    location: dict[str, Any] = {}
    if isinstance(name, str):
        location["tool_name"] = name
    if isinstance(call_id, str):
        location["tool_call_id"] = call_id
    if offered is not None and isinstance(name, str) and name not in offered:
        listing = ", ".join(sorted(offered)) or "none"
        return build(
            "output.unknown_tool",
            False,
            facts,
            detail=f"The model called the tool {name!r}, which was not offered.",
            model_feedback=f"There is no tool named {name!r}. The tools you can call are: "
            f"{listing}.",
            location=location,
        )
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            return build(
                "output.invalid_tool_arguments",
                False,
                facts,
                detail=f"The arguments of the call to {name!r} are not valid JSON ({reason}).",
                model_feedback=f"The arguments you gave to the tool {name!r} are not valid "
                f"JSON ({reason}). Call it again with one JSON object.",
                location=location,
            )
        arguments = value
    if arguments is not None and not isinstance(arguments, dict):
        return build(
            "output.invalid_tool_arguments",
            False,
            facts,
            detail=f"The arguments of the call to {name!r} are not a JSON object.",
            model_feedback=f"The arguments of the tool {name!r} must be one JSON object.",
            location=location,
        )
    return None
