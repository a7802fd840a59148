"""The typed shapes of four members: ``Origin``, ``Advice``, ``Limit`` and ``Location``.

They are real types at run time (``typing.get_args(Advice)`` lists the words, ``Limit``
is a ``TypedDict``), but building them needs ``typing``, which costs several milliseconds
to import. So ``import normalize_errors`` does not load this module: the package's
``__getattr__`` imports it the first time one of the four names is read, and the rest of
the package refers to them only under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from typing import Literal, TypedDict

__all__ = ["Advice", "Limit", "Location", "Origin"]

Origin = Literal["model", "harness", "tool", "upstream", "user"]
"""Where an error originated (draft section 4.2)."""

Advice = Literal["retry", "feedback", "adjust", "fix", "credentials", "human", "stop"]
"""One word a program can switch on; see ``HarnessError.advice``."""


class Limit(TypedDict, total=False):
    """The limit that was exceeded (draft section 4.9)."""

    name: str
    value: float
    observed: float
    unit: str


class Location(TypedDict, total=False):
    """Where in the run the error happened (draft section 4.10)."""

    run_id: str
    turn: int
    tool_name: str
    tool_call_id: str
    pointer: str
