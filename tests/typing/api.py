"""Never run: type checkers check that the public API keeps the types users rely on."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, assert_type

import anthropic
import openai

from normalize_errors import (
    CODES,
    HarnessError,
    StreamSummary,
    UpstreamRateLimitedError,
    check,
    diagnose,
    from_response,
    normalize,
    normalized,
    wrap,
)
from normalize_errors.replay import catalog, find
from normalize_errors.testing import Faults, Reply, Request


def wrapped_clients_keep_their_type() -> None:
    """wrap(client: T) -> T."""
    assert_type(wrap(openai.OpenAI(api_key="x")), openai.OpenAI)
    assert_type(wrap(anthropic.AsyncAnthropic(api_key="x")), anthropic.AsyncAnthropic)
    assert_type(wrap(openai.OpenAI(api_key="x"), dropin=False), openai.OpenAI)
    assert_type(wrap(openai.OpenAI(api_key="x"), stream_text=4096), openai.OpenAI)


def entry_points() -> None:
    """What the entry points return."""
    assert_type(normalize(ValueError()), HarnessError)
    assert_type(from_response(429, {}, b""), HarnessError)
    assert_type(diagnose({}), HarnessError | None)
    result: dict[str, list[object]] = {"choices": []}
    assert_type(check(result), dict[str, list[object]])
    assert_type(CODES["upstream.rate_limited"].retryable, bool)
    assert_type(UpstreamRateLimitedError().retry_after, float | None)
    assert_type(UpstreamRateLimitedError().problem, HarnessError)
    assert_type(UpstreamRateLimitedError().problem.code, str)
    assert_type(UpstreamRateLimitedError().stream, StreamSummary | None)
    summary = UpstreamRateLimitedError().stream
    if summary is not None:
        assert_type(summary.get("chunks"), int | None)


@normalized
def plain(x: int) -> str:
    """A decorated function keeps its signature."""
    return str(x)


@normalized(provider="openai")
async def later(x: int) -> int:
    """So does an async one, with arguments."""
    return x


@normalized(dropin=False)
def undropped(x: int) -> bytes:
    """And one that raises plain harness errors."""
    return bytes(x)


async def decorators_are_transparent() -> None:
    """The decorated functions' types are unchanged."""
    assert_type(plain(1), str)
    assert_type(undropped(1), bytes)
    call: Callable[[int], Coroutine[Any, Any, int]] = later
    assert_type(await call(1), int)


def bindings_for_the_wire(err: HarnessError) -> None:
    """UHP, site errors, public HTTP and OpenTelemetry."""
    from opentelemetry.trace import INVALID_SPAN

    from normalize_errors.bindings.http import public_problem, to_http
    from normalize_errors.bindings.otel import log_fields, record_error
    from normalize_errors.bindings.site import from_site_error
    from normalize_errors.bindings.uhp import from_envelope, to_envelope

    assert_type(to_envelope(err), tuple[int, dict[str, str], bytes])
    assert_type(from_envelope(429, {}, b"{}"), HarnessError)
    assert_type(from_site_error(429, {}, b"{}"), HarnessError)
    assert_type(to_http(err, public=True), tuple[int, dict[str, str], bytes])
    assert_type(public_problem(err), dict[str, Any])
    assert_type(record_error(INVALID_SPAN, err), None)
    assert_type(log_fields(err), dict[str, Any])


async def retries_keep_the_result_type() -> None:
    """retrying()(fn, ...) returns what fn returns; async_retrying()(fn) is awaited to it."""
    from normalize_errors.retry import async_retrying, repair, retrying

    def number(x: int) -> int:
        return x

    async def later(x: int) -> str:
        return str(x)

    assert_type(retrying()(number, 1), int)
    assert_type(await async_retrying()(later, 1), str)
    assert_type(repair(lambda feedback: 1.5), float)


def fault_injection() -> None:
    """The testing API: the script returns the injector, the records have their types."""
    with Faults() as faults:
        assert_type(faults.fail("anthropic/overloaded_529", times=2), Faults)
        assert_type(faults.fail(429, headers={"retry-after": "1"}, body={}), Faults)
        assert_type(faults.succeed().cut_stream(after=1), Faults)
        assert_type(faults.requests[0], Request)
        assert_type(faults.waits, list[float])
        assert_type(faults.calls, int)
    assert_type(Reply.from_cassette("openai/overloaded_503"), list[Reply])
    assert_type(find("anthropic/overloaded_529"), Path)
    assert_type(catalog(), list[dict[str, Any]])


async def resilience_keeps_the_result_type() -> None:
    """breaker.call / acall and fallback / afallback return what the callables return."""
    from normalize_errors.resilience import (
        Budget,
        CircuitBreaker,
        FallbackPlan,
        afallback,
        fallback,
    )
    from normalize_errors.retry import retrying

    def number(x: int) -> int:
        return x

    async def later(x: int) -> str:
        return str(x)

    breaker = CircuitBreaker()
    assert_type(breaker.call("k", number, 1), int)
    assert_type(await breaker.acall("k", later, 1), str)
    assert_type(breaker.is_open("k"), bool)
    with Budget(attempts=5, seconds=60.0) as budget:
        assert_type(fallback(lambda: number(1), lambda: number(2), budget=budget), int)
        assert_type(retrying(budget=budget, idempotent=True)(number, 1), int)
    assert_type(await afallback(lambda: later(1)), str)
    plan = FallbackPlan(["a", "b"], on={"context.window_exceeded": ["b"]}, check_results=True)
    assert_type(plan.call({"a": lambda: number(1), "b": lambda: number(2)}), int)
    assert_type(await plan.acall({"a": lambda: later(1), "b": lambda: later(2)}), str)
    assert_type(plan.next(ValueError("x"), ["a"]), str | None)
    assert_type(retrying(non_idempotent=True)(number, 1), int)
    assert_type(fallback(lambda: number(1), non_idempotent=True, check_results=True), int)
    shared = CircuitBreaker(tenant="acme", failure_rate_threshold=50.0, half_open_calls=2)
    assert_type(shared.storage_key("k"), str | None)
    assert_type((await shared.astate("k")).name, str)
