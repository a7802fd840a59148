"""Write the generated tables into README.md (or check that they are current).

    python scripts/docs.py          # rewrite the generated blocks
    python scripts/docs.py --check  # exit 1 if README.md is out of date

A generated block sits between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from pathlib import Path

from normalize_errors._cli import registry_rows
from normalize_errors._signals import status_code
from normalize_errors.providers import NAMES, adapter

README = Path(__file__).resolve().parent.parent / "README.md"


def codes_table() -> str:
    """The registry as a Markdown table."""
    lines = [
        "| code | class | origin | retryable | model_recoverable | HTTP | advice |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in registry_rows():
        lines.append(
            f"| `{row['code']}` | `{row['class']}` | {row['origin']} | "
            f"{'yes' if row['retryable'] else 'no'} | "
            f"{'yes' if row['model_recoverable'] else 'no'} | {row['http_status']} | "
            f"{row['advice']} |"
        )
    return "\n".join(lines)


def _yes(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "no")


def mapping(name: str) -> str:
    """A provider's mapping: its rule table, its exception classes and its stop reasons."""
    module = adapter(name)
    out = [
        "| # | when | harness code | retryable |",
        "|---|---|---|---|",
    ]
    for number, row in enumerate(module.TABLE, 1):
        retry = _yes(row.retryable) if row.retryable is not None else "by status"
        out.append(f"| {number} | {row.when} | `{row.code}` | {retry} |")
    out.append("| | no row matches | by HTTP status (below) | by status |")
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


BLOCKS: dict[str, Callable[[], str]] = {
    "codes": codes_table,
    "status": status_table,
    **{f"mapping-{name}": functools.partial(mapping, name) for name in NAMES},
}


def fill(text: str, name: str, content: str) -> str:
    """``text`` with the generated block ``name`` holding ``content``."""
    pattern = re.compile(
        rf"(<!-- generated: {name} -->\n)(?:.*?\n)?(<!-- end: {name} -->)", re.DOTALL
    )
    if not pattern.search(text):
        raise SystemExit(f"README.md has no generated block named {name!r}")
    return pattern.sub(lambda m: m.group(1) + content + "\n" + m.group(2), text)


def render(text: str) -> str:
    """``text`` with every generated block replaced by its current content."""
    for name, make in BLOCKS.items():
        text = fill(text, name, make())
    return text


def main(argv: list[str]) -> int:
    """Rewrite README.md, or with ``--check`` report whether it is current."""
    current = README.read_text(encoding="utf-8")
    wanted = render(current)
    if "--check" in argv:
        if wanted != current:
            print("README.md is out of date: run python scripts/docs.py")
            return 1
        return 0
    README.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
