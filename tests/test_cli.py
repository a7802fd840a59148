"""The command line: codes and explain."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from normalize_errors import CODES
from normalize_errors._cli import main


def run(*argv: str) -> tuple[int, str]:
    """Run the command line in-process and capture what it prints."""
    out = io.StringIO()
    status = main(list(argv), out)
    return status, out.getvalue()


def test_codes_table_lists_every_code() -> None:
    """One line per code, with its defaults and advice."""
    status, text = run("codes")
    assert status == 0
    lines = text.splitlines()
    assert lines[0].split() == [
        "code",
        "title",
        "origin",
        "retryable",
        "model_recoverable",
        "http",
        "advice",
    ]
    assert len(lines) == 2 + len(CODES)
    rate = next(line for line in lines if line.startswith("upstream.rate_limited"))
    assert rate.split()[-3:] == ["no", "429", "retry"]


def test_codes_json_is_the_registry() -> None:
    """--json prints the registry with derived advice and class names."""
    status, text = run("codes", "--json")
    assert status == 0
    rows = json.loads(text)
    assert [r["code"] for r in rows] == list(CODES)
    window = next(r for r in rows if r["code"] == "context.window_exceeded")
    assert window["class"] == "ContextWindowExceededError"
    assert window["advice"] == "adjust"


def test_explain_a_code() -> None:
    """Title, meaning, defaults, status, advice and class."""
    status, text = run("explain", "upstream.overloaded")
    assert status == 0
    assert "Upstream Overloaded" in text
    assert "HTTP status:        503" in text
    assert "advice:             retry" in text
    assert "normalize_errors.UpstreamOverloadedError" in text


@pytest.mark.parametrize("code", ["upstream.nope", "bogus"])
def test_explain_an_unknown_code(code: str) -> None:
    """A clear message and exit status 2."""
    status, text = run("explain", code)
    assert status == 2
    assert "not a registered code" in text


def test_console_script_runs() -> None:
    """`python -m normalize_errors` works as the console script does."""
    out = subprocess.run(
        [sys.executable, "-m", "normalize_errors", "explain", "output.empty"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Empty Output" in out.stdout
