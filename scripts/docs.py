"""Write the generated tables into README.md (or check that they are current).

    python scripts/docs.py          # rewrite the generated blocks
    python scripts/docs.py --check  # exit 1 if README.md is out of date

A generated block sits between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from normalize_errors._cli import registry_rows

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


BLOCKS: dict[str, Callable[[], str]] = {"codes": codes_table}


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
