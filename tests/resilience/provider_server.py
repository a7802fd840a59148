"""A small provider of the project's own, on 127.0.0.1, that limits requests and tokens as
OpenAI and Anthropic do (the load test's and the benchmark's server; written for this project).

It answers OpenAI's ``POST /v1/chat/completions`` and Anthropic's ``POST /v1/messages`` with a
short answer, per credential (the ``Authorization`` bearer or ``x-api-key``), and refuses with
429 once a limit is spent:

* **token buckets**, as both providers describe theirs: each holds ``limit`` and refills
  ``limit`` per ``window`` seconds, continuously. OpenAI's are ``requests`` and ``tokens``
  (input and output together); Anthropic's ``requests``, ``input-tokens`` and
  ``output-tokens``. A request is admitted when one request and its expected tokens fit: its
  input (the characters of its messages / 4) and its ``max_tokens``; the answer then uses half
  of ``max_tokens`` and the other half is given back (Anthropic documents this for its output
  tokens: estimated from ``max_tokens`` at the start, adjusted at the end; this server does the
  same for OpenAI's tokens);
* **a daily quota** per credential (``daily``): that many requests, then 429 until ``day``
  seconds after the server started (its "midnight").

Every response carries the providers' real rate-limit headers with this server's numbers:
``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` (the reset a duration such as
``4.2s``, the time until the bucket is whole again) or
``anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}`` (RFC 3339
instants), and Anthropic's ``retry-after`` on a 429. With a ``window`` shorter than a minute
(the CI test's 5 s), the durations say so, as OpenAI's would. The 429 bodies are the shipped
cassettes' (``openai/rate_limit_tpm_429``, ``anthropic/rate_limit_429``,
``anthropic/rate_limit_requests_429_full_headers``), the numbers this server's. The success
bodies are constructed, in the shape the SDKs parse.

``counts`` tells per credential what was received, completed and refused, and when.
"""

from __future__ import annotations

import json
import math
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Limits", "ProviderServer"]

OPENAI_RATE = (
    "Rate limit reached for {model} in organization org-********** on {what} per min ({short}): "
    "Limit {limit}, Used {used}, Requested {asked}. Please try again in {wait}. Visit "
    "https://platform.openai.com/account/rate-limits to learn more."
)
"""cassettes/openai/rate_limit_tpm_429.yaml's message, its numbers this server's."""
OPENAI_DAILY = (
    "Rate limit reached for {model} in organization org-********** on requests per day (RPD): "
    "Limit {limit}, Used {limit}, Requested 1. Please try again in {wait}. Visit "
    "https://platform.openai.com/account/rate-limits to learn more."
)
"""The same message for the per-day request quota (the wording of the shipped message with
"requests per day (RPD)", as OpenAI names that limit in its rate-limits guide)."""
ANTHROPIC_TOKENS = (
    "Number of request tokens has exceeded your per-minute rate limit "
    "(https://docs.anthropic.com/en/api/rate-limits); see the response headers for current "
    "usage. Please reduce the prompt length or the maximum tokens requested, or try again "
    "later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss "
    "your options for a rate limit increase."
)
"""cassettes/anthropic/rate_limit_429.yaml's message."""
ANTHROPIC_REQUESTS = "This request would exceed your account's rate limit. Please try again later."
"""cassettes/anthropic/rate_limit_requests_429_full_headers.yaml's message."""


def duration(seconds: float) -> str:
    """OpenAI's reset format: ``350ms``, ``4.2s``, ``6m0s``."""
    if seconds < 1:
        return f"{max(round(seconds * 1000), 0)}ms"
    minutes, rest = divmod(seconds, 60.0)
    if minutes:
        return f"{int(minutes)}m{rest:.0f}s"
    return f"{rest:.3g}s"


class Bucket:
    """A token bucket: ``limit``, refilled ``limit`` per ``window`` seconds."""

    def __init__(self, limit: float, window: float) -> None:
        self.limit = limit
        self.rate = limit / window
        self.level = limit
        self.at = time.monotonic()

    def now(self) -> float:
        moment = time.monotonic()
        self.level = min(self.limit, self.level + (moment - self.at) * self.rate)
        self.at = moment
        return self.level

    def to_full(self) -> float:
        return (self.limit - self.now()) / self.rate

    def wait(self, amount: float) -> float:
        return max(min(amount, self.limit) - self.now(), 0.0) / self.rate


class Limits:
    """The limits of one API per credential: ``requests`` and token buckets per ``window``
    seconds (``tokens`` for OpenAI; ``input_tokens`` and ``output_tokens`` for Anthropic)."""

    def __init__(
        self,
        requests: float,
        *,
        tokens: float = 0.0,
        input_tokens: float = 0.0,
        output_tokens: float = 0.0,
        window: float = 60.0,
    ) -> None:
        self.requests = requests
        self.tokens = tokens
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.window = window


class _Account:
    def __init__(self, api: str, limits: Limits) -> None:
        window = limits.window
        self.buckets: dict[str, Bucket] = {"requests": Bucket(limits.requests, window)}
        if api == "openai":
            self.buckets["tokens"] = Bucket(limits.tokens, window)
        else:
            self.buckets["input-tokens"] = Bucket(limits.input_tokens, window)
            self.buckets["output-tokens"] = Bucket(limits.output_tokens, window)
        self.day_used = 0


class ProviderServer:
    """The server, on a free port of 127.0.0.1; ``url`` is its base (``http://127.0.0.1:N``)."""

    def __init__(
        self,
        *,
        openai: Limits,
        anthropic: Limits,
        daily: int | None = None,
        day: float = 86400.0,
    ) -> None:
        self.limits = {"openai": openai, "anthropic": anthropic}
        self.daily = daily
        self.started = time.monotonic()
        self.day_ends = self.started + day
        """When the daily quota comes back (``time.monotonic``); ``midnight_in`` moves it."""
        self.lock = threading.Lock()
        self.accounts: dict[tuple[str, str], _Account] = {}
        self.counts: dict[str, dict[str, int]] = {}
        """Per credential: ``received``, ``completed``, ``429``."""
        self.log: list[tuple[float, str, int, float]] = []
        """Every request: (seconds since start, credential, status, wall-clock time)."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                api = "anthropic" if self.path.endswith("/messages") else "openai"
                key = self.headers.get("x-api-key") or (
                    self.headers.get("authorization") or ""
                ).removeprefix("Bearer ")
                status, headers, answer = server.answer(api, key, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def midnight_in(self, seconds: float) -> float:
        """Make the day end ``seconds`` from now; the wall-clock time it ends."""
        self.day_ends = time.monotonic() + seconds
        return time.time() + seconds

    def start(self) -> ProviderServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- answering ---------------------------------------------------------------------------------

    def answer(self, api: str, key: str, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        text = "".join(
            m.get("content", "") if isinstance(m.get("content"), str) else ""
            for m in body.get("messages", [])
        )
        tokens_in = math.ceil(len(text) / 4)
        bound = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        model = str(body.get("model", "model"))
        with self.lock:
            account = self.accounts.get((api, key))
            if account is None:
                account = self.accounts[(api, key)] = _Account(api, self.limits[api])
            count = self.counts.setdefault(key, {"received": 0, "completed": 0, "429": 0})
            count["received"] += 1
            at = time.monotonic()
            refusal = self._refusal(api, account, model, (tokens_in, bound), at)
            if refusal is None:
                used = bound // 2
                self._take(api, account, tokens_in, bound, used)
                count["completed"] += 1
                account.day_used += 1
            else:
                count["429"] += 1
            headers = self._headers(api, account, at)
            self.log.append((at - self.started, key, 200 if refusal is None else 429, time.time()))
        if refusal is not None:
            status, extra, answer = refusal
            return status, {**headers, **extra}, answer
        return 200, headers, self._success(api, model, tokens_in, bound // 2)

    def _take(self, api: str, account: _Account, tokens_in: int, bound: int, used: int) -> None:
        buckets = account.buckets
        buckets["requests"].level -= 1
        if api == "openai":
            buckets["tokens"].level -= tokens_in + used  # max_tokens taken, the rest given back
        else:
            buckets["input-tokens"].level -= tokens_in
            buckets["output-tokens"].level -= used

    def _refusal(
        self, api: str, account: _Account, model: str, size: tuple[int, int], at: float
    ) -> tuple[int, dict[str, str], Any] | None:
        tokens_in, bound = size
        if self.daily is not None and at < self.day_ends and account.day_used >= self.daily:
            wait = self.day_ends - at
            message = OPENAI_DAILY.format(model=model, limit=self.daily, wait=duration(wait))
            headers = {
                "x-ratelimit-limit-requests": str(self.daily),
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-requests": duration(wait),
            }
            error = {"message": message, "type": "requests", "param": None,
                     "code": "rate_limit_exceeded"}  # fmt: skip
            return 429, headers, {"error": error}
        buckets = account.buckets
        asks = {"requests": 1.0}
        if api == "openai":
            asks["tokens"] = tokens_in + bound
        else:
            asks["input-tokens"] = tokens_in
            asks["output-tokens"] = bound
        for name, asked in asks.items():
            bucket = buckets[name]
            wait = bucket.wait(asked)
            if wait <= 0:
                continue
            if api == "openai":
                short = "RPM" if name == "requests" else "TPM"
                message = OPENAI_RATE.format(
                    model=model,
                    what=name,
                    short=short,
                    limit=int(bucket.limit),
                    used=int(bucket.limit - bucket.now()),
                    asked=int(asked),
                    wait=duration(wait),
                )
                error = {"message": message, "type": name, "param": None,
                         "code": "rate_limit_exceeded"}  # fmt: skip
                return 429, {}, {"error": error}
            message = ANTHROPIC_REQUESTS if name == "requests" else ANTHROPIC_TOKENS
            error = {"type": "rate_limit_error", "message": message}
            return 429, {"retry-after": str(math.ceil(wait))}, {"type": "error", "error": error}
        return None

    def _headers(self, api: str, account: _Account, at: float) -> dict[str, str]:
        headers: dict[str, str] = {}
        for name, bucket in account.buckets.items():
            left = max(math.floor(bucket.now()), 0)
            if api == "openai":
                headers[f"x-ratelimit-limit-{name}"] = str(int(bucket.limit))
                headers[f"x-ratelimit-remaining-{name}"] = str(left)
                headers[f"x-ratelimit-reset-{name}"] = duration(bucket.to_full())
            else:
                whole = datetime.now(UTC).timestamp() + bucket.to_full()
                moment = datetime.fromtimestamp(whole, UTC)
                stamp = moment.isoformat(timespec="milliseconds")
                headers[f"anthropic-ratelimit-{name}-limit"] = str(int(bucket.limit))
                headers[f"anthropic-ratelimit-{name}-remaining"] = str(left)
                headers[f"anthropic-ratelimit-{name}-reset"] = stamp.replace("+00:00", "Z")
        return headers

    @staticmethod
    def _success(api: str, model: str, tokens_in: int, used: int) -> Any:
        if api == "openai":
            return {
                "id": "chatcmpl-load", "object": "chat.completion", "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "Hello!"}}],
                "usage": {"prompt_tokens": tokens_in, "completion_tokens": used,
                          "total_tokens": tokens_in + used},
            }  # fmt: skip
        return {
            "id": "msg_load", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": "Hello!"}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": tokens_in, "output_tokens": used},
        }  # fmt: skip
