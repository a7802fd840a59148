"""Inputs that used to crash or give a wrong answer (issue 8, "Crashes and wrong answers").

Each test failed before its fix: a lone surrogate, huge numbers, an ``upstream`` that breaks
while it is built, ``@normalized`` generators, a pickled cause whose class is gone, the
``classify`` command on hostile input, schema-invalid objects, ``normalize()`` of a
non-exception.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import subprocess
import sys
from collections.abc import AsyncIterator, Generator
from pathlib import Path
from typing import Any

import openai
import pytest

from normalize_errors import (
    CauseStandIn,
    HarnessError,
    HarnessInternalError,
    ProblemFormatError,
    UpstreamOverloadedError,
    from_response,
    normalize,
    normalized,
)
from normalize_errors._reading._rules import Facts, build
from normalize_errors.bindings.http import read_problem, to_http

from ..support import is_instance, valid

TYPE = "https://iana.org/assignments/http-problem-types#agent-harness-error"
HUGE = "1" + "0" * 400


# -- lone surrogates -------------------------------------------------------------------------------


def test_lone_surrogate_in_a_vendor_message_is_replaced() -> None:
    """'\\ud83d' (valid JSON) reaches detail as U+FFFD: to_http and to_json encode."""
    body = '{"error": {"message": "cut emoji \\ud83d here", "type": "invalid_request_error"}}'
    err = valid(from_response(400, {"content-type": "application/json"}, body))
    assert err.detail is not None
    assert "\ufffd" in err.detail
    assert "\ud83d" not in err.detail
    status, _, payload = to_http(err)
    assert status == err.http_status
    assert json.loads(payload)["detail"] == err.detail
    err.to_json().encode("utf-8")
    pair = HarnessError("a whole emoji \ud83d\ude00", code="x-app.failed")
    assert pair.detail == "a whole emoji \U0001f600"  # a surrogate pair is joined, not cut


def test_lone_surrogate_in_upstream_and_members() -> None:
    """Nested texts (upstream, extensions, keys) and set members are made encodable too."""
    err = HarnessError(
        "x",
        code="x-app.failed",
        upstream={"message": "\udc80", "\ud800": "key"},
        model_feedback="\ud83d",
    )
    err.detail = "\udfff"
    text = err.to_json().encode("utf-8").decode("utf-8")
    assert "\ufffd" in text
    assert err.model_feedback == "\ufffd"


def test_classify_answers_for_a_lone_surrogate(tmp_path: Path) -> None:
    """The command line prints the problem object instead of dying on the surrogate."""
    path = tmp_path / "response.json"
    path.write_text(
        json.dumps({"status": 400, "body": {"error": {"message": "half \ud83d"}}}),
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, "-m", "normalize_errors", "classify", str(path)],
        capture_output=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["code"] == "upstream.invalid_request"


# -- huge numbers ----------------------------------------------------------------------------------


def test_read_problem_never_raises_on_huge_numbers() -> None:
    """retry_after or limit.value of 1e400 written out: not a valid object, so None."""
    for member in (f'"retry_after": {HUGE}', f'"limit": {{"name": "n", "value": {HUGE}}}'):
        body = f'{{"type": "{TYPE}", "code": "upstream.rate_limited", {member}}}'
        assert read_problem(429, {}, body) is None
        err = valid(from_response(429, {}, body))  # read as a plain HTTP 429
        assert (err.code, err.retry_after) == ("upstream.rate_limited", None)


def test_from_json_reads_huge_numbers_as_out_of_range() -> None:
    """from_json raises ProblemFormatError naming the member, never OverflowError."""
    with pytest.raises(ProblemFormatError, match="/retry_after"):
        HarnessError.from_json(f'{{"code": "upstream.rate_limited", "retry_after": {HUGE}}}')
    with pytest.raises(ProblemFormatError, match="/limit/value"):
        HarnessError.from_json(
            f'{{"code": "loop.budget_exceeded", "limit": {{"name": "n", "value": {HUGE}}}}}'
        )
    with pytest.raises(ValueError, match="retry_after"):
        HarnessError("x", code="x-app.failed", retry_after=10**400)


# -- facts that break while the error is built ---------------------------------------------------


class Hostile:
    """A vendor value that breaks when it is read."""

    def __float__(self) -> float:
        raise RuntimeError("no float")

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("no attributes")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


HOSTILE_WAIT: Any = Hostile()


class BrokenHeaders:
    """Response headers whose reading raises (a hostile or broken vendor object)."""

    def items(self) -> Any:
        raise RuntimeError("no items")

    def keys(self) -> Any:
        raise RuntimeError("no keys")

    def get(self, name: str, default: Any = None) -> Any:
        raise RuntimeError("no get")


@pytest.mark.parametrize(
    "facts",
    [
        Facts(provider="openai", status=429, wait=HOSTILE_WAIT, message="slow down"),
        Facts(provider="openai", status=429, headers=BrokenHeaders(), message="slow down"),  # type: ignore[arg-type]
        Facts(provider="openai", status=429, extra={"value": Hostile(), "code": 10**5000}),
        Facts(provider="openai", status=429, extra={"retry_delay": Hostile()}),
    ],
    ids=["wait", "headers", "extra", "retry-delay"],
)
def test_facts_that_break_while_read_give_an_error_all_the_same(facts: Facts) -> None:
    """repr, to_dict, pickle and == of the error work whatever the facts held; a hint that
    cannot be read is left out, and nothing is read later."""
    err = build("upstream.rate_limited", True, facts)
    assert err.code == "upstream.rate_limited"
    repr(err)
    valid(err)
    assert err.retry_after is None  # the hint that raised is left out
    assert pickle.loads(pickle.dumps(err)) == err
    assert err == pickle.loads(pickle.dumps(err))
    assert err.upstream


def test_huge_int_given_as_upstream() -> None:
    """An int over 4300 digits passed to the constructor is noted by its size."""
    err = valid(HarnessError("x", code="x-app.failed", upstream={"n": 10**5000}))
    assert "bits" in err.upstream["n"]
    repr(err)


# -- @normalized on generators ---------------------------------------------------------------------


def overloaded() -> Exception:
    """A real anthropic-free vendor error: the OpenAI SDK's 503."""
    from normalize_errors._wrapping._replay_calls import http_library

    http: Any = http_library("openai")
    request = http.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = http.Response(503, request=request)
    return openai.InternalServerError("overloaded", response=response, body=None)


def test_normalized_generator_types_errors_raised_while_iterating() -> None:
    """Values flow, then the error raised mid-iteration comes out typed; send() works."""

    @normalized
    def numbers() -> Generator[int, str, None]:
        got = yield 1
        assert got == "hello"
        yield 2
        raise TimeoutError("slow")

    gen = numbers()
    assert next(gen) == 1
    assert gen.send("hello") == 2
    with pytest.raises(HarnessError) as info:
        next(gen)
    assert info.value.problem.code == "upstream.unavailable"
    assert isinstance(info.value.problem.__cause__, TimeoutError)


def test_normalized_async_generator_types_errors_raised_while_iterating() -> None:
    """The async twin: items flow, then the vendor error is a typed drop-in."""

    @normalized
    async def events() -> AsyncIterator[str]:
        yield "a"
        raise overloaded()

    async def main() -> list[str]:
        got = []

        async def consume() -> None:
            async for item in events():
                got.append(item)

        with pytest.raises(HarnessError) as info:
            await consume()
        assert info.value.problem.code.startswith("upstream.")
        assert is_instance(info.value, openai.InternalServerError)
        return got

    assert asyncio.run(main()) == ["a"]


# -- pickles ---------------------------------------------------------------------------------------


def test_pickled_error_whose_cause_class_cannot_be_imported_loads() -> None:
    """A cause of a local class comes back as a CauseStandIn naming the class."""

    class Gone(Exception):
        pass

    err = normalize(Gone("lost", 7))
    loaded = pickle.loads(pickle.dumps(err))
    assert loaded == err
    cause = loaded.__cause__
    assert isinstance(cause, CauseStandIn)
    assert cause.args == ("lost", 7)
    assert cause.original_class.endswith("Gone")


def test_pickled_cause_of_an_importable_class_keeps_its_class() -> None:
    """The stand-in is only for classes that cannot be found."""
    loaded = pickle.loads(pickle.dumps(normalize(overloaded())))
    assert type(loaded.__cause__) is openai.InternalServerError


class OddArgs(Exception):
    """A vendor class whose ``args`` is a property giving something that cannot pickle."""

    reason: str

    @property
    def args(self) -> Any:
        return lambda: None

    @args.setter
    def args(self, value: Any) -> None:
        pass


def test_a_cause_whose_args_cannot_be_pickled_loads_without_them() -> None:
    """The cause is pickled as a copy of its class with empty ``args`` and its attributes;
    the live exception is not changed."""
    exc = OddArgs()
    exc.reason = "gateway said no"
    err = normalize(exc)
    loaded = pickle.loads(pickle.dumps(err))
    assert loaded == err
    cause = loaded.__cause__
    assert isinstance(cause, OddArgs)
    assert type(cause) is OddArgs
    assert cause.reason == "gateway said no"
    assert callable(exc.args)


def test_a_vendor_exception_whose_args_is_no_sequence_still_gets_its_drop_in() -> None:
    """``typed_error`` (what ``wrap`` raises) of an exception whose ``args`` is no sequence:
    the drop-in of the vendor's class, with no ``args`` kept; before, building it raised a
    TypeError in the caller's error path."""
    from normalize_errors._wrapping._wrap import typed_error

    exc = OddArgs()
    err = typed_error(exc)
    assert isinstance(err, OddArgs)
    assert err.args == ()
    assert err.problem.__cause__ is exc
    assert err.problem.code == "harness.internal_error"


def test_a_traceback_kept_in_an_exceptions_dict_stays_out_of_the_pickle() -> None:
    """An exception whose ``__dict__`` holds a traceback under ``__traceback__`` (state copied
    by hand from another exception): the error, its drop-in and its cause pickle without it."""
    from normalize_errors._wrapping._wrap import typed_error

    try:
        raise RuntimeError("inner")
    except RuntimeError as inner:
        kept = inner.__traceback__
    exc = OddArgs()
    vars(exc)["__traceback__"] = kept
    exc.reason = "copied state"
    for err in (normalize(exc), typed_error(exc)):
        loaded = pickle.loads(pickle.dumps(err))
        assert loaded == err
        assert "__traceback__" not in vars(loaded)
        assert isinstance(loaded.problem.__cause__, OddArgs)
        assert "__traceback__" not in vars(loaded.problem.__cause__)
        assert loaded.problem.__cause__.reason == "copied state"


# -- classify --------------------------------------------------------------------------------------


def classify(data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "normalize_errors", "classify"],
        input=data,
        capture_output=True,
        check=False,
    )


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        b"HTTP/1.1 500 \r\n\r\n\xff\xfe not UTF-8",
    ],
    ids=["deep", "not-utf8"],
)
def test_classify_rejects_hostile_input_without_a_traceback(data: bytes) -> None:
    """A clear message, exit status 2, no traceback."""
    out = classify(data)
    assert out.returncode == 2
    assert b"Traceback" not in out.stderr + out.stdout
    assert out.stdout == b""  # stdout holds a problem object or nothing
    assert out.stderr.startswith(b"classify: ")


# -- schema-valid objects --------------------------------------------------------------------------


def test_from_response_with_a_provider_that_is_not_a_string() -> None:
    """provider=[...] is ignored: the answer validates against the shipped schema."""
    body = '{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}'
    err = valid(from_response(429, {}, body, provider=["openai"]))  # type: ignore[arg-type]
    assert err.code == "upstream.rate_limited"
    assert isinstance(err.upstream.get("provider"), str)


def test_from_response_with_a_provider_name_nobody_has() -> None:
    """provider="nope" is ignored too: the body's shape decides, not the last resort."""
    body = '{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}'
    err = valid(from_response(429, {}, body, provider="nope"))
    assert (err.code, err.upstream["provider"]) == ("upstream.rate_limited", "openai")


def test_location_pointer_cut_after_a_tilde_stays_a_json_pointer() -> None:
    """A pointer cut at the length bound right after '~' loses the dangling '~'."""
    pointer = "/" + "a" * 4095 + "~0~1"
    err = valid(HarnessError("x", code="x-app.failed", location={"pointer": pointer}))
    assert "~…" not in err.to_dict()["location"]["pointer"]
    err.location = {"pointer": "/a~1b~0c~"}
    assert valid(err).to_dict()["location"]["pointer"] == "/a~1b~0c"


# -- normalize() of a non-exception ----------------------------------------------------------------


def test_normalize_of_a_non_exception_gives_a_harness_error() -> None:
    """normalize("text") returns harness.internal_error; it used to raise TypeError."""
    err = valid(normalize("text"))  # type: ignore[arg-type]
    assert isinstance(err, HarnessInternalError)
    assert err.__cause__ is None
    assert normalize(UpstreamOverloadedError("busy")).code == "upstream.overloaded"


def nested_groups(depth: int) -> bytes:
    """A pasted exception group nested ``depth`` levels, an SDK's exception at the bottom
    (the shape Python prints, made deeper than Python ever prints it)."""
    lines = ["  + Exception Group Traceback (most recent call last):"]
    for level in range(depth):
        margin = " " * (2 + 2 * level)
        lines += [f"{margin}| ExceptionGroup: level {level} (1 sub-exception)"]
        lines += [f"{margin}+-+---------------- 1 ----------------"]
    bottom = " " * (2 + 2 * depth)
    lines += [f"{bottom}| openai.RateLimitError: Error code: 429 - {{'error': {{}}}}"]
    lines += [f"{bottom}+------------------------------------"]
    return "\n".join(lines).encode()


@pytest.mark.parametrize(
    "data",
    [
        nested_groups(5_000),
        b"\nTraceback (most recent call last):\n" * 200_000,
        b"  | x\n" * 100_000 + b"  +-+-- 1 --\n" * 50_000,
    ],
    ids=["deep-groups", "many-headers", "margins"],
)
def test_classify_reads_a_hostile_traceback_quickly_and_without_a_traceback(data: bytes) -> None:
    """A paste that nests groups thousands deep, or repeats a traceback's header or a
    group's margin hundreds of thousands of times: an answer (or a refusal) in one line,
    in about a second, never a RecursionError."""
    import time

    started = time.perf_counter()
    out = classify(data)
    assert time.perf_counter() - started < 20  # a child process; quadratic took minutes
    assert out.returncode in (0, 3), out.stderr[-300:]
    assert b"Traceback (most recent" not in out.stderr
    assert b"RecursionError" not in out.stderr
