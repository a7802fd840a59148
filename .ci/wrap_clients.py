"""A pytest plugin for the vendor SDKs' own test suites: every client they build is wrapped.

``.ci/vendor_suites.py`` runs a vendor's client tests twice, once plain and once with this
plugin's ``--wrap-clients SDK``, which gives each client class of that SDK a ``__new__``
that builds the client as the SDK would and returns ``wrap(client, check=False)``. Python
calls ``__init__`` only on a real instance of the class, so the client is initialised once,
by the SDK's own ``__init__``, and the test goes on with the wrapped client wherever it built
one (fixtures, helpers, inline ``OpenAI(...)`` calls).

Only the SDK under test is imported: importing another changes what the tests see (anthropic
sets the ``__module__`` of the httpx2 classes it re-exports, such as ``httpx2.Timeout``, to
``"anthropic"``, and google-genai picks its HTTP library by that module name).

Either way the plugin writes each test's outcome (``passed``, ``failed``, ``skipped``,
``error``) to the JSON file named by ``--outcomes``, which ``.ci/vendor_suites.py`` compares,
with the number of clients it wrapped (a wrapped run that wrapped none tested nothing).
"""

from __future__ import annotations

import copyreg
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

CLIENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "openai": ("openai", ("OpenAI", "AsyncOpenAI")),
    "anthropic": (
        "anthropic",
        (
            "Anthropic",
            "AsyncAnthropic",
            "AnthropicBedrock",
            "AsyncAnthropicBedrock",
            "AnthropicBedrockMantle",
            "AsyncAnthropicBedrockMantle",
            "AnthropicVertex",
            "AsyncAnthropicVertex",
        ),
    ),
    "google-genai": ("google.genai", ("Client",)),
}
"""Per SDK (its distribution name): its module and the client classes whose instances the
tests use (subclasses such as ``AzureOpenAI`` and ``AnthropicAWS`` inherit the ``__new__``
given to their base; anthropic's Bedrock, Bedrock Mantle and Vertex clients have bases of
their own)."""

_OUTCOMES: dict[str, str] = {}
_WRAPPED = {"built": 0, "reported": 0, "total": 0}
"""Clients wrapped in this process, and how many of them the test reports have counted."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("normalize-errors vendor suites")
    group.addoption(
        "--wrap-clients",
        choices=sorted(CLIENTS),
        default=None,
        help="wrap every client of this SDK that the tests build",
    )
    group.addoption("--outcomes", default=None, help="write each test's outcome to this JSON file")


def _wrapping_new(cls: type) -> Any:
    from normalize_errors import wrap

    def __new__(klass: type, *args: Any, **kwargs: Any) -> Any:
        client: Any = object.__new__(klass)
        if sys._getframe(1).f_code is copyreg.__newobj__.__code__:
            # copy.copy() of a client (the SDK copies its own, anthropic's environment worker
            # among others): the bare instance that copy fills with the original's state, as
            # without this plugin, never a new client built from the environment and wrapped
            return client
        klass.__init__(client, *args, **kwargs)  # type: ignore[misc]
        _WRAPPED["built"] += 1
        return wrap(client, check=False)

    return __new__


def pytest_configure(config: pytest.Config) -> None:
    sdk = config.getoption("--wrap-clients")
    if sdk is None:
        return
    module_name, names = CLIENTS[sdk]
    module = importlib.import_module(module_name)
    for name in names:
        cls = getattr(module, name)
        cls.__new__ = _wrapping_new(cls)


def pytest_runtest_teardown(item: pytest.Item) -> None:
    # the teardown report carries it, also from a pytest-xdist worker to the controller
    item.user_properties.append(("wrapped_clients", _WRAPPED["built"] - _WRAPPED["reported"]))
    _WRAPPED["reported"] = _WRAPPED["built"]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "teardown":
        _WRAPPED["total"] += sum(n for key, n in report.user_properties if key == "wrapped_clients")
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
        found = {"outcomes": _OUTCOMES, "wrapped_clients": _WRAPPED["total"]}
        Path(path).write_text(json.dumps(found, indent=0, sort_keys=True))
