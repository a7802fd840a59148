"""Every Python block of the README and of docs/ runs as it is written.

A block runs as a complete program (its asserts included), in a fresh namespace, from the
checkout's root. A block after ``<!-- pytest -->`` is a test file: pytest runs it under the
``llm_faults`` plugin and every test in it must pass. A block after ``<!-- excerpt: NAME -->`` is
part of a larger program (it names things it does not define): the test skips it by that name,
and the reader sees no marker (an HTML comment is not shown; ``scripts/docs.py --site`` fails on
a marker that shows in the built site). ``EXCERPTS`` lists every one, so a new excerpt is a
decision someone made here. Every ```` ```python ```` fence of the pages is one of these three
kinds: a fence with anything after ``python`` (an old-style title) would be neither run nor
listed, so it fails.

The generated tables of the docs pages (``scripts/docs.py``) must be current.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import runpy
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(
    r"(?:^[ ]*<!-- (?:(?P<pytest>pytest)|(?P<excerpt>excerpt): (?P<name>[\w-]+)) -->\n)?"
    r"^(?P<indent>[ ]*)```python\n"
    r"(?P<code>.*?)^(?P=indent)```",
    re.S | re.M,
)
FENCE = re.compile(r"^[ ]*```python", re.M)

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


def test_every_python_fence_is_a_block() -> None:
    """Each ```` ```python ```` fence of the pages is found as a program, a test file or an
    excerpt: one written otherwise (```` ```python title="..." ````, the old excerpt form that
    showed its marker to readers) would silently be neither run nor listed."""
    for path in PAGES:
        page = path.relative_to(ROOT).as_posix()
        fences = len(FENCE.findall(path.read_text(encoding="utf-8")))
        assert fences == sum(block.page == page for block in ALL), page


def test_the_pages_have_programs() -> None:
    """The walk finds the docs' programs (a broken pattern would find none and pass)."""
    programs = [block for block in ALL if block.kind == "program"]
    assert len(programs) >= 10
    assert any(block.page == "docs/cookbook.md" for block in programs)


LEAD_PAGES = ["README.md", "docs/index.md", "docs/guides/wrapping.md"]
"""The pages a newcomer opens first: each says in one sentence what the library (or the page's
tool) is, then shows the example."""


def lead(text: str) -> tuple[str, str]:
    """A page's first paragraph after its title, and the start of the first block after that
    paragraph that is not a heading or an HTML comment."""
    body = text.partition("\n")[2]
    blocks = [part.strip() for part in re.split(r"\n[ ]*\n", body) if part.strip()]
    blocks = [re.sub(r"^<!--.*?-->\n?", "", block) for block in blocks]
    shown = [block for block in blocks if block and not block.startswith("#")]
    return shown[0], shown[1]


@pytest.mark.parametrize("page", LEAD_PAGES)
def test_the_page_leads_with_what_it_is_then_the_example(page: str) -> None:
    """The first paragraph is one sentence of at most 40 words; a Python block comes next
    (before, the home page opened with a code fragment and the README and the wrapping guide
    with paragraphs of 100 to 200 words of inline code)."""
    first, then = lead((ROOT / page).read_text(encoding="utf-8"))
    assert not first.startswith(("```", "-", "|", "<", "*")), first
    prose = re.sub(r"`[^`]*`|\]\([^)]*\)", "", first)  # code spans and link targets
    assert len(prose.split()) <= 40, first
    assert prose.rstrip().endswith("."), first
    assert not re.search(r"[.!?]\s", prose.rstrip()[:-1]), first
    assert then.startswith("```python"), then


def test_the_quick_start_gives_the_readmes_two_commands() -> None:
    """The README's two commands (set up and replay; run the tests) are the quick start's, as
    written, so the figures the README gives for them hold for both pages."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.partition("\n## The two commands\n")[2].partition("\n## ")[0]
    commands = re.findall(r"^```sh\n(.*?)^```", section, re.S | re.M)
    assert len(commands) == 2
    assert commands[1] == ".venv/bin/python -m pytest\n"
    quickstart = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    for command in commands:
        assert f"```sh\n{command}```" in quickstart


def test_a_lead_is_read_as_written() -> None:
    """``lead`` skips headings and comments, and keeps a code block's start."""
    text = "# T\n\nWhat it is.\n\n## Try it\n\n<!-- pytest -->\n```python\nx = 1\n\ny = 2\n```\n"
    assert lead(text) == ("What it is.", "```python\nx = 1")


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


def docs_script() -> Any:
    """``scripts/docs.py``, loaded as a module."""
    spec = importlib.util.spec_from_file_location("docs_script", ROOT / "scripts" / "docs.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_pages_are_current() -> None:
    """The provider tables, the codes and the protocol tables match the code."""
    assert docs_script().stale() == {}


def rendered_docstrings() -> list[tuple[str, int, str]]:
    """Every docstring of the package the API reference can show, as (file, line, text): all
    but a private module's own (``_code_classes``' drawn tree, which a test reads, is one)."""
    found = []
    for path in sorted((ROOT / "normalize_errors").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes: list[ast.AST] = [tree] if not path.stem.startswith("_") else []
        nodes += [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        for node in nodes:
            text = ast.get_docstring(node, clean=False)  # type: ignore[arg-type]
            if text:
                line = getattr(node, "lineno", 1)
                found.append((path.relative_to(ROOT).as_posix(), line, text))
    return found


def test_no_docstring_uses_a_rest_literal_block() -> None:
    """A docstring's example is a fenced ```` ```python ```` block: the reST form (a line
    ending in ``::`` and an indented block) shows the reader a stray ``::`` and a block
    without colour (CI's docs step finds it in the built site; this finds it in every run)."""
    docstrings = rendered_docstrings()
    assert len(docstrings) > 300  # the walk found the package's docstrings
    stray = [
        f"{path}:{line}"
        for path, line, text in docstrings
        if any(part.rstrip().endswith("::") for part in text.splitlines())
    ]
    assert stray == []


# Pieces of pages as mkdocs-material renders them (CI's docs step checks the whole built site
# with ``scripts/docs.py --site``): a titled code block, a code block of a docstring's
# indented (reST ``::``) example, a pytest node id in code.
TITLED = (
    '<div class="language-python highlight"><span class="filename">excerpt: wrap-teaser</span>'
    '<pre><span></span><code><span class="kn">from</span> x</code></pre></div>'
)
PLAIN = '<div class="language-python highlight"><pre><span></span><code>x = 1</code></pre></div>'
UNNAMED = '<div class="highlight"><pre><span></span><code>install(app)</code></pre></div>'


def test_the_site_check_finds_what_a_reader_trips_on() -> None:
    """A marker shown as a block's title, a reST ``::`` in prose and a block without its
    language are each reported; the same page without them is clean."""
    problems = docs_script().page_problems
    assert problems(f"<h1>Home</h1>{PLAIN}<p>Text.</p>") == []
    [marker] = problems(f"<h1>Home</h1>{TITLED}")
    assert "'excerpt:' shows" in marker
    assert "wrap-teaser" in marker
    [colons] = problems(f"<p>One line::</p>{PLAIN}")
    assert "stray '::'" in colons
    assert "One line::" in colons
    [unnamed] = problems(f"<p>One line:</p>{UNNAMED}")
    assert "1 code block(s) without a language" in unnamed
    assert len(problems(f"<p>A::</p><p>B::</p>{TITLED}{UNNAMED}{UNNAMED}")) == 4


def test_the_site_check_leaves_hidden_and_code_alone() -> None:
    """The markers as HTML comments (how the pages hide them), ``::`` inside code (a pytest
    node id) and text of scripts and styles are not what a reader sees."""
    problems = docs_script().page_problems
    page = (
        "<!-- excerpt: wrap-teaser -->\n"
        f"{PLAIN}<!-- pytest --><!-- generated: codes -->"
        "<p>Run <code>pytest tests/test_x.py::test_y</code>.</p>"
        '<pre><code>pytest "tests/a.py::b"</code></pre>'
        "<script>var a = {x: 'a::b <!-- c -->'};</script><style>a::before {}</style>"
    )
    assert problems(page) == []


def test_the_site_check_reads_every_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--site DIR`` exits 1 naming each page and problem, 0 on a clean site, 2 without one."""
    script = docs_script()
    assert script.main(["--site", str(tmp_path)]) == 2
    (tmp_path / "index.html").write_text(f"<p>Home</p>{PLAIN}", encoding="utf-8")
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "index.html").write_text(f"<p>Example::</p>{UNNAMED}", encoding="utf-8")
    capsys.readouterr()
    assert script.main(["--site", str(tmp_path)]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 2
    assert all(line.startswith("api/index.html: ") for line in printed)
    (tmp_path / "api" / "index.html").write_text(f"<p>For example:</p>{PLAIN}", encoding="utf-8")
    assert script.main(["--site", str(tmp_path)]) == 0


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
