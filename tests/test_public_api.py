"""The public surface: exported names, fast import with no third-party module, stdlib errors."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import typing

if sys.version_info >= (3, 11):
    from builtins import ExceptionGroup
else:  # pragma: no cover
    from exceptiongroup import ExceptionGroup

import normalize_errors
from normalize_errors import HarnessError, HarnessInternalError, RunCancelledError
from normalize_errors._facade import normalize


def test_all_is_sorted_and_exactly_the_public_names() -> None:
    """__all__ lists every public name of the package, sorted, and nothing private."""
    # loaded on first use: they need more modules (re, typing)
    lazy = {"wrap", "normalized", "rule", "Rule", "Advice", "Origin", "Limit", "Location"}
    public = {
        name
        for name, value in vars(normalize_errors).items()
        if not name.startswith("_")
        and not isinstance(value, type(normalize_errors))
        and name not in {"annotations", "TYPE_CHECKING"}
    } | lazy

    def isort_style(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert normalize_errors.__all__ == sorted(normalize_errors.__all__, key=isort_style)
    assert set(normalize_errors.__all__) == public
    for name in normalize_errors.__all__:
        assert getattr(normalize_errors, name) is not None


def test_import_loads_no_third_party_module() -> None:
    """`import normalize_errors` in a fresh interpreter loads `re`, `typing` and three small
    stdlib modules besides: no third-party module, no adapter, nothing heavier."""
    code = (
        "import sys, time\n"
        "import re, typing\n"
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
    assert stdlib <= {"__future__", "math", "weakref", "_weakrefset"}  # not json, nor pickle
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


def test_the_member_types_are_real_types() -> None:
    """Advice and Origin are Literals of the registry's words, Limit and Location TypedDicts."""
    reactions = {info.reaction for info in normalize_errors.CODES.values()}
    assert reactions | {"retry", "feedback"} <= set(typing.get_args(normalize_errors.Advice))
    assert set(typing.get_args(normalize_errors.Origin)) == {
        info.origin for info in normalize_errors.CODES.values()
    }
    assert typing.is_typeddict(normalize_errors.Limit)
    assert set(normalize_errors.Location.__annotations__) == {
        "run_id",
        "turn",
        "tool_name",
        "tool_call_id",
        "pointer",
    }
