"""The registry of harness error codes: the one table everything else derives from.

Each row is a code of the draft's section 5.2 (title, origin, default ``retryable`` and
``model_recoverable``), the HTTP status section 6.1 recommends for it, the reaction a
program should take when the error can neither be retried nor fed back to the model, and
a short description of what the code means (section 5.3, in this project's words).

The typed exception classes, the ``advice`` word, the HTTP binding and the README's codes
table are all derived from this table. ``status_code`` gives the code an HTTP status means
when nothing more specific is known (its own small table, kept here beside the codes).
"""

from __future__ import annotations

from types import MappingProxyType

from .._base._patterns import CODE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "CATEGORIES",
    "CODES",
    "IANA_TYPE",
    "PRE_REGISTRATION_TYPE",
    "TYPE_URIS",
    "CodeInfo",
    "code_info",
    "status_code",
]

if TYPE_CHECKING:
    from .._base._types import Advice, Origin

IANA_TYPE: Final = "https://iana.org/assignments/http-problem-types#agent-harness-error"
"""The problem type URI the draft asks IANA to register; used for errors built here."""

PRE_REGISTRATION_TYPE: Final = "https://agenterrors.org/problems/harness-error"
"""The interim type URI; consumers must treat it as equal to ``IANA_TYPE``."""

TYPE_URIS: Final = frozenset({IANA_TYPE, PRE_REGISTRATION_TYPE})

CODE_PATTERN: Final = CODE
"""The syntax of a code (draft section 4.1); private categories start with ``x-``."""


class CodeInfo:
    """One row of the registry (read-only)."""

    __slots__ = (
        "code",
        "description",
        "http_status",
        "model_recoverable",
        "origin",
        "reaction",
        "retryable",
        "title",
    )

    code: str
    title: str
    origin: Origin | None
    retryable: bool
    model_recoverable: bool
    http_status: int
    reaction: Advice
    """What to do when the error is neither retryable nor model-recoverable."""
    description: str

    def __init__(  # noqa: PLR0917 - a registry row reads best positionally
        self,
        code: str,
        title: str,
        origin: Origin | None,
        retryable: bool,
        model_recoverable: bool,
        http_status: int,
        reaction: Advice,
        description: str,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "code", code)
        set_(self, "title", title)
        set_(self, "origin", origin)
        set_(self, "retryable", retryable)
        set_(self, "model_recoverable", model_recoverable)
        set_(self, "http_status", http_status)
        set_(self, "reaction", reaction)
        set_(self, "description", description)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("registry rows are read-only")

    def __repr__(self) -> str:
        return (
            f"CodeInfo(code={self.code!r}, title={self.title!r}, origin={self.origin!r}, "
            f"retryable={self.retryable!r}, model_recoverable={self.model_recoverable!r}, "
            f"http_status={self.http_status!r}, reaction={self.reaction!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CodeInfo):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self) -> int:
        return hash((self.code, self.title))

    def __reduce__(self) -> tuple[object, ...]:
        return (CodeInfo, tuple(getattr(self, n) for n in _FIELDS))

    def with_code(self, code: str) -> CodeInfo:
        """The same row for another code (an unknown code that takes its category's row)."""
        return CodeInfo(
            code,
            self.title,
            self.origin,
            self.retryable,
            self.model_recoverable,
            self.http_status,
            self.reaction,
            self.description,
        )


_FIELDS: Final = (
    "code",
    "title",
    "origin",
    "retryable",
    "model_recoverable",
    "http_status",
    "reaction",
    "description",
)


def _row(  # noqa: PLR0917 - a table row reads best positionally
    code: str,
    title: str,
    origin: Origin,
    retryable: bool,
    model_recoverable: bool,
    http_status: int,
    reaction: Advice,
    description: str,
) -> tuple[str, CodeInfo]:
    info = CodeInfo(
        code, title, origin, retryable, model_recoverable, http_status, reaction, description
    )
    return code, info


# fmt: off
_ROWS: Final = dict([
    # code, title, origin, R, M, HTTP status (6.1), reaction, description
    _row("output.malformed", "Malformed Output", "model", False, True, 422, "stop",
         "The model's output could not be parsed in the required syntax, such as invalid JSON."),
    _row("output.schema_violation", "Output Schema Violation", "model", False, True, 422, "stop",
         "The output parsed but does not conform to the required schema; "
         "location.pointer should name the offending place."),
    _row("output.truncated", "Output Truncated", "model", False, False, 422, "adjust",
         "The output stopped early at an output token limit; raise the limit or ask for less."),
    _row("output.empty", "Empty Output", "model", True, True, 422, "stop",
         "The model produced nothing usable."),
    _row("output.unknown_tool", "Unknown Tool Requested", "model", False, True, 422, "stop",
         "The model asked for a tool that was not offered to it."),
    _row("output.invalid_tool_arguments", "Invalid Tool Arguments", "model", False, True, 422,
         "stop",
         "The model called an offered tool with missing, malformed or schema-violating "
         "arguments."),
    _row("output.retries_exhausted", "Output Retries Exhausted", "harness", False, False, 422,
         "stop",
         "The harness re-prompted the model after output errors until its attempts ran out; "
         "causes should list those errors."),
    _row("loop.max_turns_exceeded", "Maximum Turns Exceeded", "harness", False, False, 422,
         "adjust", "The run reached its configured maximum number of turns."),
    _row("loop.budget_exceeded", "Budget Exceeded", "harness", False, False, 422, "adjust",
         "A token, cost or other resource budget of the run ran out; limit should say which."),
    _row("loop.timeout", "Run Timeout", "harness", False, False, 504, "adjust",
         "The run went past its wall-clock time limit."),
    _row("loop.repetition_detected", "Repetition Detected", "harness", False, True, 422, "stop",
         "The run is not progressing, for example the same tool call keeps being repeated."),
    _row("context.window_exceeded", "Context Window Exceeded", "harness", False, False, 422,
         "adjust", "The assembled input is larger than the model's context window and could "
         "not be reduced."),
    _row("context.compaction_failed", "Context Compaction Failed", "harness", True, False, 422,
         "stop", "Reducing the context, for example by summarising it, failed."),
    _row("tool.not_available", "Tool Not Available", "tool", False, True, 422, "stop",
         "The tool exists but cannot be used right now, for example its server is "
         "disconnected."),
    _row("tool.execution_failed", "Tool Execution Failed", "tool", False, True, 422, "stop",
         "The tool ran and reported a failure."),
    _row("tool.timeout", "Tool Timeout", "tool", True, True, 504, "adjust",
         "The tool did not finish within its time limit."),
    _row("tool.permission_denied", "Tool Permission Denied", "harness", False, True, 403,
         "human", "The harness's permission settings did not allow this tool call."),
    _row("tool.sandbox_violation", "Sandbox Violation", "harness", False, False, 422, "stop",
         "The tool tried something its sandbox prohibits."),
    _row("policy.guardrail_triggered", "Guardrail Triggered", "harness", False, False, 403,
         "human", "An input or output guardrail of the harness stopped the operation."),
    _row("policy.model_refusal", "Model Refusal", "model", False, False, 403, "human",
         "The model declined the request."),
    _row("policy.content_filtered", "Content Filtered", "upstream", False, False, 403, "human",
         "A content filter of the upstream provider blocked the input or the output."),
    _row("policy.approval_denied", "Approval Denied", "user", False, True, 403, "stop",
         "A person refused an approval the harness asked for."),
    _row("upstream.rate_limited", "Upstream Rate Limited", "upstream", True, False, 429,
         "human", "The upstream service refused the request because of rate limiting; "
         "retry_after should be present when known. Not retryable when a quota or billing "
         "limit is exhausted."),
    _row("upstream.overloaded", "Upstream Overloaded", "upstream", True, False, 503, "stop",
         "The upstream service says it is overloaded for the moment."),
    _row("upstream.unavailable", "Upstream Unavailable", "upstream", True, False, 503, "stop",
         "The upstream service could not be reached, timed out or failed with a server error."),
    _row("upstream.authentication_failed", "Upstream Authentication Failed", "upstream", False,
         False, 502, "credentials", "The upstream service rejected the harness's credentials."),
    _row("upstream.invalid_request", "Upstream Invalid Request", "upstream", False, False, 502,
         "fix", "The upstream service rejected the request as invalid, and no more specific "
         "code applies."),
    _row("upstream.invalid_response", "Upstream Invalid Response", "upstream", True, False, 502,
         "stop", "The upstream service answered in a way its protocol does not allow."),
    _row("upstream.agent_failed", "Remote Agent Failed", "upstream", False, True, 502, "stop",
         "A remote agent the work was delegated to reports that the task failed; causes "
         "should hold its harness error."),
    _row("harness.cancelled", "Run Cancelled", "harness", False, False, 422, "stop",
         "The caller cancelled the run."),
    _row("harness.internal_error", "Harness Internal Error", "harness", False, False, 500,
         "stop", "The harness failed for a reason no other code covers."),
])
# fmt: on

CODES: Final = MappingProxyType(_ROWS)
"""Read-only mapping of every registered code to its ``CodeInfo`` row."""

# Defaults for a code the registry does not know (section 4.1: an unknown code in a known
# category is a generic error of that category). Private ``x-`` categories get the last row.
# fmt: off
_CATEGORY_ROWS: Final = {
    "output": CodeInfo("output", "Output Error", "model", False, False, 422, "stop",
                       "Model output could not be accepted by the harness."),
    "loop": CodeInfo("loop", "Loop Error", "harness", False, False, 422, "adjust",
                     "A limit on the agent loop was reached, or the loop is not progressing."),
    "context": CodeInfo("context", "Context Error", "harness", False, False, 422, "adjust",
                        "Assembling or managing the context failed."),
    "tool": CodeInfo("tool", "Tool Error", "tool", False, False, 422, "stop",
                     "Resolving or running a tool failed."),
    "policy": CodeInfo("policy", "Policy Error", "harness", False, False, 403, "human",
                       "A policy, guardrail, refusal or human decision stopped the operation."),
    "upstream": CodeInfo("upstream", "Upstream Error", "upstream", False, False, 502, "stop",
                         "A remote dependency, usually the model API, failed."),
    "harness": CodeInfo("harness", "Harness Error", "harness", False, False, 422, "stop",
                        "The harness failed for another reason."),
}
_UNKNOWN_ROW: Final = CodeInfo("", "Agent Harness Error", None, False, False, 422, "stop",
                               "A code outside the registered categories.")
# fmt: on

CATEGORIES: Final = MappingProxyType(_CATEGORY_ROWS)
"""Read-only mapping of each registered category to the defaults of its unknown codes."""


def code_info(code: str) -> CodeInfo:
    """Return the registry row for ``code``, or the defaults of its category.

    Never raises: a code outside the registered categories gets neutral defaults.
    """
    info = _ROWS.get(code)
    if info is not None:
        return info
    category = code.partition(".")[0]
    row = _CATEGORY_ROWS.get(category, _UNKNOWN_ROW)
    return row.with_code(code)


_STATUS_CODES: Final = {
    400: "upstream.invalid_request",
    401: "upstream.authentication_failed",
    402: "upstream.rate_limited",
    403: "upstream.authentication_failed",
    404: "upstream.invalid_request",
    405: "upstream.invalid_request",
    408: "upstream.unavailable",
    409: "upstream.invalid_request",
    413: "context.window_exceeded",
    422: "upstream.invalid_request",
    429: "upstream.rate_limited",
    499: "harness.cancelled",
    500: "upstream.unavailable",
    501: "upstream.invalid_request",
    502: "upstream.unavailable",
    503: "upstream.unavailable",
    504: "upstream.unavailable",
    529: "upstream.overloaded",
}
"""What an HTTP status means when nothing more specific is known (see ``status_code``)."""

_RETRYABLE_STATUS: Final = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def status_code(status: int | None) -> tuple[str, bool]:
    """The harness code and ``retryable`` an HTTP error status means on its own.

    402 (payment required) is a quota that retrying cannot fix; 408, 409, 429 and 5xx are
    retryable, as the vendor SDKs treat them; 413 means the input is too large. An error
    reported with no status or inside a 2xx response (a stream's error event) is a server
    error, ``upstream.unavailable``; any other status outside 400-599 is
    ``upstream.invalid_response``.
    """
    if status is None or 200 <= status <= 299:
        return "upstream.unavailable", True
    if not 400 <= status <= 599:
        return "upstream.invalid_response", True
    code = _STATUS_CODES.get(status)
    if code is None:
        code = "upstream.unavailable" if status >= 500 else "upstream.invalid_request"
    return code, status in _RETRYABLE_STATUS or (status >= 500 and status != 501)
