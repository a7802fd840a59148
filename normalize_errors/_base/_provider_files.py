"""The provider data files: what the library knows about each provider, as data.

One TOML file per provider in ``providers/`` (at the top of a checkout, beside
``normalize_errors/``; inside the wheel as ``normalize_errors/providers/data``), each checked
against ``providers/schema.json`` by the tests:

- ``rows``: the provider's mapping rows, each with its ``tier`` (``vendor``: the vendor's own
  code, type or a wording only it sends; ``wording``; ``status``; ``generic``: generic codes
  and types), its conditions, the code it gives, and its ``source``;
- ``classes``: its SDK's exception classes and their fixed answers (``"read"``: read the
  status and body with the rows);
- ``read_by``: for a vendor read by another provider's adapter (an OpenAI-compatible server
  read by ``openai``, a gateway read by ``http``), that adapter: its rows join that adapter's
  table (``_tables.load_table``) at the end of their tier's block;
- ``aliases``: the other names its failures go by (the corpus's ``provider`` names);
- ``rate_headers``, ``metadata_resets``, ``day_zone``: how it states its rate limits and when
  a limit comes back (``_walls`` reads them);
- ``_families.toml``: the families of wording shared by every provider, and the word lists
  and patterns that rows name (``words_of``, ``pattern_of``);
- ``_stainless.toml``: the exception classes every Stainless-generated SDK raises, which a
  file names in ``include``.

Read with ``tomllib`` when first asked for (never by ``import normalize_errors``), and kept
as plain data (strings, numbers, lists and dicts) for the life of the process.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from typing import Any

__all__ = [
    "day_zones",
    "families_data",
    "folder",
    "metadata_resets",
    "names",
    "rate_headers",
    "read",
    "read_by",
    "shared_pattern",
    "shared_words",
    "stream",
]


def folder() -> Path:
    """The folder of the data files: inside the installed package, else the checkout's."""
    here = Path(__file__).resolve().parent.parent  # the package (this module is in _base/)
    inside = here / "providers" / "data"
    return inside if inside.is_dir() else here.parent / "providers"


@functools.cache
def names() -> tuple[str, ...]:
    """Every data file's name (its provider), sorted; the shared files start with ``_``."""
    return tuple(sorted(path.stem for path in folder().glob("*.toml")))


@functools.cache
def read(name: str) -> dict[str, Any]:
    """The parsed data file of provider ``name`` (``{}`` when there is none).

    Raises:
        tomllib.TOMLDecodeError: the file is not TOML (a broken install; the tests check
            every file against the schema).
    """
    path = folder() / f"{name}.toml"
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        return tomllib.load(handle)


@functools.cache
def read_by(shape: str) -> tuple[str, ...]:
    """The providers whose failures the adapter ``shape`` reads with its own: its file, then
    every file that says ``read_by = shape``, in name order."""
    joined = tuple(name for name in names() if read(name).get("read_by") == shape)
    return (shape, *joined)


def shared_words(name: str) -> tuple[str, ...]:
    """A word list of ``_families.toml`` (``context``, ``context_count``)."""
    return tuple(read("_families")["words"][name])


def shared_pattern(name: str) -> str:
    """A pattern of ``_families.toml`` (``context_count``)."""
    return str(read("_families")["patterns"][name])


def families_data() -> list[dict[str, Any]]:
    """The families of wording, in the order they are asked."""
    return list(read("_families")["families"])


def rate_headers() -> tuple[tuple[str | None, str, str, str, str], ...]:
    """Every file's rate-limit header families, one per budget, in file-name order:
    ``(scope or None, limit header, remaining header, reset header, the reset's format)``."""
    return tuple(
        (row.get("scope"), row["limit"], row["remaining"], row["reset"], row["format"])
        for name in names()
        for row in read(name).get("rate_headers", ())
    )


def metadata_resets() -> tuple[tuple[str, str], ...]:
    """Resets stated as members of an error's metadata: ``(member, format)``."""
    return tuple(
        (row["name"], row["format"])
        for name in names()
        for row in read(name).get("metadata_resets", ())
    )


def day_zones() -> dict[str, str]:
    """Provider -> the zone whose midnight ends its day, where the file states one."""
    return {name: read(name)["day_zone"] for name in names() if "day_zone" in read(name)}


def stream(name: str, api: str) -> dict[str, Any]:
    """How provider ``name``'s stream API ``api`` ends (its file's ``[[streams]]`` entry):
    ``ends_with``, the words of a cut stream's error, and ``terminal_events``, the event types
    that end it where the protocol names them.

    Raises:
        LookupError: the file states no such stream (a stream machine without its facts).
    """
    for entry in read(name).get("streams", ()):
        if entry["api"] == api:
            return dict(entry)
    raise LookupError(f"providers/{name}.toml states no stream {api!r}")
