"""normalize_errors.retry on real tenacity, around real SDK clients answering from memory.

Each client's transport serves a sequence of responses taken from shipped cassettes (the
real recorded status, headers and body); sleeping is recorded, never done.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import anthropic
import openai
import pytest
import tenacity

from normalize_errors import (
    HarnessError,
    OutputRetriesExhaustedError,
    UpstreamOverloadedError,
    UpstreamRateLimitedError,
    UpstreamUnavailableError,
    wrap,
)
from normalize_errors._wrapping._replay_calls import http_library
from normalize_errors.retry import (
    async_repair,
    async_retrying,
    repair,
    retry_if_retryable,
    retrying,
    wait_retry_after,
)

from .support import is_instance, raised, recorded, valid

MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]


class Served:
    """A mock transport answering request n with the n-th cassette response (the last repeats)."""

    def __init__(self, library: Any, *responses: tuple[str, str]) -> None:
        self.library = library
        self.responses = [recorded(provider, name) for provider, name in responses]
        self.requests = 0

    def answer(self, request: Any) -> Any:
        status, headers, body = self.responses[min(self.requests, len(self.responses) - 1)]
        self.requests += 1
        return self.library.Response(status, headers=headers, content=body)

    def transport(self) -> Any:
        return self.library.MockTransport(self.answer)

    def async_transport(self) -> Any:
        async def handler(request: Any) -> Any:
            return self.answer(request)

        return self.library.MockTransport(handler)


def openai_client(*responses: tuple[str, str]) -> tuple[openai.OpenAI, Served]:
    http = http_library("openai")
    served = Served(http, *responses)
    client = openai.OpenAI(
        api_key="sk-test", max_retries=0, http_client=http.Client(transport=served.transport())
    )
    return client, served


def retrying_call(client: Any, sleeps: list[float] | None = None, **bounds: Any) -> Any:
    log = sleeps if sleeps is not None else []
    return retrying(sleep=log.append, **bounds)(
        client.chat.completions.create, model="gpt-4o-mini", messages=MESSAGES
    )


OK = ("openai", "finish_length_200")


def test_a_429_with_retry_after_then_success_waits_what_the_server_said() -> None:
    """rate_limit_tpm_ms_429 (retry-after-ms) then a completion: one recorded wait of 0.976 s."""
    client, served = openai_client(("openai", "rate_limit_tpm_ms_429"), OK)
    sleeps: list[float] = []
    completion = retrying_call(client, sleeps)
    assert completion.choices[0].finish_reason == "length"
    assert sleeps == [pytest.approx(0.976)]
    assert served.requests == 2


def test_an_overload_sequence_backs_off_with_growing_jittered_waits() -> None:
    """Three 503 overloads then success on the fourth attempt; waits grow, none is slept."""
    client, served = openai_client(*[("openai", "overloaded_503")] * 3, OK)
    sleeps: list[float] = []
    completion = retrying_call(client, sleeps, attempts=4)
    assert completion.id
    assert served.requests == 4
    assert len(sleeps) == 3
    assert 1.0 <= sleeps[0] <= 2.0
    assert 2.0 <= sleeps[1] <= 3.0
    assert 4.0 <= sleeps[2] <= 5.0


def test_a_spent_quota_is_raised_at_once() -> None:
    """insufficient_quota 429: not retryable; one request, no wait, the typed error."""
    client, served = openai_client(("openai", "insufficient_quota_429"), OK)
    sleeps: list[float] = []
    err = raised(lambda: retrying_call(client, sleeps))
    assert isinstance(err, UpstreamRateLimitedError)
    assert err.retryable is False
    assert (served.requests, sleeps) == (1, [])
    assert isinstance(err.__cause__, openai.RateLimitError)


def test_a_server_that_always_says_retryable_is_stopped_by_the_bound() -> None:
    """500 forever: three attempts, then the last error with attempts=max_attempts=3."""
    client, served = openai_client(("openai", "server_error_500"))
    sleeps: list[float] = []
    err = valid(raised(lambda: retrying_call(client, sleeps, attempts=3)))
    assert isinstance(err, UpstreamUnavailableError)
    assert (err.attempts, err.max_attempts) == (3, 3)
    assert [c.code for c in err.causes] == ["upstream.unavailable"] * 2
    assert served.requests == 3
    assert len(sleeps) == 2
    assert isinstance(err.__cause__, openai.InternalServerError)


def test_the_total_time_bound_stops_before_a_wait_that_would_pass_it() -> None:
    """Retry-After 30 s with total=45: one wait fits, the second would not; it stops at two."""
    http = http_library("anthropic")
    served = Served(http, ("anthropic", "rate_limit_429"))
    client = anthropic.Anthropic(
        api_key="sk-ant-test", max_retries=0, http_client=http.Client(transport=served.transport())
    )
    clock = [0.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock[0] += seconds

    policy = retrying(attempts=10, total=45, sleep=sleep)
    start = time.monotonic()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("time.monotonic", lambda: start + clock[0])  # the clock tenacity reads
        err = raised(
            lambda: policy(
                client.messages.create,
                model="claude-sonnet-4-6",
                max_tokens=10,
                messages=MESSAGES,
            )
        )
    assert isinstance(err, UpstreamRateLimitedError)
    assert sleeps == [30.0]
    assert (err.attempts, err.max_attempts, err.retry_after) == (2, 10, 30.0)


def test_a_day_long_retry_after_is_raised_at_once_with_its_wait() -> None:
    """Azure's 'retry after 86400 seconds' is past the cap: no sleep, the error says when."""
    client, served = openai_client(("http", "azure_token_rate_limit_429"), OK)
    sleeps: list[float] = []
    err = raised(lambda: retrying_call(client, sleeps, cap=60))
    assert isinstance(err, UpstreamRateLimitedError)
    assert (err.retry_after, served.requests, sleeps) == (86400.0, 1, [])


def test_around_a_wrapped_client_the_drop_in_error_comes_out() -> None:
    """wrap(client): the raised error is the drop-in, caught by the vendor class too."""
    client, served = openai_client(("openai", "server_error_500"))
    err = raised(lambda: retrying_call(wrap(client), attempts=2))
    assert is_instance(err, openai.InternalServerError)
    assert isinstance(err, HarnessError)
    assert (err.attempts, err.max_attempts, served.requests) == (2, 2, 2)
    assert isinstance(err.problem.__cause__, openai.InternalServerError)  # the vendor's
    assert err.__cause__ is None  # the vendor exception's own cause (raised `from None`)
    assert err.__suppress_context__


def test_async_retrying_around_the_async_client() -> None:
    """AsyncOpenAI: overload then success, the wait recorded by an async sleep."""
    http = http_library("openai")
    served = Served(http, ("openai", "overloaded_503"), OK)
    client = openai.AsyncOpenAI(
        api_key="sk-test",
        max_retries=0,
        http_client=http.AsyncClient(transport=served.async_transport()),
    )
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def main() -> Any:
        policy = async_retrying(attempts=3, sleep=sleep)
        return await policy(client.chat.completions.create, model="m", messages=MESSAGES)

    assert asyncio.run(main()).id
    assert (served.requests, len(sleeps)) == (2, 1)

    served.responses = [recorded("openai", "server_error_500")]
    served.requests = 0

    async def always_failing() -> Any:
        return await async_retrying(attempts=2, sleep=sleep)(
            client.chat.completions.create, model="m", messages=MESSAGES
        )

    err = raised(lambda: asyncio.run(always_failing()))
    assert isinstance(err, UpstreamUnavailableError)
    assert (err.attempts, err.max_attempts) == (2, 2)


def test_repeated_output_errors_end_as_retries_exhausted() -> None:
    """output.empty is retryable: three empty outputs give output.retries_exhausted."""
    calls: list[int] = []

    def empty() -> None:
        calls.append(1)
        raise HarnessError.from_code("output.empty", f"nothing, try {len(calls)}")

    err = valid(raised(lambda: retrying(attempts=3, sleep=lambda s: None)(empty)))
    assert isinstance(err, OutputRetriesExhaustedError)
    assert (err.attempts, err.max_attempts) == (3, 3)
    assert [c.detail for c in err.causes] == ["nothing, try 3", "nothing, try 2", "nothing, try 1"]


def test_the_tenacity_parts_work_in_a_users_own_retrying() -> None:
    """retry_if_retryable and wait_retry_after plug into a plain tenacity.Retrying."""
    client, _served = openai_client(("openai", "rate_limit_tpm_429"), OK)
    sleeps: list[float] = []
    policy = tenacity.Retrying(
        retry=retry_if_retryable,
        wait=wait_retry_after(cap=10),
        stop=tenacity.stop_after_attempt(3),
        sleep=sleeps.append,
    )
    assert policy(client.chat.completions.create, model="m", messages=MESSAGES).id
    assert sleeps == [10.0]  # 26.604 s capped: the plain parts cap, retrying() would raise
    assert retry_if_retryable(_state(ValueError("bug"))) is False


def _state(exc: BaseException) -> tenacity.RetryCallState:
    state = tenacity.RetryCallState(tenacity.Retrying(), fn=None, args=(), kwargs={})
    try:
        raise exc
    except BaseException:
        state.set_exception(sys.exc_info())  # type: ignore[arg-type]
    return state


def test_bounds_must_be_positive() -> None:
    """attempts=0 or total=0 would be no bound at all: refused."""
    with pytest.raises(ValueError, match="attempts"):
        retrying(attempts=0)
    with pytest.raises(ValueError, match="total"):
        async_retrying(total=0)


def schema_error(attempt: int) -> HarnessError:
    return HarnessError.from_code(
        "output.schema_violation",
        f"age is not an integer (try {attempt})",
        model_feedback=f"Field /age must be an integer (try {attempt}).",
    )


def test_repair_hands_the_feedback_back_and_succeeds() -> None:
    """The first answer breaks the schema; the caller re-prompts with the feedback."""
    seen: list[str | None] = []

    def call(feedback: str | None) -> str:
        seen.append(feedback)
        if feedback is None:
            raise schema_error(1)
        return "fixed"

    assert repair(call) == "fixed"
    assert seen == [None, "Field /age must be an integer (try 1)."]


def test_repair_is_bounded_and_ends_in_retries_exhausted() -> None:
    """Never fixed: three calls, then output.retries_exhausted with the failures in causes."""
    seen: list[str | None] = []

    def call(feedback: str | None) -> str:
        seen.append(feedback)
        raise schema_error(len(seen))

    err = valid(raised(lambda: repair(call, attempts=3)))
    assert isinstance(err, OutputRetriesExhaustedError)
    assert (err.attempts, err.max_attempts, len(seen)) == (3, 3, 3)
    assert [c.code for c in err.causes] == ["output.schema_violation"] * 3
    assert "try 3" in (err.causes[0].detail or "")


def test_repair_raises_what_the_model_cannot_fix_at_once() -> None:
    """A spent quota is not the model's to fix: raised on the first call, typed."""
    client, served = openai_client(("openai", "insufficient_quota_429"))

    def call(feedback: str | None) -> Any:
        return client.chat.completions.create(model="m", messages=MESSAGES)

    err = raised(lambda: repair(call))
    assert isinstance(err, UpstreamRateLimitedError)
    assert served.requests == 1


def test_async_repair() -> None:
    """The coroutine flavour hands the feedback back the same way."""
    seen: list[str | None] = []

    async def call(feedback: str | None) -> str:
        seen.append(feedback)
        if len(seen) < 2:
            raise schema_error(len(seen))
        return "ok"

    assert asyncio.run(async_repair(call)) == "ok"
    assert seen[1] == "Field /age must be an integer (try 1)."


def test_retrying_overloaded_anthropic_then_success() -> None:
    """Anthropic 529 overloaded twice, then a message: two backoff waits."""
    http = http_library("anthropic")
    served = Served(
        http,
        ("anthropic", "overloaded_529"),
        ("anthropic", "overloaded_529"),
        ("anthropic", "finish_max_tokens"),
    )
    client = anthropic.Anthropic(
        api_key="sk-ant-test", max_retries=0, http_client=http.Client(transport=served.transport())
    )
    sleeps: list[float] = []
    message = retrying(sleep=sleeps.append)(
        client.messages.create, model="claude-sonnet-4-6", max_tokens=10, messages=MESSAGES
    )
    assert message.stop_reason == "max_tokens"
    assert len(sleeps) == 2
    assert served.requests == 3
    served.responses, served.requests = [recorded("anthropic", "overloaded_529")], 0
    err = raised(
        lambda: retrying(attempts=1)(
            client.messages.create, model="m", max_tokens=1, messages=MESSAGES
        )
    )
    assert isinstance(err, UpstreamOverloadedError)
    assert (err.attempts, err.max_attempts, served.requests) == (1, 1, 1)


def test_repair_raises_a_harness_error_it_cannot_repair_as_it_is() -> None:
    """A harness error raised inside (already typed, not the model's to fix) comes out as the
    same object."""
    spent = UpstreamRateLimitedError("quota spent", retryable=False)

    def call(feedback: str | None) -> str:
        raise spent

    assert raised(lambda: repair(call)) is spent


def test_repair_of_tool_failures_ends_in_retries_exhausted_too() -> None:
    """A tool failure the model can work around (it has feedback) is handed back; when it
    keeps failing, the loop ends in output.retries_exhausted with the failures as causes."""
    from normalize_errors import ToolExecutionFailedError

    seen: list[str | None] = []

    def call(feedback: str | None) -> str:
        seen.append(feedback)
        raise ToolExecutionFailedError(
            "get_weather failed: city not found",
            model_feedback="The tool get_weather failed: city not found. Try another city.",
        )

    err = valid(raised(lambda: repair(call, attempts=2)))
    assert isinstance(err, OutputRetriesExhaustedError)
    assert seen[1] is not None
    assert "get_weather" in seen[1]
    assert (err.attempts, err.max_attempts) == (2, 2)
    assert err.causes[0].code == "tool.execution_failed"


def a_drop_in() -> HarnessError:
    """A drop-in error as wrap(client) raises it (openai.InternalServerError too)."""
    client, _ = openai_client(("openai", "server_error_500"))
    wrapped = wrap(client)
    err = raised(lambda: wrapped.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES))
    assert isinstance(err, HarnessError)
    assert is_instance(err, openai.InternalServerError)
    return err


@pytest.mark.parametrize("kind", ["plain", "drop-in"])
def test_the_same_error_raised_on_every_attempt_is_not_its_own_cause(kind: str) -> None:
    """Issue 22, finding 12: a Mock(side_effect=err) (or a circuit breaker re-raising its
    stored error) raises one object each attempt. The final error renders (no
    RecursionError), lists the attempts, and the caller's object is left as it was."""
    from unittest.mock import Mock

    from normalize_errors.bindings.http import to_http

    err = UpstreamUnavailableError("Service unavailable.") if kind == "plain" else a_drop_in()
    before = err.to_dict()
    call = Mock(side_effect=err)
    top = raised(lambda: retrying(attempts=3, sleep=lambda seconds: None)(call))
    assert call.call_count == 3
    assert isinstance(top, HarnessError)
    assert top is not err
    if kind == "drop-in":  # still caught by the vendor's class
        assert is_instance(top, openai.InternalServerError)
    rendered = top.to_dict()
    assert top.to_json()
    status, _, body = to_http(top)
    assert status == 503
    assert body
    assert (rendered["attempts"], rendered["max_attempts"]) == (3, 3)
    assert len(rendered["causes"]) == 2  # the two earlier attempts
    assert all(cause["code"] == "upstream.unavailable" for cause in rendered["causes"])
    assert err.to_dict() == before  # the caller's object is not changed
    assert err.attempts == before.get("attempts")
    assert err.causes == []
    valid(top.problem)


def test_async_retrying_the_same_drop_in_each_attempt() -> None:
    """The async path of finding 12: the same drop-in each attempt renders and is unchanged."""
    err = a_drop_in()
    before = err.to_dict()

    async def sleep(seconds: float) -> None:
        return None

    async def call() -> Any:
        raise err

    top = raised(lambda: asyncio.run(async_retrying(attempts=2, sleep=sleep)(call)))
    assert isinstance(top, HarnessError)
    assert top is not err
    assert top.to_dict()["attempts"] == 2
    assert len(top.to_dict()["causes"]) == 1
    assert err.to_dict() == before


def test_async_retrying_raises_an_error_it_does_not_retry_at_once() -> None:
    """AsyncOpenAI answered with the shipped ``openai/invalid_api_key_401`` cassette: a wrong
    key is not retried: one request, the error raised as it came (its attempts counted);
    the async policy refuses ``idempotent`` with ``non_idempotent`` as the sync one does."""
    http = http_library("openai")
    served = Served(http, ("openai", "invalid_api_key_401"), OK)
    client = openai.AsyncOpenAI(
        api_key="sk-test",
        max_retries=0,
        http_client=http.AsyncClient(transport=served.async_transport()),
    )
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def main() -> Any:
        policy = async_retrying(attempts=3, sleep=sleep)
        return await policy(client.chat.completions.create, model="m", messages=MESSAGES)

    err = valid(raised(lambda: asyncio.run(main())))
    assert err.code == "upstream.authentication_failed"
    assert not err.retryable
    assert (served.requests, sleeps, err.attempts) == (1, [], 1)
    with pytest.raises(ValueError, match="not both"):
        async_retrying(idempotent=True, non_idempotent=True)
