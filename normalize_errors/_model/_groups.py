"""Exceptions that hold other exceptions: cause chains and exception groups.

An exception the library does not know is read through its ``__cause__`` (else its
``__context__``), at most ``MAX_CHAIN`` links, a cycle ending the walk. An exception group
gives the error of its most telling member, with the others as ``causes``; only what
``causes`` keeps is normalized. One ``Walk`` per ``normalize()`` call is shared by both
walks: one budget (``MAX_WALK`` exceptions read, group members and chain links together)
and the set of the exceptions being read, so a member whose ``__context__`` is its own
group (re-raised inside the group's ``except`` block) is a cycle, not a new walk. The entry
point passes in how to read one exception (``known``, ``normalize``).
"""

from __future__ import annotations

from ._exceptions import MAX_CAUSES, HarnessError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Final

    Known = Callable[[BaseException, "str | None", "Walk"], "HarnessError | None"]
    Normalize = Callable[[BaseException, "str | None", "Walk"], HarnessError]

__all__ = [
    "MAX_CHAIN",
    "MAX_WALK",
    "Walk",
    "chained",
    "group",
    "group_members",
    "group_type",
    "most_telling",
    "through_chain",
]


MAX_CHAIN: Final = 8
"""Most links of an unknown exception's ``__cause__``/``__context__`` chain that are read."""


def chained(exc: BaseException) -> BaseException | None:
    """The exception ``exc`` was raised from (``__cause__``), else during (``__context__``)."""
    cause = exc.__cause__
    if cause is None and not exc.__suppress_context__:
        cause = exc.__context__
    return cause


MAX_WALK: Final = 256
"""Most exceptions one ``normalize()`` call reads past the one it was given: the members of
its exception groups (nested groups included) and the links of its chains, together."""


class Walk:
    """What one ``normalize()`` call has read: made once per call, passed through every chain
    and group walk of that call.

    ``budget`` is what is left of ``MAX_WALK``; ``reading`` holds the ids of the exceptions
    being read (a group whose members are being read, the links of a chain being walked).
    Reaching one of them again is a cycle: it is read as what it is, without following it.
    """

    __slots__ = ("budget", "reading")

    def __init__(self) -> None:
        self.budget = MAX_WALK
        self.reading: set[int] = set()

    def enter(self, exc: BaseException) -> bool:
        """Mark ``exc`` as being read; ``False`` (and nothing marked) if it already is."""
        if id(exc) in self.reading:
            return False
        self.reading.add(id(exc))
        return True

    def leave(self, exc: BaseException) -> None:
        """``exc`` is read: reaching it again is no longer a cycle (a shared sub-group)."""
        self.reading.discard(id(exc))


def through_chain(
    exc: BaseException, provider: str | None, known: Known, walk: Walk
) -> HarnessError | None:
    """The answer of the first exception in ``exc``'s chain that the library knows.

    At most ``MAX_CHAIN`` links are read, each one from ``walk``'s budget, and a link being
    read already (in this chain, or a group or chain the call is inside of) ends the walk,
    so a cyclic or endless chain cannot hang ``normalize``. The answer is a copy: an error
    found in the chain is never modified, and the copy's ``__cause__`` becomes ``exc``.
    """
    entered = [exc] if walk.enter(exc) else []
    try:
        link = chained(exc)
        for _ in range(MAX_CHAIN):
            if link is None or walk.budget <= 0 or id(link) in walk.reading:
                return None
            walk.budget -= 1
            found = known(link, provider, walk)  # a group marks itself while it is read
            if found is not None:
                return found._clone() if found is link else found
            walk.enter(link)
            entered.append(link)
            link = chained(link)
        return None
    finally:
        for item in entered:
            walk.leave(item)


def group_type(cls: type) -> bool:
    """Whether ``cls`` is an exception group: the builtin, or a library's own class named so
    that is no subclass of it (anyio 3's ``ExceptionGroup`` is a ``BaseException`` with an
    ``exceptions`` list)."""
    return any(k.__name__.endswith("ExceptionGroup") for k in cls.__mro__)


def group_members(exc: BaseException) -> list[BaseException] | None:
    """The members of an exception group (see ``group_type``), ``None`` when it holds none."""
    if not group_type(type(exc)):
        return None
    members = getattr(exc, "exceptions", None)
    if isinstance(members, (list, tuple)) and members:
        return [m for m in members if isinstance(m, BaseException)] or None
    return None


_GENERIC: Final = frozenset({"upstream.unavailable", "harness.internal_error"})


def most_telling(errors: Sequence[HarnessError]) -> int:
    """The index of the most telling of ``errors`` (at least one): a non-retryable error
    before a retryable one, then a specific code before the generic ``upstream.unavailable``
    and ``harness.internal_error``, then the first in order."""
    return min(
        range(len(errors)),
        key=lambda i: (errors[i].retryable, errors[i].problem.code in _GENERIC, i),
    )


def group(
    inner: list[BaseException], provider: str | None, walk: Walk, normalize: Normalize
) -> HarnessError:
    """The error of an exception group: its most telling member, the others as ``causes``.

    Only what ``causes`` keeps is normalized: the first ``MAX_CAUSES`` members and the last.
    ``walk.budget`` counts members over nested groups (and chain links), so a group that
    holds the same group many times over stays cheap; once spent, only first members are
    read. The caller has marked the group as being read (``Walk.enter``).

    Precedence among the members read: a non-retryable member before a retryable one (so the
    group is retryable only when every member is), then a specific code before the generic
    ``upstream.unavailable`` and ``harness.internal_error``, then the group's order. The
    other members follow in the group's order as ``causes``.
    """
    if walk.budget <= 0:
        chosen = inner[:1]
    else:
        keep = min(len(inner), MAX_CAUSES + 1, max(walk.budget, 2))
        chosen = inner if keep == len(inner) else [*inner[: keep - 1], inner[-1]]
    walk.budget -= len(chosen)
    members = [_member(item, provider, walk, normalize) for item in chosen]
    if len(members) == 1:
        return members[0]
    index = most_telling(members)
    best = members[index]
    top = best._clone()
    top.causes = [*best.causes, *(m for i, m in enumerate(members) if i != index)]
    return top


def _member(
    exc: BaseException, provider: str | None, walk: Walk, normalize: Normalize
) -> HarnessError:
    """``normalize(exc)``, sharing ``walk`` with the group ``exc`` belongs to.

    A member that is a group being read (a group inside itself) is read as what it is.
    """
    inner = group_members(exc)
    if inner is None or isinstance(exc, HarnessError) or not walk.enter(exc):
        return normalize(exc, provider, walk)
    try:
        err = group(inner, provider, walk, normalize)
    finally:
        walk.leave(exc)
    if err.__cause__ is None:
        err.__cause__ = exc
    return err
