"""The command line: codes and explain."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from normalize_errors import CODES
from normalize_errors._cli import main


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
def test_explain_an_unknown_code(code: str) -> None:
    """A clear message and exit status 2."""
    status, text = run("explain", code)
    assert status == 2
    assert "not a registered code" in text


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
    quiet = tmp_path / "quiet.py"
    quiet.write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    status, text = run("record", "--out", str(tmp_path / "out"), str(quiet))
    assert (status, text) == (3, "no HTTP exchange was recorded\n")
    failing = tmp_path / "failing.py"
    failing.write_text("raise KeyError('boom')\n", encoding="utf-8")
    status, text = run("record", "--out", str(tmp_path / "out"), str(failing))
    assert status == 0
    assert text.splitlines() == [
        "the script raised builtins.KeyError",
        "no HTTP exchange was recorded",
    ]
    silent = tmp_path / "silent.py"
    silent.write_text("import sys\nsys.exit('bad usage')\n", encoding="utf-8")
    assert run("record", "--out", str(tmp_path / "out"), str(silent))[0] == 1


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


@pytest.mark.parametrize("garbage", ["garbage here", "{}", "[]", "{not json", ""])
def test_classify_exits_non_zero_when_nothing_could_be_read(garbage: str) -> None:
    done = cli("classify", stdin=garbage)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "nothing could be read" in done.stderr


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
    assert replay.missing_sdk(scenario) == "fireworks"
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
        replay.missing_sdk(replay.load(replay.shipped() / "openai" / "insufficient_quota_429.yaml"))
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
