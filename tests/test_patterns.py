"""Every regular expression is listed in ``_patterns``, is linear, and gets bounded input.

No timed assertion here: linearity is shown by the shape of each pattern (no quantifier in a
quantifier; every repeat bounded unless the pattern is anchored) and by the length of every
text that reaches a pattern while the worst inputs found (100,000 digits after "maximum
context length is", Anthropic's "prompt is too long: 999...", a 1 MB page, a huge code) go
through ``from_response``, ``normalize``, ``check``, ``from_dict`` and wrapped clients whose
server echoes the input into its error message. The worst inputs run in a subprocess with a
generous timeout, only so that a regression fails instead of hanging CI.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import normalize_errors
from normalize_errors._base import _patterns
from normalize_errors._base._lazy import LazyPattern
from normalize_errors._reading._rules import CONTEXT_COUNT, Facts, Rule
from tests.support import needs

# The parser behind re.compile.
sre_parse: Any = importlib.import_module("re._parser")

PACKAGE = Path(normalize_errors.__file__).parent
EXEMPT = {"_patterns.py", "_lazy.py", "_redact.py"}
"""Files allowed to compile patterns: the list, the lazy wrapper, and (until its rewrite
lands) redaction, whose patterns will move into the list's last slot."""
RE_CALLS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer"}


def _modules() -> list[str]:
    names = ["normalize_errors"]
    for info in pkgutil.walk_packages([str(PACKAGE)], "normalize_errors."):
        names.append(info.name)
    return names


def _rule_patterns() -> list[str]:
    """The message patterns of every rule table of every adapter, and the shared wording."""
    found = {CONTEXT_COUNT}
    for name in _modules():
        if not name.startswith("normalize_errors.providers."):
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, tuple):
                for row in value:
                    if isinstance(row, Rule) and row.message is not None:
                        found.add(row.message.pattern)
    return sorted(found)


# -- the list is complete ----------------------------------------------------------------------


def test_no_module_compiles_a_pattern_outside_the_list() -> None:
    """An AST scan: ``re.compile`` and friends, ``from re import ...`` and ``LazyPattern(...)``
    appear only in ``_patterns.py`` (and the exempt files)."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in EXEMPT and path.parent == PACKAGE / "_base":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            where = f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom) and node.module == "re":
                offenders.append(f"{where} from re import")
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "re"
                and func.attr in RE_CALLS
            ):
                offenders.append(f"{where} re.{func.attr}")
            if isinstance(func, ast.Name) and func.id == "LazyPattern":
                offenders.append(f"{where} LazyPattern(...)")
    assert offenders == []


def test_every_entry_states_its_bound_and_why_it_is_linear() -> None:
    assert len(_patterns.ALL) >= 25
    sources = [p.source for p in _patterns.ALL]
    assert len(set(sources)) == len(sources)
    for pattern in _patterns.ALL:
        assert isinstance(pattern, LazyPattern)
        assert pattern.bound is None or 0 < pattern.bound <= 65536, pattern.source
        assert len(pattern.why) > 20, pattern.source
        if pattern.bound is None:  # unbounded input: the pattern must be used anchored
            assert "fullmatch" in pattern.why or "match (anchored)" in pattern.why


def test_rule_tables_match_only_the_cut_message() -> None:
    """Rule patterns run on ``Facts.lowered``: the message cut to ``MAX_MESSAGE``."""
    facts = Facts(provider="openai", message="9" * 1_000_000)
    assert len(facts.lowered) == _patterns.MAX_MESSAGE
    assert CONTEXT_COUNT in _rule_patterns()  # the shared wording is among those checked


# -- each pattern is linear by its shape -------------------------------------------------------

_REPEATS = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", -1)}


def _shape(source: str) -> tuple[bool, bool]:
    """(has an unbounded repeat, has a repeat inside an unbounded repeat) of a pattern."""
    unbounded = nested = False

    def walk(items: Any, inside_unbounded: bool, inside_repeat: bool) -> None:
        nonlocal unbounded, nested
        for op, arg in items:
            if op in _REPEATS:
                _, high, body = arg
                is_unbounded = high == sre_parse.MAXREPEAT
                if is_unbounded:
                    unbounded = True
                    if inside_repeat:
                        nested = True
                if inside_unbounded:
                    nested = True
                walk(body, inside_unbounded or is_unbounded, True)
            elif op == sre_parse.SUBPATTERN:
                walk(arg[-1], inside_unbounded, inside_repeat)
            elif op == sre_parse.BRANCH:
                for branch in arg[1]:
                    walk(branch, inside_unbounded, inside_repeat)
            elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
                walk(arg[1], inside_unbounded, inside_repeat)

    walk(sre_parse.parse(source), False, False)
    return unbounded, nested


def test_the_shape_check_catches_quadratic_and_exponential_patterns() -> None:
    assert _shape(r"(?P<observed>\d+) tokens? > (?P<value>\d+) maximum") == (True, False)
    assert _shape(r"(a+)+b") == (True, True)
    assert _shape(r"(?:x|y{0,9})*") == (True, True)
    assert _shape(r"\d{1,12} tokens") == (False, False)
    assert _shape(r"(?:\.[a-z][\w-]{0,63}){0,3}") == (False, False)


@pytest.mark.parametrize("pattern", _patterns.ALL, ids=lambda p: p.source[:40])
def test_listed_pattern_is_linear_by_shape(pattern: LazyPattern) -> None:
    unbounded, nested = _shape(pattern.source)
    assert not nested, "a quantifier inside an unbounded quantifier"
    if pattern.bound is not None:
        assert not unbounded, "searched patterns bound every repeat (\\d{1,12}, not \\d+)"
    pattern.compiled()  # it compiles


@pytest.mark.parametrize("source", _rule_patterns(), ids=lambda s: s[:40])
def test_rule_pattern_is_linear_by_shape(source: str) -> None:
    assert _shape(source) == (False, False)


# -- the worst inputs: each pattern sees at most its bound ----------------------------------------

WORST = r'''
import json, sys
import anthropic, httpx, openai, requests
from google import genai
from normalize_errors import HarnessError, check, diagnose, from_response, normalize, wrap
from normalize_errors._base import _patterns
from normalize_errors._wrapping._replay_calls import http_library

MODE = sys.argv[1]
SEEN = {}
UNLISTED = []


class Recorder:
    """A compiled pattern that notes the length of every text it is given."""

    def __init__(self, pattern, bound):
        self.pattern, self.key, self.bound = pattern, pattern.pattern, bound

    def note(self, text, pos=0):
        size = len(text) - pos
        old = SEEN.get(self.key, (0, self.bound))[0]
        SEEN[self.key] = (max(old, size), self.bound)

    def search(self, text, pos=0, *rest):
        self.note(text, pos)
        return self.pattern.search(text, pos, *rest)

    def match(self, text, pos=0, *rest):
        self.note(text, pos)
        return self.pattern.match(text, pos, *rest)

    def fullmatch(self, text, pos=0, *rest):
        self.note(text, pos)
        return self.pattern.fullmatch(text, pos, *rest)

    def finditer(self, text, *rest):
        self.note(text)
        return self.pattern.finditer(text, *rest)

    def sub(self, repl, text, *rest):
        self.note(text)
        return self.pattern.sub(repl, text, *rest)


BOUNDS = {p.source: p.bound for p in _patterns.ALL}


def replace(value, in_rule=False):
    import re
    from normalize_errors._reading._rules import Rule

    if isinstance(value, re.Pattern):
        if value.pattern in BOUNDS:
            return Recorder(value, BOUNDS[value.pattern])
        if in_rule:
            return Recorder(value, _patterns.MAX_MESSAGE)
        UNLISTED.append(value.pattern)
        return value
    if isinstance(value, Rule) or (  # a rule row, or a wording family (``_wording``)
        isinstance(value, tuple)
        and hasattr(value, "_fields")
        and any(isinstance(v, re.Pattern) for v in value)
    ):
        return type(value)(*(replace(v, True) for v in value))
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(replace(v, in_rule) for v in value)
    return value


from_response(400, {}, "{}", provider="openai")  # load every adapter
from normalize_errors.providers import NAMES
for name in NAMES:
    from_response(400, {}, "{}", provider=name)
for pattern in _patterns.ALL:
    pattern._compiled = Recorder(pattern.compiled(), pattern.bound)
for name, module in list(sys.modules.items()):
    if name.startswith("normalize_errors") and not name.endswith("_redact"):
        for attr, value in list(vars(module).items()):
            new = replace(value)
            if new is not value:
                setattr(module, attr, new)

N = 100_000
DIGITS1, DIGITS9 = "1" * N, "9" * N
MESSAGES = [
    "This model's maximum context length is " + DIGITS1 + " tokens",
    "maximum context length is 8192 tokens. However, you requested " + DIGITS1 + " tokens",
    "prompt is too long: " + DIGITS9,
    "prompt is too long: " + DIGITS9 + " tokens > " + DIGITS9 + " maximum",
    "input length and `max_tokens` exceed context limit: " + DIGITS9 + " + " + DIGITS9,
    "The input token count (" + DIGITS1 + ") exceeds the maximum number of tokens allowed (1)",
    "Prompt contains " + DIGITS1 + " tokens, too large for model with " + DIGITS1,
    "Rate limit reached. Please try again in " + DIGITS1 + "ms",
    "Error in function " + "a" * N,
    "1 tokens > " * (N // 10),
    "Trying to keep the first " + DIGITS1 + " tokens when context the overflows. However, the"
    " model is loaded with context length of only " + DIGITS1 + " tokens",
    "`inputs` tokens + `max_new_tokens` must be <= " + DIGITS1 + ". Given: " + DIGITS1
    + " `inputs` tokens and " + DIGITS1 + " `max_new_tokens`",
    "Input validation error: `inputs` must have less than " + DIGITS1 + " tokens. Given: "
    + DIGITS1,
    "Range of input length should be [1, " + DIGITS1 + "]",
    "request (1 tokens) exceeds the available context size (" + DIGITS1 + " tokens)",
    "Rate limit on tokens per min (TPM): Limit " + DIGITS1 + ", Used " + DIGITS1 + ", Requested "
    + DIGITS1 + ". Please try again in 1s.",
    "request reached project TPM rate limit, current: " + DIGITS1 + ", limit: " + DIGITS1
    + ", try again later",
    "Quota exceeded for metric: " + "a/" * N + ", limit: 0, try again later",
    "You will regain access on " + "2026-09-01 at " * N + "00:00 UTC, try again later",
    "Your quota will reset in " + DIGITS9 + " hours, try again later",
    "Your quota will reset in ~" + "1" * 9 + "." + DIGITS1 + " hours, try again later",
    "Rate limit reached for " + "a" * N + " in organization, model: " + "b" * N,
    "Access resets at 10:" + DIGITS1 + " PM GMT-" + DIGITS1 + ", try again later",
    "attempted to call tool '" + "a" * N + "' which was not in request.tools",
    "tool call validation failed: parameters for tool " + "a" * N + " did not match schema: "
    + DIGITS1,
]
PAGE = "<html><title>" + "<title" * N + "</title><hr><center>" + " " * N + "nginx" + "</html>"
results = {}


def body(provider, message):
    limited = "try again" in message
    if provider == "anthropic":
        kind = "rate_limit_error" if limited else "invalid_request_error"
        return {"type": "error", "error": {"type": kind, "message": message}}
    if provider == "google":
        status = "RESOURCE_EXHAUSTED" if limited else "INVALID_ARGUMENT"
        return {"error": {"code": 400, "message": message, "status": status,
                "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                             "violations": [{"quotaId": "x" * N + "PerDay"}]}]}}
    code = "rate_limit_exceeded" if limited else "context_length_exceeded"
    if " tool " in message:
        code = "tool_use_failed"
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def answer(err):
    assert isinstance(err, HarnessError), err
    limit = err.limit or {}
    return [err.problem.code, limit.get("value"), limit.get("observed"), err.retry_after]


if MODE == "from_response":
    for provider in ("openai", "anthropic", "google", "http", None):
        for i, message in enumerate(MESSAGES):
            text = json.dumps(body(provider, message))
            results[f"{provider}/{i}"] = answer(from_response(400, {}, text, provider=provider))
            results[f"{provider}/{i}/429"] = answer(from_response(
                429, {"retry-after": " " * N + "5", "retry-after-ms": DIGITS1}, text,
                provider=provider))
        results[f"{provider}/page"] = answer(from_response(502, {}, PAGE, provider=provider))
        results[f"{provider}/envoy"] = answer(from_response(
            503, {}, "upstream connect error or disconnect/reset before headers. reset reason: "
            + "overflow " * N, provider=provider))
        gfe = "<html><title>Error 502 (Server Error)!!1</title>" + "x" * N
        results[f"{provider}/gfe"] = answer(from_response(502, {}, gfe, provider=provider))
    # a status that is no canonical one (the set of them is asked first): the pattern decides
    odd = json.dumps({"error": {"code": 400, "message": "m", "status": "A" * N}})
    results["google/odd status"] = answer(from_response(400, {}, odd, provider="google"))
    # the wording families: a missing model's name between the words, a wait said in Chinese
    missing = json.dumps({"message": "model " + "a " * 500 + "not found " * N})
    results["http/model"] = answer(from_response(503, {}, missing))
    wait = json.dumps({"message": "请 " + "1" * 1000 + " 秒后重试 " + "后" * N})
    results["http/wait"] = answer(from_response(429, {}, wait))
    # botocore's printed text: an error code and an operation name of any length
    printed = ("An error occurred (" + "A" * 200 + ") when calling the " + "B" * N
               + " operation (reached max retries: " + "9" * N + "): m")
    results["bedrock/printed"] = answer(from_response(None, {}, printed))

if MODE == "normalize":
    results["requests"] = answer(normalize(requests.exceptions.ConnectionError(
        "https://example.com/v1?key=" + "a" * N + "&" + "?b=" * N)))
    results["urllib3"] = answer(normalize(requests.exceptions.ChunkedEncodingError(DIGITS1)))
    for name in ("ReadTimeout", "TooManyRedirects", "InvalidURL", "ContentDecodingError",
                 "RetryError", "RequestException"):
        results[name] = answer(normalize(getattr(requests.exceptions, name)(DIGITS1)))
    from google.genai import errors as genai_errors
    results["function"] = answer(normalize(genai_errors.UnknownFunctionCallArgumentError(
        "Failed to parse parameter for function " + "function " * N)))
    results["group"] = answer(normalize(ExceptionGroup("g", [ValueError(DIGITS1)] * 1000)))
    results["code"] = answer(HarnessError.from_dict({"code": "x-" + "a" * (10 * N) + ".b"}))
    try:
        HarnessError.from_dict({"code": "a" * (10 * N)})
        results["bad code"] = "accepted"
    except ValueError as exc:
        results["bad code"] = type(exc).__name__
    from normalize_errors._base._http_wire import parse_duration
    results["duration"] = [parse_duration("1s" * N), parse_duration("1h2m3s")]

if MODE == "check":
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    huge = {"id": "x", "object": "chat.completion", "model": "m", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
        "tool_calls": [{"id": "c", "type": "function", "function": {
            "name": "function " + "a" * N, "arguments": "{" + DIGITS1}}]}}]}
    for provider in ("openai", "http"):
        err = diagnose(huge, provider=provider, tools=tools)
        results[f"diagnose/{provider}"] = None if err is None else err.code
    google = {"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL",
              "finishMessage": "Malformed function call: function " + "a" * N + DIGITS1}]}
    err = diagnose(google, provider="google")
    results["diagnose/google"] = None if err is None else err.code

if MODE == "wrapped":
    def echo(library, prefix, suffix, provider):
        def handler(request):
            sent = json.loads(request.content or b"{}")
            text = json.dumps(sent)
            message = prefix + text[-N:] + suffix
            return library.Response(400, json=body(provider, message))
        return library.MockTransport(handler)

    oa = http_library("openai")
    client = wrap(openai.OpenAI(api_key="sk-test", base_url="http://local/v1", max_retries=0,
        http_client=oa.Client(transport=echo(oa, "This model's maximum context length is ",
                                              " tokens", "openai"))))
    try:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": DIGITS1}])
    except HarnessError as err:
        results["openai"] = answer(err)
    an = http_library("anthropic")
    client = wrap(anthropic.Anthropic(api_key="sk-ant-test", max_retries=0,
        http_client=an.Client(transport=echo(an, "prompt is too long: ", "", "anthropic"))))
    try:
        client.messages.create(model="m", max_tokens=1, messages=[{"role": "user",
                               "content": DIGITS9}])
    except HarnessError as err:
        results["anthropic"] = answer(err)
    client = wrap(genai.Client(api_key="test-key", http_options={"api_version": "v1beta",
        "httpx_client": httpx.Client(transport=echo(httpx, "The input token count (", ")",
                                                    "google"))}))
    try:
        client.models.generate_content(model="m", contents=DIGITS1)
    except HarnessError as err:
        results["google"] = answer(err)

print(json.dumps({"seen": SEEN, "unlisted": UNLISTED, "results": results}))
'''


@functools.cache
def worst(mode: str) -> dict[str, Any]:
    """Run the worst inputs of ``mode`` in a child process; the timeout only guards CI."""
    needs("anthropic", "httpx", "openai", "requests")
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WORST), mode],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.stdout)
    assert report["unlisted"] == []
    for source, (seen, bound) in report["seen"].items():
        if bound is not None:
            assert seen <= bound, f"{source!r} was given {seen} characters (bound {bound})"
    return report


def test_worst_messages_through_from_response() -> None:
    report = worst("from_response")
    results = report["results"]
    for provider in ("openai", "anthropic", None):
        # 100,000 digits are no number of tokens: the error is still a context error,
        # without a limit (it used to run for minutes, then fail on int() of the digits).
        assert results[f"{provider}/0"][:3] == ["context.window_exceeded", None, None]
        assert results[f"{provider}/2"][0] == "context.window_exceeded"
        assert results[f"{provider}/3"][:3] == ["context.window_exceeded", None, None]
        # No wait is read from a number of 100,000 digits, nor from the cut headers.
        assert results[f"{provider}/7/429"] == ["upstream.rate_limited", None, None, None]
    assert results["openai/1"][:3] == ["context.window_exceeded", 8192, None]
    assert results["google/odd status"][0] == "upstream.invalid_request"  # the 400 decides
    # a "model" 1000 characters before "not found" names no model; a digit run's tail no wait
    assert results["http/model"][0] == "upstream.unavailable"
    assert results["http/wait"] == ["upstream.rate_limited", None, None, None]
    assert results["bedrock/printed"][0] == "upstream.unavailable"  # no code read: no status
    assert all(code != "harness.internal_error" for code, *_ in results.values())
    seen = report["seen"]
    for pattern in _patterns.ALL:
        if pattern.source.startswith(("(?i)maximum", "(?<!\\d)(?P<observed>", "context limit")):
            assert pattern.source in seen


def test_worst_inputs_through_normalize_and_from_dict() -> None:
    report = worst("normalize")
    results = report["results"]
    assert results["requests"][0] == "upstream.unavailable"
    assert results["ReadTimeout"][0] == "upstream.unavailable"
    assert results["code"][0] == "x-" + "a" * 1_000_000 + ".b"
    assert results["bad code"] == "ProblemFormatError"
    assert results["duration"] == [None, 3723.0]
    assert results["function"][0] == "output.invalid_tool_arguments"
    names = ("HTTP_QUERY", "HTTP_TIMEOUT", "HTTP_REDIRECT", "CODE", "DURATION_PART")
    for name in (*names, "GOOGLE_FUNCTION"):
        assert getattr(_patterns, name).source in report["seen"], name


def test_worst_results_through_check() -> None:
    report = worst("check")
    assert report["results"]["diagnose/openai"] == "output.unknown_tool"
    assert report["results"]["diagnose/google"] == "output.invalid_tool_arguments"


def test_worst_echoes_through_wrapped_clients() -> None:
    """A server that echoes the input into its error message, behind each wrapped SDK."""
    report = worst("wrapped")
    results = report["results"]
    assert results["openai"][:3] == ["context.window_exceeded", None, None]
    assert results["anthropic"][0] == "context.window_exceeded"
    assert results["google"][0] in {"context.window_exceeded", "upstream.invalid_request"}


_READER_PREFIXES = (
    "JSONRPC_",
    "A2A_",
    "PYDANTIC_AI_",
    "AGENTS_",
    "INSTRUCTOR_",
    "RESILIENCE_",
)


def test_every_listed_pattern_is_reached_by_the_worst_inputs() -> None:
    seen: set[str] = set()
    for mode in ("from_response", "normalize", "check"):
        seen.update(worst(mode)["seen"])
    missing = [p.source for p in _patterns.ALL if p.source not in seen]
    # RULE_ESCAPE runs on the rule tables' own sources when an adapter loads, before the
    # recorders are installed. The bindings' and framework readers' patterns run only on what
    # their own SDKs raise (their tests run those SDKs), and the breaker's tenant pattern
    # only on the tenant a CircuitBreaker is made with (tests/resilience);
    # each call cuts its text to its bound, and their shape is checked like every entry's.
    readers = [
        p.source
        for name, p in vars(_patterns).items()
        if name.startswith(_READER_PREFIXES) and isinstance(p, LazyPattern)
    ]
    assert missing == [_patterns.RULE_ESCAPE.source, *readers]


def test_context_limit_reads_bounded_numbers() -> None:
    from normalize_errors._reading._rules import context_limit

    assert context_limit("prompt is too long: 208310 tokens > 200000 maximum") == {
        "name": "context_tokens",
        "value": 200000,
        "observed": 208310,
    }
    assert context_limit("prompt is too long: " + "9" * 100_000 + " tokens > 1 maximum") is None
    assert re.fullmatch(r"\d{1,12}", "1" * 12)
