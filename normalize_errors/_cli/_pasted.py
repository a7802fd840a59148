"""What ``normalize-errors classify`` reads: a failure as a person pastes it.

The forms (``FORMS``): raw HTTP, with or without its status line; a JSON object with
``status``, ``headers`` and ``body``; a vendor's bare error body or page; a problem details
object; a Python traceback of an SDK's exception, or that exception's line alone.

A traceback is read exception by exception (``exceptions``). Python prints a chain cause
first: each exception's frames, then its line (``module.Class: message``, the message and its
notes running on over the lines below), the next joined to it by "The above exception was
the direct cause of the following exception:" (``raise ... from``) or "During handling of
the above exception, another exception occurred:"; an exception group (Python 3.11+) prints
its members below it, each in a margin of ``|`` opened by a ``+-...- N -...-`` line. So one
exception's message ends where the next exception, a chain sentence or a member begins, and
never runs into the rest of the traceback.

The exceptions read are those an SDK raised: their class's module is the code of a vendor
SDK that ``providers.PROVIDERS`` declares (openai and the OpenAI-compatible SDKs, anthropic,
google-genai, botocore, cohere), never the application's own exception raised over it. In a
chain the last one printed is read (the one nearest the exception that escaped, the link
``normalize()`` finds walking the chain back); of a group, each member's (``answers``).

An SDK exception's line gives what the response held, by the way each SDK prints it
(``response``). Nothing in the text is run: a dict an SDK printed with ``repr`` is read back
with ``ast.literal_eval`` (literals only).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any, Final

from ..providers._routing import declared, provider_of_module, provider_of_text

__all__ = [
    "FORMS",
    "MAX_DEPTH",
    "Raised",
    "Unreadable",
    "Unrecognised",
    "answers",
    "count",
    "exceptions",
    "read_response",
    "response",
    "sdk_of",
    "stream_data",
    "traced",
]


FORMS: Final = {
    "object": "a JSON object with status, headers and body",
    "body": "a bare error body (JSON, no status or headers)",
    "page": "a bare page or text body (no status or headers)",
    "http": "raw HTTP (status line, headers, blank line, body)",
    "headers": "raw HTTP without a status line (headers, blank line, body)",
    "problem": "a problem details object (application/problem+json)",
    "stream": "a stream's events (event: and data: lines)",
    "result": "a result or a stream's event (JSON, no status): its stop reason",
    "printed": "an SDK's error text (no status or headers)",
    "traceback": "a Python traceback (or an SDK exception's line alone)",
}
"""The forms ``classify`` reads, by the name it reports on standard error."""


class Unreadable(ValueError):
    """The text cannot be read at all: JSON that does not parse, or nests too deeply."""


class Unrecognised(ValueError):
    """The text reads, but as none of the forms a failure comes in (``FORMS``)."""


# -- tracebacks ---------------------------------------------------------------------------------

_CHAIN: Final = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
"""The sentences Python prints between the exceptions of a chain."""

MAX_DEPTH: Final = 32
"""Groups nested deeper than this are read as lines of their member (Python prints at most
``max_group_depth``, 10, levels): the walks over the tree stay shallow."""

_HEADERS: Final = (
    "Traceback (most recent call last):",
    "Exception Group Traceback (most recent call last):",
)


@dataclass
class Raised:
    """One exception of a pasted traceback."""

    name: str
    """Its class as printed: ``openai.RateLimitError`` (``module.Class``; builtins and
    ``__main__`` print the class alone)."""
    message: str
    """What follows ``name: ``, with the lines below it up to the next exception (a message
    of several lines, an exception's notes)."""
    members: list[list[Raised]] = field(default_factory=list)
    """An exception group's members, each the chain printed for it (cause first)."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _exception_line(line: str, bare: bool) -> tuple[str, str] | None:
    """(class, message) of an exception's line (``openai.RateLimitError: Error code: ...``);
    a class with no message only when ``bare``. ``None`` for any other line."""
    name, sep, message = line.strip().partition(": ")
    if not (sep or bare) or not all(part.isidentifier() for part in name.split(".")):
        return None
    return name, message


def _raised(lines: list[str]) -> Raised | None:
    """The exception one block of a traceback holds (its frames, its line, its message), or
    ``None`` when the block holds no exception line."""
    at = next((n for n, line in enumerate(lines) if line.strip()), len(lines))
    found = None
    if at < len(lines) and lines[at].strip() in _HEADERS:
        base, at = _indent(lines[at]), at + 1
        while at < len(lines) and found is None:
            line = lines[at]
            if line.strip().startswith('File "') and _indent(line) <= base:
                at += 1  # a paste that lost its indentation: the frame's source line follows
                if at < len(lines) and _exception_line(lines[at], bare=False) is None:
                    at += 1
                continue
            if line.strip() and _indent(line) <= base:
                found = _exception_line(line, bare=True)
            at += 1
    else:  # no traceback printed: the exception's line, perhaps below lines of a log
        while at < len(lines) and found is None:
            found = _exception_line(lines[at], bare=False)
            at += 1
    if found is None:
        return None
    rest = lines[at:]
    while rest and not rest[-1].strip():
        rest.pop()
    return Raised(found[0], "\n".join([found[1], *rest]))


@dataclass
class _Scope:
    """A chain being read: the top level's (``column`` -1) or a group member's, whose
    margin's ``|`` is at ``column``."""

    column: int
    chain: list[Raised]
    group: Raised | None = None
    lines: list[str] = field(default_factory=list)

    def end_block(self) -> None:
        """The exception being read is whole: add it to the chain."""
        found = _raised(self.lines)
        if found is not None:
            self.chain.append(found)
        self.lines = []

    def add(self, content: str) -> None:
        text = content.strip()
        if text in _CHAIN:
            self.end_block()
            return
        if text in _HEADERS and self.lines and not self.lines[-1].strip():
            self.end_block()  # another traceback pasted after this one
        self.lines.append(content)


def _margin(line: str) -> tuple[int, str, str] | None:
    """(column, kind, content) of a line in an exception group's margin, else ``None``.

    Kinds: ``"open"`` (``+-+---- 1 ----``: a group's first member), ``"next"`` (``+---- 2
    ----``: its next member), ``"close"`` (``+------``: the last member ended),
    ``"line"`` (``| text`` or ``+ Exception Group Traceback ...``: ``content`` is the text).
    """
    text = line.lstrip(" ")
    column = len(line) - len(text)
    if text.startswith("+-+-"):
        return column, "open", ""
    if text.startswith("+-"):
        return column, "close" if not text.strip("+-") else "next", ""
    if text.startswith("+ "):
        return column, "line", text[2:]
    if text.startswith("|"):
        return column, "line", text[2:] if text.startswith("| ") else text[1:]
    return None


def _group_starts(line: str) -> bool:
    """Whether ``line`` is the first Python prints of an exception group: its traceback's
    header, or (a group never raised) its line, which ends with the count of its members."""
    text = line.lstrip(" ")
    return text.startswith("+ Exception Group Traceback") or (
        text.startswith("| ") and text.rstrip().endswith(("sub-exception)", "sub-exceptions)"))
    )


def exceptions(text: str) -> list[Raised]:
    """The exceptions of a pasted traceback at its top level, in the order printed (a
    chain's cause first); a group's members are on the group (``Raised.members``).

    Text that is no traceback gives its first exception line alone, if it has one (an
    exception's line pasted from a log), else nothing.
    """
    top = _Scope(-1, [])
    scopes = [top]
    group: Raised | None
    grouped = False
    for line in text.replace("\r\n", "\n").split("\n"):
        margin = _margin(line) if grouped or _group_starts(line) else None
        if margin is None:
            while len(scopes) > 1:  # out of the group's margin: its members are whole
                scopes.pop().end_block()
            grouped = False
            top.add(line)
            continue
        grouped = True
        column, kind, content = margin
        if kind == "open" and len(scopes) > MAX_DEPTH:
            kind = "line"  # nested past what Python prints: read as lines of the member
        if kind == "line":
            next(s for s in reversed(scopes) if s.column <= column).add(content)
            continue
        if kind == "open":  # the group is the exception just read at this column
            owner = next(s for s in reversed(scopes) if s.column <= column)
            owner.end_block()
            if not owner.chain:  # a member list with no group line above it
                owner.chain.append(Raised("ExceptionGroup", ""))
            group = owner.chain[-1]
            column += 2
        else:
            while scopes[-1].column > column:
                scopes.pop().end_block()
            group = scopes[-1].group
            if scopes[-1].column == column and len(scopes) > 1:
                scopes.pop().end_block()
            if kind == "close" or group is None:
                continue
        member: list[Raised] = []
        group.members.append(member)
        scopes.append(_Scope(column, member, group))
    while scopes:
        scopes.pop().end_block()
    return top.chain


def traced(text: str) -> bool:
    """Whether ``text`` holds a traceback (its header line)."""
    return any(line.strip().lstrip("+| ") in _HEADERS for line in text.splitlines())


def count(chain: list[Raised]) -> int:
    """How many exceptions ``chain`` holds, the members of its groups included."""
    return sum(1 + sum(count(member) for member in raised.members) for raised in chain)


def sdk_of(name: str) -> str | None:
    """The provider whose SDK defines the exception class ``name`` (``module.Class``), or
    ``None`` (a class of the standard library, an HTTP library or the application)."""
    found = provider_of_module(name.rpartition(".")[0])
    return found if found is not None and declared(found).sdk else None


def answers(chain: list[Raised]) -> list[Raised]:
    """The SDK exceptions a chain comes to: its last printed one an SDK raised; or, when a
    group is printed after it, what each member of that group comes to."""
    for raised in reversed(chain):
        if sdk_of(raised.name) is not None:
            return [raised]
        inner = [found for member in raised.members for found in answers(member)]
        if inner:
            return inner
    return []


# -- what an SDK exception's line says of the response ------------------------------------------

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


def _status(text: str) -> int | None:
    return int(text) if len(text) == 3 and text.isdigit() and text[0] in "12345" else None


def _python_value(text: str) -> Any:
    """A dict or list an SDK printed with ``repr`` (single quotes, True, None), read back
    with ``ast.literal_eval`` (literals only, never code), as JSON; else the text as it is."""
    if text[:1] in ("{", "["):
        try:
            value = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return text
        if isinstance(value, (dict, list)):
            return json.dumps(value, default=str)
    return text


def _labelled(message: str) -> tuple[int, dict[str, str], Any] | None:
    """(status, headers, body) of a line anthropic 2.17 and later print: ``529 Overloaded
    (request_id: req_..., path: /v1/messages, type: overloaded_error)``, the body's
    ``error.details`` as JSON after a blank line. The SDK took the text from the body's
    ``error.message`` (or printed the body itself, JSON or a page), and each label from a
    member of the body or a header: they are put back where it took them from. ``None``
    for a message of another form."""
    status = _status(message[:3])
    if status is None or message[3:4] != " ":
        return None
    text, _, rest = message[4:].partition("\n\n")
    details: Any = None
    if rest.lstrip().startswith("{"):
        try:
            details = json.loads(rest)
        except ValueError:
            text = message[4:]
    elif rest:
        text = message[4:]
    labels: dict[str, str] = {}
    at = text.rfind(" (")
    if text.endswith(")") and at >= 0:
        pairs = [item.partition(": ") for item in text[at + 2 : -1].split(", ")]
        if all(sep and key.isidentifier() for key, sep, _ in pairs):
            labels = {key: value for key, _, value in pairs}
            text = text[:at]
    if not labels:
        return None
    request_id = labels.get("request_id")
    headers = {"request-id": request_id} if request_id else {}
    if text == "status code (no body)":
        return status, headers, ""
    if text[:1] in ("{", "[", "<"):  # the body itself, printed whole
        return status, headers, text
    error: dict[str, Any] = {"type": labels.get("type"), "message": text}
    if labels.get("error_code"):
        details = {
            **(details if isinstance(details, dict) else {}),
            "error_code": labels["error_code"],
        }
    if details is not None:
        error["details"] = details
    body = {"type": "error", "error": {k: v for k, v in error.items() if v is not None}}
    if request_id:
        body["request_id"] = request_id
    return status, headers, json.dumps(body)


def _cohere(message: str) -> tuple[Any, dict[str, Any], Any] | None:
    """(status, headers, body) of cohere's ``ApiError`` text: ``headers: {...}, status_code:
    429, body: {...}`` (its ``__str__``), else ``None``."""
    if not message.startswith("headers: "):
        return None
    printed, sep, rest = message[len("headers: ") :].partition(", status_code: ")
    number, _, body = rest.partition(", body: ")
    if not sep:
        return None
    headers = _python_value(printed)
    read = json.loads(headers) if headers is not printed else None
    return _status(number), read if isinstance(read, dict) else {}, _python_value(body)


def response(raised: Raised, provider: str) -> tuple[Any, Any, Any]:
    """(status, headers, body) of the response an SDK exception's message describes.

    The forms, by what each SDK prints: ``Error code: 429 - {...}`` (the Stainless SDKs:
    openai and its kin, anthropic before 2.17, google-genai's Interactions API; the body as
    a Python dict up to openai 2.x, the message alone from 3.x); google-genai's ``400
    INVALID_ARGUMENT. {...}``; anthropic 2.17's ``529 Overloaded (request_id: ...)``;
    cohere's ``headers: {...}, status_code: 429, body: {...}``; else the message is the
    body (a page; botocore's ``An error occurred (ThrottlingException) when calling ...``)
    and the class may say the status (``_CLASS_STATUS``).
    """
    message = raised.message
    if message.startswith("Error code: "):  # f"Error code: {status} - {body or message}"
        number, _, rest = message[len("Error code: ") :].partition(" - ")
        status = _status(number)
        if status is not None:
            body = _python_value(rest)
            if body == rest and rest and rest[:1] not in ("{", "[", "<"):
                body = json.dumps({"error": {"message": rest}})  # the field it came from
            return status, {}, body
        return None, {}, message
    if provider == "google":  # APIError.__str__: f"{code} {status}. {details}"
        head, dot, details = message.partition(". ")
        words = head.split(" ")
        if dot and len(words) == 2 and _status(words[0]) is not None:
            return int(words[0]), {}, _python_value(details)
        return None, {}, message
    found = _labelled(message) or _cohere(message)
    if found is not None:
        return found
    return _CLASS_STATUS.get(raised.name.rpartition(".")[2]), {}, message


# -- the other forms ----------------------------------------------------------------------------


def stream_data(body: str) -> Any:
    """The JSON of a stream's first ``data:`` line (its first event), else ``None``."""
    for line in body.splitlines():
        if line.startswith("data:"):
            try:
                return json.loads(line[5:].strip())
            except (ValueError, RecursionError):
                return None
    return None


def _header_line(line: str) -> bool:
    name, sep, _ = line.partition(":")
    return bool(sep) and bool(name) and all(c.isalnum() or c in "-_" for c in name)


def read_response(text: str) -> tuple[Any, Any, Any, str]:
    """(status, headers, body, form) of a response in any form but a traceback (``FORMS``).

    Raises:
        Unreadable: JSON that does not parse, or nests deeper than Python's parser goes.
        Unrecognised: text of none of the forms (empty JSON; no status line, header, JSON,
            page, stream or SDK's error text).
    """
    stripped = text.strip()
    if not stripped:
        raise Unrecognised("the input is empty")
    if stripped[:1] in ("{", "["):
        try:  # strict=False: a line break inside a string, as some servers send it
            data = json.loads(stripped, strict=False)
        except RecursionError:
            raise Unreadable("JSON nested too deeply") from None
        except ValueError as exc:
            printed = _python_value(stripped)  # a dict a log printed with repr
            if printed is stripped:
                raise Unreadable(f"it starts like JSON but does not parse: {exc}") from None
            stripped, data = printed, json.loads(printed)
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
        raise Unrecognised("the JSON is empty")
    if stripped.startswith("<"):
        return None, {}, stripped, "page"
    if stripped.startswith(("data:", "event:")):  # read as a stream's body is: in a 200
        return 200, {"content-type": "text/event-stream"}, stripped, "stream"
    if provider_of_text(stripped) is not None:  # botocore's "An error occurred (...) when
        return None, {}, stripped, "printed"  # calling the ... operation", Google's gRPC text
    head, _, body = text.replace("\r\n", "\n").partition("\n\n")
    lines = head.strip().splitlines()
    status: Any = None
    form = "headers"
    if lines and lines[0].upper().startswith("HTTP/"):
        parts = lines.pop(0).split()
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
        form = "http"
    elif not lines or not _header_line(lines[0]):
        raise Unrecognised("no status line, header, JSON, page, stream or traceback")
    headers = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip()] = value.strip()
    return status, headers, body, form
