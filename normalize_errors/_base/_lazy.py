"""Regular expressions compiled on first use, so ``import normalize_errors`` stays fast.

Importing ``re`` and compiling the library's patterns costs milliseconds; a process that
never builds an error should not pay it. ``LazyPattern(source)`` compiles ``source`` (flags
go inline, as ``(?i)`` or ``(?x)``) the first time ``compiled()`` is called. ``bound`` and
``why`` record the longest input the pattern is ever given and why it runs in linear time
(see ``_patterns``, which lists every pattern of the package).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

__all__ = ["LazyPattern"]


class LazyPattern:
    """A pattern compiled the first time it is needed, then kept."""

    __slots__ = ("_compiled", "bound", "source", "why")

    def __init__(self, source: str, bound: int | None = None, why: str = "") -> None:
        self.source = source
        self.bound = bound
        self.why = why
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern."""
        pattern = self._compiled
        if pattern is None:
            import re

            pattern = self._compiled = re.compile(self.source)
        return pattern
