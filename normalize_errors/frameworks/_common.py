"""What the framework readers share: reading through a cause, and model-output errors.

Uses only the public API of the core; imports no framework.
"""

from __future__ import annotations

from typing import Any, Final

from .. import HarnessError, normalize
from .._base._safe_read import frames, module_of, qualname

__all__ = [
    "MODEL_OUTPUT_PARSERS",
    "from_model_output",
    "json_error",
    "names",
    "output_error",
    "parsed_by_framework",
    "pointer",
    "through",
    "validation_error",
]

MODEL_OUTPUT_PARSERS: Final = (
    "pydantic_ai",
    "agents",
    "langchain_core",
    "langchain_openai",
    "langchain",
    "instructor",
    "openai.lib",
    "anthropic.lib",
)
"""Module prefixes whose frames show that model output was being parsed."""


def names(exc: BaseException) -> set[str]:
    """The names of every class in ``exc``'s MRO (frameworks' private classes included)."""
    return {klass.__name__ for klass in type(exc).__mro__}


def through(cause: BaseException) -> HarnessError:
    """The answer for ``cause``, as a copy whose ``__cause__`` the caller's ``normalize`` sets."""
    return normalize(cause)._clone()


def known(cause: BaseException | None) -> HarnessError | None:
    """``through(cause)`` when the library knows ``cause`` (not ``harness.internal_error``)."""
    if cause is None:
        return None
    err = through(cause)
    return None if err.problem.code == "harness.internal_error" else err


def pointer(loc: Any) -> str:
    """A JSON Pointer (RFC 6901) from a pydantic ``loc`` tuple."""
    parts = loc if isinstance(loc, (list, tuple)) else (loc,)
    return "".join(
        "/" + str(part).replace("~", "~0").replace("/", "~1")
        for part in parts
        if part != "__root__"
    )


_FEEDBACK_LIMIT: Final = 10


def validation_error(
    exc: BaseException, *, code: str = "output.schema_violation", tool_name: str | None = None
) -> HarnessError:
    """A pydantic ``ValidationError`` of model output: one cause per error, with pointers.

    An error list made only of ``json_invalid`` entries is ``output.malformed``. The
    ``model_feedback`` lists the errors (field pointer and message), for the model to fix.
    """
    try:
        errors = list(exc.errors(include_url=False))  # type: ignore[attr-defined]
    except Exception:
        errors = []
    if (
        code == "output.schema_violation"
        and errors
        and all(e.get("type") == "json_invalid" for e in errors)
    ):
        code = "output.malformed"
    where: dict[str, Any] = {"tool_name": tool_name} if tool_name else {}
    causes = []
    lines = []
    for item in errors:
        path = pointer(item.get("loc", ()))
        message = str(item.get("msg", "invalid"))
        lines.append(f"{path or '/'}: {message}")
        causes.append(
            HarnessError.from_code(
                code,
                f"{path or '/'}: {message}",
                location={**where, "pointer": path},
                upstream={"type": item.get("type"), "loc": [str(p) for p in item.get("loc", ())]},
            )
        )
    title = getattr(exc, "title", None) or "output"
    feedback = "The output did not validate:\n" + "\n".join(lines[:_FEEDBACK_LIMIT])
    location: dict[str, Any] = dict(where)
    if len(causes) == 1:
        location["pointer"] = causes[0].location["pointer"] if causes[0].location else ""
    return HarnessError.from_code(
        code,
        f"{len(errors)} validation error(s) for {title}",
        model_feedback=feedback if lines else None,
        location=location or None,
        causes=causes if len(causes) > 1 else (),
        upstream={"exception": qualname(exc), "errors": len(errors)},
    )


def json_error(exc: BaseException, tool_name: str | None = None) -> HarnessError:
    """A ``json.JSONDecodeError`` of model output: ``output.malformed``."""
    message = str(getattr(exc, "msg", "")) or str(exc)
    position = getattr(exc, "pos", None)
    return HarnessError.from_code(
        "output.malformed",
        f"The output is not valid JSON: {message}",
        model_feedback=f"The output is not valid JSON ({message}"
        + (f" at character {position}" if isinstance(position, int) else "")
        + "). Answer with valid JSON only.",
        location={"tool_name": tool_name} if tool_name else None,
        upstream={"exception": qualname(exc)},
    )


def output_error(exc: BaseException | None, tool_name: str | None = None) -> HarnessError | None:
    """The output error a parsing failure means: ``ValidationError`` or ``JSONDecodeError``."""
    if exc is None:
        return None
    found = names(exc)
    if "ValidationError" in found and hasattr(exc, "errors"):
        return validation_error(exc, tool_name=tool_name)
    if "JSONDecodeError" in found:
        return json_error(exc, tool_name)
    return None


_PARSING: Final = ("json", "pydantic", "pydantic_core", "typing", "functools", "re")


def parsed_by_framework(exc: BaseException) -> bool:
    """True when the code that raised ``exc`` is a framework or SDK parsing model output.

    The innermost frame outside the parsers themselves (``json``, ``pydantic``) decides: a
    ``JSONDecodeError`` from ``httpx``'s ``Response.json()`` under a framework call is not
    the model's, one from LangChain's JSON output helper is.
    """
    caller = ""
    for frame in frames(exc):
        module = module_of(frame)
        if module.partition(".")[0] not in _PARSING:
            caller = module
    return caller.startswith(MODEL_OUTPUT_PARSERS)


def from_model_output(exc: BaseException) -> HarnessError | None:
    """The reader for ``pydantic_core`` and ``json`` errors (registered in ``BUILTIN``).

    A ``ValidationError`` or ``JSONDecodeError`` is the model's only when its traceback shows
    a framework or SDK parsing model output; from the user's own code it is left to the
    built-in path (``harness.internal_error``).
    """
    if not parsed_by_framework(exc):
        return None
    if _in_frames(exc, "langchain_core.tools") and "ValidationError" in names(exc):
        tool = getattr(exc, "title", None)
        return validation_error(
            exc, code="output.invalid_tool_arguments", tool_name=str(tool) if tool else None
        )
    return output_error(exc)


def _in_frames(exc: BaseException, prefix: str) -> bool:
    return any(module_of(frame).startswith(prefix) for frame in frames(exc))
