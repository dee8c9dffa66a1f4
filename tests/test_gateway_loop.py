"""Issue 26: the whole agent loop through the gateway example (``make_app(...,
upstream_dialect=...)``), over real sockets on 127.0.0.1. A scripted upstream of each dialect
streams a tool call; when a request carries that call and its result (in the upstream's own
form: chat `tool` messages, Messages `tool_result` blocks, Responses `function_call_output`
items), it streams the answer, else it answers 404 and the loop fails. The clients are the SDKs'
own tool loops: the openai SDK's chat and Responses, the anthropic SDK's Messages, google-genai's
Gemini (issue 27: a Gemini client served from each other upstream, and a Gemini upstream serving
the others); each completes. Bounded: two requests per loop, every wait timed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pytest

import ssewire
from loopback import LoopbackServer, Request
from test_examples import EXAMPLES, TIMEOUT, Gateway
from support import registry

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason="examples/ not in this tree")
DATA = Path(__file__).resolve().parent / "data"
ANSWER = "It is 18C in Paris."
TOOL = {"name": "get_weather", "description": "Weather now",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}  # fmt: skip


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


def _loop(client: str) -> Any:
    """The SDK's own tool loop of ``client``, streamed (``test_gateway_strict``'s)."""
    from test_gateway_strict import LOOPS as STRICT_LOOPS

    return lambda url: STRICT_LOOPS[client](url, True)


LOOPS = {d: _loop(d) for d in registry.NAMES}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("upstream_dialect", "client"),
                         [(u, c) for u in LOOPS for c in LOOPS if u != c])  # fmt: skip
def test_an_sdk_tool_loop_completes_through_the_gateway(upstream_dialect: str, client: str) -> None:
    call, answer = _streams(upstream_dialect)
    seen: list[Optional[tuple[str, str]]] = []

    def script(request: Request) -> Optional[bytes]:
        body = json.loads(request.body)
        found = _call_and_result(upstream_dialect, body)
        seen.append(found)
        has_user_turn = bool(body.get("messages") or body.get("input") or body.get("contents"))
        if not has_user_turn:
            return None
        return answer if found is not None else call

    with LoopbackServer(timeout=TIMEOUT) as upstream:
        upstream.script = script
        prefix = upstream.add(b"")
        gw = Gateway(upstream.url(), upstream_dialect=upstream_dialect)
        try:
            text = LOOPS[client](gw.url(prefix))
        finally:
            gw.close()
    assert text == ANSWER
    # The upstream saw the call first without a result, then the call with its result.
    assert len(seen) == 2 and seen[0] is None
    assert seen[1] is not None and seen[1][1] == "18C"
    sent = json.loads(upstream.requests[1].body)
    if upstream_dialect == "gemini":  # streaming is in the path
        assert ":streamGenerateContent?alt=sse" in upstream.requests[1].path
    else:
        assert sent["stream"] is True
