"""Hypothesis strategies of the redaction properties (issue 36): secret names written the ways
code and protocols write them, and credentials planted in text as quoted values (with blanks,
``;``, escaped quotes and escaped line breaks), unquoted values and PEM private keys.

Every planted secret starts and ends with a ``Q``, and the text around it never holds one, so
a secret found in an output can only have come from the secret (a pickle's framing byte before
a string can be a ``Q``; not one at each end).
"""

from __future__ import annotations

import json

from hypothesis import assume
from hypothesis import strategies as st

from normalize_errors._base._redact import secret_name

from .shapes import LABELS, pem

WORDS = [
    *("Key", "Token", "Secret", "Password", "Passwd", "Passphrase", "Sig", "Signature"),
    *("Credential", "Credentials", "Auth", "Authorization", "Cookie", "Session", "Tokens"),
    *("Access", "Shared", "Account", "Name", "Page", "Next", "Max", "Input", "Id", "Client"),
    *("Private", "Count", "Api", "X", "Amz", "Security", "Refresh", "Endpoint", "Suffix"),
    *("Tokenizer", "Monkey", "Author", "Keyboard", "Sas", "Db", "Oauth", "Cursor", "Sync"),
]
"""Words names are made of: the secret words, and words that stand beside them."""
STYLES = ["snake", "kebab", "camel", "pascal", "upper", "dotted"]


@st.composite
def names(draw: st.DrawFn) -> str:
    """A name of one to four words, written in one of the ways code and protocols write them
    (``session_token``, ``X-Amz-Security-Token``, ``sessionToken``, ``SecretAccessKey``,
    ``AWS_SESSION_TOKEN``, ``spring.datasource.password``)."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
    style = draw(st.sampled_from(STYLES))
    if style == "snake":
        return "_".join(word.lower() for word in words)
    if style == "kebab":
        return "-".join(words)
    if style == "camel":
        return words[0].lower() + "".join(words[1:])
    if style == "upper":
        return "_".join(word.upper() for word in words)
    if style == "dotted":
        return ".".join(word.lower() for word in words)
    return "".join(words)


SECRET_ALPHABET = "JXZjxz0123456789"
AROUND = st.text(st.characters(codec="utf-8", exclude_characters="Qq"), max_size=80)
"""Random text around a planted secret: anything but a ``Q`` (or ``q``)."""


def _secret_word(size: int = 7) -> st.SearchStrategy[str]:
    return st.text(SECRET_ALPHABET, min_size=size, max_size=size + 6).map(lambda w: f"Q{w}Q")


# How a value is quoted in each form, and how a quote of its own kind is escaped inside it.
QUOTED_FORMS = {
    "json": ('"{name}": "{value}"', '\\"'),
    "repr": ("'{name}': '{value}'", "\\'"),
    "escaped json": ('\\"{name}\\": \\"{value}\\"', '\\\\\\"'),
    "backtick": ("`{name}`: `{value}`", None),
    "assignment": ('{name} = "{value}"', '\\"'),
    "keyword": ("{name}='{value}'", "\\'"),
}
UNQUOTED_FORMS = {
    "name=value": "{name}={value}",
    "name: value": "{name}: {value}",
    "connection string": "Endpoint=sb://contoso.servicebus.windows.net/;{name}={value};x=1",
}
NEWLINES = ["\n", "\r\n", "\\n", "\\\\n"]
RAW_JOINS = [" ", ";", "; ", "\n", '"', "'", "\\", "\t"]
"""What joins the words of a value before ``json.dumps`` escapes it."""


@st.composite
def quoted_field(draw: st.DrawFn) -> tuple[str, list[str]]:
    """(text, secrets): a value of several words after a secret name, quoted, its words
    joined by blanks, ``;``, escaped line breaks or an escaped quote of its own kind."""
    name = draw(names())
    assume(secret_name(name))
    form = draw(st.sampled_from(sorted(QUOTED_FORMS)))
    layout, escaped_quote = QUOTED_FORMS[form]
    joins = [" ", ";", "; ", "\\n", "\t"] + ([escaped_quote] if escaped_quote else [])
    if form == "escaped json":
        joins[3] = "\\\\n"  # a line break escaped twice, as JSON inside JSON writes it
    words = draw(st.lists(_secret_word(), min_size=1, max_size=5))
    if draw(st.booleans()):  # JSON, as json.dumps writes it, inside JSON strings 0 to 3 deep
        value = words[0] + "".join(draw(st.sampled_from(RAW_JOINS)) + w for w in words[1:])
        text = json.dumps({name: value, "user": "bob"})
        for _ in range(draw(st.integers(0, 3))):
            text = json.dumps(text)
        return text, words
    value = words[0] + "".join(draw(st.sampled_from(joins)) + word for word in words[1:])
    return layout.format(name=name, value=value), words


@st.composite
def unquoted_field(draw: st.DrawFn) -> tuple[str, list[str]]:
    """(text, secrets): one word after a secret name, written ``name=value``, ``name: value``
    (a bare prose word aside) or in a ``;``-separated connection string."""
    from normalize_errors._base._redact import _PROSE

    name = draw(names())
    assume(secret_name(name))
    form = draw(st.sampled_from(sorted(UNQUOTED_FORMS)))
    if form == "name: value":
        assume(name.lower() not in _PROSE)
    word = draw(_secret_word(12))
    return UNQUOTED_FORMS[form].format(name=name, value=word), [word]


@st.composite
def pem_block(draw: st.DrawFn) -> tuple[str, list[str]]:
    """(text, secrets): a PEM private key of any label, its lines joined by any line break,
    bare, the value of a field (named for a secret or not) or in a repr, whole or cut short."""
    label = draw(st.sampled_from(LABELS))
    lines = draw(
        st.lists(
            st.text(SECRET_ALPHABET + "+/", min_size=14, max_size=62).map(lambda w: f"Q{w}Q"),
            min_size=1,
            max_size=30,
        )
    )
    newline = draw(st.sampled_from(NEWLINES))
    whole = draw(st.booleans())
    block = pem(label, lines, newline, end=whole)
    where = draw(st.sampled_from(["bare", "unnamed", "named", "repr"]))
    if where == "unnamed":
        block = f'{{"key_file": "{block}"'
    elif where == "named":
        block = f'{{"private_key": "{block}"'
    elif where == "repr":
        block = repr({"pem": block})
    if whole:
        block += "}" if where in ("unnamed", "named") else ""
    return block, lines


@st.composite
def planted_secrets(draw: st.DrawFn) -> tuple[str, list[str]]:
    """(text, secrets): a quoted value, an unquoted value or a PEM private key inside random
    text, or placed so that it straddles a cut (1024, 2048 or 4096 characters)."""
    field, secrets = draw(st.one_of(quoted_field(), unquoted_field(), pem_block()))
    before, after = draw(AROUND), draw(AROUND)
    opening = draw(st.sampled_from([" ", "\n", ", ", "{", "("]))
    closing = draw(st.sampled_from([" ", "\n", ", ", ";", "}"]))
    if draw(st.booleans()):
        limit = draw(st.sampled_from([1024, 2048, 4096]))
        start = limit - draw(st.integers(1, max(1, len(field) - 1)))
        before = "w " * (start // 2) + " " * (start % 2)
        opening = ""
    return f"{before}{opening}{field}{closing}{after}", secrets
