"""A real ``redis-server`` on 127.0.0.1 for the tests of the shared breaker (no mock).

The server is started on a free port with no persistence, is stopped at the end, and is
skipped, with the reason named, only where ``redis-server`` or redis-py is absent (``.ci/run``
installs both). Where ``NORMALIZE_ERRORS_REQUIRE_REDIS=1`` (``.ci/run`` sets it), a missing
``redis-server`` fails the test instead: CI never passes these tests by skipping them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import Clock


class RedisServer:
    """A ``redis-server`` process of the test session: its URL, and a way to stop it."""

    def __init__(self, port: int, workdir: Path) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        self.process = subprocess.Popen(
            [
                binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(self.workdir), "--enable-debug-command",
                "local", "--protected-mode", "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} within 10 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh ``redis-server`` for one test (started, flushed by being new, then stopped)."""
    if shutil.which("redis-server") is None:
        if os.environ.get("NORMALIZE_ERRORS_REQUIRE_REDIS") == "1":
            pytest.fail("redis-server is not installed, and NORMALIZE_ERRORS_REQUIRE_REDIS=1")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    pytest.importorskip("redis", reason="redis-py is not installed (the resilience extra)")
    server = RedisServer(_free_port(), tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def clock() -> Clock:
    """A clock for a breaker: ``CircuitBreaker(clock=clock)``, then ``clock.advance(s)``."""
    return Clock()
