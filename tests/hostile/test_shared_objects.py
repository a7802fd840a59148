"""Shared sub-objects in a received problem (issue 22, finding 2).

A 600-byte YAML whose ``upstream`` (or ``limit``, ``location``, an unknown member) is a nest
of anchors, 8 references wide and 7 deep, took ``from_dict`` seconds of CPU, eight times
more per level: ``sanitize`` copied a shared sub-object once per reference. One
``sanitize`` call now copies at most ``MAX_NODES`` values, marking the rest ``…``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalize_errors import HarnessError
from normalize_errors._base._safe_copy import MAX_NODES, sanitize

from ..support import examples
from .conftest import timed

MARK = "…"


def anchored(wide: int = 8, deep: int = 7) -> str:
    """A YAML document: ``a0`` a small mapping, each ``aN`` a mapping of ``wide`` aliases of
    ``a(N-1)``, up to ``a{deep}``."""
    lines = ["a0: &a0 {x: 1, y: v}"]
    for level in range(1, deep + 1):
        refs = ", ".join(f"k{j}: *a{level - 1}" for j in range(wide))
        lines.append(f"a{level}: &a{level} {{{refs}}}")
    return "\n".join(lines) + "\n"


def nodes(value: Any) -> int:
    """How many values ``value`` holds, itself included (a tree: no sharing is left)."""
    if isinstance(value, dict):
        return 1 + sum(nodes(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(nodes(item) for item in value)
    return 1


def holding(member: str, nest: Any) -> dict[str, Any]:
    """A problem object whose ``member`` holds ``nest`` (under ``nest``, beside what a
    ``limit`` and a ``location`` require)."""
    required: dict[str, dict[str, Any]] = {
        "limit": {"name": "n", "value": 1},
        "location": {"pointer": "/a"},
    }
    return {
        "code": "upstream.unavailable",
        "detail": "x",
        member: {**required.get(member, {}), "nest": nest},
    }


def shared(wide: int = 8, deep: int = 7) -> dict[str, Any]:
    """The same nest built in Python: one dict referenced ``wide`` times at every level."""
    node: dict[str, Any] = {"x": 1, "y": "v"}
    for _ in range(deep):
        node = {f"k{j}": node for j in range(wide)}
    return node


@pytest.mark.parametrize("member", ["upstream", "limit", "location", "x_vendor"])
def test_from_dict_of_an_anchored_yaml_nest_is_bounded_and_marked(member: str) -> None:
    """The real ``yaml.safe_load`` of the anchored document, in each member that is copied."""
    yaml = pytest.importorskip("yaml")
    nest = yaml.safe_load(anchored())["a7"]
    err = timed("from_dict", lambda: HarnessError.from_dict(holding(member, nest)), member)
    copied = err.to_dict()[member]
    assert nodes(copied) <= MAX_NODES + 64 * 8
    assert MARK in json.dumps(copied, ensure_ascii=False)  # what was dropped is marked
    first, levels = copied["nest"], 0
    while isinstance(first, dict):  # the first path is copied down to MAX_DEPTH
        first, levels = first["k0"], levels + 1
    assert levels >= 6
    assert copied["nest"]["k7"] == "…"  # past the budget


def test_harness_error_with_a_shared_python_upstream_is_bounded() -> None:
    """``HarnessError(upstream=...)`` with the same dict referenced 8 times per level."""
    err = timed("HarnessError", lambda: HarnessError("x", code="x-app.failed", upstream=shared()))
    assert nodes(err.upstream) <= MAX_NODES + 64 * 8
    assert MARK in json.dumps(err.upstream, ensure_ascii=False)
    back = HarnessError.from_json(err.to_json())
    assert back.upstream == err.upstream


def test_a_body_below_the_budget_is_copied_whole() -> None:
    """A nest 8 wide and 3 deep (1,609 values) is far under the budget: nothing is marked."""
    value = shared(8, 3)
    copied = sanitize(value)
    assert copied == value
    assert nodes(copied) == 1609


DAG_LEAVES = st.one_of(st.none(), st.integers(), st.text(max_size=8), st.booleans())


@st.composite
def dags(draw: st.DrawFn) -> Any:
    """Up to 12 containers, each a dict or a list of earlier values (referenced up to 64
    times each), so the tree they unfold into may be astronomically large."""
    made: list[Any] = [draw(DAG_LEAVES)]
    for _ in range(draw(st.integers(1, 12))):
        picks = draw(st.lists(st.sampled_from(made), min_size=1, max_size=64))
        if draw(st.booleans()):
            made.append({f"k{i}": item for i, item in enumerate(picks)})
        else:
            made.append(picks)
    top = made[-1]
    return top if isinstance(top, dict) else {"items": top}


@settings(max_examples=examples(60), deadline=None)
@given(dags(), st.sampled_from(["upstream", "limit", "location", "x_vendor"]))
def test_received_dags_give_a_bounded_copy_and_never_raise(value: Any, member: str) -> None:
    """``from_dict`` and ``HarnessError(upstream=...)`` of any DAG: bounded, never raise."""
    err = timed("from_dict", lambda: HarnessError.from_dict(holding(member, value)), member)
    assert nodes(err.to_dict()[member]) <= MAX_NODES + 64 * 8
    built = timed("HarnessError", lambda: HarnessError("x", code="x-app.failed", upstream=value))
    assert nodes(built.upstream) <= MAX_NODES + 64 * 8
