"""``model_output=True``: the caller says a pydantic or JSON error came from parsing a model's
text (issue 25, item 4). Without it, such an error from the caller's own code stays
``harness.internal_error``; the library keeps no memory of model outputs to guess it."""

from __future__ import annotations

import asyncio
import json

import pytest

from normalize_errors import HarnessError, normalize, normalized

pytest.importorskip("pydantic")

from pydantic import BaseModel


class Weather(BaseModel):
    city: str
    celsius: float


def parse_failure(text: str) -> BaseException:
    try:
        Weather.model_validate_json(text)
    except Exception as exc:
        return exc
    raise AssertionError("the text parsed")


def test_a_validation_error_of_model_text_is_a_schema_violation_with_pointers() -> None:
    exc = parse_failure('{"city": "Paris", "celsius": "warm", "extra": 1}')
    assert normalize(exc).code == "harness.internal_error"
    err = normalize(exc, model_output=True)
    assert err.code == "output.schema_violation"
    assert err.__cause__ is exc
    assert err.model_recoverable is True
    assert err.location == {"pointer": "/celsius"}  # one error: its pointer on the error itself
    assert err.model_feedback is not None
    assert "/celsius" in err.model_feedback


def test_text_that_is_no_json_is_malformed_output() -> None:
    exc = parse_failure("Sure! Here is the weather: sunny")
    assert normalize(exc, model_output=True).code == "output.malformed"
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads('{"city": "Paris",')
    err = normalize(caught.value, model_output=True)
    assert err.code == "output.malformed"
    assert err.model_feedback
    assert normalize(caught.value).code == "harness.internal_error"


def test_any_other_exception_reads_as_without_the_keyword() -> None:
    for exc in (KeyError("city"), TimeoutError("slow"), ValueError("bad")):
        assert normalize(exc, model_output=True).to_dict() == normalize(exc).to_dict()


def test_normalized_takes_the_keyword_as_context_manager_and_decorator() -> None:
    with pytest.raises(HarnessError) as caught, normalized(model_output=True):
        Weather.model_validate_json('{"city": 3}')
    assert caught.value.code == "output.schema_violation"
    assert sorted(str((c.location or {}).get("pointer")) for c in caught.value.causes) == [
        "/celsius",
        "/city",
    ]

    @normalized(model_output=True)
    async def ask() -> Weather:
        return Weather.model_validate_json("no json")

    with pytest.raises(HarnessError) as awaited:
        asyncio.run(ask())
    assert awaited.value.code == "output.malformed"

    @normalized
    def own_data() -> Weather:
        return Weather.model_validate_json('{"city": 3}')

    with pytest.raises(HarnessError) as plain:
        own_data()
    assert plain.value.code == "harness.internal_error"
