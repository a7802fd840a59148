"""The ``normalize-errors`` command line.

Subcommands:

* ``codes [--json]``: the registry as a table, or as JSON.
* ``explain CODE``: what a code means, its defaults, HTTP status, advice and class; a word
  that is no code gets the codes it may mean (``close_codes``).
* ``replay [PATH ...] [--json] [--mode sync|async] [--wrapped]``: replay cassettes (default:
  the shipped ones) offline through the real SDK clients and print what each failure
  becomes. Exits 1 if any cassette does not give the harness error its metadata expects.
* ``cassettes [PATH ...] [--json] [--provider P] [--code C]``: the cassettes (default: the
  shipped ones) with their public names (``anthropic/overloaded_529``), the harness code
  each gives and its source.
* ``record [--out DIR] [--name NAME] SCRIPT [ARG ...]``: run a Python script of yours and
  record every HTTP exchange it makes as a cassette under DIR (default ``cassettes``),
  credentials removed (see ``normalize_errors.testing.record``); exits 1 if it raised.
* ``classify [FILE] [--provider NAME]``: read one failed response from FILE, standard input
  or the argument itself (raw HTTP, JSON with ``status``, ``headers`` and ``body``, a
  vendor's bare error body or page, a stream's events, a pasted traceback; ``_pasted``
  reads the text) and print its problem object as JSON; standard error names the form read.
  Exit status 2 when the input cannot be read, 3 when it holds nothing a provider sends for
  a failure (``CLASSIFY_HELP``).
* ``corpus [--split S] [--kind K] [--provider P] [--json] [--leave-one-provider-out]``: the
  score on the corpus (with each provider's own rows switched off: see ``corpus``).

Standard output holds the answer only; a refusal (an unknown code, provider or file) is one
line on standard error, with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final, TextIO

from .._base._safe_read import qualname
from .._model._code_classes import class_for_code
from .._model._exceptions import HarnessError
from .._model._registry import CODES, code_info
from .._reading._readers import BUILTIN_NAMED
from ..providers import NAMES

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
    """Say on standard error, in one line, why ``command`` cannot answer; exit status 2.

    The message may quote what was typed (a word, a file name): a key typed by mistake is
    redacted."""
    from .._base._redact import redact

    sys.stderr.write(f"normalize-errors {command}: {redact(message)}\n")
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
        import yaml  # noqa: F401 - load() reads every cassette with it

        from ..replay import _DISTRIBUTIONS, _missing_sdk, cassette_paths, load, run
    except ImportError as exc:  # an install without the extra: a refusal, not a traceback
        return _refuse(
            "replay", f"needs the 'replay' extra (pip install 'normalize-errors[replay]'): {exc}"
        )
    prepare = None
    if args.wrapped:
        from .._wrapping._wrap import wrap

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
        from ..replay import catalog

        rows = catalog(args.paths)
    except ImportError as exc:  # an install without the extra: a refusal, not a traceback
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
        from ..replay import shipped

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

    if not os.path.exists(args.script):
        return _refuse("record", f"no script {args.script!r} (no such file)")
    try:
        import vcr  # noqa: F401 - record() records with it, imported when it starts
        import yaml  # noqa: F401

        from ..testing import record
    except ImportError as exc:  # an install without the extra: a refusal, not a traceback
        return _refuse(
            "record", f"needs the 'testing' extra (pip install 'normalize-errors[testing]'): {exc}"
        )
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
                    or any other JSON object or array, or a dict a log printed with
                    repr ({'error': {...}}); read without a status. A result or a
                    stream's event (a completion cut at the token limit) is read for
                    its stop reason.
  bare page         an HTML page or a line of text that starts with '<'
  stream            a stream's events (event: and data: lines): its error event, else
                    how it ended (a finish at the token limit)
  SDK's text        an error as an SDK prints it with no status: botocore's "An error
                    occurred (ThrottlingException) when calling the Converse operation:
                    ...", Google's gRPC text ("... [reason: \"API_KEY_INVALID\" ...")
  problem details   {"type": ..., "title": ..., "status": 429, ...}  (application/problem+json,
                    a harness error's or any RFC 9457 one; its status is read as the HTTP status)
  traceback         a whole Python traceback (chained, or an exception group) holding an
                    exception an SDK raised, or only that exception's line:
                    openai.BadRequestError: Error code: 400 - {'error': {...}}
                    anthropic.OverloadedError: 529 Overloaded (request_id: req_..., ...)
                    google.genai.errors.ClientError: 400 INVALID_ARGUMENT. {'error': {...}}
                    (the provider from the exception's module, the status from its message;
                    each exception of a chain is read apart, and the SDK's is read, not the
                    one the application raised over it or while handling it)

FILE is a file to read, or - for standard input (the default). An argument that names no
file is read as the text itself when it holds a line break, '{', '[', '<', ': ' or
'Traceback', or starts with 'HTTP/' (pasted JSON, a page, a traceback, an exception's line).

The problem object goes to standard output; standard error also says the code and its
advice (what to do next).

Exit status: 0 when a problem object was printed; 2 when the input cannot be read (no such
file, a folder, not UTF-8, JSON that does not parse); 3 when it holds nothing a provider
sends for a failure (no HTTP status, no error code, type or message, no page, no SDK
exception): not recognised. Nothing is printed on standard output unless the status is 0.
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

NOT_RECOGNISED: Final = 3
"""``classify``'s exit status for input that holds nothing a provider sends for a failure."""

_TEXT_MARKS: Final = ("\n", "{", "[", "<", ": ", "Traceback")
"""What makes an argument that names no file the text itself (``CLASSIFY_HELP``)."""


def _classify_input(given: str | None) -> bytes | str:
    """The bytes ``classify`` reads (a file, standard input, or the argument itself), or
    the one-line reason it cannot read any (``FILE`` in ``CLASSIFY_HELP``)."""
    if given in (None, "-"):
        return sys.stdin.buffer.read()
    assert given is not None
    if os.path.isdir(given):
        return f"{given} is a folder: give one file, or the text itself"
    if os.path.exists(given):
        try:
            with open(given, "rb") as source:
                return source.read()
        except OSError as exc:
            return f"cannot read {given}: {exc.strerror or type(exc).__name__}"
    if given.startswith("HTTP/") or any(mark in given for mark in _TEXT_MARKS):
        return os.fsencode(given)  # pasted as the argument: the text itself
    return (
        f"no file {given!r} (an argument that names no file is read as the text itself only "
        "when it holds a line break, '{', '[', '<', ': ' or 'Traceback', or starts with HTTP/)"
    )


def _answer(
    status: Any, headers: Any, body: Any, form: str, provider: str | None
) -> tuple[HarnessError, str]:
    """The error a pasted response means, and the form it was read as: read as the corpus
    reads its cases (``corpus.run``). A bare JSON body that is an SDK result or a stream's
    event is read for its stop reason first (``diagnose``, ``diagnose_stream``: a finish at
    the token limit, a failed response); a stream's events for an error event, else for how
    the stream ended.

    Raises:
        Unrecognised: nothing a provider sends for a failure is in it (``_recognised``).
    """
    from .._facade import diagnose, diagnose_stream, from_response
    from ._pasted import FORMS, Unrecognised, stream_data

    if form in ("body", "stream"):
        data = json.loads(body, strict=False) if form == "body" else stream_data(body)
        found = diagnose(data, provider=provider) if isinstance(data, (dict, list)) else None
        if form == "stream":
            err = from_response(status, headers, body, provider=provider).problem
            if err.upstream.get("in_stream"):
                return err, form
        event = isinstance(data, dict) and isinstance(data.get("type"), str)  # names its kind
        if form == "stream" or (found is None and event):  # a stream event pasted alone
            found = diagnose_stream(body, provider=provider) or found
        if found is not None:
            return found.problem, "result" if form == "body" else form
    err = from_response(status, headers, body, provider=provider).problem
    if not _recognised(form, status, err):
        lacks = "error event or stop reason" if form == "stream" else "status, code or message"
        raise Unrecognised(f"{FORMS[form]} with no {lacks}")
    return err, form


def _recognised(form: str, status: Any, err: HarnessError) -> bool:
    """Whether a response read from a pasted form told anything a provider sends: a page, a
    problem details object, a status, or a fact of the vendor's in ``upstream`` beside the
    provider (a code, a type, a message, a kept header, a request id); a stream, an error
    event in it. A body such as ``[1, 2, 3]`` or ``{"status": "error"}`` and a line such as
    ``Error: something went wrong`` tell nothing: no answer is guessed for them."""
    if form == "stream":  # its 200 was not pasted: an error event must be found in it
        return bool(err.upstream.get("in_stream"))
    if form in ("problem", "page"):
        return True
    return status is not None or any(key != "provider" for key in err.upstream)


def _from_traceback(text: str, provider: str | None) -> tuple[HarnessError, str] | None:
    """The error of the SDK exceptions a pasted traceback holds (see ``_pasted``), with what
    ``classify`` says it read; ``None`` when the text is no traceback and no SDK exception's
    line.

    Raises:
        Unrecognised: a traceback, but of no exception an SDK raised.
    """
    from .._facade import from_response
    from .._model._groups import most_telling
    from ._pasted import Unrecognised, answers, count, exceptions, response, sdk_of, traced

    printed = exceptions(text)
    found = answers(printed)
    if not found:
        if traced(text):
            names = ", ".join(dict.fromkeys(r.name for r in printed)) or "none read"
            raise Unrecognised(f"a traceback, but of no exception an SDK raised ({names})")
        return None
    errors = []
    for raised in found:
        read = sdk_of(raised.name)
        assert read is not None
        status, headers, body = response(raised, read)
        err = from_response(status, headers, body, provider=provider or read).problem
        err.upstream = {**err.upstream, "exception": raised.name}
        errors.append(err)
    index = most_telling(errors)
    chosen = errors[index]
    if len(errors) > 1:
        chosen.causes = [*chosen.causes, *(e for i, e in enumerate(errors) if i != index)]
    total = count(printed)
    where = f" (of {total} exceptions printed)" if total > 1 else ""
    return chosen, f"the SDK's exception read: {found[index].name}{where}"


def _classify(args: argparse.Namespace, out: TextIO) -> int:
    from ._pasted import FORMS, Unreadable, Unrecognised, read_response

    data = _classify_input(args.file)
    if isinstance(data, str):  # it may quote the argument: a key pasted by mistake is redacted
        from .._base._redact import redact

        sys.stderr.write(f"classify: {redact(data)}\n")
        return 2
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        sys.stderr.write(f"classify: the input is not UTF-8 text (byte {exc.start})\n")
        return 2
    said = ""
    try:
        traced = _from_traceback(text, args.provider)
        if traced is None:
            status, headers, body, form = read_response(text)
            err, form = _answer(status, headers, body, form, args.provider)
        else:
            (err, said), form = traced, "traceback"
    except Unreadable as exc:
        sys.stderr.write(f"classify: nothing could be read ({exc}); see --help for the forms\n")
        return 2
    except Unrecognised as exc:
        sys.stderr.write(
            f"classify: not recognised: {exc}; nothing a provider sends for a failure was "
            "found, so no code is guessed (see --help for the forms)\n"
        )
        return NOT_RECOGNISED
    sys.stderr.write(f"classify: read {FORMS[form]}{'; ' + said if said else ''}\n")
    out.write(err.to_json(indent=2) + "\n")
    sys.stderr.write(
        f"classify: {err.code}, advice {err.advice}: {_ADVICE.get(err.advice, err.advice)}\n"
    )
    return 0


def _corpus(args: argparse.Namespace, out: TextIO) -> int:
    from .. import corpus

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
    lopo = args.leave_one_provider_out
    result = corpus.leave_one_provider_out(cases) if lopo else corpus.score(cases)
    mean = round(100 * result.mean_by_provider, 1)
    if args.json:
        shown = {"split": args.split, "leave_one_provider_out": lopo, "mean_by_provider": mean}
        out.write(json.dumps({**shown, **result.to_dict()}) + "\n")
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
        f"{'leaving each provider out, ' if lopo else ''}mean over the "
        f"{len(result.by_provider)} providers: {mean}%\n"
    )
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
    classify.add_argument(
        "file", nargs="?", help="a file, - for standard input (the default), or the text itself"
    )
    # the providers, and the protocols whose readers read any response named (UHP, site)
    classify.add_argument("--provider", choices=[*NAMES, *BUILTIN_NAMED])
    scored = sub.add_parser("corpus", help="score the library on the corpus of real failures")
    scored.add_argument("--split", choices=["dev", "holdout", "all"], default="all")
    scored.add_argument("--kind", choices=["http", "response", "stream_event"])
    scored.add_argument("--provider", help="only this provider's cases (openai, vllm, ...)")
    scored.add_argument("--json", action="store_true", help="print the score as one JSON object")
    scored.add_argument(
        "--leave-one-provider-out",
        action="store_true",
        help="read each provider's cases with its own rows switched off (providers/<name>.toml)",
    )
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
