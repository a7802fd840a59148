"""``causes`` stay bounded in all: self-referencing and shared sub-objects, huge groups.

Each case runs in a child process with a generous timeout that only guards CI against a
hang; the assertions are on what comes back and on how much was read.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

from normalize_errors._model._groups import MAX_WALK
from normalize_errors._model._problem import MAX_TOTAL_CAUSES
from tests.support import needs

SCRIPT = r"""
import json, sys
import yaml
from normalize_errors import HarnessError, normalize
from normalize_errors import _facade

MODE = sys.argv[1]


def shape(err):
    total, depth, node = 0, 0, err
    stack = [(err, 0)]
    while stack:
        item, level = stack.pop()
        total += 1
        depth = max(depth, level)
        stack.extend((cause, level + 1) for cause in item.causes)
    while node.causes:
        node = node.causes[-1]
    return {"code": err.code, "total": total, "depth": depth, "innermost": node.detail,
            "json": len(err.to_json())}


if MODE == "yaml":
    obj = yaml.safe_load("&a {code: upstream.unavailable, detail: loop, causes: [*a]}")
    out = shape(HarnessError.from_dict(obj))
if MODE == "wide-loop":
    obj = {"code": "upstream.unavailable", "detail": "loop"}
    obj["causes"] = [obj] * 16
    out = shape(HarnessError.from_dict(obj))
if MODE == "shared":
    node = {"code": "upstream.unavailable", "detail": "root"}
    for level in range(12):
        node = {"code": "upstream.unavailable", "detail": f"level {level}", "causes": [node] * 16}
    out = shape(HarnessError.from_dict(node))
if MODE == "group":
    seen = []
    real = _facade._normalize

    def counting(exc, provider, walk):
        seen.append(exc)
        return real(exc, provider, walk)

    _facade._normalize = counting
    group = ExceptionGroup("many", [ConnectionError(f"member {i}") for i in range(100_000)])
    out = shape(normalize(group))
    out["normalized"] = len(seen)
    out["causes"] = [c.detail for c in normalize(group).causes]
if MODE == "shared-group":
    calls = []
    real = _facade._normalize
    _facade._normalize = lambda exc, provider, walk: calls.append(1) or real(exc, provider, walk)
    group = ExceptionGroup("leaf", [TimeoutError("t")] * 17)
    for level in range(8):
        group = ExceptionGroup(f"level {level}", [group] * 17)
    out = shape(normalize(group))
    out["normalized"] = len(calls)
print(json.dumps(out))
"""


def run(mode: str) -> dict[str, Any]:
    needs("yaml")
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def test_from_dict_returns_on_a_yaml_anchor_that_contains_itself() -> None:
    """``&a {code: upstream.unavailable, causes: [*a]}``: it used to loop for ever."""
    report = run("yaml")
    assert report["code"] == "upstream.unavailable"
    assert report["depth"] == 8  # MAX_CAUSE_DEPTH levels, then the innermost entry
    assert report["innermost"] == "loop"


def test_from_dict_bounds_the_total_of_a_list_that_contains_its_owner() -> None:
    report = run("wide-loop")
    assert report["total"] <= 2 * MAX_TOTAL_CAUSES + 1
    assert report["depth"] <= 8


def test_from_dict_shared_sub_objects_do_not_grow_as_16_to_the_depth() -> None:
    """16 references per level, 12 levels: 16**12 causes as written, a bounded few read."""
    report = run("shared")
    assert report["total"] <= 2 * MAX_TOTAL_CAUSES + 1
    assert report["json"] < 200_000
    assert report["innermost"] == "root"  # the original error survives (draft section 8.5)


def test_normalize_of_a_huge_group_normalizes_only_what_is_kept() -> None:
    report = run("group")
    assert report["normalized"] == 1 + 17  # the group itself, its first 16 members and the last
    assert report["total"] == 17
    assert report["causes"][0] == "The connection failed: member 1."
    assert report["causes"][-1] == "The connection failed: member 99999."


def test_normalize_of_nested_shared_groups_is_bounded_in_all() -> None:
    report = run("shared-group")
    assert report["normalized"] <= 2 * MAX_WALK
    assert report["code"] == "upstream.unavailable"
