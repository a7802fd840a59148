"""Provider adapters: one module per vendor, all with the same small interface.

Each module (``openai``, ``anthropic``, ``google``, ``bedrock``, ``cohere``, ``http``) offers:

* ``NAME``: the provider name used in ``upstream.provider`` and the ``provider=`` argument;
* ``ROOTS``: the modules whose exceptions it reads (its ``Provider.roots``);
* ``normalize(exc)``: a vendor exception -> ``HarnessError`` (or ``None`` if not its own);
* ``from_response(status, headers, body)``: a raw HTTP error response -> ``HarnessError``;
* ``looks_like(body)``: whether a parsed error body has this vendor's shape;
* ``diagnose(result, tools)``: a successful result -> the ``HarnessError`` its stop reason
  means, or ``None``;
* ``diagnose_stream(chunks, tools)``: the same for the chunks of a finished stream;
* ``TABLE``: the mapping, as rows the docs print.

Which provider reads what is declared once, in ``PROVIDERS`` (a ``Provider`` per vendor:
its module roots, hosts, generating methods, what a replay imports); every routing decision
of the library is derived from it. Adapters are imported on first use, never by
``import normalize_errors``, and they never import a vendor SDK: they read exceptions by
module name and attributes (duck typing), so one adapter serves several major versions of
its SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from .._exceptions import HarnessError
from .._safe_read import field, innermost, module_of

if TYPE_CHECKING:
    from .._rules import Rule

__all__ = [
    "NAMES",
    "PROVIDERS",
    "Adapter",
    "Provider",
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


class Provider(NamedTuple):
    """One provider, declared once. Every routing decision is derived from ``PROVIDERS``:
    which adapter reads an exception, a result or a response, which hosts name a provider,
    which methods ``wrap()`` checks, and what a replay imports."""

    name: str
    """The name in ``upstream.provider`` and the ``provider=`` argument; its adapter is the
    module of that name in this package."""
    roots: tuple[str, ...]
    """The modules whose exceptions and objects it reads: a top-level package, or a package
    below one (``google.genai``: other ``google`` packages are not the SDK's)."""
    hosts: tuple[str, ...] = ()
    """Request hosts of its API: exact names, and suffixes starting with ``.`` or ``-``
    (``us-central1-aiplatform.googleapis.com``); a response of no known shape from one is read
    as this provider's."""
    generating: tuple[tuple[str, str, frozenset[str]], ...] = ()
    """The methods whose results ``wrap()`` checks: (resource package, class, method names)."""
    sdk: bool = True
    """A vendor SDK (``wrap()`` proxies its objects); ``False`` for the HTTP libraries."""
    answers_in_objects: bool = False
    """Its SDK never returns text as a generating call's answer: text there is no answer."""
    replay: tuple[str, ...] = ()
    """The modules a replay of its cassettes imports (``_replay_calls``)."""
    printed: tuple[str, ...] = ()
    """Words only the text its SDK prints for an error holds (botocore's ``An error occurred
    (ThrottlingException) when calling the Converse operation: ...``): how an error pasted
    as text, with no JSON body, is known as this provider's."""
    result_members: tuple[str, ...] = ()
    """Top-level members only its results have, as JSON: how a result of no SDK object (a
    plain dict, as boto3 returns) is known as this provider's."""
    stream_events: tuple[str, ...] = ()
    """The ``type`` of the events its streams send, as JSON (a name, or a prefix ending in
    ``.`` or ``_``): how a recorded stream of no SDK object is known as this provider's."""


PROVIDERS: Final = (
    # In the order ``from_response`` tries them on a body's shape: Anthropic's shape
    # ({"type": "error", "error": {...}}) and Google's (a canonical status such as
    # RESOURCE_EXHAUSTED, or type.googleapis.com details) are the most specific, so they come
    # before OpenAI's, which accepts any {"error": {"message": ...}}. Bedrock's and Cohere's
    # bodies ({"message": ...}) have no shape of their own: they are recognised only by an AWS
    # __type member, or read when named with provider=.
    Provider(
        "anthropic",
        roots=("anthropic",),
        hosts=("api.anthropic.com",),
        generating=(
            ("anthropic.resources.messages", "Messages", frozenset({"create", "parse", "stream"})),
            (
                "anthropic.resources.beta.messages",
                "Messages",
                frozenset({"create", "parse", "stream", "tool_runner"}),
            ),
        ),
        answers_in_objects=True,
        replay=("anthropic",),
        stream_events=("message_start", "message_delta", "content_block_", "completion"),
    ),
    Provider(
        "google",
        roots=("google.genai",),
        hosts=(
            "generativelanguage.googleapis.com",
            "aiplatform.googleapis.com",
            "-aiplatform.googleapis.com",
        ),
        generating=(
            (
                "google.genai.models",
                "Models",
                frozenset({"generate_content", "generate_content_stream"}),
            ),
            ("google.genai.chats", "Chat", frozenset({"send_message", "send_message_stream"})),
        ),
        answers_in_objects=True,
        replay=("google.genai",),
        # google.api_core's gRPC text ('400 ... [reason: "API_KEY_INVALID" ...'), the JS SDK's
        # '[GoogleGenerativeAI Error]: ...', and any text quoting google.rpc details
        printed=('[reason: "', "[GoogleGenerativeAI Error]", "type.googleapis.com/google.rpc."),
    ),
    Provider(
        "openai",
        # the native SDKs of OpenAI-compatible vendors are read by the openai adapter too
        roots=("openai", "groq", "together", "cerebras", "fireworks", "mistralai"),
        hosts=("api.openai.com", ".openai.azure.com"),
        generating=(
            (
                "openai.resources.chat.completions",
                "Completions",
                frozenset({"create", "parse", "stream"}),
            ),
            (
                "openai.resources.beta.chat.completions",
                "Completions",
                frozenset({"parse", "stream"}),
            ),
            (
                "openai.resources.responses",
                "Responses",
                frozenset({"create", "parse", "stream", "retrieve"}),
            ),
            ("openai.resources.completions", "Completions", frozenset({"create"})),
            ("groq.resources.chat.completions", "Completions", frozenset({"create"})),
            ("together.resources.chat.completions", "CompletionsResource", frozenset({"create"})),
            (
                "cerebras.cloud.sdk.resources.chat.completions",
                "CompletionsResource",
                frozenset({"create"}),
            ),
            ("fireworks.resources.chat.completions", "CompletionsResource", frozenset({"create"})),
            (
                "mistralai.client.chat",
                "Chat",
                frozenset({"complete", "complete_async", "stream", "stream_async"}),
            ),
        ),
        answers_in_objects=True,
        replay=("openai",),
        stream_events=("response.",),
    ),
    Provider(
        "bedrock",
        roots=("botocore",),
        generating=(
            (
                "botocore.client",
                "BedrockRuntime",
                frozenset({"converse", "converse_stream", "invoke_model_with_response_stream"}),
            ),
        ),
        printed=(") when calling the ",),  # botocore's ClientError and EventStreamError text
        # a Converse result, a guarded InvokeModel body, and the native InvokeModel bodies of
        # bedrock.NATIVE_BODIES (Cohere Command, Meta Llama, Mistral, Amazon Titan Text)
        result_members=(
            "stopReason",
            "amazon-bedrock-guardrailAction",
            "generations",
            "generation",
            "outputs",
            "inputTextTokenCount",
        ),
    ),
    Provider(
        "cohere",
        roots=("cohere",),
        generating=(("cohere.client_v2", "ClientV2", frozenset({"chat", "chat_stream"})),),
        replay=("cohere", "httpx"),
    ),
    Provider(
        "http",
        roots=("httpx", "httpx2", "httpcore", "httpcore2", "aiohttp", "requests", "urllib3"),
        sdk=False,
    ),
)
"""The providers (see ``Provider``), in the order ``from_response`` tries their body shapes."""

NAMES: Final = tuple(provider.name for provider in PROVIDERS)
"""The provider names, in the order ``from_response`` tries them on a body's shape."""

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
        declared(name)  # raises for a name that is none
        module = importlib.import_module(f"{__name__}.{name}")
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


def detect(body: Any, headers: dict[str, str], text: str = "") -> str:
    """The provider whose error shape ``body`` has (see ``NAMES`` for the order), else http.

    Only adapters that import are asked, so a build without one of them still reads every
    other shape. ``headers`` (lower-case names) decide for Anthropic when the body has no
    known shape: its ``anthropic-*`` headers, or a ``request-id`` starting with ``req_``. A
    body that is no JSON is the provider's whose SDK printed its ``text`` (``printed``).
    """
    if isinstance(body, (dict, list)):  # a vendor's error shape is JSON
        for name in NAMES[:-1]:
            module = available(name)
            if module is not None and module.looks_like(body):
                return name
    elif text:  # no JSON: an SDK's printed error text
        printer = provider_of_text(text)
        if printer is not None and available(printer) is not None:
            return printer
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
        if name is not None and name != "http":
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
    return None if name == "http" else name
