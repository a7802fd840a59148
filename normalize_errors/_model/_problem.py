"""Reading a received harness error object: validation member by member.

Every failure raises ``ProblemFormatError`` with the JSON Pointer of the offending member.
Integral floats are accepted where the draft asks for integers, because some carriers
(A2A data parts) turn every number into a float. A number too large for a float (``1``
followed by 400 zeros) is out of range: ``retry_after`` and ``limit`` values like it are
invalid, as infinity would be. ``causes`` nested deeper than ``MAX_CAUSE_DEPTH`` are cut to
their innermost entry, which is read without its own causes; so are the lists met once
``MAX_TOTAL_CAUSES`` causes have been read (shared sub-objects, as YAML anchors or a program
can make, would otherwise grow as 16 to the power of the depth).
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from .._base._redact import redact
from .._base._safe_copy import utf8_safe
from ._code_classes import class_for_code
from ._exceptions import MAX_CAUSE_DEPTH, MAX_CAUSES, MEMBERS, HarnessError, ProblemFormatError
from ._quota import Quota
from ._registry import CODE_PATTERN, TYPE_URIS

__all__ = ["parse", "parse_json"]

ORIGINS: Final = frozenset({"model", "harness", "tool", "upstream", "user"})
_KNOWN: Final = frozenset(MEMBERS)
MAX_TOTAL_CAUSES: Final = 256
"""Most causes read from one object in all; past it each list gives only its innermost entry."""
MAX_LEAF_STEPS: Final = 10_000
"""Most steps taken, in all, down the last entries of cut lists to their innermost entry."""


def parse_json(text: str | bytes) -> HarnessError:
    """Parse JSON text into a harness error; see ``HarnessError.from_json``."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8, too deep
        raise ProblemFormatError("", f"not JSON ({type(exc).__name__})") from None
    except TypeError:
        raise ProblemFormatError("", "not JSON text") from None
    return parse(obj)


def parse(obj: Any) -> HarnessError:
    """Validate ``obj`` and build its typed error; see ``HarnessError.from_dict``."""
    return _parse(obj, "", 0, _Budget())


def _parse(obj: Any, at: str, depth: int, budget: _Budget) -> HarnessError:
    if not isinstance(obj, dict):
        raise ProblemFormatError(at, "expected an object")
    code = obj.get("code")
    if not isinstance(code, str):
        raise ProblemFormatError(f"{at}/code", "required, a string")
    if not CODE_PATTERN.compiled().fullmatch(code):
        raise ProblemFormatError(f"{at}/code", "expected category.name in lower case")
    type_uri = _text(obj, "type", at)
    if type_uri is not None and type_uri not in TYPE_URIS:
        raise ProblemFormatError(f"{at}/type", "not the agent harness error problem type")
    origin = _text(obj, "origin", at)
    if origin is not None and origin not in ORIGINS:
        raise ProblemFormatError(f"{at}/origin", "expected one of " + ", ".join(sorted(ORIGINS)))
    retry_after = obj.get("retry_after")
    if retry_after is not None and not _non_negative(retry_after):
        raise ProblemFormatError(f"{at}/retry_after", "expected a finite number >= 0")
    status = obj.get("status")
    if status is not None and (_integer(status) is None or not 100 <= status <= 599):
        raise ProblemFormatError(f"{at}/status", "expected an HTTP status code")
    members: dict[str, Any] = {
        "code": code,
        "title": _text(obj, "title", at),
        "instance": _text(obj, "instance", at),
        "origin": origin,
        "retryable": _flag(obj, "retryable", at),
        "model_recoverable": _flag(obj, "model_recoverable", at),
        "model_feedback": _text(obj, "model_feedback", at),
        "retry_after": retry_after,
        "attempts": _count(obj, "attempts", at),
        "max_attempts": _count(obj, "max_attempts", at),
        "limit": _limit(obj.get("limit"), f"{at}/limit"),
        "location": _location(obj.get("location"), f"{at}/location"),
        "upstream": _upstream(obj.get("upstream"), f"{at}/upstream"),
        "causes": _causes(obj.get("causes"), f"{at}/causes", depth, budget),
        "extensions": {k: v for k, v in obj.items() if k not in _KNOWN},
        "untrusted": True,
    }
    quota = _quota(obj.get("quota"))
    if quota is not None:  # a quota out of shape stays in ``extensions`` as received
        members["quota"] = quota
        del members["extensions"]["quota"]
    err = class_for_code(code)(_text(obj, "detail", at), **members)
    # Keep the object as received: no title, type or origin filled in from the registry.
    err._type = type_uri
    # The same cleaning as every other received text member (detail, instance...): redacted,
    # and a lone surrogate (half of a cut emoji) made U+FFFD, so it can be written as UTF-8.
    err._title = None if members["title"] is None else utf8_safe(redact(members["title"]))
    err._origin = origin  # type: ignore[assignment]  # checked against ORIGINS above
    err.status = None if status is None else int(status)
    return err


def _quota(value: Any) -> Quota | None:
    """The ``quota`` member as a ``Quota``, or ``None`` when absent or out of shape: it is no
    member of the draft, so another party may use the name for something else, and the
    object is not refused for it (its value is kept in ``extensions``)."""
    if not isinstance(value, dict):
        return None
    try:
        return Quota.from_dict(value)
    except ValueError:
        return None


def _text(obj: dict[str, Any], name: str, at: str) -> str | None:
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise ProblemFormatError(f"{at}/{name}", "expected a string")
    return value


def _flag(obj: dict[str, Any], name: str, at: str) -> bool | None:
    value = obj.get(name)
    if value is not None and not isinstance(value, bool):
        raise ProblemFormatError(f"{at}/{name}", "expected true or false")
    return value


def _number(value: Any) -> bool:
    """A finite number; an integer too large for a float (``1e400`` written out) is not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _non_negative(value: Any) -> bool:
    return _number(value) and value >= 0


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _count(obj: dict[str, Any], name: str, at: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    number = _integer(value)
    if number is None or number < 0:
        raise ProblemFormatError(f"{at}/{name}", "expected an integer >= 0")
    return number


def _object(value: Any, at: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ProblemFormatError(at, "expected an object")
    return value


def _limit(value: Any, at: str) -> dict[str, Any] | None:
    limit = _object(value, at)
    if limit is None:
        return None
    if not isinstance(limit.get("name"), str):
        raise ProblemFormatError(f"{at}/name", "required, a string")
    if not _number(limit.get("value")):
        raise ProblemFormatError(f"{at}/value", "required, a number")
    if "observed" in limit and not _number(limit["observed"]):
        raise ProblemFormatError(f"{at}/observed", "expected a number")
    if "unit" in limit and not isinstance(limit["unit"], str):
        raise ProblemFormatError(f"{at}/unit", "expected a string")
    return limit


def _location(value: Any, at: str) -> dict[str, Any] | None:
    location = _object(value, at)
    if location is None:
        return None
    for name in ("run_id", "tool_name", "tool_call_id", "pointer"):
        if name in location and not isinstance(location[name], str):
            raise ProblemFormatError(f"{at}/{name}", "expected a string")
    if "turn" in location:
        turn = _integer(location["turn"])
        if turn is None or turn < 1:
            raise ProblemFormatError(f"{at}/turn", "expected an integer >= 1")
        if turn is not location["turn"]:
            location = {**location, "turn": turn}
    pointer = location.get("pointer")
    if pointer is not None and not _is_json_pointer(pointer):
        raise ProblemFormatError(f"{at}/pointer", "expected a JSON Pointer (RFC 6901)")
    return location


def _is_json_pointer(text: str) -> bool:
    if text and not text.startswith("/"):
        return False
    index = text.find("~")
    while index != -1:
        if text[index + 1 : index + 2] not in ("0", "1"):
            return False
        index = text.find("~", index + 1)
    return True


def _upstream(value: Any, at: str) -> dict[str, Any] | None:
    upstream = _object(value, at)
    if upstream is None:
        return None
    for name in ("provider", "code", "stop_reason"):
        if name in upstream and not isinstance(upstream[name], str):
            raise ProblemFormatError(f"{at}/{name}", "expected a string")
    if "status" in upstream and _integer(upstream["status"]) is None:
        raise ProblemFormatError(f"{at}/status", "expected an integer")
    return upstream


class _Budget:
    """What one ``parse`` may still read: causes, and steps down to an innermost entry."""

    __slots__ = ("causes", "steps")

    def __init__(self) -> None:
        self.causes = MAX_TOTAL_CAUSES
        self.steps = MAX_LEAF_STEPS


def _causes(value: Any, at: str, depth: int, budget: _Budget) -> list[HarnessError]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ProblemFormatError(at, "expected an array")
    if not value:
        return []
    if depth + 1 >= MAX_CAUSE_DEPTH or budget.causes <= 0:
        # Too deep, or enough causes read: keep only the innermost entry, without its causes.
        return [_innermost(value, at, depth, budget)]
    keep = min(len(value), MAX_CAUSES, budget.causes)  # the first keep - 1, and the last
    indexes = [*range(keep - 1), len(value) - 1]
    budget.causes -= keep
    return [_parse(value[index], f"{at}/{index}", depth + 1, budget) for index in indexes]


def _innermost(value: list[Any], at: str, depth: int, budget: _Budget) -> HarnessError:
    """The last entry of ``value``, then of its ``causes``, and so on, read without causes.

    The walk stops at ``MAX_LEAF_STEPS`` steps per ``parse`` in all, and where an entry
    comes back (a ``causes`` list that contains itself, as a YAML anchor can make).
    """
    path, leaf = f"{at}/{len(value) - 1}", value[-1]
    seen = {id(value)}
    while isinstance(leaf, dict) and budget.steps > 0:
        inner = leaf.get("causes")
        if not isinstance(inner, list) or not inner or id(inner) in seen:
            break
        seen.add(id(inner))
        budget.steps -= 1
        path, leaf = f"{path}/causes/{len(inner) - 1}", inner[-1]
    if isinstance(leaf, dict) and "causes" in leaf:
        leaf = {k: v for k, v in leaf.items() if k != "causes"}
    return _parse(leaf, path, depth + 1, budget)
