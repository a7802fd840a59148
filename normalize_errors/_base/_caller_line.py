"""Running a wrapped method from the caller's own line, so that a warning the SDK issues
for the call names the caller's line and module, as without ``wrap()`` (see ``_as_caller``).
"""

from __future__ import annotations

from collections.abc import Callable
from types import FrameType, FunctionType
from typing import Any, Final


def _invoke(method: Any, args: Any, kwargs: Any) -> Any:
    return method(*args, **kwargs)


_INVOKE_LINE: Final = max(line or 0 for _, _, line in _invoke.__code__.co_lines())

_AS_CALLER: dict[tuple[str, int], FunctionType] = {}
"""The copies of ``_invoke`` made so far: (file name, line) -> the copy for the caller last
seen there. At most ``_KEPT`` lines; a line beyond them gets a fresh copy at each call. The
keys are a string and a number, never the caller's code object (whose constants may hold a
secret), and a copy holds only what ``_caller_globals`` keeps of the caller's globals."""

_KEPT: Final = 4096


def _as_caller(frame: FrameType) -> Callable[[Any, Any, Any], Any]:
    """``_invoke`` as if it were the caller's own line: its module, file and line number.

    An SDK warns with ``stacklevel=2`` (a deprecated model or method) to name the line that
    called it; under ``wrap()`` that line is the wrapper's, and Python's default filters hide
    warnings of modules other than ``__main__``. Running the call from a copy of ``_invoke``
    that carries the caller's globals, file name and line makes the warning read, and be
    filtered, exactly as without ``wrap()``. One copy per calling line is kept (``_AS_CALLER``)
    and serves the namespace it was made for (the same warning registry and module name):
    the same file and line run in another namespace (a code agent's step, run again in a
    fresh one) gets a copy of its own, which replaces it.
    A copy's globals are only what the warnings machinery reads of the caller's (see
    ``_caller_globals``), never the caller's namespace itself: a code agent that runs each
    step in a fresh namespace keeps none of them alive.
    """
    line = frame.f_lineno
    filename = frame.f_code.co_filename
    namespace = frame.f_globals
    key = (filename, line)
    found = _AS_CALLER.get(key)
    if found is not None:  # does it serve this namespace: its registry and module name?
        kept = found.__globals__
        if kept["__warningregistry__"] is namespace.get("__warningregistry__") and kept.get(
            "__name__"
        ) == namespace.get("__name__"):
            return found
    first = line - (_INVOKE_LINE - _invoke.__code__.co_firstlineno)
    if first < 1:
        return _invoke
    code = _invoke.__code__.replace(co_filename=filename, co_firstlineno=first)
    made = FunctionType(code, _caller_globals(namespace))
    if found is not None or len(_AS_CALLER) < _KEPT:
        _AS_CALLER[key] = made
    return made


_CALLER_NAMES: Final = ("__name__", "__spec__", "__loader__", "__file__", "__package__")


def _caller_globals(namespace: dict[str, Any]) -> dict[str, Any]:
    """The globals of a copy of ``_invoke`` for a caller whose globals are ``namespace``.

    A warning names its module from ``__name__`` (the filters match it), finds source lines
    through ``__spec__``/``__loader__``, and records what it showed in the module's
    ``__warningregistry__``: that registry is the caller's own (made now if it has none, as
    the first warning would), so "once per module" and "once per line" hold as without
    ``wrap()``. Nothing else of the caller's namespace is kept.
    """
    kept: dict[str, Any] = {name: namespace[name] for name in _CALLER_NAMES if name in namespace}
    kept["__warningregistry__"] = namespace.setdefault("__warningregistry__", {})
    return kept
