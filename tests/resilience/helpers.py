"""Helpers of the resilience tests."""

from __future__ import annotations

import asyncio
import collections
import socket
import threading
import time
from collections.abc import Callable

from normalize_errors import HarnessError


def failed(call: Callable[[], object]) -> HarnessError:
    """The harness error ``call`` raises (the test fails if it raises none or another)."""
    try:
        call()
    except HarnessError as err:
        return err
    raise AssertionError("no harness error was raised")


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class DelayingProxy:
    """A TCP proxy on 127.0.0.1 that delivers each chunk ``delay`` seconds after it came, in
    both directions, in order (two threads per direction per connection)."""

    def __init__(self, target: int, delay: float) -> None:
        self.target = target
        self.delay = delay
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.port: int = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        self.sockets: list[socket.socket] = []
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            self.sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                held: collections.deque[tuple[float, bytes]] = collections.deque()
                ready = threading.Condition()
                for work in (self._read, self._write):
                    thread = threading.Thread(
                        target=work, args=(source, sink, held, ready), daemon=True
                    )
                    thread.start()
                    self.threads.append(thread)

    def _read(
        self,
        source: socket.socket,
        sink: socket.socket,
        held: collections.deque[tuple[float, bytes]],
        ready: threading.Condition,
    ) -> None:
        while True:
            try:
                chunk = source.recv(65536)
            except OSError:
                chunk = b""
            with ready:
                held.append((time.monotonic() + self.delay, chunk))
                ready.notify()
            if not chunk:
                return

    def _write(
        self,
        source: socket.socket,
        sink: socket.socket,
        held: collections.deque[tuple[float, bytes]],
        ready: threading.Condition,
    ) -> None:
        while True:
            with ready:
                while not held:
                    ready.wait()
                due, chunk = held.popleft()
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)  # a thread of its own: Faults leaves its sleeps alone
            try:
                if not chunk:
                    sink.shutdown(socket.SHUT_WR)
                    return
                sink.sendall(chunk)
            except OSError:
                return

    def close(self) -> None:
        self.stopped.set()
        self.listener.close()
        for sock in self.sockets:
            sock.close()


class LoopWatch:
    """A timer on the running loop every 2 ms, noting how late each firing was."""

    def __init__(self, loop: asyncio.AbstractEventLoop, stall: float = 0.050) -> None:
        self.loop = loop
        self.stall = stall
        self.worst = 0.0
        self.late: list[float] = []
        """Every lateness over ``stall``, in seconds."""
        self.firings = 0
        self.due = time.monotonic() + 0.002
        self.handle = loop.call_later(0.002, self.fire)

    def fire(self) -> None:
        now = time.monotonic()
        lateness = now - self.due
        self.worst = max(self.worst, lateness)
        if lateness > self.stall:
            self.late.append(lateness)
        self.firings += 1
        self.due = now + 0.002
        self.handle = self.loop.call_later(0.002, self.fire)

    def stop(self) -> None:
        self.handle.cancel()
