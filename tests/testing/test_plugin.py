"""The pytest plugin, run the way users run it: test projects under pytest's own pytester.

Each SDK (openai, anthropic, google-genai, plain httpx) is driven sync and async, raw and
wrapped: a retry loop that builds its own client recovers from scripted failures (that test
must pass) and gives up when they outlast it (that test must fail, with the vendor's or the
harness's error in the report).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import anthropic
import httpx
import openai
import pytest
from google import genai

from normalize_errors.testing import Faults

pytest_plugins = ["pytester"]


@dataclass(frozen=True)
class Sdk:
    """How a test project builds and calls one SDK's client."""

    imports: str
    client: str
    aclient: str
    call: str
    acall: str
    text: str
    failure: str
    raw_error: str
    raw_report: str
    wrapped_error: str


SDKS = {
    "openai": Sdk(
        imports="import openai",
        client="openai.OpenAI(api_key='sk-test', max_retries=0)",
        aclient="openai.AsyncOpenAI(api_key='sk-test', max_retries=0)",
        call="client.chat.completions.create(model='gpt-4o-mini', messages=MESSAGES)",
        acall="await client.chat.completions.create(model='gpt-4o-mini', messages=MESSAGES)",
        text="result.choices[0].message.content",
        failure="openai/rate_limit_tpm_429",
        raw_error="openai.RateLimitError",
        raw_report="openai.RateLimitError: Error code: 429*",
        wrapped_error="UpstreamRateLimitedError",
    ),
    "anthropic": Sdk(
        imports="import anthropic",
        client="anthropic.Anthropic(api_key='sk-ant-test', max_retries=0)",
        aclient="anthropic.AsyncAnthropic(api_key='sk-ant-test', max_retries=0)",
        call="client.messages.create(model='claude-sonnet-4-6', max_tokens=64, messages=MESSAGES)",
        acall=(
            "await client.messages.create("
            "model='claude-sonnet-4-6', max_tokens=64, messages=MESSAGES)"
        ),
        text="result.content[0].text",
        failure="anthropic/overloaded_529",
        raw_error="anthropic.APIStatusError",
        # "Error code: 529 - {...}"; from anthropic 2.17 "529 Overloaded (request_id: ...)"
        raw_report="anthropic.*Error: *529*",
        wrapped_error="UpstreamOverloadedError",
    ),
    "google": Sdk(
        imports="from google import genai\nfrom google.genai import errors",
        client="genai.Client(api_key='test-key')",
        aclient="genai.Client(api_key='test-key').aio",
        call="client.models.generate_content(model='gemini-2.5-flash', contents='Hello')",
        acall=("await client.models.generate_content(model='gemini-2.5-flash', contents='Hello')"),
        text="result.text",
        failure="google/overloaded_503",
        raw_error="errors.ServerError",
        raw_report="google.genai.errors.ServerError: 503 UNAVAILABLE*",
        wrapped_error="UpstreamOverloadedError",
    ),
    "httpx": Sdk(
        imports="import httpx",
        client="httpx.Client()",
        aclient="httpx.AsyncClient()",
        call=(
            "client.post('https://llm.internal/v1/generate', json={'prompt': 'Hello'})"
            ".raise_for_status()"
        ),
        acall=(
            "(await client.post('https://llm.internal/v1/generate', json={'prompt': 'Hello'}))"
            ".raise_for_status()"
        ),
        text="'Hello!' if result.json() == {} else result.json()",
        failure="503, headers={'retry-after': '2'}, body='upstream connect error'",
        raw_error="httpx.HTTPStatusError",
        raw_report="httpx.HTTPStatusError: Server error '503 Service Unavailable'*",
        wrapped_error="UpstreamUnavailableError",
    ),
}


# Imported here so that pytester's in-process runs find them loaded: it restores
# sys.modules after each run, and would otherwise import every SDK again, each time.
LOADED = (anthropic, httpx, openai, genai)


def project(sdk: Sdk, mode: str, wrapped: bool) -> str:
    """A user's test file: a retry loop around a client it builds, and two tests."""
    catch = sdk.wrapped_error if wrapped else sdk.raw_error
    client = sdk.aclient if mode == "async" else sdk.client
    build = f"wrap({client})" if wrapped else client
    failure = sdk.failure if sdk.failure[0].isdigit() else repr(sdk.failure)
    if mode == "async":
        loop = f"""
            async def ask():
                client = {build}
                for attempt in range(3):
                    try:
                        return {sdk.acall}
                    except {catch}:
                        if attempt == 2:
                            raise
                        await asyncio.sleep(2**attempt)

            def run():
                return asyncio.run(ask())
        """
    else:
        loop = f"""
            def run():
                client = {build}
                for attempt in range(3):
                    try:
                        return {sdk.call}
                    except {catch}:
                        if attempt == 2:
                            raise
                        time.sleep(2**attempt)
        """
    tests = f"""
        def test_recovers_after_two_failures(llm_faults):
            llm_faults.fail({failure}, times=2)
            result = run()
            assert {sdk.text} == "Hello!"
            assert llm_faults.calls == 3
            assert llm_faults.waits == [1.0, 2.0]
            assert "Hello" in llm_faults.requests[0].content.decode()

        def test_gives_up_after_three(llm_faults):
            llm_faults.fail({failure}, times=3)
            run()
    """
    head = textwrap.dedent(
        """
        import asyncio
        import time

        IMPORTS
        from normalize_errors import *

        MESSAGES = [{"role": "user", "content": "Hello"}]
        """
    ).replace("IMPORTS", sdk.imports)
    return head + textwrap.dedent(loop) + textwrap.dedent(tests)


@pytest.fixture(scope="module", autouse=True)
def _loaded() -> None:
    """Run every project's passing test once here, so the modules its calls load stay loaded.

    pytester restores ``sys.modules`` after each in-process run; what was loaded before it
    started stays, which makes the runs below several times faster.
    """
    for sdk in SDKS.values():
        for mode in ("sync", "async"):
            for wrapped in (False, True):
                space: dict[str, object] = {}
                exec(compile(project(sdk, mode, wrapped), "warm.py", "exec"), space)
                with Faults() as faults:
                    space["test_recovers_after_two_failures"](faults)  # type: ignore[operator]


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw", "wrapped"])
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("name", sorted(SDKS))
def test_a_project_passes_and_fails_as_it_should(
    pytester: pytest.Pytester, name: str, mode: str, wrapped: bool
) -> None:
    """The recovery test passes; the give-up test fails with the right error."""
    sdk = SDKS[name]
    pytester.makepyfile(test_retry=project(sdk, mode, wrapped))
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio")
    result.assert_outcomes(passed=1, failed=1)
    report = f"*{sdk.wrapped_error}*" if wrapped else sdk.raw_report
    result.stdout.fnmatch_lines(
        [f"E *{report}", "FAILED test_retry.py::test_gives_up_after_three*"]
    )
