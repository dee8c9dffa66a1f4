"""``ssewire.translate_request`` (API.md section 10): an agent loop written in each dialect —
system prompt, a user turn with an image, parallel tool calls, their results (one an error),
the answer, a follow-up — translated into every other dialect. The target's body is what the
target's SDK request type takes (validated with the SDK's own types; no key outside them), it
streams, and read back it is the same conversation: every call with its arguments, every result
under its call, in order. What a target cannot take is a note."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import ssewire
from support.request_check import _valid, _valid_converse

PNG = "iVBORw0KGgo"
TOOL_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

LOOPS: dict[str, dict[str, Any]] = {
    "chat": {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [
                {"type": "text", "text": "Weather in Paris and Rome?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}},
                {"id": "call_b", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Rome"}'}},
            ]},
            {"role": "tool", "tool_call_id": "call_a", "content": "18C"},
            {"role": "tool", "tool_call_id": "call_b", "content": "21C"},
            {"role": "assistant", "content": "Paris 18C, Rome 21C."},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [{"type": "function", "function": {"name": "weather", "description": "Weather now", "parameters": TOOL_SCHEMA}}],
        "tool_choice": "auto",
        "max_tokens": 300,
        "stream": True,
    },
    "messages": {
        "model": "m",
        "max_tokens": 300,
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "Weather in Paris and Rome?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            ]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_a", "name": "weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_b", "name": "weather", "input": {"city": "Rome"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "18C"},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": [{"type": "text", "text": "21C"}]},
            ]},
            {"role": "assistant", "content": "Paris 18C, Rome 21C."},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [{"name": "weather", "description": "Weather now", "input_schema": TOOL_SCHEMA}],
        "tool_choice": {"type": "auto"},
        "stream": True,
    },
    "responses": {
        "model": "m",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [
                {"type": "input_text", "text": "Weather in Paris and Rome?"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
            ]},
            {"type": "function_call", "call_id": "fc_a", "name": "weather", "arguments": '{"city": "Paris"}'},
            {"type": "function_call", "call_id": "fc_b", "name": "weather", "arguments": '{"city": "Rome"}'},
            {"type": "function_call_output", "call_id": "fc_a", "output": "18C"},
            {"type": "function_call_output", "call_id": "fc_b", "output": "21C"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Paris 18C, Rome 21C.", "annotations": []}]},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [{"type": "function", "name": "weather", "description": "Weather now", "parameters": TOOL_SCHEMA, "strict": False}],
        "tool_choice": "auto",
        "max_output_tokens": 300,
        "stream": True,
    },
    "gemini": {
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": [
            {"role": "user", "parts": [
                {"text": "Weather in Paris and Rome?"},
                {"inlineData": {"mimeType": "image/png", "data": PNG}},
            ]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
                {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "weather", "response": {"result": "18C"}}},
                {"functionResponse": {"name": "weather", "response": {"result": "21C"}}},
            ]},
            {"role": "model", "parts": [{"text": "Paris 18C, Rome 21C."}]},
            {"role": "user", "parts": [{"text": "Thanks"}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "weather", "description": "Weather now", "parameters": TOOL_SCHEMA}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {"maxOutputTokens": 300},
    },
    # Bedrock Converse as the wire carries it (blobs in base64; the model is the path's).
    "converse": {
        "system": [{"text": "Be brief."}],
        "messages": [
            {"role": "user", "content": [
                {"text": "Weather in Paris and Rome?"},
                {"image": {"format": "png", "source": {"bytes": PNG}}},
            ]},
            {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "tooluse_a", "name": "weather", "input": {"city": "Paris"}}},
                {"toolUse": {"toolUseId": "tooluse_b", "name": "weather", "input": {"city": "Rome"}}},
            ]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "18C"}]}},
                {"toolResult": {"toolUseId": "tooluse_b", "content": [{"text": "21C"}]}},
            ]},
            {"role": "assistant", "content": [{"text": "Paris 18C, Rome 21C."}]},
            {"role": "user", "content": [{"text": "Thanks"}]},
        ],
        "inferenceConfig": {"maxTokens": 300},
        "toolConfig": {
            "tools": [{"toolSpec": {"name": "weather", "description": "Weather now", "inputSchema": {"json": TOOL_SCHEMA}}}],
            "toolChoice": {"auto": {}},
        },
    },
}
DIALECTS = sorted(LOOPS)


def _conversation(dialect: str, body: dict[str, Any]) -> list[tuple[str, ...]]:
    """What the model sees, read back through the request model itself: each turn's text, calls
    (name, arguments) and results (the called tool, the text), the ids replaced by the order in
    which the calls were made."""
    as_chat = body if dialect == "chat" else ssewire.translate_request(body, dialect, "chat", model="m").body
    ids: dict[str, int] = {}
    seen: list[tuple[str, ...]] = []
    for m in as_chat["messages"]:
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", p["type"]) for p in content)
        if m["role"] == "tool":
            seen.append(("result", str(ids[m["tool_call_id"]]), content))
            continue
        if content:
            seen.append((m["role"], content))
        for call in m.get("tool_calls") or []:
            ids[call["id"]] = len(ids)
            seen.append(("call", call["function"]["name"], json.dumps(json.loads(call["function"]["arguments"]), sort_keys=True)))
    return seen


@pytest.mark.parametrize("source,target", [(s, t) for s in DIALECTS for t in DIALECTS if s != t])
def test_the_agent_loop_crosses_every_pair(source: str, target: str) -> None:
    body = copy.deepcopy(LOOPS[source])
    r = ssewire.translate_request(body, source, target, model="m")
    assert body == LOOPS[source], "the client's body is not changed"
    _valid(target, r.body)
    assert _conversation(target, r.body) == _conversation(source, LOOPS[source])
    assert r.path == {
        "chat": "/v1/chat/completions",
        "messages": "/v1/messages",
        "responses": "/v1/responses",
        "gemini": "/v1beta/models/m:streamGenerateContent?alt=sse",
        "converse": "/model/m/converse-stream",
    }[target]
    assert isinstance(r.notes, list)


def test_settings_cross_or_are_noted() -> None:
    body = copy.deepcopy(LOOPS["chat"])
    body.update(temperature=0.2, stop=["END"], reasoning_effort="high", max_tokens=20000,
                response_format={"type": "json_schema", "json_schema": {"name": "w", "schema": TOOL_SCHEMA}})
    m = ssewire.translate_request(body, "chat", "messages")
    assert "temperature" not in m.body and any("temperature" in n for n in m.notes)
    assert m.body["stop_sequences"] == ["END"]
    assert m.body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    # A budget must stay below max_tokens (and Messages' least, 1,024): else it is a note.
    small = ssewire.translate_request(dict(body, max_tokens=300), "chat", "messages")
    assert "thinking" not in small.body and any("reasoning setting" in n for n in small.notes)
    assert ssewire.translate_request(dict(body, max_tokens=5000), "chat", "messages").body["thinking"] == {
        "type": "enabled", "budget_tokens": 4999}
    assert m.body["output_config"]["format"] == {"type": "json_schema", "schema": TOOL_SCHEMA}
    r = ssewire.translate_request(body, "chat", "responses")
    assert any("stop" in n for n in r.notes)
    assert r.body["reasoning"] == {"effort": "high"}
    assert r.body["text"]["format"]["schema"] == TOOL_SCHEMA
    g = ssewire.translate_request(body, "chat", "gemini", model="gemini-2.5-flash")
    assert g.body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 16384}
    assert g.body["generationConfig"]["responseJsonSchema"] == TOOL_SCHEMA
    c = ssewire.translate_request(LOOPS["messages"], "messages", "chat")
    assert c.body["stream_options"] == {"include_usage": True}
    # Mistral's tool_choice "any", a developer message.
    mistral = dict(LOOPS["chat"], tool_choice="any")
    mistral["messages"] = [{"role": "developer", "content": "Dev."}] + mistral["messages"][1:]
    m2 = ssewire.translate_request(mistral, "chat", "messages")
    assert m2.body["tool_choice"] == {"type": "any"} and m2.body["system"] == "Dev."


def test_converse_settings_cross_as_every_dialects() -> None:
    """Converse has a column of the settings table like every other dialect: the caller's
    metadata is its ``requestMetadata``, ``top_k`` its model field; what it has no place for
    (seed, penalties, user, store) is a note, never dropped silently."""
    chat = dict(copy.deepcopy(LOOPS["chat"]), metadata={"team": "search"}, top_k=7, seed=3,
                presence_penalty=0.1, frequency_penalty=0.2, user="u-1", store=True)  # fmt: skip
    c = ssewire.translate_request(chat, "chat", "converse", model="anthropic.claude-sonnet-4-5")
    _valid_converse(c.body)
    assert c.body["requestMetadata"] == {"team": "search"}
    for name in ("seed", "presence_penalty", "frequency_penalty", "user", "store"):
        assert any(n.startswith(name + " ") for n in c.notes), name
    back = ssewire.translate_request(c.body, "converse", "chat")
    assert back.body["metadata"] == {"team": "search"}
    assert not any("requestMetadata" in n for n in back.notes)
    # top_k: Messages and Gemini have it, and so does Converse.
    m = dict(copy.deepcopy(LOOPS["messages"]), top_k=7)
    c2 = ssewire.translate_request(m, "messages", "converse", model="anthropic.claude-sonnet-4-5")
    _valid_converse(c2.body)
    assert c2.body["additionalModelRequestFields"]["top_k"] == 7
    g = ssewire.translate_request(c2.body, "converse", "gemini", model="gemini-2.5-flash")
    assert g.body["generationConfig"]["topK"] == 7
    assert ssewire.translate_request(g.body, "gemini", "converse", model="m").body[
        "additionalModelRequestFields"] == {"top_k": 7}


def test_tool_errors_and_reasoning_are_carried_where_the_target_reads_them() -> None:
    body = copy.deepcopy(LOOPS["messages"])
    body["messages"][1]["content"].insert(0, {"type": "thinking", "thinking": "Two cities.", "signature": "c2ln"})
    body["messages"][2]["content"][1]["is_error"] = True
    chat = ssewire.translate_request(body, "messages", "chat")
    assert any("reasoning" in n for n in chat.notes)
    assert any("error" in n for n in chat.notes)
    gemini = ssewire.translate_request(body, "messages", "gemini", model="g")
    responses = [p["functionResponse"] for p in gemini.body["contents"][2]["parts"]]
    assert responses[1]["response"] == {"error": "21C"} and responses[0]["response"] == {"result": "18C"}
    assert [r["id"] for r in responses] == ["toolu_a", "toolu_b"]


def test_a_body_that_is_not_a_request_of_its_dialect_says_where() -> None:
    # A tool result whose call is not in the history is no error (issue 34): it crosses.
    r = ssewire.translate_request({"messages": [{"role": "tool", "tool_call_id": "x", "content": "y"}]}, "chat", "messages")
    assert any("call is not in the history" in n for n in r.notes)
    with pytest.raises(ssewire.RequestError) as e:
        ssewire.translate_request({"messages": [{"role": "tool", "content": "y"}]}, "chat", "messages")
    assert e.value.path == "$.messages[0].tool_call_id"
    with pytest.raises(ssewire.RequestError) as e:
        ssewire.translate_request({"messages": [{"role": "user", "content": 5}]}, "messages", "chat")
    assert e.value.path == "$.messages[0].content"
    with pytest.raises(ssewire.RequestError):
        ssewire.translate_request([], "chat", "messages")  # type: ignore[arg-type]
    with pytest.raises(ssewire.RequestError):
        ssewire.translate_request({"messages": object()}, "chat", "messages")
    with pytest.raises(ValueError):
        ssewire.translate_request({}, "chat", "bogus")
    assert issubclass(ssewire.RequestError, ValueError)
    import pickle

    err = pickle.loads(pickle.dumps(e.value))
    assert (err.message, err.path) == (e.value.message, e.value.path)


def test_google_spellings_and_lone_objects_read() -> None:
    body = {
        "system_instruction": {"parts": {"text": "sys"}},
        "contents": {"role": "user", "parts": [{"text": "hi"}]},
        "tools": {"function_declarations": [{"name": "f", "parameters": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}}}]},
        "generation_config": {"max_output_tokens": 50},
    }
    r = ssewire.translate_request(body, "gemini", "chat", model="gemini-2.5-pro")
    assert r.body["model"] == "gemini-2.5-pro"
    assert r.body["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    assert r.body["tools"][0]["function"]["parameters"]["properties"]["a"]["type"] == "string"
    assert r.body["max_tokens"] == 50


def test_hostile_requests_cost_linear_time_and_fail_cleanly() -> None:
    """Many parallel calls answered out of order, many unknown keys: time stays linear (the
    calls are looked up by id, the notes deduplicated by a set); nesting too deep for JSON is a
    RequestError, as is a body JSON cannot hold."""
    import time

    def timed(n: int) -> float:
        calls = [{"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in range(n)]
        body = {
            "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": None, "tool_calls": calls}]
            + [{"role": "tool", "tool_call_id": f"c{i}", "content": "r"} for i in reversed(range(n))],
            **{f"vendor_{i}": i for i in range(n)},
        }
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            for target in ("messages", "responses", "gemini"):
                r = ssewire.translate_request(body, "chat", target, model="m")
            best = min(best, time.perf_counter() - t0)
        assert len(r.notes) == n  # one note per unknown key
        return best

    small, large = timed(2000), timed(8000)
    assert large < small * 4 * 3, (small, large)  # 4x the input: at most ~4x the time (slack 3)
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    with pytest.raises(ssewire.RequestError):
        ssewire.translate_request({"messages": deep}, "chat", "messages")
    very_deep: Any = {}
    for _ in range(5000):
        very_deep = {"a": very_deep}
    with pytest.raises(ssewire.RequestError):
        ssewire.translate_request({"messages": [], "x": very_deep}, "chat", "messages")
    with pytest.raises(ssewire.RequestError):
        ssewire.translate_request({"messages": [{"role": "user", "content": float("nan")}]}, "chat", "messages")


def test_converse_specifics_cross_or_are_noted() -> None:
    """Bedrock Converse both ways: the thinking budget of ``additionalModelRequestFields``, stop
    sequences and temperature of ``inferenceConfig``, a JSON tool result, a required tool choice,
    Converse's own reasoning carried back (only to Converse), a redacted block; what Converse
    cannot take (an image by URL, a mid-conversation system message, structured output) is a
    note, and every body botocore's validator takes."""
    converse = {
        "modelId": "anthropic.claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": [{"text": "Weather?"}, {"cachePoint": {"type": "default"}}]},
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "think", "signature": "sig1"}}},
                {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
                {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Paris"}}},
            ]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "error",
                                                         "content": [{"json": {"error": "down"}}]}}]},
        ],
        "inferenceConfig": {"maxTokens": 4000, "temperature": 0.5, "stopSequences": ["END"]},
        "toolConfig": {"tools": [{"toolSpec": {"name": "weather", "inputSchema": {"json": TOOL_SCHEMA}}}],
                       "toolChoice": {"any": {}}},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}, "top_k": 5},
    }  # fmt: skip
    m = ssewire.translate_request(converse, "converse", "messages")
    assert m.body["model"] == "anthropic.claude-sonnet-4-5"
    assert m.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert m.body["tool_choice"] == {"type": "any"} and m.body["stop_sequences"] == ["END"]
    result = m.body["messages"][2]["content"][0]
    assert result["is_error"] is True and json.loads(result["content"][0]["text"]) == {"error": "down"}
    assert m.body["top_k"] == 5  # a setting: it crosses
    assert not any("top_k" in n for n in m.notes)
    assert any("reasoning from another dialect" in n for n in m.notes)  # Converse's, not Messages'
    back = ssewire.translate_request(m.body, "messages", "converse")
    _valid_converse(back.body)
    assert back.path == "/model/anthropic.claude-sonnet-4-5/converse-stream"
    assert back.body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "top_k": 5,
    }
    assert back.body["inferenceConfig"] == {"maxTokens": 4000, "stopSequences": ["END"]}
    assert back.body["toolConfig"]["toolChoice"] == {"any": {}}
    # Converse to Converse keeps its own reasoning, signed and redacted.
    same = ssewire.translate_request(converse, "converse", "converse")
    _valid_converse(same.body)
    assert same.body["messages"][1]["content"][:2] == converse["messages"][1]["content"][:2]  # type: ignore[index]
    # From chat: what Converse has no place for is named.
    chat = {
        "model": "us.anthropic/claude?x=1",
        "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                                         {"type": "text", "text": "hi"}]},
            {"role": "system", "content": "Answer in French."},
            {"role": "user", "content": "and?"},
        ],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": TOOL_SCHEMA}},
    }  # fmt: skip
    c = ssewire.translate_request(chat, "chat", "converse")
    _valid_converse(c.body)
    assert c.path == "/model/us.anthropic%2Fclaude%3Fx%3D1/converse-stream"
    assert c.body["system"] == [{"text": "Answer in French."}]
    assert [b for m in c.body["messages"] for b in m["content"]] == [{"text": "hi"}, {"text": "and?"}]
    for words in ("images by URL", "system messages inside the conversation", "structured output"):
        assert any(words in n for n in c.notes), (words, c.notes)


def test_the_invokemodel_form_of_a_messages_request() -> None:
    """``framing="eventstream"`` writes a Messages target in Bedrock's InvokeModel form (the model
    in the path, no ``model`` or ``stream`` in the body, ``anthropic_version`` first), which the
    Messages request type takes once the model is put back; read as a source (the model given
    by ``model=``), the form is the same conversation with no note about its version."""
    for source in DIALECTS:
        r = ssewire.translate_request(LOOPS[source], source, "messages", model="m", framing="eventstream")
        assert list(r.body)[0] == "anthropic_version" and r.body["anthropic_version"] == "bedrock-2023-05-31"
        assert "model" not in r.body and "stream" not in r.body
        assert r.path == "/model/m/invoke-with-response-stream"
        rest = {k: v for k, v in r.body.items() if k != "anthropic_version"}
        _valid("messages", {"model": "m", **rest, "stream": True})
        back = ssewire.translate_request(r.body, "messages", "chat", model="m")
        assert not any("anthropic_version" in n for n in back.notes)
        assert _conversation("chat", back.body) == _conversation(source, LOOPS[source])
    named = ssewire.translate_request({**LOOPS["chat"], "model": "us.anthropic.claude/x"}, "chat", "messages",
                                      framing="eventstream")  # fmt: skip
    assert named.path == "/model/us.anthropic.claude%2Fx/invoke-with-response-stream"
    for target, framing in (("chat", "eventstream"), ("messages", "binary")):
        with pytest.raises(ValueError, match="framing"):
            ssewire.translate_request(LOOPS["chat"], "chat", target, framing=framing)


@pytest.mark.parametrize("target", ["chat", "responses", "gemini", "converse"])
def test_a_tool_result_with_an_image_is_a_valid_request_of_each_target(target: str) -> None:
    """A screenshot tool's result (text and an image) from Messages: each target's SDK type
    takes the request written, and the image is in it wherever the target's tool result holds
    media (chat's tool message takes text only: noted)."""
    png = "iVBORw0KGgo="
    body = {"model": "m", "max_tokens": 9, "stream": True, "messages": [
        {"role": "user", "content": "shot?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": [
            {"type": "text", "text": "here"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}]}]}],
        "tools": [{"name": "shot", "input_schema": {"type": "object", "properties": {}}}]}  # fmt: skip
    r = ssewire.translate_request(body, "messages", target, model="m")
    _valid(target, r.body)
    if target == "chat":
        assert any(n.startswith("images in tool results") for n in r.notes), r.notes
    else:
        assert png in json.dumps(r.body), (target, r.body)
