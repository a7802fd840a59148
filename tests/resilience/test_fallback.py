"""fallback(): the next provider when another may succeed, through the real SDK clients."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import openai
import pytest

from normalize_errors import HarnessError, wrap
from normalize_errors.resilience import CircuitBreaker, afallback, fails_over, fallback
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


def ask_gpt(gpt: openai.OpenAI) -> str:
    completion = gpt.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)
    return completion.choices[0].message.content or ""


def ask_claude(claude: anthropic.Anthropic) -> str:
    message = claude.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=QUESTION)
    block = message.content[0]
    assert block.type == "text"
    return block.text


def test_a_spent_openai_quota_fails_over_at_once() -> None:
    with Faults() as faults:
        faults.fail("openai/insufficient_quota_429")
        gpt, claude = clients()
        answer = fallback(
            lambda: retrying(attempts=3)(ask_gpt, gpt),  # not retryable: no retry, no wait
            lambda: ask_claude(claude),
        )
        assert answer == "Hello!"
        assert [request.api for request in faults.requests] == ["chat", "messages"]
        assert faults.waits == []


@pytest.mark.parametrize(
    "cassette",
    ["openai/overloaded_503", "openai/invalid_api_key_401", "openai/rate_limit_tpm_429"],
)
def test_provider_trouble_fails_over(cassette: str) -> None:
    with Faults() as faults:
        faults.fail(cassette)
        gpt, claude = clients()
        assert fallback(lambda: ask_gpt(gpt), lambda: ask_claude(claude)) == "Hello!"
        assert faults.calls == 2


@pytest.mark.parametrize(
    "cassette",
    ["openai/context_length_exceeded_400", "openai/unsupported_parameter_400"],
)
def test_a_wrong_request_is_raised_at_once(cassette: str) -> None:
    with Faults() as faults:
        faults.fail(cassette)
        gpt, claude = clients()
        err = failed(lambda: fallback(lambda: ask_gpt(gpt), lambda: ask_claude(claude)))
        assert faults.calls == 1
    assert not fails_over(err)
    assert is_instance(err, openai.BadRequestError)  # the drop-in, as raised
    assert err.causes == []


def test_every_attempts_error_is_kept_in_causes() -> None:
    with Faults() as faults:
        faults.fail("openai/overloaded_503").fail("anthropic/overloaded_529")
        faults.fail("openai/insufficient_quota_429")
        gpt, claude = clients()
        err = failed(
            lambda: fallback(lambda: ask_gpt(gpt), lambda: ask_claude(claude), lambda: ask_gpt(gpt))
        )
        assert faults.calls == 3
    problem = err.problem
    assert is_instance(err, openai.RateLimitError)  # the last one, still the vendor's class
    assert (problem.code, problem.attempts) == ("upstream.rate_limited", 3)
    assert [cause.problem.code for cause in problem.causes] == [
        "upstream.overloaded",  # anthropic's 529, most recent first
        "upstream.overloaded",  # openai's 503
    ]
    assert problem.causes[0].problem.upstream["status"] == 529
    assert problem.to_dict()["causes"][1]["upstream"]["status"] == 503


def test_an_open_breaker_fails_over_without_a_request(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, clock=clock)
    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        gpt, claude = clients()

        def first() -> str:
            return breaker.call("openai", ask_gpt, gpt)

        assert fallback(first, lambda: ask_claude(claude)) == "Hello!"  # 503, then Claude
        assert fallback(first, lambda: ask_claude(claude)) == "Hello!"  # open: Claude at once
        assert [request.api for request in faults.requests] == ["chat", "messages", "messages"]


def test_afallback_with_the_async_clients() -> None:
    async def main() -> str:
        gpt = wrap(openai.AsyncOpenAI(api_key="sk-offline", max_retries=0))
        claude = wrap(anthropic.AsyncAnthropic(api_key="sk-ant-offline", max_retries=0))

        async def first() -> Any:
            return await gpt.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)

        async def second() -> Any:
            return await claude.messages.create(
                model="claude-sonnet-4-6", max_tokens=8, messages=QUESTION
            )

        message = await afallback(first, second)
        return str(message.content[0].text)

    with Faults() as faults:
        faults.fail("openai/insufficient_quota_429")
        assert asyncio.run(main()) == "Hello!"
        assert faults.calls == 2


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least one"):
        fallback()
    with pytest.raises(TypeError, match="callables"):
        fallback("not callable")  # type: ignore[arg-type]


def test_a_plain_exception_is_read_and_raised_as_a_harness_error() -> None:
    def bug() -> str:
        raise KeyError("bug")

    err = failed(lambda: fallback(bug, lambda: "unused"))
    assert isinstance(err, HarnessError)
    assert err.code == "harness.internal_error"
    assert isinstance(err.__cause__, KeyError)
