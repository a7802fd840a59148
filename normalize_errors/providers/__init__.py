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
    "provider_of_object",
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
    for name in NAMES[:-1]:
        module = available(name)
        if module is not None and module.looks_like(body):
            return name
    marked = any(k.startswith("anthropic-") for k in headers) or headers.get(
        "request-id", ""
    ).startswith("req_")
    return "anthropic" if marked and available("anthropic") is not None else "http"


def _root(cls: type) -> str | None:
    return _module_provider(getattr(cls, "__module__", None))


def _module_provider(module: object) -> str | None:
    """The adapter for code of ``module`` (a dotted module name), or ``None``."""
    if not isinstance(module, str):
        return None
    root = module.partition(".")[0]
    if root == "google" and not module.startswith("google.genai"):
        return None
    return _ROOTS.get(root)


_BY_TYPE: dict[type, str | None] = {}


def provider_of(exc: BaseException) -> str | None:
    """The provider whose SDK raised ``exc``, from its class's module (walking the MRO)."""
    return provider_of_type(type(exc))


def provider_of_type(cls: type) -> str | None:
    """The provider whose SDK defines exception class ``cls`` (walking its MRO)."""
    if cls in _BY_TYPE:
        return _BY_TYPE[cls]
    found = None
    for klass in cls.__mro__:
        found = _root(klass)
        if found is not None:
            break
    _BY_TYPE[cls] = found
    return found


def provider_of_object(obj: object) -> str | None:
    """The vendor whose SDK made ``obj`` (a result, a stream, a resource), or ``None``."""
    for cls in type(obj).__mro__:
        name = _root(cls)
        if name is not None and name != "http":
            return name
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
    tb = exc.__traceback__
    for _ in range(1000):
        if tb is None or tb.tb_next is None:
            break
        tb = tb.tb_next
    if tb is None:
        return None
    name = _module_provider(tb.tb_frame.f_globals.get("__name__"))
    return None if name == "http" else name
