"""Issue 34: translation true to real traffic. Each case is a shape that real providers and
agent loops send (open-weight reasoning models' Responses streams, xAI's usage, a stream cut
inside a tool call, Gemini's ``VALIDATED`` mode, Anthropic's mid-conversation system turns,
results of server-side tools, audio and uploaded files, Mistral's thinking parts), read the
way the target's SDK reads it: no reasoning in any answer, every request the source provider
accepts crosses, and what cannot cross is a note."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest
import ssewire
from support import paths
from support.request_check import _valid
from support.splitting import split_ways

DATA = paths.DATA
TARGETS = ("chat", "messages", "gemini")


def _answer_and_reasoning(target: str, result: Dict[str, Any]) -> tuple[str, str]:
    if target == "chat":
        m = result["choices"][0]["message"]
        return m.get("content") or "", m.get("reasoning_content") or ""
    if target == "messages":
        text = "".join(b.get("text", "") for b in result["content"] if b["type"] == "text")
        return text, "".join(b.get("thinking", "") for b in result["content"] if b["type"] == "thinking")
    if target == "gemini":
        parts = result["candidates"][0]["content"]["parts"]
        return ("".join(p.get("text", "") for p in parts if not p.get("thought")),
                "".join(p.get("text", "") for p in parts if p.get("thought")))  # fmt: skip
    text = "".join(c.get("text", "") for o in result["output"] if o["type"] == "message" for c in o["content"])
    return text, ""


@pytest.mark.parametrize("target", TARGETS)
def test_open_weight_reasoning_never_becomes_the_answer(target: str) -> None:
    """gpt-oss through LM Studio / OpenRouter: the chain of thought as a reasoning item with
    ``reasoning_text`` parts, restated by ``content_part.done``. The answer is the answer."""
    body = (DATA / "responses" / "gpt_oss_reasoning_text.sse").read_bytes()
    t = ssewire.Translator("responses", target)
    t.feed(body)
    t.finish()
    answer, reasoning = _answer_and_reasoning(target, t.result())
    assert answer == "The capital of France is Paris."
    assert reasoning == "We need answer capital of France."
    assert not t.notes


def _responses_events(*events: Dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps({**e, "sequence_number": i}).encode() + b"\n\n" for i, e in enumerate(events))


def _message_item(oi: int, mid: str, text: str, deltas: List[str], done_oi: Any = "same") -> List[Dict[str, Any]]:
    at = oi if done_oi == "same" else done_oi
    return [
        {"type": "response.output_item.added", "output_index": oi,
         "item": {"type": "message", "id": mid, "role": "assistant", "content": [], "status": "in_progress"}},
        {"type": "response.content_part.added", "output_index": oi, "item_id": mid, "content_index": 0,
         "part": {"type": "output_text", "text": "", "annotations": []}},
        *[{"type": "response.output_text.delta", "output_index": oi, "item_id": mid, "content_index": 0, "delta": d}
          for d in deltas],
        {"type": "response.output_text.done", "output_index": at, "item_id": mid, "content_index": 0, "text": text},
        {"type": "response.content_part.done", "output_index": at, "item_id": mid, "content_index": 0,
         "part": {"type": "output_text", "text": text, "annotations": []}},
    ]  # fmt: skip


@pytest.mark.parametrize("target", TARGETS)
def test_done_events_are_read_against_the_item_they_name(target: str) -> None:
    """Two message items, the second's deltas elided and its ``.done`` events naming it by id
    with no (or a wrong) ``output_index``: each text once; a ``.done`` for an item that was
    never added adds nothing, and is noted."""
    resp = {"id": "r", "object": "response", "created_at": 1, "model": "m", "status": "in_progress", "output": []}
    body = _responses_events(
        {"type": "response.created", "response": resp},
        *_message_item(0, "msg_a", "First.", ["Fir", "st."]),
        *_message_item(1, "msg_b", "Second.", [], done_oi=None),
        {"type": "response.output_text.done", "output_index": 0, "item_id": "msg_ghost", "content_index": 0,
         "text": "Ghost text."},
        {"type": "response.completed", "response": {**resp, "status": "completed"}},
    )  # fmt: skip
    t = ssewire.Translator("responses", target)
    t.feed(body)
    t.finish()
    answer, _ = _answer_and_reasoning(target, t.result())
    assert answer == "First.Second."
    assert any("never added" in n for n in t.notes)


@pytest.mark.parametrize("target", TARGETS)
def test_a_proxy_that_gives_an_item_a_new_id_per_event_keeps_the_reasoning(target: str) -> None:
    """GitHub Copilot's Responses proxy: the reasoning item is added as ``rs_1``, its summary
    deltas and ``.done`` events name it ``rs_2``, ``rs_3`` (each its own id), with its
    ``output_index``. Before: every summary delta was dropped in every target."""
    resp = {"id": "r", "object": "response", "created_at": 1, "model": "m", "status": "in_progress", "output": []}
    summary = ["Think", "ing it ", "through."]
    body = _responses_events(
        {"type": "response.created", "response": resp},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "reasoning", "id": "rs_1", "summary": []}},
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "item_id": "rs_2",
         "summary_index": 0, "part": {"type": "summary_text", "text": ""}},
        *[{"type": "response.reasoning_summary_text.delta", "output_index": 0, "item_id": f"rs_{3 + i}",
           "summary_index": 0, "delta": d} for i, d in enumerate(summary)],
        {"type": "response.reasoning_summary_text.done", "output_index": 0, "item_id": "rs_9",
         "summary_index": 0, "text": "".join(summary)},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {"type": "reasoning", "id": "rs_10", "summary": [{"type": "summary_text", "text": "".join(summary)}]}},
        *_message_item(1, "msg_a", "Done.", ["Do", "ne."]),
        {"type": "response.completed", "response": {**resp, "status": "completed"}},
    )  # fmt: skip
    for way in split_ways(body):
        t = ssewire.Translator("responses", target)
        for piece in way.pieces:
            t.feed(piece)
        t.finish()
        answer, reasoning = _answer_and_reasoning(target, t.result())
        assert (answer, reasoning) == ("Done.", "Thinking it through."), (way.name, target)


def _chat_chunks(*deltas: Dict[str, Any], usage: Any = None, finish: str = "stop", done: bool = True) -> bytes:
    head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "grok-4"}
    out = b"".join(b"data: " + json.dumps({**head, "choices": [{"index": 0, "delta": d}]}).encode() + b"\n\n"
                   for d in deltas)  # fmt: skip
    if finish:
        out += b"data: " + json.dumps({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}).encode() + b"\n\n"
    if usage is not None:
        out += b"data: " + json.dumps({**head, "choices": [], "usage": usage}).encode() + b"\n\n"
    return out + (b"data: [DONE]\n\n" if done else b"")


@pytest.mark.parametrize(("total", "candidates", "thoughts"), [(17, 5, 2), (15, 3, 2)], ids=["xai", "openai"])
def test_reasoning_tokens_inside_or_outside_completion_tokens(total: int, candidates: int, thoughts: int) -> None:
    """xAI counts reasoning outside ``completion_tokens`` (its total says so), OpenAI inside:
    Gemini's candidates + thoughts + prompt add up to the stated total either way."""
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": total,
             "completion_tokens_details": {"reasoning_tokens": 2}}  # fmt: skip
    body = _chat_chunks({"role": "assistant", "content": "Hi"}, usage=usage)
    t = ssewire.Translator("chat", "gemini")
    t.feed(body)
    t.finish()
    meta = t.result()["usageMetadata"]
    assert (meta["candidatesTokenCount"], meta["thoughtsTokenCount"], meta["totalTokenCount"]) == (candidates, thoughts, total)
    m = ssewire.Translator("chat", "messages")
    m.feed(body)
    m.finish()
    assert m.result()["usage"]["output_tokens"] == candidates + thoughts


def test_a_tool_call_cut_mid_arguments_keeps_what_was_read_into_gemini() -> None:
    """max_tokens reached inside a tool call's arguments (``finish_reason: "length"``): the
    Gemini call carries the arguments as far as they were read, not ``{}``."""
    body = _chat_chunks(
        {"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                              "function": {"name": "search", "arguments": '{"query": "weather in Par'}}]},
        finish="length")  # fmt: skip
    t = ssewire.Translator("chat", "gemini")
    t.feed(body)
    t.finish()
    result = t.result()["candidates"][0]
    calls = [p["functionCall"] for p in result["content"]["parts"] if "functionCall" in p]
    assert calls == [{"id": "call_1", "name": "search", "args": {"query": "weather in Par"}}]
    assert result["finishReason"] == "MAX_TOKENS"
    assert any("cut off" in n for n in t.notes)


def test_validated_mode_leaves_the_model_free_to_answer() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": "f", "parameters": {"type": "object", "properties": {}}}]}],
            "toolConfig": {"functionCallingConfig": {"mode": "VALIDATED"}}}  # fmt: skip
    assert ssewire.translate_request(body, "gemini", "chat", model="m").body["tool_choice"] == "auto"
    assert ssewire.translate_request(body, "gemini", "messages", model="m").body["tool_choice"] == {"type": "auto"}
    assert ssewire.translate_request(body, "gemini", "responses", model="m").body["tool_choice"] == "auto"


MID_SYSTEM = {"model": "claude-sonnet-4-5", "max_tokens": 100, "system": "You are terse.", "messages": [
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": "Hi."},
    {"role": "system", "content": "From now on, answer in French."},
    {"role": "user", "content": "How are you?"}]}  # fmt: skip


@pytest.mark.parametrize("target", ["chat", "responses", "gemini"])
def test_mid_conversation_system_turns_keep_their_place(target: str) -> None:
    r = ssewire.translate_request(MID_SYSTEM, "messages", target)
    _valid(target, r.body)
    if target == "chat":
        roles = [(m["role"], m["content"]) for m in r.body["messages"]]
        assert roles == [("system", "You are terse."), ("user", [{"type": "text", "text": "Hello"}]) if isinstance(roles[1][1], list) else ("user", "Hello"),
                         ("assistant", "Hi."), ("system", "From now on, answer in French."), roles[4]]  # fmt: skip
        assert roles[3] == ("system", "From now on, answer in French.")
    elif target == "responses":
        items = r.body["input"]
        assert [i.get("role") for i in items] == ["user", "assistant", "system", "user"]
        assert items[2]["content"] == "From now on, answer in French."
    else:
        assert "answer in French" in r.body["systemInstruction"]["parts"][0]["text"]
        assert any("system messages inside the conversation" in n for n in r.notes)
    back = ssewire.translate_request(r.body, target, "messages", model="m")
    _valid("messages", back.body)
    if target != "gemini":
        assert [m["role"] for m in back.body["messages"]] == ["user", "assistant", "system", "user"]


def test_a_server_tools_result_crosses_with_a_note() -> None:
    body = {"model": "m", "input": [
        {"role": "user", "content": "Look it up"},
        {"type": "function_call_output", "call_id": "call_server_1", "output": "42"}]}  # fmt: skip
    for target in ("chat", "messages", "gemini"):
        r = ssewire.translate_request(body, "responses", target, model="m")
        _valid(target, r.body)
        assert "42" in json.dumps(r.body)
        assert any("not in the history" in n for n in r.notes)


def test_audio_files_and_document_urls_reach_the_targets_that_take_them() -> None:
    chat = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "Transcribe and summarise"},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "file", "file": {"file_id": "file-abc123"}},
        {"type": "file", "file": {"file_data": "https://example.com/report.pdf", "filename": "report.pdf"}}]}]}  # fmt: skip
    g = ssewire.translate_request(chat, "chat", "gemini")
    _valid("gemini", g.body)
    parts = g.body["contents"][0]["parts"]
    assert {"inlineData": {"mimeType": "audio/wav", "data": "UklGRg=="}} in parts
    assert any(p.get("fileData", {}).get("fileUri") == "https://example.com/report.pdf" for p in parts)
    assert not any(p.get("inlineData", {}).get("data", "").startswith("http") for p in parts)
    r = ssewire.translate_request(chat, "chat", "responses")
    _valid("responses", r.body)
    content = r.body["input"][0]["content"]
    assert {"type": "input_file", "file_id": "file-abc123"} in content
    assert any(c.get("file_url") == "https://example.com/report.pdf" for c in content)
    assert any("audio" in n for n in r.notes)  # the Responses request takes none in a message
    m = ssewire.translate_request(chat, "chat", "messages")
    _valid("messages", m.body)
    blocks = m.body["messages"][0]["content"]
    assert {"type": "document", "source": {"type": "file", "file_id": "file-abc123"}} in blocks
    assert any(b.get("source") == {"type": "url", "url": "https://example.com/report.pdf"} for b in blocks)
    assert any("audio" in n for n in m.notes)
    back = ssewire.translate_request(g.body, "gemini", "chat", model="m")
    _valid("chat", back.body)
    assert {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}} in back.body["messages"][0]["content"]


def test_mistral_thinking_is_reasoning_and_texts_around_a_call_stay_apart() -> None:
    chat = {"model": "magistral", "messages": [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "Simple sum."}]},
            {"type": "text", "text": "4"}]},
        {"role": "user", "content": "thanks"}]}  # fmt: skip
    r = ssewire.translate_request(chat, "chat", "messages")
    _valid("messages", r.body)
    assert r.body["messages"][1]["content"] == [{"type": "text", "text": "4"}]
    assert "[thinking" not in json.dumps(r.body)
    interleaved = {"model": "m", "max_tokens": 100, "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}},
            {"type": "text", "text": "Checking now."}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}]}]}  # fmt: skip
    c = ssewire.translate_request(interleaved, "messages", "chat")
    _valid("chat", c.body)
    assert c.body["messages"][1]["content"] == [{"type": "text", "text": "Let me check."},
                                                {"type": "text", "text": "Checking now."}]  # fmt: skip


def test_no_made_up_turns() -> None:
    starts_with_assistant = {"model": "m", "messages": [
        {"role": "assistant", "content": "How can I help?"}, {"role": "user", "content": "Hi"}]}  # fmt: skip
    m = ssewire.translate_request(starts_with_assistant, "chat", "messages")
    _valid("messages", m.body)
    assert "(continue)" not in json.dumps(m.body)
    assert [x["role"] for x in m.body["messages"]] == ["assistant", "user"]
    only_system = {"model": "m", "messages": [{"role": "system", "content": "Say hello."}]}
    g = ssewire.translate_request(only_system, "chat", "gemini")
    _valid("gemini", g.body)
    assert g.body["contents"] == [{"role": "user", "parts": [{"text": "Say hello."}]}]
