"""``normalize-errors classify`` on what a person pastes (``normalize_errors/_cli/_pasted.py``).

The argument (a file, a folder, or the text itself), chained and grouped tracebacks of real
SDK exceptions, and text that holds nothing a provider sends. The tracebacks are real: each
SDK exception is raised by the real SDK client replaying a shipped cassette, then raised
again under the application's own exception (``raise ... from``), while handling it, or in
an exception group, and printed by Python's ``traceback`` module; what ``classify`` reads
from the text is compared with what ``normalize()`` reads from the exception itself.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from normalize_errors import corpus, normalize
from normalize_errors._cli import main

from .support import needs

SCRIPT = Path(sys.executable).with_name("normalize-errors")
NE = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "normalize_errors"]
"""The console script as a user runs it (``python -m`` where it is not beside Python)."""


def console(
    *argv: str, stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``normalize-errors ARGV`` run by its console script in a child process."""
    return subprocess.run(
        [*NE, *argv], input=stdin, capture_output=True, text=True, check=False, cwd=cwd
    )


def classify(text: str, *argv: str) -> tuple[int, str, str]:
    """``classify`` in this process, ``text`` on standard input: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(text.encode()))
    try:
        with contextlib.redirect_stderr(err):
            status = main(["classify", *argv], out)
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


# -- item 3: the argument ----------------------------------------------------------------------


def test_json_pasted_as_the_argument_is_read_as_text() -> None:
    """``classify '{"error": ...}'``: no file by that name, and it looks like JSON: the text
    itself is classified (it was a FileNotFoundError traceback, exit 1)."""
    body = '{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}'
    done = console("classify", body)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["code"] == "upstream.rate_limited"
    assert "Traceback" not in done.stderr


def test_a_traceback_or_an_exception_line_pasted_as_the_argument_is_read_as_text() -> None:
    line = "openai.RateLimitError: Error code: 429 - {'error': {'code': 'rate_limit_exceeded'}}"
    done = console("classify", line)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["upstream"]["status"] == 429
    whole = 'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n' + line
    done = console("classify", whole)
    assert done.returncode == 0, done.stderr
    raw = "HTTP/1.1 503 Service Unavailable"  # a status line alone
    assert json.loads(console("classify", raw).stdout)["upstream"]["status"] == 503


@pytest.mark.parametrize(
    ("argument", "said"),
    [
        ("{folder}", "is a folder: give one file, or the text itself"),
        ("{folder}/", "is a folder: give one file, or the text itself"),
        ("{folder}/missing.http", "no file "),
        ("response.txt", "no file 'response.txt' (an argument that names no file is read"),
    ],
)
def test_a_folder_or_a_missing_file_is_one_line_and_exit_2(
    tmp_path: Path, argument: str, said: str
) -> None:
    """What the CLI page promises: exit status 2, one line on standard error, nothing on
    standard output, no traceback."""
    done = console("classify", argument.format(folder=tmp_path))
    assert (done.returncode, done.stdout) == (2, "")
    assert said in done.stderr
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("classify: ")


def test_a_key_given_as_the_argument_is_never_echoed() -> None:
    """A key pasted where a file was meant: the refusal names no such file, redacted."""
    key = "sk-proj-" + "Zq7" * 16  # shaped like an OpenAI key (constructed)
    done = console("classify", key)
    assert (done.returncode, done.stdout) == (2, "")
    assert key not in done.stderr
    assert "no file '[REDACTED]'" in done.stderr


def test_a_file_is_read_first_even_when_its_name_looks_like_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path that exists is a file to read, whatever its name holds; one that cannot be
    read is refused in one line (exit 2)."""
    odd = tmp_path / "{response}.http"
    odd.write_bytes(b"HTTP/1.1 529 \r\n\r\n")
    status, out, _ = classify("", str(odd))
    assert status == 0
    assert json.loads(out)["upstream"]["status"] == 529
    from normalize_errors import _cli

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_cli, "open", refuse, raising=False)
    assert classify("", str(odd)) == (
        2,
        "",
        f"classify: cannot read {odd}: Permission denied\n",
    )


# -- item 5: text that holds nothing a provider sends ----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Error: something went wrong",  # read as a header line before
        "[1,2,3]",  # read as a bare body before
        '{"status": "error"}',
        '{"foo": 1}',
        '{"status": null, "headers": {}, "body": {"a": 1}}',
        "hello",
        "{}",
        "[]",
        "42",
        '"hello"',
        "",
    ],
)
def test_text_with_nothing_a_provider_sends_is_not_recognised(text: str) -> None:
    """No confident ``upstream.unavailable``, retry, exit 0: exit status 3, nothing on
    standard output, and standard error says it is not recognised and no code is guessed."""
    done = console("classify", stdin=text)
    assert (done.returncode, done.stdout) == (3, ""), done.stderr
    assert done.stderr.startswith("classify: not recognised: ")
    assert "no code is guessed" in done.stderr
    assert done.stderr.count("\n") == 1


def http_cases() -> list[corpus.Case]:
    return [c for c in corpus.load() if c.kind == "http"]


def test_every_real_failure_of_the_corpus_still_classifies() -> None:
    """Each ``http`` case of the corpus of real failures, pasted as a response object (its
    status, headers and body), classifies (exit 0) to the code ``from_response`` gives it:
    the not-recognised answer takes nothing real away."""
    cases = http_cases()
    assert len(cases) > 300
    for case in cases:
        pasted = json.dumps({"status": case.status, "headers": case.headers, "body": case.body})
        status, out, err = classify(pasted)
        assert status == 0, (case.id, err)
        assert json.loads(out)["code"] == corpus.run(case).code, case.id


def test_a_real_body_pasted_alone_is_not_recognised_only_when_it_says_nothing() -> None:
    """Every case's body pasted alone, with no status: a JSON body, a page, a stream or an
    SDK's error text is not recognised only when the library reads no fact of the vendor's
    in it even with its status (``from_response`` then keeps nothing but the provider and
    the status: Cloudflare AI Gateway's ``{"error": [{"code": 2005, ...}]}``, a body of
    ``{"html-message": ...}``), so no answer is lost that the body could give. Plain text
    without its status is no form ``classify`` reads ("hello" would be one)."""
    from normalize_errors import from_response

    refused = []
    for case in corpus.load():
        status, _, err = classify(case.body)
        assert status in (0, 2, 3), (case.id, err)
        if status != 3 or err.startswith("classify: not recognised: no status line"):
            continue
        refused.append(case.id)
        told = from_response(case.status, case.headers, case.body).upstream
        assert set(told) <= {"provider", "status"}, (case.id, told)
    assert len(refused) < 10, refused


def test_results_and_streams_of_the_corpus_pasted_alone_are_read_as_the_corpus_reads_them() -> None:
    """A result or a stream pasted alone (a chat completion cut at the token limit, a
    stream's events) is read for its stop reason, as ``corpus.run`` reads the case: the same
    code, unless the corpus's answer came from its 200 status alone ("a success response, it
    reports no error"), which the body does not hold: not recognised."""
    for case in corpus.load():
        if case.kind == "http":
            continue
        expected = corpus.run(case)
        status, out, err = classify(case.body)
        if set(expected.upstream) <= {"provider", "status"}:
            assert status == 3, (case.id, err)
        else:
            assert status == 0, (case.id, err)
            assert json.loads(out)["code"] == expected.code, case.id


def printed_cases() -> list[corpus.Case]:
    """The corpus cases whose body is an SDK's printed error text (botocore's, Google's gRPC
    text) or a dict a log printed with ``repr``, whole."""
    import ast

    from normalize_errors.providers._routing import provider_of_text

    found = []
    for case in corpus.load():
        body = case.body.strip()
        if body[:2] in ("{'", "[{"):
            try:
                ast.literal_eval(body)
            except (ValueError, SyntaxError):
                continue
            found.append(case)
        elif body[:1] not in ("{", "[", "<") and provider_of_text(body):
            found.append(case)
    return found


def test_an_sdks_printed_text_or_a_repr_dict_from_a_log_is_read() -> None:
    """What logs show of a failure with no status: botocore's ``An error occurred
    (ThrottlingException) when calling the Converse operation: ...``, Google's gRPC text,
    a body printed as a Python dict. Each is read (it was refused with exit status 2) and
    gives the corpus's expected code."""
    cases = printed_cases()
    assert len(cases) >= 12
    for case in cases:
        status, out, err = classify(case.body)
        assert status == 0, (case.id, err)
        code = json.loads(out)["code"]
        assert code == case.expected_code or code in case.also_accept, (case.id, code)


# -- item 4: chained and grouped tracebacks of real SDK exceptions ---------------------------


class StepFailed(Exception):
    """The application's own exception, raised over the SDK's."""


def sdk_exception(cassette: str) -> Exception:
    """The exception the real SDK client raises replaying a shipped cassette."""
    from normalize_errors import replay

    outcome = replay.run(replay.load(replay.shipped() / cassette))
    assert isinstance(outcome.exception, Exception), cassette
    return outcome.exception


def raised_from(exc: Exception) -> Exception:
    try:
        try:
            raise exc
        except Exception as err:
            raise StepFailed("the planning step failed: see the cause") from err
    except StepFailed as outer:
        return outer


def raised_while_handling(exc: Exception) -> Exception:
    try:
        try:
            raise exc
        except Exception:
            models: dict[str, str] = {}
            models["fallback_model"]  # a bug in the except block
    except KeyError as outer:
        return outer
    raise AssertionError("unreachable")


def raised_in_a_group(exc: Exception) -> Exception:
    try:
        raise ExceptionGroup("the agent's tool calls failed", [ValueError("bad"), exc])
    except ExceptionGroup as group:
        return group


def raised_in_a_nested_group_under_the_application(exc: Exception) -> Exception:
    try:
        try:
            inner = ExceptionGroup("retrieval", [raised_from(exc)])
            raise ExceptionGroup("the run failed", [TimeoutError("tool"), inner])
        except ExceptionGroup as group:
            raise StepFailed("the run failed") from group
    except StepFailed as outer:
        return outer


CHAINS: list[Callable[[Exception], Exception]] = [
    raised_from,
    raised_while_handling,
    raised_in_a_group,
    raised_in_a_nested_group_under_the_application,
]

CASSETTES = [
    "anthropic/overloaded_529.yaml",
    "anthropic/cloudflare_502_html.yaml",
    "openai/insufficient_quota_429.yaml",
    "openai/context_length_exceeded_400.yaml",
    "google/api_key_invalid_400.yaml",
    "cohere/billing_limit_402.yaml",
]

LEAKS = (
    "The above exception",
    "During handling",
    "Traceback (most recent call last)",
    "the planning step failed",
    "fallback_model",
    "sub-exception",
    "+-+--",
    'File "',
)
"""Words of the rest of a traceback, which an SDK exception's message must not take in."""


@pytest.mark.parametrize("chain", CHAINS, ids=[c.__name__ for c in CHAINS])
@pytest.mark.parametrize("cassette", CASSETTES)
def test_a_chained_traceback_is_read_at_the_sdk_exception(
    cassette: str, chain: Callable[[Exception], Exception]
) -> None:
    """The SDK's exception is read, not the application's over it: the code, retryable and
    status ``normalize()`` gives the exception itself; ``detail`` and ``upstream.message``
    hold its message and nothing of the rest of the traceback; every request id, vendor
    code and type the printed line carries is kept, and ``upstream.exception`` names it."""
    needs(cassette.partition("/")[0] if cassette.startswith("cohere") else "yaml")
    exc = sdk_exception(cassette)
    outer = chain(exc)
    pasted = "".join(traceback.format_exception(outer))
    assert qualname_of(exc) in pasted
    status, out, err = classify(pasted)
    assert status == 0, err
    problem = json.loads(out)
    expected = normalize(exc)
    assert (problem["code"], problem["retryable"]) == (expected.code, expected.retryable)
    line = f"{qualname_of(exc)}: {str(exc).splitlines()[0]}"  # the exception's line
    if str(expected.upstream["status"]) in line:  # anthropic 0.x prints a page alone
        assert problem["upstream"]["status"] == expected.upstream["status"]
    assert problem["upstream"]["exception"] == qualname_of(exc)
    for text in (problem.get("detail") or "", problem["upstream"].get("message") or ""):
        assert not any(leak in text for leak in LEAKS), text
    for key in ("request_id", "code", "type"):
        value = expected.upstream.get(key)
        if value and str(value) in pasted:  # the line printed it: it is kept
            assert problem["upstream"].get(key) == value, key
    if expected.detail and expected.detail in line:  # the SDK's message, whole
        assert problem["detail"] == expected.detail
    assert f"the SDK's exception read: {qualname_of(exc)}" in err


def qualname_of(exc: BaseException) -> str:
    """The class of ``exc`` as Python's traceback prints it."""
    cls = type(exc)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def test_anthropic_labels_give_back_the_request_id_and_type() -> None:
    """anthropic 2.17 and later print the status, the message and labels: ``529 Overloaded
    (request_id: req_..., path: /v1/messages, type: overloaded_error)``. Read, they give the
    request id, the type and the message apart; the line is the real SDK's."""
    exc = sdk_exception("anthropic/overloaded_529.yaml")
    line = traceback.format_exception(exc)[-1].strip()
    if "(request_id: " not in line:
        pytest.skip(f"this anthropic prints its errors otherwise: {line[:80]}")
    status, out, _ = classify(line)
    assert status == 0
    problem = json.loads(out)
    assert problem["upstream"]["request_id"] == normalize(exc).upstream["request_id"]
    assert (problem["upstream"]["type"], problem["detail"]) == ("overloaded_error", "Overloaded")


def test_of_several_sdk_exceptions_the_one_normalize_reads_is_chosen() -> None:
    """A chain of two SDK errors (the overload raised while handling the quota error) is
    read at the last, as ``normalize()`` reads the exception that escaped; a group of both
    gives the most telling (the quota error: waiting does not help), the other as a cause,
    as ``normalize()`` of the group does."""
    quota = sdk_exception("openai/insufficient_quota_429.yaml")
    overload = sdk_exception("anthropic/overloaded_529.yaml")
    try:
        try:
            raise quota
        except Exception:
            raise overload  # noqa: B904 - raised while handling, as a fallback call would
    except Exception as escaped:
        pasted = "".join(traceback.format_exception(escaped))
        expected = normalize(escaped)
    status, out, _ = classify(pasted)
    assert status == 0
    assert json.loads(out)["code"] == expected.code == "upstream.overloaded"
    group = ExceptionGroup("both calls failed", [overload, quota])
    pasted = "".join(traceback.format_exception(group))
    expected = normalize(group)
    status, out, _ = classify(pasted)
    problem = json.loads(out)
    assert (problem["code"], problem["retryable"]) == (expected.code, expected.retryable)
    assert problem["upstream"]["provider"] == "openai"
    assert [c["code"] for c in problem["causes"]] == [c.code for c in expected.causes]


def test_a_traceback_whose_indentation_was_lost_is_read_the_same() -> None:
    """Pasted through a tool that strips leading blanks: frames are told from the exception
    lines by their ``File "...`` lines."""
    exc = raised_from(sdk_exception("openai/context_length_exceeded_400.yaml"))
    pasted = "\n".join(
        line.strip() for line in "".join(traceback.format_exception(exc)).splitlines()
    )
    status, out, _ = classify(pasted)
    assert status == 0
    problem = json.loads(out)
    assert problem["code"] == "context.window_exceeded"
    assert problem["detail"].endswith("Please reduce the length of the messages.")


def test_the_exceptions_of_a_traceback_are_read_apart() -> None:
    """The tree ``exceptions`` reads from a printed chain of groups: each exception with its
    own message (several lines, a note), each group with its members' chains."""
    from normalize_errors._cli._pasted import exceptions

    try:
        try:
            try:
                raise KeyError("k")
            except KeyError as key:
                raise RuntimeError("first line\nsecond line") from key
        except RuntimeError as runtime:
            setattr(runtime, "__notes__", ["a note"])  # noqa: B010 - add_note is 3.11's
            inner = ExceptionGroup("inner", [ValueError("y"), runtime])
            raise ExceptionGroup("outer", [TypeError("t"), inner])  # noqa: B904
    except ExceptionGroup as group:
        pasted = "".join(traceback.format_exception(group))
    chain = exceptions(pasted)
    assert [(r.name, r.message) for r in chain] == [
        ("RuntimeError", "first line\nsecond line\na note"),  # the context, printed first
        ("ExceptionGroup", "outer (2 sub-exceptions)"),
    ]
    members = chain[1].members
    assert [[r.name for r in m] for m in members] == [["TypeError"], ["ExceptionGroup"]]
    inner_members = members[1][0].members
    assert [[(r.name, r.message) for r in m] for m in inner_members] == [
        [("ValueError", "y")],
        [("KeyError", "'k'"), ("RuntimeError", "first line\nsecond line\na note")],
    ]


def anthropic_raised(status: int, body: bytes, headers: dict[str, str]) -> Exception:
    """The exception the real anthropic client raises for an answer of ``status``."""
    anthropic = pytest.importorskip("anthropic", reason="needs the anthropic SDK")
    from normalize_errors._wrapping._replay_calls import http_library

    http = http_library("anthropic")

    def answer(request: Any) -> Any:
        return http.Response(status, headers=headers, content=body)

    client = anthropic.Anthropic(
        api_key="sk-ant-test",
        max_retries=0,
        http_client=http.Client(transport=http.MockTransport(answer)),
    )
    try:
        client.messages.create(
            model="m", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
        )
    except Exception as exc:  # the test reads what the SDK raised
        return exc
    raise AssertionError("the SDK raised nothing")


def test_anthropic_labels_with_an_error_code_and_with_no_body() -> None:
    """Two more of anthropic 2.17's printed forms, each the real SDK's line: the labels
    carry ``error_code`` (the shipped spend-cap cassette), which is put back in the body's
    ``error.details`` and read as the exception is; an answer with no body (an empty 503,
    constructed: a proxy's) prints ``503 status code (no body) (...)``, read as the empty
    response it was."""
    exc = sdk_exception("anthropic/spend_cap_429_enforced_spend_limit.yaml")
    line = traceback.format_exception_only(exc)[-1]
    if "(error_code: " not in line:
        pytest.skip(f"this anthropic prints its errors otherwise: {line[:80]}")
    status, out, _ = classify(line)
    assert status == 0
    problem = json.loads(out)
    expected = normalize(exc)
    assert (problem["code"], problem["retryable"]) == (expected.code, expected.retryable)
    assert problem["upstream"]["request_id"] == expected.upstream["request_id"]
    assert expected.upstream["details"] == {"error_code": "enforced_spend_limit_reached"}
    assert problem["upstream"]["details"] == expected.upstream["details"]
    empty = anthropic_raised(503, b"", {"request-id": "req_011CXmPTULN8bgXB7G5MDu9J"})
    line = traceback.format_exception_only(empty)[-1]
    assert "503 status code (no body) (request_id: req_011CXmPTULN8bgXB7G5MDu9J" in line
    status, out, _ = classify(line)
    assert status == 0
    problem = json.loads(out)
    expected = normalize(empty)
    assert (problem["code"], problem["retryable"]) == (expected.code, expected.retryable)
    assert problem["upstream"]["status"] == 503
    assert problem["upstream"]["request_id"] == "req_011CXmPTULN8bgXB7G5MDu9J"


@pytest.mark.parametrize(
    "text",
    [
        'data: {"progress": 10}\n\ndata: {"progress": 20}\n\n',  # no provider's events
        "event: ping\ndata: {}\n\n",  # a keep-alive alone
    ],
)
def test_a_stream_with_no_error_event_or_stop_reason_is_not_recognised(text: str) -> None:
    """Events pasted alone (constructed: of no provider's protocol) that carry no error event
    and state no stop reason: their 200 says nothing failed, so exit 3, no code guessed."""
    status, out, err = classify(text)
    assert (status, out) == (3, "")
    assert "stream's events" in err
    assert "with no error event or stop reason" in err
