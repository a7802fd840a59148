"""FallbackPlan: a target per kind of failure, keyed on the harness code and declared as data
(issue 38, item 8), and the fallback on a 200 that means failure (``check_results``, item 9),
through the real SDK clients replaying the shipped cassettes."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import openai
import pytest

from normalize_errors import HarnessError, wrap
from normalize_errors.resilience import FallbackPlan, fallback, moves_on
from normalize_errors.testing import Faults

from ..support import is_instance
from .helpers import failed

QUESTION: Any = [{"role": "user", "content": "Hello?"}]

PLAN = FallbackPlan(
    ["gpt", "claude"],
    on={
        "context.window_exceeded": ["gpt-long"],  # a model with a larger window
        "policy.content_filtered": ["claude"],  # another vendor's policy
        "upstream.rate_limited:not_retryable": ["gpt-quota"],  # a spent quota: another key
        "upstream.authentication_failed": [],  # a failed credential: nobody
    },
)


def answer(result: Any) -> str:
    """The text of a chat completion or a Messages result."""
    if hasattr(result, "choices"):
        return str(result.choices[0].message.content)
    return str(result.content[0].text)


def targets(check: bool = True) -> dict[str, Any]:
    gpt = wrap(openai.OpenAI(api_key="sk-offline", max_retries=0), check=check)
    quota = wrap(openai.OpenAI(api_key="sk-offline-2", max_retries=0), check=check)
    claude = wrap(anthropic.Anthropic(api_key="sk-ant-offline", max_retries=0), check=check)

    def chat(client: openai.OpenAI, model: str) -> Any:
        return lambda: client.chat.completions.create(model=model, messages=QUESTION)

    return {
        "gpt": chat(gpt, "gpt-4o-mini"),
        "gpt-long": chat(gpt, "gpt-4.1"),
        "gpt-quota": chat(quota, "gpt-4o-mini"),
        "claude": lambda: claude.messages.create(
            model="claude-sonnet-4-6", max_tokens=64, messages=QUESTION
        ),
    }


def sent(faults: Faults) -> list[str]:
    """Each request as ``api:model`` (the quota key's requests marked ``+quota``)."""
    out = []
    for request in faults.requests:
        label = f"{request.api}:{request.json()['model']}"
        if request.headers.get("authorization", "").endswith("-2"):
            label += "+quota"
        out.append(label)
    return out


@pytest.mark.parametrize(
    ("cassette", "route"),
    [
        # a context overflow goes to the model with the larger window
        ("openai/context_length_exceeded_400", ["chat:gpt-4o-mini", "chat:gpt-4.1"]),
        # a content filter to another vendor
        ("openai/invalid_prompt_flagged_400", ["chat:gpt-4o-mini", "messages:claude-sonnet-4-6"]),
        # a spent quota to the quota fallback (another key), a rate limit to the next provider
        ("openai/insufficient_quota_429", ["chat:gpt-4o-mini", "chat:gpt-4o-mini+quota"]),
        ("openai/rate_limit_tpm_429", ["chat:gpt-4o-mini", "messages:claude-sonnet-4-6"]),
        # an overload to the next provider in order
        ("openai/overloaded_503", ["chat:gpt-4o-mini", "messages:claude-sonnet-4-6"]),
    ],
)
def test_each_kind_of_failure_goes_where_the_plan_says(cassette: str, route: list[str]) -> None:
    with Faults() as faults:
        faults.fail(cassette)
        assert answer(PLAN.call(targets())) == "Hello!"
        assert sent(faults) == route


@pytest.mark.parametrize(
    ("cassette", "code"),
    [
        ("openai/unsupported_parameter_400", "upstream.invalid_request"),  # wrong anywhere
        ("openai/invalid_api_key_401", "upstream.authentication_failed"),  # the plan: nobody
    ],
)
def test_a_bad_request_or_a_failed_credential_goes_nowhere(cassette: str, code: str) -> None:
    with Faults() as faults:
        faults.fail(cassette)
        err = failed(lambda: PLAN.call(targets()))
        assert faults.calls == 1
    assert err.problem.code == code
    assert is_instance(err, openai.APIStatusError)  # the drop-in, as the SDK raised it
    assert [entry["target"] for entry in err.problem.extensions["attempt_log"]] == ["gpt"]


def test_each_target_is_tried_once_and_the_last_error_surfaces() -> None:
    with Faults() as faults:
        faults.fail("openai/context_length_exceeded_400", times=2)
        faults.fail("anthropic/overloaded_529")
        err = failed(lambda: PLAN.call(targets()))
        assert sent(faults) == ["chat:gpt-4o-mini", "chat:gpt-4.1"]  # gpt-long overflowed too
    assert err.problem.code == "context.window_exceeded"
    assert err.problem.attempts == 2
    log = err.problem.extensions["attempt_log"]
    assert [entry["target"] for entry in log] == ["gpt", "gpt-long"]


def test_the_plan_is_data_and_checked() -> None:
    with pytest.raises(ValueError, match="registered harness code"):
        FallbackPlan(["a"], on={"context.too_long": ["b"]})
    with pytest.raises(ValueError, match="qualifier"):
        FallbackPlan(["a"], on={"upstream.rate_limited:spent": ["b"]})
    with pytest.raises(ValueError, match="category"):
        FallbackPlan(["a"], on={"billing.*": ["b"]})
    with pytest.raises(ValueError, match="no callable"):
        PLAN.call({"gpt": lambda: None})
    plan = FallbackPlan(["a", "b"], on={"policy.*": ["c"], "*": []})
    assert plan.route(HarnessError.from_code("policy.model_refusal")) == ("c",)
    assert plan.route(HarnessError.from_code("upstream.overloaded")) == ()
    assert PLAN.next(HarnessError.from_code("upstream.overloaded"), ["gpt"]) == "claude"
    assert "context.window_exceeded" in repr(PLAN)


def test_the_async_plan() -> None:
    async def main() -> str:
        gpt = wrap(openai.AsyncOpenAI(api_key="sk-offline", max_retries=0))
        claude = wrap(anthropic.AsyncAnthropic(api_key="sk-ant-offline", max_retries=0))

        async def ask_gpt() -> Any:
            return await gpt.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)

        async def ask_claude() -> Any:
            return await claude.messages.create(
                model="claude-sonnet-4-6", max_tokens=8, messages=QUESTION
            )

        plan = FallbackPlan(["gpt", "claude"])
        return answer(await plan.acall({"gpt": ask_gpt, "claude": ask_claude}))

    with Faults() as faults:
        faults.fail("openai/overloaded_503")
        assert asyncio.run(main()) == "Hello!"
        assert faults.calls == 2


# -- a 200 that means failure (item 9) -----------------------------------------------------------


@pytest.mark.parametrize(
    "cassette",
    [
        "openai/refusal_structured_output_200",  # message.refusal
        "openai/finish_length_empty_reasoning_200",  # length, every token on reasoning
        "anthropic/refusal_stop_details",  # stop_reason: refusal
    ],
)
def test_check_results_falls_back_on_a_200_that_means_failure(cassette: str) -> None:
    """Over raw clients (``check=False``): the fallback checks each result itself."""
    calls = targets(check=False)
    first, second = ("gpt", "claude") if cassette.startswith("openai") else ("claude", "gpt")
    with Faults() as faults:
        faults.fail(cassette)
        result = fallback(calls[first], calls[second], check_results=True)
        assert answer(result) == "Hello!"
        assert faults.calls == 2

    with Faults() as faults:  # without it, the 200 is the answer
        faults.fail(cassette)
        fallback(calls[first], calls[second])
        assert faults.calls == 1


def test_a_length_stop_with_usable_output_is_raised_not_thrown_away() -> None:
    with Faults() as faults:
        faults.fail("openai/finish_length_200")  # 50 tokens of text: usable, cut short
        calls = targets(check=False)
        err = failed(lambda: fallback(calls["gpt"], calls["claude"], check_results=True))
        assert faults.calls == 1
    assert err.problem.code == "output.truncated"
    assert err.problem.upstream["usable_output"] is True
    assert err.result is not None  # the partial answer, for the caller


def test_check_results_with_wrapped_clients_and_a_plan() -> None:
    """A wrapped client raises the refusal itself; ``check_results`` lets it move on."""
    plan = FallbackPlan(["gpt", "claude"], check_results=True)
    with Faults() as faults:
        faults.fail("openai/refusal_structured_output_200")
        assert answer(plan.call(targets())) == "Hello!"
        assert faults.calls == 2
    refusal = HarnessError.from_code("policy.model_refusal")
    assert moves_on(refusal, check_results=True)
    assert not moves_on(refusal)
