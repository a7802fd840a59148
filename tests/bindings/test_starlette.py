"""What a public HTTP API may show (draft section 10): public mode of to_http and the handler."""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

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


# -- a received status never decides ours (issue 22, finding 10) ------------------------------

REMOTE_CODE = "upstream.unavailable"


def remote_problem(status: int) -> bytes:
    """A harness error object another service sent, whose ``status`` member says ``status``."""
    return json.dumps(
        {
            "type": "https://iana.org/assignments/http-problem-types#agent-harness-error",
            "title": "Upstream Unavailable",
            "status": status,
            "code": REMOTE_CODE,
        }
    ).encode()


def upstream_client(status: int, body: bytes) -> object:
    """An HTTP client whose every request gets ``status`` and ``body`` (problem+json)."""
    from normalize_errors._wrapping._replay_calls import http_library

    http = http_library("openai")

    def answer(request: object) -> object:
        return http.Response(
            status, headers={"content-type": "application/problem+json"}, content=body
        )

    return http.Client(transport=http.MockTransport(answer))


def app_calling_upstream(
    status: int, body: bytes, *, raise_for_status: bool, **options: bool
) -> TestClient:
    """A Starlette app whose route calls another service and raises what it answered: the
    error read by ``from_response``, or (``raise_for_status``) the client's own exception,
    which ``catch_all`` normalizes."""
    from normalize_errors import from_response

    client: Any = upstream_client(status, body)

    async def route(request: object) -> None:
        answer = client.get("https://agents.example/run")
        if raise_for_status:
            answer.raise_for_status()
        raise from_response(answer.status_code, answer.headers, answer.content)

    app = Starlette(routes=[Route("/", route)])
    binding.install(app, **options)
    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize("claimed", [200, 204, 101, 304, 299, 418, 529])
@pytest.mark.parametrize("raise_for_status", [False, True])
def test_a_received_status_does_not_decide_the_public_answer(
    claimed: int, raise_for_status: bool
) -> None:
    """A remote problem+json saying ``"status": 200`` (or 204, 304...), re-raised through
    ``install(app, catch_all=True)``, gets the registry's status for its code: never 200 OK
    nor a 204/304 with a body, and in public mode not even a received 4xx/5xx."""
    from normalize_errors import CODES

    wanted = CODES[REMOTE_CODE].http_status
    client = app_calling_upstream(
        503, remote_problem(claimed), raise_for_status=raise_for_status, catch_all=True
    )
    response = client.get("/")
    assert response.status_code == wanted
    assert 400 <= response.status_code <= 599
    obj = response.json()
    assert obj["code"] == REMOTE_CODE
    assert obj["status"] == wanted


@pytest.mark.parametrize("claimed", [200, 204, 304])
def test_a_trusted_answer_never_uses_a_status_outside_4xx_5xx(claimed: int) -> None:
    """``install(app)`` (trusted clients): a received 2xx/3xx status is not used either."""
    client = app_calling_upstream(503, remote_problem(claimed), raise_for_status=False)
    response = client.get("/")
    assert response.status_code == 503
    assert response.json()["status"] == 503


def test_a_trusted_answer_keeps_a_received_error_status() -> None:
    """Outside public mode a received 4xx/5xx is the other party's own account: kept."""
    client = app_calling_upstream(503, remote_problem(529), raise_for_status=False)
    assert client.get("/").status_code == 529


@pytest.mark.parametrize("public", [True, False])
def test_an_error_the_harness_built_keeps_its_error_status(public: bool) -> None:
    """A harness-built error with a 4xx/5xx ``status`` keeps it, in public mode too; one with
    a status outside 400-599 gets the registry's."""
    built = class_for_code(REMOTE_CODE)("Upstream is down.", status=507)
    assert app_raising(built, catch_all=True, public=public).get("/").status_code == 507
    odd = class_for_code(REMOTE_CODE)("Upstream is down.", status=200)
    response = app_raising(odd, catch_all=True, public=public).get("/")
    assert response.status_code == 503
    assert response.json()["status"] == 503


@pytest.mark.parametrize("status", [200, 204, 304, 399, 600, 0])
def test_to_http_refuses_an_explicit_status_outside_4xx_5xx(status: int) -> None:
    err = class_for_code(REMOTE_CODE)()
    with pytest.raises(ValueError, match="4xx or 5xx"):
        to_http(err, status=status)
    assert to_http(err, status=599)[0] == 599


def test_a_received_objects_status_through_to_http_directly() -> None:
    """The rule in ``to_http`` itself: ``from_json`` marks the object untrusted."""
    received = HarnessError.from_json(remote_problem(200))
    assert received.untrusted
    assert to_http(received)[0] == 503
    assert to_http(received, public=True)[0] == 503
    kept = HarnessError.from_json(remote_problem(529))
    assert (to_http(kept)[0], to_http(kept, public=True)[0]) == (529, 503)
