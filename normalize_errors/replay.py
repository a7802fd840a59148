"""Replay recorded provider failures offline, through the real SDK clients.

A cassette is a vcrpy YAML file (``version``, ``interactions``) whose ``metadata`` names
the scenario: provider, the SDK call, whether it streams, the public source of the
response, and the harness error it should give. ``normalize-errors replay`` and the test
suite run every shipped cassette this way; your own tests can do the same:

```python
from normalize_errors.replay import load, run

outcome = run(load("cassettes/anthropic/overloaded_529.yaml"))
outcome.error.code        # 'upstream.overloaded'
```

or replay one cassette around code of your own with ``use_cassette(path)``.

Needs the ``replay`` extra (vcrpy, PyYAML and the SDKs).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from . import _facade
from ._model._exceptions import HarnessError
from ._wrapping import _replay_calls
from ._wrapping._cassette import MAX_BYTES, CassetteError
from ._wrapping._cassette import read as read_cassette

__all__ = [
    "MAX_BYTES",
    "CassetteError",
    "Outcome",
    "Scenario",
    "cassette_paths",
    "catalog",
    "find",
    "load",
    "read_cassette",
    "run",
    "shipped",
    "use_cassette",
]

_MATCH_ON: Final = ("method", "scheme", "host", "port", "path", "query")


def shipped() -> Path:
    """The folder of the cassettes that ship with the package (or sit in the checkout)."""
    here = Path(__file__).resolve().parent
    inside = here / "cassettes"
    return inside if inside.is_dir() else here.parent / "cassettes"


def cassette_paths(paths: Sequence[str | Path] = ()) -> list[Path]:
    """Every cassette under ``paths`` (files or folders), default the shipped ones, sorted."""
    found: list[Path] = []
    for item in [Path(p) for p in paths] or [shipped()]:
        if item.is_dir():
            found.extend(sorted(item.rglob("*.yaml")))
        else:
            found.append(item)
    return found


def find(source: str | Path) -> Path:
    """The cassette file ``source`` names: a shipped cassette's name or a path.

    A shipped cassette is named ``provider/scenario`` (``"anthropic/overloaded_529"``); these
    names are public and stable. Anything else is read as the path of a cassette file.

    Raises:
        FileNotFoundError: no such cassette, with the closest shipped names.
    """
    path = Path(source)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        if not path.is_file():
            raise FileNotFoundError(f"no cassette file {str(path)!r}")
        return path
    name = str(source).strip("/")
    candidate = shipped() / f"{name}.yaml"
    if candidate.is_file():
        return candidate
    import difflib

    names = [f"{p.parent.name}/{p.stem}" for p in cassette_paths()]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise FileNotFoundError(
        f"no shipped cassette named {name!r}{hint} (`normalize-errors cassettes` lists them)"
    )


def catalog(paths: Sequence[str | Path] = ()) -> list[dict[str, Any]]:
    """One row per cassette (default: the shipped ones): what it holds and where it is from.

    Each row has ``name`` (``provider/scenario``, what the ``llm_faults`` fixture and
    ``find`` accept), ``provider``, ``scenario``, ``call``, ``stream``, ``status`` (of the
    first response), ``code`` (the harness code it should give, if its metadata says),
    ``summary``, ``source`` (the public page the response comes from) and ``path``.
    A file without scenario metadata is left out.

    Raises:
        CassetteError: a file is not a cassette that can be read (see ``read_cassette``).
    """
    rows = []
    for path in cassette_paths(paths):
        data = read_cassette(path)
        meta = data.get("metadata")
        if not isinstance(meta, dict) or "provider" not in meta:
            continue
        interactions = data.get("interactions") or []
        status = interactions[0]["response"]["status"]["code"] if interactions else None
        scenario = str(meta.get("name", path.stem))
        rows.append(
            {
                "name": f"{meta['provider']}/{scenario}",
                "provider": meta["provider"],
                "scenario": scenario,
                "call": meta.get("call"),
                "stream": bool(meta.get("stream", False)),
                "status": status,
                "code": (meta.get("expect") or {}).get("code"),
                "summary": meta.get("summary"),
                "source": (meta.get("source") or {}).get("url"),
                "path": str(path),
            }
        )
    return rows


class Scenario:
    """A cassette and what its metadata says about it."""

    def __init__(self, path: Path, metadata: dict[str, Any], interactions: int) -> None:
        self.path = path
        self.metadata = metadata
        self.interactions = interactions
        self.provider: str = metadata["provider"]
        self.sdk: str | None = metadata.get("sdk")
        """Another vendor's SDK that makes the call (``_replay_calls.SDKS``), else the
        provider's."""
        self.name: str = metadata.get("name", path.stem)
        self.call: str = metadata["call"]
        self.stream: bool = bool(metadata.get("stream", False))
        self.url: str | None = metadata.get("url")
        self.base_url: str | None = metadata.get("base_url")
        self.request: dict[str, Any] = dict(metadata.get("request") or {})
        self.client: dict[str, Any] = dict(metadata.get("client") or {})
        self.tools: list[Any] | None = metadata.get("tools")
        self.expect: dict[str, Any] = dict(metadata.get("expect") or {})
        self.source: dict[str, Any] = dict(metadata.get("source") or {})

    def __repr__(self) -> str:
        return f"Scenario({self.provider}/{self.name})"


def load(path: str | Path) -> Scenario:
    """Read a cassette's metadata.

    Raises:
        CassetteError: (a ``ValueError``) the file is not a cassette with scenario metadata,
            or is refused by ``read_cassette`` (too large, YAML aliases, malformed).
    """
    path = Path(path)
    data = read_cassette(path)
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        raise CassetteError(path, "not a normalize-errors cassette (no metadata)")
    for key in ("provider", "call"):
        if key not in metadata:
            raise CassetteError(path, f"metadata has no {key!r}")
    return Scenario(path, metadata, len(data.get("interactions") or ()))


@contextlib.contextmanager
def use_cassette(path: str | Path, *, allow_unplayed: bool = False) -> Iterator[Any]:
    """Replay ``path`` around the block; nothing reaches the network.

    Requests are matched on method, scheme, host, port, path and query. Unless
    ``allow_unplayed``, leaving an interaction unplayed fails the block. vcrpy is handed
    the cassette as ``read_cassette`` read and checked it, never the file itself.

    Raises:
        CassetteError: the file is refused by ``read_cassette``.
    """
    import vcr

    recorder = vcr.VCR(record_mode="none", match_on=_MATCH_ON, decode_compressed_response=False)
    recorder.register_persister(_CheckedPersister)
    with recorder.use_cassette(str(path)) as cassette:
        yield cassette
        if not allow_unplayed and not cassette.all_played:
            raise AssertionError(
                f"{path}: {len(cassette.data) - cassette.play_count} interaction(s) unplayed"
            )


_REQUEST_KEYS: Final = frozenset({"method", "uri", "body", "headers"})
"""The members of a recorded request, as vcrpy reads them (``vcr.request.Request``)."""


class _CheckedPersister:
    """A vcrpy persister that reads cassettes with ``read_cassette`` (vcrpy's own reads
    the file with no size cap and no refusal of YAML aliases) and never writes one."""

    @classmethod
    def load_cassette(cls, cassette_path: str | Path, serializer: Any) -> Any:
        from vcr.serialize import deserialize

        data = read_cassette(cassette_path)
        if "interactions" not in data:
            raise CassetteError(cassette_path, "no interactions to replay")
        for n, item in enumerate(data["interactions"]):
            request = item.get("request")
            if not isinstance(request, dict) or set(request) != _REQUEST_KEYS:
                keys = ", ".join(sorted(_REQUEST_KEYS))
                raise CassetteError(cassette_path, f"interactions[{n}].request: expected {keys}")
        return deserialize(data, _Given)

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: Any, serializer: Any) -> None:
        raise RuntimeError(f"{cassette_path}: replay never writes a cassette")


class _Given:
    """A vcrpy serializer whose "text" is the cassette already read and checked."""

    @staticmethod
    def deserialize(data: Any) -> Any:
        return data


def _missing_sdk(scenario: Scenario) -> str | None:
    """The module of the SDK a scenario replays through, when it cannot be imported here.

    Each cassette names its SDK: the provider's (``openai``, ``anthropic``, ``google.genai``,
    ``cohere`` with the ``httpx`` it is given), the native SDK of an OpenAI-compatible vendor
    (``metadata.sdk``), or for ``http`` cassettes an HTTP library (``httpx``, else
    ``httpx2``). An install with only some of them (``normalize-errors[openai,anthropic,
    testing]``) replays the cassettes it can and skips the others by this name.
    """
    if scenario.sdk is not None:
        return _absent(_replay_calls.SDKS[scenario.sdk].module)
    if scenario.provider == "http":
        if _absent("httpx") is None or _absent("httpx2") is None:
            return None
        return "httpx"
    for module in _provider_sdks(scenario.provider):  # its Provider.replay
        if _absent(module) is not None:
            return module
    return None


def _absent(module: str) -> str | None:
    """``module`` when it cannot be imported here (not installed, one of its own
    dependencies missing, or blocked), else None."""
    import importlib
    import importlib.util

    try:
        if importlib.util.find_spec(module) is None:
            return module
        importlib.import_module(module)
    except ImportError:  # a parent package or a dependency of the SDK is missing
        return module
    return None


def _provider_sdks(provider: str) -> tuple[str, ...]:
    from .providers import PROVIDERS

    return next((p.replay for p in PROVIDERS if p.name == provider), ())


_DISTRIBUTIONS: Final = {
    "google.genai": "google-genai",
    "cerebras.cloud.sdk": "cerebras-cloud-sdk",
    "fireworks": "fireworks-ai",
    "mistralai.client": "mistralai",
}
"""The distribution to ``pip install`` for an SDK module whose name differs from it."""


class Outcome:
    """What replaying a scenario gave: the SDK's exception or result, and the harness error."""

    def __init__(
        self,
        scenario: Scenario,
        mode: str,
        *,
        exception: BaseException | None = None,
        result: Any = None,
        error: HarnessError | None = None,
    ) -> None:
        self.scenario = scenario
        self.mode = mode
        self.exception = exception
        self.result = result
        self.error = error

    @property
    def signal(self) -> str:
        """What the vendor raised (its class) or the stop reason that failed."""
        if self.exception is not None:
            return type(self.exception).__name__
        if self.error is not None:
            stop = self.error.upstream.get("stop_reason")
            if stop:
                return f"stop_reason={stop}"
            if self.error.upstream.get("in_stream"):
                return "stream error event"
            tool = (self.error.location or {}).get("tool_name")
            if tool:
                return f"tool call {tool}"
        status = getattr(self.result, "status_code", None)
        return f"HTTP {status}" if status is not None else "result"

    def mismatches(self) -> list[str]:
        """How the harness error differs from the scenario's ``expect``; empty if it agrees.

        An ``http`` cassette records a response, not a library: its ``upstream.exception``
        names httpx's class, and a replay through httpx2 (an install without httpx) is
        held to httpx2's class of the same name.
        """
        expect = self.scenario.expect
        wanted = (expect.get("upstream") or {}).get("exception")
        library = type(self.exception).__module__.partition(".")[0] if self.exception else ""
        if (
            self.scenario.provider == "http"
            and library == "httpx2"
            and isinstance(wanted, str)
            and wanted.startswith("httpx.")
        ):
            upstream = {**expect["upstream"], "exception": "httpx2." + wanted[len("httpx.") :]}
            expect = {**expect, "upstream": upstream}
        return _compare(expect, self.error)


def _compare(expect: dict[str, Any], error: HarnessError | None) -> list[str]:
    """The members of ``expect`` that ``error`` does not have (``upstream`` by subset)."""
    if error is None:
        return ["no harness error"] if expect else []
    error = error.problem  # the harness view, also of a drop-in
    problems = []
    for key, wanted in expect.items():
        if key in ("note", "notes"):
            continue
        if key == "upstream":
            for name, value in wanted.items():
                got = error.upstream.get(name)
                if got != value:
                    problems.append(f"upstream.{name}: expected {value!r}, got {got!r}")
            continue
        got = getattr(error, key, None)
        if key == "quota" and isinstance(wanted, dict):
            problems.extend(_quota_mismatches(wanted, error))
            continue
        if key == "retry_after" and isinstance(got, float) and isinstance(wanted, (int, float)):
            if abs(got - wanted) > 1e-6:
                problems.append(f"retry_after: expected {wanted!r}, got {got!r}")
            continue
        if got != wanted:
            problems.append(f"{key}: expected {wanted!r}, got {got!r}")
    return problems


def _quota_mismatches(wanted: dict[str, Any], error: HarnessError) -> list[str]:
    """The members of an expected ``quota`` (a subset of ``Quota.to_dict()``; numbers to the
    millisecond) that ``error.quota`` does not have."""
    if error.quota is None:
        return ["quota: expected a quota, got None"]
    got = error.quota.to_dict()
    problems = []
    for name, value in wanted.items():
        have = got.get(name)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if number and isinstance(have, (int, float)) and abs(have - value) <= 1e-3:
            continue
        if have != value:
            problems.append(f"quota.{name}: expected {value!r}, got {have!r}")
    return problems


def _judge(scenario: Scenario, mode: str, result: Any) -> Outcome:
    """The harness error a result means: an HTTP response, stream chunks or an SDK result."""
    if scenario.provider == "http":
        status = result.status_code
        if status >= 400:
            try:
                result.raise_for_status()
            except Exception as exc:
                return Outcome(scenario, mode, exception=exc, error=_facade.normalize(exc))
        err = _facade.from_response(status, result.headers, result.content)
        return Outcome(scenario, mode, result=result, error=err)
    found: HarnessError | None
    if scenario.stream or scenario.call.endswith("_stream"):
        found = _facade.diagnose_stream(result, provider=scenario.provider, tools=scenario.tools)
    else:
        found = _facade.diagnose(result, provider=scenario.provider, tools=scenario.tools)
    return Outcome(scenario, mode, result=result, error=found)


def run(
    scenario: Scenario, *, mode: str = "sync", prepare: _replay_calls.Prepare | None = None
) -> Outcome:
    """Replay ``scenario`` through the real SDK client (``mode`` "sync" or "async").

    ``prepare`` receives the SDK client before the call (to wrap it, for example).
    """
    request = dict(scenario.request)
    if scenario.tools is not None and scenario.provider in ("openai", "anthropic"):
        request.setdefault("tools", scenario.tools)  # the call offers them, as the user's did
    options: dict[str, Any] = {
        "stream": scenario.stream,
        "url": scenario.url,
        "base_url": scenario.base_url,
        "request": request,
        "client": scenario.client,
    }
    if scenario.sdk is not None:
        options["sdk"] = scenario.sdk
    if prepare is not None:
        options["prepare"] = prepare
    with use_cassette(scenario.path):
        try:
            if mode == "async":
                result = asyncio.run(
                    _replay_calls.acall(scenario.provider, scenario.call, **options)
                )
            else:
                result = _replay_calls.call(scenario.provider, scenario.call, **options)
        except Exception as exc:
            return Outcome(scenario, mode, exception=exc, error=_facade.normalize(exc))
        return _judge(scenario, mode, result)
