"""A success that is not the API's answer: a page or text instead of JSON, JSON that breaks.

A gateway, a captive portal or a wrong base URL can answer a generating call with status 200
and an HTML page (or any text that is not JSON). The OpenAI SDK then returns that text as a
``str`` instead of a completion; other SDKs fail to decode it and a ``json.JSONDecodeError``
escapes from inside their call. Both mean ``upstream.invalid_response``: the thing at the
other end is not the API.

* ``not_an_answer`` reads the text a generating call returned (``wrap()``, ``check()`` and
  ``@normalized`` on an SDK method hand it here) and names the page by its title.
* ``decode_error`` reads a ``JSONDecodeError``: only one raised while a vendor SDK was
  running (a frame of its traceback belongs to one of the SDKs ``providers`` routes; an HTTP
  client's frames alone do not count) is the upstream's fault; one raised by the caller's own
  code stays what it is. The class alone never decides.
"""

from __future__ import annotations

from typing import Any

from ._base._http_wire import html_title, short
from ._base._safe_read import frames, module_of, qualname
from ._model._code_classes import class_for_code
from ._model._exceptions import HarnessError
from .providers._routing import provider_of_module

__all__ = [
    "decode_error",
    "from_sdk",
    "not_a_result",
    "not_an_answer",
    "provider_of",
    "reported",
]


def _sdk_of(module: Any) -> str | None:
    """The provider whose SDK code ``module`` is (``providers.provider_of_module``); an HTTP
    client's module is none: code of yours (or a framework's) that calls
    ``httpx.Response.json()`` made that decode itself."""
    name = provider_of_module(module)
    return None if name == "http" else name


def from_sdk(exc: BaseException) -> tuple[str, str] | None:
    """The provider whose SDK one of ``exc``'s traceback frames belongs to, with that
    frame's top-level package, or ``None``."""
    for frame in frames(exc):
        module = module_of(frame)
        provider = _sdk_of(module)
        if provider is not None:
            return provider, module.partition(".")[0]
    return None


def decode_error(exc: BaseException) -> HarnessError | None:
    """``upstream.invalid_response`` for a JSON decode error raised inside an SDK's call.

    The exception's own frames decide, then its ``__cause__``'s (an SDK that wrapped the
    decode error in one of its own). ``None`` for a decode error raised outside any SDK.
    """
    found = from_sdk(exc)
    if found is None and exc.__cause__ is not None:
        found = from_sdk(exc.__cause__)
    if found is None:
        return None
    provider, sdk = found
    reason = short(str(exc), 200) or type(exc).__name__
    return class_for_code("upstream.invalid_response")(
        f"{provider}: the response could not be read as JSON ({reason}); the other end "
        "may not be the API (a gateway or login page, a wrong base URL).",
        retryable=True,
        upstream={
            "provider": provider,
            "exception": qualname(exc),
            "raised_in": sdk,
        },
    )


def not_an_answer(result: str | bytes | bytearray, provider: str | None) -> HarnessError:
    """``upstream.invalid_response`` for text a generating call returned instead of a result.

    ``detail`` names the page by its title (or its first line); the text itself, cut to 1 KiB,
    stays in ``upstream.body``. Not retryable, like any success response that carries no
    answer (``from_response`` of a 2xx): a wrong base URL or a login page stays what it is.
    """
    text = result if isinstance(result, str) else bytes(result).decode("utf-8", "replace")
    where = provider or "upstream"
    title = html_title(text)
    if title:
        what = f"an HTML page titled {title!r}"
    else:
        stripped = text.strip()
        first = stripped.splitlines()[0] if stripped else ""
        looks = "an HTML page" if first.startswith("<") else "text"
        what = f"{looks} ({short(first, 120)!r})" if first else "an empty body"
    return class_for_code("upstream.invalid_response")(
        f"{where}: the call returned {what} instead of the API's answer; check the base URL, "
        "a proxy or gateway in between, or a login page.",
        retryable=False,
        upstream={"provider": where, "body": short(text, 1024)},
    )


def provider_of(owner: Any) -> str | None:
    """The provider whose SDK ``owner`` (a resource object or class) belongs to, or ``None``."""
    cls = owner if isinstance(owner, type) else type(owner)
    return _sdk_of(getattr(cls, "__module__", None))


def not_a_result(members: dict[str, Any], provider: str) -> HarnessError:
    """``upstream.invalid_response`` for a 200 whose JSON has none of a result's members.

    ``members`` are the body's own (the SDK keeps them beside the fields it knows); the
    first names go into ``detail``, the members themselves into ``upstream.body``. Retryable
    as the registry says: a gateway that answers for the API usually reports a passing failure
    (Portkey's "Network connection lost."), unlike a page at a wrong base URL.
    """
    names = ", ".join(sorted(str(name) for name in members)[:5])
    text = next((v for v in members.values() if isinstance(v, str)), None)
    said = f": {short(text, 200)!r}" if text else ""
    return class_for_code("upstream.invalid_response")(
        f"{provider}: the response is JSON but not the API's answer (members: {names}){said}; "
        "a gateway or proxy answered in its place.",
        upstream={"provider": provider, "body": members},
    )


def reported(members: dict[str, Any], provider: str) -> HarnessError:
    """The error a 200's JSON reports when an SDK built its result of a body that is none
    (``members``: the body's own, as the SDK keeps them): an error object all the same
    (``_envelopes.error_object``: an ``error`` member with its message, a vendor envelope
    such as MiniMax's ``base_resp``, a stated status, OpenAI's bare error object) read as
    ``from_response`` reads it inside a 2xx, by the adapter of its shape; else
    ``not_a_result``: JSON, but not the API's answer."""
    from ._reading._envelopes import error_object

    body = error_object(members)
    if body is None:
        return not_a_result(members, provider)
    from .providers._routing import adapter, detect

    found: HarnessError = adapter(detect(body, {})).from_response(None, {}, body)
    return found
