"""``Quota``: a provider's wall, as it rides on a harness error (``err.quota``).

A rate limit or a spent quota says more than "wait ``retry_after`` seconds": *what* ran out
(requests, tokens, input or output tokens, spend), over which period (a minute, a day, a
month), counted per what (the key, the project, the organization, the model), *when* it
comes back, and whether only a person can bring it back (a billing wall). ``Quota`` holds
those facts, read once when the error is made (``_walls``), as a small immutable value:

* ``reset``: when the limit comes back, in epoch seconds (UTC), as the provider states it;
* ``resets_in``: the seconds from the response to ``reset``, measured on the provider's own
  clock when its ``Date`` header came with the response (else on this machine's);
* ``billing``: a person must act (pay, raise a spending limit): no time brings it back.

``retry_after`` keeps its meaning (the wait the provider advises before trying again):
Gemini's ``RetryInfo`` may say 36 s of a daily quota that comes back at midnight Pacific.

It is written by ``to_dict()`` as the ``quota`` member (an extension of the draft's object:
consumers that do not know it ignore it), read back by ``from_dict()``, pickled with the
error, and redacted like every other text of an error (the model name is the only free text).
This module imports nothing: ``import normalize_errors`` loads it.
"""

from __future__ import annotations

import math

from .._base._redact import redact
from .._base._safe_copy import utf8_safe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any, Final

__all__ = ["PER", "SCOPES", "WINDOWS", "Quota"]

SCOPES: Final = ("requests", "tokens", "input_tokens", "output_tokens", "spend")
"""What a wall limits: requests, tokens (input and output together), input tokens, output
tokens, or spend (credit, balance, a spending limit)."""
WINDOWS: Final = ("second", "minute", "hour", "day", "month")
"""The period a quota counts over, when the provider states it."""
PER: Final = ("key", "workspace", "project", "organization", "model")
"""What a quota is counted per, when the provider states it."""
MAX_TEXT: Final = 200
"""Longest text member kept (``model``, ``source``); a longer one is cut."""
MAX_SECONDS: Final = 400 * 86400.0
"""Longest ``resets_in`` kept (400 days); a wall further away is held as this long."""


class Quota:
    """A provider's wall: what ran out, counted per what, and when it comes back.

    Immutable; equal when every member is. Build it with keyword arguments (or
    ``Quota.from_dict``); a member out of shape raises ``ValueError`` naming it.

    Attributes:
        scope: ``requests``, ``tokens``, ``input_tokens``, ``output_tokens`` or ``spend``
            (``None`` when the provider does not say).
        window: ``second``, ``minute``, ``hour``, ``day`` or ``month``: the period the quota
            counts over, when stated.
        per: what the quota is counted per, when stated: ``key``, ``workspace``,
            ``project``, ``organization``, ``model`` (a tuple, possibly empty).
        model: the model the quota is for, when the provider names it (redacted, cut).
        reset: when the limit comes back, epoch seconds (UTC); ``None`` when unknown.
        resets_in: seconds from the response to ``reset`` (never negative).
        billing: a person must act (pay, raise a spending limit) before it comes back.
        source: where the reset was read: a header's name, ``QuotaFailure``,
            ``RetryInfo``, ``message``, ``retry-after``.
    """

    __slots__ = ("billing", "model", "per", "reset", "resets_in", "scope", "source", "window")

    scope: str | None
    window: str | None
    per: tuple[str, ...]
    model: str | None
    reset: float | None
    resets_in: float | None
    billing: bool
    source: str | None

    def __init__(
        self,
        *,
        scope: str | None = None,
        window: str | None = None,
        per: Iterable[str] = (),
        model: str | None = None,
        reset: float | None = None,
        resets_in: float | None = None,
        billing: bool = False,
        source: str | None = None,
    ) -> None:
        values = {
            "scope": _word(scope, "scope"),
            "window": _word(window, "window"),
            "per": _words(per),
            "model": _text(model, "model"),
            "reset": _seconds(reset, "reset", None),
            "resets_in": _seconds(resets_in, "resets_in", MAX_SECONDS),
            "billing": _flag(billing),
            "source": _text(source, "source"),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Quota is immutable: {name} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Quota is immutable: {name} cannot be deleted")

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> Quota:
        """The quota a ``to_dict()`` object describes; members it does not know are ignored.

        Raises:
            ValueError: ``obj`` is no mapping, or one of its members is out of shape.
        """
        if not hasattr(obj, "get"):
            raise ValueError("a quota is a JSON object")
        per = obj.get("per", ())
        if isinstance(per, (str, bytes)) or not isinstance(per, (list, tuple)):
            raise ValueError("quota.per is a list of strings")
        return cls(
            scope=obj.get("scope"),
            window=obj.get("window"),
            per=per,
            model=obj.get("model"),
            reset=obj.get("reset"),
            resets_in=obj.get("resets_in"),
            billing=obj.get("billing", False),
            source=obj.get("source"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The ``quota`` member as JSON: the members that are set (``billing`` always)."""
        out: dict[str, Any] = {}
        for name in ("scope", "window"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.per:
            out["per"] = list(self.per)
        if self.model is not None:
            out["model"] = self.model
        for name in ("reset", "resets_in"):
            value = getattr(self, name)
            if value is not None:
                out[name] = int(value) if value.is_integer() else value
        out["billing"] = self.billing
        if self.source is not None:
            out["source"] = self.source
        return out

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quota):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"Quota({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.to_dict(),))


def _rebuild(members: dict[str, Any]) -> Quota:
    """A pickled ``Quota``, rebuilt from its ``to_dict()``."""
    return Quota.from_dict(members)


def _word(value: Any, name: str) -> str | None:
    """A short lower-case word (``tokens``, ``day``), or ``None``."""
    if value is None:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= 32:
        raise ValueError(f"quota.{name} is a short string")
    word: str = value.lower()
    if not all(ch.isalnum() or ch in "_-" for ch in word):
        raise ValueError(f"quota.{name} is a word of letters, digits, '_' and '-'")
    return word


def _words(values: Any) -> tuple[str, ...]:
    found: list[str] = []
    for value in values:
        word = _word(value, "per")
        if word is not None and word not in found:
            found.append(word)
        if len(found) >= 8:
            break
    return tuple(found)


def _text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"quota.{name} is a string")
    cleaned: str = utf8_safe(redact(value)[:MAX_TEXT])
    return cleaned or None


def _seconds(value: Any, name: str, cap: float | None) -> float | None:
    """A finite number of seconds >= 0 (``cap`` bounds it), or ``None``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"quota.{name} is a number of seconds")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"quota.{name} is out of range") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"quota.{name} is a finite number >= 0")
    return number if cap is None else min(number, cap)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("quota.billing is true or false")
    return value
