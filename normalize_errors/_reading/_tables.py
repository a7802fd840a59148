"""The adapters' tables and exception classes, made from the provider data files.

``load_table(shape)`` and ``load_classes(shape)`` turn what ``_provider_files`` read into the
``Table`` of ``Rule`` rows and the ``CLASSES`` mapping an adapter module keeps (made once, when
the module loads); ``class_entry`` finds the answer of an exception's class in such a mapping;
``leaving_out(provider)`` switches a provider's rows off for the leave-one-provider-out score.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator, Mapping
from typing import Any, Final

from .._base import _provider_files
from ._rules import LEFT_OUT, Rule, Table, rule

__all__ = [
    "TIERS",
    "Entry",
    "class_entry",
    "leaving_out",
    "load_classes",
    "load_codes",
    "load_rows",
    "load_table",
    "owners_of",
]


TIERS: Final = ("vendor", "wording", "status", "generic")
"""The kinds of row, in the order a joined vendor's rows take their place (``load_table``)."""


def _row_of(data: Mapping[str, Any], owners: frozenset[str]) -> Rule:
    """A ``Rule`` from one ``[[rows]]`` table of a data file."""
    words = data.get("words", ())
    if "words_of" in data:
        words = _provider_files.shared_words(data["words_of"])
    message = data.get("message")
    if "pattern_of" in data:
        message = _provider_files.shared_pattern(data["pattern_of"])
    return rule(
        data["code"],
        data["when"],
        retryable=data.get("retryable"),
        status=data.get("status", ()),
        ids=data.get("ids", ()),
        words=words,
        message=message,
        id_words=data.get("id_words", ()),
        final=data.get("final", False),
        owners=owners | frozenset(data.get("vendors", ())),
        tier=data["tier"],
        source=data["source"],
    )


def owners_of(name: str) -> frozenset[str]:
    """Provider ``name`` and the other names its data file gives it (``aliases``)."""
    return frozenset((name, *_provider_files.read(name).get("aliases", ())))


def load_table(shape: str) -> Table:
    """The table of the adapter ``shape``, from the data files (``_provider_files``).

    Its own file's rows in file order, and the rows of every file read by it
    (``read_by = shape``) each at the end of its tier's block: after the last row of that
    tier or an earlier one, in the order of ``TIERS``. Called once, when the adapter's module
    loads.
    """
    rows = [_row_of(row, owners_of(shape)) for row in _provider_files.read(shape)["rows"]]
    for name in _provider_files.read_by(shape)[1:]:
        owners = owners_of(name)
        for data in _provider_files.read(name).get("rows", ()):
            row = _row_of(data, owners)
            rank = TIERS.index(row.tier)
            place = len(rows)
            while place and TIERS.index(rows[place - 1].tier) > rank:
                place -= 1
            rows.insert(place, row)
    return Table(*rows)


def load_rows(name: str, key: str) -> Table:
    """A table of the rows a data file keeps under ``key`` besides its ``rows`` (Google's
    ``socket_rows``), in file order."""
    owners = owners_of(name)
    return Table(*(_row_of(data, owners) for data in _provider_files.read(name).get(key, ())))


def load_codes(name: str, key: str) -> dict[int, tuple[str, bool]]:
    """A number -> answer mapping of a data file (Google's WebSocket ``close_codes``)."""
    found = _provider_files.read(name).get(key, {})
    return {int(number): (answer["code"], answer["retryable"]) for number, answer in found.items()}


def load_classes(shape: str) -> dict[str, tuple[str, bool] | None]:
    """The exception classes of the adapter ``shape`` and of the files it reads, from the
    data files: class name -> fixed ``(code, retryable)``, or ``None`` ("read": read the
    status and body with the table). A file's ``include`` (``_stainless``) comes first."""
    found: dict[str, tuple[str, bool] | None] = {}
    for name in _provider_files.read_by(shape):
        data = _provider_files.read(name)
        for shared in data.get("include", ()):
            found.update(_classes_in(_provider_files.read(shared)))
        found.update(_classes_in(data))
    return found


def _classes_in(data: Mapping[str, Any]) -> dict[str, tuple[str, bool] | None]:
    return {
        name: None if answer == "read" else (answer["code"], answer["retryable"])
        for name, answer in data.get("classes", {}).items()
    }


@contextlib.contextmanager
def leaving_out(provider: str) -> Iterator[None]:
    """Inside the block, the rows of ``provider`` (its file's, and any row naming it among its
    ``vendors``) are switched off: only the other rows, the families and the status's default
    read its failures. ``normalize-errors corpus --leave-one-provider-out`` scores so."""
    token = LEFT_OUT.set(owners_of(provider) | {provider})
    try:
        yield
    finally:
        LEFT_OUT.reset(token)


# -- the class's fixed answer: the first step of the reading order ------------------------------

Entry = tuple[str, "tuple[str, bool] | None"]
_ENTRIES: Final[weakref.WeakKeyDictionary[type, dict[str | tuple[str, ...], Entry | None]]] = (
    weakref.WeakKeyDictionary()
)
"""``class_entry``'s answers per exception class, then per ``roots`` (``None`` too: a class no
entry names). The class is held weakly and the answers are strings, so a class made at run
time (botocore makes them per session) is collected as if it had never been read; the walk
costs about 0.6 µs against 0.1 µs for the lookup, some 10% of a ``normalize()``."""


def class_entry(
    exc: BaseException,
    classes: Mapping[str, tuple[str, bool] | None],
    roots: str | tuple[str, ...],
) -> Entry | None:
    """The first class of ``exc``'s MRO named in ``classes`` whose module is under ``roots``.

    ``roots`` is one package name or several (``"openai"``, ``"google.genai"``): a class
    counts when its module is one of them or inside one. Returns ``(class name, fixed (code,
    retryable) or None)``. An SDK's subclasses (anthropic's ~130 error-code classes, a
    user's own subclass) resolve to the nearest class the table names. Decided once per
    class while it lives (``_ENTRIES``).
    """
    cls = type(exc)
    known = _ENTRIES.get(cls)
    if known is None:
        known = _ENTRIES[cls] = {}
    elif roots in known:
        return known[roots]
    found = known[roots] = _class_entry(cls, classes, roots)
    return found


def _class_entry(
    cls: type, classes: Mapping[str, tuple[str, bool] | None], roots: str | tuple[str, ...]
) -> Entry | None:
    under = (roots,) if isinstance(roots, str) else roots
    for klass in cls.__mro__:
        name = klass.__name__
        if name not in classes:
            continue
        module = getattr(klass, "__module__", None)
        if isinstance(module, str) and any(
            module == root or module.startswith(root + ".") for root in under
        ):
            return name, classes[name]
    return None
