"""What ships, listed: public cassette names, `normalize-errors cassettes`, and import costs."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from normalize_errors._cli import main
from normalize_errors.replay import cassette_paths, catalog, find, shipped
from tests.support import needs


def test_every_shipped_cassette_has_a_public_name_that_finds_it() -> None:
    """`provider/scenario` names are unique, match the folders and resolve with find()."""
    rows = catalog()
    assert len(rows) == len(cassette_paths()) > 100
    names = [row["name"] for row in rows]
    assert len(set(names)) == len(names)
    for row in rows:
        assert find(row["name"]) == shipped() / f"{row['name']}.yaml"
        assert row["source"], row["name"]  # every shipped response names its public source
        assert row["provider"] in ("openai", "anthropic", "google", "cohere", "http")
    by_name = {row["name"]: row for row in rows}
    assert by_name["anthropic/overloaded_529"]["code"] == "upstream.overloaded"
    assert by_name["anthropic/overloaded_529"]["status"] == 529
    assert by_name["anthropic/stream_error_overloaded"]["stream"] is True


def test_the_cassettes_command_lists_them() -> None:
    """A table (cassette, status, harness code) or JSON lines with each one's call, summary
    and source."""
    needs("yaml")
    out = io.StringIO()
    assert main(["cassettes"], out) == 0
    text = out.getvalue()
    header = text.splitlines()[0].split()
    assert header == ["cassette", "status", "harness", "code"]
    assert "anthropic/overloaded_529" in text
    assert f"{len(catalog())} cassettes; --json gives" in text
    lines = io.StringIO()
    assert main(["cassettes", "--json", str(shipped() / "google")], lines) == 0
    rows = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert {row["provider"] for row in rows} == {"google"}
    lines = io.StringIO()
    assert main(["cassettes", "--json", "--provider", "anthropic"], lines) == 0
    sources = {json.loads(line)["source"] for line in lines.getvalue().splitlines()}
    assert "https://github.com/anthropics/anthropic-sdk-typescript/issues/616" in sources


def loaded_by(statement: str) -> list[str]:
    """The modules that ``statement`` loads in a fresh interpreter, beyond its own start-up."""
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        f"{statement}\n"
        "print(__import__('json').dumps(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


def test_the_testing_package_and_plugin_import_nothing_heavy() -> None:
    """`normalize_errors.testing` loads no third-party module; the plugin loads only pytest's.

    No HTTP library, YAML parser, vcrpy or SDK is loaded until the fixture is used, so a test
    session that does not use it pays nothing for it (benchmarks/run.py has the figures).
    """
    heavy = ("httpx", "httpx2", "yaml", "vcr", "openai", "anthropic", "google", "anyio")
    mine = loaded_by("import normalize_errors.testing")
    assert [m for m in mine if m.partition(".")[0] not in sys.stdlib_module_names] == [
        m for m in mine if m.startswith("normalize_errors")
    ]
    plugin = loaded_by(
        "import pytest\nbefore = set(sys.modules)\nimport normalize_errors.testing.plugin"
    )
    assert not [m for m in plugin if m.partition(".")[0] in heavy]
    assert "normalize_errors.testing._faults" not in plugin  # loaded by the fixture, on use
    core = loaded_by("import normalize_errors")
    assert not [m for m in core if m.partition(".")[0] in ("pytest", "_pytest", "pluggy")]
