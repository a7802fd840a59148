"""The testing guide (docs/guides/testing.md): its example test file runs, and fails as it must."""

from __future__ import annotations

import re
from pathlib import Path

import anthropic
import pytest
import vcr
import yaml

pytest_plugins = ["pytester"]

# imported here, so pytester's in-process run does not import them again: modules first
# imported inside that run are dropped after it, and a later test would get new copies of
# vcrpy and yaml whose loaders no longer agree (cassettes then fail to load)
LOADED = (anthropic, vcr, yaml)

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "testing.md"
SECTION = "# Testing your failure handling offline"


def first_python_block(text: str, heading: str) -> str:
    """The first ```python block after ``heading``, before the next section of that level."""
    start = ("\n" + text).index("\n" + heading + "\n")
    end = text.find("\n## ", start + len(heading) + 2)
    section = text[start : end if end != -1 else len(text)]
    match = re.search(r"```python\n(.*?)\n```", section, re.S)
    assert match is not None, f"no python block in {heading!r}"
    return match.group(1) + "\n"


def test_the_guide_example_is_a_passing_test_file(pytester: pytest.Pytester) -> None:
    """Every test of the guide's example passes under the plugin, with a real SDK client."""
    source = first_python_block(GUIDE.read_text(encoding="utf-8"), SECTION)
    assert "import anthropic" in source
    assert "llm_faults" in source
    pytester.makepyfile(test_answer=source)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio")
    result.assert_outcomes(passed=len(re.findall(r"^def test_", source, re.M)))


def test_the_guide_example_fails_when_the_code_under_test_does_not_retry(
    pytester: pytest.Pytester,
) -> None:
    """With the retry loop reduced to one attempt, the tests that expect retries fail.

    The two that scripted more failures than were requested also error at teardown: the
    fixture is strict about scripted steps nobody asked for.
    """
    source = first_python_block(GUIDE.read_text(encoding="utf-8"), SECTION)
    broken = source.replace("for attempt in range(3):", "for attempt in range(1):")
    broken = broken.replace("attempt == 2", "attempt == 0")
    assert broken != source
    pytester.makepyfile(test_answer=broken)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio")
    result.assert_outcomes(passed=2, failed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            "FAILED test_answer.py::test_overloaded_twice_then_answers*",
            "FAILED test_answer.py::test_rate_limited_waits_as_long_as_the_server_says*",
            "ERROR test_answer.py::test_overloaded_for_three_calls_gives_up*",
        ],
        consecutive=False,
    )
    result.stdout.fnmatch_lines(["*2 scripted response(s) never requested*"])
