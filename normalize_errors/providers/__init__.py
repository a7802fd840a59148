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
  ``first`` (``normalize_errors._stream_state``), fed each chunk a wrapped stream yields;
* ``TABLE``: the mapping, as rows the docs print; and, where the vendor has them, ``CLASSES``
  (its SDK's exception classes) and ``STOP_REASONS`` (the stop reasons of a result), which the
  provider pages print too.

Everything else in an adapter is private. Which provider reads what is declared once, here,
in ``PROVIDERS`` (a ``Provider`` per vendor: its module roots, hosts, generating methods,
what a replay imports); every routing decision of the library is derived from it (in
``_routing``). Adapters are imported on first use, never by ``import normalize_errors``, and
they never import a vendor SDK: they read exceptions by module name and attributes (duck
typing), so one adapter serves several major versions of its SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from .._exceptions import HarnessError

if TYPE_CHECKING:
    from .._rules import Rule
    from .._stream_state import StreamState

__all__ = ["NAMES", "PROVIDERS", "Adapter", "Provider"]


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
