"""Write the generated tables into the docs pages (or check that they are current), and check
the built site as a reader sees it.

    python scripts/docs.py               # rewrite the generated blocks
    python scripts/docs.py --check       # exit 1 if a page is out of date
    python scripts/docs.py --site DIR    # exit 1 if the site built in DIR shows a reader
                                         # an internal marker, a stray ``::`` or a code
                                         # block without its language (see ``site_problems``)

A generated block sits between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``. The
registry goes into ``docs/codes.md``, each provider's tables into ``docs/providers/NAME.md``, the
status table into ``docs/providers/index.md`` and the UHP and site tables into
``docs/guides/protocols.md``.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

from normalize_errors._cli import registry_rows
from normalize_errors._model._registry import status_code
from normalize_errors.providers import NAMES
from normalize_errors.providers._routing import adapter

DOCS = Path(__file__).resolve().parent.parent / "docs"


def codes_table() -> str:
    """The registry as Markdown: a section per category (a heading, so the page has a table of
    contents), each with a table of its codes. A code and its class share a cell, one above
    the other, so the table fits the page's width (1280 px) without a name split mid-word."""
    from normalize_errors import CATEGORIES
    from normalize_errors._model._code_classes import class_for_code

    rows = registry_rows()
    lines: list[str] = []
    for category, info in CATEGORIES.items():
        unknown = f"{category}.something_new"
        err = class_for_code(unknown)(code=unknown)
        lines += [
            f"## {category}",
            "",
            f"{info.description} `except {type(err).__name__}` catches every code below; an "
            f"unknown `{category}.*` code reads as `{type(err).__name__}` (HTTP "
            f"{err.http_status}, advice {err.advice}).",
            "",
            "| code and class | origin | retryable | model_recoverable | HTTP | advice |",
            "|---|---|---|---|---|---|",
        ]
        for row in rows:
            if row["code"].partition(".")[0] == category:
                lines.append(
                    f"| `{row['code']}`<br>`{row['class']}` | {row['origin']} | "
                    f"{'yes' if row['retryable'] else 'no'} | "
                    f"{'yes' if row['model_recoverable'] else 'no'} | {row['http_status']} | "
                    f"{row['advice']} |"
                )
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def _yes(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "no")


def _source(source: str) -> str:
    """A row's source (``providers/<name>.toml``) as the page shows it: a link, or a path."""
    if source.startswith("https://"):
        return f"[{source.removeprefix('https://').split('/')[0]}]({source})"
    return f"`{source}`"


def mapping(name: str) -> str:
    """A provider's mapping: its rule table, its exception classes and its stop reasons."""
    module = adapter(name)
    out = [
        "| # | when | harness code | retryable | source |",
        "|---|---|---|---|---|",
    ]
    for number, row in enumerate(module.TABLE, 1):
        retry = _yes(row.retryable) if row.retryable is not None else "by status"
        final = " (final)" if row.final else ""
        out.append(
            f"| {number} | {row.when}{final} | `{row.code}` | {retry} | {_source(row.source)} |"
        )
    out.append(
        "| | no row matches | by HTTP status ([when no row matches](index.md#when-no-row-matches))"
        " | by status | |"
    )
    classes = getattr(module, "CLASSES", {})
    if classes:
        out += ["", "| exception class | harness code | retryable |", "|---|---|---|"]
        for cls, fixed in classes.items():
            if fixed is None:
                out.append(f"| `{cls}` | read with the table above | |")
            else:
                out.append(f"| `{cls}` | `{fixed[0]}` | {_yes(fixed[1])} |")
    stops = getattr(module, "STOP_REASONS", ())
    if stops:
        out += ["", "| signal in a successful result | harness code |", "|---|---|"]
        out += [f"| {row.signal} | `{row.code}` |" for row in stops]
    return "\n".join(out)


def status_table() -> str:
    """What an HTTP status means when no provider rule applies."""
    out = ["| status | harness code | retryable |", "|---|---|---|"]
    for status in (
        400,
        401,
        402,
        403,
        404,
        408,
        409,
        413,
        422,
        429,
        499,
        500,
        501,
        502,
        503,
        504,
        529,
    ):
        code, retryable = status_code(status)
        out.append(f"| {status} | `{code}` | {_yes(retryable)} |")
    out.append("| other 4xx | `upstream.invalid_request` | no |")
    out.append("| other 5xx | `upstream.unavailable` | yes |")
    code, retryable = status_code(None)
    out.append(f"| none, or 2xx (an error inside a stream) | `{code}` | {_yes(retryable)} |")
    return "\n".join(out)


def uhp_in_table() -> str:
    """How ``from_envelope`` reads each UHP code, then unknown codes by type."""
    from normalize_errors import CODES
    from normalize_errors._model._code_classes import class_for_code
    from normalize_errors.bindings import uhp

    out = ["| UHP `code` | HTTP | harness code | retryable |", "|---|---|---|---|"]
    for name, row in uhp.CODES.items():
        retryable = class_for_code(row.code)(retryable=row.retryable).retryable
        if row.status is None and name != "cancelled":
            out.append(
                f"| `{name}` | 200, failed task | `upstream.agent_failed`, cause "
                f"`{row.code}` | no |"
            )
        elif row.status is None:
            out.append(f"| `{name}` | 200, cancelled task | `{row.code}` | {_yes(retryable)} |")
        else:
            out.append(f"| `{name}` | {row.status} | `{row.code}` | {_yes(retryable)} |")
    for kind, code in uhp.TYPES.items():
        retry = "yes (501: no)" if kind == "server_error" else _yes(CODES[code].retryable)
        out.append(f"| other, `type` `{kind}` | | `{code}` | {retry} |")
    out.append(
        "| no envelope | | by HTTP status ([when no row matches]"
        "(../providers/index.md#when-no-row-matches)) | by status |"
    )
    return "\n".join(out)


def uhp_out_table() -> str:
    """What ``to_envelope`` writes for each harness code (grouped)."""
    from normalize_errors import CODES
    from normalize_errors._model._code_classes import class_for_code
    from normalize_errors.bindings import uhp

    groups: dict[tuple[int, str, str], list[str]] = {}
    for code in CODES:
        flags = (True, False) if code == "upstream.rate_limited" else (None,)
        for flag in flags:
            err = class_for_code(code)(retryable=flag)
            status, _, body = uhp.to_envelope(err)
            error = json.loads(body)["error"]
            label = f"`{code}`" + ("" if flag is None else f" (retryable: {_yes(flag)})")
            groups.setdefault((status, error["type"], error["code"]), []).append(label)
    out = ["| harness code | HTTP | UHP `type` | UHP `code` |", "|---|---|---|---|"]
    for (status, kind, name), labels in groups.items():
        out.append(f"| {', '.join(labels)} | {status} | `{kind}` | `{name}` |")
    return "\n".join(out)


def site_table() -> str:
    """How ``from_site_error`` reads each site code and ``retry`` word, with the advice."""
    from normalize_errors._model._code_classes import class_for_code
    from normalize_errors.bindings import site

    out = [
        "| site `code` | `retry` | harness code | retryable | advice |",
        "|---|---|---|---|---|",
    ]

    def advice(row: site.SiteCode) -> str:
        err = class_for_code(row.code)(
            retryable=row.retryable, model_recoverable=row.model_recoverable
        )
        return err.advice

    for name, row in site.CODES.items():
        out.append(
            f"| `{name}` | `{row.retry}` | `{row.code}` | {_yes(row.retryable)} | {advice(row)} |"
        )
    for word, row in site.RETRY_WORDS.items():
        out.append(
            f"| a site's own code | `{word}` | `{row.code}` | {_yes(row.retryable)} | "
            f"{advice(row)} |"
        )
    return "\n".join(out)


BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "codes": ("codes.md", codes_table),
    "status": ("providers/index.md", status_table),
    "uhp-in": ("guides/protocols.md", uhp_in_table),
    "uhp-out": ("guides/protocols.md", uhp_out_table),
    "site": ("guides/protocols.md", site_table),
    **{
        f"mapping-{name}": (f"providers/{name}.md", functools.partial(mapping, name))
        for name in NAMES
    },
}


def fill(text: str, name: str, content: str, page: str = "the page") -> str:
    """``text`` with the generated block ``name`` holding ``content``."""
    pattern = re.compile(
        rf"(<!-- generated: {name} -->\n)(?:.*?\n)?(<!-- end: {name} -->)", re.DOTALL
    )
    if not pattern.search(text):
        raise SystemExit(f"{page} has no generated block named {name!r}")
    return pattern.sub(lambda m: m.group(1) + content + "\n" + m.group(2), text)


def render(page: str, text: str) -> str:
    """``text`` (the page ``page``, relative to docs/) with its generated blocks made current."""
    for name, (where, make) in BLOCKS.items():
        if where == page:
            text = fill(text, name, make(), page)
    return text


def stale(docs: Path = DOCS) -> dict[Path, str]:
    """The pages whose generated blocks are not current, each with the text it should have."""
    out: dict[Path, str] = {}
    for page in sorted({where for where, _ in BLOCKS.values()}):
        path = docs / page
        current = path.read_text(encoding="utf-8")
        wanted = render(page, current)
        if wanted != current:
            out[path] = wanted
    return out


MARKERS = ("excerpt:", "<!--", "-->")
"""What the pages say only to the tests and to this script (``<!-- excerpt: NAME -->``,
``<!-- pytest -->``, ``<!-- generated: NAME -->``): hidden as HTML comments, never shown."""


class _Page(HTMLParser):
    """The text a reader sees on one built page, prose and code apart, and its code blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.shown: list[str] = []
        self.prose: list[str] = []
        self.unnamed = 0
        self._hidden = 0
        self._code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._hidden += 1
        elif tag in ("code", "pre"):
            self._code += 1
        elif tag == "div":
            classes = (dict(attrs).get("class") or "").split()
            if "highlight" in classes and not any(c.startswith("language-") for c in classes):
                self.unnamed += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._hidden -= 1
        elif tag in ("code", "pre"):
            self._code -= 1

    def handle_data(self, data: str) -> None:
        if self._hidden:
            return
        self.shown.append(data)
        self.prose.append(data if not self._code else " ")


def _around(text: str, at: int) -> str:
    return " ".join(text[max(0, at - 50) : at + 30].split())


def page_problems(html: str) -> list[str]:
    """What a reader would trip on in one built page.

    * an internal marker shown as text (``MARKERS``): an excerpt's name as a code block's
      title, or an HTML comment turned into text;
    * ``::`` in prose (outside code): a docstring's reST literal-block marker, or a
      mkdocstrings ``::: module`` line that did not render;
    * a code block that names no language, shown without colour (a docstring's indented
      block; ``pymdownx.highlight``'s ``pygments_lang_class`` puts the language in the
      block's class).
    """
    page = _Page()
    page.feed(html)
    page.close()
    shown, prose = "".join(page.shown), "".join(page.prose)
    problems = []
    for marker in MARKERS:
        for match in re.finditer(re.escape(marker), shown):
            problems.append(f"the marker {marker!r} shows: ...{_around(shown, match.start())}...")
    for match in re.finditer("::", prose):
        problems.append(f"a stray '::' in the text: ...{_around(prose, match.start())}...")
    if page.unnamed:
        problems.append(f"{page.unnamed} code block(s) without a language (shown without colour)")
    return problems


def site_problems(site: Path) -> dict[str, list[str]]:
    """Each page of the site built in ``site`` with what a reader would trip on."""
    out: dict[str, list[str]] = {}
    for path in sorted(site.rglob("*.html")):
        problems = page_problems(path.read_text(encoding="utf-8"))
        if problems:
            out[path.relative_to(site).as_posix()] = problems
    return out


def check_site(site: Path) -> int:
    """Print what a reader would trip on in the built site; 1 if anything, 2 if no site."""
    if not (site / "index.html").is_file():
        print(f"{site} holds no built site (no index.html): run mkdocs build first")
        return 2
    found = site_problems(site)
    for page, problems in found.items():
        for problem in problems:
            print(f"{page}: {problem}")
    return 1 if found else 0


def main(argv: list[str]) -> int:
    """Rewrite the pages, or with ``--check`` report whether they are current, or with
    ``--site DIR`` check the built site."""
    if "--site" in argv:
        where = argv[argv.index("--site") + 1 :]
        if not where:
            print("usage: python scripts/docs.py --site DIR")
            return 2
        return check_site(Path(where[0]))
    pages = stale()
    if "--check" in argv:
        for path in pages:
            page = path.relative_to(DOCS).as_posix()
            print(f"docs/{page} is out of date: run python scripts/docs.py")
        return 1 if pages else 0
    for path, wanted in pages.items():
        path.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
