"""What a public HTTP API may show (draft section 10): public mode of to_http and the handler."""

from __future__ import annotations

import importlib
import json
import sys

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from normalize_errors import HarnessError, OutputRetriesExhaustedError, class_for_code
from normalize_errors.bindings import starlette as binding
from normalize_errors.bindings.http import PUBLIC_MEMBERS, public_problem, to_http
from normalize_errors.replay import load, run, shipped


def recorded_overload() -> BaseException:
    """Anthropic's recorded 529 (Cloudflare cf-ray, request id), raised by the real SDK."""
    exc = run(load(shipped() / "anthropic" / "overloaded_529.yaml")).exception
    assert exc is not None
    return exc


def app_raising(exc: BaseException, **options: bool) -> TestClient:
    """A Starlette app whose one route raises ``exc``, with ``install(app, **options)``."""

    async def route(request: object) -> None:
        raise exc

    app = Starlette(routes=[Route("/", route)])
    binding.install(app, **options)
    return TestClient(app, raise_server_exceptions=False)


def test_catch_all_is_public_and_shows_no_vendor_facts() -> None:
    """The issue's case: a vendor overload through catch_all gives code and hints, no upstream."""
    response = app_raising(recorded_overload(), catch_all=True).get("/")
    assert response.status_code == 503
    obj = response.json()
    assert obj["code"] == "upstream.overloaded"
    assert obj["retryable"] is True
    assert set(obj) <= PUBLIC_MEMBERS
    assert "upstream" not in obj
    assert "detail" not in obj
    for leak in ("cf-ray", "8e695a03eed4f9fd", "req_01RCc7Mb", "cloudflare", "anthropic"):
        assert leak not in response.text


def test_catch_all_hides_an_internal_exceptions_text() -> None:
    """A bug's message (a path, a password) is not sent; the code and status are."""
    bug = RuntimeError("db password=hunter2 failed in /srv/app/db.py")
    response = app_raising(bug, catch_all=True).get("/")
    assert response.status_code == 500
    assert response.json() == {
        "type": "https://iana.org/assignments/http-problem-types#agent-harness-error",
        "title": "Harness Internal Error",
        "status": 500,
        "code": "harness.internal_error",
        "origin": "harness",
        "retryable": False,
    }


def test_the_default_install_keeps_the_whole_object_for_trusted_clients() -> None:
    """Without catch_all nothing changes unless public=True is asked for."""
    err = HarnessError.from_dict(
        {"code": "upstream.overloaded", "upstream": {"provider": "anthropic", "request_id": "r1"}}
    )
    trusted = app_raising(err).get("/").json()
    assert trusted["upstream"] == {"provider": "anthropic", "request_id": "r1"}
    public = app_raising(err, public=True).get("/").json()
    assert "upstream" not in public
    full = app_raising(err, catch_all=True, public=False).get("/").json()
    assert full["upstream"]["request_id"] == "r1"


def test_public_problem_keeps_the_hints_and_cleans_every_cause() -> None:
    """What stays and what goes, member by member, in causes too."""
    cause = class_for_code("output.schema_violation")(
        "price was 'ten'",
        model_feedback="Field 'price' must be a number.",
        location={"turn": 5, "pointer": "/items/0/price"},
        upstream={"provider": "openai"},
        extensions={"x_trace": "internal"},
    )
    err = OutputRetriesExhaustedError(
        "gave up",
        attempts=3,
        max_attempts=3,
        retry_after=2,
        limit={"name": "output_retries", "value": 3},
        upstream={"provider": "openai", "status": 200},
        causes=[cause],
    )
    assert public_problem(err) == {
        "type": "https://iana.org/assignments/http-problem-types#agent-harness-error",
        "title": "Output Retries Exhausted",
        "code": "output.retries_exhausted",
        "origin": "harness",
        "retry_after": 2,
        "attempts": 3,
        "max_attempts": 3,
        "limit": {"name": "output_retries", "value": 3},
        "causes": [
            {
                "type": "https://iana.org/assignments/http-problem-types#agent-harness-error",
                "title": "Output Schema Violation",
                "code": "output.schema_violation",
                "origin": "model",
                "location": {"turn": 5, "pointer": "/items/0/price"},
            }
        ],
    }
    status, headers, body = to_http(err, public=True)
    assert (status, headers["retry-after"]) == (422, "2")
    assert json.loads(body) == {**public_problem(err), "status": 422}
    assert json.loads(to_http(err)[2])["upstream"] == {"provider": "openai", "status": 200}


def test_the_old_path_warns_and_gives_the_same_handler() -> None:
    """frameworks.starlette is a deprecated alias of bindings.starlette."""
    name = "normalize_errors.frameworks.starlette"
    saved = sys.modules.pop(name, None)
    try:
        with pytest.warns(DeprecationWarning, match=r"bindings\.starlette"):
            old = importlib.import_module(name)
        assert old.install is binding.install
        assert old.problem_response is binding.problem_response
    finally:
        if saved is not None:
            sys.modules[name] = saved


def test_public_mode_writes_the_registrys_title() -> None:
    """A received object's own title is another party's text: the registry's title replaces it."""
    received = HarnessError.from_dict(
        {"code": "tool.execution_failed", "title": "Failed at /srv/tools/run.py"}
    )
    assert public_problem(received)["title"] == "Tool Execution Failed"
    assert received.to_dict()["title"] == "Failed at /srv/tools/run.py"
