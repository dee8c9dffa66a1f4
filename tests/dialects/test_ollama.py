"""Ollama's native stream (`OllamaStream`, NDJSON; API.md section 16), shaped as Ollama writes it.

Covered: chat lines (text, thinking, whole tool calls, images) and generate lines (response,
context) fed whole, byte by byte and cut at random points; the terminal line's reason, counts
and durations; `prompt_eval_count` left out (a cached prompt); errors (an `{"error"}` line under
200, a non-2xx body with no line feed, a body cut before `done: true`); detection and
`accumulate`; the usage; translation both ways (read back by the dialect streams and by
ollama-python's `ChatResponse`); requests both ways.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import ssewire
from support.items import _attrs
from support.splitting import assert_same_all_ways

MODEL = "qwen3:8b"


def line(**fields: Any) -> bytes:
    """One line as Ollama writes it: `model` and `created_at` first, compact JSON, `\\n`."""
    body = {"model": MODEL, "created_at": "2025-08-06T10:21:07.123456789Z", **fields}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def chat(content: str = "", **message: Any) -> bytes:
    return line(message={"role": "assistant", "content": content, **message}, done=False)


DONE = dict(
    done=True,
    done_reason="stop",
    total_duration=4883583458,
    load_duration=1334875,
    prompt_eval_count=26,
    prompt_eval_duration=342546000,
    eval_count=282,
    eval_duration=4535599000,
)

# A thinking model that thinks, answers, calls a tool, and stops: the shape of `ollama run
# qwen3` through /api/chat with tools (thinking pieces, then content pieces of a token or two,
# the call whole in one line, an empty content on the terminal line).
TEXT = ["The", " weather", " in", " Paris", " is", " mild", ": \u201c18\u00b0C\u201d", ".\n"]
THINKING = ["Okay", ",", " the", " user", " wants", " the", " weather", "."]
CALL = {"function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}
CHAT = (
    b"".join(chat("", thinking=t) for t in THINKING)
    + b"".join(chat(t) for t in TEXT)
    + chat("", tool_calls=[CALL])
    + line(message={"role": "assistant", "content": ""}, **DONE)
)
GENERATE = (
    b"".join(line(response=t, done=False) for t in TEXT)
    + line(response="", done=True, done_reason="length", context=[1, 2, 3], eval_count=8, eval_duration=5)
)


def key(item: Any) -> Any:
    return _attrs(item)


def read(body: bytes) -> tuple[list[Any], ssewire.OllamaStream]:
    s = ssewire.OllamaStream()
    items = s.feed(body) + s.finish()
    return items, s


# --- the stream -----------------------------------------------------------------------------


def test_chat_stream_every_way_and_its_result() -> None:
    items = assert_same_all_ways(ssewire.OllamaStream, CHAT, key=key)
    assert "".join(i.thinking or "" for i in items) == "".join(THINKING)
    assert "".join(i.content or "" for i in items) == "".join(TEXT)
    assert items[-2].tool_calls == [CALL]
    assert items[-1].done is True and items[-1].done_reason == "stop"
    _, s = read(CHAT)
    assert s.done and s.error is None
    assert s.result() == {
        "model": MODEL,
        "created_at": "2025-08-06T10:21:07.123456789Z",
        "message": {"role": "assistant", "content": "".join(TEXT), "thinking": "".join(THINKING),
                    "tool_calls": [CALL]},  # fmt: skip
        "done": True,
        **{k: v for k, v in DONE.items() if k != "done"},
    }
    assert s.usage is not None
    assert (s.usage["input_tokens"], s.usage["output_tokens"]) == (26, 282)


def test_generate_stream_keeps_response_and_context() -> None:
    assert_same_all_ways(ssewire.OllamaStream, GENERATE, key=key)
    _, s = read(GENERATE)
    r = s.result()
    assert r["response"] == "".join(TEXT) and "message" not in r
    assert (r["done_reason"], r["context"], r["eval_count"]) == ("length", [1, 2, 3], 8)
    assert s.usage is not None and s.usage["input_tokens"] is None  # prompt came from the cache


def test_cut_before_done_is_incomplete_and_keeps_the_text() -> None:
    _, s = read(CHAT[: CHAT.index(b'"done":true') - 200])
    assert s.error is not None and s.error.code == "incomplete_stream"
    assert not s.done and s.result()["message"]["content"].startswith("The weather")


def test_error_line_under_200_is_the_streams_error() -> None:
    body = chat("Hi") + b'{"error":"an error was encountered while running the model: unexpected EOF"}\n'
    items = assert_same_all_ways(ssewire.OllamaStream, body, key=key)
    assert isinstance(items[-1], ssewire.ErrorItem) and items[-1].kind == "stream_error"
    _, s = read(body)
    assert s.error is not None and "unexpected EOF" in s.error.message
    with pytest.raises(ssewire.AccumulateError) as info:
        ssewire.accumulate(body, "ollama")
    assert info.value.result["message"]["content"] == "Hi"


def test_error_body_without_line_feed_counts_at_finish() -> None:
    body = b'{"error":"model \\"llama9\\" not found, try pulling it first"}'
    items = assert_same_all_ways(ssewire.OllamaStream, body, key=key)
    assert [i.kind for i in items] == ["stream_error"]
    _, s = read(body)
    assert s.error is not None and s.error.message == 'model "llama9" not found, try pulling it first'


def test_crlf_blank_lines_and_a_bad_line_keep_the_lines_around_it() -> None:
    body = chat("a").replace(b"\n", b"\r\n") + b"\n{oops\n" + chat("b") + line(message={"role": "assistant", "content": ""}, **DONE)
    items = assert_same_all_ways(ssewire.OllamaStream, body, key=key)
    assert [getattr(i, "kind", None) for i in items].count("malformed_json") == 1
    _, s = read(body)
    assert s.result()["message"]["content"] == "ab" and s.done


def test_lines_on_the_fast_path_read_as_decoded() -> None:
    """A line of a plain line's shape is read without a decode (the line template): each item
    is what a fresh stream decodes from that line alone, escapes and `created_at` included."""
    texts = ["a", 'q"uote', "\\", "\u00e9t\u00e9", "\n", "x" * 300]
    lines = [chat(t) for t in texts] + [chat("", thinking=t) for t in texts] + [line(response=t, done=False) for t in texts]
    lines = [l.replace(b"10:21:07.123456789Z", f"10:21:{i:02}.5Z".encode()) for i, l in enumerate(lines)]
    s = ssewire.OllamaStream()
    items = [key(i) for i in s.feed(b"".join(lines))]
    fresh = [key(i) for l in lines for i in ssewire.OllamaStream().feed(l)]
    assert items == fresh
    assert s.result()["created_at"] == f"2025-08-06T10:21:{len(lines) - 1:02}.5Z"


def test_a_body_that_is_no_json_lines_is_not_a_stream() -> None:
    for body in (b"<html><body>502 Bad Gateway</body></html>\n", b"404 page not found"):
        items = assert_same_all_ways(ssewire.OllamaStream, body, key=key)
        assert [i.error.code for i in items] == ["not_event_stream"]


# --- detection, accumulate, the command line --------------------------------------------------


def test_detected_and_accumulated_from_any_reads() -> None:
    assert ssewire.detect_dialect(CHAT) == "ollama"
    assert ssewire.detect_dialect(GENERATE) == "ollama"
    reads = [CHAT[i : i + 5] for i in range(0, len(CHAT), 5)]
    assert ssewire.accumulate(reads) == ssewire.accumulate(CHAT, "ollama")


def test_item_dicts() -> None:
    items, _ = read(CHAT)
    assert items[0].to_dict() == {"model": MODEL, "created_at": "2025-08-06T10:21:07.123456789Z",
                                  "role": "assistant", "content": "", "thinking": "Okay", "done": False}  # fmt: skip
    assert items[-2].to_dict()["tool_calls"] == [CALL]


# --- translation ------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["chat", "messages", "responses", "gemini"])
def test_ollama_into_each_dialect(target: str) -> None:
    out = ssewire.translate(CHAT, "ollama", target)
    result = ssewire.accumulate(out, target)
    text = json.dumps(result)
    assert "mild" in text and "get_weather" in text and "Paris" in text


@pytest.mark.parametrize("source", ["chat", "messages", "responses", "gemini"])
def test_each_sample_into_ollama_reads_back(source: str) -> None:
    from ssewire._cli import _sample_bytes

    body = _sample_bytes(f"{source}.sse")
    out = ssewire.translate(body, source, "ollama")
    want = ssewire.accumulate(body, source)
    s = ssewire.OllamaStream()
    s.feed(out)
    s.finish()
    assert s.done and s.error is None
    text = s.result()["message"]["content"]
    assert text and text in json.dumps(want, ensure_ascii=False).replace("\\n", "\n")
    ollama = pytest.importorskip("ollama")
    lines = [ollama.ChatResponse.model_validate_json(l) for l in out.splitlines()]
    assert "".join(r.message.content or "" for r in lines) == text
    assert lines[-1].done and lines[-1].done_reason == "stop"


def test_tool_call_into_ollama_is_whole_with_object_arguments() -> None:
    msgs = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
        b'"model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
        b'"id":"toolu_1","name":"get_weather","input":{}}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\": "}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\\"Paris\\"}"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    out = ssewire.translate(msgs, "messages", "ollama")
    lines = [json.loads(l) for l in out.splitlines()]
    calls = [l["message"]["tool_calls"] for l in lines if l["message"].get("tool_calls")]
    assert calls == [[{"id": "toolu_1", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]]
    assert lines[-1]["done"] is True and lines[-1]["eval_count"] == 9
    ollama = pytest.importorskip("ollama")
    calls_read = [ollama.ChatResponse.model_validate(l).message.tool_calls for l in lines]
    assert [c[0].function.arguments for c in calls_read if c] == [{"city": "Paris"}]


# --- requests ---------------------------------------------------------------------------------


def test_request_both_ways() -> None:
    body = {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?", "images": ["iVBORw0KGgo="]},
            {"role": "assistant", "content": "", "thinking": "Use the tool.", "tool_calls": [CALL]},
            {"role": "tool", "content": "18C", "tool_name": "get_weather"},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],  # fmt: skip
        "options": {"num_predict": 256, "temperature": 0.2, "top_k": 40, "stop": ["END"]},
        "think": True,
        "stream": True,
    }
    t = ssewire.translate_request(body, "ollama", "messages")
    assert t.path == "/v1/messages"
    m = t.body
    assert m["system"] == "Be brief." and m["max_tokens"] == 256 and m["top_k"] == 40
    assert m["messages"][1]["content"][-1]["type"] == "tool_use"
    assert m["messages"][2]["content"][0]["type"] == "tool_result"
    back = ssewire.translate_request(m, "messages", "ollama")
    assert back.path == "/api/chat"
    b = back.body
    assert [x["role"] for x in b["messages"]] == ["system", "user", "assistant", "tool"]
    assert b["messages"][2]["tool_calls"][0]["function"] == CALL["function"]
    tool = b["messages"][3]
    assert tool == {"role": "tool", "content": "18C", "tool_name": "get_weather", "tool_call_id": tool["tool_call_id"]}
    assert tool["tool_call_id"] == b["messages"][2]["tool_calls"][0]["id"]
    assert b["options"]["num_predict"] == 256 and b["options"]["top_k"] == 40 and b["options"]["stop"] == ["END"]
    assert b["stream"] is True and b["tools"][0]["function"]["name"] == "get_weather"


def test_translate_error_into_ollama() -> None:
    e = ssewire.translate_error(429, b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
                                "messages", "ollama")  # fmt: skip
    assert e.status == 429 and json.loads(e.body) == {"error": "slow down"}


# --- ollama-python over loopback --------------------------------------------------------------


@pytest.mark.parametrize("cloud", [False, True], ids=["local-ndjson", "cloud-json"])
def test_ollama_python_reads_a_translated_stream_over_http(cloud: bool) -> None:
    """ollama-python's client streams what a translation from Messages wrote, from a loopback
    server that answers as a local Ollama (chunked NDJSON) or as Ollama Cloud
    (``application/json``); ssewire reads the same bytes back whatever their content type."""
    ollama = pytest.importorskip("ollama")
    from ssewire._cli import _sample_bytes
    from support.ollama_server import OllamaServer

    lines = ssewire.translate(_sample_bytes("messages.sse"), "messages", "ollama")
    with OllamaServer(lines, cloud=cloud) as server:
        client = ollama.Client(host=server.url(), timeout=30)
        parts = list(client.chat(model=MODEL, messages=[{"role": "user", "content": "Weather?"}], stream=True))
        assert server.requests[0]["model"] == MODEL
    assert len(parts) <= lines.count(b"\n")
    text = "".join(p.message.content or "" for p in parts)
    calls = [c for p in parts for c in (p.message.tool_calls or [])]
    assert parts[-1].done and parts[-1].done_reason == "stop"
    s = ssewire.OllamaStream()
    s.feed(lines)
    s.finish()
    assert text == s.result()["message"]["content"]
    assert [c.function.name for c in calls] == [c["function"]["name"] for c in s.result()["message"]["tool_calls"]]


def test_tool_results_pair_by_id_then_name_then_order() -> None:
    """Two calls of one tool answered out of order pair by `tool_call_id`; a result with no
    name answers the earliest open call; `format: ""` is no format (ollama-python 0.3)."""
    calls = [{"id": "c1", "function": {"name": "f", "arguments": {"x": 1}}},
             {"id": "c2", "function": {"name": "f", "arguments": {"x": 2}}}]  # fmt: skip
    body = {
        "model": MODEL,
        "format": "",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": calls},
            {"role": "tool", "content": "two", "tool_name": "f", "tool_call_id": "c2"},
            {"role": "tool", "content": "one"},
        ],
    }
    m = ssewire.translate_request(body, "ollama", "messages").body
    results = [(b["tool_use_id"], b["content"][0]["text"]) for b in m["messages"][2]["content"]]
    assert results == [("c2", "two"), ("c1", "one")] and "output_config" not in m


def test_empty_tool_call_lists_keep_one_text_block() -> None:
    body = b"".join(chat(t, tool_calls=[]) for t in TEXT) + line(message={"role": "assistant", "content": ""}, **DONE)
    out = ssewire.translate(body, "ollama", "messages")
    assert out.count(b"event: content_block_start") == 1
    s = ssewire.OllamaStream()
    s.consume(body)
    s.finish()
    assert s.timing["output_chunks"] == len(TEXT)


def test_fast_path_keeps_terminal_fields_and_counts_no_empty_output() -> None:
    odd = line(message={"role": "assistant", "content": "a"}, done=False, done_reason="x")
    body = odd + odd.replace(b'"a"', b'"b"') + chat("c") + chat("") + line(message={"role": "assistant", "content": ""}, **DONE)
    whole = [key(i) for i in ssewire.OllamaStream().feed(body)]
    fresh = [key(i) for l in body.splitlines(keepends=True) for i in ssewire.OllamaStream().feed(l)]
    assert whole == fresh
    s = ssewire.OllamaStream()
    s.consume(body)
    s.finish()
    assert s.timing["output_chunks"] == 3 and s.result()["done_reason"] == "stop"


def test_arguments_into_ollama_keep_their_order() -> None:
    chat_body = (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1754475667,"model":"m","choices":[{"index":0,'
        b'"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":'
        b'{"name":"f","arguments":"{\\"zeta\\": 1, \\"alpha\\": 12345678901234567890123}"}}]},"finish_reason":null}]}\n\n'
        b'data: {"id":"c","object":"chat.completion.chunk","created":1754475667,"model":"m","choices":[{"index":0,'
        b'"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
    )
    out = ssewire.translate(chat_body, "chat", "ollama")
    assert b'"arguments":{"zeta":1,"alpha":12345678901234567890123}' in out
    assert b'"created_at":"2025-08-06T10:21:07Z"' in out


# --- review findings ----------------------------------------------------------------------------


def test_a_done_line_is_no_end_of_an_ollama_stream() -> None:
    """`[DONE]` is the SSE sentinel; in NDJSON it is a line that is no JSON record."""
    body = chat("Hi") + b"[DONE]\n"
    items = assert_same_all_ways(ssewire.OllamaStream, body, key=key)
    assert [getattr(i, "kind", None) for i in items].count("malformed_json") == 1
    _, s = read(body)
    assert not s.done and s.error is not None and s.error.code == "incomplete_stream"


def test_a_generate_request_translates() -> None:
    body = {"model": "llama3.2", "system": "Be brief.", "prompt": "Why is the sky blue?", "images": ["iVBORw0KGgo="],
            "options": {"num_predict": 64}, "stream": True, "raw": False}  # fmt: skip
    t = ssewire.translate_request(body, "ollama", "chat")
    m = t.body["messages"]
    assert m[0] == {"role": "system", "content": "Be brief."}
    assert m[1]["content"][0] == {"type": "text", "text": "Why is the sky blue?"} and m[1]["content"][1]["type"] == "image_url"
    assert t.body["max_tokens"] == 64 or t.body.get("max_completion_tokens") == 64
    assert any("raw" in n for n in t.notes)


def test_images_on_other_roles_are_noted() -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"},
                                         {"role": "assistant", "content": "see", "images": ["iVBORw0KGgo="]}]}  # fmt: skip
    t = ssewire.translate_request(body, "ollama", "messages")
    assert any("images" in n for n in t.notes)


def test_logprobs_and_the_remote_model_are_kept() -> None:
    body = (
        line(message={"role": "assistant", "content": "Hi"}, done=False, logprobs=[{"token": "Hi", "logprob": -0.1}],
             remote_model="gpt-oss:120b", remote_host="https://ollama.com:443")  # fmt: skip
        + line(message={"role": "assistant", "content": "!"}, done=False, logprobs=[{"token": "!", "logprob": -0.5}])
        + line(message={"role": "assistant", "content": ""}, **DONE)
    )
    _, s = read(body)
    r = s.result()
    assert r["logprobs"] == [{"token": "Hi", "logprob": -0.1}, {"token": "!", "logprob": -0.5}]
    assert (r["remote_model"], r["remote_host"]) == ("gpt-oss:120b", "https://ollama.com:443")
    assert r["message"]["content"] == "Hi!"


def test_many_tool_calls_into_ollama() -> None:
    """A stream of many calls open at once is written whole, each once, in order."""
    head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    calls = [{"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": json.dumps({"i": i})}}
             for i in range(3000)]  # fmt: skip
    body = (
        b"data: " + json.dumps({**head, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": calls}}]}).encode()
        + b"\n\ndata: " + json.dumps({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}).encode()
        + b"\n\ndata: [DONE]\n\n"
    )
    out = ssewire.translate(body, "chat", "ollama")
    got = [c["function"]["arguments"]["i"] for l in out.splitlines() for c in json.loads(l)["message"].get("tool_calls") or []]
    assert got == list(range(3000))
