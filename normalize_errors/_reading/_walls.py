"""Reading a wall: what ran out, counted per what, when it comes back, and whether a person
must act, from every place a provider says it.

``_rules.build`` calls ``quota_of`` once the code is decided, beside the other hints
(``retry_after``, ``limit``), for an ``upstream.rate_limited`` error; the answer is the error's
``quota`` (``_quota.Quota``). The ledger of ``normalize_errors.resilience`` learns request and
token budgets from successful responses with ``budgets_of``, from the same header tables.

Where the reset is read, the first place that states one wins:

1. the rate-limit headers (``RATE_HEADERS``): the family whose remaining count is 0, else the
   one of the scope the failure names; then the IETF ``RateLimit`` field (an item whose
   remaining ``r`` is 0: its ``t``). Headers a gateway copies into its error body count as
   headers (OpenRouter's ``error.metadata.headers``);
2. Gemini's ``QuotaFailure`` violations: a per-day quota comes back at the next midnight in
   the provider's day zone (``DAY_ZONES``: America/Los_Angeles for Gemini), a per-minute one
   at its ``RetryInfo`` delay, else at the next whole minute; the last violated quota to come
   back sets the wall;
3. the message's words, by meaning: a date ("You will regain access on 2026-09-01 at 00:00
   UTC"), an amount after "reset in" and the like ("quota will reset in 3 hours", "reset
   after 161h39m41s"), "tomorrow" or "midnight" (the next midnight, in the zone the words
   name, else the provider's day zone), "next month" or "beginning of next month";
4. the wait the provider states (``retry_after``): the limit lets a call through then.

Times are measured on the provider's clock when the response's ``Date`` header came (its
``resets_in`` then holds whatever this machine's clock says), else on this machine's.
A spent balance or spending limit (the ``BILLING`` wording, HTTP 402, a spend code or words)
is scope ``spend``; with no reset stated, it is a billing wall: a person must act.

Times (the Pacific day, with or without the zone database) are ``_calendar``'s.

Every input is read without raising: a value out of shape is no value. Numbers are bounded.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from .._base import _provider_files
from .._base._calendar import (
    PACIFIC,
    Now,
    epoch_of,
    instant,
    local_time,
    next_boundary,
    next_midnight,
    next_month,
    provider_now,
)
from .._base._http_wire import lower_headers, parse_duration
from .._base._patterns import MAX_MESSAGE, MODEL_NAMED, RESET_AMOUNT, RESET_CLOCK, RESET_DATE
from .._base._safe_read import sequence
from .._model._quota import MAX_SECONDS, Quota
from ._stated_limits import rate_limit_found
from ._wording import BILLING

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._rules import Facts

__all__ = ["DAY_ZONES", "RATE_HEADERS", "Budget", "Now", "budgets_of", "quota_of"]

# -- what each provider sends, as data ------------------------------------------------------------

RATE_HEADERS: Final = _provider_files.rate_headers()
"""The rate-limit header families, one row per budget (the files' ``rate_headers``). Sources:

- ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``: OpenAI's rate-limits guide
  ("Rate limits in headers": the reset is a duration, ``1s``, ``6m0s``; the time until the
  limit is back to its initial state); Groq's rate-limits page (the same names, durations such
  as ``2m59.56s``, ``7.66s``); Azure OpenAI sends the remaining counts, and its reset as plain
  seconds (a Microsoft Q&A thread: ``x-ratelimit-reset-tokens: 0``): a duration without a
  unit is seconds.
- ``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}``:
  Anthropic's rate-limits page (the reset is an RFC 3339 instant; the limits are token buckets).
- ``X-RateLimit-{Limit,Remaining,Reset}``: OpenRouter (the reset in epoch milliseconds, copied
  into the body's ``error.metadata.headers`` on a 429: BerriAI/litellm#9035), and the many
  services that send epoch seconds or a delta: a value from 10^12 up is epoch milliseconds,
  from 10^9 epoch seconds, below that seconds from now.
- ``RateLimit-{Limit,Remaining,Reset}``: the earlier drafts of the IETF fields (delta seconds,
  or epoch seconds as GitLab sends), read by the same rule.
"""

METADATA_RESETS: Final = _provider_files.metadata_resets()
"""Resets a provider states as members of its error's metadata, and their formats: Google's
Cloud Code backend (cloudcode-pa.googleapis.com) puts ``quotaResetTimeStamp`` (an RFC 3339
instant) and ``quotaResetDelay`` (a duration) in the ``ErrorInfo`` metadata of its 429, with
the ``model`` (a 429 pasted in liuw1535/antigravity2api-nodejs#44)."""

IETF_FIELDS: Final = ("ratelimit", "ratelimit-policy")
"""draft-ietf-httpapi-ratelimit-headers (-08 to -11): ``RateLimit: "default";r=50;t=30`` (the
remaining quota ``r`` and the seconds ``t`` until it comes back, per policy) and
``RateLimit-Policy: "default";q=100;w=60`` (the quota ``q`` per window of ``w`` seconds, in
the unit ``qu``: ``requests`` by default), each a Structured Fields list."""

DAY_ZONES: Final = _provider_files.day_zones()
"""The zone whose midnight ends a provider's day, where it is not UTC. Gemini's rate-limits
page: "Requests per day (RPD) quotas reset at midnight Pacific time"."""

# -- words, by meaning ---------------------------------------------------------------------------

_SCOPE_WORDS: Final = (
    ("input_tokens", ("input tokens", "input token", "input_token", "inputtoken",
                      "request tokens", "prompt tokens")),
    ("output_tokens", ("output tokens", "output token", "output_token", "outputtoken",
                       "completion tokens")),
    ("tokens", ("tokens per", "token per", "(tpm)", "(tpd)", " tpm ", " tpd ", "limit_tpm",
                "limit_tpd", "token_count", "token count", "token rate limit", "tokens")),
    ("requests", ("requests per", "request per", "(rpm)", "(rpd)", " rpm ", " rpd ",
                  "limit_rpm", "limit_rpd", "_requests", "number of requests",
                  "request count", "requestsper")),
)  # fmt: skip
"""What ran out, in the words of the message and the vendor's ids; the first family found wins
(input and output tokens before tokens, tokens before requests)."""

_ID_SCOPES: Final = ("input_tokens", "output_tokens", "tokens", "requests")
"""Scopes a vendor names as its error's type or code (OpenAI: ``"type": "tokens"``)."""

_SPEND_WORDS: Final = (
    "spend limit", "spending limit", "spend cap", "usage limit", "api usage",
    "maximum billing", "billing capacity", "billing limit", "credit", "balance",
)  # fmt: skip
"""Words that say a spending limit or a balance ran out, beside the ``BILLING`` family (which
leaves out "exceeded your current quota": Gemini says that of its rate limits)."""

_WINDOW_WORDS: Final = (
    ("minute", ("per min", "per-min", "perminute", "(tpm)", "(rpm)", " tpm ", " rpm ",
                "limit_rpm", "limit_tpm", "/min")),
    ("day", ("per day", "per-day", "perday", "daily", "(rpd)", "(tpd)", " rpd ", " tpd ",
             "limit_rpd", "limit_tpd", "/day")),
    ("hour", ("per hour", "per-hour", "perhour", "hourly")),
    ("month", ("per month", "per-month", "permonth", "monthly")),
    ("second", ("per second", "per-second", "persecond", "per sec ")),
)  # fmt: skip

_PER_WORDS: Final = (
    ("key", ("api key", "this key", "per key", "peruser")),
    ("workspace", ("workspace",)),
    ("project", ("project", "perproject")),
    ("organization", ("organization", "org:", "org-", "(org ")),
    ("model", ("permodel", "per model", "model-specific")),
)  # fmt: skip

_AFTER_WORDS: Final = (
    "reset in ", "resets in ", "reset after ", "resets after ", "renew in ", "renews in ",
    "regain access in ", "available again in ", "restored in ", "replenished in ",
)  # fmt: skip
"""Words a relative reset follows: "quota will reset in 3 hours", "reset after 161h39m41s"."""
_AT_WORDS: Final = (
    "resets at ", "reset at ", "resets ", "regain access at ", "available again at ",
    "try again at ",
)  # fmt: skip
"""Words a time of day follows: "Access resets at 10:57 PM GMT-3", "resets 8pm"."""
_DATE_WORDS: Final = ("regain", "reset", "renew", "until", "available again", "restored")
"""Words that make a date in the message the time a wall comes back."""
_DAY_WORDS: Final = ("tomorrow", "midnight", "next day", "明天", "次日")
_MONTH_WORDS: Final = (
    "next month", "beginning of the month", "start of the month", "first of the month",
    "end of the month", "end of this month", "下个月", "下月",
)  # fmt: skip
_ZONE_WORDS: Final = (
    (PACIFIC, ("pacific", " pt ", " pt)", " pt.", " pt,", "(pt)", " pst", " pdt",
                "los angeles", "mountain view")),
    ("UTC", ("utc", "gmt")),
)  # fmt: skip
_UNITS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


# -- reading values ------------------------------------------------------------------------------


def _number(text: Any) -> float | None:
    """A finite number >= 0 from a short numeric string (or a JSON number), else ``None``."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        value = float(text)
    elif isinstance(text, str) and 0 < len(text) <= 32:
        try:
            value = float(text.strip())
        except ValueError:
            return None
    else:
        return None
    return value if 0 <= value < 1e16 else None  # NaN, inf and negative numbers are none


def _seconds(value: str, kind: str, now: Now) -> tuple[float | None, float] | None:
    """``(reset epoch or None, seconds from the response)`` of a header value of ``kind``."""
    if kind == "duration":
        found = parse_duration(value.strip()) if value.strip()[-1:].isalpha() else None
        left = found if found is not None else _number(value)
        return None if left is None else (now.after(left), left)
    if kind == "epoch":
        number = _number(value)
        if number is None:
            return None
        if number >= 1e12:  # epoch milliseconds (OpenRouter)
            return number / 1000.0, now.until(number / 1000.0)
        if number >= 1e9:  # epoch seconds
            return number, now.until(number)
        return now.after(number), number  # seconds from now
    stated = instant(value)
    return None if stated is None else (stated, now.until(stated))


# -- the reset, from each place it may be stated --------------------------------------------------

Found = dict[str, Any]
"""Members of a ``Quota`` a reader found (``reset``, ``resets_in``, ``source``, ``scope``...)."""


def _from_headers(headers: Mapping[str, str], scope: str | None, now: Now) -> Found | None:
    """The reset of the exhausted header family (remaining 0), else of the named scope's."""
    exhausted: list[Found] = []
    named: Found | None = None
    for row_scope, _, remaining, reset, kind in RATE_HEADERS:
        value = headers.get(reset)
        if not value:
            continue
        when = _seconds(value, kind, now)
        if when is None:
            continue
        found: Found = {"reset": when[0], "resets_in": when[1], "source": reset}
        if row_scope is not None:
            found["scope"] = row_scope
        if _number(headers.get(remaining)) == 0:
            exhausted.append(found)
        elif named is None and row_scope is not None and row_scope == scope:
            named = found
    if exhausted:
        same = [f for f in exhausted if f.get("scope") == scope]
        return same[0] if same else max(exhausted, key=lambda f: f["resets_in"])
    return named


def sf_list(text: str) -> list[tuple[str, dict[str, Any]]]:
    """A Structured Fields list (RFC 8941) of items with parameters, read leniently: each
    member's item (a string or a token) and its parameters (numbers, strings, tokens,
    ``True`` for a bare key). At most 16 members of a field cut to 1024 characters."""
    members: list[tuple[str, dict[str, Any]]] = []
    for raw in _split(text[:1024], ","):
        parts = _split(raw, ";")
        if not parts or len(members) >= 16:
            continue
        item = parts[0].strip().strip('"')
        params: dict[str, Any] = {}
        for part in parts[1:16]:
            key, eq, value = part.strip().partition("=")
            value = value.strip()
            if not key:
                continue
            if not eq:
                params[key] = True
            elif value.startswith('"'):
                params[key] = value.strip('"')
            else:
                number = _number(value)
                params[key] = value if number is None else number
        members.append((item, params))
    return members


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside double quotes."""
    out, start, quoted = [], 0, False
    for at, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif ch == sep and not quoted:
            out.append(text[start:at])
            start = at + 1
    out.append(text[start:])
    return [part for part in out if part.strip()]


_IETF_SCOPES: Final = {"requests": "requests", "content-bytes": None, "concurrent-requests": None}


def _ietf(headers: Mapping[str, str]) -> list[dict[str, Any]]:
    """The IETF fields' policies: ``name``, ``r`` and ``t`` (``RateLimit``), ``q``, ``w`` and
    the scope of ``qu`` (``RateLimit-Policy``), joined by the policy's name."""
    policies: dict[str, dict[str, Any]] = {}
    for name, params in sf_list(headers.get("ratelimit-policy", "")):
        unit = params.get("qu", "requests")
        policies[name] = {"name": name, "scope": _IETF_SCOPES.get(str(unit))}
        for key in ("q", "w"):
            if isinstance(params.get(key), float):
                policies[name][key] = params[key]
    for name, params in sf_list(headers.get("ratelimit", "")):
        policy = policies.setdefault(name, {"name": name, "scope": "requests"})
        for key in ("r", "t"):
            if isinstance(params.get(key), float):
                policy[key] = params[key]
    return list(policies.values())


def _from_ietf(headers: Mapping[str, str], now: Now) -> Found | None:
    spent = [p for p in _ietf(headers) if p.get("r") == 0 and "t" in p]
    if not spent:
        return None
    policy = max(spent, key=lambda p: p["t"])
    found: Found = {"reset": now.after(policy["t"]), "resets_in": policy["t"]}
    found["source"] = "RateLimit"
    if policy.get("scope"):
        found["scope"] = policy["scope"]
    spans = {1.0: "second", 60.0: "minute", 3600.0: "hour", 86400.0: "day"}
    window = spans.get(policy["w"]) if "w" in policy else None
    if window:
        found["window"] = window
    return found


_ID_WINDOWS: Final = (
    ("perday", "day"), ("perminute", "minute"), ("perhour", "hour"), ("permonth", "month"),
    ("persecond", "second"),
)  # fmt: skip
_ID_PER: Final = (("peruser", "key"), ("perproject", "project"), ("permodel", "model"))


def _from_metadata(facts: Facts, now: Now) -> Found | None:
    """A reset the error's metadata states (``METADATA_RESETS``), and its model."""
    metadata = facts.extra.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for name, kind in METADATA_RESETS:
        value = metadata.get(name)
        when = _seconds(value, kind, now) if isinstance(value, str) and value else None
        if when is not None:
            found: Found = {"reset": when[0], "resets_in": when[1], "source": name}
            if isinstance(metadata.get("model"), str):
                found["model"] = metadata["model"]
            return found
    return None


def _quota_id_words(quota_id: str) -> tuple[str | None, list[str]]:
    """The window and the ``per`` a Gemini quota id names (``...PerDayPerProjectPerModel...``)."""
    low = quota_id.lower()
    window = next((window for word, window in _ID_WINDOWS if word in low), None)
    return window, [per for word, per in _ID_PER if word in low]


def _violation_models(body: Any) -> dict[str, str]:
    """Each quota id's model, from the ``quotaDimensions`` of a Google body's violations."""
    models: dict[str, str] = {}
    error = body.get("error") if isinstance(body, dict) else None
    for detail in sequence(error.get("details") if isinstance(error, dict) else None)[:32]:
        for item in sequence(detail.get("violations") if isinstance(detail, dict) else None)[:32]:
            dims = item.get("quotaDimensions") if isinstance(item, dict) else None
            model = dims.get("model") if isinstance(dims, dict) else None
            if isinstance(item.get("quotaId"), str) and isinstance(model, str):
                models[item["quotaId"]] = model
    return models


def _from_violations(facts: Facts, now: Now, zone: str) -> Found | None:
    """The wall of Gemini's ``QuotaFailure`` violations: the last of them to come back."""
    violations = [v for v in sequence(facts.extra.get("violations"))[:32] if isinstance(v, dict)]
    if not violations:
        return None
    delay = parse_duration(facts.extra.get("retry_delay"))
    models = _violation_models(facts.body)
    walls: list[Found] = []
    for item in violations:
        quota_id = str(item["quotaId"]) if isinstance(item.get("quotaId"), str) else ""
        window, per = _quota_id_words(quota_id)
        reset: float | None
        if window == "day":
            reset, source = next_midnight(now.at, zone), "QuotaFailure"
            left = now.until(reset)
        elif window == "month":
            reset, source = next_month(now.at, zone), "QuotaFailure"
            left = now.until(reset)
        elif delay is not None:
            reset, left, source = now.after(delay), delay, "RetryInfo"
        elif window in ("minute", "hour", "second"):
            span = {"minute": 60.0, "hour": 3600.0, "second": 1.0}[window]
            reset, source = next_boundary(now.at, span), "QuotaFailure"
            left = now.until(reset)
        else:
            continue
        metric = item.get("quotaMetric") if isinstance(item.get("quotaMetric"), str) else ""
        wall: Found = {"reset": reset, "resets_in": left, "source": source}
        wall.update(window=window, per=per, scope=_scope_in(f"{metric} {quota_id}".lower()))
        if quota_id in models:
            wall["model"] = models[quota_id]
        walls.append(wall)
    return max(walls, key=lambda w: w["resets_in"]) if walls else None


def _from_words(text: str, now: Now, zone: str) -> Found | None:
    """A reset the message states in words: a date, an amount after "reset in", "tomorrow" or
    "midnight", "next month"."""
    zone = next((z for z, words in _ZONE_WORDS if any(w in text for w in words)), zone)
    if any(word in text for word in _DATE_WORDS):
        match = RESET_DATE.compiled().search(text)
        when = _dated(match) if match is not None else None
        if when is not None:
            return {"reset": when, "resets_in": now.until(when), "source": "message"}
    for anchor in _AFTER_WORDS:
        at = text.find(anchor)
        if at == -1:
            continue
        left = _amount(text, at + len(anchor))
        if left is not None:
            return {"reset": now.after(left), "resets_in": left, "source": "message"}
    for anchor in _AT_WORDS:
        at = text.find(anchor)
        when = _clock(text, at + len(anchor), now, zone) if at != -1 else None
        if when is not None:
            return {"reset": when, "resets_in": now.until(when), "source": "message"}
    if any(word in text for word in _MONTH_WORDS):
        reset = next_month(now.at, zone)
        return {"reset": reset, "resets_in": now.until(reset), "source": "message"}
    if any(word in text for word in _DAY_WORDS):
        reset = next_midnight(now.at, zone)
        return {"reset": reset, "resets_in": now.until(reset), "source": "message"}
    return None


def _clock(text: str, at: int, now: Now, zone: str) -> float | None:
    """The next time the clock shows the time of day at ``at`` ("10:57 pm gmt-3", "8pm"), in
    the offset it names, else in ``zone``."""
    match = RESET_CLOCK.compiled().match(text, at)
    if match is None or not (match["mi"] or match["ampm"]):
        return None  # a bare number is no time of day
    hour, minute = int(match["h"]), int(match["mi"] or 0)
    if match["ampm"]:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if match["ampm"] == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    offset = match["off"]
    if offset:
        sign = -1 if offset[0] == "-" else 1
        digits = offset[1:].replace(":", "")
        hours, minutes = (digits[:-2], digits[-2:]) if len(digits) > 2 else (digits, "0")
        shift = sign * (int(hours) * 3600 + int(minutes) * 60)
        local = datetime.fromtimestamp(now.at + shift, UTC).replace(tzinfo=None)
        wanted = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
        if wanted <= local:
            wanted += timedelta(days=1)
        return wanted.replace(tzinfo=UTC).timestamp() - shift
    local, tz = local_time(now.at, zone)
    naive = local.replace(tzinfo=None)
    wanted = naive.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if wanted <= naive:
        wanted += timedelta(days=1)
    return epoch_of(wanted, tz, zone)


def _dated(match: Any) -> float | None:
    """Epoch seconds of a ``RESET_DATE`` match (UTC unless it names an offset)."""
    try:
        stamp = datetime(
            int(match["y"]),
            int(match["mo"]),
            int(match["d"]),
            int(match["h"] or 0),
            int(match["mi"] or 0),
            int(match["s"] or 0),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    zone = match["zone"] or ""
    if zone[:1] in "+-" and zone:
        digits = zone[1:].replace(":", "")
        offset = int(digits[:2]) * 3600 + int(digits[2:4]) * 60
        return stamp.timestamp() - (offset if zone[0] == "+" else -offset)
    return stamp.timestamp()


def _amount(text: str, at: int) -> float | None:
    """Seconds in the words at ``at``: a duration (``161h39m41s``) or an amount and a unit."""
    token = text[at : at + 40].split(" ", 1)[0].rstrip(".,;)")
    found = parse_duration(token) if token[-1:].isalpha() and token[:1].isdigit() else None
    if found is not None:
        return min(found, MAX_SECONDS)
    match = RESET_AMOUNT.compiled().match(text, at)
    if match is None:
        return None
    unit = match["unit"]
    scale = _UNITS["ms"] if unit.startswith("ms") or unit.startswith("milli") else _UNITS[unit[0]]
    return min(float(match["n"]) * scale, MAX_SECONDS)


# -- what the wall covers -------------------------------------------------------------------------


def _scope_in(text: str) -> str | None:
    for scope, words in _SCOPE_WORDS:
        if any(word in text for word in words):
            return scope
    return None


def _text_of(facts: Facts) -> str:
    """The vendor's ids (each cut to 128 characters, 512 in all) and its lower-cased message,
    as one text of at most ``MAX_MESSAGE`` characters to read words in (padded with spaces,
    so " rpm " finds "RPM" at either end)."""
    ids = " ".join(sorted(name[:128] for name in facts.ids))[:512]
    return f" {ids} {facts.lowered}"[: MAX_MESSAGE - 1] + " "


def _described(facts: Facts, text: str) -> Found:
    """What the words and the vendor's ids say the wall covers."""
    found: Found = {}
    named = next((s for s in _ID_SCOPES if s in facts.ids), None)  # OpenAI's type: "tokens"
    scope = named or _scope_in(text)
    if scope is not None:
        found["scope"] = scope
    window = next((w for w, words in _WINDOW_WORDS if any(x in text for x in words)), None)
    if window is not None:
        found["window"] = window
    per = [name for name, words in _PER_WORDS if any(w in text for w in words)]
    match = MODEL_NAMED.compiled().search(text)
    if match is not None:
        found["model"] = match["a"] or match["b"]
        if "model" not in per:
            per.append("model")
    found["per"] = per
    return found


def _spent(facts: Facts, text: str, retryable: bool) -> bool:
    """Whether a balance or a spending limit ran out (the ``BILLING`` family, HTTP 402, a code
    that names spend, or words that say it), for a failure that waiting does not end (a rate
    limit that names credit, "while you have less than $5.0 in credit", is a rate limit)."""
    if retryable:
        return False
    if facts.status == 402 or BILLING.says(facts):
        return True
    if any("spend" in name or "billing" in name for name in facts.ids):
        return True
    return any(word in text for word in _SPEND_WORDS)


def _embedded_headers(facts: Facts) -> dict[str, str]:
    """Rate-limit headers a gateway copied into its error body (OpenRouter's
    ``error.metadata.headers``), lower-cased."""
    metadata = facts.extra.get("metadata")
    inner = metadata.get("headers") if isinstance(metadata, dict) else None
    return lower_headers(inner) if isinstance(inner, dict) else {}


def quota_of(
    facts: Facts,
    code: str,
    retryable: bool,
    retry_after: float | None,
    now: float | None = None,
) -> Quota | None:
    """The wall behind an ``upstream.rate_limited`` failure, or ``None`` when it says none.

    ``retryable`` is the code's decision (a spent balance is not retryable); ``retry_after``
    the wait ``_rules.hints`` read (it stands in for the reset when nothing else states one);
    ``now`` is this machine's time (``time.time()`` when not given).
    """
    if code != "upstream.rate_limited" or _one_request_over(facts):
        return None
    at = provider_now(facts.headers, now)
    text = _text_of(facts)
    members = _described(facts, text)
    zone = DAY_ZONES.get(facts.provider, "UTC")
    headers = {**_embedded_headers(facts), **facts.headers}
    found = (
        _from_headers(headers, members.get("scope"), at)
        or _from_ietf(headers, at)
        or _from_metadata(facts, at)
        or _from_violations(facts, at, zone)
        or _from_words(text, at, zone)
    )
    if found is None and retry_after is not None and retryable:
        found = {"reset": at.after(retry_after), "resets_in": retry_after}
        found["source"] = "retry_after"
    for name, value in (found or {}).items():
        if value or (name not in members and value is not None):
            members[name] = value
    if _spent(facts, text, retryable):
        members["scope"] = "spend"
    # no time brings it back: a spent balance, a quota of 0, an account a person must settle
    timed = members.get("resets_in") is not None
    billing = not retryable and not timed
    if not billing and not timed and members.get("scope") is None:
        return None
    return Quota(
        scope=members.get("scope"),
        window=members.get("window"),
        per=members.get("per", ()),
        model=members.get("model"),
        reset=_bounded(members.get("reset")),
        resets_in=_bounded(members.get("resets_in")),
        billing=billing,
        source=members.get("source"),
    )


_OVER_WORDS: Final = ("can only afford", "or fewer max_tokens", "fewer max tokens")
"""Words that say this request is too large for what is left (OpenRouter's 402: "requires
more credits, or fewer max_tokens. You requested up to 64000 tokens, but can only afford
2666"): a smaller request goes through."""


def _one_request_over(facts: Facts) -> bool:
    """Whether the message says this one request asks for more than the whole allowance
    ("Limit 10000, Requested 14434") or than what is left (``_OVER_WORDS``): the request is
    refused, not the key; there is no wall."""
    if any(word in facts.lowered for word in _OVER_WORDS):
        return True
    found = rate_limit_found(facts.lowered)
    if found is None or "requested" not in found.re.groupindex or not found["requested"]:
        return False
    return int(found["requested"]) > int(found["value"]) > 0


def _bounded(value: Any) -> float | None:
    if value is None:
        return None
    return min(max(round(float(value), 3), 0.0), 1e11)


# -- budgets, for the ledger's admission --------------------------------------------------------


class Budget:
    """One budget a response's headers state: its ``scope``, ``limit``, ``remaining`` and the
    seconds until it is whole again (``resets_in``; ``None`` when not stated)."""

    __slots__ = ("limit", "remaining", "resets_in", "scope")

    def __init__(self, scope: str, limit: float, remaining: float, resets_in: float | None) -> None:
        self.scope = scope
        self.limit = limit
        self.remaining = remaining
        self.resets_in = resets_in

    def __repr__(self) -> str:
        return (
            f"Budget({self.scope!r}, limit={self.limit:g}, remaining={self.remaining:g}, "
            f"resets_in={self.resets_in})"
        )


def budgets_of(headers: Any, now: float | None = None) -> list[Budget]:
    """The request and token budgets a response's headers state (``RATE_HEADERS`` rows with a
    scope, and the IETF fields' request policies), one per scope, the first row found winning.

    ``headers`` is any headers object (``lower_headers`` reads it). A row without a limit or a
    remaining count is left out; a remaining count over the limit is the limit.
    """
    lowered = headers if isinstance(headers, dict) else lower_headers(headers)
    # this machine's clock: a budget's instants are milliseconds apart, the Date header whole
    # seconds, which would be a fifth of a five-second window
    at = Now(time.time() if now is None else now, False)
    found: dict[str, Budget] = {}
    for scope, limit_name, remaining_name, reset_name, kind in _scoped_rows():
        limit = _number(lowered.get(limit_name))
        remaining = _number(lowered.get(remaining_name))
        if scope in found or limit is None or remaining is None or limit <= 0:
            continue
        value = lowered.get(reset_name)
        when = _seconds(value, kind, at) if value else None
        left = None if when is None else when[1]
        found[scope] = Budget(scope, limit, min(remaining, limit), left)
    for policy in _ietf(lowered):
        named = policy.get("scope")
        if named and named not in found and "q" in policy and "r" in policy and policy["q"] > 0:
            remaining = min(policy["r"], policy["q"])
            found[named] = Budget(named, policy["q"], remaining, policy.get("t"))
    return list(found.values())


def _scoped_rows() -> Iterable[tuple[str, str, str, str, str]]:
    for scope, limit, remaining, reset, kind in RATE_HEADERS:
        if scope is not None:
            yield scope, limit, remaining, reset, kind
