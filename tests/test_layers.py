"""The package's layers: each module imports only from its own layer or a lower one, with no cycle.

The layers, lowest first (docs/internals/built.md draws them): ``LAYERS`` places every module
by its name. A module-level import may only go down or stay in its layer, and the module-level
imports have no cycle. An import inside a function (``FUNCTION_LEVEL``) is listed here with why
it waits: the list is exact, so a new one fails until it is placed here, and one removed must be
removed here too (the list only shrinks toward the optional SDKs, which are not checked).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "normalize_errors"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # reading text, bounding it, redacting it; the data files; nothing of the error yet
    ("foundation", ("_base",)),
    # the error model and the registry of codes
    ("model", ("_model",)),
    # reading a failure: facts, rows, families, hints, streams' state machines
    ("reading", ("_reading",)),
    # one module per provider, and the registry that routes to them
    ("providers", ("providers",)),
    # normalize(), from_response(), diagnose(): the public functions, and the package's
    # eager exports (normalize_errors/__init__.py)
    ("facade", ("_facade", "_not_answers", "")),
    # wrap(), streams, drop-ins, cassettes and replay
    ("wrapping", ("_wrapping", "replay")),
    # what uses errors: retries, bindings, frameworks, resilience, the pytest plugin, the corpus
    ("uses", ("retry", "bindings", "frameworks", "resilience", "testing", "corpus")),
    # the command line
    ("cli", ("_cli", "__main__")),
)

FUNCTION_LEVEL: frozenset[tuple[str, str]] = frozenset(
    {
        # lazy, for import time (`import normalize_errors` stays under 15 ms and imports no
        # SDK): the package's attributes, the CLI's commands, the plugin's helpers, a binding or
        # a framework reading the facade only when called
        ("normalize_errors", "_wrapping._normalized"),
        ("normalize_errors", "_reading._rules"),
        ("normalize_errors", "_base._types"),
        ("normalize_errors", "_wrapping._wrap"),
        ("_cli", "_facade"),
        ("_cli", "_model._groups"),
        ("_cli", "_cli._pasted"),
        ("_cli", "_base._redact"),
        ("_cli", "_wrapping._wrap"),
        ("_cli", "corpus"),
        ("_cli", "replay"),
        ("_cli", "testing"),
        ("testing", "testing._faults"),
        ("testing", "testing._record"),
        ("testing._faults", "_wrapping._cassette"),
        ("testing._faults", "replay"),
        ("testing.plugin", "testing._faults"),
        ("corpus", "_facade"),
        ("corpus", "_reading._tables"),
        ("bindings.otel", "_facade"),
        ("bindings.starlette", "_facade"),
        ("replay", "providers"),
        ("resilience._attempts", "bindings.otel"),
        ("resilience._breaker", "resilience._redis"),
        ("resilience._ledger", "resilience._redis"),
        ("resilience._ledger", "providers._routing"),
        ("frameworks.agents", "normalize_errors"),
        ("frameworks.langchain", "normalize_errors"),
        ("frameworks.langchain", "providers._routing"),
        ("frameworks.pydantic_ai", "normalize_errors"),
        # upward, to the providers' registry or the facade: the model and the reading layer
        # ask "which provider?" or "read this nested failure" (a cycle held apart)
        ("_model._exceptions", "_model._code_classes"),
        ("_model._exceptions", "_model._problem"),
        ("_model._pickling", "_model._dropin"),
        ("_model._pickling", "_model._exceptions"),
        ("_model._pickling", "providers._routing"),
        ("_reading._readers", "_reading._rules"),
        ("_reading._from_exception", "_facade"),
        ("_facade", "_reading._envelopes"),
        ("_facade", "_base._http_wire"),
        ("_facade", "_not_answers"),
        ("_facade", "_reading._stream_state"),
        ("_facade", "bindings.http"),
        ("_facade", "frameworks._common"),
        ("_facade", "providers"),
        ("_facade", "providers._routing"),
        ("_not_answers", "_reading._envelopes"),
        ("_not_answers", "providers._routing"),
        ("_wrapping._wrap", "_not_answers"),
        ("_wrapping._wrap", "_wrapping._wrap_streams"),
        ("_wrapping._wrap", "providers._routing"),
        ("_wrapping._wrap_streams", "_model._code_classes"),
        ("_wrapping._wrap_streams", "_facade"),
        ("_wrapping._wrap_streams", "providers._routing"),
        # an adapter and its stream machine, which reads events with the adapter
        ("providers.anthropic", "_reading._envelopes"),
        ("providers.anthropic", "_not_answers"),
        ("providers.anthropic", "providers._anthropic_stream"),
        ("providers.bedrock", "providers._bedrock_stream"),
        ("providers.bedrock", "providers._routing"),
        ("providers.cohere", "providers._cohere_stream"),
        ("providers.http", "_facade"),
        ("providers.openai._errors", "providers.openai._results"),
        ("providers.openai._results", "_not_answers"),
    }
)


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _short(module: str) -> str:
    return module.removeprefix("normalize_errors.") if module != "normalize_errors" else module


def layer_of(module: str) -> int | None:
    rest = module.removeprefix("normalize_errors").lstrip(".")
    for number, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if rest == prefix or (prefix and rest.startswith(prefix + ".")):
                return number
    return None


def _imports(module: str) -> tuple[set[str], set[str]]:
    """The package's modules ``module`` imports at module level and inside functions
    (imports under ``if TYPE_CHECKING:`` are for the type checker only and not counted)."""
    path = MODULES[module]
    package = module.split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    top: set[str] = set()
    inner: set[str] = set()

    def target(node: ast.ImportFrom) -> list[str]:
        if node.level:
            base = ".".join(package[: len(package) - (node.level - 1)])
            origin = base + ("." + node.module if node.module else "")
        elif node.module and node.module.split(".")[0] == "normalize_errors":
            origin = node.module
        else:
            return []
        return [
            f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in MODULES else origin
            for alias in node.names
        ]

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.ImportFrom):
                (inner if inside else top).update(t for t in target(child) if t != module)
            elif isinstance(child, ast.Import):
                named = {a.name for a in child.names if a.name.split(".")[0] == "normalize_errors"}
                (inner if inside else top).update(named & MODULES.keys())
            visit(child, inside or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(ast.parse(path.read_text("utf-8")), False)
    return top, inner


GRAPH = {module: _imports(module) for module in MODULES}


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if layer_of(m) is None] == []


Graph = dict[str, tuple[set[str], set[str]]]


def upward(graph: Graph) -> list[str]:
    """The module-level imports of ``graph`` that go to a higher layer."""
    return [
        f"{_short(m)} ({LAYERS[layer_of(m) or 0][0]}) imports {_short(t)} "
        f"({LAYERS[layer_of(t) or 0][0]})"
        for m, (top, _) in graph.items()
        for t in sorted(top)
        if (layer_of(t) or 0) > (layer_of(m) or 0)
    ]


def cycles(graph: Graph) -> list[list[str]]:
    """The cycles among the module-level imports of ``graph``, as paths."""
    state: dict[str, int] = {}
    found: list[list[str]] = []

    def walk(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, (set(), set()))[0]):
            if state.get(target) == 1:
                found.append([*path[path.index(target) :], target])
            elif target not in state:
                walk(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            walk(module, [module])
    return found


def test_module_level_imports_go_down_or_stay_in_their_layer() -> None:
    assert upward(GRAPH) == []


def test_module_level_imports_have_no_cycle() -> None:
    assert cycles(GRAPH) == []


def test_the_imports_inside_functions_are_the_listed_ones() -> None:
    found = {(_short(m), _short(t)) for m, (_, inner) in GRAPH.items() for t in inner}
    assert sorted(found - FUNCTION_LEVEL) == []  # new: place it in a layer, or list it with why
    assert sorted(FUNCTION_LEVEL - found) == []  # gone: take it off the list


CASES = [
    ("normalize_errors._reading._rules", "reading"),
    ("normalize_errors.providers.openai._errors", "providers"),
    ("normalize_errors", "facade"),
    ("normalize_errors.bindings.otel", "uses"),
]


@pytest.mark.parametrize(("module", "expected"), CASES)
def test_layer_of_places_by_name(module: str, expected: str) -> None:
    assert LAYERS[layer_of(module) or 0][0] == expected


def test_the_checks_find_an_upward_import_and_a_cycle() -> None:
    wrong: Graph = {
        "normalize_errors._model._exceptions": ({"normalize_errors._wrapping._wrap"}, set()),
        "normalize_errors._wrapping._wrap": ({"normalize_errors._reading._rules"}, set()),
        "normalize_errors._reading._rules": ({"normalize_errors._model._exceptions"}, set()),
    }
    assert upward(wrong) == ["_model._exceptions (model) imports _wrapping._wrap (wrapping)"]
    assert cycles(wrong) == [
        ["normalize_errors._model._exceptions", "normalize_errors._wrapping._wrap",
         "normalize_errors._reading._rules", "normalize_errors._model._exceptions"]
    ]  # fmt: skip
