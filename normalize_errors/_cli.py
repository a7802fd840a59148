"""The ``normalize-errors`` command line.

Subcommands:

* ``codes [--json]``: the registry as a table, or as JSON.
* ``explain CODE``: what a code means, its defaults, HTTP status, advice and class.
* ``replay [PATH ...] [--json] [--mode sync|async] [--wrapped]``: replay cassettes (default:
  the shipped ones) offline through the real SDK clients and print what each failure
  becomes. Exits 1 if any cassette does not give the harness error its metadata expects.
* ``cassettes [PATH ...] [--json]``: the cassettes (default: the shipped ones) with their
  public names (``anthropic/overloaded_529``), the harness code each gives and its source.
* ``record [--out DIR] [--name NAME] SCRIPT [ARG ...]``: run a Python script of yours and
  record every HTTP exchange it makes as a cassette under DIR (default ``cassettes``),
  credentials removed (see ``normalize_errors.testing.record``).
* ``classify [FILE] [--provider NAME]``: read one failed response from FILE or standard
  input (raw HTTP text, JSON with ``status``, ``headers`` and ``body``, or a vendor's bare
  error body or page as pasted from a log) and print its problem object as JSON; standard
  error names the form read, and input in none of the forms exits 2 (``CLASSIFY_HELP``).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final, TextIO

from ._code_classes import class_for_code
from ._registry import CODES, code_info
from ._safe_read import qualname
from .providers import NAMES

__all__ = ["main", "registry_rows"]

Command = Callable[[argparse.Namespace, TextIO], int]
_COMMANDS: dict[str, Command] = {}


def registry_rows() -> list[dict[str, Any]]:
    """One dict per registered code, with the advice its defaults give."""
    rows = []
    for info in CODES.values():
        err = class_for_code(info.code)()
        rows.append(
            {
                "code": info.code,
                "title": info.title,
                "origin": info.origin,
                "retryable": info.retryable,
                "model_recoverable": info.model_recoverable,
                "http_status": info.http_status,
                "advice": err.advice,
                "class": type(err).__name__,
                "description": info.description,
            }
        )
    return rows


def table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    """Print ``rows`` (the first is the header) as aligned columns."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for n, row in enumerate(rows):
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        out.write(line.rstrip() + "\n")
        if n == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _codes(args: argparse.Namespace, out: TextIO) -> int:
    rows = registry_rows()
    if args.json:
        json.dump(rows, out, indent=2)
        out.write("\n")
        return 0
    header = ["code", "title", "origin", "retryable", "model_recoverable", "http", "advice"]
    cells = [
        [
            r["code"],
            r["title"],
            r["origin"],
            _yes(r["retryable"]),
            _yes(r["model_recoverable"]),
            str(r["http_status"]),
            r["advice"],
        ]
        for r in rows
    ]
    table([header, *cells], out)
    return 0


def _refuse(command: str, message: str) -> int:
    """Say on standard error, in one line, why ``command`` cannot answer; exit status 2."""
    sys.stderr.write(f"normalize-errors {command}: {message}\n")
    return 2


def close_codes(word: str) -> list[str]:
    """The registered codes ``word`` may have meant: those whose last part is spelt like
    ``word``'s (``overloaded``, ``rate_limit``, ``upstream.overloded``), then whole codes
    spelt like it (``upstrem.overloaded``)."""
    import difflib

    by_last: dict[str, list[str]] = {}
    for code in CODES:
        by_last.setdefault(code.rpartition(".")[2], []).append(code)
    found = []
    for part in difflib.get_close_matches(word.rpartition(".")[2], list(by_last), 3, 0.7):
        found += by_last[part]
    found += [c for c in difflib.get_close_matches(word, list(CODES), 3, 0.85) if c not in found]
    return found[:3]


def _did_you_mean(options: Sequence[str]) -> str:
    return f" (did you mean {' or '.join(options)}?)" if options else ""


def _explain(args: argparse.Namespace, out: TextIO) -> int:
    code: str = args.code
    if code not in CODES:
        categories = {c.partition(".")[0] for c in CODES}
        if code in categories:
            listed = ", ".join(c for c in CODES if c.startswith(code + "."))
            return _refuse("explain", f"{code} is a category, not a code; its codes: {listed}")
        known = code.partition(".")[0] in categories
        hint = "an unknown code of a known category is read as its category; " if known else ""
        return _refuse(
            "explain",
            f"{code} is not a registered code{_did_you_mean(close_codes(code))}; {hint}"
            "`normalize-errors codes` lists them",
        )
    info = code_info(code)
    err = class_for_code(code)()
    lines = [
        f"{info.code}  {info.title}",
        "",
        info.description,
        "",
        f"origin:             {info.origin}",
        f"retryable:          {_yes(info.retryable)} (default)",
        f"model_recoverable:  {_yes(info.model_recoverable)} (default)",
        f"HTTP status:        {info.http_status}",
        f"advice:             {err.advice} (with the defaults)",
        f"class:              normalize_errors.{type(err).__name__}",
    ]
    out.write("\n".join(lines) + "\n")
    return 0


def _fmt_wait(value: float | None) -> str:
    return "-" if value is None else f"{value:g}s"


def _replay(args: argparse.Namespace, out: TextIO) -> int:
    try:
        from .replay import _DISTRIBUTIONS, _missing_sdk, cassette_paths, load, run
    except ImportError as exc:  # pragma: no cover - depends on the environment
        return _refuse(
            "replay", f"needs the 'replay' extra (pip install 'normalize-errors[replay]'): {exc}"
        )
    prepare = None
    if args.wrapped:
        from ._wrap import wrap

        prepare = wrap
    paths = cassette_paths(args.paths)
    rows: list[list[str]] = []
    failures = skipped = 0
    codes: dict[str, int] = {}
    absent: dict[str, int] = {}
    for path in paths:
        try:
            scenario = load(path)
        except (ValueError, OSError) as exc:  # CassetteError names the file and the fault
            return _refuse("replay", str(exc))
        missing = _missing_sdk(scenario)
        if missing is not None:  # an SDK this install does not have: skip, naming it
            skipped += 1
            absent[missing] = absent.get(missing, 0) + 1
            note = f"skipped: needs the {missing} SDK"
            if args.json:
                cassette = f"{scenario.provider}/{scenario.name}"
                out.write(json.dumps({"cassette": cassette, "skipped": note}) + "\n")
            else:
                rows.append([f"{scenario.provider}/{scenario.name}", *["-"] * 5, note])
            continue
        outcome = run(scenario, mode=args.mode, prepare=prepare)
        err = None if outcome.error is None else outcome.error.problem  # the harness view
        problems = outcome.mismatches()
        failures += bool(problems)
        record: dict[str, Any] = {
            "cassette": f"{scenario.provider}/{scenario.name}",
            "provider": scenario.provider,
            "signal": outcome.signal,
            "code": err.code if err else None,
            "retryable": err.retryable if err else None,
            "retry_after": err.retry_after if err else None,
            "advice": err.advice if err else None,
            "expected": not problems,
            "mismatches": problems,
            "source": scenario.source.get("url"),
        }
        if err is not None:
            codes[err.code] = codes.get(err.code, 0) + 1
        if args.json:
            out.write(json.dumps(record) + "\n")
            continue
        rows.append(
            [
                record["cassette"],
                record["signal"],
                record["code"] or "-",
                "-" if err is None else _yes(err.retryable),
                _fmt_wait(record["retry_after"]),
                record["advice"] or "-",
                "ok" if not problems else "MISMATCH: " + "; ".join(problems),
            ]
        )
    if not args.json:
        header = [
            "cassette",
            "vendor signal",
            "harness code",
            "retryable",
            "retry_after",
            "advice",
            "expected",
        ]
        table([header, *rows], out)
        spread = ", ".join(f"{code} {n}" for code, n in sorted(codes.items(), key=lambda i: -i[1]))
        aside = f", {skipped} skipped (their SDK is not installed)" if skipped else ""
        out.write(
            f"\n{len(paths) - skipped} cassettes replayed offline ({args.mode}"
            f"{', wrapped clients' if args.wrapped else ''}): "
            f"{len(paths) - skipped - failures} as expected, {failures} not{aside}. {spread}\n"
        )
        if absent:
            names = sorted(absent, key=lambda m: (-absent[m], m))
            listed = ", ".join(f"{m} ({absent[m]})" for m in names)
            wheels = " ".join(sorted({_DISTRIBUTIONS.get(m, m) for m in names}))
            out.write(f"Skipped for want of {listed}: pip install {wheels}\n")
    return 1 if failures else 0


def _width() -> int:
    """The terminal's width (``COLUMNS`` when set), 80 when the output is not a terminal."""
    return shutil.get_terminal_size((80, 24)).columns


def _cassettes(args: argparse.Namespace, out: TextIO) -> int:
    try:
        from .replay import catalog

        rows = catalog(args.paths)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        return _refuse(
            "cassettes", f"needs PyYAML (pip install 'normalize-errors[testing]'): {exc}"
        )
    except (ValueError, OSError) as exc:  # CassetteError names the file and the fault
        return _refuse("cassettes", str(exc))
    total = len(rows)
    if args.provider:
        known = sorted({*NAMES, *(r["provider"] for r in rows)})
        if args.provider not in known:
            return _refuse("cassettes", _no_provider(args.provider, known))
        rows = [r for r in rows if r["provider"] == args.provider]
    if args.code:  # a code, or a category (``upstream``)
        wanted: str = args.code.rstrip(".")
        if not any(_gives(code, wanted) for code in CODES):
            hint = _did_you_mean(close_codes(wanted))
            return _refuse(
                "cassettes",
                f"--code {wanted}: no registered code or category{hint}; "
                "`normalize-errors codes` lists them",
            )
        rows = [r for r in rows if r["code"] and _gives(r["code"], wanted)]
    if args.json:
        for row in rows:
            out.write(json.dumps(row) + "\n")
        return 0
    header = ["cassette", "status", "harness code"]
    cells = [
        [r["name"], str(r["status"]) + (" stream" if r["stream"] else ""), r["code"] or "-"]
        for r in rows
    ]
    fitted_table([header, *cells], out, _width())
    chosen = "" if len(rows) == total else f" of {total}"
    out.write(f"\n{len(rows)}{chosen} cassettes; --json gives each one's call, summary, source")
    if not args.paths:
        from .replay import shipped

        out.write(f"\nin {shipped()}")
    out.write("\n")
    return 0


def _gives(code: str, wanted: str) -> bool:
    """Whether ``code`` is the code ``wanted``, or of the category ``wanted``."""
    return code == wanted or code.startswith(wanted + ".")


def _no_provider(name: str, known: Sequence[str], listed: str | None = None) -> str:
    """The refusal of a provider name that is none of ``known``, listing them (or saying
    where they are listed)."""
    import difflib

    close = difflib.get_close_matches(name, known, n=2, cutoff=0.7)
    where = listed or f"the providers: {', '.join(known)}"
    return f"no provider {name!r}{_did_you_mean(close)}; {where}"


def fitted_table(rows: Sequence[Sequence[str]], out: TextIO, width: int) -> None:
    """``table``, kept within ``width`` columns: a first cell too long for the room the
    other columns leave gets a line of its own, the rest of its row on the next line."""
    rest = [max(len(row[i]) for row in rows) for i in range(1, len(rows[0]))]
    room = max(width - sum(rest) - 2 * len(rest), 8)
    first = min(max(len(row[0]) for row in rows), room)
    for n, row in enumerate(rows):
        cells = [cell.ljust(w) for cell, w in zip(row[1:], rest, strict=True)]
        if len(row[0]) > first:
            out.write(row[0] + "\n")
            lead = " " * first
        else:
            lead = row[0].ljust(first)
        out.write("  ".join([lead, *cells]).rstrip() + "\n")
        if n == 0:
            out.write("  ".join("-" * w for w in [first, *rest]) + "\n")


def _record(args: argparse.Namespace, out: TextIO) -> int:
    import runpy

    try:
        from .testing import record
    except ImportError as exc:  # pragma: no cover - depends on the environment
        return _refuse("record", f"needs the 'testing' extra: {exc}")
    if not os.path.exists(args.script):
        return _refuse("record", f"no script {args.script!r} (no such file)")
    saved = sys.argv[:]
    sys.argv = [args.script, *args.args]
    status = 0
    try:
        with record(args.out, name=args.name) as written:
            try:
                runpy.run_path(args.script, run_name="__main__")
            except SystemExit as stop:
                status = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
            except Exception as exc:  # what it recorded before is kept: often the failure
                sys.stderr.write(
                    f"normalize-errors record: the script raised {qualname(exc)}"
                    " (its exchanges up to then are recorded)\n"
                )
                status = 1  # as Python's own exit status for an uncaught exception
    finally:
        sys.argv = saved
    for path in written:
        out.write(f"recorded {path}\n")
    if not written:
        out.write("no HTTP exchange was recorded\n")
    return status


_FORMS: Final = {
    "object": "a JSON object with status, headers and body",
    "body": "a bare error body (JSON, no status or headers)",
    "page": "a bare page or text body (no status or headers)",
    "http": "raw HTTP (status line, headers, blank line, body)",
    "headers": "raw HTTP without a status line (headers, blank line, body)",
    "problem": "a problem details object (application/problem+json)",
    "traceback": "a Python traceback (its last line: the SDK's exception)",
}
"""The forms ``classify`` reads, by the name it reports on standard error."""

CLASSIFY_HELP: Final = """\
Reads one failed response and prints its problem object (JSON) on standard output; standard
error says which form of input was read. The forms:

  raw HTTP          HTTP/1.1 529 Overloaded, header lines, a blank line, the body
                    (the status line may be left out)
  response object   {"status": 429, "headers": {"retry-after": "7"}, "body": {...}}
                    (a JSON object with a "body" or "headers" member; body as JSON or text)
  bare error body   a vendor's error body alone, as pasted from a log:
                    {"type": "error", "error": {"type": "overloaded_error", ...}}  (Anthropic)
                    {"error": {"message": ..., "type": ..., "code": ...}}  (OpenAI and kin)
                    {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", ...}}  (Google)
                    or any other JSON object or array; read without a status
  bare page         an HTML page or a line of text that starts with '<'
  problem details   {"type": ..., "title": ..., "status": 429, ...}  (application/problem+json,
                    a harness error's or any RFC 9457 one; its status is read as the HTTP status)
  traceback         a whole Python traceback of an SDK exception, or only its last line:
                    openai.BadRequestError: Error code: 400 - {'error': {...}}
                    anthropic.OverloadedError: Error code: 529 - {'type': 'error', ...}
                    google.genai.errors.ClientError: 400 INVALID_ARGUMENT. {'error': {...}}
                    (the provider from the exception's module, the status from its message)

The problem object goes to standard output; standard error also says the code and its
advice (what to do next).

Exit status: 0 when a problem object was printed, 2 when the input is none of these forms
(nothing is printed on standard output then).
"""


_ADVICE: Final = {
    "retry": "retry the call, after retry_after if given, else with backoff",
    "feedback": "send the error's feedback to the model and let it try again",
    "adjust": "raise the limit or shrink the input, then call again",
    "fix": "the request is wrong: change it before calling again",
    "credentials": "the key or account is refused: check the API key and the account",
    "human": "a person has to act (pay, approve or decide) before calling again",
    "stop": "do not retry: report the failure",
}
"""What each ``advice`` word asks of the caller, as ``classify`` prints it."""

_SDK_MODULES: Final = (("google.genai", "google"), ("openai", "openai"), ("anthropic", "anthropic"))
"""The exception modules ``classify`` reads a traceback of, and their provider."""

_CLASS_STATUS: Final = {
    "BadRequestError": 400,
    "AuthenticationError": 401,
    "PermissionDeniedError": 403,
    "NotFoundError": 404,
    "ConflictError": 409,
    "RequestTooLargeError": 413,
    "UnprocessableEntityError": 422,
    "RateLimitError": 429,
    "ServiceUnavailableError": 503,
    "OverloadedError": 529,
}
"""The status an openai or anthropic exception class stands for, when its message (the raw
body of a response that was not JSON) does not say it."""


def _status_text(text: str) -> bool:
    return len(text) == 3 and text.isdigit()


def _python_value(text: str) -> Any:
    """A dict or list an SDK printed with ``repr`` (single quotes, True, None), read back
    with ``ast.literal_eval`` (literals only, never code); else the text as it is."""
    if text[:1] in ("{", "["):
        try:
            value = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return text
        if isinstance(value, (dict, list)):
            return json.dumps(value, default=str)
    return text


def _read_traceback(text: str) -> tuple[Any, Any, Any, str] | None:
    """(status, headers, body, provider) of a pasted traceback whose last exception is an
    SDK's (or of that exception's line alone); None when the text is not one.

    Raises:
        ValueError: a traceback, but of no SDK exception ``classify`` reads.
    """
    raw = text.strip().splitlines()
    lines = [line.strip() for line in raw]
    traced = any(line.startswith("Traceback (most recent call last)") for line in lines)
    for at in range(len(lines) - 1, -1, -1):
        name, sep, first = lines[at].partition(": ")  # "openai.RateLimitError: Error code: ..."
        parts = name.split(".")
        if not sep or len(parts) < 2 or not all(part.isidentifier() for part in parts):
            continue
        provider = next((p for module, p in _SDK_MODULES if name.startswith(module + ".")), None)
        if provider is None:
            if traced:
                continue  # a note or a chained exception's line after the SDK's
            return None
        message = "\n".join([first, *raw[at + 1 :]])  # a page spans lines
        status: Any = None
        body: Any = message
        if provider == "google" and not message.startswith("Error code: "):
            # APIError.__str__: f"{code} {status}. {details}" (the Interactions API's errors
            # print as openai's do, below)
            head, dot, details = message.partition(". ")
            words = head.split(" ")
            if dot and len(words) == 2 and _status_text(words[0]):
                status, body = int(words[0]), _python_value(details)
        elif message.startswith("Error code: "):  # f"Error code: {status} - {body}" (openai
            # 1.x and 2.x, anthropic) or f"Error code: {status} - {message}" (openai 3.x)
            number, _, rest = message[len("Error code: ") :].partition(" - ")
            if _status_text(number):
                status = int(number)
                body = _python_value(rest)
                if body == rest and rest and rest[:1] not in ("{", "[", "<"):
                    body = json.dumps({"error": {"message": rest}})  # the field it came from
        else:  # the raw body alone (not JSON): the class says the status, if any
            status = _CLASS_STATUS.get(parts[-1])
        return status, {}, body, provider
    if traced:
        raise ValueError("a traceback, but not of an openai, anthropic or google-genai error")
    return None


def _header_line(line: str) -> bool:
    name, sep, _ = line.partition(":")
    return bool(sep) and bool(name) and all(c.isalnum() or c in "-_" for c in name)


def _read_response(text: str) -> tuple[Any, Any, Any, str]:
    """(status, headers, body, form) from any form ``classify`` reads (see ``_FORMS``).

    Raises:
        ValueError: the text is none of the forms.
    """
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            data = json.loads(stripped)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None
        except ValueError as exc:
            raise ValueError(f"it starts like JSON but does not parse: {exc}") from None
        if isinstance(data, dict) and "title" in data and ("type" in data or "code" in data):
            stated = data.get("status")  # RFC 9457's status member: the response's
            headers = {"content-type": "application/problem+json"}
            return (stated if isinstance(stated, int) else None), headers, stripped, "problem"
        if isinstance(data, dict) and ("body" in data or "headers" in data):
            body = data.get("body")
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
            return data.get("status"), data.get("headers") or {}, body, "object"
        if isinstance(data, (dict, list)) and data:
            return None, {}, stripped, "body"
        raise ValueError("the JSON is empty or not an object")
    if stripped.startswith("<"):
        return None, {}, stripped, "page"
    head, _, body = text.replace("\r\n", "\n").partition("\n\n")
    lines = head.strip().splitlines()
    status: Any = None
    form = "headers"
    if lines and lines[0].upper().startswith("HTTP/"):
        parts = lines.pop(0).split()
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
        form = "http"
    elif not lines or not _header_line(lines[0]):
        raise ValueError("no status line, header, JSON or page")
    headers = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip()] = value.strip()
    return status, headers, body, form


def _classify(args: argparse.Namespace, out: TextIO) -> int:
    from ._facade import from_response

    if args.file in (None, "-"):
        data = sys.stdin.buffer.read()
    else:
        with open(args.file, "rb") as source:
            data = source.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        sys.stderr.write(f"classify: the input is not UTF-8 text (byte {exc.start})\n")
        return 2
    provider = args.provider
    try:
        traced = _read_traceback(text)
        if traced is None:
            status, headers, body, form = _read_response(text)
        else:
            status, headers, body, read_provider = traced
            provider, form = provider or read_provider, "traceback"
    except ValueError as exc:
        sys.stderr.write(f"classify: nothing could be read ({exc}); see --help for the forms\n")
        return 2
    sys.stderr.write(f"classify: read {_FORMS[form]}\n")
    err = from_response(status, headers, body, provider=provider).problem
    out.write(err.to_json(indent=2) + "\n")
    sys.stderr.write(
        f"classify: {err.code}, advice {err.advice}: {_ADVICE.get(err.advice, err.advice)}\n"
    )
    return 0


def _corpus(args: argparse.Namespace, out: TextIO) -> int:
    from . import corpus

    cases = corpus.load()
    if args.provider:
        known = sorted({c.provider for c in cases})
        if args.provider not in known:
            listed = f"the corpus's {len(known)} providers are the by_provider keys of --json"
            return _refuse("corpus", _no_provider(args.provider, known, listed))
    if args.split != "all":
        holdout = args.split == "holdout"
        cases = [c for c in cases if corpus.in_holdout(c.id) is holdout]
    if args.kind:
        cases = [c for c in cases if c.kind == args.kind]
    if args.provider:
        cases = [c for c in cases if c.provider == args.provider]
    result = corpus.score(cases)
    if args.json:
        out.write(json.dumps({"split": args.split, **result.to_dict()}) + "\n")
        return 0

    def share(right: int, total: int) -> str:
        return f"{right}/{total}" + (f" ({100 * right / total:.0f}%)" if total else "")

    for label, tallies in (("kind", result.by_kind), ("provider", result.by_provider)):
        rows = [[label, "cases", "right"]]
        rows += [[k, str(t.total), share(t.right, t.total)] for k, t in sorted(tallies.items())]
        fitted_table(rows, out, _width())
        out.write("\n")
    misses = result.misses
    if misses:
        rows = [["missed case", "expected", "got"]]
        for r in misses:
            hints = [h for h in r.wrong if h != "code"]
            got = r.code + (f" (wrong {', '.join(hints)})" if hints else "")
            rows.append([r.case.id, r.case.expected_code, got])
        fitted_table(rows, out, _width())
        out.write("\n")
    out.write(
        f"corpus {corpus.version()}, split {args.split}: {share(result.right, result.total)} right"
        f", {len(misses)} missed\n"
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="normalize-errors",
        description="Typed agent harness errors for language-model calls.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    codes = sub.add_parser("codes", help="the registry of harness error codes")
    codes.add_argument("--json", action="store_true", help="print JSON instead of a table")
    explain = sub.add_parser("explain", help="what one code means")
    explain.add_argument("code", help="a code such as upstream.rate_limited")
    replay = sub.add_parser("replay", help="replay cassettes offline through the real SDKs")
    replay.add_argument("paths", nargs="*", help="cassette files or folders (default: shipped)")
    replay.add_argument("--json", action="store_true", help="print JSON lines")
    replay.add_argument("--mode", choices=["sync", "async"], default="sync")
    replay.add_argument("--wrapped", action="store_true", help="through wrap(client)")
    cassettes = sub.add_parser("cassettes", help="list the cassettes (default: shipped)")
    cassettes.add_argument("paths", nargs="*", help="cassette files or folders")
    cassettes.add_argument("--json", action="store_true", help="print JSON lines")
    cassettes.add_argument("--provider", help="only this provider's (openai, anthropic, ...)")
    cassettes.add_argument(
        "--code", help="only those giving this code, or a code of this category (upstream)"
    )
    record = sub.add_parser(
        "record",
        help="record a script's HTTP calls as cassettes",
        usage="normalize-errors record [-h] [--out DIR] [--name NAME] SCRIPT [ARG ...]",
    )
    record.add_argument("--out", default="cassettes", metavar="DIR", help="folder to write to")
    record.add_argument("--name", help="cassette name (default: recorded_<status>)")
    record.add_argument("script", metavar="SCRIPT", help="a Python script that makes the calls")
    passed = record.add_argument(
        "args", nargs=argparse.REMAINDER, metavar="ARG", help="the script's arguments, if any"
    )
    passed.required = False  # argparse counts a REMAINDER as required: its error named it
    classify = sub.add_parser(
        "classify",
        help="one failed response (raw HTTP, JSON, or a bare error body) -> its problem object",
        description=CLASSIFY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    classify.add_argument("file", nargs="?", help="a file (default: standard input)")
    classify.add_argument("--provider", choices=[*NAMES, "uhp", "site"])
    scored = sub.add_parser("corpus", help="score the library on the corpus of real failures")
    scored.add_argument("--split", choices=["dev", "holdout", "all"], default="all")
    scored.add_argument("--kind", choices=["http", "response", "stream_event"])
    scored.add_argument("--provider", help="only this provider's cases (openai, vllm, ...)")
    scored.add_argument("--json", action="store_true", help="print the score as one JSON object")
    _COMMANDS.update(
        corpus=_corpus,
        codes=_codes,
        explain=_explain,
        replay=_replay,
        classify=_classify,
        cassettes=_cassettes,
        record=_record,
    )
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit status.

    Output piped into a reader that stops early (``normalize-errors codes | head -1``) ends
    the command quietly with status 141 (128 + SIGPIPE, as a shell reports for ``yes | head``).
    """
    args = _parser().parse_args(argv)
    stream = out or sys.stdout
    try:
        status = _COMMANDS[args.command](args, stream)
        stream.flush()
    except BrokenPipeError:
        if stream is sys.stdout:  # nothing more reaches the reader, nor at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return status
