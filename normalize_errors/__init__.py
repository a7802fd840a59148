"""normalize-errors: every way a language-model call can fail, as one typed error.

The error is the *agent harness error* of draft-ouchi-agent-harness-errors: a Problem
Details (RFC 9457) object with a registered ``code`` such as ``upstream.rate_limited``,
raised as a typed exception (``UpstreamRateLimitedError``) and carried over HTTP, JSON-RPC
and the other bindings.

Importing this package imports no third-party module.
"""

from __future__ import annotations

from types import FunctionType as _FunctionType

from ._base._redact import redact
from ._facade import check, diagnose, from_response, normalize
from ._model._code_classes import (
    ApprovalDeniedError,
    BudgetExceededError,
    ContentFilteredError,
    ContextCompactionFailedError,
    ContextError,
    ContextWindowExceededError,
    EmptyOutputError,
    GuardrailTriggeredError,
    HarnessFaultError,
    HarnessInternalError,
    InvalidToolArgumentsError,
    LoopError,
    MalformedOutputError,
    MaximumTurnsExceededError,
    ModelRefusalError,
    OutputError,
    OutputRetriesExhaustedError,
    OutputSchemaViolationError,
    OutputTruncatedError,
    PolicyError,
    RemoteAgentFailedError,
    RepetitionDetectedError,
    RunCancelledError,
    RunTimeoutError,
    SandboxViolationError,
    ToolError,
    ToolExecutionFailedError,
    ToolNotAvailableError,
    ToolPermissionDeniedError,
    ToolTimeoutError,
    UnknownToolRequestedError,
    UpstreamAuthenticationFailedError,
    UpstreamError,
    UpstreamInvalidRequestError,
    UpstreamInvalidResponseError,
    UpstreamOverloadedError,
    UpstreamRateLimitedError,
    UpstreamUnavailableError,
    class_for_code,
)
from ._model._exceptions import HarnessError, ProblemFormatError
from ._model._pickling import CauseStandIn
from ._model._quota import Quota
from ._model._registry import CATEGORIES, CODES, IANA_TYPE, PRE_REGISTRATION_TYPE, CodeInfo
from ._reading._readers import (
    add_rules,
    register_reader,
    register_response_reader,
    unregister_reader,
    unregister_response_reader,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._base._types import Advice, Limit, Location, Origin, StreamSummary
    from ._reading._rules import Rule, rule
    from ._wrapping._normalized import normalized
    from ._wrapping._wrap import wrap

__all__ = [
    "CATEGORIES",
    "CODES",
    "IANA_TYPE",
    "PRE_REGISTRATION_TYPE",
    "Advice",
    "ApprovalDeniedError",
    "BudgetExceededError",
    "CauseStandIn",
    "CodeInfo",
    "ContentFilteredError",
    "ContextCompactionFailedError",
    "ContextError",
    "ContextWindowExceededError",
    "EmptyOutputError",
    "GuardrailTriggeredError",
    "HarnessError",
    "HarnessFaultError",
    "HarnessInternalError",
    "InvalidToolArgumentsError",
    "Limit",
    "Location",
    "LoopError",
    "MalformedOutputError",
    "MaximumTurnsExceededError",
    "ModelRefusalError",
    "Origin",
    "OutputError",
    "OutputRetriesExhaustedError",
    "OutputSchemaViolationError",
    "OutputTruncatedError",
    "PolicyError",
    "ProblemFormatError",
    "Quota",
    "RemoteAgentFailedError",
    "RepetitionDetectedError",
    "Rule",
    "RunCancelledError",
    "RunTimeoutError",
    "SandboxViolationError",
    "StreamSummary",
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
    "add_rules",
    "check",
    "class_for_code",
    "diagnose",
    "from_response",
    "normalize",
    "normalized",
    "redact",
    "register_reader",
    "register_response_reader",
    "rule",
    "unregister_reader",
    "unregister_response_reader",
    "wrap",
]


def _exported(value: object) -> object:
    """``value`` with ``__module__`` set to this package if it is a class or function defined
    in one of its modules, so reprs, tracebacks and pickles name ``normalize_errors.X``."""
    if isinstance(value, (type, _FunctionType)) and value.__module__.startswith(__name__ + "."):
        value.__module__ = __name__
    return value


for _name in __all__:
    if _name in globals():
        _exported(globals()[_name])
del _name


def __getattr__(name: str) -> Any:
    # Loaded on first use: wrap() needs inspect and the adapters' registry, rule() the rule
    # tables' machinery (dataclasses, json), the member types typing: a plain import
    # pays for none of them.
    if name == "wrap":
        from ._wrapping._wrap import wrap

        return _exported(wrap)
    if name == "normalized":
        from ._wrapping._normalized import normalized

        return _exported(normalized)
    if name in ("rule", "Rule"):  # they need re: loaded on first use
        from ._reading import _rules

        return _exported(getattr(_rules, name))
    if name in ("Advice", "Origin", "Limit", "Location", "StreamSummary"):  # typing: the same
        from ._base import _types

        return _exported(getattr(_types, name))
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("normalize-errors")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            return "0+unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
