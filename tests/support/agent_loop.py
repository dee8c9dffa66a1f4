"""An agent loop's two turns in each dialect (a tool call, then the answer), as an upstream streams
them, and what a client reads from them."""

from __future__ import annotations

import json
from typing import Any, Optional

import ssewire

from support.paths import DATA

ANSWER = "It is 18C in Paris."


def _streams(dialect: str) -> tuple[bytes, bytes]:
    """The upstream's two bodies in ``dialect``: a tool call (get_weather, Paris), then the
    answer; written from the chat captures by ssewire's own stream translation."""
    call = (DATA / "chat" / "tool_call_single.sse").read_bytes()
    answer = b"".join(
        f"data: {json.dumps(c)}\n\n".encode()
        for c in (
            {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {"role": "assistant", "content": ANSWER}, "finish_reason": None}]},
            {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        )
    ) + b"data: [DONE]\n\n"  # fmt: skip
    if dialect == "chat":
        return call, answer
    return ssewire.translate(call, "chat", dialect), ssewire.translate(answer, "chat", dialect)


def _call_and_result(dialect: str, body: dict[str, Any]) -> Optional[tuple[str, str]]:
    """The id of the upstream's tool call and the result under it, if the request has both."""
    calls: dict[str, str] = {}
    if dialect == "chat":
        for m in body.get("messages", []):
            for c in m.get("tool_calls") or []:
                calls[c["id"]] = c["function"]["name"]
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                return m["tool_call_id"], m["content"]
    elif dialect == "messages":
        for m in body.get("messages", []):
            for b in m["content"] if isinstance(m["content"], list) else []:
                if b["type"] == "tool_use":
                    calls[b["id"]] = b["name"]
                if b["type"] == "tool_result" and b["tool_use_id"] in calls:
                    content = b["content"]
                    text = (
                        content if isinstance(content, str) else "".join(x.get("text", "") for x in content)
                    )
                    return b["tool_use_id"], text
    elif dialect == "gemini":
        for content in body.get("contents", []):
            for part in content.get("parts") or []:
                if "functionCall" in part:
                    call = part["functionCall"]
                    calls[call.get("id") or call["name"]] = call["name"]
                response = part.get("functionResponse")
                if response and (response.get("id") or response["name"]) in calls:
                    said = response.get("response") or {}
                    return response.get("id") or response["name"], str(said.get("result", said))
    else:
        for item in body.get("input", []):
            if item.get("type") == "function_call":
                calls[item["call_id"]] = item["name"]
            if item.get("type") == "function_call_output" and item["call_id"] in calls:
                return item["call_id"], item["output"]
    return None
