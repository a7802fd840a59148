"""Every Python block of the README and of docs/ runs as it is written.

A block runs as a complete program (its asserts included), in a fresh namespace, from the
checkout's root. A block after ``<!-- pytest -->`` is a test file: pytest runs it under the
``llm_faults`` plugin and every test in it must pass. A block fenced as
````` ```python title="excerpt: NAME" ````` is part of a larger program (it names things it does not
define): the page shows the reader the title "excerpt: NAME", and the test skips it by that name.
``EXCERPTS`` lists every one, so a new excerpt is a decision someone made here.

The generated tables of the docs pages (``scripts/docs.py``) must be current.
"""

from __future__ import annotations

import importlib.util
import re
import runpy
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(
    r"(?:^[ ]*<!-- (?P<pytest>pytest) -->\n)?"
    r"^(?P<indent>[ ]*)```python(?: title=\"(?P<excerpt>excerpt): (?P<name>[\w-]+)\")?\n"
    r"(?P<code>.*?)^(?P=indent)```",
    re.S | re.M,
)

# (page, excerpt name): every block the docs show that is not a whole program
EXCERPTS = {
    ("docs/guides/a2a.md", "a2a-remote-agent"),
    ("docs/guides/a2a.md", "a2a-delegating"),
    ("docs/guides/http.md", "to-http"),
    ("docs/guides/http.md", "public-mode"),
    ("docs/guides/mcp.md", "mcp-client"),
    ("docs/guides/mcp.md", "agents-mcp-extractor"),
    ("docs/guides/otel.md", "otel-span"),
    ("docs/guides/protocols.md", "jsonrpc"),
    ("docs/guides/protocols.md", "uhp"),
    ("docs/guides/testing.md", "replay-api"),
    ("docs/guides/wrapping.md", "normalized"),
    ("docs/guides/wrapping.md", "normalize-respond-check"),
    ("docs/index.md", "wrap-teaser"),
}


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    kind: str
    name: str
    code: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        page = path.relative_to(ROOT).as_posix()
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("code"))
            kind = match.group("pytest") or match.group("excerpt") or "program"
            code = textwrap.dedent(match.group("code"))
            found.append(Block(page, line, kind, match.group("name") or "", code))
    return found


ALL = blocks()


def test_every_excerpt_is_listed_by_name() -> None:
    """The excerpts in the pages are exactly those listed here, each named once per page."""
    named = [(block.page, block.name) for block in ALL if block.kind == "excerpt"]
    assert sorted(named) == sorted(EXCERPTS)
    assert len(named) == len(set(named))


def test_the_pages_have_programs() -> None:
    """The walk finds the docs' programs (a broken pattern would find none and pass)."""
    programs = [block for block in ALL if block.kind == "program"]
    assert len(programs) >= 10
    assert any(block.page == "docs/cookbook.md" for block in programs)


def missing_sdk(code: str) -> str | None:
    """The first third-party module a block imports that this environment lacks.

    ``from google import genai`` names ``google.genai``: ``google`` alone is a namespace that
    other packages (protobuf) provide too.
    """
    imports: list[tuple[str, str, str]] = re.findall(
        r"^(?:from ([\w.]+) import (\w+)|import ([\w.]+))", code, re.M
    )
    for source, name, plain in imports:
        module = (source or plain).split(".")[0]
        if module == "normalize_errors":
            continue
        if importlib.util.find_spec(module) is None:
            return module
        if source == "google" and importlib.util.find_spec(f"google.{name}") is None:
            return f"google.{name}"
    return None


def test_a_missing_sdk_is_named() -> None:
    """A block whose SDK is absent is skipped naming it; installed imports do not skip."""
    assert missing_sdk("import pytest\nfrom normalize_errors import wrap\n") is None
    assert missing_sdk("import pytest\nimport no_such_sdk_here\n") == "no_such_sdk_here"
    assert missing_sdk("from no_such_sdk_here.types import X\n") == "no_such_sdk_here"
    assert missing_sdk("from google import no_such_sdk_here\n") in {
        "google",
        "google.no_such_sdk_here",
    }


@pytest.mark.parametrize("block", [b for b in ALL if b.kind == "program"], ids=str)
@pytest.mark.usefixtures("clean_registry")  # the extending guide adds readers and rules
def test_program_runs(block: Block, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The block runs to its end; its asserts hold."""
    sdk = missing_sdk(block.code)
    if sdk is not None:
        pytest.skip(f"{block} needs {sdk}, not installed here")
    script = tmp_path / "example.py"
    script.write_text("\n" * block.line + block.code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(script)])
    runpy.run_path(str(script), run_name="__main__")


@pytest.mark.parametrize("block", [b for b in ALL if b.kind == "pytest"], ids=str)
def test_test_file_passes(block: Block, pytester: pytest.Pytester) -> None:
    """The test file's tests all pass under the plugin, through the real SDK clients."""
    sdk = missing_sdk(block.code)
    if sdk is not None:
        pytest.skip(f"{block} needs {sdk}, not installed here")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_example=block.code)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(re.findall(r"^(?:async )?def test_", block.code, re.M)))


def test_generated_pages_are_current() -> None:
    """The provider tables, the codes and the protocol tables match the code."""
    spec = importlib.util.spec_from_file_location("docs_script", ROOT / "scripts" / "docs.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.stale() == {}


def test_the_wrapping_guide_lists_the_vendor_suites_differences() -> None:
    """Each reason named in ``.ci/vendor_suites.py``'s ``DIFFERENCES`` (its words before the
    first colon) is a bold item of the wrapping guide's "Differences from the unwrapped
    client", and each item there is the reason of some named difference."""
    found = runpy.run_path(str(ROOT / ".ci" / "vendor_suites.py"))
    reasons = {
        reason.partition(":")[0].lower()
        for named in found["DIFFERENCES"].values()
        for reason in named.values()
    }
    guide = (ROOT / "docs" / "guides" / "wrapping.md").read_text()
    section = guide.partition("### Differences from the unwrapped client")[2].partition("\n#")[0]
    items = {
        item.replace("`", "").rstrip(".").lower()
        for item in re.findall(r"^- \*\*(.+?)\*\*", section, re.M)
    }
    assert reasons
    assert reasons == items
