"""Issue 22, finding 9: the MCP and A2A writers in public mode show a peer nothing that
another party said.

Two sources of another party's text, drawn by hypothesis:

* an internal service that the tool or agent called over HTTP answers an error status with a
  message (JSON, plain text or an HTML page) naming a marker: ``normalize()`` of httpx's
  exception;
* a peer's problem object (received, so untrusted) with the marker in ``title``, ``detail``,
  ``model_feedback``, ``upstream``, an unknown member and the same members of a cause.

For each, every public-mode writer (MCP ``to_tool_result(public=True)``,
``to_mcp_error(public=True)``, ``sampling_error``; A2A ``to_message``, ``to_task_status``,
``to_a2a_error``, all three by default) is written out as the peer would receive it, and the
marker appears nowhere in it. The writers never raise, and each call is timed like every
other hostile input.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

pytest.importorskip("mcp.server.mcpserver")  # the 2.x line (MCPError)
pytest.importorskip("a2a.types.a2a_pb2")  # the 1.x line: protobuf types

import httpx
from google.protobuf.json_format import MessageToDict
from hypothesis import assume, given
from hypothesis import strategies as st

from normalize_errors import HarnessError, normalize
from normalize_errors.bindings import a2a, mcp

from .conftest import timed

MARKER = "zq-internal-7.corp"
"""What the peer must not see: an internal host, as the other party wrote it."""

# Text around the marker: anything printable, as an internal service or a peer writes it.
_around = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)
_marked = st.builds(lambda a, b: f"{a}{MARKER}{b}", _around, _around)


def _from_service(status: int, form: str, text: str) -> HarnessError:
    """``normalize()`` of httpx's exception for an internal service's error answer."""
    if form == "json":
        response = httpx.Response(status, json={"error": {"message": text, "code": text}})
    elif form == "html":
        response = httpx.Response(status, html=f"<html><title>{text}</title><p>{text}</p></html>")
    else:
        response = httpx.Response(status, text=text)
    response.request = httpx.Request("GET", "http://billing.corp/invoices")
    try:
        response.raise_for_status()
    except httpx.HTTPStatusError as exc:
        return normalize(exc)
    raise AssertionError(f"{status} raised nothing")


def _from_peer(code: str, text: str) -> HarnessError:
    """A peer's problem object holding ``text`` in every member that is another party's text."""
    cause = {"code": code, "title": text, "detail": text, "upstream": {"message": text}}
    problem = {
        "type": "https://iana.org/assignments/http-problem-types#agent-harness-error",
        "code": code,
        "title": text,
        "detail": text,
        "model_feedback": text,
        "upstream": {"message": text, "host": text},
        "x_note": text,
        "causes": [cause],
    }
    err = HarnessError.from_dict(problem)
    assert err.untrusted  # what from_dict reads is another party's
    return err


_statuses = st.integers(400, 599)
_forms = st.sampled_from(["json", "html", "text"])
_codes = st.sampled_from(
    ["upstream.rate_limited", "upstream.unavailable", "tool.execution_failed", "x-app.failed"]
)
_errors = st.one_of(
    st.builds(_from_service, _statuses, _forms, _marked),
    st.builds(_from_peer, _codes, _marked),
)


def _tool_result(err: HarnessError) -> str:
    return mcp.to_tool_result(err, public=True).model_dump_json()


def _mcp_error(err: HarnessError) -> str:
    failure = mcp.to_mcp_error(err, public=True)
    return failure.error.model_dump_json() + str(failure) + repr(failure)


def _sampling(err: HarnessError) -> str:
    return mcp.sampling_error(err).model_dump_json()


def _message(err: HarnessError) -> str:
    return json.dumps(MessageToDict(a2a.to_message(err)), ensure_ascii=False)


def _task_status(err: HarnessError) -> str:
    return json.dumps(MessageToDict(a2a.to_task_status(err)), ensure_ascii=False)


def _a2a_error(err: HarnessError) -> str:
    failure = a2a.to_a2a_error(err)
    data = json.dumps(getattr(failure, "data", None), ensure_ascii=False, default=str)
    return str(failure) + repr(failure) + data


WRITERS: dict[str, Callable[[HarnessError], str]] = {
    "mcp.to_tool_result": _tool_result,
    "mcp.to_mcp_error": _mcp_error,
    "mcp.sampling_error": _sampling,
    "a2a.to_message": _message,
    "a2a.to_task_status": _task_status,
    "a2a.to_a2a_error": _a2a_error,
}


@pytest.mark.parametrize("name", WRITERS)
@given(err=_errors)
def test_a_public_writer_shows_none_of_another_partys_text(name: str, err: HarnessError) -> None:
    # The input holds the marker (an HTML page whose markup the marker breaks may not).
    assume(MARKER in json.dumps(err.to_dict(), ensure_ascii=False))
    seen = timed(name, lambda: WRITERS[name](err), err.code)
    assert MARKER not in seen
    assert err.code in seen  # the peer still learns what happened
