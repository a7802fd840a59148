"""Exception groups whose members lead back to the group (issue 22, finding 1).

Re-raising the members of a group inside its own ``except`` block makes Python set each
member's ``__context__`` to the group. The chain walk of an unknown member used to follow
that context back to the group and start a new group walk with a fresh budget: ``normalize``
never returned, and neither did the logging filter, the tenacity condition, ``record_error``
or the MCP decorator, which all call it. Every call here runs in a thread joined with a
timeout, so a hang fails the test instead of hanging the suite.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalize_errors import HarnessError, UpstreamRateLimitedError, _facade, normalize
from normalize_errors._model._groups import MAX_WALK

from ..support import examples, valid
from .conftest import timed

_T = TypeVar("_T")

WAIT = 10.0
"""Seconds a call may take by the clock before it counts as a hang (it takes milliseconds)."""


def within(func: Callable[[], _T], seconds: float = WAIT) -> _T:
    """``func()``, run in a daemon thread; fails if it has not returned after ``seconds``."""
    box: list[_T] = []
    failed: list[BaseException] = []

    def target() -> None:
        try:
            box.append(func())
        except BaseException as exc:  # handed to the test below
            failed.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: a hang"
    if failed:
        raise failed[0]
    return box[0]


def reraised(group: BaseExceptionGroup[Any], *, cause: bool = False) -> BaseExceptionGroup[Any]:
    """``group``, each member raised again inside the group's own ``except`` block (so its
    ``__context__`` is the group; with ``cause``, ``raise member from group`` as well)."""
    try:
        raise group
    except BaseExceptionGroup as caught:
        for member in caught.exceptions:
            try:
                if cause:
                    raise member from caught
                raise member
            except BaseException:  # only the context is wanted
                pass
    return group


def looped(*members: Exception) -> BaseExceptionGroup[Any]:
    """A group of ``members`` whose members' ``__context__`` is the group."""
    return reraised(ExceptionGroup("tools failed", list(members)))


def test_members_whose_context_is_their_group_are_read_as_they_are() -> None:
    """A ``RuntimeError`` and a ``KeyError`` re-raised inside ``except`` of their group: the
    group's answer is the members' own, and the group is its ``__cause__``."""
    group = looped(RuntimeError("tool a broke"), KeyError("b"))
    assert group.exceptions[0].__context__ is group
    err = valid(within(lambda: normalize(group)))
    assert (err.code, err.retryable) == ("harness.internal_error", False)
    assert err.__cause__ is group
    assert [c.code for c in err.causes] == ["harness.internal_error"]
    assert err.upstream["exception"] == "builtins.RuntimeError"
    assert err.causes[0].upstream["exception"] == "builtins.KeyError"


def test_a_known_member_still_decides_when_the_others_loop_back() -> None:
    """The member the library knows is read as ever; the looping one does not hang it."""
    limited = UpstreamRateLimitedError("slow down", retry_after=3)
    group = looped(TimeoutError("slow"), limited)
    err = valid(within(lambda: normalize(group)))
    assert (err.code, err.retry_after) == ("upstream.rate_limited", 3)
    assert [c.code for c in err.causes] == ["upstream.unavailable"]


def test_members_whose_cause_and_context_both_point_back() -> None:
    """``raise member from group`` inside ``except group``: both links lead to the group."""
    group = reraised(ExceptionGroup("g", [RuntimeError("x"), ValueError("y")]), cause=True)
    first = group.exceptions[0]
    assert first.__cause__ is group
    assert first.__context__ is group
    err = valid(within(lambda: normalize(group)))
    assert err.code == "harness.internal_error"
    assert len(err.causes) == 1


def test_nested_groups_whose_members_loop_to_the_outer_and_the_inner_group() -> None:
    """Members of an inner group point back at it, the inner group at the outer one."""
    inner = looped(RuntimeError("inner a"), KeyError("inner b"))
    outer = reraised(ExceptionGroup("outer", [inner, LookupError("outer c")]))
    assert inner.__context__ is outer
    err = valid(within(lambda: normalize(outer)))
    assert err.code == "harness.internal_error"
    assert err.__cause__ is outer
    inner_err = within(lambda: normalize(inner))
    assert inner_err.code == "harness.internal_error"


def test_a_member_chained_to_a_group_elsewhere_is_still_followed() -> None:
    """The cycle check stops only at what is being read: a member whose context is another
    group is read through that group (its timeout member answers)."""
    other = ExceptionGroup("other", [TimeoutError("slow")])
    member = RuntimeError("wrapped")
    member.__context__ = other
    err = valid(within(lambda: normalize(ExceptionGroup("g", [member]))))
    assert err.code == "upstream.unavailable"


def test_the_logging_filter_with_exc_info_of_a_looping_group() -> None:
    """``logger.error(..., exc_info=group)`` under ``HarnessErrorFilter`` returns."""
    pytest.importorskip("opentelemetry")
    from normalize_errors.bindings.otel import HarnessErrorFilter

    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("tests.hostile.group_cycles")
    handler = Keep()
    handler.addFilter(HarnessErrorFilter())
    logger.addHandler(handler)
    logger.propagate = False
    try:
        group = looped(RuntimeError("a"), KeyError("b"))
        within(lambda: logger.error("the tools failed", exc_info=group))
    finally:
        logger.removeHandler(handler)
    assert getattr(records[0], "error.type") == "harness.internal_error"


def test_retry_if_retryable_with_a_looping_group() -> None:
    """The tenacity condition answers (not retryable: the members are bugs)."""
    pytest.importorskip("tenacity")
    import tenacity

    from normalize_errors.retry import retry_if_retryable

    calls: list[int] = []

    def call() -> None:
        calls.append(1)
        raise looped(RuntimeError("a"), KeyError("b"))

    retrying = tenacity.Retrying(
        retry=retry_if_retryable, stop=tenacity.stop_after_attempt(3), reraise=True
    )
    with pytest.raises(ExceptionGroup):
        within(lambda: retrying(call))
    assert calls == [1]


def test_record_error_with_a_looping_group() -> None:
    """``record_error`` marks the span failed with the group's answer."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from normalize_errors.bindings.otel import record_error

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("tests").start_as_current_span("call") as span:
        within(lambda: record_error(span, looped(RuntimeError("a"), KeyError("b"))))
    (finished,) = exporter.get_finished_spans()
    assert (finished.attributes or {})["error.type"] == "harness.internal_error"


def test_mcp_tool_errors_with_a_looping_group() -> None:
    """A tool that raises a looping group gives its tool execution error."""
    pytest.importorskip("mcp.server.mcpserver")
    from normalize_errors.bindings.mcp import tool_errors

    @tool_errors
    def tool() -> str:
        raise looped(RuntimeError("a"), KeyError("b"))

    result: Any = within(tool)
    assert result.is_error is True


# -- the property: random group / cause / context graphs, cycles included -------------------------

LEAVES: list[Callable[[int], BaseException]] = [
    lambda i: RuntimeError(f"r{i}"),
    lambda i: KeyError(f"k{i}"),
    lambda i: TimeoutError(f"t{i}"),
    lambda i: UpstreamRateLimitedError(f"l{i}", retry_after=1),
]


@st.composite
def graphs(draw: st.DrawFn) -> BaseException:
    """Up to 8 exceptions: leaves, and groups of earlier ones (shared, up to 17 times);
    every ``__cause__`` and ``__context__`` points anywhere (itself and later groups
    included), so chains loop through groups and groups through chains."""
    size = draw(st.integers(1, 8))
    nodes: list[BaseException] = []
    for i in range(size):
        grouped = draw(st.booleans())
        if nodes and grouped:
            members = draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=17))
            nodes.append(BaseExceptionGroup(f"g{i}", members))
        else:
            nodes.append(draw(st.sampled_from(LEAVES))(i))
    links = st.one_of(st.none(), st.sampled_from(nodes))
    for node in nodes:
        node.__cause__ = draw(links)
        node.__context__ = draw(links)
        node.__suppress_context__ = draw(st.booleans())
    return nodes[-1]


@contextmanager
def counting() -> Iterator[list[int]]:
    """Count the exceptions ``normalize`` reads (each call of ``_facade._known``)."""
    calls: list[int] = []
    real = _facade._known

    def known(*args: Any) -> HarnessError | None:
        calls.append(1)
        return real(*args)

    with mock.patch.object(_facade, "_known", known):
        yield calls


@settings(max_examples=examples(150), deadline=None)
@given(graphs())
def test_normalize_of_any_group_graph_returns_within_its_budget(root: BaseException) -> None:
    """Whatever the graph, ``normalize`` returns a valid error, reading a bounded number of
    exceptions: the shared budget, plus the first members read once it is spent."""
    with counting() as calls:
        err = within(lambda: timed("normalize", lambda: normalize(root), root))
    valid(err)
    assert err is root or err.__cause__ is not None
    assert len(calls) <= 2 * MAX_WALK + 16
