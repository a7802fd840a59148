"""How the time of one call grows with the size of the worst hostile inputs found.

    python benchmarks/hostile_growth.py           # every entry point, 10 KB, 100 KB and 1 MB
    python benchmarks/hostile_growth.py --quick   # one repeat instead of three
    python benchmarks/hostile_growth.py --cpu     # CPU time instead of wall time

For each entry point (``from_response``, ``normalize``, ``diagnose``, ``diagnose_stream``,
``from_dict``, ``read_problem``) a few worst-case inputs are built at 10 KB, 100 KB and
1 MB, and the slowest of them (the worst found) is printed with its three times and the
growth from 10 KB to 1 MB: linear work grows about 100 times (less where the input is cut
before any pattern runs); quadratic work would grow 10,000 times. Nesting is reported the
same way, by depth (10, 100, 1000 levels) and by fan-out (a list of 16 references to the
same object at every level). Each figure is the median of the repeats, with the garbage
collector paused. On a machine other jobs keep busy, a wall-clock figure takes in the time
slices the call waited for (about 20 ms each under a load of a dozen jobs), which inflates
the longest calls and their growth: ``--cpu`` times the CPU the process used instead. A size
is not tried ("skipped") once the size before it took over 0.25 s: at ten times the size a
quadratic input would take 25 s or more, which is the finding.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import openai

from normalize_errors import HarnessError, diagnose, from_response, normalize
from normalize_errors._facade import diagnose_stream
from normalize_errors._wrapping._replay_calls import http_library
from normalize_errors.bindings.http import read_problem

SIZES = (10_000, 100_000, 1_000_000)
PROBLEM = "https://agenterrors.org/problems/harness-error"


def _openai_error(message: str) -> BaseException:
    """A real ``openai.BadRequestError`` for a 400 whose message is ``message``."""
    body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    http: Any = http_library("openai")  # the HTTP library this openai release uses
    request = http.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = http.Response(400, json=body, request=request)
    return openai.BadRequestError(message, response=response, body=body["error"])


def _chat(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
    }


def _call(name: str, n: int) -> dict[str, Any]:
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": "{}"}}


# entry point -> {input name: (build an input of n characters, run it)}
Case = tuple[Callable[[int], Any], Callable[[Any], Any]]
TOOLS = [{"type": "function", "function": {"name": "get_weather"}}]
CASES: dict[str, dict[str, Case]] = {
    "from_response": {
        "openai 'maximum context length is 111...'": (
            lambda n: json.dumps(
                {"error": {"message": "maximum context length is " + "1" * n + " tokens"}}
            ),
            lambda body: from_response(400, {}, body, provider="openai"),
        ),
        "anthropic 'prompt is too long: 999...'": (
            lambda n: json.dumps(
                {"type": "error", "error": {"message": "prompt is too long: " + "9" * n}}
            ),
            lambda body: from_response(400, {}, body, provider="anthropic"),
        ),
        "HTML page of '<title'": (
            lambda n: "<html><title>" + "<title" * (n // 6),
            lambda body: from_response(502, {}, body),
        ),
        "'eyJ-' repeated (redaction)": (
            lambda n: json.dumps({"error": {"message": "eyJ-" * (n // 4)}}),
            lambda body: from_response(401, {}, body, provider="openai"),
        ),
    },
    "normalize": {
        "openai.BadRequestError 'maximum context length is 111...'": (
            lambda n: _openai_error("This model's maximum context length is " + "1" * n),
            normalize,
        ),
        "exception group of n/10 members": (
            lambda n: ExceptionGroup("g", [ConnectionError("x")] * (n // 10)),
            normalize,
        ),
        "ValueError of n digits": (lambda n: ValueError("1" * n), normalize),
    },
    "diagnose": {
        "unknown tool named 'function aaa...'": (
            lambda n: _chat({"role": "assistant", "tool_calls": [_call("a" * n, n)]}, "tool_calls"),
            lambda result: diagnose(result, provider="openai", tools=TOOLS),
        ),
        "refusal of n characters (redaction)": (
            lambda n: _chat({"role": "assistant", "refusal": "eyJ-" * (n // 4)}),
            lambda result: diagnose(result, provider="openai"),
        ),
    },
    "diagnose_stream": {
        "n/100 chunks of 100 characters": (
            lambda n: (
                [
                    {"choices": [{"index": 0, "delta": {"content": "1" * 100}}]}
                    for _ in range(n // 100)
                ]
                + [{"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}]
            ),
            lambda chunks: diagnose_stream(chunks, provider="openai"),
        ),
        "one chunk whose refusal is n characters (redaction)": (
            lambda n: [
                {
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"refusal": "eyJ-" * (n // 4)},
                            "finish_reason": "stop",
                        }
                    ]
                }
            ],
            lambda chunks: diagnose_stream(chunks, provider="openai"),
        ),
    },
    "from_dict": {
        "code of n characters": (
            lambda n: {"code": "x-" + "a" * n + ".b"},
            HarnessError.from_dict,
        ),
        "causes list of n/50 entries": (
            lambda n: {"code": "upstream.x", "causes": [{"code": "upstream.y"}] * (n // 50)},
            HarnessError.from_dict,
        ),
        "detail of n digits": (
            lambda n: {"code": "upstream.x", "detail": "1" * n},
            HarnessError.from_dict,
        ),
    },
    "read_problem": {
        "problem whose detail is n digits": (
            lambda n: json.dumps({"type": PROBLEM, "code": "upstream.x", "detail": "1" * n}),
            lambda body: read_problem(500, {}, body),
        ),
        "problem with a code of n characters": (
            lambda n: json.dumps({"type": PROBLEM, "code": "x-" + "a" * n + ".b"}),
            lambda body: read_problem(500, {}, body),
        ),
    },
}


def _nested_causes(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"code": "upstream.x", "detail": "root"}
    for _ in range(depth):
        node = {"code": "upstream.x", "causes": [node]}
    return node


def _shared_causes(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"code": "upstream.x", "detail": "root"}
    for _ in range(depth):
        node = {"code": "upstream.x", "causes": [node] * 16}
    return node


def _nested_json(depth: int) -> str:
    return '{"error": ' * depth + '{"message": "x"}' + "}" * depth


def _nested_group(depth: int) -> BaseException:
    group: Exception = TimeoutError("t")
    for _ in range(depth):
        group = ExceptionGroup("g", [group, ConnectionError("c")])
    return group


NESTING: dict[str, tuple[tuple[int, ...], Callable[[int], Any], Callable[[Any], Any]]] = {
    "from_dict: causes nested d deep": ((10, 100, 1000), _nested_causes, HarnessError.from_dict),
    "from_dict: 16 shared references per level, d levels": (
        (2, 4, 12),
        _shared_causes,
        HarnessError.from_dict,
    ),
    "from_response: JSON body nested d deep": (
        (10, 100, 1000),
        _nested_json,
        lambda body: from_response(500, {}, body),
    ),
    "normalize: exception groups nested d deep": ((10, 100, 500), _nested_group, normalize),
}


CLOCK: list[Callable[[], float]] = [time.perf_counter]
"""The clock ``timed`` reads: wall time, or ``time.process_time`` with ``--cpu``."""


def timed(func: Callable[[Any], Any], value: Any, repeat: int) -> float:
    """Median seconds of ``func(value)`` over ``repeat`` calls, the collector paused."""
    clock = CLOCK[0]
    runs = []
    for _ in range(repeat):
        gc.disable()
        try:
            start = clock()
            func(value)
            runs.append(clock() - start)
        finally:
            gc.enable()
    return statistics.median(runs)


def _ms(seconds: float | None) -> str:
    return "skipped" if seconds is None else f"{seconds * 1000:.2f} ms"


def _growth(times: list[float | None]) -> str:
    first, last = times[0], times[-1]
    if first is None or last is None or first <= 0:
        return "-"
    return f"{last / first:.0f}x"


def series(
    build: Callable[[int], Any], run: Callable[[Any], Any], sizes: tuple[int, ...], repeat: int
) -> list[float | None]:
    """The time at each size; a size is skipped once the previous one took over 0.25 s."""
    times: list[float | None] = []
    for size in sizes:
        if times and (times[-1] is None or times[-1] > 0.25):
            times.append(None)
            continue
        times.append(timed(run, build(size), repeat))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat instead of three")
    parser.add_argument("--cpu", action="store_true", help="CPU time instead of wall time")
    args = parser.parse_args()
    repeat = 1 if args.quick else 3
    if args.cpu:
        CLOCK[0] = time.process_time
    for cases in CASES.values():  # warm up: imports and compiled patterns
        for build, run in cases.values():
            run(build(100))
    clock = "CPU time" if args.cpu else "wall time"
    version = sys.version.split()[0]
    print(f"Python {version}; {clock}, median of {repeat}; garbage collector paused\n")
    head = f"{'10 KB':>11} {'100 KB':>11} {'1 MB':>11} {'growth':>8}"
    print(f"{'entry point':<16} {head}  worst input")
    for name, cases in CASES.items():
        measured = {what: series(build, run, SIZES, repeat) for what, (build, run) in cases.items()}

        def worst(item: tuple[str, list[float | None]]) -> float:
            return max((t if t is not None else float("inf")) for t in item[1])

        what, times = max(measured.items(), key=worst)
        cells = " ".join(f"{_ms(t):>11}" for t in times)
        print(f"{name:<16} {cells} {_growth(times):>8}  {what}")
    print(f"\n{'nesting':<52} {'depths':>14} {'times':>36} {'growth':>8}")
    for what, (depths, build, run) in NESTING.items():
        times = series(build, run, depths, repeat)
        cells = " ".join(f"{_ms(t):>11}" for t in times)
        shown = "/".join(str(d) for d in depths)
        print(f"{what:<52} {shown:>14} {cells} {_growth(times):>8}")


if __name__ == "__main__":
    main()
