"""Credential redaction (section 10): what a credential looks like, and how it is replaced.

Every text that enters a ``HarnessError`` passes through ``redact`` (strings) or
``_safe_copy.sanitize`` (nested data) when it is set, so no credential can come out of the error's
attributes, ``str()``, ``repr()``, ``to_dict()`` or ``to_json()`` (``_pickling.scrub`` makes
the copies of vendor objects that go into a pickle).

What is recognised (each replaced by ``[REDACTED]``):

* key formats, wherever they stand: OpenAI (``sk-proj-``, ``sk-svcacct-``, ``sk-admin-``),
  Anthropic (``sk-ant-``), OpenRouter (``sk-or-v1-``), Google API keys (``AIza`` and
  exactly 35 key characters, no 40th after them; also ``AIzaSy`` and 33 with more after),
  Google OAuth access tokens (``ya29.``), Groq (``gsk_``) and xAI (``xai-``) keys. These
  prefixes are long or rare enough to be recognised even glued to the text before them
  (``abcsk-proj-...``), by the prefix, the key's character set and its least length;
* key formats that must start a word (a letter or digit before them means it is some
  other word): ``sk-`` (OpenAI, DeepSeek), ``AIza`` (Google), ``hf_`` (Hugging Face),
  ``AKIA``/``ASIA`` (AWS access key ids) and JSON Web Tokens (``eyJ...``). An escape
  (``\\n``, ``\\t``, ``\\u0020``) or a percent-encoded byte (``%20``) before them counts as
  a word start;
* keys hard-wrapped across lines (``\\n``, ``\\r\\n`` or an escaped ``\\n`` inside them);
* ``Bearer`` / ``Basic`` credentials (also ``Bearer%20...`` and ``Bearer+...``);
* the whole value of ``Authorization``, ``Proxy-Authorization``, ``Cookie`` and
  ``Set-Cookie`` (any scheme, every cookie) up to the end of the line or quoted string;
* the value of credential-named fields written ``name: value``, ``name=value`` or
  ``"name": "value"`` (any case, ``-`` or ``_``): ``api_key``, ``x-api-key``,
  ``x-goog-api-key``, ``access_token`` and every other ``*_token``, ``client_secret``,
  ``password``, ``secret_key``, ``private_key``...; and of the short names ``key``,
  ``token``, ``secret``, ``sig``, ``signature``, ``credential`` written ``name=value`` (as
  in a query string, ``?key=``, ``#key=``, ``;token=``, ``key%3D...``) or ``"name": value``;
* the user information of a URL (``https://user:password@host``).

Every pattern runs in linear time on a text cut to a stated bound first (``PATTERNS`` lists
each with its bound and why it is linear); texts are redacted before they are cut, so a key
straddling a cut is recognised whole. ``redact_all`` (logs, stack traces) never cuts: it reads
a long text in overlapping windows of that bound. The texts bound for one error are read
together, in one scan of them joined (``_safe_copy.Batch``, ``redact_together``: ``JOIN``
says why that finds what reading each alone finds). Nothing is cached, neither a text nor
its ``hash()``, but names that no credential can be in (``_plain``: short identifiers and
header names, at most 4,096 of them, with whether they name a secret): a text of a ``str``
subclass is read as its characters, whatever its ``__hash__``, ``__eq__``, ``len()`` or
``lower()`` say.
"""

from __future__ import annotations

from ._lazy import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "JOIN",
    "KEY_SHAPES",
    "MARGIN",
    "MAX_REDACT",
    "PATTERNS",
    "REDACTED",
    "clip",
    "cut",
    "holds_key",
    "redact",
    "redact_all",
    "redact_together",
    "secret_name",
]

REDACTED: Final = "[REDACTED]"

MAX_REDACT: Final = 16_384
"""Longest text ``redact`` returns; a longer text is redacted, then cut there (marked ``…``)."""
MARGIN: Final = 512
"""Characters read past a cut, so a key that straddles the cut is recognised whole first."""

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


# -- the patterns ------------------------------------------------------------------------------
#
# Every pattern below runs only on a text of at most MAX_REDACT + MARGIN characters (``clip``
# cuts first). Why each is linear in that length is stated next to it; the rule they all
# follow: a quantifier that can run long is either the last thing its branch needs (a greedy
# run that cannot fail once begun, so a failed start costs at most the branch's least
# length) or may start only at the start of a run of its own characters (so each character
# is scanned from a bounded number of starts), or it is bounded by a small constant.

_BODY: Final = "A-Za-z0-9_-"


def _word(literal: str, before: str = "A-Za-z0-9") -> str:
    """``literal`` (letters, digits, ``-``, ``_``) where a word starts: not after ``[before]``,
    unless right after an escape (``\\n``, ``\\u0020``) or a %XX byte. The lookbehinds follow
    the literal, so the engine looks for the literal first."""
    lit = literal
    return (
        rf"{lit}(?:(?<![{before}]{lit})|(?<=\\[nrtbf]{lit})"
        rf"|(?<=%[0-9A-Fa-f]{{2}}{lit})|(?<=\\u[0-9A-Fa-f]{{4}}{lit}))"
    )


KEY_SHAPES: Final = (
    # Distinctive prefixes, recognised glued to anything: prefix, then a greedy run of the
    # key's characters with nothing after it, so a start fails after at most its least
    # length (20 or 33) and a match consumes what it scanned. Linear.
    rf"sk-(?:proj|svcacct|admin|ant|or-v1)-[{_BODY}]{{20,}}"
    # A Google API key is AIza and exactly 35 more key characters: glued to the text before it
    # it is recognised by that exact length with no 40th key character after it (a fixed-width
    # match and a one-character lookahead per start). Linear.
    rf"|AIza[{_BODY}]{{35}}(?![{_BODY}])"
    rf"|AIzaSy[{_BODY}]{{33}}"
    rf"|ya29\.[{_BODY}]{{20,}}"
    r"|gsk_[A-Za-z0-9]{20,}"
    r"|xai-[A-Za-z0-9]{20,}"
    # Short or common prefixes, only at a word start; same greedy-tail argument. Linear.
    rf"|{_word('sk-')}[{_BODY}]{{16,}}"
    rf"|{_word('AIza')}[{_BODY}]{{35}}"
    rf"|{_word('hf_')}[A-Za-z0-9]{{30,}}"
    rf"|(?:{_word('AKIA')}|{_word('ASIA')})[A-Z0-9]{{16}}"
    # JSON Web Token: three dot-separated runs. The first may start only at a run start (not
    # after - or _ either) and each segment stays inside one run of its characters, so every
    # run is scanned from at most three starts (its own and the two before it). Linear.
    rf"|{_word('eyJ', _BODY)}[{_BODY}]{{8,}}\.[{_BODY}]{{8,}}\.[{_BODY}]*"
)
"""The shapes of API keys and tokens (a regular expression), whatever surrounds them."""

# A backtick quotes like a quote mark (Markdown, docstrings): "api_key=`...`" is the value
# quoted, and "`api_key=`," names the argument with no value at all.
_SEP: Final = r"""(?:\\?["'`])?[ \t]*(?::|=|%3[AaDd])[ \t]*(?:\\?["'`])?"""
_QUOTED_SEP: Final = r"""(?:(?:=|%3[Dd])(?:\\?["'`])?|\\?["'`][ \t]*:[ \t]*(?:\\?["'`])?)"""

_VALUE: Final = r"""([^\s"'`,;&}<>\\]+)"""
"""A field's value: a greedy run that cannot fail once begun (at least one character)."""
_REST: Final = r"""([^\r\n"'\\<>]+)"""
"""A header's whole value, to the end of the line or quoted string; cannot fail once begun."""


def _field(
    name: str, tail: str, anchors: tuple[str, ...] = (), gate: str = ""
) -> tuple[str, tuple[str, ...], LazyPattern]:
    """A field pattern, run only on text holding ``gate`` (default ``name``) and one of
    ``anchors`` (default ``name``)."""
    return gate or name, anchors or (name,), LazyPattern(name + tail)


def _quoted(name: str) -> tuple[str, ...]:
    """The ways ``name`` can stand right before a quoted separator: ``=``, ``%3d``, a quote."""
    return (name + "=", name + "%3d", name + '"', name + "'", name + "`", name + "\\")


# Field contexts, each run only on text holding its literal name, on the text lowered (ASCII
# letters only, so positions agree: case-insensitive patterns run many times slower). Each
# starts with its literal name (the engine searches for it) and checks what stands before the
# name with fixed-width lookbehinds after it; group 1 is what is replaced. Linear: the name
# occurs at disjoint places, a separator is of bounded shape (its blanks are one run), and
# the value is a greedy run that cannot fail once begun, or (userinfo) ends at the first
# '/', which every start '://' holds, so runs from different starts never overlap.
_FIELDS: Final = (
    _field("bearer", r"(?<![a-z0-9]bearer)(?:[ \t]+|%20|\+)([a-z0-9._~+/=-]{8,})"),
    _field("basic", r"(?<![a-z0-9]basic)(?:[ \t]+|%20|\+)([a-z0-9._~+/=-]{8,})"),
    # Authorization (also Proxy-), Cookie (also Set-): the whole value, any scheme, all cookies.
    _field("authorization", rf"(?<![a-z0-9]authorization){_SEP}{_REST}"),
    _field("cookie", rf"(?<![a-z0-9]cookie){_SEP}{_REST}"),
    # x-api-key, api_key, apikey, x-goog-api-key, secret_access_key...: any separator; a bare
    # "key" only as key=value or "key": value.
    _field(
        "key",
        rf"(?:(?:(?<=[-_]key)|(?<=apikey)){_SEP}|(?<![a-z0-9]key){_QUOTED_SEP}){_VALUE}",
        ("_key", "-key", "apikey", *_quoted("key")),
    ),
    _field(
        "token",
        rf"(?:(?<=[-_]token){_SEP}|(?<![a-z0-9]token){_QUOTED_SEP}){_VALUE}",
        ("_token", "-token", *_quoted("token")),
    ),
    _field("secret", rf"(?<![a-z0-9]secret){_SEP}{_VALUE}"),
    _field("passw", rf"(?:or)?d{_SEP}{_VALUE}"),
    _field(
        "sig",
        rf"(?<![a-z0-9]sig)(?:nature)?{_QUOTED_SEP}{_VALUE}",
        (*_quoted("sig"), "signature"),
    ),
    _field("credential", rf"(?<![a-z0-9]credential){_QUOTED_SEP}{_VALUE}"),
    # URL user information (user:password@), only in text holding an '@'.
    _field("://", r"""([^\s/?#@:"'<>\\]*(?::[^\s/?#@"'<>\\]*)?)@""", gate="@"),
)

# Line breaks a hard-wrapped key may hold: a literal run of one or two, linear.
_BREAKS: Final = LazyPattern(r"\r\n|\n|\r|\\r\\n|\\n")
# A value is a credential only if it holds a letter or a digit: no key, token, password or
# signature is punctuation alone ("***", "…", the "." after "`api_key=`" in a sentence).
_MEANINGFUL: Final = LazyPattern(r"[^\W_]")
_KEYS: Final = LazyPattern(KEY_SHAPES)

_BOUND: Final = "MAX_REDACT + MARGIN characters (clip cuts first)"
PATTERNS: Final = (
    (
        "redact: key shapes",
        _KEYS,
        _BOUND,
        "each branch is a literal prefix then a greedy run with nothing after it (a failed "
        "start costs at most the least length); a JWT starts only at a run start and each "
        "segment stays in one run, so a run is scanned from at most three starts",
    ),
    (
        "redact: line breaks",
        _BREAKS,
        _BOUND,
        "an alternation of literals of one or two characters",
    ),
    (
        "redact: a letter or digit in a value",
        _MEANINGFUL,
        _BOUND,
        "one character class, no repetition",
    ),
    *(
        (
            f"redact: field {pattern.source.partition('(')[0]!r}",
            pattern,
            _BOUND,
            "a literal name (its occurrences are disjoint), fixed-width lookbehinds, a "
            "separator of bounded shape, then a greedy run that cannot fail once begun "
            "(userinfo: runs end at '/', which every start '://' holds, so they never overlap)",
        )
        for _, _, pattern in _FIELDS
    ),
)
"""Every pattern of this module: (name, pattern, the bound of its input, why it is linear)."""

_KEY_ANCHORS: Final = ("sk-", "aiza", "ya29.", "eyj", "gsk_", "xai-", "hf_", "akia", "asia")
"""Lower-case text every key shape contains."""
_GATES: Final = _KEY_ANCHORS + tuple(gate for gate, _, _ in _FIELDS)
"""Text holding none of these is clean."""
_KEY_ANCHOR_SET: Final = frozenset(_KEY_ANCHORS)
_FIELDS_BY_GATE: Final[dict[str, tuple[tuple[tuple[str, ...], LazyPattern], ...]]] = {
    gate: tuple((anchors, pattern) for g, anchors, pattern in _FIELDS if g == gate)
    for gate, _, _ in _FIELDS
}
_SHORTEST: Final = 5
"""No recognised credential form fits in fewer characters (``key=x``)."""
_KEY_LEAST: Final = 19
"""No key shape fits in fewer characters (``sk-`` and 16 more)."""
_SEPARATORS: Final = ("=", ":", "%", "@", " ", "\t", "+")
"""Every field form holds one of these (a separator, ``%3D``, ``Bearer+``, ``user@``)."""
_UPPER: Final = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def _lower(text: str) -> str:
    """``text`` with ASCII letters lowered, every character where it was."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_UPPER)


def _holds(low: str, anchors: tuple[str, ...]) -> bool:
    """Whether ``low`` holds one of ``anchors`` (a plain loop: faster than any() or map())."""
    for anchor in anchors:  # noqa: SIM110
        if anchor in low:
            return True
    return False


def holds_key(text: str) -> bool:
    """Whether ``text`` holds a key of a recognised format, read in overlapping windows of
    ``MAX_REDACT + MARGIN`` characters (no key is longer than ``MARGIN``)."""
    pattern = _KEYS.compiled()
    return any(
        pattern.search(text[i : i + MAX_REDACT + MARGIN]) is not None
        for i in range(0, max(len(text), 1), MAX_REDACT)
    )


def _spans(text: str, low: str | None = None) -> list[tuple[int, int]]:
    """Where the credentials in ``text`` are (start, end), in no particular order.

    ``low`` is ``text`` lowered as ``_lower`` does (given by ``redact_together``, which lowers
    each text of a batch on its own); the field patterns run on it."""
    if low is None:
        low = _lower(text)
    spans: list[tuple[int, int]] = []
    hits = [gate for gate in _GATES if gate in low]  # one scan per gate, then only the hits
    broken = "\n" in text or "\r" in text or "\\n" in text or "\\r" in text
    keyed = not _KEY_ANCHOR_SET.isdisjoint(hits)
    if broken and not keyed:  # a line break may cut a key's own prefix ("AI\nzaSy...")
        keyed = _holds(_BREAKS.compiled().sub("", low), _KEY_ANCHORS)
    if not hits and not keyed:
        return spans
    if keyed:
        spans.extend(m.span() for m in _KEYS.compiled().finditer(text))
        if broken:
            spans.extend(_wrapped(text))
    for gate in hits:
        for anchors, pattern in _FIELDS_BY_GATE.get(gate, ()):
            if _holds(low, anchors):
                for match in pattern.compiled().finditer(low):
                    begin, end = match.span(1)
                    if _MEANINGFUL.compiled().search(low, begin, end):  # "`api_key=`." has no value
                        spans.append((begin, end))
    return spans


def _wrapped(text: str) -> list[tuple[int, int]]:
    """Keys that a line break cuts in two: found in the text with its breaks removed."""
    from bisect import bisect_right

    pieces: list[str] = []
    starts: list[int] = []  # where each piece starts in the joined text
    origins: list[int] = []  # ... and in ``text``
    pos = joined_at = 0
    for match in _BREAKS.compiled().finditer(text):
        begin, end = match.span()
        pieces.append(text[pos:begin])
        starts.append(joined_at)
        origins.append(pos)
        joined_at += begin - pos
        pos = end
    pieces.append(text[pos:])
    starts.append(joined_at)
    origins.append(pos)
    found = []
    for match in _KEYS.compiled().finditer("".join(pieces)):
        begin, end = match.span()
        first = bisect_right(starts, begin) - 1
        last = bisect_right(starts, end - 1) - 1
        if first != last:  # within one line the first pass saw it
            head = origins[first] + begin - starts[first]
            found.append((head, origins[last] + end - starts[last]))
    return found


def clip(text: str, limit: int = MAX_REDACT) -> str:
    """``text`` redacted, then cut to ``limit`` characters (marked ``…``).

    Redaction reads ``MARGIN`` characters past the cut, so a key that straddles it is
    replaced whole: no part of it survives. Patterns never see more than
    ``limit + MARGIN`` characters. The result is a plain ``str``: a subclass is read, and
    returned, as its characters (its own methods could hide a key).
    """
    if type(text) is not str:
        text = str.__str__(text)
    size = len(text)
    if size <= limit and (
        size < _SHORTEST or (size < _KEY_LEAST and not _holds(text, _SEPARATORS))
    ):
        return text  # too short for a key, and no field without a separator
    cut = size > limit
    window = text[: limit + MARGIN] if cut else text
    spans = _spans(window)
    if not spans:
        return window[:limit] + "…" if cut else text
    spans.sort()
    return _replaced(window, spans, limit) + ("…" if cut else "")


def _replaced(text: str, spans: list[tuple[int, int]], limit: int) -> str:
    """``text`` up to ``limit`` with each of ``spans`` (sorted) replaced by ``REDACTED``;
    overlapping spans make one, and a span that is already a stand-in is kept as it is."""
    out: list[str] = []
    pos = 0
    for begin, end in spans:
        if begin >= limit:
            break
        if end <= pos:
            continue
        if text[begin:end] in _PLACEHOLDERS:
            continue  # already replaced (a recorder's REDACTED): kept as it is, so redact twice
        if begin >= pos:
            out.append(text[pos:begin])
            out.append(REDACTED)
        pos = end  # an overlapping span extends the one before
    if pos < limit:
        out.append(text[pos:limit])
    return "".join(out)


_PLACEHOLDERS: Final = frozenset({REDACTED, "REDACTED", "%5BREDACTED%5D", "%5bREDACTED%5d"})
"""Values that are already a stand-in for a credential: ``redact`` leaves them as they are."""

_KEY_CHARS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~+/=%\\"
)
"""Characters a key, a token or their escaped or percent-encoded forms are made of."""


def cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters (marked ``…``) where no key can straddle.

    A cut that would split a run of key characters moves back to the run's start (at most
    ``MARGIN`` characters back), so no head of a key is left to be missed by redaction.
    For texts that are redacted at once, ``clip`` is better: it cuts exactly at ``limit``.
    """
    if len(text) <= limit:
        return text
    end = limit
    if text[end] in _KEY_CHARS:
        stop = max(0, limit - MARGIN)
        while end > stop and text[end - 1] in _KEY_CHARS:
            end -= 1
    return text[:end] + "…"


def redact(text: str) -> str:
    """Return ``text`` with every credential it contains replaced by ``[REDACTED]``.

    A text over ``MAX_REDACT`` (16,384) characters is redacted, then cut there (marked
    ``…``). Fast on clean text: text without any credential's tell-tale substring skips the
    patterns. Nothing is kept, neither the text nor its hash.
    """
    return clip(text, MAX_REDACT)


JOIN: Final = "<"
"""What ``redact_together`` puts between the texts it reads in one scan.

No credential form can hold it or read across it: the key shapes and a ``Bearer`` token are
made of letters, digits and ``._~+/=-``; every value class excludes it (``_VALUE``, ``_REST``,
the URL user information); no name, separator or gate holds it; and every class a lookaround
tests the character next to a match with (``[A-Za-z0-9]``, ``[A-Za-z0-9_-]``, ``[a-z0-9]``,
``[nrtbf]``, ``[0-9A-Fa-f]``, ``[-_]``) leaves it out, so beside it a pattern behaves as at
the start or the end of a text. Hence the matches in the joined text are exactly the matches
in each text, each inside its own text (``tests/hostile/test_batch.py`` checks the patterns
for it, and compares the two ways on generated texts)."""


def redact_together(texts: list[str]) -> list[str]:
    """``[redact(text) for text in texts]`` for plain ``str`` texts of at most ``MAX_REDACT``
    characters, in one scan: the texts are joined with ``JOIN`` (in groups of at most
    ``MAX_REDACT + MARGIN`` characters, the bound every pattern is run on) and each
    credential found in the joined text is replaced in the text it lies in. A text under
    ``_SHORTEST`` characters is left out and comes back as it is, as ``redact`` leaves it.
    Returns ``texts`` itself when none holds a credential; a text that holds none comes back
    as the same object.

    Why it is the same as redacting each text: a gate (``_GATES``) found in a text is found
    in the joined text; each text is lowered on its own (``_redact_group``), so every
    position agrees; and no match can hold ``JOIN`` or tell it from the edge of a text (see
    ``JOIN``). Should a match ever cross a text's edge all the same, each text of the group
    is redacted on its own instead.
    """
    if min(map(len, texts), default=_SHORTEST) < _SHORTEST:  # ``redact`` leaves those be
        some = iter(redact_together([text for text in texts if len(text) >= _SHORTEST]))
        return [text if len(text) < _SHORTEST else next(some) for text in texts]
    size = len(texts) + sum(map(len, texts))
    if size <= MAX_REDACT + MARGIN:
        return _redact_group(texts)
    out: list[str] = []
    group: list[str] = []
    size = 0
    for text in texts:
        if group and size + len(text) > MAX_REDACT + MARGIN:
            out.extend(_redact_group(group))
            group, size = [], 0
        group.append(text)
        size += len(text) + 1
    out.extend(_redact_group(group))
    return out


def _redact_group(texts: list[str]) -> list[str]:
    """``redact_together`` for texts that, joined, fit ``MAX_REDACT + MARGIN`` characters."""
    joined = JOIN.join(texts)
    low = joined.lower()
    if len(low) != len(joined):
        # Lowering maps each character on its own (the Greek final sigma aside, lowered to
        # one of two letters no pattern tells apart), so when no character changes length
        # the joined text lowered is the texts lowered and joined; else each is lowered as
        # ``_lower`` would lower it alone.
        low = JOIN.join([_lower(text) for text in texts])
    spans = _spans(joined, low)
    if not spans:
        return texts
    spans.sort()
    out: list[str] = []
    start = taken = 0
    for text in texts:
        end = start + len(text)
        mine: list[tuple[int, int]] = []
        while taken < len(spans) and spans[taken][0] < end:
            begin, stop = spans[taken]
            if begin < start or stop > end:  # across an edge: cannot be, but never trusted
                return [clip(each, len(each)) for each in texts]
            mine.append((begin - start, stop - start))
            taken += 1
        out.append(_replaced(text, mine, len(text)) if mine else text)
        start = end + 1
    return out


_VALUE_ENDS: Final = ("\r", "\n", '"', "'", "\\", "<", ">")
"""Where a credential's value surely ends: the terminators of the longest value form (a
header's whole value, ``_REST``). A match cut short by a window's end runs on to one."""


def _value_end(text: str, pos: int) -> int:
    """The first position at or after ``pos`` holding one of ``_VALUE_ENDS`` (else the end),
    looked for a ``MAX_REDACT`` piece at a time: linear in the distance covered."""
    size = len(text)
    while pos < size:
        piece = text[pos : pos + MAX_REDACT]
        found = [at for at in map(piece.find, _VALUE_ENDS) if at >= 0]
        if found:
            return pos + min(found)
        pos += len(piece)
    return size


def _run_start(text: str, pos: int) -> int:
    """``pos``, moved back (at most ``MARGIN``) to the start of the run of key characters it
    falls in, so that a window starting there never starts in the middle of a key."""
    if pos >= len(text):
        return pos
    stop = max(0, pos - MARGIN)
    while pos > stop and text[pos - 1] in _KEY_CHARS:
        pos -= 1
    return pos


def redact_all(text: str) -> str:
    """``text`` with every credential replaced by ``[REDACTED]``, however long: never cut.

    For logs and stack traces, whose last line (the exception's type and message) must
    survive. The text is read in windows of ``MAX_REDACT + MARGIN`` characters that start
    every ``MAX_REDACT`` characters (moved back to the start of a run of key characters),
    so each window overlaps the next by at least ``MARGIN`` (longer than any key shape can
    match) and a key straddling a window's edge is seen whole in one of them. A value found
    running to a window's end (a long header or field value) is replaced on to the next
    character that ends such a value, and the next window starts after it, so the time
    stays linear. Returns ``text`` itself (the same object) when it holds no credential.
    """
    if type(text) is not str:  # a subclass is read as its characters, whatever it says
        text = str.__str__(text)
    size = len(text)
    if size <= MAX_REDACT:
        return clip(text, MAX_REDACT)
    spans: list[tuple[int, int]] = []
    start = 0
    while start < size:
        stop = min(start + MAX_REDACT + MARGIN, size)
        resume = _run_start(text, start + MAX_REDACT)
        for first, last in _spans(text[start:stop]):
            begin, end = start + first, start + last
            if end == stop < size:  # cut short by the window's end
                if begin >= resume:
                    continue  # the next window starts before it and sees it whole
                end = _value_end(text, end)  # longer than MARGIN: run on to the value's end
                resume = max(resume, end)
            spans.append((begin, end))
        start = resume
    if not spans:
        return text
    spans.sort()
    out: list[str] = []
    pos = 0
    for begin, end in spans:
        if end <= pos:
            continue
        if text[begin:end] in _PLACEHOLDERS:
            continue  # already a stand-in (a recorder's REDACTED): kept as it is
        if begin >= pos:
            out.append(text[pos:begin])
            out.append(REDACTED)
        pos = end  # an overlapping span extends the one before
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)
