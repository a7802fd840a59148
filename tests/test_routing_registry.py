"""The registry (``providers.PROVIDERS``) is the only router.

Two proofs. First, adding a provider to the registry is enough: a copy of the package whose
registry declares one more vendor with its own SDK (``acme``, with its adapter module) and
one more native SDK of an OpenAI-compatible vendor (``nova``) is imported in a fresh
interpreter, and replay's SDK list, the openai adapter's base classes, the CLI's provider
lists and ``wrap()``'s dispatch all know them. Nothing but the registry's source is edited.
The two vendors, their SDKs and what those SDKs answer are made up here for the test; they
stand for no real vendor and no recorded response.

Second, the modules that route read no provider by name: their string literals are checked
against every name the registry declares (providers, native SDKs, their base exception
classes), with a short list of allowed places, each with its reason.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import normalize_errors
from normalize_errors.providers import GENERIC, PROVIDERS
from normalize_errors.replay import shipped

PACKAGE = Path(normalize_errors.__file__).parent

# -- adding a provider to the registry is enough ----------------------------------------------

NOVA = """\
NOVA_SDK: Final = Sdk(
    "nova",
    "novasdk",
    "Nova",
    "https://api.nova.test",
    "NovaError",
    generating=(("novasdk.resources.chat.completions", "Completions", frozenset({"create"})),),
)


_COMPATIBLE: Final = (
    NOVA_SDK,
"""

ACME = """\
    Provider(
        "acme",
        roots=("acmesdk",),
        generating=(("acmesdk.resources.chat", "Chat", frozenset({"complete"})),),
        replay=("acmesdk",),
    ),
    Provider(
        "http",
"""

ADAPTER = '''\
"""The adapter of the made-up vendor of tests/test_routing_registry.py."""

from typing import Any

from .._model._code_classes import class_for_code

NAME = "acme"
TABLE: tuple[Any, ...] = ()


def normalize(exc: BaseException) -> Any:
    return class_for_code("upstream.unavailable")("acme: down", upstream={"provider": NAME})


def from_response(status: Any, headers: Any, body: Any) -> Any:
    return class_for_code("upstream.unavailable")("acme: down", upstream={"provider": NAME})


def looks_like(body: Any) -> bool:
    return False


def diagnose(result: Any, tools: Any) -> Any:
    if isinstance(result, dict) and result.get("acme_stop") == "cut":
        return class_for_code("output.truncated")("acme: cut", upstream={"provider": NAME})
    return None


def diagnose_stream(chunks: Any, tools: Any) -> Any:
    return None


def stream_state(first: Any, keep_text: int = 0) -> Any:
    raise NotImplementedError
'''

SDKS = {
    # a made-up SDK with its own API, read by the acme adapter
    "acmesdk/__init__.py": """\
from .resources.chat import Chat


class AcmeError(Exception):
    pass


class Client:
    def __init__(self):
        self.chat = Chat(self)  # a resource holds its client, as the SDKs' do
""",
    "acmesdk/resources/__init__.py": "",
    "acmesdk/resources/chat.py": """\
class Chat:
    def __init__(self, client):
        self._client = client

    def complete(self, **kwargs):
        return {"acme_stop": "cut"}
""",
    # a made-up native SDK of an OpenAI-compatible vendor, shaped as a Stainless SDK is
    "novasdk/__init__.py": """\
from ._exceptions import NovaError
from .resources.chat.completions import Completions


class _Chat:
    def __init__(self, client):
        self._client = client  # a resource holds its client, as the SDKs' do
        self.completions = Completions(client)


class Nova:
    def __init__(self, api_key=None, base_url=None, max_retries=2, **options):
        self.api_key, self.base_url, self.max_retries = api_key, base_url, max_retries
        self.chat = _Chat(self)
""",
    "novasdk/_exceptions.py": """\
class NovaError(Exception):
    pass
""",
    "novasdk/resources/__init__.py": "",
    "novasdk/resources/chat/__init__.py": "",
    "novasdk/resources/chat/completions.py": """\
class Completions:
    def __init__(self, client):
        self._client = client

    def create(self, **kwargs):
        return {
            "object": "chat.completion",
            "choices": [
                {"index": 0, "finish_reason": "length", "message": {"role": "assistant",
                 "content": "cut"}}
            ],
        }
""",
}

PROBE = """\
import io, json, sys
import acmesdk, novasdk
from normalize_errors import HarnessError, normalize, wrap
from normalize_errors import _cli, replay
from normalize_errors._wrapping import _replay_calls
from normalize_errors.providers import NAMES, _routing
from normalize_errors.providers.openai import _errors

found = {"names": list(NAMES), "sdks": list(_replay_calls.SDKS)}
# replay: the new SDK's client is built as a Stainless client, pointed at its live API
client = _replay_calls._client(
    "openai", "sync", None, None, prepare=lambda c: c, options={}, sdk="nova"
)
found["replay_client"] = [type(client).__name__, client.base_url, client.max_retries]
found["replay_absent"] = replay._absent(_replay_calls.SDKS["nova"].module)
# the openai adapter: the base class of the new Stainless SDK
found["bases"] = "NovaError" in _errors._BASES and _errors.CLASSES.get("NovaError", 0) is None
found["roots"] = list(_errors.ROOTS)
found["nova_error"] = _routing.provider_of(novasdk.NovaError("x"))
found["acme_error"] = normalize(acmesdk.AcmeError("x")).code
# the CLI: --provider of classify takes the new name; cassettes knows it
_cli._parser().parse_args(["classify", "--provider", "acme"])
found["cassettes_acme"] = _cli.main(["cassettes", "--provider", "acme", sys.argv[1]], io.StringIO())
found["cassettes_acmx"] = _cli.main(["cassettes", "--provider", "acmx", sys.argv[1]], io.StringIO())
# wrap(): the new SDKs' clients are proxied and their generating methods' results checked
for name, call in (
    ("acme", lambda c: c.chat.complete(model="m")),
    ("nova", lambda c: c.chat.completions.create(model="m", messages=[])),
):
    client = wrap(acmesdk.Client() if name == "acme" else novasdk.Nova(api_key="k"))
    try:
        call(client)
    except HarnessError as err:
        found["wrap_" + name] = [err.code, err.upstream.get("provider")]
    else:
        found["wrap_" + name] = None
print(json.dumps(found))
"""


def _with_more_providers(root: Path) -> Path:
    """A copy of the package whose registry declares ``acme`` and ``nova`` too, beside the
    made-up SDKs they read."""
    copy = root / "normalize_errors"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PACKAGE.parent / "providers", root / "providers")  # the data files
    registry = copy / "providers" / "__init__.py"
    source = registry.read_text(encoding="utf-8")
    for marker, text in (
        ("_COMPATIBLE: Final = (\n", NOVA),
        ('    Provider(\n        "http",\n', ACME),
    ):
        assert source.count(marker) == 1, marker
        source = source.replace(marker, text)
    registry.write_text(source, encoding="utf-8")
    (copy / "providers" / "acme.py").write_text(ADAPTER, encoding="utf-8")
    for path, text in SDKS.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_a_provider_added_to_the_registry_is_known_everywhere(tmp_path: Path) -> None:
    root = _with_more_providers(tmp_path)
    ran = subprocess.run(
        [sys.executable, "-c", PROBE, str(shipped())],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    found = json.loads(ran.stdout)
    assert "acme" in found["names"]
    assert found["names"][-1] == GENERIC
    assert found["sdks"][0] == "nova"
    assert found["replay_client"] == ["Nova", "https://api.nova.test", 0]
    assert found["replay_absent"] is None  # importable: its cassettes would replay
    assert found["bases"] is True
    assert "novasdk" in found["roots"]
    assert found["nova_error"] == "openai"
    assert found["acme_error"] == "upstream.unavailable"  # read by the acme adapter
    # 2: a refusal; without PyYAML (CI's no-SDK environment) `cassettes` refuses both, naming it
    listed = 0 if importlib.util.find_spec("yaml") is not None else 2
    assert (found["cassettes_acme"], found["cassettes_acmx"]) == (listed, 2)
    assert found["wrap_acme"] == ["output.truncated", "acme"]
    assert found["wrap_nova"] == ["output.truncated", "openai"]


def test_an_unregistered_name_is_refused_where_a_registered_one_is_taken() -> None:
    """The counterpart of the test above, in this interpreter: ``acme`` is no provider here."""
    from normalize_errors import _cli
    from normalize_errors._wrapping._replay_calls import SDKS

    assert "nova" not in SDKS
    with pytest.raises(SystemExit):
        _cli._parser().parse_args(["classify", "--provider", "acme"])


# -- the routing modules name no provider -----------------------------------------------------

ROUTERS = (
    "providers/_routing.py",
    "_wrapping/_replay_calls.py",
    "_cli/__init__.py",
    "_wrapping/_wrap.py",
    "_facade.py",
    "providers/openai/_errors.py",
)
"""The modules that once routed by provider name or kept their own per-provider lists."""

_SDK_CALLS = frozenset({"openai", "anthropic", "google", "cohere", "http"})

ALLOWED: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    # (module, the top-level definition holding them): (the names, why they are there)
    ("_wrapping/_replay_calls.py", "BASE_URLS"): (
        _SDK_CALLS,
        "the live API of each provider's cassettes",
    ),
    ("_wrapping/_replay_calls.py", "DUMMY_KEYS"): (
        _SDK_CALLS,
        "a key of the shape each SDK accepts",
    ),
    ("_wrapping/_replay_calls.py", "CALLS"): (
        _SDK_CALLS,
        "the SDK calls a cassette scenario can name",
    ),
    ("_wrapping/_replay_calls.py", "_MODELS"): (_SDK_CALLS, "the model each scenario call names"),
    ("_wrapping/_replay_calls.py", "_kwargs"): (
        _SDK_CALLS,
        "each SDK's call arguments: its own code",
    ),
    ("_wrapping/_replay_calls.py", "_cohere_kwargs"): (
        _SDK_CALLS,
        "Cohere's call arguments: its code",
    ),
    ("_wrapping/_replay_calls.py", "_client"): (
        _SDK_CALLS | {"google.genai"},
        "how each SDK's client is built: that SDK's own code",
    ),
    ("_wrapping/_replay_calls.py", "call"): (
        _SDK_CALLS,
        "how each SDK's call is made: its own code",
    ),
    ("_wrapping/_replay_calls.py", "acall"): (
        _SDK_CALLS,
        "how each SDK's async call is made: its code",
    ),
    ("providers/openai/_errors.py", "NAME"): (frozenset({"openai"}), "the adapter's own name"),
    ("_cli/__init__.py", "_codes"): (frozenset({"http"}), "the column of a code's HTTP status"),
    ("_cli/__init__.py", "_parser"): (
        frozenset({"http"}),
        "a corpus case's kind: an HTTP response",
    ),
    ("_wrapping/_wrap.py", "_Options"): (frozenset({"http"}), "the name of a slot"),
}
"""The places of those modules where a registered name may be written, each with its reason:
replay's scenario calls (how each SDK's client is built and called is that SDK's own code,
not routing), and words that are a provider's name only by chance."""


def _registered_names() -> set[str]:
    """Every name the registry declares: providers, the roots of the vendors' SDKs, the native
    SDKs and their base classes. Not the HTTP libraries (the roots of ``GENERIC``): they are
    named as libraries (``httpx``'s ``MockTransport``), not to route."""
    names = {provider.name for provider in PROVIDERS}
    for provider in PROVIDERS:
        if provider.name != GENERIC:
            names.update(provider.roots)
        for sdk in provider.sdks:
            names.update({sdk.name, sdk.module, sdk.base})
    return names


def _literals(tree: ast.Module) -> list[tuple[str, int, str]]:
    """(top-level definition, line, text) of each string literal that is not a docstring."""
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            docstrings.add(id(first.value))
    for prev, node in zip(tree.body, tree.body[1:], strict=False):  # attribute docstrings
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(prev, (ast.Assign, ast.AnnAssign))
        ):
            docstrings.add(id(node.value))
    found = []
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            where = top.name
        elif isinstance(top, ast.Assign) and isinstance(top.targets[0], ast.Name):
            where = top.targets[0].id
        elif isinstance(top, ast.AnnAssign) and isinstance(top.target, ast.Name):
            where = top.target.id
        else:
            where = ""
        for node in ast.walk(top):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
            ):
                found.append((where, node.lineno, node.value))
    return found


@pytest.mark.parametrize("module", ROUTERS)
def test_routing_modules_name_no_provider(module: str) -> None:
    names = _registered_names()
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    named = [
        f"{module}:{line} {text!r} in {where or 'module level'}"
        for where, line, text in _literals(tree)
        if text in names and text not in ALLOWED.get((module, where), (frozenset(),))[0]
    ]
    assert named == []


def test_the_grep_sees_a_provider_name() -> None:
    """The check above finds a name where there is one (``_routing`` before this change)."""
    source = 'def detect():\n    """Anthropic\'s."""\n    return "anthropic"\n'
    assert _literals(ast.parse(source)) == [("detect", 3, "anthropic")]


def test_every_allowed_place_still_names_a_provider() -> None:
    """An allowed place that no longer names one is taken off the list."""
    names = _registered_names()
    for (module, where), (allowed, _) in ALLOWED.items():
        tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
        texts = {text for w, _, text in _literals(tree) if w == where and text in names}
        assert texts, (module, where)
        assert texts <= allowed, (module, where, texts)
