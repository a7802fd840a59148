"""The public surface: exported names, fast import with no third-party module, stdlib errors."""

from __future__ import annotations

import ast
import asyncio
import importlib
import json
import subprocess
import sys
import typing
import warnings
from pathlib import Path
from types import FunctionType, ModuleType

import pytest

import normalize_errors
from normalize_errors import HarnessError, HarnessInternalError, RunCancelledError
from normalize_errors._facade import normalize

PACKAGE = Path(normalize_errors.__file__).parent


def _public_modules() -> list[str]:
    """Every module of the package whose dotted path has no part starting with ``_``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not any(part.startswith("_") for part in parts):
            found.append(".".join(parts))
    return found


def _isort_style(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def _defined(module: ModuleType) -> set[str]:
    """The public names ``module`` defines at its top level (classes, functions, assignments,
    also under a top-level ``if`` or ``try``), not the names it imports."""
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    names: set[str] = set()
    nodes: list[ast.stmt] = list(tree.body)
    while nodes:
        node = nodes.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.If, ast.Try)):
            nodes.extend([*node.body, *node.orelse])
    # ``TYPE_CHECKING = False``: the flag that keeps type-only imports out of a plain import
    return {name for name in names if not name.startswith("_")} - {"__all__", "TYPE_CHECKING"}


def test_the_public_modules_are_found() -> None:
    """The walk below sees the modules the docs name, and no private one."""
    found = _public_modules()
    assert {
        "normalize_errors",
        "normalize_errors.bindings.http",
        "normalize_errors.frameworks.agents",
        "normalize_errors.providers",
        "normalize_errors.providers.openai",
        "normalize_errors.providers.anthropic",
        "normalize_errors.resilience.hooks",
        "normalize_errors.testing.plugin",
        "normalize_errors.corpus",
    } <= set(found)
    assert not [name for name in found if "._" in name]


@pytest.mark.parametrize("name", _public_modules())
def test_every_public_module_lists_exactly_its_public_api(name: str) -> None:
    """``__all__`` is sorted, every name in it resolves, and every public name the module
    defines (a class, a function, a constant; or a class or function whose ``__module__``
    says it is this module's, as the package's exports do) is in it. Re-exports are public
    only when ``__all__`` lists them."""
    try:
        with warnings.catch_warnings():  # frameworks.starlette warns that it moved
            warnings.simplefilter("ignore", DeprecationWarning)
            module = importlib.import_module(name)
    except ImportError as exc:  # an optional dependency of the module (tenacity for retry)
        if (exc.name or "").startswith("normalize_errors"):
            raise
        pytest.skip(f"{name} needs {exc.name}")
    listed = module.__dict__.get("__all__")
    assert isinstance(listed, list), f"{name} has no __all__ list"
    assert listed == sorted(listed, key=_isort_style)
    assert len(set(listed)) == len(listed)
    for export in listed:
        assert not export.startswith("_"), export
        getattr(module, export)  # resolves (names loaded on first use included)
    claimed = {
        key
        for key, value in vars(module).items()
        if not key.startswith("_")
        and isinstance(value, (type, FunctionType))
        and value.__module__ == name
    }
    assert _defined(module) | claimed <= set(listed)


def test_all_is_sorted_and_exactly_the_public_names() -> None:
    """__all__ lists every public name of the package, sorted, and nothing private."""
    # loaded on first use (see ``__getattr__``)
    lazy = {
        "wrap",
        "normalized",
        "rule",
        "Rule",
        "Advice",
        "Limit",
        "Location",
        "Origin",
        "StreamSummary",
    }
    public = {
        name
        for name, value in vars(normalize_errors).items()
        if not name.startswith("_")
        and not isinstance(value, ModuleType)
        and name not in {"annotations", "TYPE_CHECKING"}
    } | lazy
    assert normalize_errors.__all__ == sorted(normalize_errors.__all__, key=_isort_style)
    assert set(normalize_errors.__all__) == public
    for name in normalize_errors.__all__:
        assert getattr(normalize_errors, name) is not None


def test_every_export_names_the_package_as_its_module() -> None:
    """Classes and functions exported by the package say ``normalize_errors`` is their module,
    so reprs and tracebacks read ``normalize_errors.UpstreamRateLimitedError`` and pickles
    name that path; what the package did not define (the ``Literal`` aliases) is untouched."""
    for name in normalize_errors.__all__:
        value = getattr(normalize_errors, name)
        if isinstance(value, (type, FunctionType)):
            assert value.__module__ == "normalize_errors", name
    assert repr(normalize_errors.UpstreamRateLimitedError) == (
        "<class 'normalize_errors.UpstreamRateLimitedError'>"
    )
    assert normalize_errors.Advice.__module__ == "typing"
    code = "import normalize_errors\nraise normalize_errors.UpstreamOverloadedError('busy')\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.stderr.splitlines()[-1] == (
        "normalize_errors.UpstreamOverloadedError: upstream.overloaded: busy"
    )


def test_import_loads_no_third_party_module() -> None:
    """`import normalize_errors` in a fresh interpreter loads three small stdlib modules."""
    code = (
        "import sys, time\n"
        "before = set(sys.modules)\n"
        "t = time.perf_counter()\n"
        "import normalize_errors\n"
        "elapsed = time.perf_counter() - t\n"
        "new = sorted(set(sys.modules) - before)\n"
        "print(__import__('json').dumps({'elapsed': elapsed, 'new': new}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    third_party = [
        name
        for name in report["new"]
        if name.partition(".")[0] not in sys.stdlib_module_names
        and not name.startswith("normalize_errors")
    ]
    assert third_party == []
    stdlib = {n for n in report["new"] if not n.startswith("normalize_errors")}
    assert stdlib <= {"__future__", "math", "types"}  # not even typing, re, json or pickle
    assert "normalize_errors.providers" not in report["new"]
    # How long it takes is measured by benchmarks/run.py, not asserted here.


def test_version_comes_from_the_package_metadata() -> None:
    """__version__ is read lazily."""
    assert isinstance(normalize_errors.__version__, str)


def test_normalize_passes_harness_errors_through() -> None:
    """A HarnessError comes back as the same object."""
    err = HarnessError.from_code("output.empty")
    assert normalize(err) is err


def test_normalize_maps_standard_library_errors() -> None:
    """Cancellation, timeouts and connection errors have their codes; the rest is internal."""
    cases = [
        (asyncio.CancelledError(), "harness.cancelled", False),
        (KeyboardInterrupt(), "harness.cancelled", False),
        (TimeoutError("read timed out"), "upstream.unavailable", True),
        (ConnectionResetError(104, "Connection reset by peer"), "upstream.unavailable", True),
        (ValueError("bad"), "harness.internal_error", False),
    ]
    for exc, code, retryable in cases:
        err = normalize(exc)
        assert (err.code, err.retryable) == (code, retryable), exc
        assert err.__cause__ is exc
        assert err.upstream["exception"].endswith(type(exc).__name__)
    assert isinstance(normalize(asyncio.CancelledError()), RunCancelledError)


def test_normalize_survives_hostile_exceptions() -> None:
    """An exception whose str() raises still gives an error, with the original attached."""

    class Hostile(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    exc = Hostile()
    err = normalize(exc)
    assert isinstance(err, HarnessInternalError)
    assert err.__cause__ is exc
    assert "Hostile" in err.upstream["exception"]


def test_exception_groups_give_their_most_telling_member_with_the_rest_as_causes() -> None:
    """A task group's failures: the precedence decides (see test_chains), the rest ride along."""
    group = ExceptionGroup("two", [TimeoutError(), ValueError("x")])
    err = normalize(group)
    assert err.code == "harness.internal_error"
    assert [c.code for c in err.causes] == ["upstream.unavailable"]
    assert err.__cause__ is group
    single = ExceptionGroup("one", [TimeoutError()])
    assert normalize(single).code == "upstream.unavailable"


def test_the_member_types_are_real_types_loaded_on_first_use() -> None:
    """Advice and Origin are Literals, Limit and Location TypedDicts, without import cost."""
    code = (
        "import sys\n"
        "import normalize_errors\n"
        "assert 'normalize_errors._base._types' not in sys.modules\n"
        "import typing\n"
        "advice = normalize_errors.Advice\n"
        "print(sorted(typing.get_args(advice)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    words = json.loads(out.stdout.replace("'", '"'))
    reactions = {info.reaction for info in normalize_errors.CODES.values()}
    assert reactions | {"retry", "feedback"} <= set(words)
    assert set(typing.get_args(normalize_errors.Origin)) == {
        info.origin for info in normalize_errors.CODES.values()
    }
    assert typing.is_typeddict(normalize_errors.Limit)
    assert typing.is_typeddict(normalize_errors.StreamSummary)
    assert {"chunks", "phase", "output_chars", "terminal"} <= set(
        normalize_errors.StreamSummary.__annotations__
    )
    assert set(normalize_errors.Location.__annotations__) == {
        "run_id",
        "turn",
        "tool_name",
        "tool_call_id",
        "pointer",
    }


def test_no_module_is_over_800_lines() -> None:
    """Module size follows the domain (issue 23): a module that grows past 800 lines holds
    more than one job and is split by job, as ``_wrap.py`` and ``_redact.py`` were."""
    long = {
        str(path.relative_to(PACKAGE.parent)): count
        for path in PACKAGE.rglob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > 800
    }
    assert long == {}
