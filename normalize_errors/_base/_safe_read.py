"""Reading vendor objects without raising: a member by any of its spellings, a string, an
integer, a list.

SDK objects, their plain-JSON twins and hostile objects alike: a member that is missing,
of the wrong type or whose read raises gives ``None`` (or an empty tuple for a list).
"""

from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

__all__ = [
    "MAX_FRAMES",
    "described",
    "field",
    "finite",
    "frames",
    "innermost",
    "integer",
    "member",
    "module_of",
    "qualname",
    "sequence",
    "text_of",
]

MAX_FRAMES = 1000
"""Traceback frames read, outermost first: a deeper traceback (a runaway recursion) is read
to this many, and has no innermost frame."""


def frames(exc: BaseException) -> list[FrameType]:
    """The frames of ``exc``'s traceback, outermost first, at most ``MAX_FRAMES`` of them."""
    found: list[FrameType] = []
    tb = getattr(exc, "__traceback__", None)
    while tb is not None and len(found) < MAX_FRAMES:
        found.append(tb.tb_frame)
        tb = tb.tb_next
    return found


def innermost(exc: BaseException) -> FrameType | None:
    """The frame that raised ``exc`` (its traceback's last), or ``None`` when it has no
    traceback or one of ``MAX_FRAMES`` frames or more."""
    found = frames(exc)
    if not found or len(found) >= MAX_FRAMES:
        return None
    return found[-1]


def module_of(frame: FrameType) -> str:
    """The name of the module whose code ``frame`` runs (``""`` if it has none)."""
    name = frame.f_globals.get("__name__")
    return name if isinstance(name, str) else ""


def field(obj: Any, *names: str) -> Any:
    """The first of ``names`` that ``obj`` has, as a key or an attribute; ``None`` if none.

    Reads SDK result objects and their plain-JSON twins alike (pass both spellings, such
    as ``"finish_reason", "finishReason"``). Never raises.
    """
    for name in names:
        try:
            value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        except Exception:
            value = None
        if value is not None:
            return value
    return None


def member(obj: Any, name: str) -> Any:
    """``field`` of one name: ``obj[name]`` of a dict, else ``obj.name``; ``None`` if it is
    missing or reading it raises. The reader of the success path (each result of a wrapped
    generating call is read through it), so it takes one name and no loop."""
    try:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    except Exception:
        return None


def text_of(value: Any) -> str | None:
    """``value`` if it is a non-empty string, its ``.value`` for enums, else ``None``."""
    if isinstance(value, str):
        return value or None
    if value is None or isinstance(value, (int, float, dict, list)):
        return None
    try:
        inner = getattr(value, "value", None)
    except Exception:  # a hostile object
        return None
    if isinstance(inner, str):
        return inner or None
    return None


def integer(value: Any) -> int | None:
    """``value`` as an int if it is one (or a string of ASCII digits), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and len(value) < 10:
        digits = value.strip()
        # isdigit() alone also accepts "²", which int() refuses.
        if digits.isascii() and digits.isdigit():
            return int(digits)
    return None


def finite(value: Any) -> float | None:
    """``value`` as a float if it is a finite number (not a bool), else ``None``.

    An int too large for a float (``1e400`` written out as digits, valid JSON) and
    ``inf``/``nan`` are no numbers a reader can use: they give ``None``, never an error.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def sequence(value: Any) -> list[Any] | tuple[Any, ...]:
    """``value`` if it is a list or a tuple, else an empty tuple: vendor data said to be a list
    is iterated only when it is one."""
    return value if isinstance(value, (list, tuple)) else ()


def qualname(obj: object) -> str:
    """``module.QualName`` of a class, or of an object's class (an exception's, as
    ``upstream.exception`` shows it)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def described(value: object) -> str:
    """What ``value`` is, in a few words for a message, never the value itself (it may be a
    key): ``None``, ``an int``, ``a str``, ``the class openai.OpenAI``, ``the module json``.

    The article follows the type name's first letter (``an int``, ``an OverloadedError``).
    """
    if value is None:
        return "None"
    if isinstance(value, type):
        return f"the class {qualname(value)}"
    name = type(value).__name__
    if name == "module":
        return f"the module {getattr(value, '__name__', '?')}"
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name
