"""Issue 35: rules that had several homes, and disagreed, now have one. Each test is a
disagreement that was measured: the message's identity (an Azure prompt-filter chunk with
``created: 0`` first), the dialect detector's buffering (a body that opens with 20 KB of
keep-alive comments), and the chat fold's merge of vendor keys (40,000 keys in one frame cost
linear time, on the hashed map the folds share)."""

from __future__ import annotations

import json
import time

import ssewire

AZURE = [
    {"id": "", "object": "", "created": 0, "model": "", "choices": [],
     "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]},
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-4o",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None}]},
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-4o",
     "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
]  # fmt: skip


def _sse(chunks: list) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def test_the_identity_is_the_first_that_says_something_everywhere() -> None:
    body = _sse(AZURE)
    folded = ssewire.accumulate(body, "chat")
    assert (folded["id"], folded["created"], folded["model"]) == ("chatcmpl-1", 1700000000, "gpt-4o")
    chat = ssewire.Translator("chat", "chat")
    written = chat.feed(body) + chat.finish()
    assert chat.result()["created"] == 1700000000
    # The chunks that carry content say the real identity (the opening one echoes Azure's).
    chunks = [json.loads(line[6:]) for line in written.decode().splitlines() if line.startswith("data: {")]
    assert [c["created"] for c in chunks[1:]] == [1700000000, 1700000000]
    responses = ssewire.Translator("chat", "responses")
    responses.feed(body)
    responses.finish()
    assert responses.result()["created_at"] == 1700000000


def test_one_detector_one_buffering_policy() -> None:
    messages = (b"event: message_start\ndata: " + json.dumps({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": [],
        "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}).encode() + b"\n\n"
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n')  # fmt: skip
    body = b": keep-alive\n\n" * (20 * 1024 // 14) + messages
    assert len(body) > 20 * 1024
    assert ssewire.detect_dialect(body) == "messages"
    assert ssewire.accumulate(body)["content"] == [{"type": "text", "text": "Hello"}]
    t = ssewire.Translator("auto", "chat")
    t.feed(body)
    t.finish()
    assert t.result()["choices"][0]["message"]["content"] == "Hello"
    # Nothing decisive in 16 events: a generic event stream to all of them.
    plain = b"".join(b"data: tick %d\n\n" % i for i in range(20))
    assert ssewire.detect_dialect(plain) == "sse"
    assert ssewire.accumulate(plain)["events"][0]["data"] == "tick 0"


def _consume_seconds(keys: int) -> float:
    delta = {"role": "assistant", "content": "x", **{f"vendor_key_{i}": i for i in range(keys)}}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}  # fmt: skip
    body = _sse([chunk, chunk])
    best = float("inf")
    for _ in range(3):
        s = ssewire.ChatCompletionStream()
        t0 = time.perf_counter()
        s.consume(body)
        s.finish()
        s.result()
        best = min(best, time.perf_counter() - t0)
    return best


def test_forty_thousand_vendor_keys_cost_linear_time() -> None:
    small, large = _consume_seconds(10_000), _consume_seconds(40_000)
    assert large < small * 4 * 3, (small, large)  # 4x the keys: ~4x the time (slack 3)


def test_python_reads_the_dialect_registry_from_the_core() -> None:
    """Every Python list of dialects is the core's registry: accumulate, the command line,
    Translator's messages, the gateway's routes, credentials and log keys."""
    import ssewire.gateway as gateway
    from ssewire import _api, _core

    names = [spec["name"] for spec in _core.DIALECTS]
    assert names == ["chat", "messages", "responses", "gemini", "converse", "ollama", "cohere"]
    assert list(_api.DIALECTS) == [*names, "sse"]
    for spec in _core.DIALECTS:
        cls = getattr(ssewire, spec["stream_class"])
        assert cls().framing == spec["framing"]
        # The gateway serves the clients of the dialects the registry says, and takes an
        # upstream only of those it translates.
        assert (spec["name"] in gateway.STREAMS) == spec["serves"]
        assert (spec["name"] in gateway.UPSTREAMS) == spec["upstream"]
        if not spec["serves"]:  # read, not translated nor served yet
            assert gateway.route(spec["stream_path"].replace("{model}", "m")) is None
            continue
        assert gateway.STREAMS[spec["name"]] is cls
        # Translator makes its source stream of the registry's class
        t = ssewire.Translator(spec["name"], "chat" if spec["name"] != "chat" else "messages")
        t.feed(b"")
        # the gateway routes the registry's stream path to the dialect
        path = "/base" + spec["stream_path"].replace("{version}", "v1beta").replace("{model}", "m%2Fx")
        found = gateway.route(path)
        assert found is not None and found.dialect == spec["name"] and found.prefix == "/base"
        if "{model}" in spec["stream_path"]:
            assert found.model == "m/x"
        name, prefix = spec["key_header"]
        assert gateway.credential_headers(spec["name"], "k") == [(name, prefix + "k")]
        given = {spec["client_key_headers"][0]: prefix + "secret"}
        assert gateway.client_credential(spec["name"], given, {}) == "secret"
    try:
        ssewire.Translator("bedrock?", "chat")
    except ValueError as e:
        assert ", ".join(f'"{n}"' for n in names[:3]) in str(e)
    else:
        raise AssertionError("an unknown dialect was accepted")


def test_the_kind_of_a_body_that_is_no_stream_comes_from_the_core() -> None:
    """A JSON document that is no error, and a body that is not an event stream, each get
    their own code from the core in every stream class; the command line reads the code
    (it does not look at the bytes again)."""
    from support import registry

    for cls in registry.STREAMS.values():
        s = cls()
        s.consume(b'{"object": "chat.completion", "choices": []}')
        s.finish()
        # In NDJSON a body that opens with `{` is a record: another dialect's, here.
        json_code = "wrong_dialect" if s.framing == "ndjson" else "json_body"
        assert s.error is not None and s.error.code == json_code, cls
        s = cls()
        s.consume(b"<html><body>502 Bad Gateway</body></html>")
        s.finish()
        assert s.error is not None and s.error.code == "not_event_stream", cls
    s = ssewire.ChatCompletionStream()
    s.consume(b'{"error": {"message": "no", "type": "invalid_request_error"}}')
    s.finish()
    assert s.error is not None and s.error.code != "json_body" and s.error.message == "no"
