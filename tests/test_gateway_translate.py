"""Issue 16: the gateway example serves clients of one dialect from an upstream of another
(``make_app(..., upstream_dialect=...)``): the anthropic SDK's ``messages.stream()`` in front
of a chat upstream, and the openai SDK's chat and Responses streaming in front of a Messages
upstream, over real sockets on 127.0.0.1. The SDKs' final objects carry what the upstream
sent (text, reasoning, tool calls, stop reason, usage with cached tokens), mapped; the
gateway meters the upstream's own usage."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

import ssewire
from loopback import LoopbackServer
from test_examples import EXAMPLES, TIMEOUT, Gateway
from test_sdks import sdk_messages
from test_translate import comparable, lossy, neutral, sdk_chat, sdk_responses

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason="examples/ not in this tree")
DATA = Path(__file__).resolve().parent / "data"
SDKS = {"chat": sdk_chat, "messages": sdk_messages, "responses": sdk_responses}
CASES = [
    ("chat", "tool_calls_parallel_interleaved", "messages"),
    ("chat", "basic_stop", "messages"),
    ("chat", "reasoning_content_field", "messages"),
    ("messages", "parallel_tool_use", "chat"),
    ("messages", "cache_usage_stop_sequence", "chat"),
    ("messages", "thinking_signature", "responses"),
    ("messages", "text_basic", "responses"),
]


def source_result(dialect: str, body: bytes) -> Any:
    s = {"chat": ssewire.ChatCompletionStream, "messages": ssewire.MessagesStream,
         "responses": ssewire.ResponsesStream}[dialect]()  # fmt: skip
    s.feed(body)
    s.finish()
    return s


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("upstream_dialect", "name", "client"), CASES)
def test_an_sdk_client_served_from_another_dialect(upstream_dialect: str, name: str, client: str) -> None:
    path = DATA / upstream_dialect / f"{name}.sse"
    if not path.exists():
        pytest.skip(f"no capture {path.name}")
    body = path.read_bytes()
    with LoopbackServer(timeout=TIMEOUT) as upstream:
        prefix = upstream.add(body, delay=0.0005)
        gw = Gateway(upstream.url(), upstream_dialect=upstream_dialect)
        try:
            got = SDKS[client](gw.url(prefix))
            [sent] = upstream.requests
            deadline = time.monotonic() + TIMEOUT
            while not gw.records and time.monotonic() < deadline:  # logged after the last write
                time.sleep(0.01)
            [entry] = gw.records
        finally:
            gw.close()
    src = source_result(upstream_dialect, body)
    want, have = comparable(neutral(upstream_dialect, src.result()), neutral(client, got),
                            lossy(upstream_dialect, body))  # fmt: skip
    assert have == want
    # The upstream got a request of its own dialect, streaming.
    request = json.loads(sent.body)
    assert request["stream"] is True
    assert ("messages" in request) if upstream_dialect in ("chat", "messages") else ("input" in request)
    # Metering: the upstream's own usage, and what the client could not be given.
    assert entry["served_as"] == client and entry["done"] is True
    assert entry["usage"] == src.result().get("usage")
    assert isinstance(entry["notes"], list)
