"""Plain helpers the test modules import: the one schema validator and the one cassette reader.

Where things live:

* here (``tests/support.py``): what tests import by name. ``valid`` (the one validity check
  of a harness error, against ``VALIDATOR``, the draft's JSON Schema loaded once), the
  cassette reader (``cassette``, ``cassettes``, ``recorded``), ``raised``, ``is_instance``
  and ``deciding_rows`` (which rows of a provider's ``TABLE`` decide a set of inputs);
* ``tests/conftest.py``: what pytest finds by itself: the Hypothesis profiles every
  property test runs under, and fixtures over these helpers;
* ``tests/hostile/conftest.py``: the timing of hostile inputs (hang detection, slowest-input
  report).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema
import pytest

from normalize_errors import HarnessError
from normalize_errors.replay import cassette_paths, find, read_cassette, shipped

SCHEMA: dict[str, Any] = json.loads(
    resources.files("normalize_errors").joinpath("schema/harness-error.schema.json").read_text()
)
"""The draft's JSON Schema of a harness error, as shipped in the package."""
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
"""The one validator of that schema (Draft 2020-12), built once for the whole run."""

PLANTED_KEY = "sk-proj-" + "Q7rT9xLm2Vb8Nc4Zp1Ks6Hd3Jf5Wg0Ye"
"""A credential (made up, never issued) that tests plant in inputs; ``valid`` fails if it, or
a long piece of it, comes out of an error."""

LAST_RESORT = "normalize-errors could not"
"""How the facade's last-resort answer starts: an adapter raised, which is a bug."""


def examples(ci: int) -> int:
    """``max_examples`` for a property whose CI count is ``ci``: that count under the ``ci``
    profile, at most the profile's own under the smaller ``dev`` profile (a developer's run),
    and the profile's own (5000 or 100,000) under the long hostile profiles, so a property's
    own ``@settings`` never caps a long run (the profiles are registered in
    ``tests/conftest.py``)."""
    from hypothesis import settings

    profile: int = settings().max_examples  # a fresh settings object takes the loaded profile's
    in_ci: int = settings.get_profile("ci").max_examples
    if profile < in_ci:
        return min(ci, profile)
    return ci if profile == in_ci else profile


def valid(err: Any, *, last_resort: bool = False) -> HarnessError:
    """``err`` after checking every invariant a harness error must hold.

    It is a ``HarnessError``; its problem object validates against the shipped schema,
    serialises as strict JSON and round-trips through ``from_dict`` with its code; its
    ``retry_after`` is finite and non-negative if set; ``PLANTED_KEY`` is nowhere in
    ``str``, ``repr`` or the JSON; and it is not the facade's last-resort answer (an adapter
    that raised), unless the test means it (``last_resort=True``).
    """
    assert isinstance(err, HarnessError), type(err)
    if not last_resort:
        assert not (err.detail or "").startswith(LAST_RESORT), err.upstream
    data = err.to_dict()
    VALIDATOR.validate(data)
    text = json.dumps(data, allow_nan=False)
    assert HarnessError.from_dict(data).code == err.code
    assert err.retry_after is None or (math.isfinite(err.retry_after) and err.retry_after >= 0)
    for out in (str(err), repr(err), text):
        assert PLANTED_KEY not in out
        assert PLANTED_KEY[8:30] not in out
    return err


def raised(call: Callable[[], object]) -> BaseException:
    """The exception ``call`` raises (the test fails if it raises none)."""
    try:
        call()
    except Exception as exc:
        return exc
    raise AssertionError("no exception was raised")


def stream_of(err: object) -> dict[str, Any]:
    """The summary a stream's error carries of what reached the caller
    (``err.problem.stream``); the test fails if ``err`` has none."""
    assert isinstance(err, HarnessError), type(err)
    summary = err.problem.stream
    assert summary is not None, err.problem.upstream
    return dict(summary)


def is_instance(obj: object, cls: type) -> bool:
    """``isinstance`` that type checkers do not narrow with.

    A drop-in error is an instance of a harness class and of a vendor class at once; mypy
    believes no class can inherit both (their ``__init__`` signatures differ) and would call
    the code after such a check unreachable.
    """
    return isinstance(obj, cls)


OPTIONAL_PROVIDERS: dict[str, str] = {"cohere": "cohere"}
"""Cassette providers whose SDK only some environments install (see .ci/run)."""


def needed(scenario: Any) -> None:
    """Skip, naming the SDK, when a replay scenario's SDK is not installed here.

    The native SDKs of OpenAI-compatible vendors (``metadata.sdk``) and Cohere's are installed
    in the newest environments only, and fireworks-ai in one of its own (.ci/run says why).
    """
    from normalize_errors._wrapping._replay_calls import SDKS

    if scenario.sdk is not None:
        pytest.importorskip(SDKS[scenario.sdk].module, reason=f"needs the {scenario.sdk} SDK")
    elif scenario.provider in OPTIONAL_PROVIDERS:
        module = OPTIONAL_PROVIDERS[scenario.provider]
        pytest.importorskip(module, reason=f"needs the {module} SDK")


# -- the cassette reader ---------------------------------------------------------------------


class Cassette(NamedTuple):
    """One cassette file as the tests read it: its metadata and its recorded exchanges.

    The members below read the first interaction's response (every shipped cassette but
    the retried ones has one); ``interactions`` has them all, requests included.
    """

    path: Path
    metadata: dict[str, Any]
    interactions: list[dict[str, Any]]

    @property
    def name(self) -> str:
        """``provider/scenario``, the public name ``replay.find`` accepts."""
        return f"{self.path.parent.name}/{self.path.stem}"

    @property
    def provider(self) -> str:
        """The provider the metadata names (the folder's name where it names none)."""
        return str(self.metadata.get("provider", self.path.parent.name))

    @property
    def expect(self) -> dict[str, Any]:
        """What harness error the recorded failure must give (``metadata.expect``)."""
        return dict(self.metadata.get("expect") or {})

    @property
    def status(self) -> int:
        """The first response's HTTP status."""
        return int(self.interactions[0]["response"]["status"]["code"])

    @property
    def headers(self) -> dict[str, str]:
        """The first response's headers, names as recorded, the first value of each."""
        raw = self.interactions[0]["response"]["headers"] or {}
        return {k: v[0] if isinstance(v, list) else v for k, v in raw.items()}

    @property
    def body(self) -> str:
        """The first response's body, as text."""
        return str(self.interactions[0]["response"]["body"]["string"])

    @property
    def content(self) -> bytes:
        """The first response's body, as the bytes a client received."""
        return self.body.encode("utf-8")

    @property
    def stream(self) -> bool:
        """Whether the call streamed (its body is server-sent events)."""
        return bool(self.metadata.get("stream", False))

    def events(self) -> list[Any]:
        """The JSON values of the ``data:`` lines of a server-sent-events body (``[DONE]`` and
        other lines that are no JSON are left out)."""
        found = []
        for line in self.body.splitlines():
            if line.startswith("data:"):
                try:
                    found.append(json.loads(line[5:]))
                except ValueError:
                    continue
        return found

    def json(self) -> Any:
        """The body parsed as JSON, or ``None`` if it is not JSON."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None


@functools.cache
def _read(path: Path) -> Cassette:
    # PyYAML: absent in CI's no-SDK environment, where cassette tests skip. Read by the
    # package's one cassette reader, so every shipped cassette is held to its checks.
    data = read_cassette(path)
    return Cassette(path, dict(data.get("metadata") or {}), list(data.get("interactions") or []))


def cassette(source: str | Path) -> Cassette:
    """The cassette ``source`` names: ``"provider/scenario"`` of a shipped one, or a path.

    Read once per run: the result is shared, so treat it as read-only.
    """
    return _read(find(source).resolve())


def cassettes(provider: str | None = None) -> list[Cassette]:
    """Every shipped cassette (of ``provider``'s folder, if given), sorted by path."""
    folder = [shipped() / provider] if provider else []
    return [_read(path.resolve()) for path in cassette_paths(folder)]


def recorded(provider: str, name: str) -> tuple[int, dict[str, str], bytes]:
    """The (status, headers, body bytes) of a shipped cassette, to serve from memory."""
    found = cassette(f"{provider}/{name}")
    return found.status, found.headers, found.content


def wrapped_openai(name: str) -> Any:
    """``wrap()`` of a real openai client (no SDK retries) whose every request is answered
    from memory with the shipped cassette ``openai/<name>``: its failures are drop-ins."""
    import openai

    from normalize_errors import wrap
    from normalize_errors._wrapping._replay_calls import http_library

    http = http_library("openai")
    status, headers, body = recorded("openai", name)

    def answer(request: Any) -> Any:
        return http.Response(status, headers=headers, content=body)

    client = openai.OpenAI(
        api_key="sk-test",
        max_retries=0,
        http_client=http.Client(transport=http.MockTransport(answer)),
    )
    return wrap(client)


# -- which rows of a provider's table decide ---------------------------------------------------


@contextmanager
def deciding_rows() -> Iterator[set[tuple[str, int]]]:
    """Collect ``(provider, index)`` of every ``TABLE`` row that decides inside the block.

    A table is tried in order and the first row that matches decides, so the rows whose
    ``holds`` answers true (``first_match`` asks it of the rows whose ids it found) are
    exactly the rows that decided something. This is the one
    place in the tests that knows how rows are tried: if the engine changes, change it here.
    """
    from normalize_errors._reading._rules import Rule
    from normalize_errors.providers import NAMES
    from normalize_errors.providers._routing import available

    index: dict[int, tuple[str, int]] = {}
    for name in NAMES:
        module = available(name)
        for position, row in enumerate(getattr(module, "TABLE", ())):
            index[id(row)] = (name, position)
    hits: set[tuple[str, int]] = set()
    original = Rule.holds

    def holds(row: Rule, facts: Any) -> bool:
        answer = original(row, facts)
        if answer and id(row) in index:
            hits.add(index[id(row)])
        return answer

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Rule, "holds", holds)
        yield hits


def bodies_of(items: Iterable[Cassette]) -> Iterator[tuple[int | None, dict[str, str], Any]]:
    """The error responses of cassettes, as ``(status, headers, body)`` to classify.

    A failed response gives its status and bytes; a stream's error event (in a 200 response)
    gives the event with no status, as an adapter reads it from the stream.
    """
    for item in items:
        if item.status >= 400:
            yield item.status, item.headers, item.content
        elif "error" in item.body:
            for event in item.events():
                if isinstance(event, dict) and ("error" in event or event.get("type") == "error"):
                    yield None, {}, event


def needs(*modules: str) -> None:
    """Skip the calling test unless ``modules`` can be imported: for tests that run them in
    a child process, where a missing one would show only as the child's failure."""
    for module in modules:
        pytest.importorskip(module)
