"""Provider adapters: one module per vendor, all with the same small interface (``Adapter``).

Each adapter module (``openai``, ``anthropic``, ``google``, ``bedrock``, ``cohere``, ``http``)
exports:

* ``NAME``: the provider name used in ``upstream.provider`` and the ``provider=`` argument;
* ``normalize(exc)``: a vendor exception -> ``HarnessError`` (or ``None`` if not its own);
* ``from_response(status, headers, body)``: a raw HTTP error response -> ``HarnessError``;
* ``looks_like(body)``: whether a parsed error body has this vendor's shape;
* ``diagnose(result, tools)``: a successful result -> the ``HarnessError`` its stop reason
  means, or ``None``;
* ``diagnose_stream(chunks, tools)``: the same for the chunks of a finished stream;
* ``stream_state(first, keep_text)``: the state machine of a stream whose first chunk is
  ``first`` (``normalize_errors._reading._stream_state``), fed each chunk a wrapped stream yields;
  it takes any first chunk, never raising;
* ``TABLE``: the mapping, as rows the docs print; and, where the vendor has them, ``CLASSES``
  (its SDK's exception classes) and ``STOP_REASONS`` (the stop reasons of a result), which the
  provider pages print too.

Everything else in an adapter is private. Which provider reads what is declared once, here,
in ``PROVIDERS`` (a ``Provider`` per vendor: its module roots, hosts, generating methods,
what a replay imports, what only its results, printed errors and headers carry, and the native
SDKs of vendors whose API is its own, an ``Sdk`` each); every routing decision of the library
is derived from it (in ``_routing``, and replay's ``SDKS``, the openai adapter's base classes,
``wrap()``'s dispatch, the CLI's provider lists). ``GENERIC`` is the provider of the HTTP
libraries, the one declared with ``sdk=False``. Adapters are imported on first use, never by
``import normalize_errors``, and they never import a vendor SDK: they read exceptions by
module name and attributes (duck typing), so one adapter serves several major versions of
its SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from .._model._exceptions import HarnessError

if TYPE_CHECKING:
    from .._reading._rules import Rule
    from .._reading._stream_state import StreamState

__all__ = ["GENERIC", "NAMES", "PROVIDERS", "Adapter", "Provider", "Sdk"]


class Sdk(NamedTuple):
    """The native SDK of a vendor whose API is another provider's (an OpenAI-compatible
    vendor's own client): that provider's adapter reads its exceptions and results."""

    name: str
    """Its name in a cassette's ``metadata.sdk``."""
    module: str
    """The module of its client class (``cerebras.cloud.sdk``); its top-level package is
    one of the provider's ``roots``."""
    client: str
    """Its client class (``Groq``); a Stainless SDK's async client is ``Async`` + this."""
    api: str
    """The vendor's live API, where a replay of its cassettes sends."""
    base: str
    """The class every exception it raises derives from (``GroqError``)."""
    generator: str = "stainless"
    """What generated it: ``"stainless"`` (openai's generator: the same exception classes,
    a client taking ``base_url`` and ``max_retries``, ``Async`` twins of the client) or
    ``"speakeasy"`` (mistralai: ``server_url``, ``_async`` twins of its methods)."""
    generating: tuple[tuple[str, str, frozenset[str]], ...] = ()
    """Its methods whose results ``wrap()`` checks, as ``Provider.generating``."""


class Provider(NamedTuple):
    """One provider, declared once. Every routing decision is derived from ``PROVIDERS``:
    which adapter reads an exception, a result or a response, which hosts name a provider,
    which methods ``wrap()`` checks, what a replay imports and which native SDKs it makes its
    calls through."""

    name: str
    """The name in ``upstream.provider`` and the ``provider=`` argument; its adapter is the
    module of that name in this package."""
    roots: tuple[str, ...]
    """The modules whose exceptions and objects it reads: a top-level package, or a package
    below one (``google.genai``: other ``google`` packages are not the SDK's); with the
    top-level package of each of its ``sdks`` (``_compatible`` builds both)."""
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
    result_marks: tuple[tuple[str, str | None], ...] = ()
    """What a result of no SDK object (an object or a dict) that is its carries at the top
    level: ``(member, None)`` for a member that is there (not ``None``), ``(member, value)``
    for a member of that value. Read after every provider's ``result_members``."""
    loose_marks: tuple[tuple[str, str | None], ...] = ()
    """Marks as ``result_marks`` that other shapes may carry too (a top-level
    ``stop_reason``): read after every provider's ``result_marks``. A value of ``""`` means
    a text in capitals (Cohere's ``finish_reason``), read in a dict only."""
    header_marks: tuple[tuple[str, str], ...] = ()
    """Headers only its API sends: ``(name, value prefix)``; a name ending in ``-`` is a
    prefix of names (any value). How a response of no known body shape is known as its."""
    sdks: tuple[Sdk, ...] = ()
    """The native SDKs of vendors whose API is this provider's (see ``Sdk``)."""
    stream_events: tuple[str, ...] = ()
    """The ``type`` of the events its streams send, as JSON (a name, or a prefix ending in
    ``.`` or ``_``): how a recorded stream of no SDK object is known as this provider's."""


_COMPATIBLE: Final = (
    Sdk(
        "groq",
        "groq",
        "Groq",
        "https://api.groq.com",
        "GroqError",
        generating=(("groq.resources.chat.completions", "Completions", frozenset({"create"})),),
    ),
    Sdk(
        "together",
        "together",
        "Together",
        "https://api.together.ai",
        "TogetherError",
        generating=(
            ("together.resources.chat.completions", "CompletionsResource", frozenset({"create"})),
        ),
    ),
    Sdk(
        "cerebras",
        "cerebras.cloud.sdk",
        "Cerebras",
        "https://api.cerebras.ai",
        "CerebrasError",
        generating=(
            (
                "cerebras.cloud.sdk.resources.chat.completions",
                "CompletionsResource",
                frozenset({"create"}),
            ),
        ),
    ),
    Sdk(
        "fireworks",
        "fireworks",
        "Fireworks",
        "https://api.fireworks.ai",
        "FireworksError",
        generating=(
            ("fireworks.resources.chat.completions", "CompletionsResource", frozenset({"create"})),
        ),
    ),
    Sdk(
        "mistralai",
        "mistralai.client",
        "Mistral",
        "https://api.mistral.ai",
        "MistralError",
        generator="speakeasy",
        generating=(
            (
                "mistralai.client.chat",
                "Chat",
                frozenset({"complete", "complete_async", "stream", "stream_async"}),
            ),
        ),
    ),
)
"""The native SDKs of OpenAI-compatible vendors, read by the openai adapter."""


def _compatible_roots(root: str, sdks: tuple[Sdk, ...]) -> tuple[str, ...]:
    """A provider's ``roots``: its own, and the top-level package of each of its ``sdks``."""
    return (root, *(sdk.module.partition(".")[0] for sdk in sdks))


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
        # a top-level stop_reason: OpenAI's is choices[].finish_reason, Bedrock's stopReason
        loose_marks=(("stop_reason", None), ("type", "message")),
        header_marks=(("anthropic-", ""), ("request-id", "req_")),
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
        result_marks=(("candidates", None), ("promptFeedback", None), ("prompt_feedback", None)),
    ),
    Provider(
        "openai",
        roots=_compatible_roots("openai", _COMPATIBLE),
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
            *(method for sdk in _COMPATIBLE for method in sdk.generating),
        ),
        answers_in_objects=True,
        replay=("openai",),
        stream_events=("response.",),
        result_marks=(("choices", None), ("object", "response")),
        sdks=_COMPATIBLE,
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
        # bedrock._NATIVE_BODIES (Cohere Command, Meta Llama, Mistral, Amazon Titan Text)
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
        # Cohere's chat: a top-level finish_reason in capitals (OpenAI's is in choices, lower
        # case)
        loose_marks=(("finish_reason", ""),),
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

GENERIC: Final = next(provider.name for provider in PROVIDERS if not provider.sdk)
"""The provider of the HTTP libraries (the one declared with ``sdk=False``): it reads a
response of no known shape, and is the ``upstream.provider`` of what no vendor's is."""


class Adapter(Protocol):
    """The interface every provider module offers."""

    NAME: str
    TABLE: Sequence[Rule]

    def normalize(self, exc: BaseException) -> HarnessError | None: ...

    def from_response(self, status: Any, headers: Any, body: Any) -> HarnessError: ...

    def looks_like(self, body: Any) -> bool: ...

    def diagnose(self, result: Any, tools: Any) -> HarnessError | None: ...

    def diagnose_stream(self, chunks: Any, tools: Any) -> HarnessError | None: ...

    def stream_state(self, first: Any, keep_text: int = 0) -> StreamState: ...
