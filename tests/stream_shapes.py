"""Whole and cut streams, served to the real SDK clients over an in-memory transport.

The events come from recorded streams (``tests/recorded_streams/``, each file's source in
that folder's README): each line is one event's JSON as the provider sent it. What is
constructed here, and said in each test that uses it:

* the wire framing around the recorded JSON: SSE ``data:`` lines (with an ``event:`` line
  where the provider names its events: Responses, Anthropic, Cohere), a blank line after
  each, and OpenAI chat's ``data: [DONE]`` where asked; for Bedrock, AWS event-stream
  messages (``tests.providers.test_bedrock.event``);
* the cut: the recorded events up to a point, then either a clean end of the body (a proxy
  or a server that finished the HTTP response early) or the transport's own error for a
  connection closed mid-body (httpx's ``RemoteProtocolError`` with h11's message, raised by
  the body as httpcore raises it; for botocore, urllib3's ``ProtocolError`` for an
  ``IncompleteRead``, raised by a real ``urllib3.HTTPResponse`` whose declared length is
  longer than its body).
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).parent / "recorded_streams"

PEER_CLOSED = (
    "peer closed connection without sending complete message body (incomplete chunked read)"
)
"""httpcore's message when the peer closes a chunked body before its end (h11's
``RemoteProtocolError``), as httpx raises it to a stream's reader."""


def lines(name: str) -> list[str]:
    """The recorded events of ``tests/recorded_streams/<name>.jsonl``, one JSON text each."""
    text = (RECORDED / f"{name}.jsonl").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def sse(data: list[str], *, named: bool = False, done: bool = False) -> list[bytes]:
    """One SSE event per JSON text (constructed framing), each ending in a blank line; with
    ``named``, an ``event:`` line of the event's ``type`` first; with ``done``, OpenAI chat's
    ``data: [DONE]`` last."""
    out = []
    for text in data:
        head = f"event: {json.loads(text)['type']}\n" if named else ""
        out.append(f"{head}data: {text}\n\n".encode())
    if done:
        out.append(b"data: [DONE]\n\n")
    return out


def transport(http: Any, pieces: list[bytes], *, broken: bool = False) -> Any:
    """An in-memory transport of ``http`` (httpx or httpx2) whose every answer is a 200
    event stream of ``pieces``: ending cleanly, or (``broken``) with the transport error of a
    connection the peer closed mid-body."""

    class Body(http.SyncByteStream, http.AsyncByteStream):  # type: ignore[misc]
        def __iter__(self) -> Iterator[bytes]:
            yield from pieces
            if broken:
                raise http.RemoteProtocolError(PEER_CLOSED)

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for piece in pieces:
                yield piece
            if broken:
                raise http.RemoteProtocolError(PEER_CLOSED)

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

    return http.MockTransport(handler)


def eventstream(frames: list[bytes], *, broken: bool = False) -> Any:
    """The body botocore reads a ConverseStream from: a real ``urllib3.HTTPResponse`` over
    ``frames`` (AWS event-stream messages); ``broken``, a body that gives the frames one read
    at a time (as a chunked response does), then fails as urllib3 fails a connection closed
    mid-body: ``ProtocolError("Connection broken: IncompleteRead(...)")``, urllib3's own
    classes and wording (a real ``HTTPResponse`` with a short body raises the same, but drops
    what its last read had gathered, so no frame would come first)."""
    import urllib3

    data = b"".join(frames)
    if not broken:
        return urllib3.HTTPResponse(
            body=io.BytesIO(data),
            headers={"content-length": str(len(data))},
            status=200,
            preload_content=False,
        )
    return _BrokenBody(frames)


class _BrokenBody:
    """See ``eventstream``: the frames, then urllib3's error for a connection lost."""

    def __init__(self, frames: list[bytes]) -> None:
        self.frames = frames

    def stream(self, *_: Any, **__: Any) -> Iterator[bytes]:
        from urllib3.exceptions import IncompleteRead, ProtocolError

        read = 0
        for frame in self.frames:
            read += len(frame)
            yield frame
        lost = IncompleteRead(read, 4096)
        raise ProtocolError(f"Connection broken: {lost!r}", lost)

    def read(self, *_: Any, **__: Any) -> bytes:
        return b"".join(self.frames)

    def close(self) -> None:
        pass


def serve_bedrock(bedrock: Any, frames: list[bytes], *, broken: bool = False) -> None:
    """Answer every call of the boto3 client ``bedrock`` with a 200 event stream of
    ``frames`` (see ``eventstream``)."""
    from botocore.awsrequest import AWSResponse

    def handler(request: Any, **_: Any) -> Any:
        headers = {
            "content-type": "application/vnd.amazon.eventstream",
            "x-amzn-requestid": "5c0a3b6e-0000-4000-8000-000000000003",
        }
        return AWSResponse(request.url, 200, headers, eventstream(frames, broken=broken))

    bedrock.meta.events.register("before-send.bedrock-runtime.*", handler)


def bedrock_frames(data: list[str]) -> list[bytes]:
    """Each recorded ConverseStream event (``{"kind": payload}``) as an event-stream message
    (the test skips where boto3 is not installed)."""
    import pytest

    pytest.importorskip("boto3", reason="needs boto3")
    from tests.providers.test_bedrock import event

    frames = []
    for text in data:
        ((kind, payload),) = json.loads(text).items()
        frames.append(event(kind, payload))
    return frames


def first(data: list[str], needle: str) -> int:
    """The index of the first recorded event whose JSON text contains ``needle``."""
    return next(index for index, text in enumerate(data) if needle in text)
