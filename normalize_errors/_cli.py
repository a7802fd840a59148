"""The ``normalize-errors`` command line.

Subcommands:

* ``codes [--json]``: the registry as a table, or as JSON.
* ``explain CODE``: what a code means, its defaults, HTTP status, advice and class.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ._registry import CODES, code_info
from .exceptions import class_for_code

__all__ = ["main", "registry_rows"]

Command = Callable[[argparse.Namespace, TextIO], int]
_COMMANDS: dict[str, Command] = {}


def registry_rows() -> list[dict[str, Any]]:
    """One dict per registered code, with the advice its defaults give."""
    rows = []
    for info in CODES.values():
        err = class_for_code(info.code)()
        rows.append(
            {
                "code": info.code,
                "title": info.title,
                "origin": info.origin,
                "retryable": info.retryable,
                "model_recoverable": info.model_recoverable,
                "http_status": info.http_status,
                "advice": err.advice,
                "class": type(err).__name__,
                "description": info.description,
            }
        )
    return rows


def table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    """Print ``rows`` (the first is the header) as aligned columns."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for n, row in enumerate(rows):
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        out.write(line.rstrip() + "\n")
        if n == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _codes(args: argparse.Namespace, out: TextIO) -> int:
    rows = registry_rows()
    if args.json:
        json.dump(rows, out, indent=2)
        out.write("\n")
        return 0
    header = ["code", "title", "origin", "retryable", "model_recoverable", "http", "advice"]
    cells = [
        [
            r["code"],
            r["title"],
            r["origin"],
            _yes(r["retryable"]),
            _yes(r["model_recoverable"]),
            str(r["http_status"]),
            r["advice"],
        ]
        for r in rows
    ]
    table([header, *cells], out)
    return 0


def _explain(args: argparse.Namespace, out: TextIO) -> int:
    code: str = args.code
    if code not in CODES:
        known = code.partition(".")[0] in {c.partition(".")[0] for c in CODES}
        hint = " (an unknown code of a known category: read as its category)" if known else ""
        out.write(f"{code}: not a registered code{hint}. Run `normalize-errors codes`.\n")
        return 2
    info = code_info(code)
    err = class_for_code(code)()
    lines = [
        f"{info.code}  {info.title}",
        "",
        info.description,
        "",
        f"origin:             {info.origin}",
        f"retryable:          {_yes(info.retryable)} (default)",
        f"model_recoverable:  {_yes(info.model_recoverable)} (default)",
        f"HTTP status:        {info.http_status}",
        f"advice:             {err.advice} (with the defaults)",
        f"class:              normalize_errors.{type(err).__name__}",
    ]
    out.write("\n".join(lines) + "\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="normalize-errors",
        description="Typed agent harness errors for language-model calls.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    codes = sub.add_parser("codes", help="the registry of harness error codes")
    codes.add_argument("--json", action="store_true", help="print JSON instead of a table")
    explain = sub.add_parser("explain", help="what one code means")
    explain.add_argument("code", help="a code such as upstream.rate_limited")
    _COMMANDS.update(codes=_codes, explain=_explain)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    return _COMMANDS[args.command](args, out or sys.stdout)
