"""Wrapped clients shared by many threads and many asyncio tasks give correct, unmixed errors.

One wrapped client serves every caller; each caller asks for a different failure, taken
from the shipped cassettes, and must get exactly its own typed error back (code, detail,
request id). This exercises the caches a wrapped client relies on (drop-in classes, value
kinds, redaction) under contention.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai

from normalize_errors import HarnessError, wrap
from normalize_errors._wrapping._replay_calls import http_library

from .support import cassette

CASES = [
    "rate_limit_tpm_429",
    "insufficient_quota_429",
    "context_length_exceeded_400",
    "server_error_500",
    "overloaded_503",
    "invalid_api_key_401",
    "model_not_found_404",
    "unsupported_country_403",
]
RESPONSES = {name: cassette(f"openai/{name}") for name in CASES}
EXPECTED = {name: recorded.expect["code"] for name, recorded in RESPONSES.items()}


def answer(request: Any) -> Any:
    """Answer with the failure the request names, tagged with a request id of its own."""
    httpx = http_library("openai")
    payload = json.loads(request.content)
    case, serial = payload["messages"][0]["content"].split("#")
    status, body = RESPONSES[case].status, RESPONSES[case].body
    headers = {"content-type": "application/json", "x-request-id": f"req-{case}-{serial}"}
    return httpx.Response(status, content=body.encode(), headers=headers)


def ask(client: Any, case: str, serial: int) -> tuple[str, str, HarnessError]:
    """Make one call that fails as ``case``; return what was asked and what came back."""
    try:
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": f"{case}#{serial}"}]
        )
    except HarnessError as err:
        return case, f"req-{case}-{serial}", err
    raise AssertionError("the call did not fail")


def check(case: str, request_id: str, err: HarnessError) -> None:
    """The error is this caller's own: its code, its request id, its vendor class."""
    assert err.problem.code == EXPECTED[case], (case, err.problem.code)
    assert err.upstream["request_id"] == request_id
    vendor: type = openai.APIStatusError
    assert isinstance(err, vendor)
    assert err.problem.__cause__ is not None
    assert getattr(err.problem.__cause__, "request_id", None) == request_id


def test_many_threads_share_one_wrapped_client() -> None:
    """16 threads, 800 failing calls, one client: every error is the caller's own."""
    httpx = http_library("openai")
    client = wrap(
        openai.OpenAI(
            api_key="sk-test",
            max_retries=0,
            http_client=httpx.Client(transport=httpx.MockTransport(answer)),
        )
    )
    jobs = [(CASES[n % len(CASES)], n) for n in range(800)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda job: ask(client, *job), jobs))
    assert len(results) == len(jobs)
    for case, request_id, err in results:
        check(case, request_id, err)


def test_many_tasks_share_one_wrapped_async_client() -> None:
    """400 concurrent asyncio tasks on one wrapped AsyncOpenAI: no mixed errors."""
    httpx = http_library("openai")

    async def main() -> list[tuple[str, str, HarnessError]]:
        client = wrap(
            openai.AsyncOpenAI(
                api_key="sk-test",
                max_retries=0,
                http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)),
            )
        )

        async def one(case: str, serial: int) -> tuple[str, str, HarnessError]:
            await asyncio.sleep(0)
            try:
                await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"{case}#{serial}"}]
                )
            except HarnessError as err:
                return case, f"req-{case}-{serial}", err
            raise AssertionError("the call did not fail")

        return await asyncio.gather(*(one(CASES[n % len(CASES)], n) for n in range(400)))

    results = asyncio.run(main())
    assert len(results) == 400
    for case, request_id, err in results:
        check(case, request_id, err)
