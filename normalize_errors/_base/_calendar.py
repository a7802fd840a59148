"""Time for reading walls: instants as providers write them, the response's own clock, and
the next midnight or first of the month in a provider's day zone.

The zone database may be absent (Windows without the ``tzdata`` package): then the Pacific
day is computed from the United States' rules since 2007 (UTC-8, UTC-7 from the second
Sunday of March to the first Sunday of November, both at 2:00 local time); any other zone is
UTC. ``_walls`` is its one reader.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final

__all__ = [
    "PACIFIC",
    "Now",
    "epoch_of",
    "http_date",
    "instant",
    "local_time",
    "next_boundary",
    "next_midnight",
    "next_month",
    "provider_now",
]

PACIFIC: Final = "America/Los_Angeles"


class Now:
    """The time of a response: its ``Date`` header (``anchored``), else this machine's clock.

    A reset stated as a delay (``6m0s``, ``RetryInfo``, "reset in 3 hours") becomes an
    instant only when anchored: on this machine's clock it would differ between two reads of
    the same failure, and an error is a snapshot of what the provider said.
    """

    __slots__ = ("anchored", "at")

    def __init__(self, at: float, anchored: bool) -> None:
        self.at = at
        self.anchored = anchored

    def after(self, seconds: float) -> float | None:
        """The instant ``seconds`` after the response, when the response is anchored."""
        return self.at + seconds if self.anchored else None

    def until(self, instant: float) -> float:
        """Seconds from the response to ``instant`` (0 once it is past)."""
        return max(instant - self.at, 0.0)


def instant(value: str) -> float | None:
    """Epoch seconds of an RFC 3339 instant (``2024-09-07T12:00:30Z``, with or without a
    fraction or an offset), else of an HTTP-date; ``None`` for anything else."""
    text = value.strip()[:64]
    if len(text) < 10 or not text[:4].isdigit():
        return http_date(text)
    if text[-1:] in "zZ":  # RFC 3339 allows "z", which fromisoformat refuses
        text = text[:-1] + "+00:00"
    try:
        found = datetime.fromisoformat(text.replace("t", "T", 1) if "t" in text else text)
    except ValueError:
        return None
    if found.tzinfo is None:
        found = found.replace(tzinfo=UTC)
    return found.timestamp()


def http_date(text: str) -> float | None:
    if not any(ch.isalpha() for ch in text):
        return None
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def provider_now(headers: Mapping[str, str], now: float | None = None) -> Now:
    """The time of the response: its ``Date`` header when it has one, else ``now`` (this
    machine's clock when not given)."""
    stated = headers.get("date")
    found = http_date(stated[:64]) if isinstance(stated, str) else None
    if found is not None:
        return Now(found, True)
    return Now(time.time() if now is None else now, False)


# -- zones and boundaries -------------------------------------------------------------------------


def _zone(name: str) -> Any:
    """The ``tzinfo`` of ``name``, or ``None`` where the zone database lacks it."""
    if name == "UTC":
        return UTC
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    except ImportError:  # pragma: no cover - Python 3.9 and older are not supported
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def _pacific_offset(now: float) -> float:
    """Pacific time's offset from UTC in seconds at ``now``, by the United States' rules since
    2007 (for a machine without the zone database)."""
    year = time.gmtime(now).tm_year

    def sunday(month: int, nth: int) -> int:  # the nth Sunday's day of the month
        first = calendar.weekday(year, month, 1)  # Monday is 0
        return 1 + (6 - first) % 7 + 7 * (nth - 1)

    starts = calendar.timegm((year, 3, sunday(3, 2), 10, 0, 0))  # 2:00 PST is 10:00 UTC
    ends = calendar.timegm((year, 11, sunday(11, 1), 9, 0, 0))  # 2:00 PDT is 9:00 UTC
    return -7 * 3600.0 if starts <= now < ends else -8 * 3600.0


def local_time(now: float, zone: str) -> tuple[datetime, Any]:
    """``now`` as a wall-clock time in ``zone``, and the ``tzinfo`` (``None`` when computed by
    hand: the wall-clock time is then naive, in Pacific time)."""
    tz = _zone(zone)
    if tz is not None:
        return datetime.fromtimestamp(now, tz), tz
    offset = _pacific_offset(now) if zone == PACIFIC else 0.0
    return datetime.fromtimestamp(now + offset, UTC).replace(tzinfo=None), None


def epoch_of(local: datetime, tz: Any, zone: str) -> float:
    """Epoch seconds of a wall-clock time made by ``_local``."""
    if tz is not None:
        return local.replace(tzinfo=tz).timestamp()
    naive = local.replace(tzinfo=UTC).timestamp()
    if zone != PACIFIC:
        return naive
    guess = naive + 8 * 3600.0  # standard time, then the offset at that instant
    return naive - _pacific_offset(guess)


def next_midnight(now: float, zone: str = "UTC") -> float:
    """The epoch seconds of the next midnight after ``now`` in ``zone``."""
    local, tz = local_time(now, zone)
    day = (local + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return epoch_of(day.replace(tzinfo=None), tz, zone)


def next_month(now: float, zone: str = "UTC") -> float:
    """The epoch seconds of the first midnight of the next month after ``now`` in ``zone``."""
    local, tz = local_time(now, zone)
    year, month = (local.year + 1, 1) if local.month == 12 else (local.year, local.month + 1)
    return epoch_of(datetime(year, month, 1), tz, zone)


def next_boundary(now: float, seconds: float) -> float:
    """The next multiple of ``seconds`` after ``now`` (the next whole minute)."""
    return (now // seconds + 1) * seconds
