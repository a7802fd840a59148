"""The vendor SDKs' own client tests, run plain and with every client wrapped (issue 24).

For each SDK below, at the version installed in this environment: fetch its source
distribution from PyPI (it ships the SDK's tests), run a selection of those tests once plain
and once with ``.ci/wrap_clients.py``'s ``--wrap-clients`` (every client the tests build is
``wrap(client, check=False)``), and compare. A test that passes plain and does not pass
wrapped is a difference; the run fails on any difference not named in ``DIFFERENCES`` (with
its reason, which the docs repeat), and on a named one that no longer happens, so the list
stays true. Tests that fail plain (they need a network, a package not installed, or another
``websockets``) say nothing about ``wrap()`` and are not compared.

Usage: ``python .ci/vendor_suites.py [openai|anthropic|google-genai ...]`` (default: all).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE.parent / ".vendor-suites"

SUITES: dict[str, dict[str, list[str]]] = {
    # the client, its streams and the helpers of the HTTP API (chat, responses, streaming); the
    # realtime, websocket, browser, computer and workload-identity modules of tests/lib test
    # transports wrap() does not watch, and would take CI another eight minutes
    "openai": {
        "paths": [
            "tests/test_client.py",
            "tests/test_streaming.py",
            "tests/lib/chat",
            "tests/lib/responses",
            "tests/lib/streaming",
        ],
        "options": ["-o", "addopts=--tb=line"],
    },
    # the client, its streams, middleware, telemetry, responses and error classes, and the
    # helpers of tests/lib (tools, threads, environments, credentials, Bedrock, Vertex...); the
    # generated tests/api_resources need a mock server (Prism) that this run does not start
    "anthropic": {
        "paths": [
            "tests/test_client.py",
            "tests/test_streaming.py",
            "tests/test_middleware.py",
            "tests/test_open_telemetry.py",
            "tests/test_response.py",
            "tests/test_error_classes.py",
            "tests/test_exceptions.py",
            "tests/test_tracing.py",
            "tests/lib",
        ],
        "options": ["-o", "addopts=--tb=line -p tests._alias_httpx"],
    },
    # google-genai ships its tests inside the package; these run offline (the rest replay
    # recordings that the source distribution does not carry). `google` is a namespace
    # package: without consider_namespace_packages, pytest imports the tests' package as a
    # top-level `genai`, a second copy of the SDK whose clients nothing wraps
    "google-genai": {
        "paths": [
            "google/genai/tests/client",
            "google/genai/tests/errors",
            "google/genai/tests/afc",
            "google/genai/tests/types",
            "google/genai/tests/models",
        ],
        "options": ["-o", "addopts=--tb=line", "-o", "consider_namespace_packages=true"],
    },
}

NEW_OBJECT = (
    "a vendor exception is a new object: the test raises its own exception from a stand-in"
    " (for files.create, for a response body) and asserts the one caught `is` it; the drop-in"
    " is built from it (same class, members, cause and traceback), not the same object"
)
SUBCLASS = (
    "a drop-in's class is a subclass of the vendor's: the test asserts that `type(err)` is the"
    " vendor's class (APIConnectionError, APITimeoutError, AnthropicError, a status or error-code"
    " class); isinstance and except hold, and what it checks next (cause, message, attempts,"
    " status) is the vendor's"
)

DIFFERENCES: dict[str, dict[str, str]] = {
    "openai": {
        "tests/lib/streaming/agents/test_files.py::test_large_uploads_preserve_api_errors[": (
            NEW_OBJECT
        ),
    },
    "anthropic": {
        "tests/test_streaming.py::TestSync::test_sdk_error_from_read_is_not_wrapped": NEW_OBJECT,
        "tests/test_streaming.py::TestAsync::test_sdk_error_from_read_is_not_wrapped": NEW_OBJECT,
        "tests/test_client.py::TestAnthropic::test_dropped_response_body[": SUBCLASS,
        "tests/test_client.py::TestAsyncAnthropic::test_dropped_response_body[": SUBCLASS,
        "tests/test_streaming.py::TestSync::test_failed_read_raises_connection_error[": SUBCLASS,
        "tests/test_streaming.py::TestAsync::test_failed_read_raises_connection_error[": SUBCLASS,
        "tests/lib/test_credentials.py::TestAnthropicCredentials"
        "::test_duck_typed_token_is_rejected": SUBCLASS,
        "tests/lib/test_bedrock.py::test_status_error_class[": SUBCLASS,
        "tests/lib/test_bedrock.py::test_stream_raises_api_error_for_error_frame[": SUBCLASS,
        "tests/lib/test_bedrock_mantle.py::TestStatusErrors::test_status_error_class[": SUBCLASS,
        "tests/lib/test_vertex.py::TestAnthropicVertex::test_status_error_class[": SUBCLASS,
        "tests/lib/test_vertex.py::TestAsyncAnthropicVertex::test_status_error_class[": SUBCLASS,
    },
    "google-genai": {},
}
"""Per SDK: tests (node ids, or a prefix ending in ``::`` or ``[``) that pass plain and fail
wrapped on purpose, each with its reason (docs/guides/wrapping.md lists the reasons). Each was
checked by running it wrapped with only the assertion its reason names relaxed: it passed."""


def sdist(name: str, version: str) -> Path:
    """The source tree of ``name`` ``version``, fetched once from PyPI and unpacked."""
    stem = f"{re.sub(r'[-_.]+', '_', name)}-{version}"
    tree = WORK / stem
    if tree.is_dir():
        return tree
    WORK.mkdir(exist_ok=True)
    request = urllib.request.Request(
        f"https://pypi.org/simple/{name}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        files = json.load(answer)["files"]
    url = next(f["url"] for f in files if f["filename"].lower() == f"{stem}.tar.gz".lower())
    archive = WORK / f"{stem}.tar.gz"
    urllib.request.urlretrieve(url, archive)
    with tarfile.open(archive) as tar:
        tar.extractall(WORK, filter="data")
    return next(p for p in WORK.iterdir() if p.is_dir() and p.name.lower() == stem.lower())


def run(name: str, tree: Path, suite: dict[str, list[str]], wrapped: bool) -> dict[str, str]:
    """Each selected test's outcome, plain or wrapped (every client of ``name`` wrapped)."""
    outcomes = tree / ("wrapped.json" if wrapped else "plain.json")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "wrap_clients",
        "-n",
        "4",
        "--continue-on-collection-errors",
        "--outcomes",
        str(outcomes),
        *suite["options"],
        *(["--wrap-clients", name] if wrapped else []),
        *suite["paths"],
    ]
    env = {**os.environ, "PYTHONPATH": str(HERE), "NO_COLOR": "1"}
    started = time.monotonic()
    done = subprocess.run(command, check=False, cwd=tree, env=env, capture_output=True, text=True)
    tail = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
    print(f"  {'wrapped' if wrapped else 'plain':7} {time.monotonic() - started:5.0f} s  {tail[0]}")
    if not outcomes.exists():
        sys.exit(f"pytest wrote no outcomes:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    found = json.loads(outcomes.read_text())
    if wrapped:
        print(f"  {'':7}        {found['wrapped_clients']} clients wrapped")
        if not found["wrapped_clients"]:
            sys.exit("the wrapped run wrapped no client: its tests build them some other way")
    result: dict[str, str] = found["outcomes"]
    return result


def named(name: str, node: str) -> str | None:
    """The entry of ``DIFFERENCES[name]`` that names ``node``, if any."""
    for key in DIFFERENCES[name]:
        if node == key or (key.endswith(("::", "[")) and node.startswith(key)):
            return key
    return None


def main(names: list[str]) -> int:
    failed = False
    for name in names or list(SUITES):
        version = importlib.metadata.version(name)
        print(f"== {name} {version}")
        tree = sdist(name, version)
        plain = run(name, tree, SUITES[name], wrapped=False)
        wrapped = run(name, tree, SUITES[name], wrapped=True)
        passing = [node for node, outcome in plain.items() if outcome == "passed"]
        differ = sorted(node for node in passing if wrapped.get(node) != "passed")
        unexplained = [node for node in differ if named(name, node) is None]
        print(
            f"  {len(passing)} pass plain; {len(differ)} of them do not pass wrapped, "
            f"{len(unexplained)} unexplained"
        )
        for node in unexplained:
            print(f"  DIFFERS {node} ({wrapped.get(node, 'not run')})")
        stale = [key for key in DIFFERENCES[name] if all(named(name, n) != key for n in differ)]
        for key in stale:
            print(f"  NO LONGER DIFFERS {key}: take it off DIFFERENCES")
        failed = failed or bool(unexplained or stale)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
