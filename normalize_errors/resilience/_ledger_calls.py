"""What the ledger reads of a wrapped client and of its calls.

* **The account** (``account``): who a client's limits belong to: its provider, its address,
  the organization and project it names, and a digest of its credential, read from the client
  each time a call starts and never kept (the key, an Anthropic ``auth_token``, a Gemini API
  key). A client whose credential cannot be read is known by its provider and address.
* **A call's model and expected cost** (``model_of``, ``estimate``): one request, the input
  as a quarter of its characters (messages, input, contents, system, instructions, tools: the
  text a provider counts), and the output the call allows (``max_tokens``,
  ``max_completion_tokens``, ``max_output_tokens``, Gemini's ``config.max_output_tokens``);
  nothing for the output when the call sets no bound (the usage settles it).
* **The usage a result reports** (``usage_of``): input and output tokens of OpenAI's Chat
  Completions and Responses, Anthropic's Messages and Gemini's results.
* **The rate-limit headers of each response** (``listen``, ``heard``): the SDKs return a
  result without its headers, so the ledger adds one hook to the client's HTTP client
  (httpx's and httpx2's ``event_hooks``) that hands a response's headers to the call that
  is running in the same context (a ``ContextVar``), and does nothing for any other request.
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

from .._base._redact import redact
from .._base._safe_read import field, integer
from ._store import digest

__all__ = ["Account", "account", "estimate", "heard", "listen", "model_of", "usage_of"]

_TEXT_KEYS: Final = ("messages", "input", "contents", "system", "instructions", "prompt", "tools")
_OUTPUT_KEYS: Final = ("max_tokens", "max_completion_tokens", "max_output_tokens")
_CREDENTIALS: Final = ("api_key", "auth_token")
_MAX_WALK: Final = 20_000
"""Most values visited when counting a request's characters."""


class Account:
    """Who a client's limits belong to: ``key`` (a digest, the name it is stored under),
    ``label`` (its provider, address, organization and ``key#`` with 8 hex digits of the
    credential's digest, redacted, for whoever looks) and ``provider``."""

    __slots__ = ("_shown", "key", "provider")

    def __init__(self, key: str, shown: str, provider: str) -> None:
        self.key = key
        self._shown = shown
        self.provider = provider

    @property
    def label(self) -> str:
        """The account as it may be shown (redacted when it is read: a refusal, a wall)."""
        return redact(self._shown)[:200]

    def __repr__(self) -> str:
        return f"Account({self.label!r})"


def _text(value: Any) -> str:
    """A string value as it is; a URL object (httpx's) as its text; anything else, such as
    anthropic's ``client.organization`` resource, is no value (its text names the object)."""
    if isinstance(value, str):
        return value[:512]
    if type(value).__name__ != "URL":
        return ""
    try:
        return str(value)[:512]
    except Exception:  # a hostile __str__
        return ""


def _credential(client: Any) -> str | None:
    """The digest of the credential the client sends, or None (the credential is not kept)."""
    for owner in (client, field(client, "_api_client"), field(client, "_client_wrapper")):
        for name in _CREDENTIALS:
            value = field(owner, name)
            if isinstance(value, str) and value:
                return digest("normalize-errors ledger credential\n" + value)
    return None


def account(client: Any, provider: str) -> Account:
    """The account of ``client`` (read now: a credential changed since is seen)."""
    api = field(client, "_api_client")  # google-genai keeps its options there
    base = _text(field(client, "base_url")) or _text(field(field(api, "_http_options"), "base_url"))
    organization = _text(field(client, "organization"))
    project = _text(field(client, "project")) or _text(field(api, "project"))
    credential = _credential(client)
    key = digest("\n".join((provider, base, organization, project, credential or "none")))
    host = base.split("://", 1)[-1].split("/", 1)[0]
    # the credential is told apart by 8 hex digits of its digest, never by any part of it
    tag = f"key#{credential[:8]}" if credential else "no key read"
    shown = " ".join(part for part in (provider, host, organization, tag) if part)
    return Account(key, shown[:512], provider)


def model_of(kwargs: Mapping[str, Any]) -> str | None:
    """The model a call names (``model=``), or None."""
    model = kwargs.get("model")
    return model[:256] if isinstance(model, str) and model else None


def _characters(value: Any) -> int:
    """The characters of the strings in ``value`` (nested data or SDK objects' dicts)."""
    total, seen, stack = 0, 0, [value]
    while stack and seen < _MAX_WALK:
        item = stack.pop()
        seen += 1
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif hasattr(item, "model_dump"):  # a pydantic model (google-genai's Content)
            try:
                stack.append(item.model_dump(exclude_none=True))
            except Exception:
                continue
    return total


def estimate(kwargs: Mapping[str, Any]) -> dict[str, float]:
    """A call's expected cost: one request, its input (characters / 4) and its output bound."""
    chars = sum(_characters(kwargs.get(name)) for name in _TEXT_KEYS)
    tokens_in = float(-(-chars // 4))
    bound = next((kwargs[n] for n in _OUTPUT_KEYS if integer(kwargs.get(n)) is not None), None)
    if bound is None:
        bound = field(kwargs.get("config"), "max_output_tokens")
    tokens_out = float(integer(bound) or 0)
    return {
        "requests": 1.0,
        "tokens": tokens_in + tokens_out,
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
    }


_USAGE: Final = (
    ("usage", ("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")),
    ("usage_metadata", ("prompt_token_count",), ("candidates_token_count",)),
)


def usage_of(result: Any) -> dict[str, float] | None:
    """The tokens a result reports it used, by scope; None when it reports none."""
    for where, inputs, outputs in _USAGE:
        usage = field(result, where)
        if usage is None:
            continue
        tokens_in = next(
            (integer(field(usage, n)) for n in inputs if field(usage, n) is not None), None
        )
        tokens_out = next(
            (integer(field(usage, n)) for n in outputs if field(usage, n) is not None), None
        )
        if tokens_in is None and tokens_out is None:
            continue
        used_in, used_out = float(tokens_in or 0), float(tokens_out or 0)
        return {"tokens": used_in + used_out, "input_tokens": used_in, "output_tokens": used_out}
    return None


# -- the headers of each response -----------------------------------------------------------------

_HEARD: Final[contextvars.ContextVar[list[Any] | None]] = contextvars.ContextVar(
    "normalize_errors_ledger_heard", default=None
)


def _heard_response(response: Any) -> None:
    """httpx's response hook: hand the headers to the call running in this context."""
    holder = _HEARD.get()
    if holder is not None and len(holder) < 16:
        holder.append(field(response, "headers"))


async def _aheard_response(response: Any) -> None:
    """The same, for an async HTTP client (whose hooks are awaited)."""
    _heard_response(response)


def listen(client: Any) -> bool:
    """Add the hook to ``client``'s HTTP client (once); whether it has one to add it to."""
    http = field(client, "_client")
    hooks = field(http, "event_hooks")
    if not isinstance(hooks, Mapping) or not isinstance(hooks.get("response"), list):
        return False
    hook = _aheard_response if inspect.iscoroutinefunction(type(http).send) else _heard_response
    if hook not in hooks["response"]:
        try:
            http.event_hooks = {**hooks, "response": [*hooks["response"], hook]}
        except Exception:  # an HTTP client that refuses it: the ledger learns nothing from it
            return False
    return True


@contextmanager
def heard() -> Iterator[list[Any]]:
    """Collect the headers of the responses of the call run within the block."""
    holder: list[Any] = []
    token = _HEARD.set(holder)
    try:
        yield holder
    finally:
        _HEARD.reset(token)
