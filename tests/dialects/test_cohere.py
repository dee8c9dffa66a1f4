"""Cohere's v2 chat stream (`CohereStream`; API.md section 16), shaped as Cohere writes it.

Covered: text, thinking, the tool plan, tool calls whose arguments stream as pieces,
citations, usage (`billed_units`, `tokens`, `cached_tokens`), `MAX_TOKENS`, a `message-end`
that failed, an error body before the stream, a cut stream, data-only frames with no `[DONE]`
(fed whole, byte by byte and cut at random points); detection and `accumulate`; the usage;
translation both ways (read back by the dialect streams and by the cohere SDK over loopback);
requests both ways; `translate_error`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import ssewire
from support.items import _attrs
from support.splitting import assert_same_all_ways

ID = "c14c80c3-18eb-4519-9460-6c92edd8cfb4"


def event(kind: str, **fields: Any) -> bytes:
    """One event as Cohere writes it: its `event:` line, then its JSON with `type` (after
    `id` on `message-start`), compact."""
    body = {"id": fields.pop("id"), "type": kind} if "id" in fields else {"type": kind}
    body.update(fields)
    return b"event: " + kind.encode() + b"\ndata: " + json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"


START = event("message-start", id=ID, delta={"message": {"role": "assistant", "content": [], "tool_plan": "",
                                                          "tool_calls": [], "citations": []}})  # fmt: skip


def part(index: int, kind: str, pieces: list[str]) -> bytes:
    out = event("content-start", index=index, delta={"message": {"content": {"type": kind, kind: ""}}})
    for p in pieces:
        out += event("content-delta", index=index, delta={"message": {"content": {kind: p}}})
    return out + event("content-end", index=index)


def end(reason: str = "COMPLETE", **delta: Any) -> bytes:
    usage = {"billed_units": {"input_tokens": 8, "output_tokens": 21}, "tokens": {"input_tokens": 1466, "output_tokens": 21},
             "cached_tokens": 1024}  # fmt: skip
    return event("message-end", delta={"finish_reason": reason, "usage": usage, **delta}) + b"data: [DONE]\n\n"


TEXT = ["The", " weather", " in", " Paris", " is", " mild", ": \u201c18\u00b0C\u201d", ".\n"]
THINKING = ["The", " user", " wants", " the", " weather", "."]
PLAN = ["I will", " look up", " the weather", " in Paris."]
ARGS = ['{\n    "', "city", '": "', "Paris", '"\n', "}"]
CITATION = {"start": 23, "end": 27, "text": "18\u00b0C", "sources": [{"type": "tool", "id": "get_weather_9w8k:0",
            "tool_output": {"temperature": 18}}], "type": "TEXT_CONTENT", "content_index": 0}  # fmt: skip

CHAT = START + part(0, "text", TEXT) + end()
CALLS = (
    START
    + part(0, "thinking", THINKING)
    + b"".join(event("tool-plan-delta", delta={"message": {"tool_plan": p}}) for p in PLAN)
    + event("tool-call-start", index=0, delta={"message": {"tool_calls": {"id": "get_weather_9w8k", "type": "function",
            "function": {"name": "get_weather", "arguments": ""}}}})  # fmt: skip
    + b"".join(event("tool-call-delta", index=0, delta={"message": {"tool_calls": {"function": {"arguments": a}}}}) for a in ARGS)
    + event("tool-call-end", index=0)
    + end("TOOL_CALL")
)
CITED = (
    START
    + part(0, "text", TEXT)
    + event("citation-start", index=0, delta={"message": {"citations": CITATION}})
    + event("citation-end", index=0)
    + end()
)


def key(item: Any) -> Any:
    return _attrs(item)


def read(body: bytes) -> tuple[list[Any], ssewire.CohereStream]:
    s = ssewire.CohereStream()
    items = s.feed(body) + s.finish()
    return items, s


USAGE = {"billed_units": {"input_tokens": 8, "output_tokens": 21}, "tokens": {"input_tokens": 1466, "output_tokens": 21},
         "cached_tokens": 1024}  # fmt: skip

# --- the stream -----------------------------------------------------------------------------


def test_text_stream_every_way_and_its_result() -> None:
    items = assert_same_all_ways(ssewire.CohereStream, CHAT, key=key)
    assert "".join(i.text or "" for i in items if i.type == "content-delta") == "".join(TEXT)
    assert items[-1].type == "message-end" and items[-1].finish_reason == "COMPLETE"
    _, s = read(CHAT)
    assert s.done and s.error is None
    assert s.result() == {
        "id": ID,
        "finish_reason": "COMPLETE",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "".join(TEXT)}]},
        "usage": USAGE,
    }
    assert s.usage is not None
    assert (s.usage["input_tokens"], s.usage["output_tokens"], s.usage["cached_input_tokens"]) == (1466, 21, 1024)


def test_thinking_plan_and_a_call_whose_arguments_stream() -> None:
    items = assert_same_all_ways(ssewire.CohereStream, CALLS, key=key)
    start = next(i for i in items if i.type == "tool-call-start")
    assert (start.tool_call_id, start.name, start.arguments) == ("get_weather_9w8k", "get_weather", "")
    _, s = read(CALLS)
    m = s.result()["message"]
    assert m["content"] == [{"type": "thinking", "thinking": "".join(THINKING)}]
    assert m["tool_plan"] == "".join(PLAN)
    assert m["tool_calls"] == [{"id": "get_weather_9w8k", "type": "function",
                                "function": {"name": "get_weather", "arguments": "".join(ARGS)}}]  # fmt: skip
    assert s.result()["finish_reason"] == "TOOL_CALL"


def test_citations_as_streamed() -> None:
    items = assert_same_all_ways(ssewire.CohereStream, CITED, key=key)
    assert [i.citation for i in items if i.type == "citation-start"] == [CITATION]
    _, s = read(CITED)
    assert s.result()["message"]["citations"] == [CITATION]


def test_data_only_frames_without_done_read_the_same() -> None:
    """Recorders that keep only the data values: no `event:` lines, no `[DONE]`."""
    bare = b"".join(b"data: " + f.split(b"\ndata: ", 1)[1] + b"\n\n" for f in CALLS.split(b"\n\n") if b"\ndata: " in f)
    assert b"event:" not in bare and b"[DONE]" not in bare
    _, a = read(bare)
    _, b = read(CALLS)
    assert a.result() == b.result() and a.done and a.error is None
    assert [key(i) for i in read(bare)[0]] == [key(i) for i in read(CALLS)[0]]


def test_max_tokens_and_a_cut_stream() -> None:
    body = START + part(0, "text", TEXT) + end("MAX_TOKENS")
    _, s = read(body)
    assert s.result()["finish_reason"] == "MAX_TOKENS" and s.done
    cut = CHAT[: CHAT.index(b"event: message-end")]
    _, s = read(cut)
    assert s.error is not None and s.error.code == "incomplete_stream"
    assert not s.done and s.result()["message"]["content"][0]["text"] == "".join(TEXT)


def test_a_message_end_that_failed_is_the_streams_error() -> None:
    body = START + part(0, "text", ["Hi"]) + event(
        "message-end", delta={"finish_reason": "ERROR", "error": "The model generated an invalid tool call",
                              "error_type": "INVALID_TOOL_GENERATION", "usage": {}})  # fmt: skip
    items = assert_same_all_ways(ssewire.CohereStream, body, key=key)
    errors = [i for i in items if isinstance(i, ssewire.ErrorItem)]
    assert len(errors) == 1 and errors[0].kind == "stream_error"
    _, s = read(body)
    assert s.error is not None and s.error.message == "The model generated an invalid tool call"
    assert s.error.type == "INVALID_TOOL_GENERATION" and s.done
    with pytest.raises(ssewire.AccumulateError) as info:
        ssewire.accumulate(body, "cohere")
    assert info.value.result["message"]["content"][0]["text"] == "Hi"


def test_an_error_body_before_the_stream() -> None:
    body = b'{"id":"1f0c","message":"invalid api token"}'
    items = assert_same_all_ways(ssewire.CohereStream, body, key=key)
    assert [i.kind for i in items] == ["stream_error"]
    _, s = read(body)
    assert s.error is not None and s.error.message == "invalid api token"


def test_a_bad_frame_keeps_the_frames_around_it() -> None:
    body = START + b"event: content-delta\ndata: {oops\n\n" + part(0, "text", ["a", "b"]) + end()
    items = assert_same_all_ways(ssewire.CohereStream, body, key=key)
    assert [getattr(i, "kind", None) for i in items].count("malformed_json") == 1
    _, s = read(body)
    assert s.result()["message"]["content"][0]["text"] == "ab" and s.done


def test_deltas_on_the_fast_path_read_as_decoded() -> None:
    """A delta of a plain delta's shape is read without a decode (the frame template): each item
    is what a fresh stream decodes from that frame alone, escapes and indexes included."""
    texts = ["a", 'q"uote', "\\", "\u00e9t\u00e9", "\n", "x" * 300, ""]
    frames = [event("content-delta", index=i % 3, delta={"message": {"content": {"text": t}}}) for i, t in enumerate(texts)]
    frames += [event("content-delta", index=4, delta={"message": {"content": {"thinking": t}}}) for t in texts]
    frames += [event("tool-plan-delta", delta={"message": {"tool_plan": t}}) for t in texts]
    frames += [event("tool-call-delta", index=i % 2, delta={"message": {"tool_calls": {"function": {"arguments": t}}}})
               for i, t in enumerate(texts)]  # fmt: skip
    spaced = [f.replace(b'":', b'": ').replace(b',"', b', "') for f in frames]  # a Python recorder's spelling
    for body in (frames, spaced):
        s = ssewire.CohereStream()
        items = [key(i) for i in s.feed(b"".join(body))]
        fresh = [key(i) for f in body for i in ssewire.CohereStream().feed(f)]
        assert items == fresh


def test_a_hostile_stream_is_bounded() -> None:
    """Many calls and parts at scattered indexes fold in linear time, and an event over
    `max_event_size` is dropped with the frames around it kept."""
    many = START + b"".join(
        event("tool-call-start", index=i * 7919, delta={"message": {"tool_calls": {"id": f"c{i}", "type": "function",
              "function": {"name": "f", "arguments": ""}}}})  # fmt: skip
        for i in range(3000)
    ) + end("TOOL_CALL")
    _, s = read(many)
    assert len(s.result()["message"]["tool_calls"]) == 3000
    big = START + event("content-delta", index=0, delta={"message": {"content": {"text": "x" * 5000}}}) + part(1, "text", ["ok"]) + end()
    s = ssewire.CohereStream(max_event_size=1000)
    with pytest.raises(ssewire.EventTooLargeError):
        s.feed(big)
    s.feed(b"")
    s.finish()
    assert s.result()["message"]["content"][-1]["text"] == "ok" and s.done


# --- detection, accumulate, items -------------------------------------------------------------


def test_detected_and_accumulated_from_any_reads() -> None:
    for body in (CHAT, CALLS, CITED):
        assert ssewire.detect_dialect(body) == "cohere"
    reads = [CALLS[i : i + 7] for i in range(0, len(CALLS), 7)]
    assert ssewire.accumulate(reads) == ssewire.accumulate(CALLS, "cohere")


def test_item_dicts() -> None:
    items, _ = read(CALLS)
    assert items[2].to_dict() == {"type": "content-delta", "index": 0, "thinking": "The"}
    assert items[-1].to_dict()["usage"] == USAGE


# --- translation ------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["chat", "messages", "responses", "gemini", "converse", "ollama"])
def test_cohere_into_each_dialect(target: str) -> None:
    from support.neutral import neutral

    out = ssewire.translate(CALLS, "cohere", target)
    if target == "converse":
        s = ssewire.ConverseStream()
        s.feed(out)
        s.finish()
        result = s.result()
    else:
        result = ssewire.accumulate(out, target)
    n = neutral(target, result)
    assert n["text"] == "".join(PLAN) and n["reasoning"] == "".join(THINKING)
    assert [c[1:] for c in n["calls"]] == [("get_weather", {"city": "Paris"})] and n["stop"] == "tool"
    assert n["usage"]["output"] == 21


@pytest.mark.parametrize("source", ["chat", "messages", "responses", "gemini"])
def test_each_sample_into_cohere_reads_back(source: str) -> None:
    from ssewire._cli import _sample_bytes
    from support.neutral import neutral

    body = _sample_bytes(f"{source}.sse")
    out = ssewire.translate(body, source, "cohere")
    s = ssewire.CohereStream()
    s.feed(out)
    s.finish()
    assert s.done and s.error is None
    want = neutral(source, ssewire.accumulate(body, source))
    got = neutral("cohere", s.result())
    assert got["text"] == want["text"] and [c[1:] for c in got["calls"]] == [c[1:] for c in want["calls"]]
    cohere = pytest.importorskip("cohere")
    from cohere.core.unchecked_base_model import construct_type
    from cohere.v2.types.v2chat_stream_response import V2ChatStreamResponse

    frames = [f.split(b"data: ", 1)[1] for f in out.split(b"\n\n") if b"data: " in f]
    assert frames[-1] == b"[DONE]"
    events = [construct_type(type_=V2ChatStreamResponse, object_=json.loads(f)) for f in frames[:-1]]
    assert type(events[0]).__name__ == "MessageStartV2ChatStreamResponse"
    text = "".join(e.delta.message.content.text or "" for e in events if e.type == "content-delta" and e.delta.message.content.text)
    assert text == "".join(p.get("text", "") for p in s.result()["message"].get("content", []))
    assert cohere is not None


def test_translate_error_into_cohere() -> None:
    e = ssewire.translate_error(429, b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
                                "messages", "cohere")  # fmt: skip
    assert e.status == 429 and json.loads(e.body) == {"message": "slow down"}


# --- requests ---------------------------------------------------------------------------------


def test_request_both_ways() -> None:
    body = {
        "model": "command-a-reasoning-08-2025",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"},
                                         {"type": "image_url", "image_url": {"url": "https://example.com/p.png"}}]},  # fmt: skip
            {"role": "assistant", "tool_plan": "I will look it up.",
             "tool_calls": [{"id": "get_weather_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},  # fmt: skip
            {"role": "tool", "tool_call_id": "get_weather_1", "content": [{"type": "document", "document": {"data": {"temp": 18}}}]},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],  # fmt: skip
        "tool_choice": "REQUIRED",
        "max_tokens": 4096,
        "temperature": 0.2,
        "p": 0.9,
        "k": 40,
        "stop_sequences": ["END"],
        "thinking": {"type": "enabled", "token_budget": 2048},
        "stream": True,
    }
    t = ssewire.translate_request(body, "cohere", "messages")
    assert t.path == "/v1/messages"
    m = t.body
    assert m["system"] == "Be brief." and m["max_tokens"] == 4096 and m["top_k"] == 40
    c = ssewire.translate_request(body, "cohere", "chat").body
    assert (c["top_p"], c["temperature"], c["seed"] if "seed" in c else None) == (0.9, 0.2, None)
    assert ssewire.translate_request(c, "chat", "cohere").body["p"] == 0.9
    assert m["tool_choice"] == {"type": "any"} and m["thinking"]["budget_tokens"] == 2048
    assert m["messages"][1]["content"][0] == {"type": "text", "text": "I will look it up."}
    assert m["messages"][1]["content"][1]["type"] == "tool_use"
    assert m["messages"][2]["content"][0]["type"] == "tool_result"
    back = ssewire.translate_request(m, "messages", "cohere")
    assert back.path == "/v2/chat"
    b = back.body
    assert [x["role"] for x in b["messages"]] == ["system", "user", "assistant", "tool"]
    assert b["messages"][2]["tool_plan"] == "I will look it up."
    assert b["messages"][2]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert b["messages"][3]["tool_call_id"] == "get_weather_1"
    assert (b["max_tokens"], b["k"], b["stop_sequences"], b["tool_choice"]) == (4096, 40, ["END"], "REQUIRED")
    assert b["thinking"] == {"type": "enabled", "token_budget": 2048} and b["stream"] is True
    cohere = pytest.importorskip("cohere")
    from cohere.core.unchecked_base_model import construct_type

    for message in b["messages"]:
        construct_type(type_=cohere.ChatMessageV2, object_=message)


# --- the cohere SDK over loopback -------------------------------------------------------------


def test_cohere_sdk_reads_a_translated_stream_over_http() -> None:
    """The cohere SDK's `chat_stream` reads what a translation from Messages wrote, from a
    loopback server that answers as Cohere does; ssewire reads the same bytes back."""
    cohere = pytest.importorskip("cohere")
    from ssewire._cli import _sample_bytes
    from support.cohere_server import CohereServer

    events = ssewire.translate(_sample_bytes("messages.sse"), "messages", "cohere")
    with CohereServer(events) as server:
        client = cohere.ClientV2(api_key="test-key", base_url=server.url(), timeout=30)
        got = list(client.chat_stream(model="command-a-03-2025", messages=[{"role": "user", "content": "Weather?"}]))
        assert server.requests[0]["stream"] is True
        assert server.headers[0]["Authorization"] == "Bearer test-key"
    s = ssewire.CohereStream()
    s.feed(events)
    s.finish()
    text = "".join(e.delta.message.content.text or "" for e in got if e.type == "content-delta")
    assert text == "".join(p.get("text", "") for p in s.result()["message"].get("content", []))
    assert got[-1].type == "message-end" and got[-1].delta.finish_reason == s.result()["finish_reason"]
    calls = [e.delta.message.tool_calls.function.name for e in got if e.type == "tool-call-start"]
    assert calls == [c["function"]["name"] for c in s.result()["message"].get("tool_calls", [])]


def test_cohere_sdk_error_status_reads_as_ours() -> None:
    cohere = pytest.importorskip("cohere")
    from support.cohere_server import CohereServer

    with CohereServer(b"", status=429) as server:
        client = cohere.ClientV2(api_key="test-key", base_url=server.url(), timeout=30)
        with pytest.raises(Exception) as info:
            list(client.chat_stream(model="command-a-03-2025", messages=[{"role": "user", "content": "hi"}]))
    assert getattr(info.value, "status_code", None) == 429
    e = ssewire.translate_error(429, b'{"id":"x","message":"You are using a Trial key, which is limited."}', "cohere", "chat")
    assert e.status == 429 and json.loads(e.body)["error"]["message"] == "You are using a Trial key, which is limited."


# --- hostile and odd streams (a review's findings) --------------------------------------------


def test_indexes_a_stream_chooses_never_merge_blocks() -> None:
    """Indexes are a stream's to choose: a call at index -1 beside the plan, a thinking part at
    the smallest index beside part 0, a plan after a call. Each is its own block in every
    target, and hidden reasoning never becomes the answer."""
    body = (
        START
        + event("tool-plan-delta", delta={"message": {"tool_plan": "I will call"}})
        + event("tool-call-start", index=-1, delta={"message": {"tool_calls": {"id": "c1", "type": "function",
                "function": {"name": "f", "arguments": ""}}}})  # fmt: skip
        + event("tool-call-delta", index=-1, delta={"message": {"tool_calls": {"function": {"arguments": '{"a":1}'}}}})
        + event("tool-call-end", index=-1)
        + part(0, "text", ["A"])
        + part(-(2**63), "thinking", ["SECRET"])
        + event("tool-plan-delta", delta={"message": {"tool_plan": " then B"}})
        + end("TOOL_CALL")
    )
    _, s = read(body)
    assert s.result()["message"]["tool_plan"] == "I will call then B"
    from support.neutral import neutral

    for target in ("chat", "messages", "responses", "gemini", "ollama", "cohere"):
        out = ssewire.translate(body, "cohere", target)
        n = neutral(target, ssewire.accumulate(out, target))
        assert [c[1:] for c in n["calls"]] == [("f", {"a": 1})], target
        assert "SECRET" not in n["text"] and "SECRET" in n["reasoning"], target
        assert "A" in n["text"] and "B" in n["text"], target


def test_a_frame_with_escaped_keys_reads_as_decoded() -> None:
    """``"\\u0069ndex"`` decodes as ``index``: a frame spelled so makes no template, and the
    frames after it read as a full decode reads them."""
    frames = [
        START,
        part(0, "text", []).split(b"event: content-end")[0],
        b'event: content-delta\ndata: {"type":"content-delta","\\u0069ndex":0,"x":{"index":0},"delta":{"message":{"content":{"text":"A"}}}}\n\n',
        b'event: content-delta\ndata: {"type":"content-delta","\\u0069ndex":0,"x":{"index":5},"delta":{"message":{"content":{"text":"B"}}}}\n\n',
    ]
    body = b"".join(frames) + end()
    _, s = read(body)
    assert s.result()["message"]["content"] == [{"type": "text", "text": "AB"}]
    deltas = [i for i in read(body)[0] if getattr(i, "type", None) == "content-delta"]
    assert [(i.index, i.text) for i in deltas] == [(0, "A"), (0, "B")]


def test_nothing_after_message_end_counts() -> None:
    after = part(1, "text", ["AFTER"]) + end("MAX_TOKENS").replace(b'"output_tokens":21', b'"output_tokens":99')
    body = CHAT.replace(b"data: [DONE]\n\n", b"") + after
    _, s = read(body)
    _, plain = read(CHAT)
    assert s.result() == plain.result() and s.usage == plain.usage
    n = ssewire.accumulate(ssewire.translate(body, "cohere", "chat"), "chat")
    assert "AFTER" not in json.dumps(n)


def test_a_piece_under_the_other_key_follows_the_parts_type() -> None:
    """A part's pieces are the ones under its type's key, in the fold and in translation."""
    body = (
        START
        + event("content-start", index=0, delta={"message": {"content": {"type": "thinking", "thinking": ""}}})
        + event("content-delta", index=0, delta={"message": {"content": {"text": "T", "thinking": "K"}}})
        + event("content-delta", index=1, delta={"message": {"content": {"text": "x"}}})
        + event("content-delta", index=1, delta={"message": {"content": {"thinking": "y"}}})
        + end()
    )
    _, s = read(body)
    assert s.result()["message"]["content"] == [{"type": "thinking", "thinking": "K"}, {"type": "text", "text": "x"}]
    from support.neutral import neutral

    n = neutral("messages", ssewire.accumulate(ssewire.translate(body, "cohere", "messages"), "messages"))
    assert (n["reasoning"], n["text"]) == ("K", "x")


def test_timeout_crosses_and_is_no_tool_stop() -> None:
    body = CALLS.replace(b'"finish_reason":"TOOL_CALL"', b'"finish_reason":"TIMEOUT"')
    back = ssewire.accumulate(ssewire.translate(body, "cohere", "cohere"), "cohere")
    assert back["finish_reason"] == "TIMEOUT"
    m = ssewire.accumulate(ssewire.translate(body, "cohere", "messages"), "messages")
    assert m["stop_reason"] != "tool_use"


def test_partial_arguments_of_a_call() -> None:
    s = ssewire.CohereStream()
    s.feed(CALLS[: CALLS.index(b'"Paris"')])
    assert s.partial_arguments(0) == {"city": ""}
    s.feed(CALLS[CALLS.index(b'"Paris"') :])
    assert s.partial_arguments(0) == {"city": "Paris"}


def test_request_into_cohere_keeps_the_order_of_parts() -> None:
    chat = {"model": "m", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Image A:"}, {"type": "image_url", "image_url": {"url": "https://e.x/a.png"}},
                                     {"type": "text", "text": "Image B:"}, {"type": "image_url", "image_url": {"url": "https://e.x/b.png"}},
                                     {"type": "text", "text": "Which is brighter?"}]}]}  # fmt: skip
    b = ssewire.translate_request(chat, "chat", "cohere").body
    assert [p.get("text") or p["image_url"]["url"] for p in b["messages"][0]["content"]] == [
        "Image A:", "https://e.x/a.png", "Image B:", "https://e.x/b.png", "Which is brighter?"]  # fmt: skip
    msgs = {"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me check."},
                                          {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
                                          {"type": "text", "text": "Also this."}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]}  # fmt: skip
    b = ssewire.translate_request(msgs, "messages", "cohere").body
    assert b["messages"][1]["tool_plan"] == "Let me check.\n\nAlso this."


def test_iter_aiter_tap_and_timing() -> None:
    """What every stream has: ``iter`` / ``aiter`` over reads, a tap, ``timing``."""
    import asyncio

    reads = [CALLS[i : i + 97] for i in range(0, len(CALLS), 97)]
    relay = ssewire.CohereStream()
    assert b"".join(relay.tap(iter(reads))) == CALLS  # relayed unchanged, read on the way
    assert relay.done and relay.result() == read(CALLS)[1].result()
    s = ssewire.CohereStream()
    items = list(s.iter(iter(reads)))
    assert [key(i) for i in items] == [key(i) for i in read(CALLS)[0]]
    assert s.done and s.timing["output_chunks"] == len(THINKING) + len(PLAN) + 1 + len(ARGS)

    async def run() -> list:
        async def gen():  # type: ignore[no-untyped-def]
            for r in reads:
                yield r

        a = ssewire.CohereStream()
        return [key(i) async for i in a.aiter(gen())]

    assert asyncio.run(run()) == [key(i) for i in items]
