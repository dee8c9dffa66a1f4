"""Issue 16: live translation between dialects (API.md section 8).

Every capture of ``tests/data`` is translated into each other dialect:

- whole, byte by byte and at random splits, giving the same bytes;
- live: fed one upstream event at a time, each event's text is in the output of the feed that
  carried it, and a complete upstream is out in full before ``finish()``;
- the output read back by ssewire's own target stream equals ``t.result()``, ends with the
  target's terminal marker exactly when the source had its own, and carries the source's
  text, reasoning, tool calls (ids, names, parsed arguments, order), mapped stop reason and
  mapped usage (cached tokens included);
- the output read by the TARGET's official SDK over a real socket (``support/loopback.py`` on
  127.0.0.1: openai ``chat.completions.stream`` / ``responses.stream``, anthropic
  ``messages.stream``) gives the same neutral content.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Optional

import pytest
import ssewire
from support import paths, registry
from support.cost import assert_linear
from support.loopback import LoopbackServer
from support.neutral import comparable, lossy, neutral
from support.sdks import SDKS, TIMEOUT
from support.splitting import split_ways

DATA = paths.DATA
# Every dialect is a source and a target (Gemini a target since issue 27): twelve pairs.
DIALECTS = registry.NAMES
SOURCES = DIALECTS
STREAMS = {
    "chat": ssewire.ChatCompletionStream,
    "messages": ssewire.MessagesStream,
    "responses": ssewire.ResponsesStream,
    "gemini": ssewire.GeminiStream,
}




def captures() -> list[tuple[str, str]]:
    return [(d, p.stem) for d in SOURCES for p in sorted((DATA / d).glob("*.sse"))]


CAPTURES = captures()
PAIRS = [(d, n, t) for d, n in CAPTURES for t in DIALECTS if t != d]


def body_of(dialect: str, name: str) -> bytes:
    return (DATA / dialect / f"{name}.sse").read_bytes()


def read(dialect: str, body: bytes) -> Any:
    s = STREAMS[dialect]()
    s.feed(body)
    s.finish()
    return s


# --- the neutral content of a final object ---------------------------------------------------


# --- bytes: split-independent, live -------------------------------------------------------------


@pytest.mark.parametrize(("source", "name", "target"), PAIRS, ids=[f"{s}/{n}->{t}" for s, n, t in PAIRS])
def test_same_bytes_however_the_reads_are_cut(source: str, name: str, target: str) -> None:
    body = body_of(source, name)
    outs = []
    for way in split_ways(body):
        t = ssewire.Translator(source, target)
        outs.append((way.name, b"".join(t.feed(p) for p in way.pieces) + t.finish()))
    for way, out in outs[1:]:
        assert out == outs[0][1], way


@pytest.mark.parametrize(("source", "name", "target"), PAIRS, ids=[f"{s}/{n}->{t}" for s, n, t in PAIRS])
def test_translation_carries_the_content(source: str, name: str, target: str) -> None:
    body = body_of(source, name)
    t = ssewire.Translator(source, target)
    out = t.feed(body)
    complete = t.source.done and t.source.error is None
    if complete:
        assert out, "a complete upstream is out in full before finish()"
    out += t.finish()
    back = read(target, out)
    assert t.result() == back.result()
    # The terminal marker exactly when the source had its own; an upstream error becomes the
    # target's error form (Responses' `response.failed` is terminal too).
    error = t.source.error
    if error is None:
        assert back.done and back.error is None
    elif error.code in ("incomplete_stream", "wrong_dialect"):
        assert not back.done
    else:
        assert back.error is not None and back.error.code != "incomplete_stream"
        assert back.error.message == error.message
    if not complete:
        return
    src, tgt = comparable(
        neutral(source, t.source.result()), neutral(target, t.result()), lossy(source, body)
    )
    assert tgt == src


@pytest.mark.parametrize(("source", "name", "target"), PAIRS, ids=[f"{s}/{n}->{t}" for s, n, t in PAIRS])
def test_result_while_streaming_is_what_the_bytes_so_far_assemble(
    source: str, name: str, target: str
) -> None:
    """``t.result()`` asked after every read is what the target's stream assembles from the
    bytes written so far: the writers fold runs of deltas lazily, and asking must fold them.
    The first 60 frames come one at a time (every third in 7-byte pieces), the rest at once."""
    body = body_of(source, name)
    t = ssewire.Translator(source, target)
    back = STREAMS[target]()
    # Frames with their own separators (LF or CRLF), so the pieces join to the body.
    frames = [m.group(0) for m in re.finditer(rb"(?s).*?(?:\r?\n\r?\n|\Z)", body) if m.group(0)]
    assert b"".join(frames) == body
    for i, frame in enumerate(frames[:60]):
        pieces = [frame] if i % 3 else [frame[j : j + 7] for j in range(0, len(frame), 7)]
        for piece in pieces:
            back.consume(t.feed(piece))
            assert t.result() == back.result()
    back.consume(t.feed(b"".join(frames[60:])) + t.finish())
    assert t.result() == back.result()


def test_auto_source_and_translate() -> None:
    for source, name in CAPTURES[::7]:
        body = body_of(source, name)
        t = ssewire.Translator("auto", "messages")
        out = b"".join(t.iter([body]))
        assert t.source_dialect in (source, "chat")
        assert out == ssewire.translate(body, "auto", "messages")


def test_live_one_event_per_read() -> None:
    """Each upstream text delta is in the output of the feed that carried it."""
    body = body_of("chat", "basic_stop")
    t = ssewire.Translator("chat", "messages")
    for frame in body.split(b"\n\n"):
        if not frame.strip():
            continue
        out = t.feed(frame + b"\n\n")
        for line in frame.decode().splitlines():
            if line.startswith("data: {"):
                for choice in json.loads(line[6:]).get("choices") or []:
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        assert json.dumps(text)[1:-1].encode() in out
    assert b"message_stop" in out  # [DONE] closed it, before finish()
    assert t.finish() == b""


def test_live_gemini_one_chunk_per_read() -> None:
    """Gemini has no terminal marker: candidate 0's finishReason closes the target, before
    finish(), and each chunk's text is out with the feed that carried it."""
    body = body_of("gemini", "text_basic")
    for target in DIALECTS:
        t = ssewire.Translator("gemini", target)
        out = b""
        for frame in body.split(b"\r\n\r\n"):
            if not frame.strip():
                continue
            out = t.feed(frame + b"\r\n\r\n")
            chunk = json.loads(frame.decode()[6:])
            for part in chunk["candidates"][0]["content"]["parts"]:
                if part.get("text"):
                    assert json.dumps(part["text"], ensure_ascii=False)[1:-1].encode() in out
        assert {
            "chat": b"[DONE]",
            "messages": b"message_stop",
            "responses": b"response.completed",
            "gemini": b'"finishReason"',
        }[target] in out
        assert t.finish() == b""


def test_gemini_usage_and_made_up_ids() -> None:
    """Output tokens are candidates + thoughts tokens, reasoning tokens the thoughts, cached
    tokens cachedContentTokenCount (inside the prompt count, as OpenAI counts them); calls get
    ids that are unique within the message and the same however the reads were cut."""
    body = body_of("gemini", "parallel_calls")
    usage = read("gemini", body).result()["usageMetadata"]
    chat = read("chat", ssewire.translate(body, "gemini", "chat")).result()
    assert chat["usage"]["completion_tokens"] == usage["candidatesTokenCount"] + usage.get(
        "thoughtsTokenCount", 0
    )
    assert chat["usage"]["prompt_tokens"] == usage["promptTokenCount"]
    ids = [c["id"] for c in chat["choices"][0]["message"]["tool_calls"]]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert chat["choices"][0]["finish_reason"] == "tool_calls"
    body = body_of("gemini", "thinking_signature")
    usage = read("gemini", body).result()["usageMetadata"]
    out = ssewire.translate(body, "gemini", "messages")
    msg = read("messages", out).result()
    assert msg["usage"]["output_tokens"] == usage["candidatesTokenCount"] + usage["thoughtsTokenCount"]
    # message_start already has the prompt's figures (Gemini sends them with the first chunk).
    start = json.loads(out.split(b"\n\n")[0].split(b"data: ")[1])
    assert start["message"]["usage"]["input_tokens"] == usage["promptTokenCount"]
    assert [b["type"] for b in msg["content"]] == ["thinking", "text"]
    # The signature of a thought part crosses to the thinking block; one on answer text has
    # no place in the target and is named in the notes.
    assert "thought signatures on answer text" in ssewire.Translator("gemini", "messages").notes + _notes_of(
        body, "messages"
    )
    signed = _gemini_chunk({"text": "hmm", "thought": True, "thoughtSignature": "c2ln"}) + _gemini_chunk(
        {"text": "Hi"}, finish="STOP"
    )
    msg = read("messages", ssewire.translate(signed, "gemini", "messages")).result()
    assert msg["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": "c2ln"}
    resp = read("responses", ssewire.translate(body, "gemini", "responses")).result()
    assert resp["usage"]["output_tokens_details"]["reasoning_tokens"] == usage["thoughtsTokenCount"]


def _notes_of(body: bytes, target: str) -> list[str]:
    t = ssewire.Translator("gemini", target)
    t.feed(body)
    t.finish()
    return t.notes


def _gemini_chunk(part: dict, finish: Optional[str] = None) -> bytes:
    candidate: dict = {"content": {"role": "model", "parts": [part]}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return ("data: " + json.dumps({"candidates": [candidate], "modelVersion": "g"}) + "\r\n\r\n").encode()


def _frames(body: bytes) -> list[bytes]:
    return [f + b"\r\n\r\n" for f in body.split(b"\r\n\r\n") if f.strip()]


def test_gemini_usage_after_the_finish_reason_crosses() -> None:
    """Vertex counts the answer only in a usage-only chunk after the finish reason: the
    closing events wait for it (they go out with the feed that carried it), so the target
    bills what Gemini counted, and nothing of it is lost."""
    body = body_of("gemini", "vertex_call_id_usage_after_finish")
    closing = {
        "chat": b"[DONE]",
        "messages": b"message_stop",
        "responses": b"response.completed",
        "gemini": b'"finishReason"',
    }
    for target in DIALECTS:
        t = ssewire.Translator("gemini", target)
        outs = [t.feed(f) for f in _frames(body)]
        assert closing[target] not in b"".join(outs[:-1]) and closing[target] in outs[-1]
        assert t.finish() == b""
        got = neutral(target, t.result())
        assert got["usage"] == {"input": 58, "output": 21 + 84, "cached": 0}, target
        assert got["calls"] == [("call-7f3a", "get_weather", {"city": "Paris", "unit": "celsius"})]
        assert got["stop"] == "tool"
        # Vertex's createTime (2026-11-20T10:00:00.123456Z) is the target's creation time.
        created = {"chat": "created", "responses": "created_at"}.get(target)
        if created:
            assert t.result()[created] == 1_795_168_800
    # Without the usage chunk, the end of the upstream writes the closing events.
    t = ssewire.Translator("gemini", "messages")
    out = b"".join(t.feed(f) for f in _frames(body)[:-1])
    assert b"message_stop" not in out and b"message_stop" in t.finish()
    # Usage after the closing events cannot be written: it is named.
    late = body + b'data: {"usageMetadata": {"promptTokenCount": 58, "candidatesTokenCount": 30}}\r\n\r\n'
    assert "usage sent after the target's closing events (not written)" in _notes_of(late, "chat")


def test_gemini_signatures_stay_with_their_thought_runs() -> None:
    """Gemini signs the first part of a thought run: the run is one thinking block whose
    signature follows its text (as Anthropic sends it), a second signed run is a block of its
    own (a part that is only a signature too), and an empty text part opens no block."""
    body = body_of("gemini", "vertex_call_id_usage_after_finish")
    msg = read("messages", ssewire.translate(body, "gemini", "messages")).result()
    thinking = "**Planning** I need the weather in Paris.**Calling** get_weather with the city."
    assert msg["content"][:2] == [
        {"type": "thinking", "thinking": thinking, "signature": "CsYBAY89a1/Zq1"},
        {"type": "thinking", "thinking": "", "signature": "CsYBAY89a2/Zq2"},
    ]
    assert [b["type"] for b in msg["content"]] == ["thinking", "thinking", "tool_use"]
    out = ssewire.translate(body, "gemini", "messages").decode()
    first = out.index('"content_block_start","index":0')
    assert out.index('"thinking_delta"', first) < out.index('"signature_delta"', first)
    resp = read("responses", ssewire.translate(body, "gemini", "responses")).result()
    assert [(i["type"], i.get("encrypted_content")) for i in resp["output"]] == [
        ("reasoning", "CsYBAY89a1/Zq1"), ("reasoning", "CsYBAY89a2/Zq2"), ("function_call", None)]  # fmt: skip


def test_gemini_cached_tokens_citations_and_max_tokens() -> None:
    body = body_of("gemini", "citations_max_tokens_cached")
    chat = read("chat", ssewire.translate(body, "gemini", "chat")).result()
    assert chat["usage"]["prompt_tokens"] == 1040
    assert chat["usage"]["prompt_tokens_details"]["cached_tokens"] == 1024
    assert chat["choices"][0]["finish_reason"] == "length"
    msg = read("messages", ssewire.translate(body, "gemini", "messages")).result()
    assert (msg["usage"]["input_tokens"], msg["usage"]["cache_read_input_tokens"]) == (16, 1024)
    assert msg["stop_reason"] == "max_tokens"
    assert "citations and grounding metadata (citationMetadata, groundingMetadata)" in _notes_of(body, "chat")


def test_gemini_candidate_without_index_is_candidate_zero() -> None:
    """Vertex's proto3 JSON leaves `index: 0` out: beside a candidate with `index: 1`, the one
    without an index is candidate 0 (not the second by its place)."""
    chunk = {"candidates": [{"content": {"role": "model", "parts": [{"text": "B"}]}, "index": 1},
                            {"content": {"role": "model", "parts": [{"text": "A"}]}, "finishReason": "STOP"}],
             "modelVersion": "g"}  # fmt: skip
    body = ("data: " + json.dumps(chunk) + "\r\n\r\n").encode()
    s = read("gemini", body)
    assert s.done and s.error is None
    assert [c["content"]["parts"][0]["text"] for c in s.result()["candidates"]] == ["A", "B"]
    chat = read("chat", ssewire.translate(body, "gemini", "chat"))
    assert chat.done and chat.result()["choices"][0]["message"]["content"] == "A"


def test_gemini_model_armor_is_a_filter() -> None:
    body = _gemini_chunk({"text": "x"}) + _gemini_chunk({"text": ""}, finish="MODEL_ARMOR")
    assert (
        read("chat", ssewire.translate(body, "gemini", "chat")).result()["choices"][0]["finish_reason"]
        == "content_filter"
    )
    assert (
        read("messages", ssewire.translate(body, "gemini", "messages")).result()["stop_reason"] == "refusal"
    )


def test_gemini_ids_without_a_response_id_are_the_same_every_time() -> None:
    """Found by fuzzing: without a responseId the made-up call ids came from a random salt, so
    two translators of the same stream wrote different bytes. They now come from what the
    stream said before the call: the same stream gives the same ids, two calls different ones."""

    def no_id(c: dict) -> dict:
        c = dict(c)
        c.pop("responseId", None)
        return c

    call = {"functionCall": {"name": "f", "args": {"x": 1}}}
    body = b"".join(
        _gemini_chunk(p, finish=f)
        for p, f in [({"text": "Let me check."}, None), (call, None), (call, "STOP")]
    )
    body = b"".join(
        ("data: " + json.dumps(no_id(json.loads(line[6:]))) + "\r\n\r\n").encode()
        for line in body.decode().split("\r\n\r\n")
        if line
    )
    outs = {ssewire.translate(body, "gemini", "chat") for _ in range(3)}
    outs.add(
        b"".join(ssewire.Translator("gemini", "chat").iter([body[i : i + 5] for i in range(0, len(body), 5)]))
    )
    assert len(outs) == 1
    calls = read("chat", outs.pop()).result()["choices"][0]["message"]["tool_calls"]
    assert len({c["id"] for c in calls}) == 2


def test_unknown_dialects_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown target dialect"):
        ssewire.Translator("chat", "bard")
    with pytest.raises(ValueError, match="unknown source dialect"):
        ssewire.Translator("palm", "gemini")


def test_cut_upstream_gets_no_made_up_ending() -> None:
    body = body_of("messages", "text_basic")
    cut = body[: body.index(b"event: message_delta")]
    for target in ("chat", "responses"):
        out = ssewire.translate(cut, "messages", target)
        assert b"[DONE]" not in out and b"response.completed" not in out
        back = read(target, out)
        assert not back.done and back.error.code == "incomplete_stream"


def test_cached_tokens_are_mapped_both_ways() -> None:
    """OpenAI counts cached tokens inside prompt tokens, Anthropic apart (gateways misbill here)."""
    body = body_of("messages", "cache_usage_stop_sequence")
    src = read("messages", body).result()["usage"]
    chat = read("chat", ssewire.translate(body, "messages", "chat")).result()["usage"]
    cached = src.get("cache_read_input_tokens") or 0
    assert cached > 0
    total = src["input_tokens"] + cached + (src.get("cache_creation_input_tokens") or 0)
    assert chat["prompt_tokens"] == total
    assert chat["prompt_tokens_details"]["cached_tokens"] == cached
    back = read(
        "messages", ssewire.translate(ssewire.translate(body, "messages", "chat"), "chat", "messages")
    )
    assert back.result()["usage"]["cache_read_input_tokens"] == cached
    assert back.result()["usage"]["input_tokens"] + cached == total


@pytest.mark.parametrize("path", [("chat", "messages", "chat"), ("messages", "chat", "messages"),
                                  ("responses", "messages", "responses"), ("chat", "responses", "chat")])  # fmt: skip
def test_round_trips_keep_content(path: tuple[str, str, str]) -> None:
    for source, name in CAPTURES:
        if source != path[0]:
            continue
        body = body_of(source, name)
        first = read(source, body)
        if not first.done or first.error is not None:
            continue
        there = ssewire.translate(body, path[0], path[1])
        back = ssewire.translate(there, path[1], path[2])
        a, b = comparable(neutral(source, first.result()), neutral(path[2], read(path[2], back).result()),
                          lossy(source, body))  # fmt: skip
        assert b == a, name


# --- the target's official SDK over a real socket -----------------------------------------------


@pytest.fixture(scope="module")
def server() -> Any:
    with LoopbackServer(timeout=TIMEOUT) as srv:
        yield srv


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("target", DIALECTS)
def test_the_targets_sdk_reads_the_translation(target: str, server: LoopbackServer) -> None:
    checked = 0
    for i, (source, name) in enumerate(CAPTURES):
        if source == target:
            continue
        body = body_of(source, name)
        t = ssewire.Translator(source, target)
        out = t.feed(body) + t.finish()
        if not (t.source.done and t.source.error is None):
            continue
        base = server.url(server.add(out, seed=i, delay=0.0))
        got = SDKS[target](base)
        src, tgt = comparable(neutral(source, t.source.result()), neutral(target, got), lossy(source, body))
        assert tgt == src, f"{source}/{name} -> {target}"
        checked += 1
    assert checked >= 20


# --- hostile input ---------------------------------------------------------------------------------


def _many_calls(n: int) -> bytes:
    calls = [{"index": i, "id": f"c{i}", "function": {"name": "f", "arguments": "{}"}} for i in range(n)]
    chunk = {
        "id": "x",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"tool_calls": calls}}],
    }
    return ("data: " + json.dumps(chunk) + "\n\ndata: [DONE]\n\n").encode()


@pytest.mark.parametrize("target", ["messages", "responses"])
def test_many_tool_calls_translate_in_linear_time(target: str) -> None:
    """A chunk of thousands of tool calls: linear work."""

    def cost(n: int) -> None:
        body = _many_calls(n)
        out = ssewire.translate(body, "chat", target)
        assert len(out) < 20 * len(body)

    assert_linear(cost, 1000)


def test_garbage_never_raises() -> None:
    for body in [b"\xff\xfe\x00garbage", b"data: {\n\n", b"event: error\ndata: \n\n", b"{\"error\": 1}",
                 b"data: [DONE]\n\n" * 3, b"<html>502</html>"]:  # fmt: skip
        for source in ("auto",) + SOURCES:
            for target in DIALECTS:
                t = ssewire.Translator(source, target)
                t.feed(body)
                t.finish()
                t.result()


def test_output_events_larger_than_the_limit_are_fine() -> None:
    """Found by fuzzing: a target event may be larger than any upstream event (a Responses
    `response.completed` holds every item); `max_event_size` bounds the upstream's events only,
    and no EventTooLargeError comes out of feed() or finish()."""
    body = body_of("chat", "tool_calls_parallel_interleaved")
    biggest = max(len(e) for e in body.split(b"\n\n"))
    t = ssewire.Translator("chat", "responses", max_event_size=biggest + 16)
    out = t.feed(body) + t.finish()
    assert b"response.completed" in out and t.result()["status"] == "completed"


# --- issue 27: the last losses -----------------------------------------------------------------


def _messages_stop(reason: str) -> bytes:
    events = [
        ("message_start", {"type": "message_start", "message": {"id": "msg_p", "type": "message", "role": "assistant",
                           "model": "claude-sonnet-4-6", "content": [], "stop_reason": None, "stop_sequence": None,
                           "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "Searching the web"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()


@pytest.mark.parametrize("target", ["chat", "responses", "gemini"])
def test_a_foreign_stop_reason_is_mapped_and_named(target: str) -> None:
    """Anthropic's ``pause_turn`` (a server tool still running) has no name in the other
    dialects: the target ends the turn in its own words, and the notes name the original."""
    t = ssewire.Translator("messages", target)
    out = t.feed(_messages_stop("pause_turn")) + t.finish()
    back = read(target, out)
    assert back.done and back.error is None
    result = back.result()
    said = {"chat": lambda r: r["choices"][0]["finish_reason"], "responses": lambda r: r["status"],
            "gemini": lambda r: r["candidates"][0]["finishReason"]}[target](result)  # fmt: skip
    assert said == {"chat": "stop", "responses": "completed", "gemini": "STOP"}[target]
    assert any("pause_turn" in n for n in t.notes), t.notes
    assert b"pause_turn" not in out


def test_a_foreign_stop_reason_into_messages_is_end_turn_and_its_own_are_kept() -> None:
    chat = ssewire.translate(_messages_stop("pause_turn"), "messages", "chat")
    weird = chat.replace(b'"finish_reason":"stop"', b'"finish_reason":"insufficient_system_resource"')
    t = ssewire.Translator("chat", "messages")
    back = read("messages", t.feed(weird) + t.finish())
    assert back.result()["stop_reason"] == "end_turn"
    assert any("insufficient_system_resource" in n for n in t.notes)
    # Messages' own reasons cross Messages -> Messages as they are.
    assert read("messages", ssewire.translate(_messages_stop("pause_turn"), "messages", "messages")).result()[
        "stop_reason"] == "pause_turn"  # fmt: skip


def test_reasoning_details_alone_cross_with_their_signature() -> None:
    """OpenRouter's form: the reasoning only in ``reasoning_details`` entries (no
    ``reasoning``); it reaches a Messages client as a thinking block with its signature, and
    a Responses client as a reasoning item."""
    body = body_of("chat", "openrouter_reasoning_details_only")
    msg = read("messages", ssewire.translate(body, "chat", "messages")).result()
    assert msg["content"][0] == {"type": "thinking", "thinking": "The user wants a short \"greeting\".\nKeep it brief.",
                                 "signature": "EqQBCkgIBxABGAIiQL2sQm9va2luZw=="}  # fmt: skip
    assert msg["content"][1] == {"type": "text", "text": "Hello there!"}
    resp = read("responses", ssewire.translate(body, "chat", "responses")).result()
    reasoning = [i for i in resp["output"] if i["type"] == "reasoning"]
    assert reasoning and "greeting" in json.dumps(reasoning)


def test_compaction_content_is_concatenated() -> None:
    body = body_of("messages", "compaction_streamed")
    block = read("messages", body).result()["content"][0]
    assert block["content"] == "Summary so far: the user asked about the weather in Paris."
    assert block["encrypted_content"] == "EqQBCkgIARABGAIiQOpaque=="


def _responses_elided(whole_item: bool) -> bytes:
    """A Responses stream whose deltas carry only the start of the text; ``.done`` events (or,
    ``whole_item``, a second message item sent whole, no part events) carry all of it."""
    full = "Got it — I'll quickly check reliable, up-to-date sources and report back."
    msg = {"id": "msg_e", "type": "message", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "annotations": [], "text": full}]}  # fmt: skip
    events: list = [
        {"type": "response.created", "response": {"id": "resp_e", "object": "response", "created_at": 1, "status": "in_progress",
                                                  "model": "gpt-5", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**msg, "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", "item_id": "msg_e", "output_index": 0, "content_index": 0,
         "part": {"type": "output_text", "annotations": [], "text": ""}},
        {"type": "response.output_text.delta", "item_id": "msg_e", "output_index": 0, "content_index": 0, "delta": "Got it"},
        {"type": "response.output_text.done", "item_id": "msg_e", "output_index": 0, "content_index": 0, "text": full},
        {"type": "response.content_part.done", "item_id": "msg_e", "output_index": 0, "content_index": 0,
         "part": msg["content"][0]},
        {"type": "response.output_item.done", "output_index": 0, "item": msg},
    ]  # fmt: skip
    output = [msg]
    if whole_item:
        second = {
            **msg,
            "id": "msg_w",
            "content": [{"type": "output_text", "annotations": [], "text": " Sent whole."}],
        }
        events += [{"type": "response.output_item.added", "output_index": 1, "item": {**second, "content": []}},
                   {"type": "response.output_item.done", "output_index": 1, "item": second}]  # fmt: skip
        output.append(second)
    events.append({"type": "response.completed", "response": {"id": "resp_e", "object": "response", "created_at": 1,
                                                              "status": "completed", "model": "gpt-5", "output": output}})  # fmt: skip
    return "".join(f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': i})}\n\n"
                   for i, e in enumerate(events)).encode()  # fmt: skip


@pytest.mark.parametrize("target", ["chat", "messages", "gemini"])
@pytest.mark.parametrize("whole_item", [False, True])
def test_text_the_deltas_elided_is_written_before_the_part_closes(target: str, whole_item: bool) -> None:
    """Recorded streams elide deltas, and some servers send an item whole: the text that only
    the ``.done`` events carry reaches the client, live (in the feed of the event that
    carried it), and nothing is noted since the deltas were its start."""
    body = _responses_elided(whole_item)
    t = ssewire.Translator("responses", target)
    frames = [f + b"\n\n" for f in body.split(b"\n\n") if f.strip()]
    outs = [t.feed(f) for f in frames]
    assert "quickly check reliable" in outs[4].decode("unicode_escape", "replace") or \
        b"quickly check reliable" in outs[4]  # the output_text.done's feed  # fmt: skip
    got = neutral(target, read(target, b"".join(outs) + t.finish()).result())
    want = "Got it — I'll quickly check reliable, up-to-date sources and report back." + (
        " Sent whole." if whole_item else ""
    )
    assert got["text"] == want
    assert not any("differs" in n for n in t.notes)


def test_a_final_text_that_is_not_the_deltas_continued_is_noted() -> None:
    body = _responses_elided(False).replace(b'"delta": "Got it"', b'"delta": "Nope"')
    t = ssewire.Translator("responses", "chat")
    t.feed(body)
    t.finish()
    assert any("differs from its deltas" in n for n in t.notes)
    assert (
        read("chat", ssewire.translate(body, "responses", "chat")).result()["choices"][0]["message"][
            "content"
        ]
        == "Nope"
    )


@pytest.mark.parametrize("target", DIALECTS)
def test_a_body_of_the_wrong_dialect_reaches_the_client_as_an_error(target: str) -> None:
    """``Translator("messages", ...)`` fed a chat body: the client gets the target's error
    (what ``t.source.error`` says), never an empty, successful answer; whole or cut anywhere,
    with or without the chat ``[DONE]``."""
    body = body_of("chat", "basic_stop")
    for upstream in (body, body.replace(b"data: [DONE]\n\n", b"")):
        outs = set()
        for way in split_ways(upstream):
            t = ssewire.Translator("messages", target)
            out = b"".join(t.feed(p) for p in way.pieces) + t.finish()
            outs.add(out)
            assert t.source.error is not None and t.source.error.code == "wrong_dialect"
        assert len(outs) == 1
        back = read(target, outs.pop())
        assert back.error is not None and "another dialect" in back.error.message, target
        assert not (back.done and back.error is None)
        assert {"chat": b"[DONE]", "messages": b"message_stop", "responses": b"response.completed",
                "gemini": b'"finishReason"'}[target] not in out  # fmt: skip


@pytest.mark.parametrize("target", DIALECTS)
def test_nothing_is_written_after_finish(target: str) -> None:
    """After ``finish()`` the client's stream has ended: a later ``feed()`` (the rest of a cut
    upstream, or a whole body again) writes nothing, and the notes say it was ignored; a second
    ``finish()`` writes nothing either."""
    body = body_of("chat", "basic_stop")
    for first, later in ((body, body), (body[: len(body) // 2], body[len(body) // 2 :])):
        t = ssewire.Translator("chat", target)
        written = t.feed(first) + t.finish()
        result = t.result()
        assert t.feed(later) == b"" and t.finish() == b""
        assert t.result() == result
        assert any("after finish()" in n for n in t.notes)
        assert read(target, written).result() == result
    assert ssewire.translate([body, body], "chat", target) == ssewire.translate(body + body, "chat", target)


@pytest.mark.parametrize(("source", "name"), [("chat", "reasoning_content_field"), ("responses", "reasoning_summary"),
                                              ("messages", "cache_usage_stop_sequence"), ("chat", "openrouter_full")])  # fmt: skip
def test_usage_into_gemini_adds_up(source: str, name: str) -> None:
    """Into Gemini: every prompt token (cached ones included) in ``promptTokenCount``, the
    reasoning in ``thoughtsTokenCount``, the rest of the output in ``candidatesTokenCount``, and
    ``totalTokenCount`` their sum; read back, the neutral figures are the source's."""
    body = body_of(source, name)
    usage = read("gemini", ssewire.translate(body, source, "gemini")).result()["usageMetadata"]
    want = neutral(source, read(source, body).result())["usage"]
    thoughts = usage.get("thoughtsTokenCount", 0)
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"] + thoughts
    assert usage["promptTokenCount"] == want["input"]
    assert usage["candidatesTokenCount"] + thoughts == want["output"]
    assert usage.get("cachedContentTokenCount", 0) == want["cached"]
    src = read(source, body).result()
    reasoning = ((src.get("usage") or {}).get("completion_tokens_details") or
                 (src.get("usage") or {}).get("output_tokens_details") or {}).get("reasoning_tokens", 0)  # fmt: skip
    assert thoughts == reasoning


def _two_messages(indexes: "tuple[int, int]") -> bytes:
    """A Responses turn of two message items (OpenAI's `phase`: a commentary preamble, then the
    final answer), each event naming its item by id, recorded with deltas shorter than the
    `.done` texts, the stream's `output_index` values not the items' places in the terminal
    `output` (a proxy's numbering)."""
    frames, seq = [], 0

    def ev(kind: str, **fields: Any) -> None:
        nonlocal seq
        seq += 1
        data = json.dumps({"type": kind, "sequence_number": seq, **fields})
        frames.append(f"event: {kind}\ndata: {data}\n\n")

    def item(id_: str, phase: str, text: Optional[str]) -> Dict[str, Any]:
        content = [] if text is None else [{"type": "output_text", "annotations": [], "text": text}]
        return {"id": id_, "type": "message", "status": "completed" if text else "in_progress",
                "content": content, "role": "assistant", "phase": phase}  # fmt: skip

    ev("response.created", response={"id": "resp_1", "object": "response", "status": "in_progress",
                                     "model": "gpt-5", "output": []})  # fmt: skip
    done = []
    for oi, (id_, phase, delta, full) in zip(indexes, [("msg_a", "commentary", "Let me", "Let me check."),
                                                       ("msg_b", "final_answer", "The ans", "The answer is 4.")]):  # fmt: skip
        part = {"type": "output_text", "annotations": [], "text": ""}
        ev("response.output_item.added", output_index=oi, item=item(id_, phase, None))
        ev("response.content_part.added", item_id=id_, output_index=oi, content_index=0, part=part)
        ev("response.output_text.delta", item_id=id_, output_index=oi, content_index=0, delta=delta)
        ev("response.output_text.done", item_id=id_, output_index=oi, content_index=0, text=full)
        ev("response.content_part.done", item_id=id_, output_index=oi, content_index=0, part=dict(part, text=full))
        ev("response.output_item.done", output_index=oi, item=item(id_, phase, full))
        done.append(item(id_, phase, full))
    ev("response.completed", response={"id": "resp_1", "object": "response", "status": "completed",
                                       "model": "gpt-5", "output": done,
                                       "usage": {"input_tokens": 5, "output_tokens": 9, "total_tokens": 14}})  # fmt: skip
    return "".join(frames).encode()


@pytest.mark.parametrize("indexes", [(0, 1), (1, 2), (0, 0), (5, 3)])
def test_two_message_items_are_each_written_once(indexes: "tuple[int, int]") -> None:
    """Before: the terminal `output`'s places read as output indexes wrote a message's text
    again (the final answer twice, with a preamble)."""
    body = _two_messages(indexes)
    for target in ("chat", "messages", "gemini", "converse"):
        texts = set()
        for way in split_ways(body):
            t = ssewire.Translator("responses", target)
            for piece in way.pieces:
                t.feed(piece)
            t.finish()
            texts.add(json.dumps(t.result()))
        assert len(texts) == 1, target
        out = texts.pop()
        assert out.count("The answer is 4.") == 1 and out.count("Let me check.") == 1, (target, out)


def _two_calls_one_place(same_item_id: bool) -> bytes:
    """Two function calls that share one call id (Bedrock's Responses endpoint), numbered
    at one output index, each added, streamed and done before the next."""
    def ev(kind: str, **fields: Any) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()

    head = {"id": "resp_b1", "object": "response", "created_at": 1, "status": "in_progress",
            "model": "openai.gpt-oss-120b", "output": []}  # fmt: skip
    frames, done = [ev("response.created", sequence_number=0, response=head)], []
    for i, city in enumerate(["Paris", "Rome"]):
        item_id = "fc_1" if same_item_id else f"fc_{i}"
        args = json.dumps({"city": city})
        item = {"type": "function_call", "id": item_id, "call_id": "call_1", "name": "get_weather",
                "arguments": "", "status": "in_progress"}  # fmt: skip
        whole = dict(item, arguments=args, status="completed")
        n = len(frames)
        frames += [
            ev("response.output_item.added", sequence_number=n, output_index=0, item=item),
            ev("response.function_call_arguments.delta", sequence_number=n + 1, output_index=0, item_id=item_id,
               delta=args[:7]),
            ev("response.function_call_arguments.delta", sequence_number=n + 2, output_index=0, item_id=item_id,
               delta=args[7:]),
            ev("response.function_call_arguments.done", sequence_number=n + 3, output_index=0, item_id=item_id,
               arguments=args),
            ev("response.output_item.done", sequence_number=n + 4, output_index=0, item=whole),
        ]  # fmt: skip
        done.append(whole)
    usage = {"input_tokens": 20, "output_tokens": 12, "total_tokens": 32}
    final = dict(head, status="completed", output=done, usage=usage)
    return b"".join(frames) + ev("response.completed", sequence_number=len(frames), response=final)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("same_item_id", [False, True])
def test_two_calls_at_one_place_are_two_calls(same_item_id: bool, server: LoopbackServer) -> None:
    """Before: the second call was read into the first's place: its arguments appended to
    the first's (chat), or it was lost (Gemini, whose frames google-genai then read as one
    call). Every target, whole and split, and every client SDK, gets two calls."""
    body = _two_calls_one_place(same_item_id)
    want = [("call_1", "get_weather", {"city": "Paris"}), ("call_1", "get_weather", {"city": "Rome"})]
    assert neutral("responses", read("responses", body).result())["calls"] == want
    for target in [d for d in registry.ALL if d != "responses"]:
        outs = set()
        for way in split_ways(body):
            t = ssewire.Translator("responses", target)
            out = b"".join(t.feed(piece) for piece in way.pieces) + t.finish()
            outs.add(out)
            assert neutral(target, t.result())["calls"] == want, (target, way.name)
        assert len(outs) == 1, target
        if target in SDKS:
            got = SDKS[target](server.url(server.add(outs.pop(), seed=1, delay=0.0)))
            assert [c[1:] for c in neutral(target, got)["calls"]] == [c[1:] for c in want], target


def test_an_added_event_repeated_while_its_item_is_open_is_the_same_item() -> None:
    """An ``output_item.added`` sent again before its item's ``.done`` (a replayed event) is
    the item already open, not a second one (only a place whose item is done is reused)."""
    body = _two_calls_one_place(same_item_id=True)
    frames = body.split(b"\n\n")
    added = next(f for f in frames if b"response.output_item.added" in f)
    first = frames.index(added)
    replayed = b"\n\n".join([*frames[: first + 2], added, *frames[first + 2 :]])
    for target in [d for d in registry.ALL if d != "responses"]:
        t = ssewire.Translator("responses", target)
        t.feed(replayed)
        t.finish()
        calls = neutral(target, t.result())["calls"]
        assert [c[2] for c in calls] == [{"city": "Paris"}, {"city": "Rome"}], (target, calls)


@pytest.mark.parametrize("target", ["chat", "responses", "gemini"])
def test_a_null_block_start_is_no_block_however_it_is_read(target: str) -> None:
    """``"content_block": null`` is no block, read on the fast path (a shape known ahead) as the
    decoder reads it (another key order): the text deltas that follow it are translated."""

    def body(order: str) -> bytes:
        start = {"index": 0, "content_block": None}
        start = {"type": "content_block_start", **start} if order == "sent" else {**start, "type": "content_block_start"}
        events = [
            {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                  "model": "claude-x", "content": [], "usage": {"input_tokens": 1}}},
            start,
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi there"}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
            {"type": "message_stop"},
        ]  # fmt: skip
        return b"".join(
            f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n".encode() for e in events
        )

    for order in ("sent", "other"):
        t = ssewire.Translator("messages", target)
        out = t.feed(body(order)) + t.finish()
        assert b"hi there" in out, (order, out)
