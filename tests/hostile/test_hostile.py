"""Hostile input: nothing raises, nothing leaks, nothing hangs, everything stays valid.

Properties over ``from_response``, ``normalize``, ``diagnose``/``check``, ``from_dict`` and
the HTTP binding's reader, with random and malformed statuses, headers, bodies, results and
exceptions. Invariants on every output: a ``HarnessError`` (or, for ``from_dict``, the one
documented ``ProblemFormatError``); a problem object valid against the shipped JSON Schema
and serialisable as strict JSON; ``retry_after`` finite and non-negative; a planted
credential nowhere in ``str``, ``repr`` or JSON; no single call near a second (see
conftest: a pathological pattern would take seconds or hang).
"""

from __future__ import annotations

import contextlib
import importlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from normalize_errors import HarnessError, ProblemFormatError, diagnose, from_response, normalize
from normalize_errors._facade import diagnose_stream
from normalize_errors.bindings.http import read_problem

from ..support import PLANTED_KEY, valid
from .conftest import timed

KEY = PLANTED_KEY
"""A planted credential (made up) that must never come out: ``valid`` checks every output."""
PROVIDERS = st.sampled_from([None, "openai", "anthropic", "google", "http"])


# -- statuses, headers and bodies of every shape ----------------------------------------------

STATUSES = st.one_of(
    st.none(),
    st.integers(-1000, 1000),
    st.integers(),
    st.sampled_from(
        [200, 400, 401, 402, 403, 404, 408, 409, 413, 429, 499, 500, 502, 503, 504, 520, 524, 529]
    ),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.booleans(),
)
RETRY_VALUES = st.one_of(
    st.sampled_from(
        [
            "-5",
            "NaN",
            "nan",
            "inf",
            "1e309",
            "99999999999999999999",
            "abc",
            "",
            " 7 ",
            "1.5",
            "0",
            "Wed, 21 Oct 2015 07:28:00 GMT",
            "Wed, 21 Oct 2099 07:28:00 GMT",
            "Mon, 99 Foo 2020 99:99:99 GMT",
        ]
    ),
    st.text(max_size=40),
    st.integers().map(str),
)
HEADER_NAMES = st.sampled_from(
    [
        "retry-after",
        "Retry-After",
        "retry-after-ms",
        "x-request-id",
        "request-id",
        "content-type",
        "Authorization",
        "x-api-key",
        "x-ratelimit-reset-tokens",
    ]
) | st.text(max_size=20)
HEADERS = st.one_of(
    st.none(),
    st.dictionaries(HEADER_NAMES, RETRY_VALUES | st.just(f"Bearer {KEY}"), max_size=8),
    st.lists(st.tuples(HEADER_NAMES, RETRY_VALUES), max_size=8),
    st.dictionaries(
        st.text(max_size=5), st.one_of(st.none(), st.integers(), st.binary(max_size=8)), max_size=4
    ),
    st.integers(),
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30) | st.just(KEY),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "error",
                    "type",
                    "message",
                    "code",
                    "status",
                    "details",
                    "param",
                    "request_id",
                    "@type",
                    "retryDelay",
                    "reason",
                    "metadata",
                    "object",
                    "innererror",
                    "violations",
                    "quotaId",
                ]
            )
            | st.text(max_size=6),
            inner,
            max_size=6,
        )
    ),
    max_leaves=25,
)


def deep(levels: int) -> str:
    """JSON nested ``levels`` deep."""
    return '{"error": ' * levels + "1" + "}" * levels


BODIES = st.one_of(
    st.none(),
    st.binary(max_size=200),
    st.text(max_size=200),
    JSONISH,
    JSONISH.map(json.dumps),
    JSONISH.map(lambda v: json.dumps(v).encode("utf-8")[: max(1, len(json.dumps(v)) // 2)]),
    st.sampled_from(
        [
            b"\xff\xfe\xfa invalid utf-8 \xc3\x28",
            "<html><head><title>502 Bad Gateway</title></head><body>"
            + "x" * 5000
            + "</body></html>",
            "<html><title>" + "<" * 10_000,
            deep(5000),
            "[" * 5000 + "]" * 5000,
            "x" * 2_000_000,
            # Context-window messages whose number is 100,000 digits (quadratic until cut).
            '{"error": {"message": "This model\'s maximum context length is '
            + "1" * 100_000
            + ' tokens", "code": "context_length_exceeded"}}',
            '{"type": "error", "error": {"type": "invalid_request_error", "message": '
            '"prompt is too long: ' + "9" * 100_000 + '"}}',
            '{"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "The input token '
            "count (" + "3" * 100_000 + ') exceeds the maximum number of tokens allowed (1)"}}',
            '{"error": {"message": "' + "a" * 2_000_000 + '"}}',
            f'{{"error": {{"message": "Incorrect API key provided: {KEY}", '
            '"code": "invalid_api_key"}}',
            f'{{"type": "error", "error": {{"type": "authentication_error", "message": "{KEY}"}}}}',
            '{"error": {"code": "429", "status": 7, "details": "not a list"}}',
            '{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [{"@type": '
            '"type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1e309s"}]}}',
            '{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [{"@type": '
            '"type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "-5s"}]}}',
            'data: {"error": {"message": "boom", "type": "server_error"}}\n\n',
            '{"type": "https://agenterrors.org/problems/harness-error", "code": "upstream.x", '
            '"retry_after": -1}',
            "[]",
            "null",
            '"just a string"',
        ]
    ),
)


@given(STATUSES, HEADERS, BODIES, PROVIDERS)
def test_from_response_answers_anything(
    status: Any, headers: Any, body: Any, provider: str | None
) -> None:
    """Any status, any headers, any body: a valid, leak-free error, quickly."""

    def call() -> HarnessError:
        return from_response(status, headers, body, provider=provider)

    valid(timed("from_response", call, status, headers, body, provider))


@given(STATUSES, HEADERS, BODIES)
def test_the_http_binding_reader_answers_anything(status: Any, headers: Any, body: Any) -> None:
    """read_problem returns None or a valid error, never an exception."""
    found = timed("read_problem", lambda: read_problem(status, headers, body), status, body)
    if found is not None:
        valid(found)


# -- exceptions with missing or absurd attributes ---------------------------------------------


def exception_classes() -> list[type[BaseException]]:
    """Every exception class the installed SDKs and HTTP libraries export."""
    classes: list[type[BaseException]] = []
    for name in ("openai", "anthropic", "google.genai.errors", "httpx", "httpx2"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and issubclass(value, BaseException):
                classes.append(value)
    return [*classes, TimeoutError, ConnectionResetError, ValueError, KeyboardInterrupt]


class Hostile:
    """An object whose every attribute access raises."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name} for you")


class OddHeaders(dict[str, Any]):
    """Headers whose items() raises half-way."""

    def items(self) -> Any:
        yield ("retry-after", "3")
        raise RuntimeError("broken headers")


ATTRIBUTE_VALUES = st.one_of(
    JSONISH,
    st.binary(max_size=30),
    st.just(Hostile()),
    st.builds(object),
    st.just(float("nan")),
    st.just(10**400),
    st.just(KEY),
)
RESPONSES = st.one_of(
    st.none(),
    st.just(Hostile()),
    st.builds(
        lambda s, h: type("R", (), {"status_code": s, "headers": h, "text": KEY})(),
        STATUSES,
        st.one_of(HEADERS, st.just(OddHeaders()), st.just(Hostile())),
    ),
)


@given(
    st.sampled_from(exception_classes()),
    st.dictionaries(
        st.sampled_from(
            [
                "status_code",
                "body",
                "code",
                "type",
                "message",
                "status",
                "details",
                "request_id",
                "error_code",
                "param",
                "completion",
                "args",
            ]
        ),
        ATTRIBUTE_VALUES,
        max_size=6,
    ),
    RESPONSES,
    PROVIDERS,
)
def test_normalize_answers_any_exception(
    cls: type[BaseException], attrs: dict[str, Any], response: Any, provider: str | None
) -> None:
    """Real SDK classes built without __init__, with absurd attributes: still a valid error."""
    exc = cls.__new__(cls)
    for name, value in attrs.items():
        try:
            setattr(exc, name, value)
        except Exception:  # a read-only attribute: fine, it keeps its default
            continue
    with contextlib.suppress(Exception):  # a class may refuse the attribute
        exc.response = response  # type: ignore[attr-defined]
    err = valid(timed("normalize", lambda: normalize(exc, provider=provider), cls, attrs))
    assert err.__cause__ is exc or isinstance(exc, HarnessError)


# -- results of every shape -------------------------------------------------------------------

RESULTS = st.one_of(
    JSONISH,
    st.fixed_dictionaries(
        {
            "choices": st.lists(
                st.fixed_dictionaries(
                    {
                        "finish_reason": st.sampled_from(
                            [None, "stop", "length", "content_filter", 5, "x"]
                        ),
                        "message": st.one_of(
                            st.none(),
                            JSONISH,
                            st.fixed_dictionaries(
                                {
                                    "content": st.one_of(
                                        st.none(), st.text(max_size=10), st.just(KEY)
                                    ),
                                    "refusal": st.one_of(
                                        st.none(), st.text(max_size=10), st.just([1])
                                    ),
                                    "tool_calls": st.one_of(
                                        st.none(),
                                        st.lists(
                                            st.fixed_dictionaries(
                                                {
                                                    "id": JSONISH,
                                                    "function": st.fixed_dictionaries(
                                                        {
                                                            "name": JSONISH,
                                                            "arguments": st.one_of(
                                                                st.text(max_size=20), JSONISH
                                                            ),
                                                        }
                                                    ),
                                                }
                                            ),
                                            max_size=3,
                                        ),
                                    ),
                                }
                            ),
                        ),
                    }
                ),
                max_size=3,
            )
        }
    ),
    st.fixed_dictionaries(
        {
            "object": st.just("response"),
            "status": st.sampled_from(["failed", "incomplete", "completed", "cancelled", None, 3]),
            "error": JSONISH,
            "incomplete_details": JSONISH,
            "output": JSONISH,
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("message"),
            "stop_reason": st.sampled_from(
                ["max_tokens", "refusal", "end_turn", "model_context_window_exceeded", None, 9]
            ),
            "content": JSONISH,
            "stop_details": JSONISH,
        }
    ),
    st.fixed_dictionaries(
        {
            "candidates": st.one_of(
                JSONISH,
                st.lists(
                    st.fixed_dictionaries(
                        {
                            "finishReason": st.sampled_from(
                                ["STOP", "MAX_TOKENS", "SAFETY", "OTHER", None, 1]
                            ),
                            "content": JSONISH,
                        }
                    ),
                    max_size=2,
                ),
            ),
            "promptFeedback": JSONISH,
        }
    ),
    st.just(Hostile()),
)


@given(RESULTS, PROVIDERS, st.one_of(st.none(), st.lists(JSONISH, max_size=3)))
def test_diagnose_answers_any_result(result: Any, provider: str | None, tools: Any) -> None:
    """diagnose() returns None or a valid error; it never raises."""
    found = timed("diagnose", lambda: diagnose(result, provider=provider, tools=tools), result)
    if found is not None:
        valid(found)


# -- received problem objects -----------------------------------------------------------------

PROBLEMS = st.one_of(
    JSONISH,
    st.dictionaries(
        st.sampled_from(
            [
                "type",
                "title",
                "status",
                "detail",
                "code",
                "origin",
                "retryable",
                "retry_after",
                "attempts",
                "limit",
                "location",
                "upstream",
                "causes",
                "model_feedback",
            ]
        ),
        JSONISH,
        max_size=8,
    ).map(lambda d: {**d, "code": "upstream.rate_limited"}),
)


@given(PROBLEMS)
def test_from_dict_gives_a_typed_error_or_the_documented_error(obj: Any) -> None:
    """from_dict: a valid typed error, or ProblemFormatError naming a member; nothing else."""

    def attempt() -> Any:
        try:
            return HarnessError.from_dict(obj)
        except ProblemFormatError as exc:
            return exc

    out = timed("from_dict", attempt, obj)
    if isinstance(out, ProblemFormatError):
        assert out.pointer == "" or out.pointer.startswith("/")
    else:
        valid(out)


def test_deep_and_huge_problem_documents() -> None:
    """5000-deep causes and multi-megabyte members read in bounded time and size."""
    nested: dict[str, Any] = {"code": "tool.execution_failed", "detail": KEY}
    for _ in range(5000):
        nested = {"code": "upstream.agent_failed", "causes": [nested]}
    valid(timed("from_dict", lambda: HarnessError.from_dict(nested), "causes 5000 deep"))
    big = {
        "code": "upstream.unavailable",
        "detail": "d" * 3_000_000,
        "upstream": {"body": "b" * 3_000_000, "k": KEY},
    }
    err = valid(timed("from_dict", lambda: HarnessError.from_dict(big), "3 MB members"))
    assert len(err.to_json()) < 3_100_000 + 10_000
    assert len(json.dumps(err.upstream)) < 10_000


CHUNK = st.one_of(
    JSONISH,
    st.fixed_dictionaries(
        {
            "choices": st.one_of(
                JSONISH,
                st.lists(
                    st.fixed_dictionaries(
                        {
                            "index": JSONISH,
                            "finish_reason": JSONISH,
                            "delta": st.one_of(
                                JSONISH,
                                st.fixed_dictionaries(
                                    {
                                        "content": JSONISH,
                                        "refusal": JSONISH,
                                        "tool_calls": st.one_of(
                                            JSONISH,
                                            st.lists(
                                                st.fixed_dictionaries(
                                                    {
                                                        "index": JSONISH,
                                                        "id": JSONISH,
                                                        "function": JSONISH,
                                                    }
                                                ),
                                                max_size=2,
                                            ),
                                        ),
                                    }
                                ),
                            ),
                        }
                    ),
                    max_size=2,
                ),
            )
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(
                [
                    "error",
                    "response.failed",
                    "message_delta",
                    "content_block_delta",
                    "message_start",
                ]
            ),
            "response": JSONISH,
            "error": JSONISH,
            "delta": JSONISH,
            "message": JSONISH,
        }
    ),
    st.just(Hostile()),
)


@given(st.lists(CHUNK, max_size=6), st.sampled_from(["openai", "anthropic", "google", "http"]))
def test_diagnose_stream_answers_any_chunks(chunks: list[Any], provider: str) -> None:
    """A stream of odd chunks ends with None or a valid error, never an exception."""
    found = timed(
        "diagnose_stream",
        lambda: diagnose_stream(chunks, provider=provider, tools=None),
        chunks,
        provider,
    )
    if found is not None:
        valid(found)
