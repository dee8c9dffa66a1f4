"""A straightforward pure-Python translator between the chat, Messages and Responses streams:
the peer of ``ssewire.Translator`` in ``bench_translate.py`` (issue 16).

Written as a gateway author would, and as fast as honest Python gets: ``PureSSEParser`` frames,
``orjson.loads`` decodes each frame, the source is read into the same neutral calls as
ssewire's (``open`` / ``delta`` / ``close`` / ``stop`` / ``usage`` / ``end``), dict state, and
each target event is built as a dict and written with ``orjson.dumps``. It covers the wire forms
of the bench corpora (text, reasoning, tool calls, usage with cached tokens, stop reasons) and
not ssewire's long tail (errors, vendor variations, notes): it does less work, never more.
"""

from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path
from typing import Any, Dict, List, Optional

import orjson

# The suite's shared support code (tests/support), also when a table script runs this directly.
_sys.path.insert(0, str(_Path(__file__).resolve().parent.parent / "tests"))
from support.pure import PureSSEParser  # noqa: E402

dumps = orjson.dumps
loads = orjson.loads

CHAT_STOP = {"stop": "end", "length": "max", "tool_calls": "tool", "content_filter": "filter"}
MSG_STOP = {"end_turn": "end", "stop_sequence": "end", "max_tokens": "max", "tool_use": "tool", "refusal": "filter"}
TO_CHAT = {"end": "stop", "max": "length", "tool": "tool_calls", "filter": "content_filter"}
TO_MSG = {"end": "end_turn", "max": "max_tokens", "tool": "tool_use", "filter": "refusal"}


def sse(event: Optional[str], obj: Any) -> bytes:
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + dumps(obj) + b"\n\n"


class MessagesOut:
    def __init__(self) -> None:
        self.out: List[bytes] = []
        self.started = False
        self.index: Dict[Any, int] = {}
        self.kind: Dict[Any, str] = {}
        self.open: Optional[Any] = None
        self.meta: Dict[str, Any] = {}
        self.stop_reason = "end"
        self.usage: Dict[str, int] = {}

    def start(self) -> None:
        if not self.started:
            self.started = True
            self.out.append(sse("message_start", {"type": "message_start", "message": {
                "id": self.meta.get("id", ""), "type": "message", "role": "assistant", "model": self.meta.get("model", ""),
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0}}}))  # fmt: skip

    def open_block(self, key: Any, kind: str, id_: str = "", name: str = "") -> None:
        self.start()
        if self.open is not None:
            self.close(self.open)
        i = len(self.index)
        self.index[key], self.kind[key], self.open = i, kind, key
        block = {"text": {"type": "text", "text": ""}, "reasoning": {"type": "thinking", "thinking": "", "signature": ""},
                 "tool": {"type": "tool_use", "id": id_, "name": name, "input": {}}}[kind]  # fmt: skip
        self.out.append(sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": block}))

    def delta(self, key: Any, text: str) -> None:
        if key not in self.index:
            self.open_block(key, "text")
        kind = self.kind[key]
        d = ({"type": "text_delta", "text": text} if kind == "text" else
             {"type": "thinking_delta", "thinking": text} if kind == "reasoning" else
             {"type": "input_json_delta", "partial_json": text})  # fmt: skip
        self.out.append(sse("content_block_delta", {"type": "content_block_delta", "index": self.index[key], "delta": d}))

    def close(self, key: Any) -> None:
        if self.open == key:
            self.out.append(sse("content_block_stop", {"type": "content_block_stop", "index": self.index[key]}))
            self.open = None

    def end(self) -> None:
        self.start()
        if self.open is not None:
            self.close(self.open)
        u = self.usage
        cached = u.get("cached", 0)
        self.out.append(sse("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": TO_MSG.get(self.stop_reason, self.stop_reason), "stop_sequence": None},
            "usage": {"input_tokens": u.get("input", 0) - cached, "cache_read_input_tokens": cached,
                      "output_tokens": u.get("output", 0)}}))  # fmt: skip
        self.out.append(sse("message_stop", {"type": "message_stop"}))


class ChatOut:
    def __init__(self) -> None:
        self.out: List[bytes] = []
        self.started = False
        self.kind: Dict[Any, str] = {}
        self.tool_index: Dict[Any, int] = {}
        self.meta: Dict[str, Any] = {}
        self.stop_reason = "end"
        self.usage: Dict[str, int] = {}

    def chunk(self, delta: Dict[str, Any], finish: Optional[str] = None) -> None:
        m = self.meta
        self.out.append(sse(None, {"id": m.get("id", ""), "object": "chat.completion.chunk", "created": m.get("created", 0),
                                   "model": m.get("model", ""), "choices": [
                                       {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}))  # fmt: skip

    def start(self) -> None:
        if not self.started:
            self.started = True
            self.chunk({"role": "assistant", "content": ""})

    def open_block(self, key: Any, kind: str, id_: str = "", name: str = "") -> None:
        self.start()
        self.kind[key] = kind
        if kind == "tool":
            i = self.tool_index[key] = len(self.tool_index)
            self.chunk({"tool_calls": [{"index": i, "id": id_, "type": "function",
                                        "function": {"name": name, "arguments": ""}}]})  # fmt: skip

    def delta(self, key: Any, text: str) -> None:
        kind = self.kind.get(key)
        if kind is None:
            self.open_block(key, "text")
            kind = "text"
        if kind == "text":
            self.chunk({"content": text})
        elif kind == "reasoning":
            self.chunk({"reasoning_content": text})
        else:
            self.chunk({"tool_calls": [{"index": self.tool_index[key], "function": {"arguments": text}}]})

    def close(self, key: Any) -> None:
        pass

    def end(self) -> None:
        self.start()
        self.chunk({}, TO_CHAT.get(self.stop_reason, self.stop_reason))
        u = self.usage
        m = self.meta
        self.out.append(sse(None, {"id": m.get("id", ""), "object": "chat.completion.chunk", "created": m.get("created", 0),
                                   "model": m.get("model", ""), "choices": [], "usage": {
                                       "prompt_tokens": u.get("input", 0), "completion_tokens": u.get("output", 0),
                                       "total_tokens": u.get("input", 0) + u.get("output", 0),
                                       "prompt_tokens_details": {"cached_tokens": u.get("cached", 0)}}}))  # fmt: skip
        self.out.append(b"data: [DONE]\n\n")


class ResponsesOut:
    def __init__(self) -> None:
        self.out: List[bytes] = []
        self.seq = 0
        self.started = False
        self.items: Dict[Any, Dict[str, Any]] = {}
        self.order: List[Any] = []
        self.meta: Dict[str, Any] = {}
        self.stop_reason = "end"
        self.usage: Dict[str, int] = {}

    def event(self, kind: str, **fields: Any) -> None:
        fields["type"] = kind
        fields["sequence_number"] = self.seq
        self.seq += 1
        self.out.append(sse(kind, fields))

    def response(self, status: str, output: List[Any], usage: Any) -> Dict[str, Any]:
        return {"id": self.meta.get("id") or "resp", "object": "response", "created_at": self.meta.get("created", 0),
                "status": status, "model": self.meta.get("model", ""), "output": output, "usage": usage}  # fmt: skip

    def start(self) -> None:
        if not self.started:
            self.started = True
            self.event("response.created", response=self.response("in_progress", [], None))
            self.event("response.in_progress", response=self.response("in_progress", [], None))

    def open_block(self, key: Any, kind: str, id_: str = "", name: str = "") -> None:
        self.start()
        n = len(self.order)
        item = {"kind": kind, "id": f"{kind}_{n}", "n": n, "text": [], "call_id": id_, "name": name}
        self.items[key] = item
        self.order.append(key)
        self.event("response.output_item.added", output_index=n, item=self.item(item, "in_progress"))
        if kind == "text":
            self.event("response.content_part.added", output_index=n, item_id=item["id"], content_index=0,
                       part={"type": "output_text", "text": "", "annotations": []})  # fmt: skip
        elif kind == "reasoning":
            self.event("response.reasoning_summary_part.added", output_index=n, item_id=item["id"], summary_index=0,
                       part={"type": "summary_text", "text": ""})  # fmt: skip

    def item(self, item: Dict[str, Any], status: str) -> Dict[str, Any]:
        text = "".join(item["text"]) if status == "completed" else ""
        kind = item["kind"]
        if kind == "text":
            return {"type": "message", "id": item["id"], "status": status, "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}] if status == "completed" else []}  # fmt: skip
        if kind == "reasoning":
            return {"type": "reasoning", "id": item["id"],
                    "summary": [{"type": "summary_text", "text": text}] if status == "completed" else []}  # fmt: skip
        return {"type": "function_call", "id": item["id"], "call_id": item["call_id"], "name": item["name"],
                "arguments": text, "status": status}  # fmt: skip

    def delta(self, key: Any, text: str) -> None:
        if key not in self.items:
            self.open_block(key, "text")
        item = self.items[key]
        item["text"].append(text)
        kind, n, id_ = item["kind"], item["n"], item["id"]
        if kind == "text":
            self.event("response.output_text.delta", output_index=n, item_id=id_, content_index=0, delta=text, logprobs=[])
        elif kind == "reasoning":
            self.event("response.reasoning_summary_text.delta", output_index=n, item_id=id_, summary_index=0, delta=text)
        else:
            self.event("response.function_call_arguments.delta", output_index=n, item_id=id_, delta=text)

    def close(self, key: Any) -> None:
        item = self.items.get(key)
        if item is None or item.get("closed"):
            return
        item["closed"] = True
        n, id_, text = item["n"], item["id"], "".join(item["text"])
        if item["kind"] == "text":
            self.event("response.output_text.done", output_index=n, item_id=id_, content_index=0, text=text)
            self.event("response.content_part.done", output_index=n, item_id=id_, content_index=0,
                       part={"type": "output_text", "text": text, "annotations": []})  # fmt: skip
        elif item["kind"] == "reasoning":
            self.event("response.reasoning_summary_text.done", output_index=n, item_id=id_, summary_index=0, text=text)
            self.event("response.reasoning_summary_part.done", output_index=n, item_id=id_, summary_index=0,
                       part={"type": "summary_text", "text": text})  # fmt: skip
        else:
            self.event("response.function_call_arguments.done", output_index=n, item_id=id_, arguments=text)
        self.event("response.output_item.done", output_index=n, item=self.item(item, "completed"))

    def end(self) -> None:
        self.start()
        for key in self.order:
            self.close(key)
        u = self.usage
        usage = {"input_tokens": u.get("input", 0), "input_tokens_details": {"cached_tokens": u.get("cached", 0)},
                 "output_tokens": u.get("output", 0), "total_tokens": u.get("input", 0) + u.get("output", 0)}  # fmt: skip
        status = "incomplete" if self.stop_reason in ("max", "filter") else "completed"
        self.event("response." + status,
                   response=self.response(status, [self.item(self.items[k], "completed") for k in self.order], usage))  # fmt: skip


TO_GEMINI = {"end": "STOP", "max": "MAX_TOKENS", "tool": "STOP", "filter": "SAFETY"}


class GeminiOut:
    """Gemini chunks: a chunk per text delta, a function call whole at its close."""

    def __init__(self) -> None:
        self.out: List[bytes] = []
        self.kind: Dict[Any, str] = {}
        self.calls: Dict[Any, List[Any]] = {}
        self.meta: Dict[str, Any] = {}
        self.stop_reason = "end"
        self.usage: Dict[str, int] = {}

    def chunk(self, parts: List[Dict[str, Any]], finish: Optional[str] = None, usage: Any = None) -> None:
        cand: Dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            cand["finishReason"] = finish
        obj: Dict[str, Any] = {"candidates": [cand]}
        if usage is not None:
            obj["usageMetadata"] = usage
        obj["modelVersion"], obj["responseId"] = self.meta.get("model", ""), self.meta.get("id", "")
        self.out.append(sse(None, obj))

    def start(self) -> None:
        pass

    def open_block(self, key: Any, kind: str, id_: str = "", name: str = "") -> None:
        self.kind[key] = kind
        if kind == "tool":
            self.calls[key] = [id_, name, []]

    def delta(self, key: Any, text: str) -> None:
        kind = self.kind.setdefault(key, "text")
        if kind == "tool":
            self.calls[key][2].append(text)
        elif kind == "reasoning":
            self.chunk([{"text": text, "thought": True}])
        else:
            self.chunk([{"text": text}])

    def close(self, key: Any) -> None:
        call = self.calls.pop(key, None)
        if call is not None:
            args = "".join(call[2])
            self.chunk([{"functionCall": {"id": call[0], "name": call[1], "args": loads(args) if args else {}}}])

    def end(self) -> None:
        for key in list(self.calls):
            self.close(key)
        u = self.usage
        usage = {"promptTokenCount": u.get("input", 0), "candidatesTokenCount": u.get("output", 0),
                 "totalTokenCount": u.get("input", 0) + u.get("output", 0)}  # fmt: skip
        self.chunk([], TO_GEMINI.get(self.stop_reason, "STOP"), usage)


WRITERS = {"chat": ChatOut, "messages": MessagesOut, "responses": ResponsesOut, "gemini": GeminiOut}


def read_chat(obj: Dict[str, Any], w: Any, state: Dict[str, Any]) -> None:
    if not w.meta:
        w.meta = {"id": obj.get("id"), "model": obj.get("model"), "created": obj.get("created")}
        w.start()
    for choice in obj.get("choices") or ():
        d = choice.get("delta") or {}
        text = d.get("content")
        reasoning = d.get("reasoning_content") or d.get("reasoning")
        if reasoning:
            if state.get("open") != "reasoning":
                w.open_block("reasoning", "reasoning")
                state["open"] = "reasoning"
            w.delta("reasoning", reasoning)
        if text:
            if state.get("open") != "text":
                if state.get("open"):
                    w.close(state["open"])
                w.open_block("text", "text")
                state["open"] = "text"
            w.delta("text", text)
        for call in d.get("tool_calls") or ():
            key = ("tool", call.get("index", 0))
            f = call.get("function") or {}
            if key not in state:
                state[key] = True
                if state.get("open") in ("text", "reasoning"):
                    w.close(state["open"])
                    state["open"] = None
                w.open_block(key, "tool", call.get("id") or "", f.get("name") or "")
            if f.get("arguments"):
                w.delta(key, f["arguments"])
        if choice.get("finish_reason"):
            w.stop_reason = CHAT_STOP.get(choice["finish_reason"], choice["finish_reason"])
    u = obj.get("usage")
    if u:
        w.usage = {"input": u.get("prompt_tokens", 0), "output": u.get("completion_tokens", 0),
                   "cached": (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)}  # fmt: skip


def read_messages(obj: Dict[str, Any], w: Any, state: Dict[str, Any]) -> None:
    kind = obj.get("type")
    if kind == "content_block_delta":
        d = obj["delta"]
        text = d.get("text") or d.get("thinking") or d.get("partial_json")
        if text:
            w.delta(obj["index"], text)
    elif kind == "content_block_start":
        b = obj["content_block"]
        t = b.get("type")
        w.open_block(obj["index"], "text" if t == "text" else "reasoning" if t == "thinking" else "tool",
                     b.get("id", ""), b.get("name", ""))  # fmt: skip
    elif kind == "content_block_stop":
        w.close(obj["index"])
    elif kind == "message_start":
        m = obj["message"]
        w.meta = {"id": m.get("id"), "model": m.get("model")}
        u = m.get("usage") or {}
        state["usage"] = dict(u)
        w.start()
    elif kind == "message_delta":
        r = (obj.get("delta") or {}).get("stop_reason")
        if r:
            w.stop_reason = MSG_STOP.get(r, r)
        u = state.setdefault("usage", {})
        u.update({k: v for k, v in (obj.get("usage") or {}).items() if v is not None})
        cached = u.get("cache_read_input_tokens") or 0
        w.usage = {"input": (u.get("input_tokens") or 0) + cached + (u.get("cache_creation_input_tokens") or 0),
                   "output": u.get("output_tokens", 0), "cached": cached}  # fmt: skip
    elif kind == "message_stop":
        w.end()


def read_responses(obj: Dict[str, Any], w: Any, state: Dict[str, Any]) -> None:
    kind = obj.get("type", "")
    oi = obj.get("output_index")
    if kind == "response.output_text.delta" or kind == "response.function_call_arguments.delta" or \
            kind == "response.reasoning_summary_text.delta":  # fmt: skip
        w.delta(oi, obj["delta"])
    elif kind == "response.output_item.added":
        item = obj["item"]
        t = item.get("type")
        if t == "function_call":
            state["tools"] = True
        w.open_block(oi, "text" if t == "message" else "reasoning" if t == "reasoning" else "tool",
                     item.get("call_id", ""), item.get("name", ""))  # fmt: skip
    elif kind == "response.output_item.done":
        w.close(oi)
    elif kind == "response.created":
        r = obj["response"]
        w.meta = {"id": r.get("id"), "model": r.get("model"), "created": r.get("created_at")}
        w.start()
    elif kind in ("response.completed", "response.incomplete"):
        r = obj["response"]
        u = r.get("usage") or {}
        w.usage = {"input": u.get("input_tokens", 0), "output": u.get("output_tokens", 0),
                   "cached": (u.get("input_tokens_details") or {}).get("cached_tokens", 0)}  # fmt: skip
        w.stop_reason = "max" if kind == "response.incomplete" else "tool" if state.get("tools") else "end"
        w.end()


GEMINI_STOP = {"STOP": "end", "MAX_TOKENS": "max", "SAFETY": "filter"}


def read_gemini(obj: Dict[str, Any], w: Any, state: Dict[str, Any]) -> None:
    if not w.meta:
        w.meta = {"id": obj.get("responseId"), "model": obj.get("modelVersion")}
        w.start()
    for cand in obj.get("candidates") or ():
        if cand.get("index", 0) != 0:
            continue
        for part in (cand.get("content") or {}).get("parts") or ():
            call = part.get("functionCall")
            if call is not None:
                if state.get("open"):
                    w.close(state["open"])
                    state["open"] = None
                state["calls"] = n = state.get("calls", 0) + 1
                key = ("tool", n)
                w.open_block(key, "tool", f"call_{obj.get('responseId')}_{n}", call.get("name", ""))
                w.delta(key, dumps(call.get("args") or {}).decode())
                w.close(key)
                continue
            text = part.get("text")
            if text is None:
                continue
            kind = "reasoning" if part.get("thought") else "text"
            if state.get("open") != kind:
                if state.get("open"):
                    w.close(state["open"])
                w.open_block(kind, kind)
                state["open"] = kind
            if text:
                w.delta(kind, text)
        reason = cand.get("finishReason")
        if reason:
            if state.get("open"):
                w.close(state["open"])
                state["open"] = None
            stop = GEMINI_STOP.get(reason, reason)
            w.stop_reason = "tool" if stop == "end" and state.get("calls") else stop
            u = obj.get("usageMetadata") or {}
            w.usage = {"input": u.get("promptTokenCount", 0),
                       "output": u.get("candidatesTokenCount", 0) + u.get("thoughtsTokenCount", 0),
                       "cached": u.get("cachedContentTokenCount", 0)}  # fmt: skip
            w.end()


READERS = {"chat": read_chat, "messages": read_messages, "responses": read_responses, "gemini": read_gemini}


def translate(source: str, target: str, reads: List[bytes]) -> List[bytes]:
    """The target's bytes, per read (as a gateway writes them)."""
    feed = PureSSEParser().feed
    w = WRITERS[target]()
    read = READERS[source]
    state: Dict[str, Any] = {}
    outs: List[bytes] = []
    for data in reads:
        for event in feed(data):
            if event.data == "[DONE]":
                if state.get("open"):
                    w.close(state["open"])
                for key in [k for k in state if isinstance(k, tuple)]:
                    w.close(key)
                w.end()
            else:
                read(loads(event.data), w, state)
        outs.append(b"".join(w.out))
        w.out.clear()
    return outs
