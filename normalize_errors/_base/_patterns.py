"""Every regular expression of the package, in one list, with its input bound.

Read it top to bottom: each pattern says the longest text it is ever given (``bound``, in
characters; the caller cuts the text first) and why one search over that text takes time
linear in its length (``why``). Two rules make every pattern here linear:

- no quantifier inside another quantifier (no ``(a+)+``, no ``(?:x|y{0,9})*``), so a match
  attempt never explodes, and
- every repetition is bounded (``\\d{1,12}``, ``[^<]{0,500}``) unless the pattern is anchored
  (one attempt at one position), so each attempt at each position costs at most a constant.

``tests/test_patterns.py`` checks both rules on every entry, checks that no other module
compiles a pattern, and runs the worst inputs through the public entry points while
recording the length of every text that reaches a pattern.

Nothing is compiled at import: ``import normalize_errors`` must not load ``re``. Modules
that are themselves imported on first use (the provider adapters, ``_rules``) compile their
patterns when they are imported, as before; the others call ``compiled()`` at each use.

The rule tables' message patterns (``message=`` of each ``Rule`` in the provider modules and
``CONTEXT_COUNT`` in ``_rules``) are compiled by ``rule_pattern`` below. They all run on
``Facts.lowered``, which is the vendor message cut to ``MAX_MESSAGE`` (2048) characters, and
they follow the same two rules (checked by the same test).

The credential patterns are the one exception: ``_redact.PATTERNS`` lists them, with their
bound and why each is linear (see the end of this file).
"""

from __future__ import annotations

from ._lazy import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Final

MAX_MESSAGE: Final = 2048
"""Vendor messages are cut to this length before any pattern looks at them."""
MAX_HEADER_VALUE: Final = 1024
"""Header values are cut to this length when headers are read."""

ALL: list[LazyPattern] = []
"""Every pattern below, in order (the rule tables' patterns aside)."""


def _pattern(source: str, bound: int | None, why: str) -> LazyPattern:
    pattern = LazyPattern(source, bound, why)
    ALL.append(pattern)
    return pattern


def rule_pattern(source: str) -> re.Pattern[str]:
    """A rule table's message pattern, compiled (the table is built when its adapter loads).

    Matched with ``search`` on ``Facts.lowered``: at most ``MAX_MESSAGE`` characters.
    """
    import re

    return re.compile(source)


# -- _http_wire: headers, durations, HTML pages ------------------------------------------------

SECONDS: Final = _pattern(
    r"\s{0,32}(\d{1,15}(?:\.\d{1,9})?)\s{0,32}",
    MAX_HEADER_VALUE,
    "fullmatch on a Retry-After or retry-after-ms value: one attempt, every repeat bounded.",
)
DURATION_PART: Final = _pattern(
    r"(\d{1,12}(?:\.\d{1,9})?)(ms|h|m|s)",
    64,
    "finditer on a duration string of at most 64 characters (longer ones are refused).",
)
HTML_TITLE: Final = _pattern(
    r"(?i)<title[^>]{0,200}>([^<]{0,500})</title",
    65536,
    "search in the first 64 KiB of a page; starts with a literal, at most 713 characters per try.",
)
HTML_HEADING: Final = _pattern(
    r"(?i)<h1[^>]{0,200}>([^<]{0,500})</h1",
    65536,
    "search in the first 64 KiB of a page; starts with a literal, at most 707 characters per try.",
)

# -- _registry: codes ------------------------------------------------------------------------

CODE: Final = _pattern(
    r"(?:x-)?[a-z0-9_]+\.[a-z0-9_]+",
    None,
    "fullmatch on a code of any length: one attempt; the classes exclude the dot, so the first"
    " repeat gives back each character at most once.",
)

# -- _rules: wording shared by every provider ------------------------------------------------

RULE_ESCAPE: Final = _pattern(
    r"\\.",
    1000,
    "sub on a rule table's own pattern source (written in this package), one character per try.",
)
CONTEXT_LIMITS: Final = (  # run on the lower-cased message: literals in lower case
    # Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
    _pattern(
        r"(?P<observed>\d{1,12}) tokens? > (?P<value>\d{1,12}) maximum",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; digit runs bounded, at most 38 characters per"
        " try (``context_limit`` refuses a match that is the tail of a longer digit run).",
    ),
    # Anthropic: "input length and `max_tokens` exceed context limit: 197626 + 8192 > 200000"
    _pattern(
        r"context limit: (?P<observed>\d{1,12}) \+ (?P<more>\d{1,12}) > (?P<value>\d{1,12})",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, digit runs bounded.",
    ),
    # Gemini: "The input token count (3475108) exceeds the maximum number of tokens allowed
    # (1048576)."
    _pattern(
        r"input token count \((?P<observed>\d{1,12})\) exceeds.{0,60}?\((?P<value>\d{1,12})\)",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, every repeat bounded.",
    ),
    # OpenAI, vLLM, DeepSeek: "maximum context length is 8192 tokens. However, your messages
    # resulted in 8227 tokens"
    _pattern(
        r"maximum context length is (?P<value>\d{1,12}) tokens.{0,80}?"
        r"(?:resulted in|requested|you requested|have) (?P<observed>\d{1,12}) tokens",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, every repeat bounded.",
    ),
    _pattern(
        r"maximum context length is (?P<value>\d{1,12}) tokens",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, digit run bounded.",
    ),
    # Mistral: "Prompt contains 40000 tokens ... too large for model with 32768 maximum context"
    _pattern(
        r"contains (?P<observed>\d{1,12}) tokens.{0,80}?with (?P<value>\d{1,12})"
        r" maximum context",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, every repeat bounded.",
    ),
    # LM Studio: "Trying to keep the first 14538 tokens when context the overflows. However,
    # the model is loaded with context length of only 2048 tokens"
    _pattern(
        r"trying to keep the first (?P<observed>\d{1,12}) tokens.{0,160}?context length of only"
        r" (?P<value>\d{1,12}) tokens",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, every repeat bounded.",
    ),
    # text-generation-inference: "`inputs` tokens + `max_new_tokens` must be <= 2048. Given:
    # 3474 `inputs` tokens and 60 `max_new_tokens`"
    _pattern(
        r"must be <= (?P<value>\d{1,12})\. given: (?P<observed>\d{1,12}) `inputs` tokens and"
        r" (?P<more>\d{1,12}) `max_new_tokens`",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, digit runs bounded.",
    ),
    # text-generation-inference (older): "`inputs` must have less than 4096 tokens. Given: 4545"
    _pattern(
        r"must have less than (?P<value>\d{1,12}) tokens\. given: (?P<observed>\d{1,12})",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, digit runs bounded.",
    ),
    # llama.cpp (mid-stream): "request (2358 tokens) exceeds the available context size (2048
    # tokens)"
    _pattern(
        r"\((?P<observed>\d{1,12}) tokens\) exceeds the available context size"
        r" \((?P<value>\d{1,12}) tokens\)",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, digit runs bounded"
        " (``context_limit`` refuses a match that is the tail of a longer digit run).",
    ),
    # DashScope (Qwen): "Range of input length should be [1, 983616]"
    _pattern(
        r"range of input length should be \[1, (?P<value>\d{1,12})\]",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, one digit run bounded.",
    ),
)
RETRY_HINT: Final = _pattern(
    r"(?P<n>\d{1,6}(?:\.\d{1,12})?) ?(?P<unit>ms|milliseconds?|s|seconds?|m|minutes?)\b",
    MAX_MESSAGE,
    "match (anchored) right after 'try again in' and the like, in a message cut to MAX_MESSAGE.",
)

# -- _wording: meanings that words alone cannot say ------------------------------------------

MODEL_MISSING: Final = _pattern(
    r"model\b.{0,120}?\b(?:not found|does not exist|not exist)",
    MAX_MESSAGE,
    "search in a message cut to MAX_MESSAGE, only behind 'not found' or 'does not exist';"
    " starts with a literal, one bounded repeat.",
)
WAIT_IN_WORDS: Final = _pattern(
    r"(?P<n>\d{1,6}(?:\.\d{1,3})?) ?(?P<unit>毫秒|秒钟|秒|分钟|分) ?后(?:再|重)",
    MAX_MESSAGE,
    "search in a message cut to MAX_MESSAGE, only when it holds '后'; starts with a bounded"
    " digit run, every repeat bounded.",
)

# -- _stated_limits, _tool_refusals: limits and tool calls a vendor states in its message ----------

RATE_LIMIT_STATED: Final = (  # run on the lower-cased message, each behind its literal
    # OpenAI, Groq, Azure: "... on tokens per min (TPM): Limit 10000, Used 9348, Requested 5086."
    # ("Used" is left out when one request is larger than the limit)
    _pattern(
        r"on (?P<what>tokens|requests|images) per (?P<per>min|minute|day|hour)\b[^:]{0,40}:"
        r" limit (?P<value>\d{1,12})(?:, used (?P<used>\d{1,12}))?"
        r"(?:, requested (?P<requested>\d{1,12}))?",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, every repeat bounded.",
    ),
    # Moonshot: "request reached project TPM rate limit, current: 1410, limit: 100"
    _pattern(
        r"(?P<what>[tr])p(?P<per>[mhd]) rate limit, current: (?P<used>\d{1,12}),"
        r" limit: (?P<value>\d{1,12})",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; the literal ' rate limit, current: ' is"
        " tested first; every repeat bounded.",
    ),
    # Gemini: "Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_
    # free_tier_requests, limit: 0, model: gemini-2.5-pro"
    _pattern(
        r"quota exceeded for metric: (?P<metric>[\w./-]{1,160}), limit: (?P<value>\d{1,12})",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, every repeat bounded.",
    ),
)
TOOL_NAME_STATED: Final = (  # run on the vendor's message as it came (names keep their case)
    # Groq: "attempted to call tool 'listFiles' which was not in request.tools"
    _pattern(
        r"call tool '(?P<name>[^']{1,128})'",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, one bounded repeat.",
    ),
    # Groq: "parameters for tool HassTurnOff did not match schema: errors: [...]"
    _pattern(
        r"parameters for tool (?P<name>\S{1,128}) did not match schema(?:: (?P<errors>.{1,600}))?",
        MAX_MESSAGE,
        "search in a message cut to MAX_MESSAGE; starts with a literal, every repeat bounded.",
    ),
)

# -- providers/bedrock.py ---------------------------------------------------------------------

BOTOCORE_PRINTED: Final = _pattern(
    r"An error occurred \(([A-Za-z][\w.]{0,127})\) when calling the (\w{1,64}) operation"
    r"(?: \(reached max retries: \d{1,4}\))?: ",
    MAX_MESSAGE,
    "search in a text cut to MAX_MESSAGE (botocore's ClientError text); starts with a literal,"
    " every repeat bounded.",
)

# -- providers/google/ --------------------------------------------------------------------------

GOOGLE_CANONICAL: Final = _pattern(
    r"[A-Z][A-Z0-9_]{1,63}",
    None,
    "fullmatch on a status of any length: one attempt that stops after 64 characters.",
)
GOOGLE_PRINTED_REASON: Final = _pattern(
    r"""["']?\breason["']?: ?["']([A-Z][A-Z0-9_]{1,63})["']""",
    MAX_MESSAGE,
    "finditer in a printed error text cut to MAX_MESSAGE (an ErrorInfo reason as protobuf text,"
    " JSON or a Python repr); at most 78 characters per try.",
)
GOOGLE_PRINTED_STATUS: Final = _pattern(
    r"^(\d{3}) |\[(\d{3})(?: [A-Za-z ]{1,40})?\]",
    MAX_MESSAGE,
    "search in a printed error text cut to MAX_MESSAGE (google.api_core's leading status, the JS"
    " SDK's [403 Forbidden]); at most 47 characters per try.",
)
GOOGLE_FUNCTION: Final = _pattern(
    r"\bfunction (?P<name>[A-Za-z_][\w-]{0,63}(?:\.[A-Za-z_][\w-]{0,63}){0,3})",
    MAX_MESSAGE,
    "search in a message cut to MAX_MESSAGE; starts with a literal, at most 265 characters"
    " per try.",
)

# -- providers/http.py ------------------------------------------------------------------------
# Class names of requests, urllib3 and aiohttp exceptions (cut to 256 characters): literal
# alternations, one character compared per alternative and position.

HTTP_REDIRECT: Final = _pattern(r"Redirect", 256, "a literal, in a class name.")
HTTP_CUT_SHORT: Final = _pattern(
    r"ChunkLength|IncompleteRead|ChunkedEncoding|Payload", 256, "literals, in a class name."
)
HTTP_MISUSE: Final = _pattern(
    r"^(?:Invalid|Missing|NonHttp|URLRequired|Location|URLScheme|ProxyScheme"
    r"|TimeoutState|BodyNotHttplib|Unrewindable|StreamConsumed|ClosedPool|HostChanged)",
    256,
    "anchored literals, in a class name.",
)
HTTP_TIMEOUT: Final = _pattern(r"Timeout", 256, "a literal, in a class name.")
HTTP_DECODING: Final = _pattern(
    r"Decod|ContentType|NotChunked|HeaderParsing", 256, "literals, in a class name."
)
HTTP_CONNECTION: Final = _pattern(
    r"Connect|Disconnect|Proxy|SSL|Certificate|NameResolution|Retry|Protocol|Pool"
    r"|Fingerprint|Reset",
    256,
    "literals, in a class name.",
)
HTTP_RESPONSE: Final = _pattern(r"ResponseError", 256, "a literal, in a class name.")
HTTP_FOOTER: Final = _pattern(
    r"(?i)<hr[^>]{0,80}>\s{0,20}<center>\s{0,20}([A-Za-z][\w.-]{0,40})",
    65536,
    "search in the first 64 KiB of a page; starts with a literal, at most 173 characters per try.",
)
HTTP_RESET: Final = _pattern(
    r"reset reason: ([a-z][a-z ]{0,60}[a-z])",
    1024,
    "search in the first 1024 characters of an Envoy text; starts with a literal.",
)
HTTP_GFE_TITLE: Final = _pattern(
    r"^Error \d{3} \(.{1,60}\)!!1$",
    500,
    "match (anchored) on a page title, itself at most 500 characters.",
)
HTTP_QUERY: Final = _pattern(
    r"\?[^\s'\"()<>?]{0,2000}=[^\s'\"()<>]{0,4000}",
    1025,
    "sub in an exception message cut to 1024 characters (and the ellipsis that marks the cut);"
    " starts with a literal.",
)

# -- bindings: JSON-RPC, A2A ---------------------------------------------------------------------

JSONRPC_UNKNOWN_TOOL: Final = _pattern(
    r"(?i)unknown tool|no such tool|tool\b.{0,200}\b(?:not found|does not exist)",
    MAX_MESSAGE,
    "search in a JSON-RPC error message cut to 2048 characters; each alternative starts with"
    " a literal and its one repeat is bounded (200).",
)
A2A_JSONRPC_TEXT: Final = _pattern(
    r"JSON-RPC Error (-?\d{1,12})",
    MAX_MESSAGE,
    "search in an A2A exception message cut to 2048 characters; starts with a literal.",
)

# -- frameworks: messages of the readers' exceptions -----------------------------------------
# Each runs on the exception's text cut to MAX_MESSAGE characters at the call.

PYDANTIC_AI_OUTPUT_RETRIES: Final = _pattern(
    r"Exceeded maximum output retries \((\d{1,12})\)",
    MAX_MESSAGE,
    "search; starts with a literal, one bounded repeat.",
)
PYDANTIC_AI_TOOL_RETRIES: Final = _pattern(
    r"Tool '([^']{0,200})' exceeded max retries count of (\d{1,12})",
    MAX_MESSAGE,
    "search; starts with a literal, every repeat bounded.",
)
PYDANTIC_AI_LIMIT: Final = _pattern(
    r"the (\w{1,40}?)_limit of ([\d.]{1,30})(?: \(\w{1,40}=([\d.]{1,30})\))?",
    MAX_MESSAGE,
    "search; starts with a literal, every repeat bounded.",
)
PYDANTIC_AI_TIMED_OUT: Final = _pattern(
    r"Timed out after ([\d.]{1,30}) seconds",
    MAX_MESSAGE,
    "match (anchored): one attempt.",
)
AGENTS_TURNS: Final = _pattern(
    r"Max turns \((\d{1,12})\) exceeded",
    MAX_MESSAGE,
    "search; starts with a literal, one bounded repeat.",
)
AGENTS_TOOL: Final = _pattern(
    r"Tool (\S{1,200}) not found",
    MAX_MESSAGE,
    "search; starts with a literal, one bounded repeat.",
)
AGENTS_TOOL_JSON: Final = _pattern(
    r"Invalid JSON input for tool (\S{1,200}?):?(?:\s|$)",
    MAX_MESSAGE,
    "search; starts with a literal, one bounded repeat.",
)
AGENTS_RUN_TOOL: Final = _pattern(
    r"Error running tool (\S{1,200}?):",
    MAX_MESSAGE,
    "search; starts with a literal, one bounded repeat.",
)
AGENTS_ERROR_EVENT: Final = _pattern(
    r"(?s)code=([\w.-]{1,200})(?:; message=(.{0,2048}?))?(?:; param=.{0,2048})?\.?$",
    MAX_MESSAGE,
    "search; starts with a literal; every repeat bounded by the cut text's length.",
)
INSTRUCTOR_REFUSED: Final = _pattern(
    r"(?s)Unable to generate a response due to (.{1,2048})",
    MAX_MESSAGE,
    "match (anchored): one attempt.",
)
INSTRUCTOR_USED: Final = _pattern(
    r"after (\d{1,12}) tokens",
    MAX_MESSAGE,
    "search; starts with a literal, one bounded repeat.",
)

# -- _walls: when a wall comes back, and the model it is for, in a vendor's words -------------

RESET_DATE: Final = _pattern(
    r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})"
    r"(?:(?:t| at | )(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.\d{1,9})?)?)?"
    r" ?(?P<zone>z\b|utc\b|gmt\b|[+-]\d{2}:?\d{2})?",
    MAX_MESSAGE,
    "search in a message cut to MAX_MESSAGE, only when it says a wall comes back ('regain',"
    " 'reset', 'until', ...); starts with a bounded digit run, every repeat bounded.",
)
RESET_AMOUNT: Final = _pattern(
    r"(?:about |approximately |around |roughly |~ ?)?(?P<n>\d{1,9}(?:\.\d{1,6})?) ?"
    r"(?P<unit>milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d"
    r"|weeks?|w)\b",
    MAX_MESSAGE,
    "match (anchored) right after 'reset in' and the like, in a message cut to MAX_MESSAGE:"
    " one attempt, every repeat bounded.",
)
RESET_CLOCK: Final = _pattern(
    r"(?P<h>\d{1,2})(?::(?P<mi>\d{2}))? ?(?P<ampm>am|pm)?"
    r"(?: ?(?:gmt|utc)(?P<off>[+-]\d{1,2}(?::?\d{2})?)?)?",
    MAX_MESSAGE,
    "match (anchored) right after 'resets at' and the like, in a message cut to MAX_MESSAGE:"
    " one attempt, every repeat bounded.",
)
MODEL_NAMED: Final = _pattern(
    r"\bfor (?:model )?`?(?P<a>[a-z0-9][a-z0-9._:/-]{1,80})`? in (?:org|project)"
    r"|\bmodel[:=] ?`?(?P<b>[a-z0-9][a-z0-9._:/-]{1,80})",
    MAX_MESSAGE,
    "search in a message cut to MAX_MESSAGE; each branch starts with a literal, every repeat"
    " bounded.",
)

# -- resilience: the breaker's tenant -----------------------------------------------------------

RESILIENCE_TENANT: Final = _pattern(
    r"[A-Za-z0-9._-]{1,64}",
    None,
    "fullmatch on a tenant name: one attempt, one bounded class repeat (it becomes part of a "
    "Redis key, read by ACL patterns and SCAN).",
)


# -- _redact.py: credentials -------------------------------------------------------------------
# The credential patterns are built from ``_redact``'s own field table and listed there, in
# ``_redact.PATTERNS``, each with the length it is cut to and why it is linear (their runs are
# unbounded greedy runs that cannot fail once begun, a different argument from the bounded
# repeats above); ``tests/hostile/test_leaks.py`` checks that list is complete.
