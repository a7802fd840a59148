"""A pytest plugin for the vendor SDKs' own test suites: every client they build is wrapped.

``.ci/vendor-suites`` runs a vendor's client tests twice, once plain and once with this
plugin's ``--wrap-clients``, which gives each client class of the SDK under test a
``__new__`` that builds the client as the SDK would and returns ``wrap(client,
check=False)``. Python calls ``__init__`` only on a real instance of the class, so the
client is initialised once, by the SDK's own ``__init__``, and the test goes on with the
wrapped client wherever it built one (fixtures, helpers, inline ``OpenAI(...)`` calls).

Either way the plugin writes each test's outcome (``passed``, ``failed``, ``skipped``,
``error``) to the JSON file named by ``--outcomes``, which ``.ci/vendor-suites`` compares.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

CLIENTS: dict[str, tuple[str, ...]] = {
    "openai": ("OpenAI", "AsyncOpenAI"),
    "anthropic": ("Anthropic", "AsyncAnthropic"),
    "google.genai": ("Client",),
}
"""The client classes, per SDK module, whose instances the tests use (subclasses such as
``AzureOpenAI`` inherit the ``__new__`` given to their base)."""

_OUTCOMES: dict[str, str] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("normalize-errors vendor suites")
    group.addoption("--wrap-clients", action="store_true", help="wrap every SDK client built")
    group.addoption("--outcomes", default=None, help="write each test's outcome to this JSON file")


def _wrapping_new(cls: type) -> Any:
    from normalize_errors import wrap

    def __new__(klass: type, *args: Any, **kwargs: Any) -> Any:
        client: Any = object.__new__(klass)
        klass.__init__(client, *args, **kwargs)  # type: ignore[misc]
        return wrap(client, check=False)

    return __new__


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("--wrap-clients"):
        return
    for module_name, names in CLIENTS.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in names:
            cls = getattr(module, name)
            cls.__new__ = _wrapping_new(cls)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or report.outcome != "passed":
        outcome = "error" if report.when != "call" and report.failed else report.outcome
        if _OUTCOMES.get(report.nodeid) in (None, "passed"):
            _OUTCOMES[report.nodeid] = outcome


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _OUTCOMES[report.nodeid] = "error"


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--outcomes")
    if path and not hasattr(session.config, "workerinput"):  # pytest-xdist: the controller writes
        Path(path).write_text(json.dumps(_OUTCOMES, indent=0, sort_keys=True))
