"""Issue 23, speed: the texts of one error are redacted together, in one scan, and nothing
gets through that path that redacting each text alone would have caught.

``redact_together`` joins the texts with ``JOIN`` and scans the joined text once; ``Batch``
copies an error's members with their texts left in place, then redacts them all at once;
a name that no credential can be in is remembered (``_PLAIN_NAMES``) and not scanned again.
"""

from __future__ import annotations

import math
import pickle
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalize_errors import CODES, HarnessError, UpstreamRateLimitedError, redact
from normalize_errors._base import _redact as redaction
from normalize_errors._base import _secret_names
from normalize_errors._base._redact import JOIN, REDACTED, redact_together
from normalize_errors._base._safe_copy import Batch, sanitize

from ..support import examples

KEY = "sk-proj-Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHhJjKkLlZzXxCcVvBbNnMm_-q1W2e3R4"  # made up
GOOGLE = "AIzaSyD4f5G6h7J8k9L0zXcVbNmQwErTyUiOp12"  # made up


def _everywhere(err: HarnessError) -> str:
    """Every way an error's members come out, as one text."""
    return "\n".join(
        [
            str(err),
            repr(err),
            err.to_json(),
            repr(err.args),
            repr(pickle.loads(pickle.dumps(err)).to_dict()),
        ]
    )


# -- the separator ----------------------------------------------------------------------------


def test_only_a_quoted_value_can_read_the_separator() -> None:
    """``JOIN`` stands in the patterns' sources only as the syntax of a lookbehind (``(?<=``,
    ``(?<!``) or inside a negated class; every negated class but a quoted value's excludes it
    (``[^...<...]``, or ``[^\\W_]``: letters and digits). So only a quoted value (and a PEM
    body, found by ``str.find``) can run across it: ``_redact_group`` then redacts that group
    text by text (``test_a_value_left_open_is_read_as_in_its_own_text``)."""
    assert JOIN == "<"
    readers = {id(pattern) for pattern in redaction._QUOTED.values()}
    for name, pattern, _, _ in redaction.PATTERNS:
        source = pattern.source.replace("(?<=", "").replace("(?<!", "")
        negated = re.findall(r"\[\^(?:\\.|[^\]\\])*\]", source)
        assert JOIN not in re.sub(r"\[\^(?:\\.|[^\]\\])*\]", "", source), name
        if id(pattern) not in readers:
            for cls in negated:
                assert JOIN in cls or cls == "[^\\W_]", (name, cls)
    for gate in redaction._GATES:
        assert JOIN not in gate


@pytest.mark.parametrize(
    "texts",
    [
        ['{"password": "open to the end', 'next text" and "password": "b c"'],
        ["-----BEGIN PRIVATE KEY-----\nMIIEvQ", "-----END PRIVATE KEY-----", "after"],
        ["SessionToken='a b", "c'", "plain"],
    ],
)
def test_a_value_left_open_is_read_as_in_its_own_text(texts: list[str]) -> None:
    """A quoted value or a PEM block a text leaves open is redacted to that text's end, and
    the next text is read as itself."""
    assert redact_together(texts) == [redact(text) for text in texts]
    assert redact_together(texts)[0].endswith(REDACTED)


# -- redact_together is redact, text by text -----------------------------------------------------

# Pieces that make credentials, half credentials, separators and the characters lowering or
# the line-break rule treat apart, so that generated texts meet every pattern and every edge.
PIECES = [
    KEY,
    KEY[:12],
    KEY[12:],
    GOOGLE,
    "AIza",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "Bearer ",
    "Basic ",
    "authorization: ",
    "Cookie=",
    "api_key=",
    "x-api-key: ",
    "token=",
    "-token",
    "secret=",
    "password: ",
    "sig=",
    "credential=",
    "https://user:pass@host/",
    "://",
    "@",
    '"key": "',
    "key=",
    "%3D",
    "\\n",
    "\n",
    "\r\n",
    "<",
    ">",
    " ",
    "=",
    ":",
    '"',
    "'",
    "\\",
    "abc",
    "XYZ",
    "0123456789",
    "\u212a",  # KELVIN SIGN: lowered to an ASCII k
    "\u0130",  # LATIN CAPITAL LETTER I WITH DOT ABOVE: two characters once lowered
    "\u03a3",  # GREEK CAPITAL LETTER SIGMA: lowered by its neighbours
    "\ud83d",  # half of an emoji
    REDACTED,
    # issue 36: quoted values (which may run past a text's edge), CamelCase names, PEM keys
    '"SessionToken": "',
    "'password': '",
    '\\"client_secret\\": \\"',
    "`db_password`: `",
    "AccountKey=",
    "SharedAccessKeyName=",
    "pageToken=",
    "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "\\'",
    '\\"',
    "`",
    ";",
    "a b;c",
]

texts = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(texts, max_size=8))
def test_together_is_each_alone(items: list[str]) -> None:
    """Whatever the texts, reading them joined gives what reading each alone gives."""
    assert redact_together(items) == [redact(text) for text in items]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("the key is " + KEY, KEY + " was the key"),  # a key on each side of the separator
        ("api_key=" + KEY, "and more"),  # a field's value running to the separator
        ("api_key=", KEY),  # a field's name before it, its value after
        ("Authorization: Bearer", "abcdefgh12345678"),
        ("sk-proj-", KEY[8:]),  # a key cut in two by it
        ("https://user:", "password@host"),
        ("x" * 20, "AIza" + GOOGLE[4:]),
    ],
)
def test_a_credential_beside_the_separator_is_caught_as_alone(first: str, second: str) -> None:
    """A credential that ends or starts at the separator is found as in its own text, and
    half a credential on each side makes no credential of either."""
    together = redact_together([first, second])
    assert together == [redact(first), redact(second)]
    for text in (first, second):
        if KEY in text or GOOGLE in text:
            assert KEY not in "".join(together)
            assert GOOGLE not in "".join(together)


def test_groups_keep_every_pattern_within_its_bound() -> None:
    """Texts joined past ``MAX_REDACT + MARGIN`` characters are read in several groups."""
    many = [("x" * 4000) + " api_key=" + KEY for _ in range(12)]
    assert redact_together(many) == [redact(text) for text in many]
    assert all(KEY not in text for text in redact_together(many))


def test_a_clean_batch_comes_back_as_it_was() -> None:
    items = ["Rate limit reached for gpt-4o", "tokens", "x-request-id"]
    assert redact_together(items) is items


# -- sanitize is what it was: each text redacted alone ----------------------------------------


def _alone(value: Any, limit: int = 4096, depth: int = 0, budget: list[int] | None = None) -> Any:
    """``sanitize`` as it was before ``Batch``: every text redacted on its own, at once."""
    from normalize_errors._base._redact import clip, secret_name
    from normalize_errors._base._safe_copy import MAX_DEPTH, MAX_ITEMS, MAX_NODES
    from normalize_errors._base._safe_copy import utf8_safe as safe

    budget = [MAX_NODES] if budget is None else budget
    budget[0] -= 1
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return safe(clip(value, limit))
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= MAX_DEPTH or budget[0] < 0:
        return "…"
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in list(value.items())[:MAX_ITEMS]:
            if type(key) is str and len(key) < 16 and key.isidentifier() and key.isascii():
                name = key
            else:
                name = safe(clip(key if isinstance(key, str) else repr(key), 256))
            out[name] = REDACTED if secret_name(key) else _alone(item, limit, depth + 1, budget)
        return out
    assert isinstance(value, list)
    found = []
    for item in value[:MAX_ITEMS]:
        if isinstance(item, list) and len(item) == 2 and secret_name(item[0]):
            found.append([_alone(item[0], 256, depth + 1, budget), REDACTED])
        else:
            found.append(_alone(item, limit, depth + 1, budget))
    return found


names = st.one_of(
    texts,
    st.sampled_from(
        [
            "retry-after",
            "x-request-id",
            "x-ratelimit-remaining-tokens",
            "anthropic-ratelimit-input-tokens-limit",
            "authorization",
            "api_key",
            "message",
            "Cookie",
        ]
    ),
)
data = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), texts),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(names, inner, max_size=5),
        st.lists(st.tuples(names, inner).map(list), max_size=3),
    ),
    max_leaves=20,
)


@settings(max_examples=examples(300), deadline=None)
@given(data, st.sampled_from([4096, 40]))
def test_sanitize_is_each_text_redacted_alone(value: Any, limit: int) -> None:
    """The copy ``Batch`` makes, its texts redacted together, is the copy made by redacting
    each text on its own (keys and values, cut or not, names remembered or not)."""
    assert sanitize(value, limit) == _alone(value, limit)


# -- an error's members, through Batch --------------------------------------------------------


def test_a_key_in_a_header_value_never_comes_out() -> None:
    err = UpstreamRateLimitedError(
        "slow down",
        upstream={
            "provider": "openai",
            "headers": {
                "x-ratelimit-remaining-tokens": "0",
                "x-request-id": KEY,
                "x-ratelimit-note": f"reset for {GOOGLE} soon",
            },
        },
    )
    out = _everywhere(err)
    assert KEY not in out
    assert GOOGLE not in out
    assert err.upstream["headers"]["x-request-id"] == REDACTED
    assert err.upstream["headers"]["x-ratelimit-remaining-tokens"] == "0"


def test_a_key_in_a_header_name_never_comes_out_and_is_not_remembered() -> None:
    """A name holding a key is redacted, the mapping keeps its order, and the name is not
    remembered as plain."""
    name = "x-ratelimit-" + "sk-abcdefghijklmnopqrstuvwx"
    err = UpstreamRateLimitedError(
        "slow down",
        upstream={"headers": {"retry-after": "1", name: "2", "x-request-id": "req_1"}},
    )
    assert "sk-abcdefghijklmnopqrstuvwx" not in _everywhere(err)
    assert list(err.upstream["headers"]) == [
        "retry-after",
        "x-ratelimit-[REDACTED]",
        "x-request-id",
    ]
    assert name not in _secret_names._PLAIN_NAMES


@pytest.mark.parametrize(
    "name",
    [
        "x-ratelimit-" + "a1b2c3d4e5f6a7b8c9d0",  # a part of 16 characters or more
        "x-ratelimit-" + "-".join(["abcdefghijklmno"] * 4),  # longer than 64 characters
        "X-RateLimit-Limit",  # not lowered
        "x_ratelimit_limit_requests",  # long, and no header name as lower_headers makes them
    ],
)
def test_only_names_of_the_plain_shape_are_remembered(name: str) -> None:
    sanitize({name: "1"})
    assert name not in _secret_names._PLAIN_NAMES


def test_a_plain_header_name_is_remembered_and_its_value_still_read() -> None:
    name = "anthropic-ratelimit-input-tokens-limit"
    sanitize({name: "1"})
    assert _secret_names._PLAIN_NAMES.get(name) is False
    assert sanitize({name: f"over {KEY}"}) == {name: f"over {REDACTED}"}


class Hostile(str):
    """A text whose hash, equality and own methods lie."""

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    def lower(self) -> str:
        return "nothing to see"

    def __str__(self) -> str:
        return "nothing to see"

    def __len__(self) -> int:
        return 1


def test_a_str_subclass_is_redacted_as_its_characters_everywhere() -> None:
    """As the detail, the message, a header value, a key and a title: read as characters,
    its ``__hash__`` and ``__eq__`` never consulted (it would be taken for any other text)."""
    planted = Hostile(f"Incorrect API key provided: {KEY}")
    err = UpstreamRateLimitedError(
        planted,
        title=Hostile(CODES["upstream.rate_limited"].title + " " + KEY),
        model_feedback=planted,
        upstream={
            "message": planted,
            "other": "Incorrect API key provided: nothing",
            "headers": {"x-request-id": planted, Hostile(f"x-{KEY}"): "1"},
        },
    )
    assert KEY not in _everywhere(err)
    assert err.upstream["other"] == "Incorrect API key provided: nothing"
    long_name = Hostile("x" * 300 + KEY)  # says it is one character long
    (name,) = sanitize({long_name: "1"})
    assert name == "x" * 256 + "…"
    assert err.detail == f"Incorrect API key provided: {REDACTED}"
    assert err.upstream["message"] == err.detail


def test_the_same_text_twice_is_redacted_in_both_places() -> None:
    """A text noted twice (the detail and ``upstream.message``) is read once, written back to
    both places."""
    text = f"bad key {KEY}"
    err = UpstreamRateLimitedError(text, upstream={"message": text, "again": [text, text]})
    assert err.detail == f"bad key {REDACTED}"
    assert err.upstream == {"message": err.detail, "again": [err.detail, err.detail]}


def test_a_value_under_a_name_redaction_merges_keeps_the_later_value() -> None:
    """Two keys that are one once redacted keep the first position and the later value, as
    when each key was redacted on its own."""
    first, second = f"a {KEY}", "a sk-" + "Z" * 30
    assert sanitize({first: f"x {GOOGLE}", second: "plain"}) == {f"a {REDACTED}": "plain"}
    assert sanitize({second: "plain", first: f"x {GOOGLE}"}) == {f"a {REDACTED}": f"x {REDACTED}"}


def test_registry_titles_need_no_redaction() -> None:
    """The constructor keeps the registry's own title without reading it: every one is clean."""
    for info in CODES.values():
        assert redact(info.title) == info.title
        assert info.title.isascii()


def test_a_batch_not_done_holds_the_texts_as_given() -> None:
    """What ``done`` is for: until then the copy holds the texts unredacted."""
    into: dict[str, Any] = {}
    batch = Batch()
    batch.put(into, "upstream", {"message": f"key {KEY}"})
    assert into["upstream"]["message"] == f"key {KEY}"
    batch.done()
    assert into["upstream"]["message"] == f"key {REDACTED}"
