"""Hostile cassette files (issue 22, finding 3): every reader of a cassette refuses them.

A cassette handed to ``Faults.fail(path)``, ``replay.load``, ``use_cassette`` or the command
line is read by one reader, ``replay.read_cassette``. A 700-byte file of nested YAML aliases
used to become a 72 MB response body; such a file, a body that is not text, an oversized file
and a malformed structure are refused at once with a ``CassetteError`` naming the file.
"""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.hostile.conftest import timed

yaml = pytest.importorskip("yaml")

from normalize_errors._cli import main  # noqa: E402
from normalize_errors.replay import (  # noqa: E402
    MAX_BYTES,
    CassetteError,
    cassette_paths,
    catalog,
    load,
    read_cassette,
    use_cassette,
)
from normalize_errors.testing import Faults  # noqa: E402

METADATA = "metadata: {provider: openai, call: chat, name: bomb}\n"


def anchored(levels: int = 7) -> str:
    """A cassette whose ``body.string`` is ``levels`` of anchors, each alias repeated 10 times:
    72 characters at the bottom, 72 * 10 ** (levels - 1) once expanded (72 MB for 7)."""
    lines = ["version: 1", METADATA.strip(), "x:", '  - &a0 "' + "x" * 70 + '"']
    for level in range(1, levels):
        lines.append(f"  - &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]")
    lines += [
        "interactions:",
        "- request: {method: POST, uri: 'https://api.openai.com/v1/chat/completions'}",
        "  response:",
        "    status: {code: 500, message: Internal Server Error}",
        "    headers: {content-type: [application/json]}",
        f"    body: {{string: *a{levels - 1}}}",
    ]
    return "\n".join(lines) + "\n"


def cassette_text(body: str) -> str:
    return (
        "version: 1\n" + METADATA + "interactions:\n"
        "- request: {method: POST, uri: 'https://api.openai.com/v1/chat/completions'}\n"
        "  response:\n"
        "    status: {code: 500, message: Internal Server Error}\n"
        "    headers: {content-type: [application/json]}\n"
        f"    body: {{string: {body}}}\n"
    )


def write(folder: Path, text: str, name: str = "hostile.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def every_reader(path: Path) -> list[tuple[str, Any]]:
    """Each way a user hands the package a cassette file."""

    def cli(command: str) -> Any:
        """The command's exit status and what it said: its refusal is on standard error."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err):
            status = main([command, str(path)], out=out)
        return status, out.getvalue() + err.getvalue()

    def replay() -> None:
        with use_cassette(path):
            raise AssertionError("use_cassette read a hostile cassette")

    return [
        ("Faults.fail", lambda: Faults().fail(path)),
        ("load", lambda: load(path)),
        ("catalog", lambda: catalog([path])),
        ("use_cassette", replay),
        ("read_cassette", lambda: read_cassette(path)),
        ("cli replay", lambda: cli("replay")),
        ("cli cassettes", lambda: cli("cassettes")),
    ]


def refused_by_all(path: Path, words: str) -> None:
    for name, call in every_reader(path):
        start = time.perf_counter()
        if name.startswith("cli"):
            status, output = call()
            assert status == 2, (name, output)
            assert str(path) in output, (name, output)
            assert words in output, (name, output)
        else:
            with pytest.raises(CassetteError) as caught:
                call()
            assert caught.value.path == str(path), name
            assert str(path) in str(caught.value), name
            assert words in str(caught.value), name
        assert time.perf_counter() - start < 2.0, name  # refused, not expanded


def test_the_700_byte_anchored_cassette_is_refused_quickly(tmp_path: Path) -> None:
    """The finding as filed: ~700 bytes that expand to 72 MB are refused by every reader."""
    text = anchored()
    assert len(text.encode()) < 1000
    path = write(tmp_path, text)
    refused_by_all(path, "anchors and aliases are refused")


def test_a_single_alias_is_refused_too(tmp_path: Path) -> None:
    """No alias or anchor at all: vcrpy never writes one, and one is where a bomb starts."""
    text = cassette_text("&b '{}'") + "  response2: *b\n"
    refused_by_all(write(tmp_path, text), "anchors and aliases are refused")


@pytest.mark.parametrize("body", ["[1, 2, 3]", "{error: {message: x}}", "12", "true"])
def test_a_body_that_is_not_text_or_bytes_is_refused(tmp_path: Path, body: str) -> None:
    """Faults used to serve a list or mapping body as JSON (how the bomb reached 72 MB)."""
    path = write(tmp_path, cassette_text(body))
    refused_by_all(path, "body.string: expected text or bytes")


def test_text_and_binary_bodies_are_accepted(tmp_path: Path) -> None:
    text = write(tmp_path, cassette_text('\'{"error": {"message": "x"}}\''), "text.yaml")
    binary = write(tmp_path, cassette_text("!!binary eyJhIjogMX0="), "binary.yaml")
    assert Faults().fail(text).pending == 1
    replies = read_cassette(binary)["interactions"][0]["response"]["body"]["string"]
    assert replies == b'{"a": 1}'


def test_an_oversized_file_is_refused_naming_the_cap(tmp_path: Path) -> None:
    """A file over ``MAX_BYTES`` is refused before it is parsed; the message names the cap."""
    filler = "#" * (MAX_BYTES - len(cassette_text("''")) + 10) + "\n"
    path = write(tmp_path, filler + cassette_text("''"))
    assert path.stat().st_size > MAX_BYTES
    refused_by_all(path, f"cap of {MAX_BYTES} bytes")


def test_a_file_just_under_the_cap_is_read(tmp_path: Path) -> None:
    body = "'" + "x" * (MAX_BYTES - 1000) + "'"
    path = write(tmp_path, cassette_text(body))
    assert path.stat().st_size <= MAX_BYTES
    assert load(path).provider == "openai"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("- just\n- a list\n", "expected a mapping, found a list"),
        ("version: 1\ninteractions: {a: 1}\n", "interactions: expected a list"),
        ("interactions:\n- 5\n", "interactions[0]: expected a mapping"),
        ("interactions:\n- response: {status: {code: 99}}\n", "expected an HTTP status"),
        ("interactions:\n- response: {status: {code: '500'}}\n", "expected an HTTP status"),
        ("interactions:\n- response: {status: {code: 500}, headers: [a]}\n", "headers: expected"),
        ("interactions:\n- response: {status: {code: 500}, body: [a]}\n", "body: expected"),
        ("interactions:\n- request: {uri: 5}\n  response: {status: {code: 500}}\n", "method"),
        (
            "interactions:\n- request: [GET]\n  response: {status: {code: 500}}\n",
            "interactions[0].request: expected a mapping, found a list",
        ),
        (
            "interactions:\n- request: {method: POST, uri: 'https://x.test/', body: {a: 1}}\n"
            "  response: {status: {code: 500}}\n",
            "interactions[0].request.body: expected text or bytes, found a mapping",
        ),
        (
            "interactions:\n- request: {method: GET, uri: 'https://x.test/'}\n",
            "interactions[0].response: expected a mapping, found nothing",
        ),
        (
            "interactions:\n- response: {status: {code: 500}, headers: {7: [x]}}\n",
            "interactions[0].response.headers: a header name is an integer, not text",
        ),
        (
            "interactions:\n- response: {status: {code: 500}, headers: {retry-after: [{s: 1}]}}\n",
            "interactions[0].response.headers.retry-after: expected text, found a mapping",
        ),
        (
            "interactions:\n- response: {status: {code: 500}, headers: {x-flag: [true]}}\n",
            "headers.x-flag: expected text, found a boolean",
        ),
        ("metadata: [1]\ninteractions: []\n", "metadata: expected a mapping"),
        ("a: [\n", "not valid YAML"),
        ("a: !!python/object:os.system x\n", "not valid YAML"),
        ("---\na: 1\n---\nb: 2\n", "expected one YAML document"),
        ("a: " + "[" * 40 + "]" * 40 + "\n", "nested deeper than"),
    ],
)
def test_a_malformed_cassette_is_refused_with_what_was_wrong(
    tmp_path: Path, text: str, words: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CassetteError) as caught:
        read_cassette(path)
    assert str(path) in str(caught.value)
    assert words in str(caught.value)
    with pytest.raises(ValueError, match="cassette"):  # a ValueError, as before
        Faults().fail(path)


def test_a_response_without_a_body_is_served_as_an_empty_one(tmp_path: Path) -> None:
    """``body`` may be left out (a 204, a HEAD): the reader accepts it, Faults serves no bytes."""
    from normalize_errors.testing import Reply

    text = (
        "version: 1\n" + METADATA + "interactions:\n"
        "- request: {method: HEAD, uri: 'https://api.openai.com/v1/models'}\n"
        "  response:\n"
        "    status: {code: 503, message: Service Unavailable}\n"
        "    headers: {retry-after: ['7']}\n"
    )
    path = write(tmp_path, text)
    assert "body" not in read_cassette(path)["interactions"][0]["response"]
    [reply] = Reply.from_cassette(path)
    assert (reply.status, reply.body, reply.headers) == (503, b"", [("retry-after", "7")])


def test_use_cassette_refuses_a_request_vcrpy_cannot_read(tmp_path: Path) -> None:
    """vcrpy builds each request from exactly method, uri, body and headers: anything else is
    refused with the file named, not left to fail inside vcrpy."""
    path = write(tmp_path, cassette_text("''"))  # its request has no body or headers
    refusal = "request: expected body, headers, method, uri"
    with pytest.raises(CassetteError, match=refusal), use_cassette(path):
        pass
    assert Faults().fail(path).pending == 1  # what Faults reads is all there
    empty = write(tmp_path, "version: 1\nmetadata: {provider: openai}\n", "empty.yaml")
    for call in (lambda: Faults().fail(empty), lambda: use_cassette(empty).__enter__()):
        with pytest.raises(CassetteError, match="no interactions"):
            call()


def test_text_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(cassette_text("'caf\xe9'").encode("latin-1"))
    with pytest.raises(CassetteError, match="not UTF-8"):
        read_cassette(path)


def test_every_shipped_cassette_passes_the_reader() -> None:
    paths = cassette_paths()
    assert len(paths) > 100
    for path in paths:
        data = read_cassette(path)
        assert data["interactions"], path
    largest = max(path.stat().st_size for path in paths)
    assert largest * 100 < MAX_BYTES  # the cap is generous for real cassettes


# -- the property: random YAML-ish documents -------------------------------------------------

SHIPPED = sorted(cassette_paths())[:: max(1, len(cassette_paths()) // 12)]
FRAGMENTS = [
    "&a ",
    "*a",
    "&b [*a, *a]",
    "!!binary AAAA",
    "!!python/name:os.system",
    "{",
    "}",
    "[",
    "]",
    ": ",
    "- ",
    "\n",
    "\n  ",
    "'",
    '"',
    "\\x00",
    "---\n",
    "? ",
    "|\n  ",
    "string: ",
    "code: ",
    "999",
    "-1",
    "~",
    "interactions:",
    "response:",
    "body:",
    "status:",
    "<<: *a",
    "%YAML 1.1\n",
    "\t",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.text(max_size=20),
    st.binary(max_size=20),
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["string", "code", "status", "body", "x"]), children, max_size=4
        )
    ),
    max_leaves=12,
)
cassette_like = st.fixed_dictionaries(
    {
        "interactions": st.lists(
            st.fixed_dictionaries(
                {
                    "response": st.fixed_dictionaries(
                        {
                            "status": st.fixed_dictionaries({"code": values}),
                            "headers": values,
                            "body": st.fixed_dictionaries({"string": values}),
                        }
                    )
                }
            ),
            max_size=3,
        )
    },
    optional={"metadata": values, "version": values},
)


@st.composite
def yamlish(draw: st.DrawFn) -> str:
    """A shipped cassette with fragments spliced in, dumped random structures, or fragments."""
    kind = draw(st.sampled_from(["spliced", "dumped", "fragments"]))
    if kind == "dumped":
        return str(yaml.safe_dump(draw(cassette_like)))
    if kind == "fragments":
        return "".join(draw(st.lists(st.sampled_from(FRAGMENTS), max_size=40)))
    text = draw(st.sampled_from(SHIPPED)).read_text(encoding="utf-8")
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 20))
        piece = draw(st.sampled_from(FRAGMENTS) | st.text(max_size=8))
        text = text[:at] + piece + text[at + cut :]
    return text


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("yamlish")


@given(text=yamlish())
def test_any_yamlish_file_gives_a_cassette_or_the_one_error(folder: Path, text: str) -> None:
    """The reader returns a checked cassette or raises ``CassetteError``: nothing else, fast."""
    path = folder / "case.yaml"
    try:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    except UnicodeEncodeError:
        return
    try:
        data = timed("read_cassette", lambda: read_cassette(path), text)
    except CassetteError as exc:
        refusal = str(exc)
    else:
        refusal = ""
    if refusal:
        assert str(path) in refusal
        return
    assert isinstance(data, dict)
    for item in data.get("interactions") or []:
        response = item["response"]
        code = response["status"]["code"]
        assert isinstance(code, int)
        assert 100 <= code <= 599
        body = response.get("body") or {}
        assert body.get("string") is None or isinstance(body["string"], (str, bytes))


def test_a_refusal_never_repeats_a_credential_from_the_file(tmp_path: Path) -> None:
    """PyYAML's message quotes the unknown tag; the refusal is redacted like any text."""
    from tests.support import PLANTED_KEY

    path = write(tmp_path, f"interactions: !{PLANTED_KEY} x\n")
    with pytest.raises(CassetteError, match="not valid YAML") as caught:
        read_cassette(path)
    assert PLANTED_KEY not in str(caught.value)
