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
* the value written after a name ``secret_name`` accepts (the one rule for names, in
  ``_secret_names``: ``SecretAccessKey``, ``SessionToken``, ``AccountKey``, ``x-api-key``,
  ``client_secret``, ``sig``...), as JSON, a repr, JSON inside JSON strings, ``name=value``,
  ``name: value``, a ``;``-separated connection string or a query. A quoted value to its
  closing quote of the same kind (at most ``QUOTED_MOST`` characters), blanks, ``;`` and
  escapes included; an unquoted one to a blank or one of ``"'`,;&}<>\\``, and the value of an
  ``Authorization``, ``Proxy-Authorization``, ``Cookie`` or ``Set-Cookie`` header to the end
  of its line. A bare prose word (``_PROSE``: "Unexpected token: foo") before an unquoted
  colon and value is no field;
* the body of a PEM private key (``-----BEGIN ... PRIVATE KEY-----``) to its END line, or to
  the end of the text read when it was cut before it;
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
from ._secret_names import _SECRET_WORDS, ENDINGS, secret_name

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


def _field(name: str, tail: str, gate: str = "") -> tuple[str, LazyPattern]:
    """A context pattern, run only on text holding ``gate`` (default ``name``)."""
    return gate or name, LazyPattern(name + tail)


# Credentials known by what stands before them rather than by a name: a Bearer or Basic
# credential, and URL user information. Each runs only on text holding its literal gate, on
# the text lowered (ASCII letters only, so positions agree: case-insensitive patterns run many
# times slower); group 1 is what is replaced. Linear: Bearer and Basic start with their literal
# word (its occurrences are disjoint), checked by a fixed-width lookbehind after it, then a
# separator of bounded shape and a greedy run that cannot fail once begun; user information
# ends at the first '/', which every start '://' holds, so runs from different starts never
# overlap.
_FIELDS: Final = (
    _field("bearer", r"(?<![a-z0-9]bearer)(?:[ \t]+|%20|\+)([a-z0-9._~+/=-]{8,})"),
    _field("basic", r"(?<![a-z0-9]basic)(?:[ \t]+|%20|\+)([a-z0-9._~+/=-]{8,})"),
    # URL user information (user:password@), only in text holding an '@'.
    _field("://", r"""([^\s/?#@:"'<>\\]*(?::[^\s/?#@"'<>\\]*)?)@""", gate="@"),
)

# -- named values: one rule with secret_name ---------------------------------------------------
#
# A value is secret when the name written before it is: every name ``secret_name`` accepts ends
# with a word of ``_SECRET_WORDS`` and one of its ``ENDINGS``, so one pattern per word finds
# where such a name ends and the separator after it (group 1 the word, 2 a quote closing the
# name, 3 the separator, 4 a quote opening the value); the name is read back from there
# (``_secret_name_start``, at most ``_NAME_MOST`` characters) and ``secret_name`` decides.
# Linear: a pattern starts with its literal word (its occurrences are disjoint) and its
# separator is of bounded shape (its blanks one run); a value is read only after a secret
# name, and a name inside a value already read is passed over.
_ESCAPED_MOST: Final = 7
"""Most backslashes before a quote that is read as a quote: JSON inside a JSON string (one),
nested again (three, seven)."""
_QUOTE: Final = rf"""(\\{{0,{_ESCAPED_MOST}}}["'`])"""
_NAME_SEP: Final = rf"{_QUOTE}?[ \t]*(:|=|%3[ad])[ \t]*{_QUOTE}?"


def _named(word: str) -> LazyPattern:
    """``word`` and one of its ``ENDINGS`` (``passw(?:ord|d)``), then ``_NAME_SEP``."""
    tails = ENDINGS[word]
    return LazyPattern(
        f"({word}{'(?:' + '|'.join(tails) + ')' if tails != ('',) else ''}){_NAME_SEP}"
    )


_NAMED: Final = {word: _named(word) for word in _SECRET_WORDS}
"""Word -> the pattern of a name ending with it and the separator after the name."""

_PROSE: Final = frozenset(
    {"key", "token", "sig", "signature", "credential", "credentials", "auth", "session"}
)
"""Secret names that are also words of a sentence: alone, unquoted and before a colon with
an unquoted value ("Unexpected token: foo", "the key: value pairs") they are prose, not a
field; ``key=value``, ``"key": value`` and ``key: "value"`` are fields."""

_VALUE: Final = LazyPattern(r"""[^\s"'`,;&}<>\\]+""")
"""An unquoted value: a greedy run that cannot fail once begun (at least one character)."""
_LINE: Final = LazyPattern(r"""[^\r\n"'\\<>]+""")
"""The unquoted value of a header whose value is one credential however it is written
(``Authorization``, ``Proxy-Authorization``: any scheme, ``Credential=..., Signature=...``;
``Cookie``, ``Set-Cookie``: every cookie): to the end of the line or quoted string."""
_WHOLE_LINE: Final = ("authorization", "cookie")
"""How the names end whose unquoted value is the whole line (``_LINE``)."""

QUOTED_MOST: Final = 4096
"""Longest quoted value read after a secret name, from its opening quote to the closing one.

Longer than any credential written in quotes: an RSA-4096 private key in PEM with escaped
line breaks is about 3,300 characters, an AWS session token about 1,000; a longer key in PEM
is redacted by its BEGIN and END lines (``_PEM``), a long JWT by its shape. A value whose
closing quote does not come within it is redacted this far. The same bound as a string kept
inside ``upstream`` (``_safe_copy.MAX_TEXT``)."""


def _quoted(quote: str, level: int) -> LazyPattern:
    """The value after an opening ``quote`` escaped ``level`` times (``"``, ``\\"`` in JSON
    inside a JSON string, ``\\\\\\"`` one level deeper), up to its closing quote: the same
    quote after a run of exactly ``level`` backslashes. Read (to ``QUOTED_MOST`` characters)
    with ``match(text, pos, pos + QUOTED_MOST)``.

    A quote after more backslashes is one escaped inside the value (``\\"`` in JSON, ``\\'``
    in a repr) and never closes it; a quote after fewer ends the value (the string that held
    it ended). Blanks, ``;``, escaped line breaks are part of the value. The branches exclude
    each other: a character that is neither the quote nor a backslash; a whole run of
    backslashes followed by neither; a run of more than ``level`` followed by the quote. A
    run of backslashes is read by at most three attempts, and nothing follows the star: a
    run that cannot fail once begun."""
    q = quote
    return LazyPattern(rf"(?:[^{q}\\]|\\+(?![\\{q}])|\\{{{level + 1},}}{q})*")


_QUOTED: Final = {
    (q, level): _quoted(q, level) for q in "\"'`" for level in range(_ESCAPED_MOST + 1)
}
"""(quote, its backslashes) -> the pattern of a value opened by that quote."""

_NAME_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NAME_MOST: Final = 64
"""Longest name read back from where it ends; a longer one is judged by its last 64
characters (a secret name's last part is what ``secret_name`` reads)."""
_HEX: Final = frozenset("0123456789abcdefABCDEF")

# -- PEM private keys ----------------------------------------------------------------------------
#
# The BEGIN line of a private key (PRIVATE KEY, RSA/EC/DSA/OPENSSH/ENCRYPTED PRIVATE KEY, PGP
# PRIVATE KEY BLOCK), in lowered text: a literal start and a label of at most three bounded
# words. The body after it, to the next END line (or, with none, the end of the text read),
# is found with ``str.find``; the next search starts after it, so the text is read once.
_PEM_GATE: Final = "-----begin"
_PEM: Final = LazyPattern(r"-----begin (?:[a-z0-9]{1,16} ){0,3}private key(?: block)?-----")

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
        for _, pattern in _FIELDS
    ),
    *(
        (
            f"redact: a name ending in {word!r} and its separator",
            pattern,
            _BOUND,
            "a literal word and alternatives of literals, then a separator of bounded shape "
            "(its blanks one run); the search resumes after it, or after a value it read",
        )
        for word, pattern in _NAMED.items()
    ),
    *(
        (
            f"redact: an unquoted value{label}",
            pattern,
            _BOUND,
            "one greedy run of a character class, matched at one position: it cannot fail "
            "once begun",
        )
        for label, pattern in (("", _VALUE), (" (a whole header line)", _LINE))
    ),
    *(
        (
            f"redact: a value quoted with {q!r} after {level} backslashes",
            pattern,
            "QUOTED_MOST (4,096) characters past its opening quote (the match's endpos), "
            "within MAX_REDACT + MARGIN",
            "matched at one position; a star of branches that exclude each other (a run of "
            "backslashes read by at most three attempts), with nothing after it: a run that "
            "cannot fail once begun",
        )
        for (q, level), pattern in _QUOTED.items()
    ),
    (
        "redact: the BEGIN line of a PEM private key",
        _PEM,
        _BOUND,
        "a literal start, at most three words of at most 16 characters, literals; its body "
        "is found with str.find and the next search starts after it",
    ),
)
"""Every pattern of this module: (name, pattern, the bound of its input, why it is linear)."""

_KEY_ANCHORS: Final = ("sk-", "aiza", "ya29.", "eyj", "gsk_", "xai-", "hf_", "akia", "asia")
"""Lower-case text every key shape contains."""
_GATES: Final = tuple(
    dict.fromkeys((*_KEY_ANCHORS, *(gate for gate, _ in _FIELDS), *_SECRET_WORDS, _PEM_GATE))
)
"""Text holding none of these is clean."""
_KEY_ANCHOR_SET: Final = frozenset(_KEY_ANCHORS)
_FIELDS_BY_GATE: Final = dict(_FIELDS)
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


Span = tuple[int, int, int]
"""Where a credential is (start, end) and where the evidence for it starts (its name, its
prefix, its BEGIN line): ``redact_all`` starts a window there when a value runs past one."""


def _spans(text: str, low: str | None = None) -> list[Span]:
    """Where the credentials in ``text`` are, in no particular order.

    ``low`` is ``text`` lowered as ``_lower`` does (given by ``redact_together``, which lowers
    each text of a batch on its own); the field patterns run on it."""
    if low is None:
        low = _lower(text)
    spans: list[Span] = []
    hits = [gate for gate in _GATES if gate in low]  # one scan per gate, then only the hits
    broken = "\n" in text or "\r" in text or "\\n" in text or "\\r" in text
    keyed = not _KEY_ANCHOR_SET.isdisjoint(hits)
    if broken and not keyed:  # a line break may cut a key's own prefix ("AI\nzaSy...")
        keyed = _holds(_BREAKS.compiled().sub("", low), _KEY_ANCHORS)
    if not hits and not keyed:
        return spans
    if keyed:
        for match in _KEYS.compiled().finditer(text):
            begin, end = match.span()
            spans.append((begin, end, begin))
        if broken:
            spans.extend(_wrapped(text))
    meaningful = _MEANINGFUL.compiled().search
    for gate in hits:
        field = _FIELDS_BY_GATE.get(gate)
        if field is not None:
            for match in field.compiled().finditer(low):
                begin, end = match.span(1)
                if meaningful(low, begin, end):
                    spans.append((begin, end, match.start()))
        named = _NAMED.get(gate)
        if named is not None:
            _named_values(text, low, named, spans)
    if _PEM_GATE in hits:
        _pem_bodies(low, spans)
    return spans


def _named_values(text: str, low: str, pattern: LazyPattern, spans: list[Span]) -> None:
    """Add to ``spans`` the values written after a secret name (``secret_name``) that ends
    with ``pattern``'s word: quoted, to the closing quote of the same kind (at most
    ``QUOTED_MOST`` characters); unquoted, to a blank or one of ``"'`,;&}<>\\`` (the value of
    an ``Authorization`` or ``Cookie`` header, to the end of its line: ``_LINE``)."""
    meaningful = _MEANINGFUL.compiled().search
    unquoted, line = _VALUE.compiled().match, _LINE.compiled().match
    search = pattern.compiled().search
    pos = 0
    while (match := search(low, pos)) is not None:
        pos, end = match.end(), match.end(1)  # a name that is no secret: on after it
        start = _secret_name_start(text, match.start(1), end)
        if start < 0:
            continue
        opener = match.group(4)
        if opener is None:
            name = low[start:end]
            prose = match.group(2) is None and match.group(3)[-1] in ":a"  # name: value
            if prose and name in _PROSE:
                continue  # "Unexpected token: foo"
            value = (line if name.endswith(_WHOLE_LINE) else unquoted)(low, pos)
        elif match.group(2) is None and text[start - len(opener) : start] == opener:
            continue  # "`api_key=`": the quote closes the one before the name; no value
        else:
            quoted = _QUOTED[opener[-1], len(opener) - 1].compiled()
            value = quoted.match(low, pos, pos + QUOTED_MOST)
        if value is not None and meaningful(low, pos, value.end()):
            spans.append((pos, value.end(), start))
            pos = value.end()  # a name inside the value is part of it


def _secret_name_start(text: str, begin: int, end: int) -> int:
    """Where the name that ends at ``end`` (its last word starts at ``begin``) starts, when
    ``secret_name`` says it is secret; else -1. The name is the run of name characters before
    ``end`` (at most ``_NAME_MOST``); one that follows an escape (``\\n``, ``\\u0022``) or a
    %XX byte is also read without the escape's letters (``\\nkey=``, ``%26key=``), as a
    backslash may be the text's own or the start of an escape."""
    start, stop = begin, max(0, end - _NAME_MOST)
    while start > stop and text[start - 1] in _NAME_CHARS:
        start -= 1
    if secret_name(text[start:end]):
        return start
    before = text[start - 1] if start else ""
    if before == "\\" and text[start] in "nrtbf":
        skip = 1
    elif before == "\\" and text[start] == "u" and _HEX.issuperset(text[start + 1 : start + 5]):
        skip = 5
    elif before == "%" and _HEX.issuperset(text[start : start + 2]):
        skip = 2
    else:
        return -1
    return start + skip if start + skip < end and secret_name(text[start + skip : end]) else -1


def _pem_bodies(low: str, spans: list[Span]) -> None:
    """Add to ``spans`` the body of every PEM private key in ``low``: from its BEGIN line to
    its END line, or to the end of the text when it was cut before its END line."""
    search = _PEM.compiled().search
    meaningful = _MEANINGFUL.compiled().search
    pos = 0
    while (match := search(low, pos)) is not None:
        begin = match.end()
        end = low.find("-----end", begin)
        if end < 0:
            end = len(low)
        if meaningful(low, begin, end):
            spans.append((begin, end, match.start()))
        pos = end


def _wrapped(text: str) -> list[Span]:
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
            found.append((head, origins[last] + end - starts[last], head))
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


def _replaced(text: str, spans: list[Span], limit: int) -> str:
    """``text`` up to ``limit`` with each of ``spans`` (sorted) replaced by ``REDACTED``;
    overlapping spans make one, and a span that is already a stand-in is kept as it is."""
    out: list[str] = []
    pos = 0
    for begin, end, _ in spans:
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

Only a quoted value and the body of a PEM block can hold it or read across it. The key
shapes and a ``Bearer`` token are made of letters, digits and ``._~+/=-``; an unquoted value
(``_VALUE``, ``_LINE``) and the URL user information exclude it; no name (``_NAME_CHARS``),
separator or gate holds it; and every class a lookaround tests the character next to a match
with (``[A-Za-z0-9]``, ``[A-Za-z0-9_-]``, ``[a-z0-9]``, ``[nrtbf]``, ``[0-9A-Fa-f]``, ``\\``)
leaves it out, so beside it a pattern behaves as at the start or the end of a text. A quoted
value runs to its closing quote and a PEM body to its END line, whatever they hold: one that
a text leaves open runs on across ``JOIN`` into the next text, which ``_redact_group`` sees
(a span across an edge) and answers by redacting that group's texts one by one. Hence the
answer is the answer of each text alone (``tests/hostile/test_batch.py`` checks the patterns
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
        mine: list[Span] = []
        while taken < len(spans) and spans[taken][0] < end:
            begin, stop, origin = spans[taken]
            if begin < start or stop > end:  # a quoted value or a PEM body ran on: alone
                return [clip(each, len(each)) for each in texts]
            mine.append((begin - start, stop - start, origin - start))
            taken += 1
        out.append(_replaced(text, mine, len(text)) if mine else text)
        start = end + 1
    return out


_VALUE_ENDS: Final = ("\r", "\n", '"', "'", "\\", "<", ">")
"""Where a credential's value surely ends: the terminators of the longest value form (a
header's whole value, ``_LINE``). A match cut short by a window's end runs on to one."""


_RUN_ON: Final = 8192
"""How far from a window's end the evidence of a credential cut by it may start for
``redact_all`` to read it again from there: more than a quoted value (``QUOTED_MOST`` past a
name of at most ``_NAME_MOST``) and a PEM private key (an RSA-8192 key is about 6,500
characters with escaped line breaks) can take."""


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
    match) and a key straddling a window's edge is seen whole in one of them. A credential
    found running to a window's end whose evidence (its name, prefix or BEGIN line) starts
    in the window's last ``_RUN_ON`` characters is read again by a window that starts there
    (a quoted value, a PEM body); a longer one (a long header or field value) is replaced on
    to the next character that ends such a value, and the next window starts after it. Each
    window starts at least ``MAX_REDACT + MARGIN - _RUN_ON`` characters after the one before,
    so the time stays linear. Returns ``text`` itself (the same object) when it holds no
    credential.
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
        restart = size
        for first, last, origin in _spans(text[start:stop]):
            begin, end = start + first, start + last
            if end == stop < size:  # cut short by the window's end
                if stop - (start + origin) <= _RUN_ON:  # a window from its evidence sees it
                    restart = min(restart, start + origin)
                    continue
                end = _value_end(text, end)  # longer: run on to the value's end
                resume = max(resume, end)
            spans.append((begin, end))
        start = min(resume, restart)
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
