"""The HTTP binding (section 6.1) and the Starlette/FastAPI handler."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from normalize_errors import (
    CODES,
    HarnessError,
    OutputRetriesExhaustedError,
    UpstreamRateLimitedError,
    class_for_code,
)
from normalize_errors.bindings.http import PROBLEM_JSON, read_problem, to_http
from normalize_errors.bindings.starlette import install


@pytest.mark.parametrize("code", list(CODES))
def test_every_code_renders_with_its_recommended_status(code: str) -> None:
    """Status from table 3, problem+json, status member equal to the HTTP status."""
    status, headers, body = to_http(class_for_code(code)("It failed."))
    assert status == CODES[code].http_status
    assert headers["content-type"] == PROBLEM_JSON
    obj = json.loads(body)
    assert obj["status"] == status
    assert obj["code"] == code
    assert "retry-after" not in headers


@pytest.mark.parametrize(("retry_after", "header"), [(20, "20"), (1.2, "2"), (0, "0")])
def test_retry_after_header_agrees_with_the_member(retry_after: float, header: str) -> None:
    """The header is whole seconds rounded up, so a client never retries early."""
    status, headers, body = to_http(UpstreamRateLimitedError(retry_after=retry_after))
    assert status == 429
    assert headers["retry-after"] == header
    assert json.loads(body)["retry_after"] == retry_after
    back = read_problem(status, headers, body)
    assert back is not None
    assert back.retry_after == retry_after


def test_round_trip_through_http() -> None:
    """What to_http writes, read_problem reads back member for member."""
    err = OutputRetriesExhaustedError(
        "Gave up.",
        attempts=3,
        max_attempts=3,
        causes=[class_for_code("output.schema_violation")(model_feedback="Use a number.")],
    )
    status, headers, body = to_http(err)
    back = read_problem(status, headers, body)
    assert isinstance(back, OutputRetriesExhaustedError)
    assert back.to_dict() == {**err.to_dict(), "status": 422}
    assert back.untrusted


def test_retry_after_header_fills_a_missing_member() -> None:
    """Delta-seconds, HTTP-date and retry-after-ms headers all work."""
    body = json.dumps(
        {"type": "https://agenterrors.org/problems/harness-error", "code": "upstream.overloaded"}
    )
    seconds = read_problem(503, {"Retry-After": "7"}, body)
    assert seconds is not None
    assert seconds.retry_after == 7
    millis = read_problem(503, {"retry-after-ms": "1500", "retry-after": "9"}, body)
    assert millis is not None
    assert millis.retry_after == 1.5
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    dated = read_problem(503, {"Retry-After": later}, body)
    assert dated is not None
    assert dated.retry_after is not None
    assert 100 < dated.retry_after <= 120


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"<html>502</html>",
        b'{"error": {"message": "x"}}',
        b'{"type": "https://agenterrors.org/problems/harness-error", "code": 3}',
        b"\xff\xfe",
    ],
)
def test_non_harness_bodies_give_none(body: bytes) -> None:
    """Anything that is not a valid harness error object is left to from_response."""
    assert read_problem(502, {}, body) is None


def failing_app(exc: Exception, *, catch_all: bool = False) -> TestClient:
    """A Starlette app whose one route raises ``exc``."""

    async def route(request: object) -> None:
        raise exc

    app = Starlette(routes=[Route("/", route)])
    install(app, catch_all=catch_all)
    return TestClient(app, raise_server_exceptions=False)


def test_starlette_handler_returns_problem_json() -> None:
    """One line of set-up; the response is the error, with Retry-After."""
    client = failing_app(UpstreamRateLimitedError("Slow down.", retry_after=3))
    response = client.get("/")
    assert response.status_code == 429
    assert response.headers["content-type"] == PROBLEM_JSON
    assert response.headers["retry-after"] == "3"
    err = HarnessError.from_json(response.content)
    assert isinstance(err, UpstreamRateLimitedError)
    assert err.detail == "Slow down."


def test_starlette_catch_all_hides_the_stack_trace() -> None:
    """With catch_all, a bug answers as harness.internal_error with status 500."""
    response = failing_app(RuntimeError("boom at /srv/app.py line 3"), catch_all=True).get("/")
    assert response.status_code == 500
    obj = response.json()
    assert obj["code"] == "harness.internal_error"
    assert "Traceback" not in response.text
    without = failing_app(RuntimeError("boom")).get("/")
    assert without.status_code == 500
    assert without.headers["content-type"].startswith("text/plain")


def test_fastapi_app_answers_with_problem_json() -> None:
    """FastAPI runs on Starlette: the same one-line install works."""
    from fastapi import FastAPI

    app = FastAPI()

    @app.get("/chat")
    async def chat() -> dict[str, str]:
        raise UpstreamRateLimitedError("Upstream is busy.", retry_after=4.2)

    @app.get("/bug")
    async def bug() -> dict[str, str]:
        raise KeyError("secret sk-proj-FAKEkeyFAKEkeyFAKEkeyFAKEkey")  # made up

    install(app, catch_all=True)
    client = TestClient(app, raise_server_exceptions=False)
    busy = client.get("/chat")
    assert (busy.status_code, busy.headers["retry-after"]) == (429, "5")
    assert busy.json()["code"] == "upstream.rate_limited"
    broken = client.get("/bug")
    assert broken.status_code == 500
    assert "sk-proj-FAKEkey" not in broken.text
