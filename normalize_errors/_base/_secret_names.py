"""Which names say their value is secret: the one rule (``secret_name``).

Mapping keys and header names (``_safe_copy.sanitize``, pickles, the recorder) and the names
written before a value in text (``_redact``: ``"SecretAccessKey": "..."``, ``AccountKey=...``,
``x-api-key: ...``) are all judged here, so the two can never disagree. A name is secret when,
in any case and with ``-``, ``_``, ``.`` or spaces, its last part (after a separator or a
case change) is one of ``_SECRET_PARTS``, or it is one of the compounds of ``_SECRET_NAMES``
and ``_SECRET_SUFFIXES``; a few cursor names that end like a secret (``pageToken``,
``nextToken``) are not. Every secret name ends with one of ``_SECRET_PARTS`` and holds one of
``_SECRET_WORDS``: ``ENDINGS`` is what the text rule looks for, derived from those two sets.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["ENDINGS", "secret_name"]

_SECRET_NAMES: Final = frozenset(
    {
        "authorization",
        "proxyauthorization",
        "cookie",
        "setcookie",
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "sig",
        "signature",
        "credential",
        "credentials",
    }
)
_SECRET_SUFFIXES: Final = (
    "apikey",
    "token",
    "secret",
    "password",
    "accesskey",
    "secretkey",
    "privatekey",
    "authorization",
)


_NOT_SECRET: Final = frozenset(
    {"pagetoken", "nextpagetoken", "continuationtoken", "nexttoken", "cursortoken"}
)
"""Names that end like a secret's but name a position in a listing or a stream: kept."""

_SECRET_PARTS: Final = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "sig",
        "signature",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "cookie",
        "session",
    }
)
"""A name whose last part (after ``-``, ``_``, a space, a dot or a lower-to-upper case change) is
one of these names a secret: ``Ocp-Apim-Subscription-Key``, ``X-Functions-Key``,
``x-portkey-virtual-key``, ``X-Amz-Signature``, ``X-Amz-Security-Token``, ``client_secret``,
``accessToken``. Plurals other than ``credentials`` are counts, not secrets:
``x-ratelimit-remaining-tokens``, ``max_tokens``."""

_SECRET_WORDS: Final = (
    "auth",
    "cookie",
    "key",
    "token",
    "secret",
    "passw",
    "passphrase",
    "sig",
    "credential",
    "session",
)
"""Every secret name holds one of these."""


def secret_name(name: object) -> bool:
    """Whether a mapping key, header or parameter name says its value is secret.

    The one rule for names, used by ``sanitize``, pickles (``scrub``), the recorder and
    ``redact``'s ``name: value`` fields: any case, ``-``, ``_`` or spaces; the name's last
    part is a secret word (``_SECRET_PARTS``), or the whole name is one of the compound
    ones (``apikey``, ``accesstoken``, ``secretkey``...). ``Authorization``,
    ``"authorization "``, ``X-Api-Key``, ``Ocp-Apim-Subscription-Key``, ``X-Amz-Signature``,
    ``client_secret``, ``Cookie``... are secret; ``x-ratelimit-remaining-tokens``,
    ``anthropic-ratelimit-input-tokens-remaining``, ``retry-after``, ``x-request-id``,
    ``pageToken`` are not.
    """
    if type(name) is str:
        known = _PLAIN_NAMES.get(name)
        if known is not None:
            return known
        if _plain(name):  # no credential can be in it: safe to remember
            known = _secret_name(name)
            if len(_PLAIN_NAMES) < 4096:
                _PLAIN_NAMES[name] = known
            return known
    return _secret_name(name)


def _plain(name: str) -> bool:
    """Whether ``name`` (a plain ``str``) is a name that no credential can be in.

    That is a short identifier (under 16 characters: no key is that short, and a field needs
    a separator), or a header name as ``lower_headers`` makes them (``x-ratelimit-remaining-
    tokens``): at most 64 lower-case ASCII letters and digits in parts of 1 to 15 joined by
    ``-``, without ``sk-``. No key shape fits in it (every one needs ``sk-``, an upper-case
    letter, ``_``, ``.`` or a run of 16 letters or digits), nor any field (every one needs
    ``=``, ``:``, ``%``, ``@``, ``+`` or a blank), nor a random token of 16 characters.
    """
    if len(name) < 16 and name.isidentifier():
        return True
    if len(name) > 64 or not name.isascii() or not name.islower() or "sk-" in name:
        return False
    return all(0 < len(part) < 16 and part.isalnum() for part in name.split("-"))


_PLAIN_NAMES: dict[str, bool] = {}
"""``secret_name`` of the names no credential can be in (``_plain``: ``value``, ``token``,
``x_api_key``, ``x-ratelimit-remaining-tokens``...), at most 4,096 of them: what it keeps
alive is names of that shape alone."""


def _last_part(name: str) -> str:
    """The last part of ``name``, lowered: after the last separator or case change
    (``X-Amz-Signature``, ``XFunctionsKey``, ``X-API-KEY``, ``accessToken``)."""
    end = i = len(name)
    while i and (name[i - 1].islower() or name[i - 1].isdigit()):
        i -= 1
    if i < end:
        if i and name[i - 1].isupper():
            i -= 1
    else:
        while i and name[i - 1].isupper():
            i -= 1
    return name[i:end].lower()


def _secret_name(name: object) -> bool:
    if isinstance(name, (bytes, bytearray)):
        name = bytes(name[:256]).decode("latin-1")
    if not isinstance(name, str):
        return False
    name = str.__str__(name)[:256].strip()  # a subclass's own methods could hide the name
    low = name.lower()
    for word in _SECRET_WORDS:  # most names hold none of them: decided in a few scans
        if word in low:
            break
    else:
        return False
    flat = low.replace("-", "").replace("_", "").replace(" ", "").replace(".", "")
    if flat in _NOT_SECRET:
        return False
    return (
        flat in _SECRET_NAMES
        or flat.endswith(_SECRET_SUFFIXES)
        or _last_part(name) in _SECRET_PARTS
    )


def _endings() -> dict[str, tuple[str, ...]]:
    """For each word of ``_SECRET_WORDS``, what may follow it to the end of a secret name's
    last part (``"passw"``: ``"ord"``, ``"d"``; ``"auth"``: ``"orization"``, ``""``), longest
    first: the ends of the parts of ``_SECRET_PARTS`` that hold the word."""
    return {
        word: tuple(
            sorted(
                {part[part.index(word) + len(word) :] for part in _SECRET_PARTS if word in part},
                key=lambda tail: (-len(tail), tail),
            )
        )
        for word in _SECRET_WORDS
    }


ENDINGS: Final = _endings()
"""Word -> the tails that end a secret name after it (see ``_endings``). A name that
``secret_name`` accepts ends, lowered, with a word and one of its tails: the text rule
(``_redact``) looks for exactly these, then asks ``secret_name`` about the whole name."""
