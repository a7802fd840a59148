"""Issue 23, item 5: no cache keeps a class alive, and no cache lets redaction be skipped.

botocore builds new exception classes (and a new client class) for every ``Session``, so a
service that makes a boto3 client per request meets new classes all the time; so does any
code that makes exception classes with ``type()``. After those classes have been through
``normalize()``, raised as drop-ins through ``normalized()`` and ``wrap()``, and dropped,
nothing of the library may still hold them.

A ``str`` subclass controls its own ``hash()``, ``==``, ``len()`` and ``lower()``: redaction
reads the characters of a text, whatever its class says about them.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from normalize_errors import HarnessError, normalize, normalized, redact, wrap
from normalize_errors._base._redact import secret_name
from normalize_errors._base._safe_copy import sanitize

from .support import is_instance

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai_errors = pytest.importorskip("google.genai.errors")
boto3 = pytest.importorskip("boto3")
botocore_exceptions = pytest.importorskip("botocore.exceptions")
Stubber = pytest.importorskip("botocore.stub").Stubber

CLASSES = 2000
KEY = "sk-proj-Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHhJjKkLlZzXxCcVvBbNnMm_-q1W2e3R4"  # made up


def _response(status: int, url: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", url), json=body)


def _openai(cls: type) -> BaseException:
    body = {
        "message": "Rate limit reached for gpt-4o",
        "type": "tokens",
        "code": "rate_limit_exceeded",
    }
    url = "https://api.openai.com/v1/chat/completions"
    return cls("Rate limit reached", response=_response(429, url, {"error": body}), body=body)  # type: ignore[no-any-return]


def _anthropic(cls: type) -> BaseException:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    url = "https://api.anthropic.com/v1/messages"
    return cls("Overloaded", response=_response(529, url, body), body=body)  # type: ignore[no-any-return]


def _google(cls: type) -> BaseException:
    body = {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}
    return cls(429, body, None)  # type: ignore[no-any-return]


def _botocore(cls: type) -> BaseException:
    response = {
        "Error": {"Code": "ThrottlingException", "Message": "Too many requests"},
        "ResponseMetadata": {"HTTPStatusCode": 429},
    }
    return cls(response, "Converse")  # type: ignore[no-any-return]


def _plain(cls: type) -> BaseException:
    return cls("the gateway is busy")  # type: ignore[no-any-return]


# (base class, the module the new class says it is in, how to make an instance)
BASES: list[tuple[type, str, Callable[[type], BaseException]]] = [
    (openai.RateLimitError, "openai", _openai),
    (openai.RateLimitError, "mycorp.llm", _openai),  # a user's subclass: found by the MRO
    (anthropic.InternalServerError, "anthropic", _anthropic),
    (genai_errors.ClientError, "google.genai.errors", _google),
    (botocore_exceptions.ClientError, "botocore.errorfactory", _botocore),  # as botocore does
    (Exception, "openai", _plain),  # a bare class under an SDK's root
    (Exception, "mycorp.gateway", _plain),  # nobody's: read through the built-in path
    (ExceptionGroup, "mycorp.group", lambda c: c("grouped", [TimeoutError("slow")])),
]


def _dead(refs: list[weakref.ref[type]]) -> list[str]:
    """The names of the classes in ``refs`` still alive after a full collection."""
    for _ in range(3):
        gc.collect()
    return [cls.__qualname__ for cls in (ref() for ref in refs) if cls is not None]


def _through_the_library(count: int) -> list[weakref.ref[type]]:
    """Make ``count`` exception classes, pass an instance of each through ``normalize()``
    (reading what is read lazily) and raise one through ``@normalized`` and ``with
    normalized()``: weak references to the classes, and to the drop-in classes made."""
    refs: list[weakref.ref[type]] = []

    @normalized
    def call(exc: BaseException) -> None:
        raise exc

    for number in range(count):
        base, module, make = BASES[number % len(BASES)]
        cls = type(f"RunTime{number}Error", (base,), {"__module__": module})
        refs.append(weakref.ref(cls))
        err = normalize(make(cls))
        assert isinstance(err, HarnessError)
        assert err.__cause__ is not None
        err.to_dict()  # the members read on first use (upstream, detail, ...)
        str(err)
        with pytest.raises(HarnessError) as decorated:
            call(make(cls))
        with pytest.raises(HarnessError) as managed, normalized():
            raise make(cls)
        for raised in (decorated.value, managed.value):
            str(raised)
            raised.to_dict()
            if raised is not raised.problem:  # a drop-in (an exception group gives none)
                assert is_instance(raised, cls)
                refs.append(weakref.ref(type(raised)))
        del decorated, managed, raised
    return refs


def test_classes_made_at_run_time_are_collectable_after_normalize_and_drop_ins() -> None:
    """2,000 exception classes made with ``type()`` over real SDK exception classes (and
    plain ones under an SDK's root, a user's package, an exception group), passed through
    ``normalize()`` and raised as drop-ins: once dropped, every one of them, and every
    drop-in class made for them, is collected."""
    refs = _through_the_library(CLASSES)
    assert len(refs) >= CLASSES
    assert _dead(refs) == []


def _bedrock_client() -> Any:
    """A Bedrock runtime client of a new ``Session`` (new exception and client classes)."""
    return boto3.session.Session().client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-real-secret",
    )


def _boto3_per_request(requests: int) -> list[weakref.ref[type]]:
    refs: list[weakref.ref[type]] = []
    messages = [{"role": "user", "content": [{"text": "Hello"}]}]
    for _ in range(requests):
        client = _bedrock_client()
        wrapped = wrap(client)
        throttled = wrapped.exceptions.ThrottlingException  # read through the proxy
        refs += [weakref.ref(type(client)), weakref.ref(throttled)]
        refs.append(weakref.ref(type(client.exceptions)))
        with Stubber(client) as stub:
            stub.add_client_error("converse", "ThrottlingException", "Too many requests", 429)
            with pytest.raises(throttled) as caught:  # the vendor's except clause
                wrapped.converse(modelId="anthropic.claude-3-5-sonnet", messages=messages)
        assert isinstance(caught.value, HarnessError)
        assert caught.value.problem.code == "upstream.rate_limited"
        refs.append(weakref.ref(type(caught.value)))
        with Stubber(client) as stub:
            stub.add_client_error("converse", "ValidationException", "Bad input", 400)
            with pytest.raises(HarnessError) as caught:
                normalized(client.converse)(modelId="m", messages=messages)
        assert is_instance(caught.value, client.exceptions.ValidationException)
        refs.append(weakref.ref(type(caught.value)))
        del caught
    return refs


def test_a_boto3_client_per_request_leaves_no_class_behind() -> None:
    """20 boto3 sessions, each client wrapped with ``wrap()`` and failing with a throttling
    error: the client classes, exception classes and drop-in classes of every session are
    collected once the clients are dropped."""
    refs = _boto3_per_request(20)
    assert len(refs) == 20 * 5
    assert _dead(refs) == []


def test_a_live_vendor_class_keeps_one_drop_in_class() -> None:
    """While the vendor class and a drop-in of it live, the same drop-in class is used again
    (``type()`` and ``except`` agree across errors of one class)."""
    cls = type("KeptError", (openai.RateLimitError,), {"__module__": "openai"})

    @normalized
    def call() -> None:
        raise _openai(cls)

    seen = []
    for _ in range(3):
        try:
            call()
        except HarnessError as raised:
            seen.append(raised)
    assert len({type(err) for err in seen}) == 1
    assert is_instance(seen[0], cls)


# -- redaction cannot be skipped -------------------------------------------------------------

CLEAN = "The server had an error while processing your request. Sorry about that!"


class Colliding(str):
    """A text claiming the hash of a clean text seen before."""

    def __hash__(self) -> int:
        return hash(CLEAN)


class Liar(str):
    """A text equal to every other text, with the hash of a clean text seen before."""

    def __hash__(self) -> int:
        return hash(CLEAN)

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False


class Disguised(str):
    """A text whose methods hide what it holds."""

    def __len__(self) -> int:
        return 1

    def lower(self) -> str:
        return ""

    def __contains__(self, other: object) -> bool:
        return False

    def __getitem__(self, item: Any) -> str:
        return ""

    def translate(self, table: Any) -> str:
        return ""

    def __str__(self) -> str:
        return CLEAN


@pytest.mark.parametrize("cls", [Colliding, Liar, Disguised])
def test_a_str_subclass_is_redacted_as_its_text_is(cls: type[str]) -> None:
    """Whatever its ``__hash__``, ``__eq__``, ``len()`` or ``lower()`` say, a ``str``
    subclass holding a key comes out of ``redact`` without it, as a plain ``str``."""
    assert redact(CLEAN) == CLEAN  # seen, and found clean
    assert redact(CLEAN) == CLEAN  # seen again
    text = cls(f"Incorrect API key provided: {KEY}. You can find your API key at ...")
    out = redact(text)
    assert KEY not in str.__str__(out)
    assert type(out) is str
    assert out == "Incorrect API key provided: [REDACTED]. You can find your API key at ..."
    err = HarnessError.from_code("upstream.authentication_failed", text)
    assert KEY not in str.__str__(err.detail or "")
    assert KEY not in err.to_json()
    exc = openai.AuthenticationError(text, response=_response(401, "https://x", {}), body=None)
    assert KEY not in normalize(exc).to_json()


def test_a_clean_str_subclass_comes_back_as_plain_text() -> None:
    """A clean text of a ``str`` subclass is returned as a plain ``str`` of the same
    characters: its own ``__str__`` or ``__repr__`` never reach an error."""
    text = Disguised("a clean message")
    out = redact(text)
    assert type(out) is str
    assert str.__str__(out) == "a clean message"


@pytest.mark.parametrize("cls", [Colliding, Liar, Disguised])
def test_a_str_subclass_names_a_secret_as_its_text_does(cls: type[str]) -> None:
    """A mapping key of a ``str`` subclass that spells ``password`` is a secret name,
    whatever its methods say: its value is redacted."""
    name = cls("password")
    assert secret_name(name)
    assert "hunter2-correct-horse" not in repr(sanitize({name: "hunter2-correct-horse"}))
