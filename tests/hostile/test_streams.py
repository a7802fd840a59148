"""Hostile byte streams through ``wrap()``: any pieces, any status, a failure anywhere.

A wrapped ``httpx``/``httpx2`` client over an in-memory transport must yield exactly what
the raw client yields from ``iter_bytes``/``iter_raw``/``iter_text``/``iter_lines``, keep
none of it, and raise a mid-stream failure as a typed error over the raw one (issue 22,
finding 4). The bodies are generated, not recorded.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from normalize_errors import HarnessError, wrap
from normalize_errors._reading._stream_state import StreamState

from .conftest import timed

LIBRARIES = [name for name in ("httpx", "httpx2") if importlib.util.find_spec(name)]
if not LIBRARIES:
    pytest.skip("needs httpx or httpx2", allow_module_level=True)
FAILURES: list[type[Exception]] = [ConnectionResetError, TimeoutError, OSError, ValueError]
READERS = ["iter_bytes", "iter_raw", "iter_text", "iter_lines"]

PIECES = st.lists(
    st.one_of(
        st.binary(max_size=64),
        st.sampled_from([b"\n", b"\r\n", b"\xff\xfe", b"\xe2\x82", b"\xac", b"data: x\n\n"]),
    ),
    max_size=12,
)


def read(client: Any, reader: str, chunk_size: int | None) -> tuple[list[Any], Any, Any]:
    """What ``reader`` yields of a streamed GET, the error it ends in, and the iterator."""
    got: list[Any] = []
    stream: Any = None
    try:
        with client.stream("GET", "https://example.test/body") as response:
            if reader in ("iter_bytes", "iter_raw", "iter_text"):
                stream = getattr(response, reader)(chunk_size)
            else:
                stream = response.iter_lines()
            for item in stream:
                got.append(item)
    except Exception as exc:
        return got, exc, stream
    return got, None, stream


@given(
    library=st.sampled_from(LIBRARIES),
    pieces=PIECES,
    status=st.sampled_from([200, 206, 400, 429, 500, 503]),
    fail_at=st.one_of(st.none(), st.integers(min_value=0, max_value=12)),
    failure=st.sampled_from(FAILURES),
    reader=st.sampled_from(READERS),
    chunk_size=st.one_of(st.none(), st.integers(min_value=1, max_value=100)),
)
def test_wrapped_byte_streams_yield_what_the_raw_ones_do_and_keep_nothing(
    *,
    library: str,
    pieces: list[bytes],
    status: int,
    fail_at: int | None,
    failure: type[Exception],
    reader: str,
    chunk_size: int | None,
) -> None:
    http = importlib.import_module(library)

    def body() -> Iterator[bytes]:
        for index, piece in enumerate(pieces):
            if index == fail_at:
                raise failure("the peer went away")
            yield piece
        if fail_at is not None and fail_at >= len(pieces):
            raise failure("the peer went away")

    def handler(request: Any) -> Any:
        return http.Response(status, content=body())

    raw = http.Client(transport=http.MockTransport(handler))
    wrapped = wrap(http.Client(transport=http.MockTransport(handler)))
    expected, raw_error, _ = read(raw, reader, chunk_size)
    got, error, stream = timed("wrap.stream", lambda: read(wrapped, reader, chunk_size), pieces)
    assert got == expected
    if stream is not None:  # a byte, text or line stream is only counted, none of it kept
        state = stream._ne_watch.state
        assert state is None or type(state) is StreamState
        assert (0 if state is None else state.chunks) == len(got)
    if raw_error is None:
        assert error is None
        return
    # the body is the application's own code (the mock transport's): what it raises is
    # neither the HTTP library's nor an SDK's, and passes through wrap() untouched
    assert type(error) is type(raw_error), repr(error)
    assert not isinstance(error, HarnessError)
    assert str(error) == str(raw_error)
