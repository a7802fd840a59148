"""What a first release's packaging promises: its licence, the extras users are offered, the
dependency groups the project's own work installs, and one command per chore."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def pyproject() -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data


def test_the_license_file_is_the_mit_license_the_metadata_names() -> None:
    project = pyproject()["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in text


def test_users_are_offered_no_test_bench_or_tool_extras() -> None:
    """`pip install "normalize-errors[...]"` lists what a user installs; the suite's, the
    benchmarks' and the linters' dependencies are dependency groups (PEP 735)."""
    data = pyproject()
    extras = data["project"]["optional-dependencies"]
    assert not [name for name in extras if name.startswith(("test-", "dev", "bench"))]
    assert "test" not in extras
    groups = data["dependency-groups"]
    for name in ("test-core", "test", "test-frameworks", "test-beyond", "bench", "dev"):
        assert name in groups
    core = " ".join(groups["test-core"])
    assert "pytest" in core
    for sdk in ("openai", "anthropic", "google-genai", "httpx", "pyyaml", "vcrpy"):
        assert sdk not in core.lower()  # the no-SDK CI environment installs only these
    dev = groups["dev"]
    assert {"include-group": "test"} in dev
    typecheck = " ".join(groups["typecheck"])
    assert "mypy" in typecheck
    assert "pyright" in typecheck


def test_the_pythons_declared_are_the_pythons_ci_runs() -> None:
    """``requires-python`` is 3.11 or newer (3.10 reached end of life in October 2026); the
    classifiers name exactly the minor versions .ci/run installs the package on, the oldest of
    them the floor; the tools check code for the floor; no dependency is marked for a Python
    below it."""
    data = pyproject()
    project = data["project"]
    assert project["requires-python"] == ">=3.11"
    declared = {
        c.rpartition(" :: ")[2]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    ci = set(re.findall(r"python_of (3\.\d+)", (ROOT / ".ci" / "run").read_text(encoding="utf-8")))
    assert declared == ci == {"3.11", "3.12", "3.13"}
    assert data["tool"]["mypy"]["python_version"] == "3.11"
    assert data["tool"]["ruff"]["target-version"] == "py311"
    groups = data["dependency-groups"]
    markers = [
        item
        for group in groups.values()
        for item in group
        if isinstance(item, str) and "python_version" in item
    ]
    assert [m for m in markers if re.search(r"python_version\s*<=?\s*['\"]3\.1[01]['\"]", m)] == []


def test_the_makefile_has_one_target_per_chore_and_ci_calls_it() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("format", "lint", "typecheck", "test", "docs", "record"):
        assert f"\n{target}:" in makefile
    assert "pyright --pythonpath $(PY) tests/typing/api.py" in makefile
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make lint" in ci
    assert "make typecheck" in ci
    assert "--group test-core" in ci


def test_the_wheel_ships_the_corpus_data_files() -> None:
    """The corpus lives inside the package folder, which the wheel takes whole (hatch ships every
    file of ``packages`` that git does not ignore; .ci/wheel-check checks the built wheel)."""
    wheel = pyproject()["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["normalize_errors"]
    assert "exclude" not in wheel
    folder = ROOT / "normalize_errors" / "corpus"
    for name in ("__init__.py", "schema.json", "VERSION", "known_misses.json", "providers.jsonl"):
        assert (folder / name).is_file(), name
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert not any(p in ignored for p in ("*.jsonl", "*.json", "VERSION", "corpus/"))


def test_the_readmes_test_command_runs_on_every_cpu_and_ci_measures_every_worker() -> None:
    """``python -m pytest`` runs the suite on one pytest-xdist worker per CPU (``-n auto`` in
    the project's pytest settings; the plugin is in ``test-core``, which every test
    environment of CI installs), and ``coverage run -m pytest`` measures those workers
    (``patch = ["subprocess"]``, coverage 7.10.6 or later)."""
    data = pyproject()
    addopts = data["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert addopts[addopts.index("-n") + 1] == "auto"
    core = data["dependency-groups"]["test-core"]
    assert any(dep.startswith("pytest-xdist") for dep in core)
    assert "coverage[toml]>=7.10.6" in core
    assert data["tool"]["coverage"]["run"]["patch"] == ["subprocess"]
    assert data["tool"]["coverage"]["run"]["parallel"] is True


def test_a_developers_run_takes_the_small_hypothesis_profile_and_ci_the_large_one() -> None:
    """The ``dev`` profile (the default, ``tests/conftest.py``) asks fewer inputs per property
    than ``ci``, which ``.ci/run`` sets for every environment."""
    from hypothesis import settings

    assert settings.get_profile("dev").max_examples < settings.get_profile("ci").max_examples
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\nexport HYPOTHESIS_PROFILE=ci\n" in ci
