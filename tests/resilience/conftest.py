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
        while time.monotonic() < deadline and self.process.poll() is None:
            if self.answering() == self.process.pid:
                return
            time.sleep(0.05)
        exited = self.process.poll() is not None
        self.stop()
        if exited:
            raise RuntimeError(f"redis-server exited: port {self.port} is taken, or it failed")
        raise RuntimeError(f"redis-server did not answer on port {self.port} within 10 s")

    def answering(self) -> int | None:
        """The process id of the redis-server answering on the port, if one does.

        Tests run in parallel (pytest-xdist workers), each starting servers of its own: the
        server must be this one, not another worker's that took the port first (then this one
        exits, unable to bind, and ``start`` fails rather than sharing another test's data).
        """
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                sock.sendall(b"INFO server\r\n")
                reply = b""
                while b"\r\nprocess_id:" not in reply or not reply.endswith(b"\r\n"):
                    chunk = sock.recv(4096)
                    if not chunk:
                        return None
                    reply += chunk
        except OSError:
            return None
        return int(reply.split(b"\r\nprocess_id:")[1].split(b"\r\n")[0])

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
    for attempt in range(3):  # another worker's server may take a free port first
        server = RedisServer(_free_port(), tmp_path)
        try:
            server.start()
            break
        except RuntimeError:
            if attempt == 2:
                raise
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def clock() -> Clock:
    """A clock for a breaker: ``CircuitBreaker(clock=clock)``, then ``clock.advance(s)``."""
    return Clock()
