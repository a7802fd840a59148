"""Routing, derived from ``PROVIDERS``: which adapter reads an exception, an object, a result,
a stream, a body or a printed text, and the adapter modules themselves (imported on first use).

Nothing here names a provider: every answer comes from the declarations in ``PROVIDERS``
(``providers/__init__.py``), so a new vendor is one row there and its module.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Final

from .._base._safe_read import field, innermost, module_of
from . import GENERIC, NAMES, PROVIDERS, Adapter, Provider

__all__ = [
    "adapter",
    "adapter_for_exception",
    "available",
    "declared",
    "detect",
    "provider_of",
    "provider_of_module",
    "provider_of_object",
    "provider_of_result",
    "provider_of_stream",
    "provider_of_text",
    "provider_of_traceback",
    "provider_of_type",
]

_BY_NAME: Final = {provider.name: provider for provider in PROVIDERS}


def _by_top() -> dict[str, tuple[tuple[str, str], ...]]:
    found: dict[str, tuple[tuple[str, str], ...]] = {}
    for provider in PROVIDERS:
        for root in provider.roots:
            top = root.partition(".")[0]
            found[top] = (*found.get(top, ()), (root, provider.name))
    return found


_BY_TOP: Final = _by_top()
"""Top-level package -> the (root, provider name) pairs under it."""


def declared(name: str) -> Provider:
    """The declaration of provider ``name``.

    Raises:
        ValueError: ``name`` is not a provider name.
    """
    found = _BY_NAME.get(name)
    if found is None:
        raise ValueError(f"unknown provider {name!r}; expected one of {', '.join(NAMES)}")
    return found


_LOADED: dict[str, ModuleType] = {}


def adapter(name: str) -> Adapter:
    """The adapter module of provider ``name`` (``"openai"``, ``"anthropic"``, ...).

    Raises:
        ValueError: ``name`` is not a provider name.
    """
    module = _LOADED.get(name)
    if module is None:
        declared(name)  # raises for a name that is none
        module = importlib.import_module(f".{name}", __package__)
        _LOADED[name] = module
    return module


def available(name: str) -> Adapter | None:
    """The adapter of ``name``, or ``None`` if it cannot be imported in this build."""
    try:
        return adapter(name)
    except ImportError:
        return None


def provider_of_text(text: str) -> str | None:
    """The provider whose SDK printed ``text`` (``Provider.printed``), or ``None``."""
    head = text[:4096]
    for provider in PROVIDERS:
        if any(words in head for words in provider.printed):
            return provider.name
    return None


def _marked(provider: Provider, headers: dict[str, str]) -> bool:
    """Whether ``headers`` (lower-case names) hold one of ``provider.header_marks``."""
    for name, value in provider.header_marks:
        if name.endswith("-"):
            if any(key.startswith(name) for key in headers):
                return True
        elif name in headers and headers[name].startswith(value):
            return True
    return False


def detect(body: Any, headers: dict[str, str], text: str = "") -> str:
    """The provider whose error shape ``body`` has (see ``NAMES`` for the order), else
    ``GENERIC`` (plain HTTP).

    Only adapters that import are asked, so a build without one of them still reads every
    other shape. ``headers`` (lower-case names) decide when the body has no known shape:
    headers only one provider's API sends (``Provider.header_marks``: Anthropic's
    ``anthropic-*``, a ``request-id`` starting with ``req_``). A body that is no JSON is the
    provider's whose SDK printed its ``text`` (``printed``).
    """
    if isinstance(body, (dict, list)):  # a vendor's error shape is JSON
        for name in NAMES:
            if name == GENERIC:
                continue
            module = available(name)
            if module is not None and module.looks_like(body):
                return name
    elif text:  # no JSON: an SDK's printed error text
        printer = provider_of_text(text)
        if printer is not None and available(printer) is not None:
            return printer
    for provider in PROVIDERS:
        if _marked(provider, headers) and available(provider.name) is not None:
            return provider.name
    return GENERIC


def _root(cls: type) -> str | None:
    return provider_of_module(getattr(cls, "__module__", None))


def provider_of_module(module: object) -> str | None:
    """The adapter for code of ``module`` (a dotted module name), or ``None``: ``"http"``
    for the HTTP libraries, a vendor's name for its SDK's modules (``wrap()`` proxies the
    objects of these and no others)."""
    if not isinstance(module, str):
        return None
    for root, name in _BY_TOP.get(module.partition(".")[0], ()):
        if module == root or module.startswith(root + "."):
            return name
    return None


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
        if name is not None and name != GENERIC:
            return name
    return None


def provider_of_result(result: Any) -> str | None:
    """The vendor whose stop reasons ``result`` (an SDK result, or its JSON) carries, or
    ``None``: its SDK's class first, else the shape of the result."""
    name = provider_of_object(result)
    if name is not None:
        return name
    if isinstance(result, dict):  # boto3 returns plain dicts: a Converse result, a body
        for provider in PROVIDERS:
            if any(member in result for member in provider.result_members):
                return provider.name
    for provider in PROVIDERS:
        if any(_carries(result, mark) for mark in provider.result_marks):
            return provider.name
    for provider in PROVIDERS:
        if any(_carries(result, mark) for mark in provider.loose_marks):
            return provider.name
    return None


def _carries(result: Any, mark: tuple[str, str | None]) -> bool:
    """Whether ``result`` carries ``mark`` (see ``Provider.result_marks``)."""
    name, value = mark
    if value == "":  # a text in capitals, in a dict (``Provider.loose_marks``)
        found = result.get(name) if isinstance(result, dict) else None
        return isinstance(found, str) and found.isupper()
    found = field(result, name)
    return found is not None if value is None else found == value


def provider_of_stream(events: Sequence[Any]) -> str | None:
    """The vendor whose stream ``events`` (a finished stream's chunks, or their JSON) are, or
    ``None``: the first event of a known shape, by its SDK's class, the ``type`` its
    provider's streams send (``Provider.stream_events``), or its shape as a result."""
    for event in events[:1000]:
        name = provider_of_object(event)
        if name is not None:
            return name
        kind = field(event, "type")
        if isinstance(kind, str):
            for provider in PROVIDERS:
                if any(
                    kind.startswith(known) if known[-1] in "._" else kind == known
                    for known in provider.stream_events
                ):
                    return provider.name
        name = provider_of_result(event)
        if name is not None:
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
    frame = innermost(exc)
    if frame is None:
        return None
    name = provider_of_module(module_of(frame))
    return None if name == GENERIC else name
