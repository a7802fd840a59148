"""Issue 8, leaks: no credential leaves through a pickle, a note, a cut or a glued key.

The vendor exceptions come from the real SDK clients replaying shipped cassettes, with a
planted key in the client's ``api_key``, in an ``Authorization`` header and in a ``?key=``
query parameter.
"""

from __future__ import annotations

import json
import pickle
import sys
import traceback
from typing import Any

import httpx
import pytest
import vcr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import normalize_errors
from normalize_errors import HarnessError, UpstreamAuthenticationFailedError, normalize, wrap
from normalize_errors._base import _redact as redaction
from normalize_errors._base._http_wire import short
from normalize_errors._base._redact import MARGIN, MAX_REDACT, REDACTED, clip, redact
from normalize_errors._base._safe_copy import sanitize
from normalize_errors._wrapping import _replay_calls
from normalize_errors._wrapping._wrap import typed_error
from normalize_errors.replay import load, shipped

from ..support import examples
from .strategies import planted_secrets

# Planted keys of every recognised format (made up, never issued): format -> key.
KEYS = {
    "openai-proj": "sk-proj-Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHhJjKkLlZzXxCcVvBbNnMm_-q1W2e3R4",
    "openai-svcacct": "sk-svcacct-Z9x8C7v6B5n4M3a2S1d0FfGgHhJjKkLlQqWwEeRrTtYyUuIiOoPp",
    "openai-admin": "sk-admin-Mn0Bv9Cx8Zl7Kj6Hg5Fd4Sa3Qw2Er1TyUiOpAsDfGhJkLzXcVbNm",
    "openai": "sk-T3BlbkFJq9w8e7r6t5y4u3i2o1p0aZsXdCfVgBhNjMk",
    "anthropic": "sk-ant-api03-Wq1Er2Ty3Ui4Op5As6Df7Gh8Jk9Lz0XcVbNmQwErTyUiOpAsDfGhJkLzX-cVbNmAA",
    "openrouter": "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",
    "google": "AIzaSyD4f5G6h7J8k9L0zXcVbNmQwErTyUiOp12",
    "google-other": "AIzaBcD4f5G6h7J8k9L0zXcVbNmQwErTyUiOp12",
    "google-oauth": "ya29.a0AfB_byC1d2E3f4G5h6J7k8L9m0NpQrStUvWxYz",
    "groq": "gsk_Xq7Wd3Lp9Rt2Vb6Nm4Kj8Hg1Fd5Sa0ZcEeYyUuIiOoPpQqWwEeRrTt",
    "xai": "xai-Hs8Kd2Lq7Wp3Zx9Cv4Bn6Mm1Aa5Ss0DdFfGgHhJjKkLlQqWwEeRrTtYyUuIiOoPpAaSsDdFfGgHhJjKkLl",
    "huggingface": "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",
    "aws": "AKIAQ7W2E9R4T6Y1U3I5",
    "aws-session": "ASIAZ8X3C6V1B9N2M4Q7",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkLXVzZXIifQ.Zm9vYmFyYmF6cXV4cXV1eA",
}
GLUED = {  # long, distinctive prefixes: recognised even glued to the text before them
    "openai-proj",
    "openai-svcacct",
    "openai-admin",
    "anthropic",
    "openrouter",
    "google",
    "google-other",  # AIza and exactly 35 key characters, no 40th (issue 22, finding 8)
    "google-oauth",
    "groq",
    "xai",
}
PREFIXES: tuple[str, ...] = ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-ant-api03-", "sk-or-v1-")
PREFIXES += ("sk-", "AIzaSy", "AIza", "ya29.", "gsk_", "xai-", "hf_", "AKIA", "ASIA", "eyJ")


def fragments(key: str, size: int = 8) -> list[str]:
    """Every ``size``-character piece of the key's secret part (its prefix is public)."""
    body = key
    for prefix in PREFIXES:
        if key.startswith(prefix):
            body = key[len(prefix) :]
            break
    return [body[i : i + size] for i in range(len(body) - size + 1)]


def leaks(key: str, out: str | bytes) -> list[str]:
    """The fragments of ``key`` found in ``out`` (empty: nothing recognisable survived)."""
    text = out.decode("latin-1") if isinstance(out, bytes) else out
    text = text.replace("\\n", "").replace("\n", "").replace("\r", "").replace("\\r", "")
    return [piece for piece in fragments(key) if piece in text]


# -- pickles of errors read from the real SDK clients ------------------------------------------

SCENARIOS = {
    "openai": ("openai/invalid_api_key_401", KEYS["openai-proj"]),
    "anthropic": ("anthropic/authentication_401", KEYS["anthropic"]),
    "google": ("google/api_key_invalid_400", KEYS["google"]),
    "http": ("http/groq_rate_limit_429", KEYS["groq"]),
}


def vendor_error(provider: str, wrapped: bool) -> tuple[BaseException, str]:
    """The exception the real client raises (typed when ``wrapped``) and the planted key."""
    name, key = SCENARIOS[provider]
    scenario = load(shipped() / f"{name}.yaml")
    url = scenario.url
    if provider == "http":  # also in the header and the query string
        assert url is not None
        url = f"{url}{'&' if '?' in url else '?'}key={key}"

    def prepare(client: Any) -> Any:
        if provider == "http":
            client.headers["Authorization"] = f"Bearer {key}"
        return wrap(client) if wrapped else client

    # The query is not matched: the planted ?key= is not in the recording.
    recorder = vcr.VCR(record_mode="none", match_on=("method", "scheme", "host", "path"))
    with recorder.use_cassette(str(scenario.path)):
        try:
            result = _replay_calls.call(
                provider,
                scenario.call,
                stream=scenario.stream,
                base_url=scenario.base_url,
                url=url,
                api_key=key,
                request=dict(scenario.request),
                client=scenario.client,
                prepare=prepare,
            )
            result.raise_for_status()  # the http scenario returns the response
        except Exception as exc:
            return exc, key
    raise AssertionError("no exception")


def request_of(exc: BaseException | None) -> Any:
    request = getattr(exc, "request", None)
    if request is None:
        request = getattr(getattr(exc, "response", None), "request", None)
    return request


def credentials_in(request: Any, key: str) -> list[str]:
    """Where ``key`` sits in an httpx request: header names, or ``url``."""
    found = [name for name, value in request.headers.multi_items() if key in value]
    if key in str(request.url):
        found.append("url")
    return found


def scrubs_requests(provider: str) -> bool:
    """Whether the installed SDK keeps no credential on the request an error carries."""
    if provider != "openai":
        return False
    import openai

    major, minor = (int(part) for part in openai.__version__.split(".")[:2])
    return (major, minor) >= (3, 60)


@pytest.mark.parametrize("wrapped", [False, True], ids=["normalize", "wrap"])
@pytest.mark.parametrize("provider", sorted(SCENARIOS))
def test_pickles_hold_no_credential(provider: str, wrapped: bool) -> None:
    """pickle.dumps of the error holds no part of the key; the live objects are untouched."""
    exc, key = vendor_error(provider, wrapped)
    err = exc if wrapped else normalize(exc)
    assert isinstance(err, HarnessError)
    cause = err.problem.__cause__  # the vendor exception (a drop-in's own is its cause)
    live = request_of(cause)
    assert live is not None
    sent = credentials_in(live, key)
    # openai 3.60 and later take the Authorization header off the request they keep on an
    # error; every other client keeps it there, so the pickle below has a key to lose.
    assert sent or scrubs_requests(provider), "the planted key was sent"
    data = pickle.dumps(err)
    assert leaks(key, data) == []
    for text in (str(err), repr(err), err.to_json()):
        assert leaks(key, text) == []
    # The live error is the user's own object: unchanged by pickling.
    assert credentials_in(request_of(err.problem.__cause__), key) == sent
    if wrapped:
        assert credentials_in(request_of(err), key) == sent  # the drop-in's own request, raw
    again = pickle.loads(data)
    assert type(again) is type(err)
    assert again.to_dict() == err.to_dict()
    assert type(again.problem.__cause__) is type(cause)
    for restored in (request_of(again.problem.__cause__), request_of(again) if wrapped else None):
        if restored is not None:
            assert credentials_in(restored, key) == []
            assert str(restored.url).split("?")[0] == str(live.url).split("?")[0]
    response = getattr(again.problem.__cause__, "response", None)
    if isinstance(response, httpx.Response):
        assert response.status_code == getattr(cause, "response").status_code  # noqa: B009
        assert credentials_in(response.request, key) == []


def test_an_unpicklable_vendor_attribute_is_left_out() -> None:
    """Objects scrub cannot make safe are dropped from the pickle, not pickled raw."""
    exc, key = vendor_error("openai", wrapped=True)
    vars(exc)["client_copy"] = type("Client", (), {"api_key": key})()  # a live client
    vars(exc)["note"] = f"api_key={key}"
    data = pickle.dumps(exc)
    assert leaks(key, data) == []
    again = pickle.loads(data)
    assert not hasattr(again, "client_copy")
    assert again.note == f"api_key={REDACTED}"


# -- notes ---------------------------------------------------------------------------------------


def test_notes_copied_onto_drop_ins_are_redacted() -> None:
    """A URL with user:password@ in a note (as requests' InvalidURL has) is redacted."""
    exc = httpx.ConnectError("connection refused")
    exc.add_note("while calling https://alice:hunter2-s3cr3t@proxy.example.com/v1")
    exc.add_note(f"Authorization: Bearer {KEYS['openai']}")
    typed: Any = typed_error(exc)
    assert isinstance(typed, httpx.ConnectError)
    notes = "\n".join(vars(typed)["__notes__"])
    assert "hunter2-s3cr3t" not in notes
    assert leaks(KEYS["openai"], notes) == []
    printed = "".join(traceback.format_exception(typed, chain=False))
    assert "hunter2-s3cr3t" not in printed
    assert "proxy.example.com" in printed  # the redacted note is printed
    assert "hunter2-s3cr3t" in exc.__notes__[0]  # the live vendor exception: raw


def test_userinfo_never_reaches_detail() -> None:
    """An exception whose message holds user:password@ gives a redacted detail."""
    err = normalize(ValueError("Invalid URL 'https://bob:pa55w0rd-xyz@example.com/': bad host"))
    assert "pa55w0rd-xyz" not in (err.detail or "")
    assert "example.com" in (err.detail or "")


# -- the gaps of the review ------------------------------------------------------------------------

SECRET = "Zq9Xw8Cv7Bn6Mm5"  # a value with no key shape: only its context says it is secret

CONTEXTS = [
    f"Authorization: Token {SECRET}",
    f"authorization: Digest username=x, response={SECRET}",
    "Authorization: AWS4-HMAC-SHA256 Credential=AKIAQ7W2E9R4T6Y1U3I5/20250101/us-east-1/"
    f"bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature={SECRET}",
    f"Proxy-Authorization: Basic {SECRET}",
    f"Cookie: theme=dark; session={SECRET}; other=1",
    f"set-cookie: sid={SECRET}; Path=/; HttpOnly",
    f"api_key={SECRET}",
    f"access_token: {SECRET}",
    f"https://example.com/cb#key={SECRET}",
    f"/v1/models;token={SECRET}",
    f"https://alice:{SECRET}@example.com/",
    f"Bearer%20{SECRET}",
    f"Bearer+{SECRET}",
    f"GET /v1?key%3D{SECRET}",
    f'{{"x-api-key": "{SECRET}"}}',
    f'{{\\"Authorization\\": \\"Bearer {SECRET}\\"}}',
    f'"token": "{SECRET}"',
    f"X-Amz-Signature={SECRET}",
    f"client_secret={SECRET}",
    f"password: {SECRET}",
    f"x-goog-api-key:{SECRET}",
    f"refresh_token={SECRET}",
]


@pytest.mark.parametrize("text", CONTEXTS)
def test_credential_contexts(text: str) -> None:
    """Every context form of the review loses its secret value."""
    out = redact(text)
    assert SECRET[:8] not in out, out
    assert REDACTED in out


def test_sigv4_access_key_id_and_escaped_and_encoded_keys() -> None:
    """AKIA ids, JSON-escaped and URL-encoded contexts of keys."""
    for text in [
        f"Credential={KEYS['aws']}/20250101/us-east-1/bedrock/aws4_request",
        f"\\n{KEYS['openai']}",
        f"\\t{KEYS['huggingface']}",
        f"\\u0022{KEYS['openai']}",
        f"Bearer%20{KEYS['openai']}",
        f"key%3D{KEYS['google-other']}",
        f"%22{KEYS['jwt']}%22",
    ]:
        key = next(k for k in KEYS.values() if k in text)
        assert leaks(key, redact(text)) == [], text


def test_mapping_keys_and_header_pairs() -> None:
    """Secret-named mapping keys (any case, spaces, - or _) and (name, value) pairs."""
    out = sanitize(
        {
            "token": "a1",
            "key": "a2",
            "Authorization ": "a3",
            " X-API-KEY": "a4",
            "Access_Token": "a5",
            "client-secret": "a6",
            "headers": [("Authorization", "Bearer a7"), ("x-request-id", "req_1")],
            "raw": [[b"x-api-key", b"a8"]],
            "max_tokens": 5,
            "input_tokens": 7,
        }
    )
    text = json.dumps(out)
    for n in range(1, 9):
        assert f"a{n}" not in text, n
    assert out["max_tokens"] == 5
    assert out["input_tokens"] == 7
    assert out["headers"][1] == ["x-request-id", "req_1"]


@pytest.mark.parametrize("name", sorted(KEYS))
def test_every_key_format_is_recognised(name: str) -> None:
    """Alone, after a space, in quotes; and glued to text before it when distinctive."""
    key = KEYS[name]
    for text in (key, f"key was {key}.", f'"{key}"', f"({key})"):
        assert leaks(key, redact(text)) == [], text
    glued = redact(f"abc{key}")
    if name in GLUED:
        assert leaks(key, glued) == []
    else:  # short or common prefixes keep a word boundary
        assert glued == f"abc{key}"


def test_ordinary_words_are_kept() -> None:
    """Short prefixes need a word start; field names need a separator."""
    for text in [
        "task-abcdefghijklmnopqrstuvwxyz",
        "the basic plan",
        "Unexpected token } in JSON at position 3",
        "Rate limit on tokens per min (TPM): Limit 30000, Used 29000",
        "max_tokens: 4096",
        "the key: value pairs",
        "monkey=1",
        "chf_abcdefghijklmnopqrstuvwxyz0123456",
        "https://api.openai.com/v1/chat/completions",
        "Incorrect API key provided: sk-proj-****************************abcd.",
    ]:
        assert redact(text) == text


@pytest.mark.parametrize("limit", [256, 1024, 2048, 4096])
@pytest.mark.parametrize("name", ["google", "openai-proj", "jwt", "aws", "openai"])
def test_keys_straddling_a_cut_leave_nothing(limit: int, name: str) -> None:
    """Redaction runs before the cut (clip) or the cut avoids keys (short)."""
    key = KEYS[name]
    for offset in range(1, len(key)):
        text = "x " * (limit // 2) + key + " tail"
        start = limit - offset
        text = text[:start] + " " + key + " tail " + "y" * 100
        for out in (clip(text, limit), redact(short(text, limit)), sanitize([text], limit)[0]):
            assert leaks(key, out) == [], (offset, out[-60:])


def test_no_cache_holds_raw_text() -> None:
    """The redaction memo and the hashes of clean texts are gone: no module-level container
    keeps a text it saw, or anything made from one."""
    key = KEYS["anthropic"]
    redact(f"Incorrect key {key}")
    sanitize({"message": f"Incorrect key {key}"})
    redact("a clean message, seen twice")
    redact("a clean message, seen twice")
    assert not hasattr(redaction, "_MEMO")
    assert not hasattr(redaction, "_CLEAN")
    for value in vars(redaction).values():
        if isinstance(value, (dict, list, set)):
            assert key not in repr(value)
            assert "a clean message" not in repr(value)
            assert hash("a clean message, seen twice") not in value


# -- property: a planted key never survives ------------------------------------------------------


def _escape(key: str) -> str:
    return json.dumps(key)[1:-1]


def _wrap_at(text: str, width: int, newline: str) -> str:
    return newline.join(text[i : i + width] for i in range(0, len(text), width))


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, str]:
    """(text, key): a key of any format inside random text, in one of the hostile shapes."""
    name = draw(st.sampled_from(sorted(KEYS)))
    key = KEYS[name]
    alphabet = st.characters(codec="utf-8")
    before = draw(st.text(alphabet, max_size=80))
    after = draw(st.text(alphabet, max_size=80))
    shapes = ["plain", "escaped", "encoded", "wrap64", "wrap76", "escwrap", "cut"]
    if name in GLUED:
        shapes.append("glued")
    shape = draw(st.sampled_from(shapes))
    sep = " "
    if shape == "glued":
        before, sep = draw(st.text("abcxyz019\\\"'%", min_size=1, max_size=5)), ""
    elif shape == "escaped":
        sep = draw(st.sampled_from(["\\n", "\\t", '\\"', "\\u0020", "\\r\\n"]))
    elif shape == "encoded":
        sep = draw(st.sampled_from(["%20", "%3D", "%22", "Bearer%20", "key%3D", "+"]))
    text = f"{before}{sep}{key} {after}"
    if shape in ("wrap64", "wrap76", "escwrap"):
        width = 76 if shape == "wrap76" else 64
        text = _wrap_at(text, width, "\\n" if shape == "escwrap" else "\n")
    if shape == "cut":
        limit = draw(st.sampled_from([1024, 2048, 4096]))
        start = limit - draw(st.integers(1, len(key) - 1))
        text = "w " * (start // 2) + " " * (start % 2) + key + " " + after + "z" * 200
    return text, key


def outputs(text: str) -> list[str | bytes]:
    """Everything an error made from ``text`` lets out."""
    err = UpstreamAuthenticationFailedError(
        text,
        model_feedback=text,
        upstream={"message": text, "body": [text], "headers": {"Authorization": text}},
        extensions={"x-note": text},
    )
    return [str(err), repr(err), err.to_json(), pickle.dumps(err), str(err.args)]


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planted())
def test_planted_keys_never_survive(case: tuple[str, str]) -> None:
    """Property: glued, escaped, URL-encoded, hard-wrapped or straddling a cut, a key of
    every format never survives in str, repr, to_json, args or pickle."""
    text, key = case
    for out in outputs(text):
        assert leaks(key, out) == [], out[-300:]


@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(planted_secrets())
def test_planted_fields_and_pem_keys_never_survive(case: tuple[str, list[str]]) -> None:
    """Property (issue 36): a value quoted after a secret name of any spelling (CamelCase,
    kebab, dotted...), with blanks, ``;``, escaped quotes and escaped line breaks in it; an
    unquoted one in ``name=value``, ``name: value`` or a connection string; a PEM private key
    of any label and line break, whole or cut short; in random text or straddling a cut:
    no piece of it survives in str, repr, to_json, args or pickle."""
    text, secrets = case
    for out in outputs(text):
        shown = out.decode("latin-1") if isinstance(out, bytes) else out
        for secret in secrets:
            assert secret not in shown, (secret, shown[-300:])


# -- linear time: what reaches the patterns is bounded -------------------------------------------


class Recorder:
    """Stands in for a compiled pattern and records the length of every text it scans."""

    def __init__(self, pattern: Any, seen: list[int]) -> None:
        self.pattern = pattern
        self.seen = seen

    def finditer(self, text: str) -> Any:
        self.seen.append(len(text))
        return self.pattern.finditer(text)

    def sub(self, replacement: str, text: str) -> str:
        self.seen.append(len(text))
        result: str = self.pattern.sub(replacement, text)
        return result

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Any:
        self.seen.append(min(endpos, len(text)) - pos)
        return self.pattern.search(text, pos, endpos)

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Any:
        self.seen.append(min(endpos, len(text)) - pos)
        return self.pattern.match(text, pos, endpos)


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the texts every redaction pattern scans during the test."""
    seen: list[int] = []
    lazies = [pattern for _, pattern, _, _ in redaction.PATTERNS]
    for lazy in lazies:
        monkeypatch.setattr(lazy, "_compiled", Recorder(lazy.compiled(), seen))
    return seen


def test_every_pattern_is_listed_with_its_bound() -> None:
    """PATTERNS names every pattern of the module, with its input bound and why it is linear."""
    from normalize_errors._base._lazy import LazyPattern

    def patterns(value: Any) -> set[int]:
        if isinstance(value, LazyPattern):
            return {id(value)}
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, (tuple, list)):
            return set().union(*map(patterns, value)) if value else set()
        return set()

    found = patterns([value for name, value in vars(redaction).items() if name != "PATTERNS"])
    listed = {id(pattern) for _, pattern, _, _ in redaction.PATTERNS}
    assert found == listed
    for name, _, bound, why in redaction.PATTERNS:
        assert "MAX_REDACT" in bound, name
        assert why, name


WORST = {
    "jwt": "eyJ-",
    "escaped-jwt": "\\neyJ-",
    "authorization": "authorization: x\n",
    "userinfo": "://a:b/@",
    "token": "a_token=",
    "wrapped": "sk-proj-a\n",
    "bearer": "Bearer ",
    # issue 36: quoted values, names that are no secret, escaped JSON, PEM lines
    "quoted": '"password": "',
    "not secret": 'pageToken="',
    "escaped": '\\"SessionToken\\": \\"',
    "pem": "-----BEGIN PRIVATE KEY-----",
    "pem pairs": "-----BEGIN PRIVATE KEY-----x-----END ",
}


@pytest.mark.parametrize("unit", sorted(WORST))
def test_redaction_reads_a_bounded_text(unit: str, scanned: list[int]) -> None:
    """The worst inputs found (1 MB of each) reach the patterns cut to a stated bound."""
    text = WORST[unit] * (1_000_000 // len(WORST[unit]))
    redact(text)
    sanitize({"a": [text] * 3})
    HarnessError.from_code("upstream.invalid_request", text)
    assert scanned, "the patterns ran"
    assert max(scanned) <= MAX_REDACT + MARGIN


def test_a_huge_refusal_reaches_redaction_cut(scanned: list[int]) -> None:
    """check() of a 100 KB model refusal: redaction reads a bounded text."""
    from openai.types.chat import ChatCompletion

    refusal = "I can't help with that. eyJ-" * 4000
    result = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": None, "refusal": refusal},
                }
            ],
        }
    )
    with pytest.raises(normalize_errors.ModelRefusalError) as caught:
        normalize_errors.check(result, provider="openai")
    err = caught.value
    err.to_json()
    assert len(err.detail or "") <= MAX_REDACT + 1
    assert scanned
    assert max(scanned) <= MAX_REDACT + MARGIN


def test_a_harness_error_cause_pickles_whole() -> None:
    """A harness error as the cause of another keeps its members and class after pickling."""
    inner = HarnessError.from_code("upstream.rate_limited", f"key={KEYS['groq']}")
    outer = HarnessError.from_code("output.retries_exhausted", "gave up")
    outer.__cause__ = inner
    data = pickle.dumps(outer)
    assert leaks(KEYS["groq"], data) == []
    again = pickle.loads(data)
    assert isinstance(again.__cause__, HarnessError)
    assert again.__cause__.to_dict() == inner.to_dict()
