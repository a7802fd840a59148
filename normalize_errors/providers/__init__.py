"""Provider adapters: one module per vendor, all with the same small interface.

Each module (``openai``, ``anthropic``, ``google``, ``bedrock``, ``cohere``, ``http``) offers:

* ``NAME``: the provider name used in ``upstream.provider`` and the ``provider=`` argument;
* ``ROOTS``: the top-level modules whose exceptions it reads;
* ``normalize(exc)``: a vendor exception -> ``HarnessError`` (or ``None`` if not its own);
* ``from_response(status, headers, body)``: a raw HTTP error response -> ``HarnessError``;
* ``looks_like(body)``: whether a parsed error body has this vendor's shape;
* ``diagnose(result, tools)``: a successful result -> the ``HarnessError`` its stop reason
  means, or ``None``;
* ``diagnose_stream(chunks, tools)``: the same for the chunks of a finished stream;
* ``TABLE``: the mapping, as rows the docs print.

Adapters are imported on first use, never by ``import normalize_errors``, and they never
import a vendor SDK: they read exceptions by module name and attributes (duck typing), so
one adapter serves several major versions of its SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, Protocol

from .._values import field, innermost, module_of
from ..exceptions import HarnessError

if TYPE_CHECKING:
    from .._rules import Rule

__all__ = [
    "NAMES",
    "Adapter",
    "adapter",
    "adapter_for_exception",
    "available",
    "detect",
    "provider_of",
    "provider_of_module",
    "provider_of_object",
    "provider_of_result",
    "provider_of_traceback",
    "provider_of_type",
]

NAMES: Final = ("anthropic", "google", "openai", "bedrock", "cohere", "http")
"""The provider names, in the order ``from_response`` tries them on a body's shape.

Anthropic's shape (``{"type": "error", "error": {...}}``) and Google's (a canonical status
such as ``RESOURCE_EXHAUSTED``, or ``type.googleapis.com`` details) are the most specific,
so they are tried before OpenAI's, which accepts any ``{"error": {"message": ...}}``.
Bedrock's and Cohere's bodies (``{"message": ...}``) have no shape of their own: they are
recognised only by an AWS ``__type`` member, or read when named with ``provider=``."""

_ROOTS: Final = {
    "openai": "openai",
    # the native SDKs of OpenAI-compatible vendors, read by the openai adapter (its ROOTS)
    "groq": "openai",
    "together": "openai",
    "cerebras": "openai",
    "fireworks": "openai",
    "mistralai": "openai",
    "anthropic": "anthropic",
    "google": "google",
    "botocore": "bedrock",
    "cohere": "cohere",
    "httpx": "http",
    "httpx2": "http",
    "httpcore": "http",
    "httpcore2": "http",
    "aiohttp": "http",
    "requests": "http",
    "urllib3": "http",
}
"""Top-level module of an exception class -> the adapter that reads it."""


class Adapter(Protocol):
    """The interface every provider module offers."""

    NAME: str
    TABLE: Sequence[Rule]

    def normalize(self, exc: BaseException) -> HarnessError | None: ...

    def from_response(self, status: Any, headers: Any, body: Any) -> HarnessError: ...

    def looks_like(self, body: Any) -> bool: ...

    def diagnose(self, result: Any, tools: Any) -> HarnessError | None: ...

    def diagnose_stream(self, chunks: Any, tools: Any) -> HarnessError | None: ...


_LOADED: dict[str, ModuleType] = {}


def adapter(name: str) -> Adapter:
    """The adapter module of provider ``name`` (``"openai"``, ``"anthropic"``, ...).

    Raises:
        ValueError: ``name`` is not a provider name.
    """
    module = _LOADED.get(name)
    if module is None:
        if name not in NAMES:
            raise ValueError(f"unknown provider {name!r}; expected one of {', '.join(NAMES)}")
        module = importlib.import_module(f"{__name__}.{name}")
        _LOADED[name] = module
    return module


def available(name: str) -> Adapter | None:
    """The adapter of ``name``, or ``None`` if it cannot be imported in this build."""
    try:
        return adapter(name)
    except ImportError:
        return None


def detect(body: Any, headers: dict[str, str]) -> str:
    """The provider whose error shape ``body`` has (see ``NAMES`` for the order), else http.

    Only adapters that import are asked, so a build without one of them still reads every
    other shape. ``headers`` (lower-case names) decide for Anthropic when the body has no
    known shape: its ``anthropic-*`` headers, or a ``request-id`` starting with ``req_``.
    """
    if isinstance(body, (dict, list)):  # a vendor's error shape is JSON
        for name in NAMES[:-1]:
            module = available(name)
            if module is not None and module.looks_like(body):
                return name
    marked = any(k.startswith("anthropic-") for k in headers) or headers.get(
        "request-id", ""
    ).startswith("req_")
    return "anthropic" if marked and available("anthropic") is not None else "http"


def _root(cls: type) -> str | None:
    return provider_of_module(getattr(cls, "__module__", None))


def provider_of_module(module: object) -> str | None:
    """The adapter for code of ``module`` (a dotted module name), or ``None``: ``"http"``
    for the HTTP libraries, a vendor's name for its SDK's modules (``wrap()`` proxies the
    objects of these and no others)."""
    if not isinstance(module, str):
        return None
    root = module.partition(".")[0]
    if root == "google" and not module.startswith("google.genai"):
        return None
    return _ROOTS.get(root)


def provider_of(exc: BaseException) -> str | None:
    """The provider whose SDK raised ``exc``, from its class's module (walking the MRO)."""
    return provider_of_type(type(exc))


def provider_of_type(cls: type) -> str | None:
    """The provider whose SDK defines exception class ``cls`` (walking its MRO)."""
    for klass in cls.__mro__:
        found = _root(klass)
        if found is not None:
            return found
    return None


def provider_of_object(obj: object) -> str | None:
    """The vendor whose SDK made ``obj`` (a result, a stream, a resource), or ``None``."""
    for cls in type(obj).__mro__:
        name = _root(cls)
        if name is not None and name != "http":
            return name
    return None


def provider_of_result(result: Any) -> str | None:
    """The vendor whose stop reasons ``result`` (an SDK result, or its JSON) carries, or
    ``None``: its SDK's class first, else the shape of the result."""
    name = provider_of_object(result)
    if name is not None:
        return name
    if isinstance(result, dict) and (
        "stopReason" in result or "amazon-bedrock-guardrailAction" in result
    ):
        return "bedrock"  # boto3 returns plain dicts: a Converse result or InvokeModel body
    if field(result, "candidates", "promptFeedback", "prompt_feedback") is not None:
        return "google"
    if field(result, "choices") is not None or field(result, "object") == "response":
        return "openai"
    if field(result, "stop_reason") is not None or field(result, "type") == "message":
        return "anthropic"
    reason = result.get("finish_reason") if isinstance(result, dict) else None
    if isinstance(reason, str) and reason.isupper():
        return "cohere"  # Cohere's chat: a top-level finish_reason in capitals (OpenAI's is in
        # choices, lower case)
    return None


def adapter_for_exception(exc: BaseException, provider: str | None) -> Adapter | None:
    """The adapter to read ``exc``: the one its module names, else ``provider``'s.

    The exception's own module wins over ``provider``: an httpx timeout raised under an
    OpenAI call is read by the http adapter, which then reports ``provider`` as the
    upstream.
    """
    name = provider_of(exc)
    if name is None and provider is not None and provider in NAMES:
        name = provider
    if name is None:
        name = provider_of_traceback(exc)
    return adapter(name) if name is not None else None


def provider_of_traceback(exc: BaseException) -> str | None:
    """The vendor whose code raised a builtin exception, from the innermost traceback frame.

    google-genai raises a plain ``TypeError`` from inside its error handling when a stream's
    error chunk has no numeric code; only where it was raised tells it apart.
    """
    frame = innermost(exc)
    if frame is None:
        return None
    name = provider_of_module(module_of(frame))
    return None if name == "http" else name
