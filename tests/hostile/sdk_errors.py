"""Errors of the real SDK clients whose error body carries a credential.

The clients are the real ``openai.OpenAI``, ``anthropic.Anthropic`` and ``genai.Client`` over an
in-memory transport that answers with the given status and JSON body; the SDK builds its own
exception (its message holds the body as the SDK prints it: a Python repr for openai and
anthropic, ``response_json`` for google-genai). The bodies the tests pass are constructed, as a
gateway or proxy that echoes a request's configuration into its error would write them.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
from google import genai
from google.genai import errors, types

from normalize_errors._wrapping._replay_calls import http_library

MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]


def _answer(library: Any, status: int, body: Any) -> Any:
    content = json.dumps(body).encode()

    def handle(request: Any) -> Any:
        return library.Response(
            status, headers={"content-type": "application/json"}, content=content
        )

    return library.MockTransport(handle)


def openai_error(status: int, body: Any) -> BaseException:
    """What ``chat.completions.create`` of a real OpenAI client raises for that answer."""
    http = http_library("openai")
    client = openai.OpenAI(
        api_key="not-a-key",
        max_retries=0,
        http_client=http.Client(transport=_answer(http, status, body)),
    )
    try:
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    except openai.APIStatusError as exc:
        return exc
    raise AssertionError("no error")


def anthropic_error(status: int, body: Any) -> BaseException:
    """What ``messages.create`` of a real Anthropic client raises for that answer."""
    http = http_library("anthropic")
    client = anthropic.Anthropic(
        api_key="not-a-key",
        max_retries=0,
        http_client=http.Client(transport=_answer(http, status, body)),
    )
    try:
        client.messages.create(model="claude-sonnet-4-6", max_tokens=16, messages=MESSAGES)
    except anthropic.APIStatusError as exc:
        return exc
    raise AssertionError("no error")


def google_error(status: int, body: Any) -> BaseException:
    """What ``models.generate_content`` of a real ``genai.Client`` raises for that answer."""
    options = types.HttpOptions(
        api_version="v1beta",
        retry_options=types.HttpRetryOptions(attempts=1),
        httpx_client=httpx.Client(transport=_answer(httpx, status, body)),
    )
    client = genai.Client(api_key="not-a-key", http_options=options)
    try:
        client.models.generate_content(model="gemini-2.5-flash", contents="Hello")
    except errors.APIError as exc:
        return exc
    raise AssertionError("no error")


SDK_ERRORS = {"openai": openai_error, "anthropic": anthropic_error, "google": google_error}
