"""How adapters decide: facts in, rule table, harness error out.

An adapter reads what the vendor said into ``Facts`` (status, headers, the vendor's own
codes, message, request id, ...). Its mapping table is a tuple of ``Rule`` rows, tried in
order; the first row whose conditions all hold gives the code and ``retryable``. When no
row matches, the HTTP status decides (``_registry.status_code``). ``build`` then makes the
error: ``retry_after`` from the headers or the message, a ``limit`` read from a
context-window message, and ``upstream`` with the vendor's facts.

Wording shared by all providers (context-window overflow, retry hints in messages) is
matched here, once.
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, NamedTuple

from .._base._http_wire import (
    MAX_MESSAGE,
    html_title,
    parse_duration,
    retry_after,
    short,
    stainless_retry_count,
)
from .._base._patterns import CONTEXT_LIMITS, RETRY_HINT, RULE_ESCAPE, rule_pattern
from .._base._safe_copy import MAX_INT_BITS
from .._base._safe_read import field, integer, sequence
from .._model._code_classes import class_for_code
from .._model._exceptions import HarnessError, _finite_wait, extend_upstream, lead_upstream
from .._model._registry import code_info, status_code
from . import _envelopes, _stated_limits, _tool_refusals, _walls, _wording
from ._readers import extra_rules
from ._wording import CONTEXT_COUNT, CONTEXT_COUNT_WORDS, CONTEXT_WORDS

__all__ = [
    "CONTEXT_COUNT",
    "CONTEXT_COUNT_WORDS",
    "CONTEXT_WORDS",
    "Facts",
    "Rule",
    "StopRow",
    "Table",
    "Usage",
    "add_upstream",
    "attempts_of",
    "build",
    "classify",
    "context_limit",
    "decide",
    "offered_names",
    "read_usage",
    "retry_hint",
    "stop_error",
    "tool_call_problem",
    "with_stated_status",
]


@dataclasses.dataclass(slots=True, kw_only=True)
class Facts:
    """What an upstream said about one failure, as read by an adapter.

    Given by name, and made once, when everything read is known: a body reader returns the
    members it found (a dict), and ``facts_of`` makes the facts from them and the rest. Facts
    are not changed once made: a step that learns more makes new ones
    (``dataclasses.replace``). (Not frozen: a frozen dataclass's ``__init__`` sets each of its
    twenty fields through ``object.__setattr__``, which took longer than reading the failure.)
    It lives only while the error is made: ``build`` reads every member of the error from it
    (``retry_after``, ``attempts``, ``limit``, ``detail``, ``upstream``) and lets it go, so the
    error holds no vendor object but its ``__cause__``. ``lowered`` and ``ids`` are derived
    when the facts are made.
    """

    provider: str
    status: int | None = None
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """The response headers, a plain dict with lower-case names (``lower_headers``): the
    vendor's own headers object is not kept."""
    body: Any = None
    text: str = ""
    message: str | None = None
    """The vendor's message (rules match ``lowered``, its lower-case form)."""
    vendor_code: str | None = None
    """The vendor's error code (``rate_limit_exceeded``, ``RESOURCE_EXHAUSTED``, ...)."""
    vendor_type: str | None = None
    """The vendor's error type (``invalid_request_error``, ``overloaded_error``, ...)."""
    more_ids: tuple[Any, ...] = ()
    """More codes, types and reasons the vendor gave (an Azure inner code, a quota id)."""
    request_id: str | None = None
    """The id the vendor gave in the body or as the SDK's attribute (``reported_request_id``
    prefers the ``id_headers``)."""
    id_headers: tuple[str, ...] = ()
    exception: str | None = None
    source: BaseException | None = None
    stop_reason: str | None = None
    in_stream: bool = False
    attempts: int | None = None
    wait: float | None = None
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Members kept in ``upstream``: the vendor's own (its body's details, ids, links)."""
    lowered: str = dataclasses.field(init=False, repr=False)
    """The message in lower case, cut to ``MAX_MESSAGE`` (rules match this)."""
    ids: frozenset[str] = dataclasses.field(init=False, repr=False)
    """Every code, type and reason the vendor gave, in lower case (rules match these)."""

    def __post_init__(self) -> None:
        message = self.message
        self.lowered = "" if not message else message[:MAX_MESSAGE].lower()
        names = {str(i).lower() for i in self.more_ids if i is not None and i != ""}
        if self.vendor_code:
            names.add(self.vendor_code.lower())
        if self.vendor_type:
            names.add(self.vendor_type.lower())
        self.ids = frozenset(names)

    @property
    def reported_request_id(self) -> str | None:
        """The first of the vendor's ``id_headers`` present, else ``request_id`` (in the
        body, or as the SDK's attribute): the header is what its support asks for."""
        headers = self.headers
        for name in self.id_headers:
            if headers.get(name):
                return headers[name]
        return self.request_id


class Rule(NamedTuple):
    """One row of a provider's mapping table: conditions, then the code they mean.

    Every condition given must hold: ``status`` (the HTTP status is one of these),
    ``ids`` (one of the vendor's codes, types or reasons, in lower case, is one of these),
    ``words`` (one of these texts occurs in the vendor's message, lower-cased) and
    ``message`` (the pattern is found in the lower-cased message: write patterns in lower
    case). ``retryable`` of ``None`` keeps what the status says (408, 409, 429 and 5xx are
    retryable). Plain ``words`` cost a substring test each, so the library's own rows say
    what they look for as words, and give a pattern only where words cannot say it (then
    behind words, so the pattern runs only on a message that can match).
    """

    code: str
    when: str
    retryable: bool | None = None
    status: frozenset[int] = frozenset()
    ids: frozenset[str] = frozenset()
    message: re.Pattern[str] | None = None
    words: tuple[str, ...] = ()
    id_words: tuple[str, ...] = ()
    """Lower-case substrings, one of which some of the vendor's further ids (``more_ids``: a
    quota id such as ``GenerateRequestsPerDayPerProjectPerModel``) must hold."""
    final: bool = False
    """The families of wording never reread this row's answer (``classify``)."""
    owners: frozenset[str] = frozenset()
    """The providers whose row it is: its data file's provider, its aliases and the
    ``vendors`` it names (``leaving_out`` switches a provider's rows off)."""
    tier: str = ""
    """``vendor``, ``wording``, ``status`` or ``generic``: what kind of fact the row reads."""
    source: str = ""
    """Where the fact comes from: a URL, a cassette, a corpus case (``corpus:<id>``) or a test."""

    def matches(self, facts: Facts) -> bool:
        """Whether every condition of the row holds for ``facts``."""
        if self.ids and self.ids.isdisjoint(facts.ids):
            return False
        return self.holds(facts)

    def holds(self, facts: Facts) -> bool:
        """Whether the row's conditions other than ``ids`` hold for ``facts`` (``first_match``
        calls this only on rows whose ids it already found among the vendor's)."""
        if self.status and facts.status not in self.status:
            return False
        if self.words:
            text = facts.lowered
            for word in self.words:
                if word in text:
                    break
            else:
                return False
        if self.id_words and not _holds_word(facts.more_ids, self.id_words):
            return False
        return self.message is None or self.message.search(facts.lowered) is not None


def _holds_word(names: tuple[Any, ...], words: tuple[str, ...]) -> bool:
    """Whether one of ``names`` (the first 256 characters, lower-cased) holds one of ``words``."""
    for name in names:
        if isinstance(name, str):
            low = name[:256].lower()
            if any(word in low for word in words):
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
    words: Iterable[str] = (),
    message: str | None = None,
    id_words: Iterable[str] = (),
    final: bool = False,
    owners: Iterable[str] = (),
    tier: str = "",
    source: str = "",
) -> Rule:
    """A ``Rule`` from plain values.

    ``words`` and ``message`` are matched against the lower-cased message, so they must be
    written in lower case (escapes such as ``\\d`` aside); a case-sensitive pattern on lowered
    text is many times faster than a case-insensitive one. A row with ``words`` runs its
    ``message`` pattern only on a message holding one of the words.

    Raises:
        ValueError: ``words`` or ``message`` has an upper-case letter.
    """
    found = tuple(words)
    for word in found:
        if word != word.lower():
            raise ValueError(f"rule words are matched on lower-cased text: {word!r}")
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
        found,
        tuple(word.lower() for word in id_words),
        final,
        frozenset(owners),
        tier,
        source,
    )


def attempts_of(exc: BaseException) -> int | None:
    """Attempts an OpenAI or Anthropic SDK made, from its last request's retry count."""
    request = field(exc, "request")
    if request is None:
        request = field(field(exc, "response"), "_request")
    count = stainless_retry_count(field(request, "headers"))
    return None if count is None else count + 1


class Table:
    """A provider's rules in order, with the index that finds the rows that can match.

    The index is built once, when the table is made: which rows name a vendor id, which an
    HTTP status, and which can match anywhere. ``first_match`` then tries only the rows a
    failure's status and ids can select, in table order, so a row's words and pattern run
    only when its status and ids already hold. A table is immutable and iterates as its rows.
    """

    __slots__ = ("_by_id", "_by_status", "_none", "rows")

    def __init__(self, *rows: Rule) -> None:
        self.rows: tuple[Rule, ...] = rows
        anywhere: list[int] = []
        by_status: dict[int, list[int]] = {}
        by_id: dict[str, list[int]] = {}
        for number, row in enumerate(self.rows):
            if row.ids:
                for name in row.ids:
                    by_id.setdefault(name, []).append(number)
            elif row.status:
                for status in row.status:
                    by_status.setdefault(status, []).append(number)
            else:
                anywhere.append(number)
        self._none: tuple[int, ...] = tuple(anywhere)
        """The rows that can match whatever the status and ids: word and pattern rows."""
        self._by_status: dict[int, tuple[int, ...]] = {
            status: tuple(sorted({*anywhere, *numbers})) for status, numbers in by_status.items()
        }
        """Per status, the rows a failure of that status can match before its ids are asked."""
        self._by_id: dict[str, tuple[int, ...]] = {k: tuple(v) for k, v in by_id.items()}

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> Rule:
        return self.rows[index]

    def __repr__(self) -> str:
        return f"Table({len(self.rows)} rows)"

    def candidates(self, status: int | None, ids: frozenset[str]) -> tuple[Rule, ...]:
        """The rows that can match a failure with ``status`` and ``ids``, in table order."""
        rows = self.rows
        return tuple(rows[n] for n in self._numbers(status, ids))

    def _numbers(self, status: int | None, ids: frozenset[str]) -> tuple[int, ...] | list[int]:
        """The numbers of the ``candidates`` rows, in order."""
        numbers = self._none if status is None else self._by_status.get(status, self._none)
        by_id = self._by_id
        named = [found for name in ids if name in by_id for found in by_id[name]]
        return sorted({*numbers, *named}) if named else numbers

    def first_match(self, facts: Facts, left_out: frozenset[str] = frozenset()) -> Rule | None:
        """The first row whose conditions all hold for ``facts``, or ``None``; a row owned
        by one of ``left_out`` is passed over (``leaving_out``)."""
        rows = self.rows
        for number in self._numbers(facts.status, facts.ids):
            row = rows[number]
            if left_out and not left_out.isdisjoint(row.owners):
                continue
            if row.holds(facts):  # the index found the row's ids among the vendor's
                return row
        return None


LEFT_OUT: Final[contextvars.ContextVar[frozenset[str]]] = contextvars.ContextVar(
    "normalize_errors_left_out", default=frozenset()
)
"""The providers whose rows ``classify`` passes over (``_tables.leaving_out`` sets it)."""


def with_stated_status(facts: Facts) -> Facts:
    """``facts``, with the status its body states standing in for a missing HTTP status
    (``_envelopes.stated_status``)."""
    if facts.status is None and facts.body is not None:
        stated = _envelopes.stated_status(facts.body)
        if stated is not None:
            return dataclasses.replace(facts, status=stated)
    return facts


def decide(table: Table, facts: Facts, *, detail: str | None = None) -> HarnessError:
    """The error ``table`` gives ``facts`` (``classify``, then ``build``), the status the body
    states standing in for a missing HTTP status."""
    facts = with_stated_status(facts)
    code, retryable = classify(table, facts)
    return build(code, retryable, facts, detail=detail)


def classify(table: Table, facts: Facts) -> tuple[str, bool]:
    """The code and ``retryable`` of ``facts``: the one reading pipeline, in this order.

    1. Rules added with ``normalize_errors.add_rules`` for ``facts.provider``.
    2. The provider's rows (``table``, from its data file and the files it reads), first
       match wins; a row without ``retryable`` keeps what the status says.
    3. The families of wording (``_wording.reread``): they reread a *plain* answer (one their
       ``over`` names: what a status alone or a generic code gives) when the message or an
       id says what happened; never a ``final`` row's answer.
    4. No row matched: the HTTP status's default (``_registry.status_code``), reread by the
       families as in 3.

    The exception class's fixed answer comes before all of these (``read_exception``), and
    ``decide`` lets the status a body states stand in for a missing HTTP status first
    (``with_stated_status``). Hints (``retry_after``, ``limit``, the quota wall) are read
    once the code is decided, in ``build``.
    """
    added = extra_rules(facts.provider)
    row = added.first_match(facts) if added is not None else None
    if row is None:
        left = LEFT_OUT.get()
        row = table.first_match(facts) if not left else table.first_match(facts, left)
    if row is None:
        code, retryable = status_code(facts.status)
    elif row.retryable is not None:
        code, retryable = row.code, row.retryable
    else:
        by_status, retryable = status_code(facts.status)
        if by_status != row.code:
            retryable = code_info(row.code).retryable
        code = row.code
    if row is not None and row.final:
        return code, retryable
    return _wording.reread(code, retryable, facts)  # the words win over a plain answer


# -- wording shared by providers and OpenAI-compatible servers ------------------------------

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


_HINT_ANCHORS: Final = ("try again in ", "try again after ", "retry in ", "retry after ")
_HINT: Final = RETRY_HINT.compiled()


def retry_hint(message: str | None) -> float | None:
    """Seconds to wait when a message says so: "Please try again in 1.2s", "976ms", ...

    OpenAI, Groq and Azure put the wait in the message ("Please try again in 20s",
    "Please retry after 6 seconds", "Try again in 50 seconds") rather than a header; a
    wait over a minute is a duration ("Please try again in 9m38.016s").
    """
    if not message:
        return None
    text = message[:MAX_MESSAGE].lower()
    for anchor in _HINT_ANCHORS:
        at = text.find(anchor)
        if at == -1:
            continue
        word = text[at + len(anchor) : at + len(anchor) + 40].split(" ", 1)[0].rstrip(".,;)")
        if word[:1].isdigit() and word[-1:].isalpha():
            found = parse_duration(word)  # 26.604s, 976ms, and compounds: 9m38.016s
            if found is not None:
                return found
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
    return _wording.wait_in_words(text)


# -- building the error ------------------------------------------------------------------------

KEEP_HEADERS: Final = (
    "retry-after",
    "retry-after-ms",
    "x-should-retry",
    "x-ratelimit-",
    "anthropic-ratelimit-",
    "anthropic-workspace-id",
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


def upstream_parts(facts: Facts) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``upstream`` member for ``facts`` in two parts: the library's own members (the
    provider's name, a status that is a plain ``int``), which lead it, then what the vendor
    said. The texts are cut here; the error's constructor redacts and bounds the vendor's
    part (``sanitize``) when it stores it, and ``build`` puts the library's own in front
    as they are: they are plain, immutable values it made. A status of any other type (an
    ``int`` subclass, a text) comes from a vendor object: it leads the vendor's part.
    """
    own: dict[str, Any] = {"provider": facts.provider}
    up: dict[str, Any] = {}
    status = facts.status
    if type(status) is int and status.bit_length() <= MAX_INT_BITS:
        own["status"] = status
    elif status is not None:
        up["status"] = status
    code = facts.vendor_code or facts.vendor_type
    if code:
        up["code"] = short(code, 256)
    if facts.vendor_type:
        up["type"] = short(facts.vendor_type, 256)
    if facts.stop_reason:
        up["stop_reason"] = short(facts.stop_reason, 256)
    if facts.message:
        up["message"] = short(facts.message)
    request_id = facts.reported_request_id
    if request_id:
        up["request_id"] = short(request_id, 256)
    if facts.exception:
        up["exception"] = facts.exception
    if facts.in_stream:
        up["in_stream"] = True
    headers = kept_headers(facts.headers)
    if headers:
        up["headers"] = headers
    for key, value in facts.extra.items():
        up[short(str(key), 256)] = value
    if facts.text and facts.body is None and not facts.message:
        up["body"] = short(facts.text, 1024)
    return own, up


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


def hints(facts: Facts, code: str) -> tuple[float | None, int | None, Mapping[str, Any] | None]:
    """``retry_after``, ``attempts`` and ``limit`` of an error of ``code``.

    A wait the provider states (``wait``; else in the body, such as Gemini's ``RetryInfo``,
    which a reader keeps as ``extra["retry_delay"]``; else ``retry-after-ms`` or
    ``Retry-After``; else in the message for rate limits and overloads) is reported whatever
    ``retryable`` says: the caller decides what to do with it.
    """
    wait = facts.wait
    if wait is None and "retry_delay" in facts.extra:  # a body's own wait (Gemini's RetryInfo)
        wait = parse_duration(facts.extra["retry_delay"])
    if wait is None and facts.headers:
        wait = retry_after(facts.headers)
    if wait is None and code in ("upstream.rate_limited", "upstream.overloaded"):
        wait = retry_hint(facts.message)
    attempts = facts.attempts
    if attempts is None and facts.source is not None:
        attempts = attempts_of(facts.source)
    limit: Mapping[str, Any] | None = None
    if code == "context.window_exceeded":
        limit = context_limit(facts.message) or _stated_limits.context_numbers(facts.extra)
    elif code == "upstream.rate_limited" and facts.headers:
        limit = _stated_limits.rate_limit_headers(facts.headers)
    return wait, attempts, limit


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
    """The typed error for ``code``, every member read from ``facts`` now.

    What cannot be read (a vendor object that raises while it is read) is left out: a hint
    is dropped, ``upstream`` names the exception type that stopped it, ``detail`` falls back
    to the code's title. The error is a snapshot: it keeps nothing of ``facts``.
    """
    if limit is None and code == "upstream.rate_limited":
        stated = _stated_limits.rate_limit_found(facts.lowered)  # it decides ``retryable`` too
        if stated is not None:
            if _stated_limits.never_met(stated):
                retryable = False  # a quota of 0, or one request over the whole allowance
            limit = _stated_limits.stated_limit(stated)
    if model_feedback is None and code in _tool_refusals.TOOL_CODES:
        model_feedback, where = _tool_refusals.tool_failure(code, facts.message, facts.extra)
        location = location or where
    wait = attempts = quota = None
    try:
        wait, attempts, hinted = hints(facts, code)
        limit = limit or hinted
    except Exception:  # a hint that cannot be read is left out
        pass
    if wait is not None and not _finite_wait(wait):
        wait = None
    try:  # the wall: what ran out, when it comes back (``_walls``)
        quota = _walls.quota_of(facts, code, retryable, wait)
    except Exception:  # a wall that cannot be read is left out
        quota = None
    own: dict[str, Any] = {}
    try:
        own, upstream = upstream_parts(facts)
    except Exception as bug:
        upstream = {
            "unreadable": f"normalize-errors could not read the facts ({type(bug).__name__})"
        }
    if detail is None:
        try:
            detail = detail_of(facts) or None
        except Exception:  # no account can be read: the title stands in
            detail = None
    info = code_info(code)
    err = class_for_code(code)(
        detail,
        code=code,
        title=info.title,
        origin=info.origin,
        retryable=retryable,
        model_recoverable=info.model_recoverable,
        model_feedback=model_feedback,
        retry_after=wait,
        attempts=attempts,
        limit=limit,
        location=location,
        upstream=upstream,
        quota=quota,
    )
    lead_upstream(err, own)  # the library's own members, not passed through the copy
    return err


def add_upstream(err: HarnessError, members: Mapping[str, Any]) -> None:
    """Add ``members`` to ``err.upstream`` (they win over the vendor's of the same name).

    Only ``members`` go through the safe copy: what ``err.upstream`` holds already has.
    """
    extend_upstream(err, members)


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
    worth asking again unchanged. ``extra`` members that are ``None`` or empty are left out
    (a number is kept, ``0`` too: ``choice=0`` names the first choice).
    """
    facts = Facts(
        provider=provider,
        stop_reason=reason,
        request_id=request_id,
        extra={k: v for k, v in extra.items() if v or isinstance(v, (int, float))},
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
        if field(tool, "type") == "namespace":  # Responses: its functions are offered
            inside = (field(inner, "name") for inner in sequence(field(tool, "tools")))
            names.update(name for name in inside if isinstance(name, str))
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
    facts = Facts(provider=provider)
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


Step = str | tuple[str, ...]
"""One step into a vendor object: a member's name, or its spellings (``field`` takes the first
one present)."""


class Usage(NamedTuple):
    """Where a provider's result states its token counts."""

    at: tuple[Step, ...]
    """The path from the result to its usage object (``("usage",)``)."""
    counts: Mapping[str, tuple[Step, ...]]
    """Each count kept, by the name ``upstream`` gives it: its path from the usage object."""


def read_usage(result: Any, where: Usage) -> dict[str, int]:
    """The token counts ``result`` states, as ``where`` says to find them; the counts it lacks
    (or gives as no whole number) are left out. A whole float (``71.0``, as Cohere's SDK types
    its counts) is kept as an int."""
    found = result
    for step in where.at:
        found = field(found, *((step,) if isinstance(step, str) else step))
    out: dict[str, int] = {}
    for name, path in where.counts.items():
        value = found
        for step in path:
            value = field(value, *((step,) if isinstance(step, str) else step))
        if type(value) is float and value.is_integer() and 0 <= value < 2**53:
            value = int(value)
        count = integer(value)
        if count is not None:
            out[name] = count
    return out
