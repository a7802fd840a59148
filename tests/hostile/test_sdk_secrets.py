"""Issue 36 through the real SDKs: an openai, anthropic or google-genai error whose body carries
a service-account key file, a quoted password or cloud credentials (constructed bodies: a
gateway that echoes the configuration it could not use) gives a harness error whose ``str``,
``repr``, ``to_json()``, ``args``, pickle and log lines hold none of it; the SDK's own message
(the control) does."""

from __future__ import annotations

import json

import pytest

from . import shapes
from .sdk_errors import SDK_ERRORS
from .shown import harness_error, shown


def _left(lines: list[str], out: str) -> list[str]:
    """The lines of a key body (or 16-character pieces of them) still in ``out``."""
    return [line for line in lines if line in out or line[16:32] in out]


@pytest.mark.parametrize("sdk", sorted(SDK_ERRORS))
def test_an_sdk_error_echoing_a_service_account_leaks_no_key(sdk: str) -> None:
    """A gateway that echoes the Vertex credentials it could not use (constructed body): the
    SDK's exception holds the key file, twice escaped inside its repr of the body; the
    harness error, its JSON and the log lines (the traceback prints the vendor's message)
    hold no line of the key."""
    info = shapes.service_account()
    body = {
        "error": {
            "message": f"Unable to load vertex credentials: {json.dumps(info)}",
            "type": "invalid_request_error",
        }
    }
    vendor = SDK_ERRORS[sdk](400, body)
    assert shapes.SERVICE_ACCOUNT_LINES[5] in str(vendor)  # the control: the SDK's text has it
    for name, out in shown(harness_error(vendor)).items():
        assert _left(shapes.SERVICE_ACCOUNT_LINES, out) == [], (name, out[-400:])
        assert "[REDACTED]" in out, name


@pytest.mark.parametrize("sdk", sorted(SDK_ERRORS))
def test_an_sdk_error_echoing_a_quoted_password_leaks_none_of_it(sdk: str) -> None:
    """A proxy that repeats the connection settings it was given (constructed body)."""
    settings = {"user": "svc", "password": "correct horse battery staple", "note": "a;b"}
    body = {"error": {"message": f"could not connect with {json.dumps(settings)}"}}
    vendor = SDK_ERRORS[sdk](502, body)
    for name, out in shown(harness_error(vendor)).items():
        for word in ("correct", "horse", "battery", "staple"):
            assert word not in out, (name, out[-300:])


@pytest.mark.parametrize("sdk", sorted(SDK_ERRORS))
def test_sdk_errors_echoing_cloud_credentials_leak_none(sdk: str) -> None:
    """A gateway that echoes the AWS credentials and the Azure connection strings it was
    configured with (constructed bodies), through each real SDK's exception: no secret in
    the harness error, its JSON, a pickle or the log lines."""
    body = {
        "error": {
            "message": f"bedrock call failed with {json.dumps(shapes.AWS_CREDENTIALS)}; "
            f"queue: {shapes.SERVICE_BUS_CONNECTION}; blobs: {shapes.STORAGE_CONNECTION}",
            "type": "api_error",
        }
    }
    vendor = SDK_ERRORS[sdk](500, body)
    assert shapes.SERVICE_BUS_KEY in str(vendor)  # the control: the SDK's text has them
    secrets = (*shapes.AWS_SECRETS, shapes.SERVICE_BUS_KEY, shapes.STORAGE_KEY)
    for name, out in shown(harness_error(vendor)).items():
        for secret in secrets:
            assert secret[:16] not in out, (name, secret)
