"""pydantic ValidationError / JSONDecodeError are the model's only when a framework or SDK was
parsing model output (its frames in the traceback); from the user's own code they are not."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langchain_core")

from langchain_core.utils.json import parse_json_markdown
from pydantic import BaseModel

from normalize_errors import normalize

from ..support import raised, valid


class Person(BaseModel):
    age: int


def test_the_users_own_parsing_errors_are_internal() -> None:
    """json.loads and model_validate in user code: harness.internal_error."""
    assert normalize(raised(lambda: json.loads("{bad"))).code == "harness.internal_error"
    assert normalize(raised(lambda: Person.model_validate({}))).code == "harness.internal_error"


def test_a_framework_parsing_model_output_makes_it_an_output_error() -> None:
    """LangChain's JSON helper on a model's reply: output.malformed with feedback."""
    exc = raised(lambda: parse_json_markdown("not json at all"))
    assert isinstance(exc, json.JSONDecodeError)
    err = valid(normalize(exc))
    assert err.code == "output.malformed"
    assert "not valid JSON" in (err.model_feedback or "")


def test_a_json_error_from_an_http_body_under_a_framework_is_not_the_models() -> None:
    """httpx's Response.json() on a non-JSON body, called from LangChain code: not output."""
    from langchain_core.runnables import RunnableLambda

    from normalize_errors._wrapping._replay_calls import http_library

    http = http_library("openai")
    response = http.Response(200, content=b"<html>gateway</html>")
    exc = raised(lambda: RunnableLambda(lambda _: response.json()).invoke(None))
    assert isinstance(exc, json.JSONDecodeError)
    assert normalize(exc).code == "harness.internal_error"


class Meeting(BaseModel):
    date: str
    attendees: int


def test_output_that_is_not_json_at_all_is_malformed_not_a_schema_violation() -> None:
    """pydantic's ``model_validate_json`` on a reply that is no JSON: every error is
    ``json_invalid``, so the output is malformed (its shape was never checked)."""
    from pydantic import ValidationError

    from normalize_errors.frameworks._common import output_error

    exc = raised(lambda: Meeting.model_validate_json('{"date": "2026-11-04", '))
    assert isinstance(exc, ValidationError)
    err = output_error(exc)
    assert err is not None
    assert valid(err).code == "output.malformed"
    assert err.location == {"pointer": ""}
    assert (err.model_feedback or "").startswith("The output did not validate:\n/: Invalid JSON")


def test_several_validation_errors_are_one_cause_each() -> None:
    """Two fields wrong: ``output.schema_violation`` with one cause per field (each with its
    pointer), feedback listing both, and no single pointer on the whole."""
    from normalize_errors.frameworks._common import output_error

    exc = raised(lambda: Meeting.model_validate({"date": 4, "attendees": "many"}))
    err = output_error(exc, tool_name="book")
    assert err is not None
    assert valid(err).code == "output.schema_violation"
    assert err.detail == "2 validation error(s) for Meeting"
    assert err.location == {"tool_name": "book"}
    assert [c.location for c in err.causes] == [
        {"tool_name": "book", "pointer": "/date"},
        {"tool_name": "book", "pointer": "/attendees"},
    ]
    feedback = (err.model_feedback or "").splitlines()
    assert feedback[0] == "The output did not validate:"
    assert [line.split(":")[0] for line in feedback[1:]] == ["/date", "/attendees"]


def test_a_validation_error_whose_errors_cannot_be_listed() -> None:
    """A hostile ``ValidationError`` (by name) whose ``errors()`` raises: still a schema
    violation, with no causes and no feedback rather than a crash."""
    from normalize_errors.frameworks._common import output_error

    class ValidationError(ValueError):
        title = "Reply"

        def errors(self, **kwargs: object) -> list[dict[str, object]]:
            raise RuntimeError("broken")

    err = output_error(ValidationError("x"))
    assert err is not None
    assert valid(err).code == "output.schema_violation"
    assert (err.detail, err.causes, err.model_feedback) == (
        "0 validation error(s) for Reply",
        [],
        None,
    )
    assert err.upstream["errors"] == 0
