"""instructor's exceptions as harness errors (registered in ``BUILTIN``; imports nothing).

* ``InstructorRetryException`` with failed attempts: ``output.retries_exhausted`` with
  ``attempts``/``max_attempts`` and one cause per failed attempt, most recent first (each a
  ``ValidationError`` read with its pointers, or whatever the attempt raised).
* ``InstructorRetryException`` without failed attempts (the API call itself failed): read
  through the vendor exception it wraps (its ``__cause__``), e.g. ``upstream.rate_limited``.
* A refusal instead of the answer ("Unable to generate a response due to ..."):
  ``policy.model_refusal``.
* ``IncompleteOutputException``: ``output.truncated``; ``TokenBudgetExceeded`` (a
  ``token_budget`` spent): ``loop.budget_exceeded`` with ``limit`` {tokens, budget, used};
  ``TokenUsageUnavailableError``: ``harness.internal_error``; instructor's ``ValidationError``:
  ``output.schema_violation``; ``ResponseParsingError``: ``output.malformed``;
  ``ConfigurationError``/``ModeError``: ``harness.internal_error``.
"""

from __future__ import annotations

from typing import Any

from .. import HarnessError
from .._base._patterns import INSTRUCTOR_REFUSED, INSTRUCTOR_USED, MAX_MESSAGE
from .._base._safe_read import qualname
from ._common import known, names, output_error, through

__all__: list[str] = []


def _facts(exc: BaseException) -> dict[str, Any]:
    cls = type(exc)
    return {"framework": "instructor", "exception": qualname(cls)}


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().split("\n", 1)[0] or type(exc).__name__


def _read(exc: BaseException) -> HarnessError | None:
    """The harness error for an instructor exception, or ``None``."""
    found = names(exc)
    if "TokenUsageUnavailableError" in found:
        return HarnessError.from_code(
            "harness.internal_error", _first_line(exc), upstream=_facts(exc)
        )
    if "TokenBudgetError" in found or "TokenBudgetExceeded" in found:
        return _budget(exc)
    if "InstructorRetryException" in found:
        return _retries(exc)
    if "IncompleteOutputException" in found:
        return HarnessError.from_code("output.truncated", _first_line(exc), upstream=_facts(exc))
    if "ResponseParsingError" in found:
        return HarnessError.from_code(
            "output.malformed", _first_line(exc), model_feedback=str(exc), upstream=_facts(exc)
        )
    if "ValidationError" in found and "InstructorError" in found:
        return HarnessError.from_code(
            "output.schema_violation",
            _first_line(exc),
            model_feedback=str(exc),
            upstream=_facts(exc),
        )
    if "ConfigurationError" in found or "ModeError" in found:
        return HarnessError.from_code(
            "harness.internal_error", _first_line(exc), upstream=_facts(exc)
        )
    if "InstructorError" in found:
        return known(exc.__cause__)
    return None


def _budget(exc: BaseException) -> HarnessError:
    """``token_budget`` spent: ``loop.budget_exceeded`` with the budget and the tokens used."""
    limit: dict[str, Any] = {"name": "tokens"}
    budget = getattr(exc, "budget", None)
    if isinstance(budget, (int, float)):
        limit["value"] = float(budget)
    used = INSTRUCTOR_USED.compiled().search(str(exc)[:MAX_MESSAGE])
    if used is not None:
        limit["observed"] = float(used.group(1))
    count = getattr(exc, "n_attempts", None)
    causes = _attempts(exc)
    return HarnessError.from_code(
        "loop.budget_exceeded",
        _first_line(exc),
        limit=limit if "value" in limit else None,
        attempts=count if isinstance(count, int) else None,
        causes=causes,
        upstream=_facts(exc),
    )


def _attempts(exc: BaseException) -> list[HarnessError]:
    """One error per failed attempt, most recent first."""
    causes = []
    for attempt in reversed(getattr(exc, "failed_attempts", None) or []):
        failure = getattr(attempt, "exception", None)
        if not isinstance(failure, BaseException):
            continue
        err = output_error(failure) or through(failure)
        number = getattr(attempt, "attempt_number", None)
        if isinstance(number, int):
            err.attempts = number
        causes.append(err)
    return causes


def _retries(exc: BaseException) -> HarnessError | None:
    attempts = getattr(exc, "failed_attempts", None) or []
    count = getattr(exc, "n_attempts", None)
    if not attempts:
        refused = INSTRUCTOR_REFUSED.compiled().match(str(exc.__cause__ or "")[:MAX_MESSAGE])
        if refused is not None:
            return HarnessError.from_code(
                "policy.model_refusal", refused.group(1), upstream=_facts(exc)
            )
        inner = known(exc.__cause__)
        if inner is not None and isinstance(count, int):
            inner.attempts = count
        return inner
    causes = _attempts(exc)
    total = count if isinstance(count, int) else len(attempts)
    last = causes[0] if causes else None
    return HarnessError.from_code(
        "output.retries_exhausted",
        f"instructor gave up after {total} attempts"
        + (f"; the last: {last.problem.code}: {last.detail}" if last is not None else ""),
        attempts=total,
        max_attempts=total,
        causes=causes,
        upstream=_facts(exc),
    )
