"""Issue 16: the gateway example serves clients of one dialect from an upstream of another
(``make_app(..., upstream_dialect=...)``): the anthropic SDK's ``messages.stream()`` in front
of a chat upstream, and the openai SDK's chat and Responses streaming in front of a Messages
upstream, over real sockets on 127.0.0.1. The SDKs' final objects carry what the upstream
sent (text, reasoning, tool calls, stop reason, usage with cached tokens), mapped; the
gateway meters the upstream's own usage."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import ssewire
from support import paths
from support.gateway_app import TIMEOUT, Gateway
from support.loopback import LoopbackServer
from support.neutral import comparable, lossy, neutral
from support.paths import EXAMPLES
from support.sdks import SDKS

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason="examples/ not in this tree")
DATA = paths.DATA
CASES = [
    ("chat", "tool_calls_parallel_interleaved", "messages"),
    ("chat", "basic_stop", "messages"),
    ("chat", "reasoning_content_field", "messages"),
    ("messages", "parallel_tool_use", "chat"),
    ("messages", "cache_usage_stop_sequence", "chat"),
    ("messages", "thinking_signature", "responses"),
    ("messages", "text_basic", "responses"),
    # Issue 27: google-genai clients, from each other upstream, and a Gemini upstream.
    ("chat", "tool_calls_parallel_interleaved", "gemini"),
    ("messages", "thinking_signature", "gemini"),
    ("responses", "function_call", "gemini"),
    ("gemini", "parallel_calls", "messages"),
]


def source_result(dialect: str, body: bytes) -> Any:
    s = {"chat": ssewire.ChatCompletionStream, "messages": ssewire.MessagesStream,
         "responses": ssewire.ResponsesStream, "gemini": ssewire.GeminiStream}[dialect]()  # fmt: skip
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
    if upstream_dialect == "gemini":
        assert ":streamGenerateContent?alt=sse" in sent.path and "contents" in request
    else:
        assert request["stream"] is True
        assert ("messages" in request) if upstream_dialect in ("chat", "messages") else ("input" in request)
    # Metering: the upstream's own usage, and what the client could not be given.
    assert entry["served_as"] == client and entry["done"] is True
    usage_key = "usageMetadata" if upstream_dialect == "gemini" else "usage"
    assert entry["usage"] == src.result().get(usage_key)
    assert entry["tokens"] == src.usage
    assert entry["timing"]["output_chunks"] == src.timing["output_chunks"] > 0
    assert isinstance(entry["notes"], list)


def test_a_gemini_client_that_asks_for_no_stream_gets_the_whole_response() -> None:
    """google-genai's ``generate_content`` (``:generateContent``, no stream) in front of a chat
    upstream: the gateway streams from the upstream and answers with ``t.result()``, the
    GenerateContentResponse, which the SDK reads (its models refuse unknown fields)."""
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    body = (DATA / "chat" / "basic_stop.sse").read_bytes()
    with LoopbackServer(timeout=TIMEOUT) as upstream:
        prefix = upstream.add(body, delay=0.0)
        gw = Gateway(upstream.url(), upstream_dialect="chat")
        try:
            client = genai.Client(api_key="dummy", http_options=types.HttpOptions(
                base_url=gw.url(prefix), timeout=int(TIMEOUT * 1000)))  # fmt: skip
            response = client.models.generate_content(model="gemini-x", contents="hi")
            [sent] = upstream.requests
        finally:
            gw.close()
    want = source_result("chat", body).result()["choices"][0]["message"]["content"]
    assert response.text == want
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    request = json.loads(sent.body)
    assert request["model"] == "gemini-x" and request["stream"] is True
    assert sent.path.endswith("/v1/chat/completions")
