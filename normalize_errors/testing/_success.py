"""Success responses that fit the API a request called.

When a scripted failure has been served (or none was scripted), the fault injector answers
with a success in the shape of the API the request went to, so the code under test gets a
result its SDK parses: a chat completion, a Responses object, a Messages object, a Gemini
``GenerateContentResponse``, or the stream of events each of them sends. These bodies are
CONSTRUCTED from the vendors' documented formats (they carry the text you ask for, one
token of usage and fixed ids); they are not recordings. Anything else gets ``{}`` as JSON.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["api_of", "success_events", "success_response"]

JSON = "application/json"
SSE = "text/event-stream"


def api_of(path: str) -> str | None:
    """The API a request path calls: ``chat``, ``responses``, ``messages``, ``gemini``, or None."""
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/messages"):
        return "messages"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return None


def _model(path: str, body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        return str(body["model"])
    if "/models/" in path:
        return path.rsplit("/models/", 1)[1].split(":", 1)[0]
    return "model"


def wants_stream(path: str, body: Any) -> bool:
    """Whether the request asked for a stream (``"stream": true`` or Gemini's stream method)."""
    if ":streamGenerateContent" in path:
        return True
    return isinstance(body, dict) and body.get("stream") is True


def _sse(events: list[tuple[str | None, Any]]) -> list[bytes]:
    """One SSE message per event: ``event:`` line when named, then the JSON ``data:`` line."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {text}\n\n".encode())
    return out


def _chat(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-normalize-errors",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _chat_events(model: str, text: str) -> list[tuple[str | None, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-normalize-errors",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    return [
        (None, chunk({"role": "assistant", "content": ""}, None)),
        (None, chunk({"content": text}, None)),
        (None, chunk({}, "stop")),
        (None, "[DONE]"),
    ]


def _message_item(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_normalize_errors",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _response(model: str, text: str, status: str = "completed") -> dict[str, Any]:
    done = status == "completed"
    return {
        "id": "resp_normalize_errors",
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": model,
        "output": [_message_item(text)] if done else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "usage": {
            "input_tokens": 1,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 2,
        }
        if done
        else None,
    }


def _responses_events(model: str, text: str) -> list[tuple[str | None, Any]]:
    item = _message_item(text)
    part = item["content"][0]
    started = {**item, "status": "in_progress", "content": []}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": _response(model, text, "in_progress")}),
        ("response.in_progress", {"response": _response(model, text, "in_progress")}),
        ("response.output_item.added", {"output_index": 0, "item": started}),
        (
            "response.content_part.added",
            {
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "part": {**part, "text": ""},
            },
        ),
        (
            "response.output_text.delta",
            {
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": text,
                "logprobs": [],
            },
        ),
        (
            "response.output_text.done",
            {
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "text": text,
                "logprobs": [],
            },
        ),
        (
            "response.content_part.done",
            {"item_id": item["id"], "output_index": 0, "content_index": 0, "part": part},
        ),
        ("response.output_item.done", {"output_index": 0, "item": item}),
        ("response.completed", {"response": _response(model, text)}),
    ]
    return [
        (name, {"type": name, "sequence_number": n, **data})
        for n, (name, data) in enumerate(events)
    ]


def _message(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "msg_normalize_errors",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _messages_events(model: str, text: str) -> list[tuple[str | None, Any]]:
    start = {**_message(model, text), "content": [], "stop_reason": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"message": start}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"index": 0}),
        (
            "message_delta",
            {
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {}),
    ]
    return [(name, {"type": name, **data}) for name, data in events]


def _gemini(model: str, text: str, finish: str | None = "STOP") -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "content": {"parts": [{"text": text}], "role": "model"},
        "index": 0,
    }
    if finish:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": model,
        "responseId": "normalize-errors",
    }


def _gemini_events(model: str, text: str) -> list[tuple[str | None, Any]]:
    return [(None, _gemini(model, text, None)), (None, _gemini(model, "", "STOP"))]


def success_events(path: str, body: Any, text: str) -> list[bytes]:
    """The SSE messages of a successful stream of the API at ``path`` (empty if unknown)."""
    api, model = api_of(path), _model(path, body)
    if api == "chat":
        return _sse(_chat_events(model, text))
    if api == "responses":
        return _sse(_responses_events(model, text))
    if api == "messages":
        return _sse(_messages_events(model, text))
    if api == "gemini":
        return _sse(_gemini_events(model, text))
    return []


def success_response(path: str, body: Any, text: str) -> tuple[str, list[bytes]]:
    """(content type, body chunks) of a success fitting the request; streams when asked to."""
    if wants_stream(path, body) and api_of(path) is not None:
        return SSE, success_events(path, body, text)
    api, model = api_of(path), _model(path, body)
    data: dict[str, Any]
    if api == "chat":
        data = _chat(model, text)
    elif api == "responses":
        data = _response(model, text)
    elif api == "messages":
        data = _message(model, text)
    elif api == "gemini":
        data = _gemini(model, text)
    else:
        data = {}
    return JSON, [json.dumps(data).encode()]
