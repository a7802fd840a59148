"""The core's one path: unknown exceptions read through their cause chain, and the precedence
that picks an exception group's error."""

from __future__ import annotations

import openai

from normalize_errors import HarnessError, normalize
from normalize_errors._model._groups import MAX_CHAIN
from normalize_errors._wrapping._replay_calls import http_library

from .support import raised, valid


class Wrapper(Exception):
    """An exception of code the library does not know."""


def rate_limit() -> openai.RateLimitError:
    """A real openai.RateLimitError, as the SDK builds it from a 429 with Retry-After."""
    httpx = http_library("openai")
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx.Response(
        429,
        headers={"retry-after": "7"},
        json={"error": {"message": "Rate limit reached", "type": "requests", "code": None}},
        request=request,
    )
    return openai.RateLimitError("Rate limit reached", response=response, body=None)


def raised_from(outer: BaseException, inner: BaseException) -> BaseException:
    try:
        try:
            raise inner
        except BaseException as exc:
            raise outer from exc
    except BaseException as caught:
        return caught


def test_an_unknown_wrapper_is_read_through_its_cause() -> None:
    """RuntimeError from RateLimitError answers as the rate limit, original kept as __cause__."""
    outer = raised_from(Wrapper("the framework gave up"), rate_limit())
    err = valid(normalize(outer))
    assert (err.code, err.retryable, err.retry_after) == ("upstream.rate_limited", True, 7.0)
    assert err.__cause__ is outer


def test_the_implicit_context_is_read_too_unless_suppressed() -> None:
    """Raised while handling another: read through __context__; ``from None`` stops it."""

    def implicit() -> None:
        try:
            raise TimeoutError("read timed out")
        except TimeoutError:
            raise Wrapper("retry loop failed")  # noqa: B904 - the implicit context is the point

    def suppressed() -> None:
        try:
            raise TimeoutError("read timed out")
        except TimeoutError:
            raise Wrapper("hidden") from None

    assert normalize(raised(implicit)).code == "upstream.unavailable"
    assert normalize(raised(suppressed)).code == "harness.internal_error"


def test_a_harness_error_in_the_chain_is_copied_not_modified() -> None:
    """The found error keeps its own __cause__; the answer is a copy whose cause is the outer."""
    inner = HarnessError.from_code("tool.timeout", "slow tool")
    inner_cause = ValueError("inside")
    inner.__cause__ = inner_cause
    outer = raised_from(Wrapper("wrapped"), inner)
    err = normalize(outer)
    assert err.code == "tool.timeout"
    assert err is not inner
    assert err.__cause__ is outer
    assert inner.__cause__ is inner_cause


def test_the_walk_is_bounded_and_cycle_safe() -> None:
    """A cycle ends the walk; a known cause deeper than MAX_CHAIN links is not reached."""
    a, b = Wrapper("a"), Wrapper("b")
    a.__cause__, b.__cause__ = b, a
    assert normalize(a).code == "harness.internal_error"

    def chain(links: int) -> BaseException:
        exc: BaseException = TimeoutError("deep")
        for i in range(links):
            outer = Wrapper(str(i))
            outer.__cause__ = exc
            exc = outer
        return exc

    assert normalize(chain(MAX_CHAIN)).code == "upstream.unavailable"
    assert normalize(chain(MAX_CHAIN + 1)).code == "harness.internal_error"


def test_group_precedence_non_retryable_first_then_specific_then_order() -> None:
    """The documented precedence, member by member; every other member lands in causes."""
    spent = HarnessError.from_code("upstream.rate_limited", "quota spent", retryable=False)
    limited = HarnessError.from_code("upstream.rate_limited", "slow down", retry_after=3)
    cases: list[tuple[list[Exception], str, bool]] = [
        ([TimeoutError(), limited], "upstream.rate_limited", True),
        ([limited, spent], "upstream.rate_limited", False),
        ([TimeoutError(), ValueError("bug")], "harness.internal_error", False),
        (
            [ValueError("bug"), HarnessError.from_code("policy.content_filtered", "blocked")],
            "policy.content_filtered",
            False,
        ),
        ([TimeoutError("1"), ConnectionResetError("2")], "upstream.unavailable", True),
    ]
    for members, code, retryable in cases:
        group = ExceptionGroup("failures", members)
        err = valid(normalize(group))
        assert (err.code, err.retryable) == (code, retryable), members
        assert len(err.causes) == 1
        assert err.__cause__ is group
    first = normalize(ExceptionGroup("g", [TimeoutError("1"), ConnectionResetError("2")]))
    assert first.upstream["code"] == "timeout"


def test_a_large_group_keeps_bounded_causes_and_nested_groups_work() -> None:
    """100 members give MAX_CAUSES causes with the last kept; groups inside groups are read."""
    members: list[Exception] = [TimeoutError(str(i)) for i in range(100)]
    err = normalize(ExceptionGroup("many", members))
    assert len(err.causes) == 16
    assert err.causes[-1].upstream["message"] == "99"
    nested = BaseExceptionGroup("outer", [ExceptionGroup("inner", [rate_limit()]), ValueError("x")])
    assert normalize(nested).code == "harness.internal_error"
    assert [c.code for c in normalize(nested).causes] == ["upstream.rate_limited"]


def test_a_nested_group_of_two_answers_with_its_own_group_as_cause() -> None:
    """A group inside a group: the inner group's answer is a new error whose cause is the
    inner group, and its other member is among the causes."""
    inner = ExceptionGroup("inner", [TimeoutError("slow"), ConnectionError("refused")])
    outer = ExceptionGroup("outer", [inner, ValueError("bug")])
    err = valid(normalize(outer))
    assert err.__cause__ is outer
    assert err.code == "harness.internal_error"  # the non-retryable member leads
    first = err.causes[0]
    assert first.code == "upstream.unavailable"
    assert first.__cause__ is inner
    assert [c.detail for c in first.causes] == ["The connection failed: refused."]


def test_a_group_past_its_budget_reads_only_first_members() -> None:
    """More members than the budget, over nested groups: once it is spent, each further
    group is read by its first member only, so the answer stays bounded."""
    leaves = [TimeoutError(f"t{i}") for i in range(20)]
    groups = [ExceptionGroup(f"g{i}", leaves) for i in range(40)]
    err = valid(normalize(ExceptionGroup("top", groups)))
    assert err.code == "upstream.unavailable"
    assert 0 < len(err.causes) <= 16


def test_a_library_group_that_is_no_builtin_group_is_read_through_its_members() -> None:
    """A library's own group class, no subclass of the builtin (anyio 3's ``ExceptionGroup``
    is a ``BaseException`` holding an ``exceptions`` list: made here in that shape), is read
    as a group: its most telling member answers and the other is kept in ``causes``."""

    class TaskExceptionGroup(BaseException):
        def __init__(self, exceptions: list[BaseException]) -> None:
            super().__init__()
            self.exceptions = exceptions

    group = TaskExceptionGroup([TimeoutError("slow"), rate_limit()])
    err = valid(normalize(group))
    assert (err.code, err.retryable) == ("upstream.rate_limited", True)
    assert err.__cause__ is group
    assert [c.code for c in err.causes] == ["upstream.unavailable"]


def test_a_group_like_class_without_members_is_an_unknown_exception() -> None:
    """A class named like a group whose ``exceptions`` is no list is read as any exception."""

    class WeirdExceptionGroup(Exception):
        exceptions = "not a list"

    err = valid(normalize(WeirdExceptionGroup("odd")))
    assert err.code == "harness.internal_error"
