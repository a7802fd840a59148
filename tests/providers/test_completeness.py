"""Every provider's tables are complete: each rule row decides something, each SDK class maps.

Parametrized over ``normalize_errors.providers.NAMES``, so a new provider module is checked
without touching this file. What each provider's test module (``test_<name>.py`` beside this
one) may offer, by convention:

* ``TABLE_CASES``: calls (no arguments) that run focused inputs through the library, for
  rows no shipped cassette reaches; the module's own tests assert what each one gives.
* ``SDK_MODULES``: the modules whose exception classes ``CLASSES`` must map (default: the
  provider's own top-level module).
* ``ROOT_READS_STATUS``: true when the SDK's root error is its HTTP error (it carries the status
  and body, as cohere's ``ApiError`` does), so a class may map as that root; elsewhere the root
  is a client-side error and every other class needs an entry of its own.

The shipped cassettes of every provider are always inputs: a row may be decided by another
provider's cassette (an OpenAI-compatible server's body read by the ``openai`` rows).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import warnings
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

import pytest

from normalize_errors import from_response, normalize
from normalize_errors._reading._tables import class_entry
from normalize_errors.providers import NAMES, Adapter
from normalize_errors.providers._routing import adapter

from ..support import bodies_of, cassettes, deciding_rows, valid


def _tests_of(name: str) -> ModuleType | None:
    """The test module of provider ``name``, if it has one."""
    try:
        return importlib.import_module(f"{__package__}.test_{name}")
    except ModuleNotFoundError:
        return None


def _cases(name: str) -> list[Callable[[], object]]:
    return list(getattr(_tests_of(name), "TABLE_CASES", ()))


def _decided() -> set[tuple[str, int]]:
    """The rows of every provider that the shipped cassettes and the focused cases decide."""
    with deciding_rows() as hits:
        for item in cassettes():
            for status, headers, body in bodies_of([item]):
                for provider in (None, item.provider):
                    from_response(status, headers, body, provider=provider)
        for name in NAMES:
            for case in _cases(name):
                case()
    return hits


@pytest.fixture(scope="module")
def decided() -> set[tuple[str, int]]:
    """Computed once for all providers (a case of one provider may decide another's row)."""
    return _decided()


@pytest.mark.parametrize("name", NAMES)
def test_every_table_row_decides_a_cassette_or_a_case(
    name: str, decided: set[tuple[str, int]]
) -> None:
    """A row that decides nothing is untested: add a sourced cassette or a focused case."""
    table = adapter(name).TABLE
    missing = [f"{i}: {row.when}" for i, row in enumerate(table) if (name, i) not in decided]
    assert missing == []


def test_a_row_decides_only_when_it_is_the_first_match() -> None:
    """The recorder counts the deciding row, not a later row that would also match."""
    with deciding_rows() as hits:
        # a 529 whose message says "overloaded": the message row (earlier) decides
        valid(from_response(529, {}, b'{"error": {"message": "Overloaded"}}', provider="openai"))
    table = adapter("openai").TABLE
    assert [table[i].when for p, i in hits if p == "openai"] == [
        "the message says the model or server is overloaded"
    ]


# -- every exception class an SDK exports maps ---------------------------------------------------


def _sdk_modules(name: str) -> list[ModuleType]:
    """The installed modules whose exception classes provider ``name`` must map."""
    names = getattr(_tests_of(name), "SDK_MODULES", (name,))
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # some SDK modules warn on import (deprecations)
        for module in names:
            if importlib.util.find_spec(module.partition(".")[0]) is None:
                continue
            try:
                found.append(importlib.import_module(module))
            except ImportError:  # a module only some SDK lines have
                continue
    return found


def _exported(modules: Iterable[ModuleType]) -> dict[str, type[BaseException]]:
    """The public exception classes (not warnings) the modules define or re-export."""
    found: dict[str, type[BaseException]] = {}
    for module in modules:
        root = module.__name__.partition(".")[0]
        names = list(vars(module))
        exports = list(getattr(module, "__all__", ()))
        if exports and not set(exports) & set(names):  # a module that exports lazily (cohere)
            names += exports
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a deprecated name warns when it is read
            values = [getattr(module, name, None) for name in names]
        for value in values:
            if (
                inspect.isclass(value)
                and issubclass(value, Exception)
                and not issubclass(value, Warning)
                and not value.__name__.startswith("_")
                and value.__module__.partition(".")[0] == root
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


EXPORTED = [
    (name, qualname, cls)
    for name in NAMES
    for qualname, cls in sorted(_exported(_sdk_modules(name)).items())
]


def _entry(module: Adapter, cls: type[BaseException]) -> tuple[str, Any] | None:
    """The ``CLASSES`` entry that decides for ``cls``: the first of its MRO found there.

    The shared lookup (``_tables.class_entry``); google keys its Interactions classes apart,
    so its own ``_entry`` (the same lookup over the right keys) answers for it.
    """
    lookup = getattr(getattr(module, "_errors", module), "_entry", None)
    if lookup is not None:
        found: tuple[str, Any] | None = lookup(cls.__new__(cls))
        return found
    root = cls.__module__.partition(".")[0]
    return class_entry(cls.__new__(cls), getattr(module, "CLASSES", {}), root)


def _base(cls: type[BaseException]) -> type[BaseException]:
    """The topmost class of ``cls``'s MRO from the same SDK: the SDK's root error."""
    root = cls.__module__.partition(".")[0]
    same = [k for k in cls.__mro__ if k.__module__.partition(".")[0] == root]
    return same[-1]


def test_every_installed_sdk_exports_exception_classes() -> None:
    """The walk finds classes for every provider whose SDK is installed (else it proves nothing)."""
    providers = {name for name, _, _ in EXPORTED}
    installed = {name for name in NAMES if _sdk_modules(name)}
    assert installed == providers
    assert {"openai", "anthropic", "google", "http"} <= providers


@pytest.mark.parametrize(
    ("name", "cls"),
    [(name, cls) for name, _, cls in EXPORTED],
    ids=[f"{name}:{qualname}" for name, qualname, _ in EXPORTED],
)
def test_every_exported_exception_class_maps_more_specifically_than_its_base(
    name: str, cls: type[BaseException]
) -> None:
    """An entry other than the SDK's root error's decides, and a bare instance normalizes.

    A bare instance (``__init__`` never ran) normalizes to a valid error, to the fixed code
    of its entry where the entry fixes one.
    """
    module = adapter(name)
    entry = _entry(module, cls)
    assert entry is not None, f"{cls} is not covered by {name}.CLASSES"
    base = _base(cls)
    if base is not cls and not getattr(_tests_of(name), "ROOT_READS_STATUS", False):
        assert entry != _entry(module, base), f"{cls} maps only as its base {base}"
    exc = cls.__new__(cls)
    err = valid(normalize(exc))
    if entry[1] is not None:
        assert (err.code, err.retryable) == entry[1]
    assert err.__cause__ is exc
