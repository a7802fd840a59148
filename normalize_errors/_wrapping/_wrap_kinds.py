"""What ``wrap()`` does with a value that comes out of the real client: its kind, decided
once per type (``_kind``): data returned as it is, an SDK model checked, a generator or an
SDK stream watched, an awaitable awaited through the wrapper, other SDK objects proxied.
"""

from __future__ import annotations

import dataclasses
import inspect
import weakref
from enum import Enum
from typing import Any, Final

from ..providers._routing import provider_of_module

__all__ = [
    "APAGER",
    "ASTREAM",
    "AWAIT",
    "DATA",
    "KINDS",
    "MODEL",
    "PAGE",
    "PLAIN",
    "PROXY",
    "RESOURCE",
    "STREAM",
    "kind_of",
]

# What to do with a value coming out of the real client, decided once per type: for values
# read as attributes, then for values returned by calls. The types are held weakly (botocore
# makes a client class and an exceptions class per session): a type is collected as if it had
# never been wrapped.
PLAIN, MODEL, PAGE, STREAM, ASTREAM, PROXY, RESOURCE, AWAIT, APAGER = range(9)
KINDS: Final[tuple[weakref.WeakKeyDictionary[type, int], weakref.WeakKeyDictionary[type, int]]] = (
    weakref.WeakKeyDictionary(),
    weakref.WeakKeyDictionary(),
)
DATA: Final = (str, bytes, bytearray, int, float, list, tuple, dict, set, frozenset, Enum)

# Where the SDKs keep the client a resource calls through: openai's and anthropic's resources
# (``_client``), google-genai's modules (``_api_client``), Fern's (cohere: ``_client_wrapper``)
# and Speakeasy's (mistral: ``sdk_configuration``).
_CLIENT_SLOTS: Final = ("_client", "_api_client", "_client_wrapper", "sdk_configuration")


def _holds_client(value: Any) -> bool:
    for slot in _CLIENT_SLOTS:
        try:
            if getattr(value, slot, None) is not None:
                return True
        except Exception:  # a property of the SDK's that raises is not a client
            continue
    return False


def _reaches_api(value: Any) -> bool:
    """Whether an SDK object read as an attribute can call the API: it holds a client, or one
    of its members does (a ``with_raw_response`` view, google-genai's ``Chats``). A credentials
    provider, a configuration or an options object cannot, and is returned as it is."""
    if _holds_client(value):
        return True
    try:
        members = list(vars(value).values())
    except TypeError:  # no __dict__
        return False
    return any(
        m is not None and not isinstance(m, (DATA, type)) and _holds_client(m) for m in members
    )


def kind_of(value: Any, from_call: bool) -> int:
    """How to treat ``value``: returned by a call (``from_call``) or read as an attribute.

    Data (strings, numbers, enums, containers, dataclasses) and classes are returned as they
    are; SDK models are checked and returned as they are; generators and SDK streams are wrapped as
    streams; other SDK objects (resources, clients, managers, raw responses) are wrapped as
    proxies when a call returns them, and when read as attributes only if they can reach the
    API (``client.chat``, not ``client.credentials``: ``_reaches_api``, decided per object).
    Objects of httpx/httpx2 and context managers are wrapped only when a call returns them (a
    wrapped ``httpx.Client``'s responses and ``stream()`` managers), never when read as
    attributes (``client.base_url``). An awaitable a call returns (an async client's method
    that is no coroutine function) is awaited, or iterated as a paginator, through the wrapper.
    """
    cls = type(value)
    kinds = KINDS[from_call]
    kind = kinds.get(cls)
    if kind is None:
        kind = kinds[cls] = _kind_of_type(value, cls, from_call)
    if kind == RESOURCE:
        return PROXY if _reaches_api(value) else PLAIN
    return kind


def _kind_of_type(value: Any, cls: type, from_call: bool) -> int:
    module = getattr(cls, "__module__", "") or ""
    root = module.partition(".")[0]
    # a class of the application's on an SDK's class (a ``Stream`` subclass) is the SDK's kind
    sdk = any(provider_of_module(k.__module__) not in (None, "http") for k in cls.__mro__)
    if isinstance(value, (DATA, type)) or value is None:
        kind = PLAIN
    elif from_call and inspect.isawaitable(value) and not hasattr(cls, "model_fields"):
        # what an async client's method gives when it is no coroutine function: a coroutine,
        # or the SDKs' ``AsyncPaginator`` (awaited for the first page, or iterated)
        kind = APAGER if hasattr(cls, "__aiter__") else AWAIT
    elif inspect.isgenerator(value):
        kind = STREAM
    elif inspect.isasyncgen(value):
        kind = ASTREAM
    elif not sdk and not (from_call and root in ("httpx", "httpx2")):
        managed = hasattr(cls, "__enter__") or hasattr(cls, "__aenter__")
        kind = PROXY if from_call and managed else PLAIN
    elif hasattr(cls, "model_fields") or hasattr(cls, "__pydantic_fields__"):
        kind = PAGE if hasattr(cls, "iter_pages") else MODEL
    elif dataclasses.is_dataclass(cls):  # data (openai's AgentTurnResult): as the SDK made it
        kind = PLAIN
    elif hasattr(cls, "__next__") or (hasattr(cls, "__iter__") and hasattr(cls, "response")):
        kind = STREAM
    elif hasattr(cls, "__anext__") or (hasattr(cls, "__aiter__") and hasattr(cls, "response")):
        kind = ASTREAM
    else:
        kind = PROXY if from_call else RESOURCE
    return kind
