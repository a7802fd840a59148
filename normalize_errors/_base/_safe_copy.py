"""JSON-safe, size-bounded, redacted copies of what an error holds (its members).

``sanitize`` copies nested data (``upstream``, unknown members) into plain JSON values, within
stated bounds of size, depth and count, with every text redacted (``_redact``) and made
UTF-8-safe; ``Batch`` is the same copy for all of one error's members at once, their texts
read together in one scan (``_redact.redact_together``).
"""

from __future__ import annotations

import math

from ._redact import _SHORTEST, MAX_REDACT, REDACTED, clip, redact_together
from ._secret_names import _PLAIN_NAMES, _plain, secret_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "MAX_ITEMS",
    "MAX_NODES",
    "MAX_TEXT",
    "Batch",
    "sanitize",
    "utf8_safe",
]

MAX_TEXT: Final = 4096
"""Longest string kept inside ``upstream`` and unknown members; longer ones are cut."""
MAX_ITEMS: Final = 64
"""Most entries kept from one mapping or sequence inside ``upstream``."""
MAX_DEPTH: Final = 8
"""Deepest nesting kept inside ``upstream``; deeper values become a short text."""


def utf8_safe(text: str) -> str:
    """``text`` with every lone surrogate (half of a cut emoji) replaced by U+FFFD.

    Lone surrogates are valid in JSON text (``"\\ud83d"``) and in ``str``, but no UTF-8
    encoder accepts them: ``to_http()``, ``to_json().encode()`` and a terminal would fail.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


MAX_NODES: Final = 10_000
"""Most values one ``sanitize`` call copies (mappings, lists and what they hold, together);
past that each value is ``…``. Far above any real vendor body; it bounds shared sub-objects."""

MAX_INT_BITS: Final = 13_000
"""Integers longer than this (about 3,900 decimal digits) are kept as a note of their size:
Python refuses to write ints over 4,300 digits as text, which ``repr`` and JSON need."""


def sanitize(value: Any, limit: int = MAX_TEXT, depth: int = 0) -> Any:
    """Return a JSON-ready, redacted, size-bounded copy of ``value``.

    Mappings keep string keys (others are turned into text) and lose the values of
    secret-named keys (see ``secret_name``); a sequence of ``(name, value)`` pairs (a
    header list) loses the values of secret-named pairs; sequences become lists;
    non-finite floats become ``None``; integers too long to write as text a note of their
    size; any other object becomes its redacted ``repr``. Strings are redacted, then cut at
    ``limit`` characters and marked with ``…``, and made UTF-8-safe (``utf8_safe``). Never
    raises.

    One call copies at most ``MAX_NODES`` values in all: a sub-object shared by many
    references (YAML anchors, a dict built with the same list many times) is copied once per
    reference, so without that budget 8 references per level over 7 levels would be 8**7
    copies. Past the budget each further value is the marker ``…``, as past ``MAX_DEPTH``.

    The texts of the copy (keys and values) are redacted together, in one scan (``Batch``).
    """
    box: list[Any] = [None]
    batch = Batch()
    batch.put(box, 0, value, limit, depth)
    batch.done()
    return box[0]


class Batch:
    """The texts bound for one object (an error's members), redacted together in one scan.

    ``put`` stores a JSON-ready, size-bounded copy of a value into a container (a dict or a
    list, at a key or an index), as ``sanitize`` describes, with each text of the copy left
    as it is and noted; ``text`` stores and notes one text. ``done`` then redacts every noted
    text at once (``redact_together``; a text noted twice is read once) and writes the ones
    that change back where they went. Until ``done`` the copies may hold credentials: call it
    before anything else reads them. A text longer than its bound is redacted and cut at once
    (``clip``), as is every text made from an object (a ``repr``, bytes, a key that is no
    string). Texts are read as plain ``str``: a subclass is copied to its characters first,
    whatever its ``__hash__``, ``__eq__`` or other methods say.
    """

    __slots__ = ("_budget", "_places", "_seen", "_texts")

    def __init__(self) -> None:
        self._texts: list[str] = []
        """The texts noted, each once."""
        self._seen: dict[str, int] = {}
        """The index of each text noted (plain ``str`` only, for this object alone)."""
        self._places: list[tuple[Any, Any, int]] = []
        """Where noted texts went: (container, key or index, the text's index); a key of
        a mapping has its index as ``-1 - index``."""
        self._budget = MAX_NODES
        """The values the copy ``put`` is making may still have (shared by all of them)."""

    def text(self, into: Any, at: Any, value: str, limit: int = MAX_REDACT) -> None:
        """Store ``value`` (a text member: redacted, cut at ``limit``, UTF-8-safe once
        ``done``) as ``into[at]``. Raises ``TypeError`` for a value that is no string."""
        text = value if type(value) is str else str.__str__(value)
        if len(text) > limit:
            into[at] = utf8_safe(clip(text, limit))
        elif len(text) < _SHORTEST:  # too short for any credential form
            into[at] = text if text.isascii() else utf8_safe(text)
        else:
            into[at] = text
            self._note(text, into, at, False)

    def put(self, into: Any, at: Any, value: Any, limit: int = MAX_TEXT, depth: int = 0) -> None:
        """Store the ``sanitize`` copy of ``value`` as ``into[at]`` (redacted once ``done``)."""
        self._budget = MAX_NODES
        self._put(into, at, value, limit, depth)

    def done(self) -> None:
        """Redact every noted text and write back the ones that change."""
        texts = self._texts
        if not texts:
            return
        cleaned = redact_together(texts)
        if cleaned is texts and all(map(str.isascii, texts)):
            return  # nothing to change: the common case
        final = [utf8_safe(text) for text in cleaned]
        renamed: list[tuple[dict[str, Any], str, str]] = []
        for into, at, index in self._places:
            if index < 0:  # a mapping's key
                text = texts[-1 - index]
                new = final[-1 - index]
                if new is not text:
                    renamed.append((into, at, new))
            else:
                text = texts[index]
                new = final[index]
                if new is not text and into[at] == text:  # a later key may have replaced it
                    into[at] = new
        for mapping, old, name in renamed:  # a key that changed: the mapping keeps its order
            items = list(mapping.items())
            mapping.clear()
            for key, item in items:
                mapping[name if key == old else key] = item

    def _note(self, text: str, into: Any, at: Any, is_key: bool) -> None:
        index = self._seen.get(text)
        if index is None:
            index = self._seen[text] = len(self._texts)
            self._texts.append(text)
        self._places.append((into, at, -1 - index if is_key else index))

    def _put(self, into: Any, at: Any, value: Any, limit: int, depth: int) -> None:
        self._budget -= 1
        if isinstance(value, str):
            self.text(into, at, value, limit)
        elif value is None or value is True or value is False:
            into[at] = value
        elif isinstance(value, int):
            if value.bit_length() > MAX_INT_BITS:
                into[at] = f"<an integer of {value.bit_length()} bits>"
            else:
                into[at] = int(value)
        elif isinstance(value, float):
            into[at] = float(value) if math.isfinite(value) else None
        elif depth >= MAX_DEPTH or self._budget < 0:
            into[at] = "…"
        elif isinstance(value, dict) or _mapping_like(value):
            self._mapping(into, at, value, limit, depth)
        elif isinstance(value, (list, tuple)):
            out: list[Any] = []
            into[at] = out
            for item in value[:MAX_ITEMS]:
                out.append(None)
                self._item(out, len(out) - 1, item, limit, depth + 1)
        elif isinstance(value, (bytes, bytearray)):
            into[at] = clip(bytes(value[: limit * 4]).decode("utf-8", "replace"), limit)
        else:
            into[at] = utf8_safe(clip(_safe_repr(value), limit))

    def _mapping(self, into: Any, at: Any, value: Any, limit: int, depth: int) -> None:
        try:
            items = list(value.items())[:MAX_ITEMS]
        except Exception:  # a hostile mapping
            into[at] = utf8_safe(clip(_safe_repr(value), limit))
            return
        out: dict[str, Any] = {}
        into[at] = out
        seen, texts, places = self._seen, self._texts, self._places
        for key, item in items:
            secret = _PLAIN_NAMES.get(key) if type(key) is str else None
            if secret is not None:
                name = key  # a name no credential can be in (``_plain``)
            elif isinstance(key, str):
                name = key if type(key) is str else str.__str__(key)
                secret = secret_name(name)
                if len(name) > 256:
                    name = utf8_safe(clip(name, 256))
                elif not _plain(name):
                    self._note(name, out, name, True)
            else:
                name = utf8_safe(clip(_safe_repr(key), 256))
                secret = secret_name(key)
            if secret:
                out[name] = REDACTED
            elif type(item) is str and len(item) <= limit:
                # Most values: ``_put`` and ``_note``, written out.
                self._budget -= 1
                out[name] = item
                if len(item) < _SHORTEST:  # too short for any credential form
                    if not item.isascii():
                        out[name] = utf8_safe(item)
                    continue
                index = seen.get(item)
                if index is None:
                    index = seen[item] = len(texts)
                    texts.append(item)
                places.append((out, name, index))
            else:
                self._put(out, name, item, limit, depth + 1)

    def _item(self, into: list[Any], at: int, item: Any, limit: int, depth: int) -> None:
        """One entry of a sequence; a secret-named ``(name, value)`` pair loses its value."""
        if isinstance(item, (list, tuple)) and len(item) == 2 and secret_name(item[0]):
            pair: list[Any] = [None, REDACTED]
            into[at] = pair
            self._put(pair, 0, item[0], 256, depth)
        else:
            self._put(into, at, item, limit, depth)


def _mapping_like(value: Any) -> bool:
    """Whether ``value`` looks like a mapping (``items`` and ``keys``); an object whose
    attributes raise is none."""
    try:
        return hasattr(value, "items") and hasattr(value, "keys")
    except Exception:
        return False


def _safe_repr(value: object) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"
