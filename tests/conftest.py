"""The root of the test suite: what every test module shares.

Where each shared piece lives:

* ``tests/support.py`` (plain helpers, imported by name): ``valid`` (the one validity check
  of a harness error, against ``VALIDATOR``: the draft's JSON Schema shipped in
  ``normalize_errors/schema/``, loaded once), the one cassette reader (``cassette``,
  ``cassettes``, ``recorded``), ``raised``, ``is_instance`` and ``deciding_rows``;
* this file (found by pytest itself): the Hypothesis profiles every property test runs
  under, whichever folder it lives in (before, they were set by the hostile folder's
  conftest, so a module run alone got other settings than in the whole suite), and the
  fixtures tests of several folders use (``lib``, ``closed_port``, ``clean_registry``);
* ``tests/hostile/conftest.py``: timing of hostile inputs (hang detection and the report of
  the slowest input per function);
* ``tests/providers/test_completeness.py``: the conventions a provider's test module
  follows (``TABLE_CASES``, ``SDK_MODULES``).

Hypothesis profiles: ``dev`` (the default: a developer's run, 100 inputs per property),
``HYPOTHESIS_PROFILE=ci`` (what CI runs, ``.ci/run`` sets it: 300 inputs per property),
``HYPOTHESIS_PROFILE=hostile`` (5000) and ``HYPOTHESIS_PROFILE=hostile-100k`` (100,000 per
property, hours on two cores). A property whose own ``@settings`` asks for a count takes it
through ``tests.support.examples(count)``: that count under ``ci``, at most the profile's under
``dev``, the profile's under the long ones.

Under pytest-xdist (the project's ``-n auto``) every worker loads this file; the hostile
inputs' timing table of each worker reaches the run's summary through
``pytest_testnodedown`` below.
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

_SLOW_INPUTS = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=_SLOW_INPUTS
)
settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=_SLOW_INPUTS)
settings.register_profile(
    "hostile", max_examples=5000, deadline=None, suppress_health_check=_SLOW_INPUTS
)
settings.register_profile(
    "hostile-100k", max_examples=100_000, deadline=None, suppress_health_check=_SLOW_INPUTS
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """A pytest-xdist worker ended: its hostile inputs' timing table joins this process's."""
    table = node.workeroutput.get("hostile_slowest")
    if table:
        importlib.import_module("tests.hostile.conftest").merge(table)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The hostile inputs' timing table, when hostile tests ran (here or in the workers)."""
    hostile = sys.modules.get("tests.hostile.conftest")
    if hostile is not None:
        hostile.report(terminalreporter)


@pytest.fixture(params=["httpx", "httpx2"])
def lib(request: pytest.FixtureRequest) -> Any:
    """httpx, then httpx2: the same failures through both libraries."""
    return pytest.importorskip(request.param)


@pytest.fixture
def clean_registry() -> Iterator[None]:
    """The test ends with nothing registered but the library's own readers: the readers,
    response readers and rules it adds (``register_reader``, ``add_rules``, ...) are gone."""
    from normalize_errors._reading import _readers

    saved = dict(_readers.BUILTIN)
    saved_responses = dict(_readers.BUILTIN_RESPONSES)
    yield
    _readers.BUILTIN_RESPONSES.clear()
    _readers.BUILTIN_RESPONSES.update(saved_responses)
    _readers._LOADED_RESPONSES.clear()
    _readers._READERS.clear()
    _readers._RESPONSES.clear()
    _readers._RULES.clear()
    _readers.forget_classes()
    _readers.BUILTIN.clear()
    _readers.BUILTIN.update(saved)


@pytest.fixture
def closed_port() -> int:
    """A local port where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


OPTIONAL_PACKAGES = frozenset(
    {
        "openai", "anthropic", "google", "cohere", "boto3", "botocore", "groq", "together",
        "cerebras", "mistralai", "fireworks", "httpx", "httpx2", "requests", "aiohttp", "yaml",
        "vcr", "starlette", "fastapi", "opentelemetry", "tenacity", "mcp", "a2a", "agents",
        "pydantic_ai", "langchain_core", "langchain_openai", "langchain_aws", "instructor",
        "litellm", "pydantic",
    }
)  # fmt: skip
"""The packages a test module may import that the suite's tools alone (the ``test-core``
group, CI's ``nosdk`` environment) do not install: the SDKs, HTTP libraries, vcrpy, PyYAML,
the frameworks and protocol SDKs."""


class OptionalModule(pytest.Module):
    """A test module that cannot be imported for want of one of ``OPTIONAL_PACKAGES`` is
    skipped with that package named, as ``pytest.importorskip`` would; any other import
    failure stays a collection error."""

    def _getobj(self) -> Any:
        try:
            return super()._getobj()  # type: ignore[no-untyped-call]
        except pytest.Collector.CollectError as error:
            cause = error.__cause__ or error.__context__
            missing = getattr(cause, "name", None) if isinstance(cause, ImportError) else None
            if not missing or missing.partition(".")[0] not in OPTIONAL_PACKAGES:
                raise
            reason = f"{self.path.name} needs {missing}, not installed here"
            raise pytest.skip.Exception(reason, allow_module_level=True) from None


def pytest_pycollect_makemodule(module_path: Any, parent: Any) -> pytest.Module:
    return OptionalModule.from_parent(parent, path=module_path)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    """A test that imports one of ``OPTIONAL_PACKAGES`` on its way (``replay.load`` needs
    PyYAML, a tour step the SDK) skips, naming it, where it is not installed."""
    try:
        return (yield)
    except ModuleNotFoundError as error:
        if not error.name or error.name.partition(".")[0] not in OPTIONAL_PACKAGES:
            raise
        pytest.skip(f"needs {error.name}, not installed here")
