"""Exceptions that hold other exceptions: cause chains and exception groups.

An exception the library does not know is read through its ``__cause__`` (else its
``__context__``), at most ``MAX_CHAIN`` links, a cycle ending the walk. An exception group
gives the error of its most telling member, with the others as ``causes``; only what
``causes`` keeps is normalized, with one budget over nested groups (``MAX_GROUP_MEMBERS``).
The entry point passes in how to read one exception (``known``, ``normalize``).
"""

from __future__ import annotations

from .exceptions import MAX_CAUSES, HarnessError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Final

    Known = Callable[[BaseException, "str | None"], "HarnessError | None"]
    Normalize = Callable[[BaseException, "str | None"], HarnessError]

__all__ = [
    "MAX_CHAIN",
    "MAX_GROUP_MEMBERS",
    "chained",
    "group",
    "group_members",
    "group_type",
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


def through_chain(exc: BaseException, provider: str | None, known: Known) -> HarnessError | None:
    """The answer of the first exception in ``exc``'s chain that the library knows.

    At most ``MAX_CHAIN`` links are read and a link seen before ends the walk, so a cyclic
    or endless chain cannot hang ``normalize``. The answer is a copy: an error found in the
    chain is never modified, and the copy's ``__cause__`` becomes ``exc``.
    """
    seen = {id(exc)}
    link = chained(exc)
    for _ in range(MAX_CHAIN):
        if link is None or id(link) in seen:
            return None
        seen.add(id(link))
        found = known(link, provider)
        if found is not None:
            return found._clone() if found is link else found
        link = chained(link)
    return None


def group_type(cls: type) -> bool:
    """Whether ``cls`` is an exception group (builtin, or the ``exceptiongroup`` backport)."""
    return any(k.__name__.endswith("ExceptionGroup") for k in cls.__mro__)


def group_members(exc: BaseException) -> list[BaseException] | None:
    """The members of an exception group (builtin, or the ``exceptiongroup`` backport)."""
    if not group_type(type(exc)):
        return None
    members = getattr(exc, "exceptions", None)
    if isinstance(members, (list, tuple)) and members:
        return [m for m in members if isinstance(m, BaseException)] or None
    return None


MAX_GROUP_MEMBERS = 256
"""Most members of an exception group, nested groups included, that are normalized."""

_GENERIC: Final = frozenset({"upstream.unavailable", "harness.internal_error"})


def _precedence(item: tuple[int, HarnessError]) -> tuple[bool, bool, int]:
    index, err = item
    return (err.retryable, err.code in _GENERIC, index)


def group(
    inner: list[BaseException], provider: str | None, budget: list[int], normalize: Normalize
) -> HarnessError:
    """The error of an exception group: its most telling member, the others as ``causes``.

    Only what ``causes`` keeps is normalized: the first ``MAX_CAUSES`` members and the last.
    ``budget`` counts members over nested groups, so a group that holds the same group many
    times over stays cheap; once spent, only first members are read.

    Precedence among the members read: a non-retryable member before a retryable one (so the
    group is retryable only when every member is), then a specific code before the generic
    ``upstream.unavailable`` and ``harness.internal_error``, then the group's order. The
    other members follow in the group's order as ``causes``.
    """
    if budget[0] <= 0:
        chosen = inner[:1]
    else:
        keep = min(len(inner), MAX_CAUSES + 1, max(budget[0], 2))
        chosen = inner if keep == len(inner) else [*inner[: keep - 1], inner[-1]]
    budget[0] -= len(chosen)
    members = [_member(item, provider, budget, normalize) for item in chosen]
    if len(members) == 1:
        return members[0]
    index, best = min(enumerate(members), key=_precedence)
    top = best._clone()
    top.causes = [*best.causes, *(m for i, m in enumerate(members) if i != index)]
    return top


def _member(
    exc: BaseException, provider: str | None, budget: list[int], normalize: Normalize
) -> HarnessError:
    """``normalize(exc)``, sharing ``budget`` with the group ``exc`` belongs to."""
    inner = group_members(exc)
    if inner is None or isinstance(exc, HarnessError):
        return normalize(exc, provider)
    err = group(inner, provider, budget, normalize)
    if err.__cause__ is None:
        err.__cause__ = exc
    return err
