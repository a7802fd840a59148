"""Issue 22, finding 7: one rule says which names are secret (``secret_name``), and pickles,
``sanitize``, ``redact`` and the recorder all follow it.

An Azure API Management subscription key (``Ocp-Apim-Subscription-Key``, 32 hex digits), an
Azure Functions key or a Portkey virtual key in a request header used to survive ``pickle``
and ``sanitize``; the rate-limit headers that mention tokens are vendor facts and are kept.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
import vcr
from hypothesis import given, settings
from hypothesis import strategies as st

from normalize_errors import HarnessError, normalize, redact
from normalize_errors._base._redact import REDACTED, secret_name
from normalize_errors._base._safe_copy import sanitize
from normalize_errors._model._pickling import scrub
from normalize_errors._wrapping import _replay_calls
from normalize_errors.replay import load, shipped

from ..support import examples
from . import shapes
from .strategies import names

# Made up, of the vendors' formats (32 hex digits; Portkey's virtual keys are names+suffix).
HEX_KEY = "3f9c0a7d5b1e4c2f8a6d0b9e7c1f2a4d"

SECRET = [
    "Ocp-Apim-Subscription-Key",
    "ocp-apim-subscription-key",
    "X-Functions-Key",
    "x-portkey-virtual-key",
    "x-portkey-api-key",
    "X-Amz-Signature",
    "X-Amz-Security-Token",
    "X-Amz-Credential",
    "client_secret",
    "password",
    "subscription-key",
    "api-key",
    "X-API-KEY",
    "x-goog-api-key",
    "Authorization",
    "Proxy-Authorization",
    "Cookie",
    "Set-Cookie",
    "accessToken",
    "refresh_token",
    "XFunctionsKey",
    "AWSSecretAccessKey",
    "credentials",
    "x-auth",
    "key",
    "token",
    "sig",
]
KEPT = [
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-limit-tokens",
    "x-ratelimit-reset-tokens",
    "anthropic-ratelimit-input-tokens-remaining",
    "anthropic-ratelimit-output-tokens-reset",
    "anthropic-ratelimit-tokens-limit",
    "openai-processing-ms",
    "retry-after",
    "retry-after-ms",
    "request-id",
    "x-request-id",
    "apim-request-id",
    "x-should-retry",
    "max_tokens",
    "input_tokens",
    "promptTokenCount",
    "token_count",
    "pageToken",
    "nextPageToken",
    "monkey",
    "keyboard",
    "author",
]


@pytest.mark.parametrize("name", SECRET)
def test_secret_names(name: str) -> None:
    assert secret_name(name)
    if not name.isalpha() or name.islower():  # camelCase needs its case to show its parts
        assert secret_name(name.lower())
    assert secret_name(f" {name} ")
    assert secret_name(name.encode("ascii"))


@pytest.mark.parametrize("name", KEPT)
def test_names_kept_as_vendor_facts(name: str) -> None:
    assert not secret_name(name)
    assert sanitize({name: "42"}) == {name: "42"}
    assert sanitize([(name, "42")]) == [[name, "42"]]


@pytest.mark.parametrize("name", SECRET)
def test_sanitize_and_scrub_drop_every_secret_named_value(name: str) -> None:
    assert sanitize({name: HEX_KEY}) == {name: REDACTED}
    assert sanitize({"headers": [(name, HEX_KEY)]}) == {"headers": [[name, REDACTED]]}
    assert HEX_KEY not in repr(scrub({name: HEX_KEY}))
    assert HEX_KEY not in repr(scrub([name, HEX_KEY]))


@pytest.mark.parametrize(
    "name", ["Ocp-Apim-Subscription-Key", "X-Functions-Key", "x-portkey-virtual-key"]
)
def test_written_name_value_is_redacted(name: str) -> None:
    """The text rule agrees: ``name: value`` and ``name=value``."""
    for text in (f"{name}: {HEX_KEY}", f"{name}={HEX_KEY}", f'{{"{name}": "{HEX_KEY}"}}'):
        assert HEX_KEY not in redact(text), text


def _error_with_header(name: str) -> BaseException:
    """The exception httpx raises for a recorded 429 (real client, shipped cassette), its
    request carrying ``name: HEX_KEY``."""
    scenario = load(shipped() / "http/groq_rate_limit_429.yaml")

    def prepare(client: Any) -> Any:
        client.headers[name] = HEX_KEY
        return client

    recorder = vcr.VCR(record_mode="none", match_on=("method", "scheme", "host", "path"))
    with recorder.use_cassette(str(scenario.path)):
        result = _replay_calls.call(
            "http",
            scenario.call,
            stream=scenario.stream,
            base_url=scenario.base_url,
            url=scenario.url,
            api_key="",
            request=dict(scenario.request),
            client=scenario.client,
            prepare=prepare,
        )
        try:
            result.raise_for_status()
        except Exception as exc:
            return exc
    raise AssertionError("no exception")


@pytest.mark.parametrize(
    "name", ["Ocp-Apim-Subscription-Key", "X-Functions-Key", "x-portkey-virtual-key"]
)
def test_a_secret_named_request_header_never_reaches_a_pickle(name: str) -> None:
    exc = _error_with_header(name)
    live = exc.request  # type: ignore[attr-defined]
    assert live.headers[name] == HEX_KEY, "the key was sent"
    err = normalize(exc)
    assert isinstance(err, HarnessError)
    data = pickle.dumps(err)
    assert HEX_KEY.encode() not in data
    assert live.headers[name] == HEX_KEY  # the user's own object is unchanged
    again = pickle.loads(data)
    assert again.__cause__.request.headers[name] == REDACTED
    assert HEX_KEY not in json.dumps(sanitize(dict(live.headers)))


# -- issue 36, item 2: every name secret_name accepts is redacted in text too -----------------

VALUE = "Zx8fQ2mN4pL6rT0v"
"""A value of no key format: only the name before it can say it is secret."""

CAMEL = [
    "SecretAccessKey",  # AWS STS / boto3 credentials
    "SessionToken",
    "sessionToken",  # AWS SDK for JavaScript, Cognito
    "AccountKey",  # Azure Storage connection strings
    "SharedAccessKey",  # Azure Service Bus / Event Hubs connection strings
    "SharedAccessSignature",
    "clientSecret",
    "privateKey",
    "apiKey",
    "xApiKey",
    "aws_secret_access_key",
    "AWS_SESSION_TOKEN",
    "passphrase",
]
KEPT_IN_TEXT = [
    "pageToken",
    "nextPageToken",
    "nextToken",
    "page_token",
    "max_tokens",
    "input_tokens",
    "promptTokenCount",
    "token_count",
    "tokenizer",
    "SharedAccessKeyName",
    "AccountName",
    "EndpointSuffix",
    "x-ratelimit-remaining-tokens",
    "private_key_id",
    # an AWS access key id names the key, it does not open anything alone; its AKIA/ASIA
    # values are redacted by their shape all the same (test below)
    "AccessKeyId",
]


def _forms(name: str, value: str = VALUE) -> dict[str, str]:
    """A value written after ``name`` the ways text carries it."""
    return {
        "json": json.dumps({name: value, "user": "bob"}),
        "repr": repr({name: value, "user": "bob"}),
        "escaped json": json.dumps(json.dumps({name: value})),
        "name=value": f"{name}={value} user=bob",
        "name: value": f"{name}: {value}\nuser: bob",
        "connection string": f"Endpoint=sb://x/;{name}={value};EntityPath=q",
        "query": f"https://host/path?user=bob&{name}={value}&x=1",
    }


PROSE = ["key", "token", "sig", "signature", "credential", "credentials", "auth", "session"]


@pytest.mark.parametrize("name", sorted({*SECRET, *CAMEL} - set(PROSE)))
def test_every_secret_name_loses_its_value_in_text(name: str) -> None:
    """One rule: a name ``secret_name`` accepts loses its value in JSON, a repr, escaped JSON,
    ``name=value``, ``name: value``, a ``;``-separated connection string and a query; what
    follows the value stays (but after a header whose whole line is its value)."""
    assert secret_name(name)
    whole_line = name.lower().endswith(("authorization", "cookie"))
    for form, text in _forms(name).items():
        out = redact(text)
        assert VALUE not in out, (form, out)
        assert "bob" in out or whole_line or form in ("escaped json", "connection string")


@pytest.mark.parametrize("name", PROSE)
def test_a_bare_word_before_a_colon_is_prose_unless_quoted(name: str) -> None:
    """The secret names that sentences use as words ("Unexpected token: foo", "the key: value
    pairs") lose their value as fields (``key=``, ``"key": ``, ``key: "..."``), not in prose."""
    assert secret_name(name)
    for form, text in _forms(name).items():
        assert (VALUE in redact(text)) is (form == "name: value"), form
    assert VALUE not in redact(f'{name}: "{VALUE}"')
    assert redact("Unexpected token: foo") == "Unexpected token: foo"


@pytest.mark.parametrize("name", KEPT_IN_TEXT)
def test_names_that_only_look_secret_keep_their_value_in_text(name: str) -> None:
    assert not secret_name(name)
    for form, text in _forms(name).items():
        assert redact(text) == text, form


def test_an_access_key_id_is_kept_by_name_and_redacted_by_shape() -> None:
    """``AccessKeyId`` names a key without opening anything (AWS prints it in CloudTrail):
    not a secret name. Its values (``AKIA``/``ASIA`` and 16 characters) are redacted as a key
    format wherever they stand."""
    assert redact('{"AccessKeyId": "internal-id-42"}') == '{"AccessKeyId": "internal-id-42"}'
    aws = shapes.AWS_CREDENTIALS["AccessKeyId"]
    assert redact(f'{{"AccessKeyId": "{aws}"}}') == '{"AccessKeyId": "[REDACTED]"}'


def _aws_texts() -> dict[str, str]:
    return {
        "aws sts get-session-token": shapes.aws_cli_output(),
        "boto3's credentials, printed": shapes.aws_credentials_repr(),
        "as one line of JSON": json.dumps(shapes.AWS_CREDENTIALS),
        "as environment variables": "AWS_ACCESS_KEY_ID={AccessKeyId}\n"
        "AWS_SECRET_ACCESS_KEY={SecretAccessKey}\nAWS_SESSION_TOKEN={SessionToken}\n".format(
            **shapes.AWS_CREDENTIALS
        ),
    }


@pytest.mark.parametrize("form", sorted(_aws_texts()))
def test_aws_temporary_credentials_lose_their_secrets(form: str) -> None:
    out = redact(_aws_texts()[form])
    for secret in (*shapes.AWS_SECRETS, shapes.AWS_CREDENTIALS["AccessKeyId"]):
        assert secret not in out, out
        assert secret[8:24] not in out, out
    assert ("2020" in out) is ("2020" in _aws_texts()[form])  # the expiration is no secret


AZURE = {
    "storage connection string": (shapes.STORAGE_CONNECTION, shapes.STORAGE_KEY),
    "emulator connection string": (shapes.EMULATOR_CONNECTION, shapes.AZURITE_KEY),
    "connection string with a SAS": (shapes.SAS_CONNECTION, shapes.SAS_SIG),
    "blob URL with a SAS": (shapes.SAS_URL, shapes.SAS_URL_SIG),
    "Service Bus connection string": (shapes.SERVICE_BUS_CONNECTION, shapes.SERVICE_BUS_KEY),
    "Service Bus SAS token": (shapes.SERVICE_BUS_TOKEN, shapes.SERVICE_BUS_SIG),
}


@pytest.mark.parametrize("form", sorted(AZURE))
def test_azure_connection_strings_and_signatures_lose_their_keys(form: str) -> None:
    """The key or signature goes; the names that say where to connect stay."""
    text, secret = AZURE[form]
    for shown_as in (text, json.dumps({"connection": text}), repr({"conn": text})):
        out = redact(shown_as)
        assert secret not in out, out
        assert secret[:12] not in out, out
        for kept in ("AccountName=", "EndpointSuffix=", "SharedAccessKeyName=Root", "&se="):
            assert (kept in out) is (kept in shown_as), kept


# -- the text rule is secret_name: one home ----------------------------------------------------


def test_every_secret_name_ends_with_a_word_the_text_rule_looks_for() -> None:
    """Every compound name and suffix ends with a part; every part holds a word; the text
    rule's endings are derived from those two sets, so no name can be secret as a mapping key
    and pass in text."""
    from normalize_errors._base import _secret_names

    parts = _secret_names._SECRET_PARTS
    for name in (*_secret_names._SECRET_NAMES, *_secret_names._SECRET_SUFFIXES):
        assert name.endswith(tuple(parts)), name
    for part in parts:
        assert any(
            part.endswith(word + tail)
            for word, tails in _secret_names.ENDINGS.items()
            for tail in tails
        ), part


@settings(max_examples=examples(300), deadline=None)
@given(names(), st.sampled_from(["json", "repr", "escaped json", "name=value", "name: value"]))
def test_text_redacts_exactly_the_names_secret_name_accepts(name: str, form: str) -> None:
    """Property: for a generated name, the value after it in text is redacted exactly when
    ``secret_name`` says the name is secret (a bare prose word before an unquoted colon
    aside, as above)."""
    from normalize_errors._base._redact import _PROSE

    secret = secret_name(name) and not (form == "name: value" and name.lower() in _PROSE)
    assert (VALUE not in redact(_forms(name)[form])) is secret
