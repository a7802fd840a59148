"""Helpers the test modules share."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from importlib import resources
from typing import Any

import jsonschema

from normalize_errors import HarnessError

SCHEMA = json.loads(
    resources.files("normalize_errors").joinpath("schema/harness-error.schema.json").read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def valid(err: Any) -> HarnessError:
    """``err`` after checking that it is a harness error whose problem object is valid.

    Valid means: it validates against the shipped schema, serialises as strict JSON,
    round-trips through ``from_dict`` with its code, and has a finite, non-negative
    ``retry_after`` if any.
    """
    assert isinstance(err, HarnessError), type(err)
    data = err.to_dict()
    VALIDATOR.validate(data)
    json.dumps(data, allow_nan=False)
    assert HarnessError.from_dict(data).code == err.code
    assert err.retry_after is None or (math.isfinite(err.retry_after) and err.retry_after >= 0)
    return err


def raised(call: Callable[[], object]) -> BaseException:
    """The exception ``call`` raises (the test fails if it raises none)."""
    try:
        call()
    except Exception as exc:
        return exc
    raise AssertionError("no exception was raised")


def recorded(provider: str, name: str) -> tuple[int, dict[str, str], bytes]:
    """The (status, headers, body) a shipped cassette recorded, to serve from memory."""
    import yaml

    from normalize_errors.replay import shipped

    data = yaml.safe_load((shipped() / provider / f"{name}.yaml").read_text(encoding="utf-8"))
    response = data["interactions"][0]["response"]
    headers = {k: v[0] if isinstance(v, list) else v for k, v in response["headers"].items()}
    return response["status"]["code"], headers, response["body"]["string"].encode("utf-8")


def is_instance(obj: object, cls: type) -> bool:
    """``isinstance`` that type checkers do not narrow with.

    A drop-in error is an instance of a harness class and of a vendor class at once; mypy
    believes no class can inherit both (their ``__init__`` signatures differ) and would call
    the code after such a check unreachable.
    """
    return isinstance(obj, cls)


OPTIONAL_PROVIDERS: dict[str, str] = {"cohere": "cohere"}
"""Cassette providers whose SDK only some environments install (see .ci/run)."""


def needed(scenario: Any) -> None:
    """Skip, naming the SDK, when a replay scenario's SDK is not installed here.

    The native SDKs of OpenAI-compatible vendors (``metadata.sdk``) and Cohere's are installed
    in the newest environments only, and fireworks-ai in one of its own (.ci/run says why).
    """
    import pytest

    from normalize_errors.providers._calls import SDKS

    if scenario.sdk is not None:
        pytest.importorskip(SDKS[scenario.sdk][0], reason=f"needs the {scenario.sdk} SDK")
    elif scenario.provider in OPTIONAL_PROVIDERS:
        module = OPTIONAL_PROVIDERS[scenario.provider]
        pytest.importorskip(module, reason=f"needs the {module} SDK")
