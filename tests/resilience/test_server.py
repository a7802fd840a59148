"""The ``redis_server`` fixture itself: the server a test gets is its own.

Tests run in parallel (pytest-xdist workers), each starting servers on free ports; a server
that answers on the port but belongs to another test would share that test's data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import RedisServer


def test_a_port_another_server_holds_is_refused(redis_server: RedisServer, tmp_path: Path) -> None:
    """A second server on a port already served exits; ``start`` says so instead of returning
    as if the first server were its own."""
    assert redis_server.process is not None
    assert redis_server.answering() == redis_server.process.pid
    second = RedisServer(redis_server.port, tmp_path)
    with pytest.raises(RuntimeError, match="taken"):
        second.start()
    assert redis_server.answering() == redis_server.process.pid
