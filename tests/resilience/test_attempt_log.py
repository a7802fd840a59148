"""Every attempt on the final error, which error surfaces when all fail, and a span per
attempt under the operation's span (issue 38, item 11), through the real SDK clients."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from normalize_errors import wrap
from normalize_errors.resilience import CircuitBreaker, fallback
from normalize_errors.retry import retrying
from normalize_errors.testing import Faults

from ..support import is_instance
from .helpers import Clock, failed

QUESTION: Any = [{"role": "user", "content": "Hello?"}]


def clients() -> tuple[openai.OpenAI, anthropic.Anthropic]:
    return (
        wrap(openai.OpenAI(api_key="sk-offline", max_retries=0)),
        wrap(anthropic.Anthropic(api_key="sk-ant-offline", max_retries=0)),
    )


def run(
    gpt: openai.OpenAI, claude: anthropic.Anthropic, breaker: CircuitBreaker | None = None
) -> Any:
    """A fallback over two retried providers, as a service would write it."""

    def ask_gpt() -> Any:
        create = gpt.chat.completions.create
        if breaker is None:
            return create(model="gpt-4o-mini", messages=QUESTION)
        return breaker.call("openai", create, model="gpt-4o-mini", messages=QUESTION)

    return fallback(
        lambda: retrying(attempts=2, sleep=lambda s: None)(ask_gpt),
        lambda: retrying(attempts=2, sleep=lambda s: None)(
            claude.messages.create, model="claude-sonnet-4-6", max_tokens=8, messages=QUESTION
        ),
    )


def test_every_attempt_is_on_the_final_error() -> None:
    with Faults() as faults:
        faults.fail("openai/overloaded_503").fail("openai/server_error_500")
        faults.fail("anthropic/overloaded_529").fail("anthropic/api_error_500")
        err = failed(lambda: run(*clients()))
        assert faults.calls == 4
    log = err.problem.extensions["attempt_log"]
    assert [(e["target"], e["provider"], e["code"], e["status"]) for e in log] == [
        (1, "openai", "upstream.overloaded", 503),
        (1, "openai", "upstream.unavailable", 500),
        (2, "anthropic", "upstream.overloaded", 529),
        (2, "anthropic", "upstream.unavailable", 500),
    ]
    assert all(e["sent"] and not e["output_reached"] for e in log)
    assert all(0.0 <= e["seconds"] < 30.0 for e in log)
    assert err.to_dict()["attempt_log"] == log  # in the problem details object too


def test_the_last_attempts_error_surfaces_whole() -> None:
    """Never one attempt's status with another's message: code, status, detail, vendor class
    and request id all come from the last attempt."""
    with Faults() as faults:
        faults.fail("openai/overloaded_503", times=2).fail("anthropic/overloaded_529", times=2)
        err = failed(lambda: run(*clients()))
    problem = err.problem
    assert is_instance(err, anthropic.APIStatusError)
    assert err.status_code == 529  # type: ignore[attr-defined]
    assert problem.upstream["status"] == 529
    assert problem.upstream["provider"] == "anthropic"
    assert "overloaded" in (problem.detail or "").lower()
    assert problem.extensions["attempt_log"][-1]["status"] == 529
    assert [cause.problem.upstream["status"] for cause in problem.causes] == [529, 503]
    assert problem.attempts == 2  # the two providers the fallback tried


def test_a_breaker_refusal_is_logged_as_sent_nothing(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, clock=clock)
    with Faults() as faults:
        faults.fail("openai/overloaded_503").fail("anthropic/overloaded_529", times=2)
        err = failed(lambda: run(*clients(), breaker=breaker))
        assert faults.calls == 3  # OpenAI once (then its breaker refused), Anthropic twice
    log = err.problem.extensions["attempt_log"]
    assert [(e["code"], e["sent"]) for e in log] == [
        ("upstream.overloaded", True),
        ("upstream.unavailable", False),
        ("upstream.overloaded", True),
        ("upstream.overloaded", True),
    ]
    assert log[1]["breaker"] == "openai"
    assert "provider" not in log[1]


def test_output_that_reached_the_caller_is_logged() -> None:
    def streamed(client: openai.OpenAI) -> str:
        stream = client.chat.completions.create(model="gpt-4o-mini", messages=QUESTION, stream=True)
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    with Faults() as faults:
        faults.cut_stream(after=2)
        gpt, _ = clients()
        err = failed(lambda: retrying(attempts=3, sleep=lambda s: None)(streamed, gpt))
    (entry,) = err.problem.extensions["attempt_log"]
    assert (entry["output_reached"], entry["sent"]) == (True, True)


# -- spans ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spans() -> Iterator[Any]:
    """The process's tracer provider: an SDK one whose spans go to a list (set once)."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    if trace.get_tracer_provider() is not provider:
        pytest.skip("another test set the global tracer provider first")
    yield exporter
    provider.shutdown()  # the provider stays global; from now on it keeps nothing
    exporter.clear()


def ours(spans: Any) -> list[Any]:
    """The spans of the test and of the helpers (the anthropic SDK adds its own)."""
    return [
        span
        for span in spans.get_finished_spans()
        if span.name == "answer the user" or span.name.endswith(" attempt")
    ]


def test_a_span_per_attempt_under_the_operations_span(spans: Any) -> None:
    from opentelemetry import trace
    from opentelemetry.trace import StatusCode

    spans.clear()
    tracer = trace.get_tracer("tests")
    with Faults() as faults:
        faults.fail("openai/overloaded_503", times=2)
        with tracer.start_as_current_span("answer the user"):
            run(*clients())
        assert faults.calls == 3
    finished = {span.context.span_id: span for span in ours(spans)}
    by_name = sorted(
        (span.name, dict(span.attributes or {}).get("harness.attempt.number"))
        for span in finished.values()
    )
    assert by_name == [
        ("answer the user", None),
        ("fallback attempt", 1),
        ("fallback attempt", 2),
        ("retry attempt", 1),
        ("retry attempt", 1),
        ("retry attempt", 2),
    ]
    operation = next(s for s in finished.values() if s.name == "answer the user")
    for span in finished.values():
        parent = span.parent.span_id if span.parent else None
        attributes = dict(span.attributes or {})
        if span.name == "fallback attempt":
            assert parent == operation.context.span_id
        elif span.name == "retry attempt":
            assert parent is not None
            assert finished[parent].name == "fallback attempt"
        if span.name != "answer the user" and span.status.status_code is StatusCode.ERROR:
            assert attributes["error.type"] == "upstream.overloaded"
            assert attributes["harness.attempt.sent"] is True
    failed_spans = [s for s in finished.values() if s.status.status_code is StatusCode.ERROR]
    assert len(failed_spans) == 3  # the two 503s, and the first fallback attempt they ended


def test_no_span_without_an_operation_span(spans: Any) -> None:
    spans.clear()
    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        run(*clients())
    assert ours(spans) == []
