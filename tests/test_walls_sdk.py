"""A reset stated only in words, read through the real OpenAI SDK client, sync and async.

Each message is quoted from a public source (named beside it); the 429 around it is
constructed: an OpenAI-compatible error body (``{"error": {"message", "type", "code"}}``,
the shape of cassettes/openai/rate_limit_tpm_429.yaml) with a ``Date`` header fixing the
response's clock. The same words, read from a body alone, are tests/test_walls.py's.
"""

from __future__ import annotations

import asyncio
import calendar
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from normalize_errors import HarnessError, wrap  # noqa: E402
from normalize_errors.testing import Faults, Reply  # noqa: E402

NOW = 1_796_630_400.0  # 2026-12-07T08:00:00Z
DATE = "Mon, 07 Dec 2026 08:00:00 GMT"

WORDS = [
    # Replicate's throttle (nodetool-ai/nodetool#5196, the shipped corpus)
    ("Request was throttled. Your rate limit for creating predictions is reduced to 6 requests "
     "per minute with a burst of 1 requests while you have less than $5.0 in credit. Your rate "
     "limit resets in ~5s.", NOW + 5),
    # Google's Cloud Code backend (liuw1535/antigravity2api-nodejs#44)
    ("You have exhausted your capacity on this model. Your quota will reset after 161h39m41s.",
     NOW + 581981),
    # gemini-cli (google-gemini/gemini-cli#22643)
    ("Usage limit reached for gemini-3-flash-preview. Access resets at 10:57 PM GMT-3.",
     calendar.timegm((2026, 12, 8, 1, 57, 0))),
    # the words of cooderl/wewe-rss#390's title: the next midnight, UTC
    ("Daily request 200 limit exceeded. Please try again tomorrow.",
     calendar.timegm((2026, 12, 8, 0, 0, 0))),
    # Anthropic's spend limits page: a date
    ("You will regain access on 2026-12-09 at 00:00 UTC.", calendar.timegm((2026, 12, 9, 0, 0, 0))),
]  # fmt: skip


def reply(message: str) -> Reply:
    body = {"error": {"message": message, "type": "requests", "code": "rate_limit_exceeded"}}
    return Reply(429, {"date": DATE}, body)


def client(aio: bool) -> Any:
    made = openai.AsyncOpenAI if aio else openai.OpenAI
    return wrap(made(api_key="sk-offline", max_retries=0))


def call(aio: bool) -> HarnessError:
    messages = [{"role": "user", "content": "Hello"}]
    try:
        if aio:

            async def run() -> Any:
                return await client(True).chat.completions.create(
                    model="gpt-4o-mini", messages=messages
                )

            asyncio.run(run())
        else:
            client(False).chat.completions.create(model="gpt-4o-mini", messages=messages)
    except HarnessError as err:
        return err
    raise AssertionError("no error")


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(("message", "reset"), WORDS, ids=[m[:24] for m, _ in WORDS])
def test_a_reset_in_words_through_the_sdk(message: str, reset: float, aio: bool) -> None:
    with Faults() as faults:
        faults.fail(reply(message))
        err = call(aio)
    problem = err.problem  # the drop-in's attributes are the SDK's; the harness view
    assert problem.code == "upstream.rate_limited"
    quota = problem.quota
    assert quota is not None
    assert quota.reset == pytest.approx(reset, abs=1e-3)
    assert quota.resets_in == pytest.approx(reset - NOW, abs=1e-3)
    assert quota.source == "message"
    assert isinstance(err, openai.RateLimitError)  # the drop-in stays the SDK's own class
