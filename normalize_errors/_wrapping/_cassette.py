"""The one reader of cassette files: every cassette the package loads goes through ``read``.

A cassette is a vcrpy YAML file, and one handed to ``Faults.fail(path)``, ``replay`` or the
command line may come from anyone (a pull request, a bug report, a download), so it is read
as untrusted input. ``read`` refuses, with a ``CassetteError`` naming the file:

* a file larger than ``MAX_BYTES`` (the largest shipped cassette is under 8 KB);
* text that is not UTF-8, or not YAML;
* any YAML anchor or alias (``&a`` / ``*a``): a few hundred bytes of nested aliases expand
  to gigabytes once loaded; vcrpy never writes them;
* collections nested deeper than ``MAX_DEPTH``;
* a structure that is not a cassette: a mapping whose ``interactions`` (when present; a
  reader that needs them refuses a file without) is a list of mappings, each with a
  ``response`` mapping whose ``status.code`` is an HTTP status, whose ``headers`` map names
  to text (or lists of text), and whose ``body.string`` is text, bytes or empty; a
  ``request``, when present, is a mapping with text ``method`` and ``uri``; ``metadata``,
  when present, is a mapping.

Needs PyYAML; it is imported on the first read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from .._base._redact import redact
from .._base._safe_read import described

__all__ = ["MAX_BYTES", "MAX_DEPTH", "CassetteError", "read"]

MAX_BYTES: Final = 8 * 1024 * 1024
"""The largest cassette file read, in bytes (8 MiB: a thousand times the largest shipped one)."""
MAX_DEPTH: Final = 32
"""The deepest nesting of YAML collections read (a shipped cassette nests 6 deep)."""


class CassetteError(ValueError):
    """A cassette file that cannot be used: too large, not YAML, or not a cassette.

    ``path`` is the file; the message names it and what was wrong.
    """

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"cassette {self.path}: {problem}")


def read(path: str | Path) -> dict[str, Any]:
    """The cassette in the file ``path``, checked (see the module doc).

    Raises:
        CassetteError: the file is refused; the message says why.
        OSError: the file cannot be opened.
    """
    path = Path(path)
    with path.open("rb") as handle:
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise CassetteError(
            path, f"larger than the cap of {MAX_BYTES} bytes ({MAX_BYTES // 2**20} MiB)"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CassetteError(path, f"not UTF-8 text (byte {exc.start})") from None
    return parse(text, path)


def parse(text: str, path: str | Path = "<text>") -> dict[str, Any]:
    """The cassette in ``text`` (read from ``path``, which errors name), checked.

    Raises:
        CassetteError: the text is refused; the message says why.
    """
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        depth = 0
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise CassetteError(path, _where(event, "YAML anchors and aliases are refused"))
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise CassetteError(
                        path, _where(event, f"nested deeper than {MAX_DEPTH} collections")
                    )
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        documents = list(yaml.load_all(text, Loader=loader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        # PyYAML's words can quote the file (a tag, an alias name): redacted like any text
        raise CassetteError(path, f"not valid YAML{at}: {redact(str(problem))[:200]}") from None
    if len(documents) != 1:
        raise CassetteError(path, f"expected one YAML document, found {len(documents)}")
    return _checked(documents[0], path)


def _where(event: Any, problem: str) -> str:
    mark = getattr(event, "start_mark", None)
    return f"{problem} (line {mark.line + 1})" if mark is not None else problem


def _checked(data: Any, path: str | Path) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise CassetteError(path, f"expected a mapping, found {_kind(data)}")
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise CassetteError(path, f"metadata: expected a mapping, found {_kind(metadata)}")
    interactions = data.get("interactions")
    if interactions is None:  # other YAML (a config file in the folder): the caller decides
        return data
    if not isinstance(interactions, list):
        raise CassetteError(path, f"interactions: expected a list, found {_kind(interactions)}")
    for n, item in enumerate(interactions):
        at = f"interactions[{n}]"
        if not isinstance(item, dict):
            raise CassetteError(path, f"{at}: expected a mapping, found {_kind(item)}")
        _request(item.get("request"), f"{at}.request", path)
        _response(item.get("response"), f"{at}.response", path)
    return data


def _request(request: Any, at: str, path: str | Path) -> None:
    if request is None:
        return
    if not isinstance(request, dict):
        raise CassetteError(path, f"{at}: expected a mapping, found {_kind(request)}")
    for name in ("method", "uri"):
        if not isinstance(request.get(name), str):
            raise CassetteError(
                path, f"{at}.{name}: expected text, found {_kind(request.get(name))}"
            )
    body = request.get("body")
    if body is not None and not isinstance(body, (str, bytes)):
        raise CassetteError(path, f"{at}.body: expected text or bytes, found {_kind(body)}")
    _headers(request.get("headers"), f"{at}.headers", path)


def _response(response: Any, at: str, path: str | Path) -> None:
    if not isinstance(response, dict):
        raise CassetteError(path, f"{at}: expected a mapping, found {_kind(response)}")
    status = response.get("status")
    code = status.get("code") if isinstance(status, dict) else None
    if not (isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599):
        found = _kind(code) if isinstance(status, dict) else _kind(status)
        raise CassetteError(path, f"{at}.status.code: expected an HTTP status, found {found}")
    _headers(response.get("headers"), f"{at}.headers", path)
    body = response.get("body")
    if body is None:
        return
    if not isinstance(body, dict):
        raise CassetteError(path, f"{at}.body: expected a mapping, found {_kind(body)}")
    string = body.get("string")
    if string is not None and not isinstance(string, (str, bytes)):
        raise CassetteError(
            path, f"{at}.body.string: expected text or bytes, found {_kind(string)}"
        )


def _headers(headers: Any, at: str, path: str | Path) -> None:
    if headers is None:
        return
    if not isinstance(headers, dict):
        raise CassetteError(path, f"{at}: expected a mapping, found {_kind(headers)}")
    for name, value in headers.items():
        if not isinstance(name, str):
            raise CassetteError(path, f"{at}: a header name is {_kind(name)}, not text")
        for one in value if isinstance(value, list) else [value]:
            if not isinstance(one, (str, int, float)) or isinstance(one, bool):
                raise CassetteError(path, f"{at}.{name}: expected text, found {_kind(one)}")


def _kind(value: Any) -> str:
    """What ``value`` is, in a word, for an error message (never the value itself)."""
    if value is None:
        return "nothing"
    names = {
        dict: "a mapping",
        list: "a list",
        str: "text",
        bytes: "bytes",
        bool: "a boolean",
        int: "an integer",
    }
    return names.get(type(value)) or described(value)
