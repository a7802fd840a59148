"""The command line: codes and explain."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from normalize_errors import CODES
from normalize_errors._cli import main
from tests.support import needs


def run(*argv: str) -> tuple[int, str]:
    """Run the command line in-process and capture what it prints."""
    out = io.StringIO()
    status = main(list(argv), out)
    return status, out.getvalue()


def test_codes_table_lists_every_code() -> None:
    """One line per code, with its defaults and advice."""
    status, text = run("codes")
    assert status == 0
    lines = text.splitlines()
    assert lines[0].split() == [
        "code",
        "title",
        "origin",
        "retryable",
        "model_recoverable",
        "http",
        "advice",
    ]
    assert len(lines) == 2 + len(CODES)
    rate = next(line for line in lines if line.startswith("upstream.rate_limited"))
    assert rate.split()[-3:] == ["no", "429", "retry"]


def test_codes_json_is_the_registry() -> None:
    """--json prints the registry with derived advice and class names."""
    status, text = run("codes", "--json")
    assert status == 0
    rows = json.loads(text)
    assert [r["code"] for r in rows] == list(CODES)
    window = next(r for r in rows if r["code"] == "context.window_exceeded")
    assert window["class"] == "ContextWindowExceededError"
    assert window["advice"] == "adjust"


def test_explain_a_code() -> None:
    """Title, meaning, defaults, status, advice and class."""
    status, text = run("explain", "upstream.overloaded")
    assert status == 0
    assert "Upstream Overloaded" in text
    assert "HTTP status:        503" in text
    assert "advice:             retry" in text
    assert "normalize_errors.UpstreamOverloadedError" in text


@pytest.mark.parametrize("code", ["upstream.nope", "bogus"])
def test_explain_an_unknown_code(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A clear message on standard error and exit status 2."""
    status, text = run("explain", code)
    assert (status, text) == (2, "")
    assert "not a registered code" in capsys.readouterr().err


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


@pytest.mark.parametrize(
    ("word", "meant"),
    [
        ("overloaded", "upstream.overloaded"),  # the last part alone
        ("rate_limit", "upstream.rate_limited"),
        ("upstream.overloded", "upstream.overloaded"),  # a typo
        ("upstrem.overloaded", "upstream.overloaded"),
        ("timeout", "loop.timeout or tool.timeout"),  # two codes end so
    ],
)
def test_explain_offers_the_code_you_may_have_meant(word: str, meant: str) -> None:
    """``explain overloaded``: the registry's codes spelt like it, or whose last part is, are
    offered, in one line on standard error, with exit status 2."""
    done = console("explain", word)
    assert (done.returncode, done.stdout) == (2, "")
    assert f"(did you mean {meant}?)" in done.stderr
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_explain_of_a_category_lists_its_codes_and_of_nonsense_offers_nothing() -> None:
    done = console("explain", "upstream")
    assert done.returncode == 2
    assert "upstream is a category, not a code; its codes: upstream.rate_limited, " in done.stderr
    done = console("explain", "nonsense")
    assert done.returncode == 2
    assert "did you mean" not in done.stderr


def test_console_script_runs() -> None:
    """`python -m normalize_errors` works as the console script does."""
    out = subprocess.run(
        [sys.executable, "-m", "normalize_errors", "explain", "output.empty"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Empty Output" in out.stdout


def test_replay_prints_every_cassette_and_a_summary() -> None:
    """The main job: one row per cassette, a summary, exit status 0 when all agree."""
    needs("yaml", "vcr")  # in-process, the replay extra refuses without them
    from normalize_errors.replay import shipped

    paths = [
        str(shipped() / "anthropic" / "overloaded_529.yaml"),
        str(shipped() / "openai" / "insufficient_quota_429.yaml"),
    ]
    status, text = run("replay", *paths)
    assert status == 0
    assert "anthropic/overloaded_529" in text
    assert "OverloadedError" in text
    assert "upstream.rate_limited" in text
    assert text.rstrip().splitlines()[-1].startswith("2 cassettes replayed offline (sync): 2 as")


def test_replay_json_lines_and_a_mismatch(tmp_path: Path) -> None:
    """--json prints one object per cassette; a cassette whose expectation fails exits 1."""
    needs("yaml", "vcr")  # in-process, the replay extra refuses without them
    from normalize_errors.replay import shipped

    source = (shipped() / "openai" / "server_error_500.yaml").read_text(encoding="utf-8")
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(
        source.replace("code: upstream.unavailable", "code: upstream.overloaded"), encoding="utf-8"
    )
    status, text = run("replay", "--json", "--mode", "async", str(wrong))
    assert status == 1
    record = json.loads(text.splitlines()[0])
    assert record["code"] == "upstream.unavailable"
    assert record["expected"] is False
    assert record["mismatches"]


def test_classify_reads_raw_http_and_json(tmp_path: Path) -> None:
    """Raw HTTP text from a file, JSON from standard input: the problem object comes out."""
    raw = tmp_path / "response.http"
    raw.write_bytes(
        b"HTTP/1.1 529 \r\ncontent-type: application/json\r\nrequest-id: req_1\r\n\r\n"
        b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    )
    status, text = run("classify", str(raw))
    assert status == 0
    problem = json.loads(text)
    assert (problem["code"], problem["upstream"]["provider"]) == (
        "upstream.overloaded",
        "anthropic",
    )
    body = {
        "status": 429,
        "headers": {"Retry-After": "7"},
        "body": {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
    }
    out = subprocess.run(
        [sys.executable, "-m", "normalize_errors", "classify"],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        check=True,
    )
    problem = json.loads(out.stdout)
    assert (problem["code"], problem["retry_after"]) == ("upstream.rate_limited", 7)


def test_classify_reads_a_uhp_envelope_by_name_or_header(tmp_path: Path) -> None:
    """--provider uhp, or the UHP-Version header: quota_exhausted is not retryable."""
    envelope = (
        b'{"error":{"type":"rate_limit_error","code":"quota_exhausted",'
        b'"message":"Budget spent.","param":null,"detail":null}}'
    )
    named = tmp_path / "named.http"
    named.write_bytes(b"HTTP/1.1 429 \r\ncontent-type: application/json\r\n\r\n" + envelope)
    marked = tmp_path / "marked.http"
    marked.write_bytes(b"HTTP/1.1 429 \r\nUHP-Version: 2026-09-12\r\n\r\n" + envelope)
    for args in (("classify", "--provider", "uhp", str(named)), ("classify", str(marked))):
        status, text = run(*args)
        assert status == 0
        problem = json.loads(text)
        assert (problem["code"], problem["retryable"]) == ("upstream.rate_limited", False)
        assert problem["upstream"]["provider"] == "uhp"


def test_replay_wrapped_goes_through_wrap_and_agrees() -> None:
    """--wrapped replays through ``wrap(client)``: the drop-in error gives the same row."""
    needs("yaml", "vcr")  # in-process, the replay extra refuses without them
    from normalize_errors.replay import shipped

    path = str(shipped() / "anthropic" / "overloaded_529.yaml")
    status, text = run("replay", "--wrapped", "--json", path)
    assert status == 0
    record = json.loads(text.splitlines()[0])
    assert (record["code"], record["expected"]) == ("upstream.overloaded", True)
    assert record["signal"] == "UpstreamOverloadedError"  # the drop-in raised by wrap()


def test_classify_refuses_what_it_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not UTF-8, JSON that does not parse: exit status 2, nothing on standard output and a
    one-line reason on standard error, in-process; standard input is read for ``-``."""
    binary = tmp_path / "binary.http"
    binary.write_bytes(b"HTTP/1.1 500 \r\n\r\n\xff\xfe")
    assert run("classify", str(binary)) == (2, "")
    assert capsys.readouterr().err == "classify: the input is not UTF-8 text (byte 17)\n"
    broken = tmp_path / "broken.json"
    broken.write_text('  {"status": 500} trailing', encoding="utf-8")
    assert run("classify", str(broken)) == (2, "")
    assert capsys.readouterr().err.startswith(
        "classify: nothing could be read (it starts like JSON"
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"HTTP/1.1 503\n\n<html>")))
    status, text = run("classify", "-")
    assert status == 0
    assert json.loads(text)["code"] == "upstream.unavailable"


def test_classify_reads_headers_and_a_status_line_without_a_number(tmp_path: Path) -> None:
    """A status line with no number leaves the status to the body; header lines are read."""
    raw = tmp_path / "odd.http"
    raw.write_bytes(b"HTTP/1.1\r\nretry-after: 9\r\nno colon here\r\n\r\n")
    status, text = run("classify", str(raw))
    assert status == 0
    problem = json.loads(text)
    assert problem["upstream"].get("status") is None


def test_record_runs_a_script_and_reports_what_it_recorded(tmp_path: Path) -> None:
    """A script that makes no HTTP call: its exit status is returned, and nothing is written.

    A script that raises is reported by its exception's class (a failure is often what one
    means to record), and the command still answers.
    """
    needs("yaml", "vcr")  # the testing extra: record refuses without them
    quiet = tmp_path / "quiet.py"
    quiet.write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    status, text = run("record", "--out", str(tmp_path / "out"), str(quiet))
    assert (status, text) == (3, "no HTTP exchange was recorded\n")
    failing = tmp_path / "failing.py"
    failing.write_text("raise KeyError('boom')\n", encoding="utf-8")
    status, text = run("record", "--out", str(tmp_path / "out"), str(failing))
    assert status == 1  # as Python's own for an uncaught exception
    assert text.splitlines() == ["no HTTP exchange was recorded"]
    silent = tmp_path / "silent.py"
    silent.write_text("import sys\nsys.exit('bad usage')\n", encoding="utf-8")
    assert run("record", "--out", str(tmp_path / "out"), str(silent))[0] == 1


def test_record_refuses_a_missing_script_and_fails_with_one_that_raised(tmp_path: Path) -> None:
    """``record nope.py`` exits 2 with one line naming the script (nothing is run or
    recorded); a script that raised exits 1 and says so on standard error, its exchanges up
    to then recorded; the usage shows the script's arguments as optional."""
    needs("yaml", "vcr")  # the testing extra: record refuses without them
    done = console("record", "--out", str(tmp_path / "out"), "nope.py", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "normalize-errors record: no script 'nope.py' (no such file)\n"
    assert not (tmp_path / "out").exists()
    failing = tmp_path / "failing.py"
    failing.write_text("raise KeyError('boom')\n", encoding="utf-8")
    done = console("record", "--out", str(tmp_path / "out"), str(failing))
    assert done.returncode == 1
    assert done.stdout == "no HTTP exchange was recorded\n"
    assert "the script raised builtins.KeyError" in done.stderr
    bare = console("record")
    assert bare.returncode == 2
    assert "SCRIPT [ARG ...]" in bare.stderr
    assert bare.stderr.splitlines()[-1].endswith("the following arguments are required: SCRIPT")


def test_replay_record_and_cassettes_without_their_extra_refuse_in_one_line(
    tmp_path: Path,
) -> None:
    """An install without the ``testing``/``replay`` extra (no PyYAML, no vcrpy): each
    command says which extra it needs, in one line, exit status 2; they ended in a
    ModuleNotFoundError traceback (``replay`` and ``record``)."""
    script = tmp_path / "calls.py"
    script.write_text("print('no call')\n", encoding="utf-8")
    for argv, extra in (
        (["replay"], "needs the 'replay' extra"),
        (["record", "--out", str(tmp_path / "out"), str(script)], "needs the 'testing' extra"),
        (["cassettes"], "needs PyYAML"),
    ):
        done = without("yaml,vcr", *argv)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert extra in done.stderr
        assert "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1


def test_cassettes_refuse_a_provider_or_code_that_is_none(tmp_path: Path) -> None:
    """``cassettes --provider nope`` says there is no such provider, listing the registry's
    (and the providers of the cassettes listed), and exits 2; ``--code`` likewise offers the
    code meant. Nothing is printed on standard output."""
    needs("yaml")
    from normalize_errors.providers import NAMES

    done = console("cassettes", "--provider", "nope")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("normalize-errors cassettes: no provider 'nope'; the providers: ")
    assert all(name in done.stderr for name in NAMES)
    done = console("cassettes", "--provider", "opnai", "--json")
    assert (done.returncode, done.stdout) == (2, "")
    assert "(did you mean openai?)" in done.stderr
    done = console("cassettes", "--code", "overloaded")
    assert (done.returncode, done.stdout) == (2, "")
    assert "(did you mean upstream.overloaded?)" in done.stderr
    listed = console("cassettes", "--provider", "cohere", "--code", "upstream")
    assert listed.returncode == 0
    assert " of " in listed.stdout


def test_corpus_refuses_a_provider_with_no_case() -> None:
    done = console("corpus", "--provider", "vlm")
    assert (done.returncode, done.stdout) == (2, "")
    assert "no provider 'vlm' (did you mean vllm?)" in done.stderr
    assert console("corpus", "--provider", "vllm", "--json").returncode == 0


def cli(*argv: str, stdin: str) -> subprocess.CompletedProcess[str]:
    """The command line as a user runs it (``python -m normalize_errors``), in this process:
    ``__main__.py`` runs as ``__main__`` with ``stdin`` as standard input, and its exit status,
    standard output and standard error come back as a finished process's would.
    (``test_classify_reads_raw_http_and_json`` runs a real child process.)"""
    import contextlib

    import normalize_errors

    path = Path(normalize_errors.__file__).with_name("__main__.py")
    code_object = compile(path.read_text(encoding="utf-8"), str(path), "exec")
    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv, sys.stdin
    sys.argv = ["normalize-errors", *argv]
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(code_object, {"__name__": "__main__", "__package__": "normalize_errors"})
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    else:
        code = 0
    finally:
        sys.argv, sys.stdin = saved
    return subprocess.CompletedProcess(list(argv), code, out.getvalue(), err.getvalue())


@pytest.mark.parametrize(
    ("pasted", "code", "retryable"),
    [
        (
            '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
            "upstream.overloaded",
            True,
        ),
        (
            '{"type":"error","error":{"type":"invalid_request_error","message":"Your credit '
            'balance is too low to access the Anthropic API."}}',
            "upstream.rate_limited",
            False,
        ),
        (
            '{"error":{"message":"Incorrect API key provided: sk-abc***xyz.","type":'
            '"invalid_request_error","code":"invalid_api_key"}}',
            "upstream.authentication_failed",
            False,
        ),
        (
            '[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).",'
            '"status":"RESOURCE_EXHAUSTED"}}]',
            "upstream.rate_limited",
            True,
        ),
    ],
)
def test_classify_reads_a_bare_vendor_body(pasted: str, code: str, retryable: bool) -> None:
    """A body pasted from a log, without status or headers, is read as the vendor's body."""
    done = cli("classify", stdin=pasted)
    assert done.returncode == 0
    problem = json.loads(done.stdout)  # stdout holds the problem object and nothing else
    assert (problem["code"], problem["retryable"]) == (code, retryable)
    assert "bare error body" in done.stderr


def test_classify_says_on_stderr_which_form_it_read() -> None:
    raw = "HTTP/1.1 529 \r\ncontent-type: application/json\r\n\r\n{}"
    assert "raw HTTP" in cli("classify", stdin=raw).stderr
    wrapped = json.dumps({"status": 503, "headers": {}, "body": "upstream connect error"})
    assert "JSON object with status" in cli("classify", stdin=wrapped).stderr
    page = "<html><title>502 Bad Gateway</title></html>"
    done = cli("classify", stdin=page)
    assert "page" in done.stderr
    assert "502 Bad Gateway" in json.loads(done.stdout)["detail"]


@pytest.mark.parametrize("garbage", ["{not json", '{"error": {"message": "Rate limit'])
def test_classify_exits_2_when_nothing_could_be_read(garbage: str) -> None:
    """JSON that does not parse (a log line cut short) cannot be read: exit status 2."""
    done = cli("classify", stdin=garbage)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "nothing could be read (it starts like JSON but does not parse" in done.stderr


def test_classify_help_documents_the_forms() -> None:
    done = cli("classify", "--help", stdin="")
    assert done.returncode == 0
    for form in ("raw HTTP", "response object", "bare error body", "bare page", "Exit status"):
        assert form in done.stdout


def test_replay_skips_a_cassette_whose_sdk_is_not_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The README's main job runs on the `dev` install: a cassette that replays through an
    SDK it does not install (fireworks-ai, cohere, ...) is listed as skipped, naming the SDK."""
    import importlib.util

    from normalize_errors import replay

    path = replay.shipped() / "openai" / "fireworks_sdk_model_not_found_404.yaml"
    scenario = replay.load(path)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "fireworks" else real(name)
    )
    assert replay._missing_sdk(scenario) == "fireworks"
    status, text = run("replay", str(path))
    assert status == 0
    assert "skipped: needs the fireworks SDK" in text
    assert "0 cassettes replayed offline (sync): 0 as expected, 0 not, 1 skipped" in text
    status, text = run("replay", "--json", str(path))
    assert json.loads(text) == {
        "cassette": "openai/fireworks_sdk_model_not_found_404",
        "skipped": "skipped: needs the fireworks SDK",
    }
    monkeypatch.undo()
    assert (
        replay._missing_sdk(
            replay.load(replay.shipped() / "openai" / "insufficient_quota_429.yaml")
        )
        is None
    )


def test_classify_reads_every_form_in_process() -> None:
    """A response object whose body is JSON, header lines with no status line, and JSON
    nested past what Python parses (refused with its reason, exit status 2)."""
    wrapped = {
        "status": 429,
        "headers": {"Retry-After": "7"},
        "body": {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
    }
    done = cli("classify", stdin=json.dumps(wrapped))
    assert done.returncode == 0
    assert (json.loads(done.stdout)["code"], json.loads(done.stdout)["retry_after"]) == (
        "upstream.rate_limited",
        7,
    )
    headers = "retry-after: 9\ncontent-type: text/plain\n\nupstream connect error"
    done = cli("classify", stdin=headers)
    assert done.returncode == 0
    assert "header" in done.stderr
    assert json.loads(done.stdout)["retry_after"] == 9
    deep = cli("classify", stdin="[" * 100_000)
    assert (deep.returncode, deep.stdout) == (2, "")
    assert "JSON nested too deeply" in deep.stderr


def test_replay_of_a_success_lists_it_without_a_code(tmp_path: Path) -> None:
    """A user's cassette of a call that succeeded (here the recorded ``finish_length_200``
    with its finish reason changed to ``stop`` and its expectation removed: constructed
    from the recording) replays as expected, with no code, and adds to no code's count."""
    import yaml

    from normalize_errors import replay

    data = yaml.safe_load(
        (replay.shipped() / "openai" / "finish_length_200.yaml").read_text(encoding="utf-8")
    )
    del data["metadata"]["expect"]
    body = data["interactions"][0]["response"]["body"]
    body["string"] = body["string"].replace('"finish_reason": "length"', '"finish_reason": "stop"')
    path = tmp_path / "openai" / "finished.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    status, text = run("replay", "--json", str(path))
    assert status == 0
    row = json.loads(text)
    assert (row["code"], row["expected"], row["mismatches"]) == (None, True, [])
    assert row["signal"] == "result"
    status, text = run("replay", str(path))
    assert status == 0
    assert "1 cassettes replayed offline (sync): 1 as expected, 0 not" in text


BLOCKED_RUN = """\
import runpy, sys

class Refuse:
    '''Refuses the modules named in argv[1], as an install without them would.'''

    def __init__(self, names):
        self.names = names

    def find_spec(self, name, path=None, target=None):
        if any(name == n or name.startswith(n + ".") for n in self.names):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Refuse(sys.argv[1].split(",")))
sys.argv = ["normalize-errors", *sys.argv[2:]]
runpy.run_module("normalize_errors", run_name="__main__")
"""


def without(modules: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """The command line in a child process where ``modules`` cannot be imported."""
    needs("yaml", "vcr", "openai", "anthropic", "httpx2")
    root = Path(__file__).resolve().parent.parent
    return subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN, modules, *argv],
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )


def imports_without(module: str, blocked: str) -> bool:
    """Whether ``module`` imports in a child process where ``blocked`` cannot be imported."""
    probe = BLOCKED_RUN.split("sys.argv = ", maxsplit=1)[0] + f"import {module}\n"
    done = subprocess.run(
        [sys.executable, "-c", probe, blocked], capture_output=True, text=True, check=False
    )
    return done.returncode == 0


def test_replay_without_google_genai_skips_its_cassettes_naming_it() -> None:
    """An install of ``[openai,anthropic,testing]`` (no google-genai, no httpx): the Google
    cassette is skipped with the SDK named, the others replay, and the exit status is 0."""
    from normalize_errors.replay import shipped

    paths = [
        str(shipped() / "google" / "overloaded_503.yaml"),
        str(shipped() / "openai" / "insufficient_quota_429.yaml"),
        str(shipped() / "anthropic" / "overloaded_529.yaml"),
        str(shipped() / "cohere" / "billing_limit_402.yaml"),  # cohere imports httpx
    ]
    done = without("google.genai,httpx", "replay", *paths)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "AssertionError" not in done.stderr
    assert "google/overloaded_503" in done.stdout
    assert "skipped: needs the google.genai SDK" in done.stdout
    # SDK lines before httpx2 support import httpx: there their cassettes are skipped too
    ran = sum(imports_without(sdk, "httpx") for sdk in ("openai", "anthropic"))
    summary = f"{ran} cassettes replayed offline (sync): {ran} as expected, 0 not"
    assert f"{summary}, {4 - ran} skipped" in done.stdout
    assert "pip install" in done.stdout
    assert "google-genai" in done.stdout.splitlines()[-1]


def test_replay_of_http_cassettes_with_only_httpx2_goes_through_httpx2() -> None:
    """With httpx absent, the ``http`` cassettes replay through httpx2 and agree: their
    ``upstream.exception`` is httpx2's ``HTTPStatusError``."""
    from normalize_errors.replay import shipped

    path = str(shipped() / "http" / "aws_alb_502_html.yaml")
    done = without("httpx", "replay", "--json", path)
    assert done.returncode == 0, done.stdout + done.stderr
    row = json.loads(done.stdout)
    assert (row["code"], row["expected"], row["mismatches"]) == ("upstream.unavailable", True, [])
    done = without("httpx,httpx2", "replay", "--json", path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["skipped"] == "skipped: needs the httpx SDK"


@pytest.mark.parametrize(
    "argv",
    [
        ["codes"],
        ["codes", "--json"],
        ["cassettes"],
        ["cassettes", "--json"],
        ["explain", "loop.timeout"],
    ],
)
def test_a_closed_pipe_ends_the_command_quietly(argv: list[str]) -> None:
    """`normalize-errors codes | head -1`: a reader that has gone away (here before the first
    byte, so the write fails every time) gives no BrokenPipeError traceback."""
    if argv[0] == "cassettes":
        needs("yaml")  # without it, a refusal on standard error: nothing is written
    child = subprocess.Popen(
        [sys.executable, "-m", "normalize_errors", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    child.stdout.close()
    _, err = child.communicate(timeout=60)
    assert b"Traceback" not in err
    assert b"BrokenPipeError" not in err
    assert child.returncode == 141


def test_cassettes_fit_80_columns_and_filter_by_provider_and_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    needs("yaml")
    monkeypatch.setenv("COLUMNS", "80")
    status, text = run("cassettes")
    assert status == 0
    lines = text.splitlines()
    assert lines[0].split() == ["cassette", "status", "harness", "code"]
    assert all(len(line) <= 80 for line in lines[:-1])  # the last names the folder
    assert "anthropic/invalid_request_tool_use_without_result_400" in lines  # its own line
    status, text = run("cassettes", "--provider", "google", "--code", "upstream.rate_limited")
    rows = text.split("\n\n")[0].splitlines()[2:]
    assert rows
    assert all(r.startswith("google/") and r.endswith("upstream.rate_limited") for r in rows)
    assert f"{len(rows)} of " in text
    status, text = run("cassettes", "--json", "--code", "context")
    found = [json.loads(line) for line in text.splitlines()]
    assert found
    assert {r["code"] for r in found} == {"context.window_exceeded"}
    assert len({r["provider"] for r in found}) > 1


def sdk_traceback(cassette: str) -> str:
    """The traceback the SDK really prints for a shipped cassette's failure."""
    import traceback

    from normalize_errors import replay

    outcome = replay.run(replay.load(replay.shipped() / cassette))
    assert outcome.exception is not None
    return "".join(traceback.format_exception(outcome.exception))


@pytest.mark.parametrize(
    ("cassette", "last_lines", "code", "advice"),
    [
        (
            "anthropic/overloaded_529.yaml",
            # anthropic 0.x has no OverloadedError: its line names another class; from
            # 2.17 the line is the status, the message and the labels, not the body
            (
                "Error: Error code: 529 - {'type': 'error'",
                "OverloadedError: 529 Overloaded (request_id: ",
            ),
            "upstream.overloaded",
            "retry",
        ),
        (
            "openai/context_length_exceeded_400.yaml",
            "openai.BadRequestError: Error code: 400 - ",
            "context.window_exceeded",
            "adjust",
        ),
        (
            "openai/insufficient_quota_429.yaml",
            "openai.RateLimitError: Error code: 429 - ",
            "upstream.rate_limited",
            "human",
        ),
        (
            "google/api_key_invalid_400.yaml",
            "google.genai.errors.ClientError: 400 INVALID_ARGUMENT. {'error': {'code': 400",
            "upstream.authentication_failed",
            "credentials",
        ),
        (
            "anthropic/cloudflare_502_html.yaml",
            ("anthropic.InternalServerError: <html>", "anthropic.InternalServerError: 502 <html>"),
            "upstream.unavailable",
            "retry",
        ),
    ],
)
def test_classify_reads_a_pasted_sdk_traceback(
    cassette: str, last_lines: str | tuple[str, ...], code: str, advice: str
) -> None:
    """A whole traceback as the SDK prints it: the provider comes from the exception's
    module, the status and body from its message (a Python-repr dict read back with
    ``ast.literal_eval``); standard error gives the code and what to do next."""
    from normalize_errors import replay

    pasted = sdk_traceback(cassette)
    # one of the ways the installed SDK's line prints
    options = (last_lines,) if isinstance(last_lines, str) else last_lines
    assert any(line in pasted for line in options), pasted[-300:]
    assert pasted.startswith("Traceback (most recent call last)")
    done = cli("classify", stdin=pasted)
    assert done.returncode == 0, done.stderr
    problem = json.loads(done.stdout)
    expected = replay.run(replay.load(replay.shipped() / cassette)).error
    assert expected is not None
    assert problem["code"] == code == expected.code
    assert problem["upstream"]["provider"] == cassette.partition("/")[0]
    assert "traceback" in done.stderr
    assert f"classify: {code}, advice {advice}: " in done.stderr
    alone = cli("classify", stdin=pasted.strip().splitlines()[-1])
    if "<html>" not in pasted:  # the exception's line alone, pasted from a log
        assert json.loads(alone.stdout)["code"] == code


def test_classify_reads_the_repr_dict_of_older_openai_lines() -> None:
    """openai 1.x and 2.x print the whole body as a Python dict (``Error code: 429 -
    {'error': {...}}``); its ``code`` member decides (``insufficient_quota``: pay, not wait).
    The body is the shipped cassette's, printed the way those SDK lines print it."""
    import yaml

    from normalize_errors import replay

    data = yaml.safe_load(
        (replay.shipped() / "openai" / "insufficient_quota_429.yaml").read_text(encoding="utf-8")
    )
    body = json.loads(data["interactions"][0]["response"]["body"]["string"])
    line = f"openai.RateLimitError: Error code: 429 - {body}"
    assert "'param': None" in line
    done = cli("classify", stdin=line)
    problem = json.loads(done.stdout)
    assert (problem["code"], problem["upstream"]["code"]) == (
        "upstream.rate_limited",
        "insufficient_quota",
    )
    assert "advice human" in done.stderr


def test_classify_refuses_a_traceback_of_no_sdk_and_never_evaluates_code() -> None:
    plain = "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'\n"
    done = cli("classify", stdin=plain)
    assert (done.returncode, done.stdout) == (3, "")
    assert "not recognised: a traceback, but of no exception an SDK raised (KeyError)" in (
        done.stderr
    )
    hostile = "openai.BadRequestError: Error code: 400 - {'a': __import__('os').getcwd()}"
    done = cli("classify", stdin=hostile)
    assert done.returncode == 0
    assert json.loads(done.stdout)["upstream"]["status"] == 400
    assert str(Path.cwd()) not in done.stdout  # read as text, not run


def test_classify_reads_an_rfc9457_problem_with_its_status() -> None:
    """A problem+json pasted bare: its ``status`` member is the response's status."""
    problem = {
        "type": "https://example.com/probs/out-of-credit",
        "title": "Too Many Requests",
        "status": 429,
        "detail": "Request rate exceeded.",
    }
    done = cli("classify", stdin=json.dumps(problem))
    assert done.returncode == 0
    assert json.loads(done.stdout)["code"] == "upstream.rate_limited"
    assert "problem details" in done.stderr


class StepFailed(Exception):
    """An application's own exception, raised ``from`` the SDK's (a dotted name that is no
    SDK's: ``tests.test_cli.StepFailed``)."""


def test_classify_reads_the_sdk_error_under_an_applications_own() -> None:
    """A traceback whose last exception is the application's, raised from the SDK's (as an
    agent step that wraps its call prints it): the SDK's line, higher up, is read."""
    import traceback

    from normalize_errors import replay

    outcome = replay.run(replay.load(replay.shipped() / "openai" / "insufficient_quota_429.yaml"))
    assert outcome.exception is not None
    assert outcome.error is not None
    try:
        raise StepFailed("the planning step failed") from outcome.exception
    except StepFailed as exc:
        pasted = "".join(traceback.format_exception(exc))
    assert pasted.strip().endswith("tests.test_cli.StepFailed: the planning step failed")
    done = cli("classify", stdin=pasted)
    assert done.returncode == 0, done.stderr
    problem = json.loads(done.stdout)
    assert (problem["code"], problem["upstream"]["status"]) == (outcome.error.code, 429)
    assert problem["retryable"] is outcome.error.retryable is False  # a quota: pay, not wait
    assert "advice human" in done.stderr
    alone = cli("classify", stdin="tests.test_cli.StepFailed: the planning step failed")
    assert (alone.returncode, alone.stdout) == (3, "")  # one line of no SDK: not a traceback
    assert "not recognised" in alone.stderr


def test_classify_reads_a_pasted_interactions_api_traceback() -> None:
    """google-genai's Interactions API raises errors that print as openai's do (``Error
    code: 429 - {...}``): the status and the body's RetryInfo are read from the line, and
    ``classify`` gives what ``normalize`` gives the exception itself."""
    import traceback
    import warnings

    genai = pytest.importorskip("google.genai")
    httpx = pytest.importorskip("httpx")
    from google.genai import types

    from normalize_errors import normalize

    body = {
        "error": {
            "code": 429,
            "message": "Resource exhausted.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}
            ],
        }
    }  # constructed, as tests/providers/test_google.py's Interactions rate limit

    def handle(request: Any) -> Any:
        return httpx.Response(429, json=body)

    sdk = genai.Client(
        api_key="test-key",
        http_options=types.HttpOptions(
            api_version="v1beta",
            retry_options=types.HttpRetryOptions(attempts=1),
            httpx_client=httpx.Client(transport=httpx.MockTransport(handle)),
        ),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # 1.x: the API is experimental
        try:
            sdk.interactions.create(model="gemini-2.5-flash", input="Hello")
        except Exception as caught:
            exc = caught
    pasted = "".join(traceback.format_exception(exc))
    assert pasted.strip().splitlines()[-1].startswith("google.genai.")
    assert "RateLimitError: Error code: 429 - {'error'" in pasted
    done = cli("classify", stdin=pasted)
    assert done.returncode == 0, done.stderr
    problem = json.loads(done.stdout)
    expected = normalize(exc)
    assert (problem["code"], problem["retry_after"]) == (expected.code, expected.retry_after)
    assert (problem["code"], problem["retry_after"]) == ("upstream.rate_limited", 1.5)
    assert problem["upstream"]["status"] == 429 == expected.upstream["status"]
    assert problem["upstream"]["provider"] == "google"


@pytest.mark.parametrize(
    ("line", "provider"),
    [
        # google-genai's UnknownApiResponseError (a chunk that is not JSON) has no status
        (
            "google.genai.errors.UnknownApiResponseError: Failed to parse response as JSON. "
            "Raw response: <html>oops</html>",
            "google",
        ),
        # a log that cut the line short inside the status
        ("openai.APIStatusError: Error code: 42", "openai"),
        # a Python set is no body an SDK prints: kept as the text it is
        ("anthropic.BadRequestError: Error code: 400 - {'tools', 'messages'}", "anthropic"),
    ],
)
def test_classify_keeps_a_message_it_cannot_read_a_status_or_body_from(
    line: str, provider: str
) -> None:
    """The provider still comes from the module; no status is made up, and the message (or
    the part after the status) is the body, as text."""
    done = cli("classify", stdin=line)
    assert done.returncode == 0, done.stderr
    problem = json.loads(done.stdout)
    assert problem["upstream"]["provider"] == provider
    message = line.partition(": ")[2]
    if "400" in line:
        assert problem["upstream"]["status"] == 400
        assert problem["detail"] == "{'tools', 'messages'}"
    else:
        assert "status" not in problem["upstream"]
        assert problem["upstream"].get("message", "") == message.strip()


def test_a_reader_gone_from_standard_output_ends_the_command_quietly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In-process, on standard output itself: a pipe whose reader has closed makes ``main``
    return 141, and standard output is pointed at the null device, so nothing written later
    (at exit, say) raises again."""
    import os

    reader, writer = os.pipe()
    os.close(reader)
    stdout = os.fdopen(writer, "w", encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", stdout)
    try:
        assert main(["codes"]) == 141
        print("after the reader left", file=sys.stdout, flush=True)  # no BrokenPipeError
    finally:
        monkeypatch.undo()
        stdout.close()

    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    assert main(["codes"], Gone()) == 141  # another stream: the same status, stdout untouched
