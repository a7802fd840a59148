"""The corpus of real provider failures, and its scorer.

Each ``*.jsonl`` file in this folder holds cases, one JSON object a line, with the fields of
``schema.json``: a failure as its public source showed it (``status``, ``headers``, ``body``)
and the answer the draft gives it (``expected_code`` and, where the case states one, the
hints). ``load()`` reads and checks them, ``run(case)`` reads one through the installed
library, ``score(cases)`` counts the right answers. ``VERSION`` is the corpus's version.

How a case is read (the plain route, as for a provider nobody described: ``provider=None``,
so the body's shape decides):

- ``http``: ``from_response(status, headers, body)``.
- ``response`` (a failure inside a 2xx body): the body parsed as JSON goes to ``diagnose``
  (the stop reason, refusal or content filter of a result); when that finds nothing, the
  response goes to ``from_response`` with its status (200 when the source showed none), which
  reads an error object inside a 2xx body as its HTTP twin, and answers
  ``upstream.invalid_response`` for a success that reports no error.
- ``stream_event`` (an error frame, a final event, or a whole recorded stream):
  ``from_response(200, {"content-type": "text/event-stream"}, body)``, which finds the first
  error event in the frame; when it holds none (a stream whose final stop reason is the
  failure), the body goes to ``diagnose_stream`` as a finished stream (its events folded and
  their final stop reason read like a result's, the provider told by the events' shape),
  and when that finds nothing the first event's ``data`` JSON goes to ``diagnose`` as a
  result.

A case is right when the code is ``expected_code`` or one of ``also_accept``, and each hint the
case states (``expected_retryable``, ``expected_retry_after``, ``expected_model_recoverable``)
equals the error's. ``in_holdout(case_id)`` names the held-out fifth, scored but never used
to tune the library. ``known_misses()`` lists the cases the library gets wrong today, each
with a reason.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

from .._model._exceptions import HarnessError

__all__ = [
    "FIELDS",
    "KINDS",
    "Case",
    "Result",
    "Score",
    "Tally",
    "folder",
    "in_holdout",
    "judge",
    "known_misses",
    "leave_one_provider_out",
    "load",
    "run",
    "score",
    "version",
]

FIELDS: Final = (
    "id",
    "provider",
    "kind",
    "status",
    "headers",
    "body",
    "expected_code",
    "expected_retryable",
    "expected_retry_after",
    "expected_model_recoverable",
    "also_accept",
    "source",
    "notes",
)
"""The fields of one case, in the order every line writes them."""

KINDS: Final = ("http", "response", "stream_event")

_ID_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-")


def _valid_id(text: str) -> bool:
    """``<provider>-<slug>``: lower-case ASCII letters, digits, dots and hyphens, starting with
    a letter or digit and with a hyphen followed by a letter or digit after the first
    character (the schema's ``id`` pattern)."""
    alnum = _ID_CHARS - {".", "-"}
    return (
        bool(text)
        and set(text) <= _ID_CHARS
        and text[0] in alnum
        and any(a == "-" and b in alnum for a, b in pairwise(text))
    )


def folder() -> Path:
    """The folder the corpus ships in."""
    return Path(__file__).resolve().parent


def version() -> str:
    """The corpus's version (``VERSION``)."""
    return (folder() / "VERSION").read_text(encoding="utf-8").strip()


@dataclass(frozen=True)
class Case:
    """One real failure and the answer the draft gives it (see ``schema.json``)."""

    id: str
    provider: str
    kind: str
    status: int | None
    headers: Mapping[str, str]
    body: str
    expected_code: str
    expected_retryable: bool | None
    expected_retry_after: float | None
    expected_model_recoverable: bool | None
    also_accept: tuple[str, ...]
    source: str
    notes: str
    file: str = ""


@dataclass(frozen=True)
class Result:
    """How the library read one case."""

    case: Case
    code: str
    right: bool
    wrong: tuple[str, ...]
    """What differs from the case's answer: ``code``, ``retryable``, ``retry_after``,
    ``model_recoverable`` (empty when the case is right)."""
    error: HarnessError


@dataclass
class Tally:
    """Right answers out of cases."""

    right: int = 0
    total: int = 0


@dataclass
class Score:
    """Right/total overall, by kind and by provider, and every result."""

    right: int = 0
    total: int = 0
    by_kind: dict[str, Tally] = field(default_factory=dict)
    by_provider: dict[str, Tally] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)

    @property
    def mean_by_provider(self) -> float:
        """The mean over providers of each provider's share of right answers (each provider
        counts once, however many cases it has): 0.0 with no case."""
        shares = [t.right / t.total for t in self.by_provider.values() if t.total]
        return sum(shares) / len(shares) if shares else 0.0

    @property
    def misses(self) -> list[Result]:
        """The results that are not right, in corpus order."""
        return [r for r in self.results if not r.right]

    def to_dict(self) -> dict[str, Any]:
        """The score as JSON-ready data."""

        def tallies(table: dict[str, Tally]) -> dict[str, dict[str, int]]:
            return {k: {"right": t.right, "total": t.total} for k, t in sorted(table.items())}

        return {
            "right": self.right,
            "total": self.total,
            "by_kind": tallies(self.by_kind),
            "by_provider": tallies(self.by_provider),
            "misses": [
                {
                    "id": r.case.id,
                    "expected": r.case.expected_code,
                    "got": r.code,
                    "wrong": list(r.wrong),
                }
                for r in self.misses
            ],
        }


def _check(data: Any, where: str) -> Case:
    """The case one line holds; raises ``ValueError`` naming ``where`` if it is malformed."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: not a JSON object")
    if list(data) != list(FIELDS):
        raise ValueError(f"{where}: the fields must be exactly, in order: {', '.join(FIELDS)}")
    problems = []
    text = ("id", "provider", "body", "expected_code", "source", "notes")
    problems += [name for name in text if not isinstance(data[name], str)]
    if isinstance(data["id"], str) and not _valid_id(data["id"]):
        problems.append("id")
    if data["kind"] not in KINDS:
        problems.append("kind")
    status = data["status"]
    if status is not None and (type(status) is not int or not 100 <= status <= 599):
        problems.append("status")
    headers = data["headers"]
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and k == k.lower() and isinstance(v, str) for k, v in headers.items()
    ):
        problems.append("headers")
    for name in ("expected_retryable", "expected_model_recoverable"):
        if data[name] is not None and not isinstance(data[name], bool):
            problems.append(name)
    after = data["expected_retry_after"]
    if after is not None and (isinstance(after, bool) or not isinstance(after, (int, float))):
        problems.append("expected_retry_after")
    accept = data["also_accept"]
    if not isinstance(accept, list) or not all(isinstance(c, str) for c in accept):
        problems.append("also_accept")
    if isinstance(data["source"], str) and not data["source"].startswith("https://"):
        problems.append("source")
    if problems:
        raise ValueError(f"{where}: malformed {', '.join(problems)}")
    return Case(
        **{**data, "also_accept": tuple(accept), "headers": dict(headers)},
        file=where.partition(":")[0],
    )


def load(path: str | Path | None = None) -> list[Case]:
    """Every case of every ``*.jsonl`` file in ``path`` (default: the shipped corpus), in
    file-name then line order.

    A line ends at a line feed only (a JSON string may hold U+2028 unescaped), and each is
    read on its own: a line that is not UTF-8, not JSON, or JSON nested deeper than Python's
    parser goes is refused with its file and line.

    Raises:
        ValueError: a line is not a valid case, or two cases share an id.
    """
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for file in sorted(Path(path or folder()).glob("*.jsonl")):
        lines = file.read_bytes().split(b"\n")
        for number, raw in enumerate(lines, 1):
            where = f"{file.name}:{number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{where}: not UTF-8 (byte offset {exc.start})") from None
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except RecursionError:
                raise ValueError(f"{where}: not JSON (nested too deeply)") from None
            except ValueError as exc:
                raise ValueError(f"{where}: not JSON ({exc})") from None
            case = _check(data, where)
            if case.id in seen:
                raise ValueError(f"{where}: id {case.id} is also at {seen[case.id]}")
            seen[case.id] = where
            cases.append(case)
    return cases


def in_holdout(case_id: str) -> bool:
    """Whether a case is in the held-out fifth (scored, never used to tune the library)."""
    digest = hashlib.sha256(("25:" + case_id).encode()).hexdigest()
    return int(digest, 16) < 2**256 // 5


def known_misses() -> dict[str, str]:
    """Case id -> why the library is wrong on it today (``known_misses.json``)."""
    data: dict[str, str] = json.loads((folder() / "known_misses.json").read_text("utf-8"))
    return data


def _event_data(body: str) -> Any:
    """The JSON of a stream frame's ``data:`` line (or of the body itself), else ``None``."""
    for line in body.splitlines():
        if line.startswith("data:"):
            body = line[5:].strip()
            break
    try:
        return json.loads(body)
    except ValueError:
        return None


def run(case: Case) -> HarnessError:
    """The harness error the installed library reads from ``case`` (see the module's text)."""
    from .._facade import diagnose, diagnose_stream, from_response

    headers = dict(case.headers)
    if case.kind == "http":
        return from_response(case.status, headers, case.body)
    if case.kind == "response":
        parsed = _event_data(case.body)
        found = diagnose(parsed) if isinstance(parsed, (dict, list)) else None
        if found is not None:
            return found
        return from_response(case.status or 200, headers, case.body)
    stream = {"content-type": "text/event-stream", **headers}
    err = from_response(200, stream, case.body)
    if err.code == "upstream.invalid_response" and err.upstream.get("in_stream") is None:
        found = diagnose_stream(case.body)
        if found is not None:
            return found
        parsed = _event_data(case.body)
        found = diagnose(parsed) if isinstance(parsed, (dict, list)) else None
        if found is not None:
            return found
    return err


def judge(case: Case, err: HarnessError) -> Result:
    """Whether ``err`` is the right answer to ``case``."""
    wrong = []
    if err.code != case.expected_code and err.code not in case.also_accept:
        wrong.append("code")
    if case.expected_retryable is not None and err.retryable is not case.expected_retryable:
        wrong.append("retryable")
    if case.expected_retry_after is not None and err.retry_after != case.expected_retry_after:
        wrong.append("retry_after")
    if (
        case.expected_model_recoverable is not None
        and err.model_recoverable is not case.expected_model_recoverable
    ):
        wrong.append("model_recoverable")
    return Result(case=case, code=err.code, right=not wrong, wrong=tuple(wrong), error=err)


def score(cases: Iterable[Case]) -> Score:
    """Run every case and count the right answers, overall, by kind and by provider."""
    total = Score()
    for case in cases:
        result = judge(case, run(case))
        total.results.append(result)
        for table, key in ((total.by_kind, case.kind), (total.by_provider, case.provider)):
            tally = table.setdefault(key, Tally())
            tally.total += 1
            tally.right += result.right
        total.total += 1
        total.right += result.right
    return total


def leave_one_provider_out(cases: Iterable[Case]) -> Score:
    """``score``, each provider's cases read with that provider's own rows switched off.

    For each provider with cases, the rows of its data file (``providers/<name>.toml``, found
    by its name or one of the file's ``aliases``) and every row that names it among its
    ``vendors`` are passed over (``_tables.leaving_out``): what reads its failures is the other
    providers' rows, the shared families of wording and the status's default, as for the next
    provider nobody has written a row for. ``mean_by_provider`` of the result is the figure
    to watch. Exception classes play no part (a case is a response, not an exception).
    """
    from .._reading._tables import leaving_out

    groups: dict[str, list[Case]] = {}
    for case in cases:
        groups.setdefault(case.provider, []).append(case)
    total = Score()
    for provider, group in sorted(groups.items()):
        with leaving_out(provider):
            part = score(group)
        total.results += part.results
        total.by_provider[provider] = Tally(part.right, part.total)
        for kind, tally in part.by_kind.items():
            mine = total.by_kind.setdefault(kind, Tally())
            mine.right += tally.right
            mine.total += tally.total
        total.right += part.right
        total.total += part.total
    return total
