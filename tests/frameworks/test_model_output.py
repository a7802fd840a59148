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

    from normalize_errors.providers._calls import http_library

    http = http_library("openai")
    response = http.Response(200, content=b"<html>gateway</html>")
    exc = raised(lambda: RunnableLambda(lambda _: response.json()).invoke(None))
    assert isinstance(exc, json.JSONDecodeError)
    assert normalize(exc).code == "harness.internal_error"
