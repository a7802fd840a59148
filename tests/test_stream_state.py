"""The stream state machines on their own (issue 37, items 1 and 4): what each protocol's
machine keeps of the recorded streams of ``tests/recorded_streams`` fed as JSON, the bounds
of what any machine holds, and the summary an error carries.

The events are the recorded ones; where a test cuts or alters them it says so.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from normalize_errors import HarnessError, diagnose
from normalize_errors._facade import diagnose_stream
from normalize_errors._reading._stream_state import (
    DONE_MARK,
    MAX_ARGUMENTS,
    MAX_KEPT_TEXT,
    StreamState,
    View,
    delivered_output,
    fold,
)
from normalize_errors.providers import anthropic, bedrock, cohere, google, openai
from normalize_errors.providers._routing import adapter

from .stream_shapes import first, lines
from .support import PLANTED_KEY, valid


def events(name: str) -> list[dict[str, Any]]:
    parsed: list[dict[str, Any]] = [json.loads(text) for text in lines(name)]
    return parsed


WHOLE = [
    ("openai", "openai-chat-azure-text", "chat", "stop"),
    ("openai", "openai-chat-deepseek-tool-call", "chat", "tool_calls"),
    ("openai", "openai-responses-azure-text", "responses", "completed"),
    ("openai", "openai-responses-azure-tool-call", "responses", "completed"),
    ("anthropic", "anthropic-text", "messages", "end_turn"),
    ("anthropic", "anthropic-tool", "messages", "tool_use"),
    ("google", "google-text", "gemini", "STOP"),
    ("google", "google-tool-call", "gemini", "STOP"),
    ("bedrock", "bedrock-converse-text", "converse", "end_turn"),
    ("bedrock", "bedrock-converse-tool", "converse", "tool_use"),
    ("cohere", "cohere-text", "cohere", "COMPLETE"),
    ("cohere", "cohere-tool-call", "cohere", "TOOL_CALL"),
]


@pytest.mark.parametrize(("provider", "name", "api", "stop"), WHOLE, ids=[w[1] for w in WHOLE])
def test_each_recorded_stream_ends_whole_with_its_stop_reason(
    provider: str, name: str, api: str, stop: str
) -> None:
    """Fed every recorded event, each protocol's machine sees its terminal event, the stop
    reason the stream stated, output, and no failure; ``diagnose_stream`` agrees."""
    data = events(name)
    machine = adapter(provider).stream_state(data[0], 0)
    assert fold(machine, data, None) is None
    summary = machine.summary()
    assert (summary["api"], summary["terminal"], summary["phase"]) == (api, True, "done")
    assert summary["stop_reason"] == stop
    assert summary["chunks"] == len(data)
    assert summary["output_chars"] > 0
    assert diagnose_stream(data, provider=provider) is None


def test_what_the_machines_count_as_output() -> None:
    """Text, reasoning and tool-call names and arguments are output, characters counted as
    they came; events that carry none (a role chunk, ``response.created``, a ping) are not."""
    chat = openai.stream_state({"choices": []})
    for chunk in events("openai-chat-azure-text"):
        chat.feed(chunk)
    assert chat.output_chars == len("Capital of Denmark.")
    tool = events("openai-chat-deepseek-tool-call")
    reasoning = "".join(
        c["choices"][0]["delta"].get("reasoning_content") or "" for c in tool if c["choices"]
    )
    arguments = "".join(
        call["function"].get("arguments") or ""
        for c in tool
        if c["choices"]
        for call in c["choices"][0]["delta"].get("tool_calls") or ()
    )
    machine = openai.stream_state(tool[0])
    fold(machine, tool, None)
    assert machine.output_chars == len(reasoning) + len("weather") + len(arguments)
    responses = events("openai-responses-azure-text")
    started = openai.stream_state(responses[0])
    for event in responses[:3]:  # created, in_progress, output_item.added: no output yet
        started.feed(event)
    assert (started.phase, started.output_chars) == ("before_output", 0)


def test_a_tool_calls_arguments_are_held_only_while_it_is_open() -> None:
    """Anthropic's tool call: its ``input_json_delta`` pieces are held while the block is
    open (the machine is inside the call), and dropped at ``content_block_stop`` once they
    parse as one object; a call whose arguments do not parse keeps them, for the check."""
    data = events("anthropic-tool")
    machine = anthropic.stream_state(data[0])
    stop = first(lines("anthropic-tool"), "content_block_stop")
    for event in data[:stop]:
        machine.feed(event)
    call = (machine.calls or {})[0]
    assert machine.phase == "tool_call"
    assert call.pieces is not None
    assert "".join(call.pieces).startswith('{"elements"')
    machine.feed(data[stop])
    ended: tuple[Any, ...] = (call.pieces, call.arguments, machine.phase)
    assert ended == (None, {}, "text")
    broken = anthropic.stream_state(data[0])
    bad = json.loads(json.dumps(data))
    bad[5]["delta"]["partial_json"] = "]"  # constructed: the closing brace replaced
    assert fold(broken, bad, None) is not None
    assert (broken.calls or {})[0].arguments.endswith("]")


def test_argument_text_is_bounded() -> None:
    """Past ``MAX_ARGUMENTS`` characters a call's arguments are no longer held (and not
    checked): the machine's memory stays bounded, its counts go on."""
    machine = StreamState()
    call = machine.open_call(0, "write_file", "call_1")
    piece = "x" * 65536
    for _ in range(MAX_ARGUMENTS // len(piece) + 2):
        machine.add_arguments(call, piece)
    assert call.pieces is None
    assert call.chars == machine.output_chars - len("write_file") > MAX_ARGUMENTS
    machine.close_call(call)
    assert call.arguments is None


def test_the_text_is_kept_only_when_asked_within_its_byte_cap() -> None:
    """``keep_text`` bytes of output text, cut on a character boundary (a four-byte emoji
    at the cap is left out, not split), never more than ``MAX_KEPT_TEXT``."""
    quiet = StreamState()
    quiet.said("Hello")
    assert "text" not in quiet.summary()
    kept = StreamState(keep_text=7)
    kept.said("Hello")
    kept.said(" 🌍 world")
    assert kept.summary()["text"] == "Hello "
    assert StreamState(keep_text=10**6).keep_text == MAX_KEPT_TEXT


def test_the_summary_on_an_error_pickles_redacts_and_is_json() -> None:
    """The cut's summary is a member of ``upstream``: the output text kept in it is redacted
    like any member (a credential the model echoed), and the error pickles and writes JSON
    with it; ``err.stream`` reads it back, from ``from_dict`` too."""
    machine = openai.stream_state({"choices": []}, keep_text=256)
    machine.feed({"choices": [{"index": 0, "delta": {"content": f"your key is {PLANTED_KEY}"}}]})
    err = valid(machine.end(None))
    assert err.code == "upstream.invalid_response"
    assert err.stream is not None
    assert PLANTED_KEY not in err.stream["text"]
    assert err.stream["text"].startswith("your key is ")
    again = pickle.loads(pickle.dumps(err))
    assert again.stream == err.stream
    assert HarnessError.from_json(err.to_json()).stream == err.stream
    assert delivered_output(err) == machine.output_chars > 0


def test_views_read_json_as_the_sdk_objects_are_read() -> None:
    """A JSON chunk is read through ``View``: members by name, snake_case finding camelCase,
    a missing member ``None``."""
    view = View({"usageMetadata": {"promptTokenCount": 3}, "candidates": [{"index": 0}]})
    assert view.usage_metadata.prompt_token_count == 3
    assert view.candidates[0].index == 0
    assert view.finish_reason is None


def test_openai_compatible_variations() -> None:
    """No ``[DONE]`` (the finish reason ends it), ``[DONE]`` with no finish reason (it ends
    it too), an ``error`` member in a chunk (the stream's failure, as the SDK would raise
    it), and OpenRouter's ``finish_reason: error`` with the upstream's own reason."""
    text = events("openai-chat-azure-text")
    assert openai.diagnose_stream(text, None) is None
    no_finish = json.loads(json.dumps(text))
    no_finish[-2]["choices"][0]["finish_reason"] = None  # constructed: the finish removed
    cut = openai.diagnose_stream(no_finish, None)
    assert cut is not None
    assert cut.code == "upstream.invalid_response"
    assert openai.diagnose_stream([*no_finish, DONE_MARK], None) is None
    error = {"error": {"message": "Rate limit exceeded", "code": 429}, "choices": []}
    failed = openai.diagnose_stream([*text[:3], error], None)  # constructed: an error chunk
    assert failed is not None
    assert failed.code == "upstream.rate_limited"
    assert failed.upstream["in_stream"] is True


def test_a_stream_with_no_chunk_or_unreadable_chunks_is_not_judged_wrongly() -> None:
    """No chunk: nothing to say (the watch decides that case); chunks no machine can read
    are counted and the fold goes on; the plain machine never calls a stream cut."""
    assert openai.diagnose_stream([], None) is None

    class Unreadable:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError(name)

    machine = anthropic.stream_state(Unreadable())
    found = fold(machine, [Unreadable(), {"type": "ping"}], None)
    assert machine.chunks == 2
    assert found is not None
    valid(found)
    plain = StreamState()
    plain.feed(b"abc")
    assert (plain.end(None), plain.phase, plain.output_chars) == (None, "text", 3)


def test_bedrock_invoke_and_cohere_and_gemini_cuts() -> None:
    """The other protocols' cuts: an InvokeModelWithResponseStream of Claude's events
    (constructed: the recorded anthropic-text events put in ``chunk``s) without its stop
    reason; a Cohere stream without ``message-end``; Gemini chunks without a finish reason."""
    claude = [
        {"chunk": {"bytes": json.dumps(event).encode()}} for event in events("anthropic-text")[:5]
    ]
    err = bedrock.diagnose_stream(claude, None)
    assert err is not None
    assert (err.code, err.upstream["stream"]["api"]) == ("upstream.invalid_response", "invoke")
    for module, name in ((cohere, "cohere-text"), (google, "google-text")):
        data = events(name)[:-1]
        found = module.diagnose_stream(data, None)
        assert found is not None
        assert found.code == "upstream.invalid_response"
        assert found.upstream["stream"]["terminal"] is False


def test_a_whole_stream_with_a_failure_stop_reason_is_judged_as_its_result() -> None:
    """The verdict of a whole stream is its result's: the recorded Anthropic text stream
    with ``max_tokens`` as its stop reason (constructed) is ``output.truncated``, as the
    same message is."""
    data = events("anthropic-text")
    data[-2]["delta"]["stop_reason"] = "max_tokens"
    err = anthropic.diagnose_stream(data, None)
    assert err is not None
    assert err.code == "output.truncated"
    assert err.stream is not None
    assert err.stream["terminal"] is True
    message = {
        "type": "message",
        "stop_reason": "max_tokens",
        "content": [{"type": "text", "text": "Hi"}],
    }
    truncated = diagnose(message, provider="anthropic")
    assert truncated is not None
    assert truncated.code == err.code


def test_a_recorded_body_s_done_line_ends_a_chat_stream() -> None:
    """A recorded chat body read as text: its ``data: [DONE]`` line is the terminal event
    the SDKs do not yield (constructed: the recorded Azure chunks without their finish
    reason, framed as SSE)."""
    no_finish = events("openai-chat-azure-text")
    no_finish[-2]["choices"][0]["finish_reason"] = None
    body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in no_finish)
    cut = diagnose_stream(body, provider="openai")
    assert cut is not None
    assert cut.code == "upstream.invalid_response"
    assert diagnose_stream(body + "data: [DONE]\n\n", provider="openai") is None
    assert diagnose_stream(body.encode() + b"data: [DONE]\n\n") is None


@pytest.mark.parametrize("name", ["anthropic", "google", "openai", "bedrock", "cohere"])
def test_a_stream_with_no_chunk_states_nothing_for_any_provider(name: str) -> None:
    """``diagnose_stream`` of no chunk at all (a list or an exhausted iterator) is ``None``
    for every provider's reader: nothing came to judge (a wrapped stream with no chunk is
    judged by its watch, ``upstream.invalid_response``: see tests/test_wrap_streams_paths)."""
    assert diagnose_stream([], provider=name) is None
    assert diagnose_stream(iter(()), provider=name) is None
    assert adapter(name).diagnose_stream([], None) is None
