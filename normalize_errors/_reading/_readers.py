"""The extension point: readers for what the built-in adapters do not know, and extra rules.

Three ways in, used by the library's own framework and protocol readers exactly as a user's
code would use them:

* ``register_reader(module, reader)``: exceptions whose class (or any base class) is defined
  in ``module`` or a submodule of it are offered to ``reader`` first. ``reader(exc)`` returns
  the ``HarnessError`` or ``None`` to let the built-in path decide. The most specific class
  of the exception's MRO with a reader wins; within one class, the longest module prefix.
* ``register_response_reader(name, reader)``: ``from_response`` offers every HTTP response to
  ``reader(status, headers, body)`` (``status`` an ``int`` or ``None``, ``headers`` a dict with
  lower-case names, ``body`` parsed JSON when it parses, else text) before it looks at the
  body's shape; ``from_response(..., provider=name)`` asks that reader alone.
* ``add_rules(provider, *rules)``: rows tried before the provider's own mapping table (made
  with ``rule(...)``), for a vendor code or wording the table does not know yet.

A reader that raises is skipped (the built-in path answers), so a bug in a reader can never
make ``normalize`` or ``from_response`` raise. Readers registered later win over earlier ones
for the same module. Register at start-up (registration is not meant to race with reading);
the library's own readers are registered lazily, by module name, so
``import normalize_errors`` imports none of them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Final, TypeAlias
    from weakref import WeakKeyDictionary

    from .._model._exceptions import HarnessError
    from ._rules import Rule, Table

    ExceptionReader: TypeAlias = Callable[[BaseException], "HarnessError | None"]
    ResponseReader: TypeAlias = Callable[[Any, "Mapping[str, str]", Any], "HarnessError | None"]
    Route: TypeAlias = Callable[[BaseException], "HarnessError | None"]

__all__ = [
    "add_rules",
    "exception_reader",
    "extra_rules",
    "forget_classes",
    "register_reader",
    "register_response_reader",
    "response_readers",
    "routes",
    "unregister_reader",
    "unregister_response_reader",
]

BUILTIN: Final[dict[str, str]] = {
    "a2a": "normalize_errors.bindings.a2a:_read",
    "mcp": "normalize_errors.bindings.mcp:_read",
    "pydantic_ai": "normalize_errors.frameworks.pydantic_ai:_read",
    "langchain_core": "normalize_errors.frameworks.langchain:_read",
    "agents": "normalize_errors.frameworks.agents:_read",
    "instructor": "normalize_errors.frameworks.instructor:_read",
    "pydantic_core": "normalize_errors.frameworks._common:from_model_output",
    "json": "normalize_errors.frameworks._common:from_model_output",
}
"""The library's own exception readers: module prefix -> ``"package.module:function"``,
imported the first time an exception of that module is read."""

BUILTIN_RESPONSES: Final[dict[str, str]] = {
    "site": "normalize_errors.bindings.site:_read_response",
    "uhp": "normalize_errors.bindings.uhp:_read_response",
}
"""The library's own response readers: name -> ``"package.module:function"``, imported the
first time ``from_response`` runs; asked after the users' readers."""

BUILTIN_NAMED: Final[dict[str, str]] = {
    "site": "normalize_errors.bindings.site:from_site_error",
    "uhp": "normalize_errors.bindings.uhp:from_envelope",
}
"""The library's own readers for ``from_response(..., provider=name)``, where they differ from
``BUILTIN_RESPONSES[name]``: a protocol recognised by a header or marker when not named, but
read whatever the response looks like when it is named."""

_READERS: dict[str, ExceptionReader] = {}
_RESPONSES: dict[str, ResponseReader] = {}
_RULES: dict[str, Table] = {}
_PER_CLASS: list[WeakKeyDictionary[type, Any]] = []
"""``[readers, routes]``, made on first use (``import normalize_errors`` loads no ``weakref``):
``exception_reader``'s answer per exception class, and ``_facade``'s (the adapter that reads
the class when no reader is registered for it and it is no group, else ``None``). Emptied
with every (un)registration.

Both hold their classes weakly (a class made at run time, as botocore makes them for every
session, is collected as if it had never been read), and their values are readers and
adapter functions, which hold no exception class."""


def _per_class() -> list[WeakKeyDictionary[type, Any]]:
    if not _PER_CLASS:
        import weakref

        _PER_CLASS.extend((weakref.WeakKeyDictionary(), weakref.WeakKeyDictionary()))
    return _PER_CLASS


def routes() -> WeakKeyDictionary[type, Route | None]:
    """``_facade``'s route per exception class (see ``_PER_CLASS``)."""
    return _per_class()[1]


def forget_classes() -> None:
    """Empty the answers kept per exception class (a reader was registered or removed)."""
    for answers in _PER_CLASS:
        answers.clear()


def register_reader(module: str, reader: ExceptionReader) -> None:
    """Read the exceptions of ``module`` (a module name or prefix, e.g. ``"mycorp_gateway"``).

    ``reader(exc)`` returns the ``HarnessError`` for ``exc`` or ``None`` to leave it to the
    built-in path. It wins over the library's own reader for the same module.

    Raises:
        ValueError: ``module`` is not a dotted module name.
    """
    if not all(part.isidentifier() for part in str(module).split(".")):
        raise ValueError(f"not a module name: {module!r}")
    _READERS[module] = reader
    forget_classes()


def unregister_reader(module: str) -> None:
    """Remove the reader registered for ``module`` (nothing happens if there is none)."""
    _READERS.pop(module, None)
    forget_classes()


def register_response_reader(name: str, reader: ResponseReader) -> None:
    """Offer every response ``from_response`` reads to ``reader`` first (see the module doc),
    and every error status an HTTP client raises (httpx, httpx2, requests, aiohttp).

    ``name`` is the ``provider=`` value that asks this reader alone; readers registered later
    are asked first.
    """
    _RESPONSES.pop(name, None)
    _RESPONSES[name] = reader


def unregister_response_reader(name: str) -> None:
    """Remove the response reader registered as ``name`` (nothing happens if there is none)."""
    _RESPONSES.pop(name, None)


def add_rules(provider: str, *rules: Rule) -> None:
    """Try ``rules`` (made with ``normalize_errors.rule``) before ``provider``'s own table.

    Rules added later are tried before rules added earlier.
    """
    from ._rules import Table

    _RULES[provider] = Table(*rules, *_RULES.get(provider, ()))


def extra_rules(provider: str) -> Table | None:
    """The rules added for ``provider`` (``None`` unless ``add_rules`` was called)."""
    return _RULES.get(provider) if _RULES else None


_LOADED_RESPONSES: dict[str, ResponseReader] = {}


def _builtin_response(name: str, table: Mapping[str, str] = BUILTIN_RESPONSES) -> ResponseReader:
    target = table[name]
    found = _LOADED_RESPONSES.get(target)
    if found is None:
        found = _LOADED_RESPONSES[target] = _load(target)
    return found


def response_readers(name: str | None) -> list[ResponseReader]:
    """The response readers to ask: the users' newest first, then the library's own (only
    ``name``'s when a name is given)."""
    if name is not None:
        found = _RESPONSES.get(name)
        if found is None and name in BUILTIN_NAMED:
            found = _builtin_response(name, BUILTIN_NAMED)
        if found is None and name in BUILTIN_RESPONSES:
            found = _builtin_response(name)
        return [] if found is None else [found]
    return [*reversed(_RESPONSES.values()), *map(_builtin_response, BUILTIN_RESPONSES)]


def _lookup(module: str) -> ExceptionReader | str | None:
    """The reader for code of ``module``: the longest registered prefix, users' first."""
    while True:
        found = _READERS.get(module)
        if found is not None:
            return found
        builtin = BUILTIN.get(module)
        if builtin is not None:
            return builtin
        module, dot, _ = module.rpartition(".")
        if not dot:
            return None


def _load(target: str) -> Any:
    """The function ``target`` (``"package.module:function"``) names, importing its module."""
    import importlib

    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


def exception_reader(cls: type) -> ExceptionReader | None:
    """The reader registered for ``cls`` (the most specific class of its MRO that has one)."""
    known = _per_class()[0]
    try:
        return known[cls]  # type: ignore[no-any-return]
    except KeyError:
        pass
    found: ExceptionReader | None = None
    for klass in cls.__mro__:
        module = getattr(klass, "__module__", None)
        if not isinstance(module, str):
            continue
        target = _lookup(module)
        if target is not None:
            found = _load(target) if isinstance(target, str) else target
            break
    known[cls] = found
    return found
