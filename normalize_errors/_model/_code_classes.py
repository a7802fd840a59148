"""Typed harness errors: a class per category and per registered code, and ``class_for_code``.

The tree (a test checks it against the classes)::

    HarnessError
    ├── OutputError
    │   ├── MalformedOutputError                output.malformed
    │   ├── OutputSchemaViolationError          output.schema_violation
    │   ├── OutputTruncatedError                output.truncated
    │   ├── EmptyOutputError                    output.empty
    │   ├── UnknownToolRequestedError           output.unknown_tool
    │   ├── InvalidToolArgumentsError           output.invalid_tool_arguments
    │   └── OutputRetriesExhaustedError         output.retries_exhausted
    ├── LoopError
    │   ├── MaximumTurnsExceededError           loop.max_turns_exceeded
    │   ├── BudgetExceededError                 loop.budget_exceeded
    │   ├── RunTimeoutError                     loop.timeout
    │   └── RepetitionDetectedError             loop.repetition_detected
    ├── ContextError
    │   ├── ContextWindowExceededError          context.window_exceeded
    │   └── ContextCompactionFailedError        context.compaction_failed
    ├── ToolError
    │   ├── ToolNotAvailableError               tool.not_available
    │   ├── ToolExecutionFailedError            tool.execution_failed
    │   ├── ToolTimeoutError                    tool.timeout
    │   ├── ToolPermissionDeniedError           tool.permission_denied
    │   └── SandboxViolationError               tool.sandbox_violation
    ├── PolicyError
    │   ├── GuardrailTriggeredError             policy.guardrail_triggered
    │   ├── ModelRefusalError                   policy.model_refusal
    │   ├── ContentFilteredError                policy.content_filtered
    │   └── ApprovalDeniedError                 policy.approval_denied
    ├── UpstreamError
    │   ├── UpstreamRateLimitedError            upstream.rate_limited
    │   ├── UpstreamOverloadedError             upstream.overloaded
    │   ├── UpstreamUnavailableError            upstream.unavailable
    │   ├── UpstreamAuthenticationFailedError   upstream.authentication_failed
    │   ├── UpstreamInvalidRequestError         upstream.invalid_request
    │   ├── UpstreamInvalidResponseError        upstream.invalid_response
    │   └── RemoteAgentFailedError              upstream.agent_failed
    └── HarnessFaultError
        ├── RunCancelledError                   harness.cancelled
        └── HarnessInternalError                harness.internal_error

Catch a code (``except UpstreamRateLimitedError``), a category (``except UpstreamError``) or
everything (``except HarnessError``). An unknown code of a known category is an instance of
the category class; a private ``x-`` code is a plain ``HarnessError``. The base class, with
every member, is in ``_exceptions``.

``ProblemFormatError`` (a ``ValueError``) is raised by ``HarnessError.from_dict`` and
``from_json`` for an object that is not a valid harness error.
"""

from __future__ import annotations

from ._exceptions import HarnessError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "ApprovalDeniedError",
    "BudgetExceededError",
    "ContentFilteredError",
    "ContextCompactionFailedError",
    "ContextError",
    "ContextWindowExceededError",
    "EmptyOutputError",
    "GuardrailTriggeredError",
    "HarnessFaultError",
    "HarnessInternalError",
    "InvalidToolArgumentsError",
    "LoopError",
    "MalformedOutputError",
    "MaximumTurnsExceededError",
    "ModelRefusalError",
    "OutputError",
    "OutputRetriesExhaustedError",
    "OutputSchemaViolationError",
    "OutputTruncatedError",
    "PolicyError",
    "RemoteAgentFailedError",
    "RepetitionDetectedError",
    "RunCancelledError",
    "RunTimeoutError",
    "SandboxViolationError",
    "ToolError",
    "ToolExecutionFailedError",
    "ToolNotAvailableError",
    "ToolPermissionDeniedError",
    "ToolTimeoutError",
    "UnknownToolRequestedError",
    "UpstreamAuthenticationFailedError",
    "UpstreamError",
    "UpstreamInvalidRequestError",
    "UpstreamInvalidResponseError",
    "UpstreamOverloadedError",
    "UpstreamRateLimitedError",
    "UpstreamUnavailableError",
    "class_for_code",
]


# -- categories -------------------------------------------------------------------------------


class OutputError(HarnessError):
    """Model output could not be accepted by the harness (``output.*``)."""

    _category = "output"


class LoopError(HarnessError):
    """A limit on the agent loop was reached, or the loop is not progressing (``loop.*``)."""

    _category = "loop"


class ContextError(HarnessError):
    """Assembling or managing the context failed (``context.*``)."""

    _category = "context"


class ToolError(HarnessError):
    """Resolving or running a tool failed (``tool.*``)."""

    _category = "tool"


class PolicyError(HarnessError):
    """A policy, guardrail, refusal or human decision stopped the operation (``policy.*``)."""

    _category = "policy"


class UpstreamError(HarnessError):
    """A remote dependency, usually the model API, failed (``upstream.*``)."""

    _category = "upstream"


class HarnessFaultError(HarnessError):
    """The harness itself failed or was cancelled (``harness.*``)."""

    _category = "harness"


# -- output.* ---------------------------------------------------------------------------------


class MalformedOutputError(OutputError):
    """The output could not be parsed, such as invalid JSON (``output.malformed``)."""

    code = "output.malformed"


class OutputSchemaViolationError(OutputError):
    """The output parsed but breaks the schema (``output.schema_violation``)."""

    code = "output.schema_violation"


class OutputTruncatedError(OutputError):
    """The output stopped at an output token limit (``output.truncated``)."""

    code = "output.truncated"


class EmptyOutputError(OutputError):
    """The model produced nothing usable (``output.empty``)."""

    code = "output.empty"


class UnknownToolRequestedError(OutputError):
    """The model asked for a tool it was not offered (``output.unknown_tool``)."""

    code = "output.unknown_tool"


class InvalidToolArgumentsError(OutputError):
    """The model called a tool with bad arguments (``output.invalid_tool_arguments``)."""

    code = "output.invalid_tool_arguments"


class OutputRetriesExhaustedError(OutputError):
    """Re-prompting after output errors ran out of attempts (``output.retries_exhausted``)."""

    code = "output.retries_exhausted"


# -- loop.* -----------------------------------------------------------------------------------


class MaximumTurnsExceededError(LoopError):
    """The run reached its maximum number of turns (``loop.max_turns_exceeded``)."""

    code = "loop.max_turns_exceeded"


class BudgetExceededError(LoopError):
    """A token, cost or other budget of the run ran out (``loop.budget_exceeded``)."""

    code = "loop.budget_exceeded"


class RunTimeoutError(LoopError):
    """The run went past its wall-clock limit (``loop.timeout``)."""

    code = "loop.timeout"


class RepetitionDetectedError(LoopError):
    """The run repeats itself without progress (``loop.repetition_detected``)."""

    code = "loop.repetition_detected"


# -- context.* --------------------------------------------------------------------------------


class ContextWindowExceededError(ContextError):
    """The input is larger than the model's context window (``context.window_exceeded``)."""

    code = "context.window_exceeded"


class ContextCompactionFailedError(ContextError):
    """Reducing the context failed (``context.compaction_failed``)."""

    code = "context.compaction_failed"


# -- tool.* -----------------------------------------------------------------------------------


class ToolNotAvailableError(ToolError):
    """The tool exists but cannot be used right now (``tool.not_available``)."""

    code = "tool.not_available"


class ToolExecutionFailedError(ToolError):
    """The tool ran and reported a failure (``tool.execution_failed``)."""

    code = "tool.execution_failed"


class ToolTimeoutError(ToolError):
    """The tool did not finish in time (``tool.timeout``)."""

    code = "tool.timeout"


class ToolPermissionDeniedError(ToolError):
    """The harness's permissions did not allow the call (``tool.permission_denied``)."""

    code = "tool.permission_denied"


class SandboxViolationError(ToolError):
    """The tool tried something its sandbox prohibits (``tool.sandbox_violation``)."""

    code = "tool.sandbox_violation"


# -- policy.* ---------------------------------------------------------------------------------


class GuardrailTriggeredError(PolicyError):
    """A guardrail of the harness stopped the operation (``policy.guardrail_triggered``)."""

    code = "policy.guardrail_triggered"


class ModelRefusalError(PolicyError):
    """The model declined the request (``policy.model_refusal``)."""

    code = "policy.model_refusal"


class ContentFilteredError(PolicyError):
    """The provider's content filter blocked input or output (``policy.content_filtered``)."""

    code = "policy.content_filtered"


class ApprovalDeniedError(PolicyError):
    """A person refused an approval (``policy.approval_denied``)."""

    code = "policy.approval_denied"


# -- upstream.* -------------------------------------------------------------------------------


class UpstreamRateLimitedError(UpstreamError):
    """The upstream refused the call for rate or quota reasons (``upstream.rate_limited``)."""

    code = "upstream.rate_limited"


class UpstreamOverloadedError(UpstreamError):
    """The upstream says it is overloaded for the moment (``upstream.overloaded``)."""

    code = "upstream.overloaded"


class UpstreamUnavailableError(UpstreamError):
    """The upstream was unreachable, timed out or failed (``upstream.unavailable``)."""

    code = "upstream.unavailable"


class UpstreamAuthenticationFailedError(UpstreamError):
    """The upstream refused the credentials (``upstream.authentication_failed``)."""

    code = "upstream.authentication_failed"


class UpstreamInvalidRequestError(UpstreamError):
    """The upstream rejected the request as invalid (``upstream.invalid_request``)."""

    code = "upstream.invalid_request"


class UpstreamInvalidResponseError(UpstreamError):
    """The upstream answered outside its protocol (``upstream.invalid_response``)."""

    code = "upstream.invalid_response"


class RemoteAgentFailedError(UpstreamError):
    """A remote agent's delegated task failed (``upstream.agent_failed``)."""

    code = "upstream.agent_failed"


# -- harness.* --------------------------------------------------------------------------------


class RunCancelledError(HarnessFaultError):
    """The caller cancelled the run (``harness.cancelled``)."""

    code = "harness.cancelled"


class HarnessInternalError(HarnessFaultError):
    """The harness failed for a reason no other code covers (``harness.internal_error``)."""

    code = "harness.internal_error"


# -- lookup -----------------------------------------------------------------------------------

_CATEGORY_CLASSES: Final[dict[str, type[HarnessError]]] = {
    str(cls._category): cls
    for cls in (
        OutputError,
        LoopError,
        ContextError,
        ToolError,
        PolicyError,
        UpstreamError,
        HarnessFaultError,
    )
}
_CODE_CLASSES: Final[dict[str, type[HarnessError]]] = {
    cls.code: cls for base in _CATEGORY_CLASSES.values() for cls in base.__subclasses__()
}


def class_for_code(code: str) -> type[HarnessError]:
    """The class of ``code``: its own, else its category's, else ``HarnessError``."""
    cls = _CODE_CLASSES.get(code)
    if cls is not None:
        return cls
    return _CATEGORY_CLASSES.get(code.partition(".")[0], HarnessError)
