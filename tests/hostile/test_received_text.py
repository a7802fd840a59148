"""Issue 22, finding 14: a received text member holding a lone surrogate (half of a cut emoji,
``"\\ud83d"`` in JSON) is cleaned like ``detail`` on the way in, so every way out can be
written as UTF-8: ``to_http``, ``to_json().encode()``, ``str(err).encode()`` and ``classify``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from normalize_errors import HarnessError, from_response
from normalize_errors.bindings.http import read_problem, to_http

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = "application/problem+json"

# Constructed for this test (no vendor sends these): a harness error object whose text members
# hold a lone surrogate, written as JSON escapes, as a peer that cut an emoji would send it.
TYPE = '"type":"https://iana.org/assignments/http-problem-types#agent-harness-error",'
BODIES = {
    "title": "{" + TYPE + '"code":"upstream.rate_limited","status":429,"title":"\\ud83d"}',
    "title, no detail": "{" + TYPE + '"code":"upstream.rate_limited","title":"over \\udfff"}',
    "every member": (
        "{" + TYPE + '"code":"upstream.rate_limited","status":429,"title":"\\ud83d",'
        '"detail":"d\\ud83d",'
        '"instance":"urn:x:\\ud83d","model_feedback":"f\\ud83d","extra":"\\ud83d",'
        '"nested":{"a":["\\udc00"]}}'
    ),
}

READERS: dict[str, Callable[[str], HarnessError | None]] = {
    "from_json": HarnessError.from_json,
    "from_response": lambda body: from_response(429, {"content-type": PROBLEM}, body),
    "read_problem": lambda body: read_problem(429, {"content-type": PROBLEM}, body),
}


def _no_surrogate(value: object) -> None:
    text = json.dumps(value, ensure_ascii=False)
    text.encode("utf-8")  # raises on a lone surrogate anywhere


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_every_received_text_member_is_utf8_safe(
    reader: Callable[[str], HarnessError | None], body: str
) -> None:
    """Each entry point: the title (and every other text member) comes in as U+FFFD."""
    err = reader(body)
    assert err is not None
    assert err.code == "upstream.rate_limited"
    assert "\ufffd" in err.title
    _no_surrogate([err.title, err.detail, err.instance, err.to_dict()])
    status, _, payload = to_http(err)
    assert status == 429
    assert "\ufffd" in json.loads(payload)["title"]
    err.to_json().encode("utf-8")
    str(err).encode("utf-8")
    repr(err).encode("utf-8")


def test_classify_writes_a_lone_surrogate_title_as_utf8(tmp_path: Path) -> None:
    """The command line: exit status 0 and the problem object, no traceback."""
    raw = tmp_path / "response.http"
    raw.write_bytes(
        b"HTTP/1.1 429 \r\ncontent-type: application/problem+json\r\n\r\n"
        + BODIES["every member"].encode("ascii")
    )
    run = subprocess.run(
        [sys.executable, "-m", "normalize_errors", "classify", str(raw)],
        cwd=ROOT,
        check=False,
        capture_output=True,
        env={"PYTHONIOENCODING": "utf-8", "PATH": ""},
        timeout=60,
    )
    assert run.returncode == 0, run.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in run.stderr
    problem = json.loads(run.stdout.decode("utf-8"))
    assert problem["title"] == "\ufffd"
    assert problem["code"] == "upstream.rate_limited"
