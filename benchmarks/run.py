"""Measure normalize-errors on this machine, in one run, and print the figures.

    python benchmarks/run.py            # everything (about a minute)
    python benchmarks/run.py --quick    # fewer repeats
    python benchmarks/run.py --json     # the figures as one JSON object
    python benchmarks/run.py --cpu      # per-call figures in CPU time, for a busy machine

1. ``normalize()`` per call on typical failures of each provider (the vendor exceptions come
   from replaying the shipped cassettes through the real SDKs), and the same exceptions
   through pydantic-ai's own mapping (each model's ``map_api_errors``, measured interleaved
   with ``normalize()``) and LiteLLM's (``exception_type``) when they are installed.
2. A wrapped client against the raw client on an in-memory transport (the success path),
   OpenAI and Anthropic; the wrapper's own work per call on a stubbed method, beside a tight
   wrapper's; a chat stream of 100,000 chunks read one by one, raw and wrapped: peak memory
   (tracemalloc) and time per chunk; what a byte stream still holds per piece at its end.
3. ``import normalize_errors`` against ``import litellm`` and the vendor SDKs, each in a
   fresh interpreter.
4. The circuit breaker's cost per call (``CircuitBreaker.call`` around a function that does
   nothing): closed and open, in memory and through a ``redis-server`` this run starts on
   127.0.0.1, with the breaker's local copy (the default) and with ``refresh=0`` (a round
   trip per call), and the Redis commands per call (skipped, saying so, where
   ``redis-server`` or redis-py is absent).
5. The ledger's cost per call (``wrap(client, ledger=...)`` against the same wrapped client
   without one, on an in-memory transport): in memory, through Redis deciding from a fresh
   copy, and through Redis with a round trip per call (``benchmarks/ledger.py``). The load
   test of a fleet against a provider server is ``benchmarks/load.py`` (a real minute).

Every figure is a median over repeats measured in this process (or its children); ratios
compare figures measured in the same run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import normalize_errors
from normalize_errors import normalize, wrap
from normalize_errors._wrapping._replay_calls import http_library
from normalize_errors.replay import load, run, shipped

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # LiteLLM: no network at import

# (provider, cassette, LiteLLM's name for the provider)
FAILURES = [
    ("openai", "rate_limit_tpm_429", "openai"),
    ("openai", "insufficient_quota_429", "openai"),
    ("openai", "context_length_exceeded_400", "openai"),
    ("openai", "server_error_500", "openai"),
    ("anthropic", "overloaded_529", "anthropic"),
    ("anthropic", "rate_limit_429", "anthropic"),
    ("anthropic", "context_length_exceeded_400", "anthropic"),
    ("google", "rate_limit_free_tier_per_minute_429", "gemini"),
    ("google", "overloaded_503", "gemini"),
    ("google", "api_key_invalid_400", "gemini"),
    ("http", "cloudflare_520_html_anthropic", "openai"),
    ("http", "nginx_504_gateway_timeout", "openai"),
]


CLOCK: list[Callable[[], float]] = [time.perf_counter]
"""The clock of the per-call figures: the wall clock, or this thread's CPU time (``--cpu``),
which leaves out the time slices a busy machine gives to other processes."""


def per_call(func: Callable[[], Any], number: int, repeat: int) -> float:
    """Median seconds per call of ``func`` over ``repeat`` runs of ``number`` calls."""
    clock = CLOCK[0]
    runs = []
    for _ in range(repeat):
        start = clock()
        for _ in range(number):
            func()
        runs.append((clock() - start) / number)
    return statistics.median(runs)


def vendor_exceptions() -> list[tuple[str, str, str, BaseException]]:
    """The vendor exception each benchmark cassette raises through its real SDK."""
    found = []
    for provider, name, litellm_name in FAILURES:
        path = shipped() / provider / f"{name}.yaml"
        if not path.exists():
            continue
        outcome = run(load(path))
        if outcome.exception is not None:
            found.append((provider, name, litellm_name, outcome.exception))
    return found


def litellm_mapper() -> Callable[[BaseException, str], str] | None:
    """LiteLLM's exception mapping as a function returning the mapped class name."""
    try:
        import litellm
        from litellm.litellm_core_utils.exception_mapping_utils import exception_type
    except ImportError:
        return None
    litellm.suppress_debug_info = True  # it prints a help banner on every mapped error

    def mapped(exc: BaseException, provider: str) -> str:
        try:
            exception_type(
                model="gpt-4o-mini" if provider == "openai" else "model",
                original_exception=exc,
                custom_llm_provider=provider,
            )
        except Exception as raised:
            return type(raised).__name__
        return "(nothing raised)"

    return mapped


def pydantic_ai_mapper() -> Callable[[BaseException, str], str | None] | None:
    """pydantic-ai's own mapping of a vendor exception, as its models run it.

    Each of its model classes calls the vendor SDK inside its ``map_api_errors`` context
    manager, which turns the SDK's exception into a ``ModelAPIError`` subclass and raises
    it; this runs that context manager around the same exception. Returns the class name it
    raises, or ``None`` for a provider it has no mapper for (plain HTTP).
    """
    try:
        from pydantic_ai.exceptions import ModelAPIError
        from pydantic_ai.models.anthropic._errors import map_api_errors as anthropic_errors
        from pydantic_ai.models.google import _map_api_errors as google_errors
        from pydantic_ai.models.openai._errors import map_api_errors as openai_errors
    except ImportError:
        return None
    mappers: dict[str, Callable[[], Any]] = {
        "openai": lambda: openai_errors("gpt-4o-mini"),
        "anthropic": lambda: anthropic_errors("claude-sonnet-4-5"),
        "google": lambda: google_errors("gemini-2.5-flash", "google"),
    }

    def mapped(exc: BaseException, provider: str) -> str | None:
        mapper = mappers.get(provider)
        if mapper is None:
            return None
        try:
            with mapper():
                raise exc
        except ModelAPIError as raised:
            return type(raised).__name__
        except BaseException as other:  # its answer for what it leaves alone
            return type(other).__name__

    return mapped


def bench_normalize(quick: bool) -> list[dict[str, Any]]:
    """Section 1: normalize() and LiteLLM's mapping on the same exceptions."""
    number, repeat = (500, 5) if quick else (5000, 9)
    mapper = litellm_mapper()
    pydantic_ai = pydantic_ai_mapper()
    rows = []
    for provider, name, litellm_name, exc in vendor_exceptions():

        def ours_call(exc: BaseException = exc) -> None:
            normalize(exc)

        row: dict[str, Any] = {
            "provider": provider,
            "failure": name,
            "exception": type(exc).__name__,
            "code": normalize(exc).code,
        }
        if pydantic_ai is not None and pydantic_ai(exc, provider) is not None:

            def pai_call(
                exc: BaseException = exc,
                provider: str = provider,
                mapper: Callable[[BaseException, str], str | None] = pydantic_ai,
            ) -> None:
                mapper(exc, provider)

            ours, pai = interleaved(ours_call, pai_call, number, repeat)
            row["pydantic_ai_class"] = pydantic_ai(exc, provider)
            row["pydantic_ai_us"] = pai * 1e6
            row["pydantic_ai_ratio"] = pai / ours
        else:
            ours = per_call(ours_call, number, repeat)
        row["normalize_us"] = ours * 1e6
        if mapper is not None:

            def their_call(
                exc: BaseException = exc,
                name: str = litellm_name,
                mapper: Callable[[BaseException, str], str] = mapper,
            ) -> None:
                mapper(exc, name)

            theirs = per_call(their_call, max(number // 10, 50), repeat)
            row["litellm_class"] = mapper(exc, litellm_name)
            row["litellm_us"] = theirs * 1e6
            row["ratio"] = theirs / ours
        rows.append(row)
    return rows


# -- the success path on an in-memory transport ---------------------------------------------

COMPLETION = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello there."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }
).encode()


def openai_client(chunks: int = 0) -> Any:
    """A real OpenAI client answering from memory (a stream of ``chunks`` when asked)."""
    import openai

    httpx = http_library("openai")
    piece = json.dumps(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}],
        }
    )
    stream = ("".join(f"data: {piece}\n\n" for _ in range(chunks)) + "data: [DONE]\n\n").encode()

    def handler(request: Any) -> Any:
        if b'"stream":true' in request.content:
            return httpx.Response(
                200, content=stream, headers={"content-type": "text/event-stream"}
            )
        return httpx.Response(200, content=COMPLETION, headers={"content-type": "application/json"})

    return openai.OpenAI(
        api_key="sk-bench", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )


MESSAGE = json.dumps(
    {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "Hello there."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }
).encode()


def anthropic_client() -> Any:
    """A real Anthropic client answering from memory."""
    import anthropic

    httpx = http_library("anthropic")

    def handler(request: Any) -> Any:
        return httpx.Response(200, content=MESSAGE, headers={"content-type": "application/json"})

    return anthropic.Anthropic(
        api_key="sk-ant-bench", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )


def chat_stream_client(chunks: int) -> Any:
    """A real OpenAI client whose streams are ``chunks`` text chunks and a finish chunk, each
    a fresh piece of the body (as a network read is), so the body itself is never held."""
    import openai

    httpx = http_library("openai")
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    piece = json.dumps({**base, "choices": [{"index": 0, "delta": {"content": "x"}}]})
    last = json.dumps({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})

    def body() -> Any:
        for _ in range(chunks):
            yield f"data: {piece}\n\n".encode()
        yield f"data: {last}\n\ndata: [DONE]\n\n".encode()

    def handler(request: Any) -> Any:
        return httpx.Response(200, content=body(), headers={"content-type": "text/event-stream"})

    return openai.OpenAI(
        api_key="sk-bench",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )


def kept_per_chunk(open_stream: Callable[[], Any], chunks: int) -> float:
    """The bytes a stream still holds per chunk once read to its end (while it is alive):
    traced memory after the last chunk less traced memory once the stream was opened."""
    tracemalloc.start()
    try:
        stream = open_stream()
        opened = tracemalloc.get_traced_memory()[0]
        for _ in stream:
            pass
        held = tracemalloc.get_traced_memory()[0] - opened
    finally:
        tracemalloc.stop()
    del stream
    return max(held, 0) / chunks


def byte_stream_client(chunks: int, size: int) -> Any:
    """An httpx client whose transport streams ``chunks`` fresh pieces of ``size`` bytes."""
    httpx = http_library("openai")

    def handler(request: Any) -> Any:
        return httpx.Response(200, content=(bytes(size) for _ in range(chunks)))

    return httpx.Client(transport=httpx.MockTransport(handler))


def interleaved(
    a: Callable[[], Any], b: Callable[[], Any], number: int, repeat: int
) -> tuple[float, float]:
    """Median per-call seconds of ``a`` and ``b``, measured alternately to share drift (which
    goes first alternates too)."""
    runs_a, runs_b = [], []
    for turn in range(repeat):
        if turn % 2:
            runs_b.append(per_call(b, number, 1))
            runs_a.append(per_call(a, number, 1))
        else:
            runs_a.append(per_call(a, number, 1))
            runs_b.append(per_call(b, number, 1))
    return statistics.median(runs_a), statistics.median(runs_b)


class Chunk:
    """A stand-in chunk with the attributes a stream check reads."""

    __slots__ = ("choices",)

    def __init__(self) -> None:
        self.choices: list[Any] = []


def stubbed(client: Any, sdk: str) -> Callable[[Any], Any]:
    """``client`` with its generating method replaced by one that returns a parsed result at
    once (set on the resource object, where the wrapper finds it): what is left of a call is
    the wrapper's own work. Returns the call to time, given a client."""
    import anthropic
    import openai

    if sdk == "openai":
        result: Any = openai.types.chat.ChatCompletion.model_validate_json(COMPLETION)
        client.chat.completions.create = lambda **kwargs: result
        messages = [{"role": "user", "content": "Hi"}]
        return lambda c: c.chat.completions.create(model="m", messages=messages)
    result = anthropic.types.Message.model_validate_json(MESSAGE)
    client.messages.create = lambda **kwargs: result
    messages = [{"role": "user", "content": "Hi"}]
    return lambda c: c.messages.create(model="m", max_tokens=64, messages=messages)


def own_work(sdk: str, number: int, repeat: int) -> dict[str, float]:
    """The wrapper's own µs per call on ``sdk``'s stubbed generating method (see ``stubbed``);
    for OpenAI also a tight wrapper's: a bound method looked up once, a try/except and one
    ``isinstance`` on the result (the floor any wrapper pays)."""
    raw = openai_client() if sdk == "openai" else anthropic_client()
    call = stubbed(raw, sdk)
    wrapped = wrap(raw)
    call(wrapped)
    plain, through = interleaved(lambda: call(raw), lambda: call(wrapped), number, repeat)
    out = {f"{sdk}_stub_raw_us": plain * 1e6, f"{sdk}_own_us": (through - plain) * 1e6}
    if sdk == "openai":
        method = raw.chat.completions.create
        messages = [{"role": "user", "content": "Hi"}]

        def tight() -> Any:
            try:
                result = method(model="m", messages=messages)
            except Exception:
                raise
            if isinstance(result, str):  # pragma: no cover - the one check it makes
                raise TypeError(result)
            return result

        plain, floor = interleaved(lambda: call(raw), tight, number, repeat)
        out["tight_own_us"] = (floor - plain) * 1e6
    return out


def chat_stream(chunks: int, repeat: int, peaks: int) -> dict[str, float]:
    """A chat stream of ``chunks`` chunks read one by one, raw and wrapped: the peak memory
    each takes while read (tracemalloc; the median of ``peaks`` reads each, in turn: a single
    peak moves by a few KiB from read to read, as much as the wrapper adds), and the time per
    chunk (measured in turn, which goes first alternating; the median of the runs)."""
    messages = [{"role": "user", "content": "Hi"}]

    def read(client: Any) -> None:
        for _ in client.chat.completions.create(model="m", messages=messages, stream=True):
            pass

    raw, wrapped = chat_stream_client(chunks), wrap(chat_stream_client(chunks))
    for warm in (chat_stream_client(50), wrap(chat_stream_client(50))):
        read(warm)  # imports and first-use caches, which are no stream's

    def peak(client: Any) -> int:
        tracemalloc.start()
        try:
            read(client)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    raw_peaks, wrapped_peaks = [], []
    for _ in range(peaks):
        raw_peaks.append(peak(raw))
        wrapped_peaks.append(peak(wrapped))
    peak_raw, peak_wrapped = statistics.median(raw_peaks), statistics.median(wrapped_peaks)
    raw_s, wrapped_s = interleaved(lambda: read(raw), lambda: read(wrapped), 1, repeat)
    return {
        "chat_stream_chunks": chunks,
        "chat_stream_peak_reads": peaks,
        "chat_stream_raw_peak_bytes": peak_raw,
        "chat_stream_wrapped_peak_bytes": peak_wrapped,
        "chat_stream_peak_ratio": peak_wrapped / peak_raw,
        "chat_stream_raw_us_per_chunk": raw_s / chunks * 1e6,
        "chat_stream_wrapped_us_per_chunk": wrapped_s / chunks * 1e6,
        "chat_stream_time_ratio": wrapped_s / raw_s,
    }


def bench_wrap(quick: bool) -> dict[str, Any]:
    """Section 2: wrapped against raw on the success path, the wrapper's own work per call,
    and streams: a long chat stream's memory and time, what byte streams hold."""
    number, repeat = (100, 5) if quick else (500, 15)
    # One client, called raw and through wrap(): two clients of the same making differ by a few
    # per cent from each other (where their objects lie in memory), more than wrap() costs.
    messages = [{"role": "user", "content": "Hi"}]
    calls: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {}
    raw, claude = openai_client(), anthropic_client()
    wrapped, wrapped_claude = wrap(raw), wrap(claude)
    calls["openai"] = (
        lambda: raw.chat.completions.create(model="m", messages=messages),
        lambda: wrapped.chat.completions.create(model="m", messages=messages),
    )
    calls["anthropic"] = (
        lambda: claude.messages.create(model="m", max_tokens=64, messages=messages),
        lambda: wrapped_claude.messages.create(model="m", max_tokens=64, messages=messages),
    )
    figures: dict[str, Any] = {}
    for sdk, (call_raw, call_wrapped) in calls.items():
        call_wrapped()
        raw_s, wrapped_s = interleaved(call_raw, call_wrapped, number, repeat)
        # The difference itself: blocks of 20 calls, raw and wrapped in turn (which goes first
        # alternates), the median of the pairs' ratios, so that a slice of time the machine
        # gives to another process falls on both sides of a pair or is left out by the median.
        ratios = []
        for pair in range(60 if quick else 300):
            first, second = (call_raw, call_wrapped) if pair % 2 else (call_wrapped, call_raw)
            one, two = per_call(first, 20, 1), per_call(second, 20, 1)
            raw_block, wrapped_block = (one, two) if pair % 2 else (two, one)
            ratios.append(wrapped_block / raw_block)
        figures[f"{sdk}_call_raw_us"] = raw_s * 1e6
        figures[f"{sdk}_call_wrapped_us"] = wrapped_s * 1e6
        figures[f"{sdk}_call_ratio"] = statistics.median(ratios)

    for sdk in ("openai", "anthropic"):
        figures.update(own_work(sdk, number * 20, repeat))
    figures.update(chat_stream(20_000 if quick else 100_000, 3 if quick else 5, 1 if quick else 3))

    # What a byte stream still holds per piece at its end, raw and wrapped: nothing either way.
    pieces, piece = 2000, 4096

    def byte_stream(client: Any) -> Callable[[], Any]:
        return lambda: client.send(
            client.build_request("GET", "https://x.test/"), stream=True
        ).iter_bytes()

    figures["bytes_pieces"], figures["bytes_piece"] = pieces, piece
    figures["bytes_raw_kept_bytes_per_chunk"] = kept_per_chunk(
        byte_stream(byte_stream_client(pieces, piece)), pieces
    )
    figures["bytes_wrapped_kept_bytes_per_chunk"] = kept_per_chunk(
        byte_stream(wrap(byte_stream_client(pieces, piece))), pieces
    )

    # The proxy's own cost per chunk, without SSE parsing: iterate prebuilt chunks.
    from normalize_errors._wrapping._wrap import _Options
    from normalize_errors._wrapping._wrap_streams import _Stream

    items = [Chunk() for _ in range(100_000)]

    def plain() -> None:
        for _ in iter(items):
            pass

    options: Any = _Options("openai", False, None)

    def proxied() -> None:
        for _ in _Stream._ne_make(iter(items), options, None, None):
            pass

    bare, through = interleaved(plain, proxied, 1, repeat)
    figures["proxy_us_per_chunk"] = (through - bare) / len(items) * 1e6
    return figures


IMPORTS = [
    "normalize_errors",
    "normalize_errors.testing.plugin",
    "openai",
    "anthropic",
    "google.genai",
    "litellm",
]
"""Modules timed; the pytest plugin is timed after pytest is loaded (what a session pays)."""


def import_ms(module: str, repeat: int) -> float | None:
    """Median milliseconds of ``import module`` in a fresh interpreter."""
    setup = "import pytest; " if module.endswith(".plugin") else ""
    code = (
        f"{setup}import time; t = time.perf_counter(); import {module}; "
        "print(time.perf_counter() - t)"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": ""}
    times = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
        )
        if out.returncode != 0:
            return None
        times.append(float(out.stdout.strip().splitlines()[-1]) * 1000)
    return statistics.median(times[1:] if len(times) > 1 else times)


def bench_imports(quick: bool) -> dict[str, float | None]:
    """Section 3: import times, each in fresh interpreters (the first run warms the disk)."""
    repeat = 3 if quick else 7
    return {module: import_ms(module, repeat) for module in IMPORTS}


def _breaker_figures(breaker: Any, number: int, repeat: int) -> dict[str, float]:
    """Per-call µs of ``breaker.call`` closed, and open (the fast failure, caught)."""
    from normalize_errors import UpstreamOverloadedError

    def noop() -> None:
        return None

    breaker.call("bench:closed", noop)  # the first read of the key, outside the figure
    closed = per_call(lambda: breaker.call("bench:closed", noop), number, repeat)
    breaker.failure("bench:open", UpstreamOverloadedError("overloaded", retry_after=3600))

    def fast_fail() -> None:
        try:
            breaker.call("bench:open", noop)
        except Exception:
            return
        raise AssertionError("the breaker did not fail fast")

    opened = per_call(fast_fail, number, repeat)
    breaker.reset("bench:open")
    return {"closed_us": closed * 1e6, "open_us": opened * 1e6}


def _redis_commands(url: str) -> int:
    """Commands the Redis server processed so far (INFO and HELLO of this count left out)."""
    import redis

    stats = redis.Redis.from_url(url).info("commandstats")
    mine = ("cmdstat_info", "cmdstat_hello")
    return sum(int(value["calls"]) for name, value in stats.items() if name not in mine)


def _redis_server() -> tuple[subprocess.Popen[bytes], str] | str:
    """A ``redis-server`` on a free local port, and its URL; else why there is none."""
    binary = shutil.which("redis-server")
    if binary is None:
        return "redis-server not installed"
    if importlib.util.find_spec("redis") is None:
        return "redis-py not installed (the resilience extra)"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", tempfile.gettempdir()],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    process.terminate()
    process.wait(timeout=10)
    return "redis-server did not start"


def bench_breaker(quick: bool) -> dict[str, Any]:
    """Section 4: the circuit breaker's cost per call, in memory and through local Redis:
    with its local copy (the default, read again at most every second) and with
    ``refresh=0`` (a round trip on every call), and the Redis commands a call cost."""
    from normalize_errors.resilience import CircuitBreaker

    number, repeat = (2000, 3) if quick else (10000, 5)
    figures: dict[str, Any] = {
        "plain_us": per_call(lambda: None, number, repeat) * 1e6,
        "memory": _breaker_figures(CircuitBreaker(threshold=1), number, repeat),
    }
    server = _redis_server()
    if isinstance(server, str):
        figures["redis"] = server
        return figures
    process, url = server
    try:
        tenant = f"bench-{os.getpid()}"
        breaker = CircuitBreaker(store=url, threshold=1, tenant=tenant)
        before = _redis_commands(url)
        figures["redis"] = _breaker_figures(breaker, number, repeat)
        calls = number * repeat * 2 + 2  # the closed and open runs, and their first calls
        figures["redis"]["commands_per_call"] = (_redis_commands(url) - before) / calls
        figures["redis"]["degraded"] = breaker.degraded
        breaker.close()
        every = CircuitBreaker(store=url, threshold=1, tenant=tenant, refresh=0.0)
        figures["redis_every_call"] = _breaker_figures(every, number // 5, repeat)
        figures["redis_every_call"]["degraded"] = every.degraded
        every.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
    return figures


def bench_ledger_section(quick: bool) -> dict[str, Any]:
    """Section 5: the ledger's cost per call (``benchmarks/ledger.py``), with a
    ``redis-server`` of its own."""
    sys.path.insert(0, os.path.dirname(__file__))
    from ledger import bench_ledger

    server = _redis_server()
    url = None if isinstance(server, str) else server[1]
    try:
        return bench_ledger(
            quick,
            completion=COMPLETION,
            library=http_library("openai"),
            redis_url=url,
            interleaved=interleaved,
            commands=_redis_commands,
        )
    finally:
        if not isinstance(server, str):
            server[0].terminate()
            server[0].wait(timeout=10)


def table(rows: list[list[str]]) -> str:
    """Aligned columns, the first row a header."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def report(figures: dict[str, Any]) -> str:
    """The figures as text."""
    out = [
        f"normalize-errors {figures['version']} benchmark: Python {figures['python']}, "
        f"{figures['machine']}, {figures['date']}; per-call clock: {figures['clock']}",
        "",
        "1. normalize() per call, median, against pydantic-ai's own mapping of the same",
        "   exception (its models' map_api_errors; measured interleaved with normalize()) and",
        "   LiteLLM's exception_type; 'x' is how many times longer theirs takes",
        "",
    ]
    rows = [
        [
            "provider",
            "failure",
            "vendor exception",
            "harness code",
            "normalize",
            "pydantic-ai",
            "pydantic-ai class",
            "x",
            "LiteLLM",
            "LiteLLM class",
            "x",
        ]
    ]
    for r in figures["normalize"]:
        rows.append(
            [
                r["provider"],
                r["failure"],
                r["exception"],
                r["code"],
                f"{r['normalize_us']:.1f} µs",
                f"{r['pydantic_ai_us']:.1f} µs" if "pydantic_ai_us" in r else "-",
                r.get("pydantic_ai_class", "-"),
                f"{r['pydantic_ai_ratio']:.1f}x" if "pydantic_ai_ratio" in r else "-",
                f"{r['litellm_us']:.0f} µs" if "litellm_us" in r else "-",
                r.get("litellm_class", "(not installed)"),
                f"{r['ratio']:.0f}x" if "ratio" in r else "-",
            ]
        )
    out += [table(rows), ""]
    compared = [r for r in figures["normalize"] if "pydantic_ai_ratio" in r]
    if compared:
        out += [
            f"   median over the {len(compared)} failures both map: normalize "
            f"{statistics.median(r['normalize_us'] for r in compared):.1f} µs, pydantic-ai "
            f"{statistics.median(r['pydantic_ai_us'] for r in compared):.1f} µs; median 'x' "
            f"{statistics.median(r['pydantic_ai_ratio'] for r in compared):.2f}",
            "",
        ]
    w = figures["wrap"]
    mib = 1 << 20
    out += [
        "2. wrap(): the success path on an in-memory transport, the wrapper's own work, streams",
        "",
    ]
    for sdk, name in (("openai", "chat.completions.create"), ("anthropic", "messages.create")):
        out.append(
            f"   {sdk} {name}: raw {w[f'{sdk}_call_raw_us']:.1f} µs, wrapped "
            f"{w[f'{sdk}_call_wrapped_us']:.1f} µs per call; wrapped/raw, paired blocks of 20 "
            f"calls (median ratio): {w[f'{sdk}_call_ratio']:.3f}"
        )
    out += [
        f"   the wrapper's own work per call (a stubbed method: no transport, no parsing): "
        f"openai {w['openai_own_us']:.2f} µs, anthropic {w['anthropic_own_us']:.2f} µs; "
        f"a tight wrapper (bound method, try/except, one isinstance): {w['tight_own_us']:.2f} µs",
        f"   chat stream of {w['chat_stream_chunks']} chunks read one by one: peak memory (median "
        f"of {w['chat_stream_peak_reads']} reads) raw "
        f"{w['chat_stream_raw_peak_bytes'] / mib:.3f} MiB, wrapped "
        f"{w['chat_stream_wrapped_peak_bytes'] / mib:.3f} MiB "
        f"({w['chat_stream_peak_ratio']:.3f}x); "
        f"per chunk raw {w['chat_stream_raw_us_per_chunk']:.2f} µs, wrapped "
        f"{w['chat_stream_wrapped_us_per_chunk']:.2f} µs ({w['chat_stream_time_ratio']:.3f}x)",
        f"   byte stream of {w['bytes_pieces']} pieces of {w['bytes_piece']} B (iter_bytes): "
        f"held at its end: raw {w['bytes_raw_kept_bytes_per_chunk']:.0f} B, "
        f"wrapped {w['bytes_wrapped_kept_bytes_per_chunk']:.0f} B per chunk",
        f"   the proxy's own cost per chunk: {w['proxy_us_per_chunk']:.3f} µs",
        "",
        "3. import time in a fresh interpreter, median",
        "",
    ]
    for module, ms in figures["imports"].items():
        shown = "the pytest plugin" if module.endswith(".plugin") else module
        out.append(f"   import {shown:<18} {'not installed' if ms is None else f'{ms:8.1f} ms'}")
    b = figures["breaker"]
    out += [
        "",
        "4. CircuitBreaker.call around a function that does nothing, per call, median",
        f"   (calling the function alone: {b['plain_us']:.2f} µs)",
        "",
        f"   in memory                      closed {b['memory']['closed_us']:8.2f} µs   "
        f"open (fails fast) {b['memory']['open_us']:8.2f} µs",
    ]
    redis = b["redis"]
    if isinstance(redis, str):
        out.append(f"   through Redis                  skipped: {redis}")
    else:
        every = b["redis_every_call"]
        failed = redis["degraded"] or every["degraded"]
        out += [
            f"   through Redis (local copy)     closed {redis['closed_us']:8.2f} µs   "
            f"open (fails fast) {redis['open_us']:8.2f} µs   "
            f"({redis['commands_per_call']:.4f} Redis commands per call: the copy is read "
            "again at most every second)",
            f"   through Redis, refresh=0       closed {every['closed_us']:8.2f} µs   "
            f"open (fails fast) {every['open_us']:8.2f} µs   "
            "(a round trip per call, localhost)",
        ]
        if failed:
            out.append("   Redis FAILED during the run: the figures are of the local state")
    if "ledger" in figures:
        from ledger import report_ledger

        out += report_ledger(figures["ledger"])
    return "\n".join(out)


def main(argv: list[str]) -> int:
    """Run every section and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--cpu", action="store_true", help="per-call figures in this thread's CPU time"
    )
    args = parser.parse_args(argv)
    if args.cpu:
        CLOCK[0] = time.thread_time
    figures = {
        "version": normalize_errors.__version__,
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "date": time.strftime("%Y-%m-%d"),
        "clock": "CPU time of the thread" if args.cpu else "wall clock",
        "normalize": bench_normalize(args.quick),
        "wrap": bench_wrap(args.quick),
        "imports": bench_imports(args.quick),
        "breaker": bench_breaker(args.quick),
        "ledger": bench_ledger_section(args.quick),
    }
    print(json.dumps(figures, indent=2) if args.json else report(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
