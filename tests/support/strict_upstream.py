"""Scripted LLM upstreams as strict as the providers they stand for, on 127.0.0.1.

Each upstream speaks one dialect (chat, messages, responses, gemini) and plays a thinking
model's two-turn tool loop: the first request gets a tool call (get_weather, Paris) after the
model's signed reasoning; a request that carries the call and its result gets the answer. It
enforces what the providers document and what their HTTP servers refuse:

- HTTP: a strict parser (``server="aiohttp"``: aiohttp's own server, which refuses a
  duplicate ``Content-Type``; ``server="h11"``: h11, which refuses what RFC 9110 forbids) and
  one header of each name; ``content-type: application/json``; the exact endpoint path of the
  dialect (Gemini: the model as one segment, ``?alt=sse`` for a stream); no query parameter
  the dialect does not define;
- credentials: exactly its own key, in its own header (``authorization: Bearer``,
  ``x-api-key`` with ``anthropic-version``, ``x-goog-api-key``), and no other provider's
  credential header at all;
- the loop: every tool call id answered (chat); an assistant turn with ``tool_use`` starts with
  the signed ``thinking`` block it was sent, text and signature unchanged, when thinking is on
  (Anthropic); the ``functionCall`` part carries its ``thoughtSignature`` (Gemini 3); the
  ``function_call`` item comes with its reasoning item, id and encrypted content unchanged
  (Responses, stateless).

A request that breaks a rule gets 400 with the rule in the provider's error shape, and the
rule is recorded in ``violations``. ``fail`` makes the first request fail (an HTTP error with
``retry-after``, a stream cut in the middle, or an error event inside the stream). Every loop
here is bounded, every wait timed; only 127.0.0.1 is bound.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import quote

import h11
import ssewire
from aiohttp import web

from support.loop_thread import TIMEOUT, LoopThreadServer

KEY = "sk-upstream-own-key"
CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key")
ANSWER = "It is 18C in Paris."
THINKING = "The user wants the weather; call get_weather for Paris."
SIGNATURE = "RXFvQ0NrZ0lBUkFCR0FJcVFNZmFrZVNpZ25hdHVyZQ=="
GEMINI_SIGNATURE = "Q2lRQlZ5MlpmYWtlR2VtaW5pU2lnbmF0dXJl"
ENCRYPTED = "ZmFrZSBlbmNyeXB0ZWQgcmVhc29uaW5nIGZyb20gdGhlIFJlc3BvbnNlcyBBUEkh"
CALL_IDS = {"chat": "call_w1", "messages": "toolu_w1", "responses": "call_w1", "gemini": "fc_w1",
            "ollama": "call_w1", "cohere": "call_w1"}  # fmt: skip
PATHS = {"chat": "/v1/chat/completions", "messages": "/v1/messages", "responses": "/v1/responses",
         "ollama": "/api/chat", "cohere": "/v2/chat"}  # fmt: skip
#: The content type of a stream of each dialect.
STREAM_TYPE = {"ollama": "application/x-ndjson"}


def sse(events: List[Tuple[Optional[str], Dict[str, Any]]], done: bool = False) -> bytes:
    out = b""
    for name, data in events:
        out += (f"event: {name}\n" if name else "").encode() + b"data: " + json.dumps(data).encode() + b"\n\n"
    return out + (b"data: [DONE]\n\n" if done else b"")


def call_stream(dialect: str, thinking: bool) -> bytes:
    """The first turn: reasoning (signed where the dialect signs it), then the tool call."""
    args = '{"city": "Paris"}'
    if dialect in ("ollama", "cohere"):  # they sign nothing: chat's turn in their own form
        return ssewire.translate(call_stream("chat", thinking), "chat", dialect)
    if dialect == "chat":
        head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        return sse([
            (None, {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": THINKING}}]}),
            (None, {**head, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": CALL_IDS["chat"],
                    "type": "function", "function": {"name": "get_weather", "arguments": args}}]}}]}),
            (None, {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
        ], done=True)  # fmt: skip
    if dialect == "messages":
        events: List[Tuple[Optional[str], Dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
            "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})]  # fmt: skip
        index = 0
        if thinking:
            events += [
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "thinking_delta", "thinking": THINKING}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "signature_delta", "signature": SIGNATURE}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ]  # fmt: skip
            index = 1
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": CALL_IDS["messages"], "name": "get_weather", "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": {"type": "input_json_delta", "partial_json": args}}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                               "usage": {"output_tokens": 20}}),
            ("message_stop", {"type": "message_stop"}),
        ]  # fmt: skip
        return sse(events)
    if dialect == "responses":
        reasoning = {"type": "reasoning", "id": "rs_w1", "summary": [{"type": "summary_text", "text": THINKING}],
                     "encrypted_content": ENCRYPTED}  # fmt: skip
        call = {"type": "function_call", "id": "fc_item_w1", "call_id": CALL_IDS["responses"], "name": "get_weather",
                "arguments": args, "status": "completed"}  # fmt: skip
        resp = {"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress", "model": "m", "output": []}
        done = {**resp, "status": "completed", "output": [reasoning, call],
                "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}}  # fmt: skip
        return sse([
            ("response.created", {"type": "response.created", "sequence_number": 0, "response": resp}),
            ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                                            "item": {**reasoning, "summary": [], "encrypted_content": None}}),
            ("response.reasoning_summary_part.added", {"type": "response.reasoning_summary_part.added", "sequence_number": 2,
             "item_id": "rs_w1", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
            ("response.reasoning_summary_text.delta", {"type": "response.reasoning_summary_text.delta", "sequence_number": 3,
             "item_id": "rs_w1", "output_index": 0, "summary_index": 0, "delta": THINKING}),
            ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 4, "output_index": 0,
                                           "item": reasoning}),
            ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 5, "output_index": 1,
                                            "item": {**call, "arguments": "", "status": "in_progress"}}),
            ("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
             "sequence_number": 6, "item_id": "fc_item_w1", "output_index": 1, "delta": args}),
            ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 7, "output_index": 1,
                                           "item": call}),
            ("response.completed", {"type": "response.completed", "sequence_number": 8, "response": done}),
        ])  # fmt: skip
    chunk = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": THINKING, "thought": True},
        {"functionCall": {"id": CALL_IDS["gemini"], "name": "get_weather", "args": {"city": "Paris"}},
         "thoughtSignature": GEMINI_SIGNATURE}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "thoughtsTokenCount": 7,
                          "totalTokenCount": 22}, "modelVersion": "gemini-3-pro"}  # fmt: skip
    return sse([(None, chunk)])


def answer_stream(dialect: str) -> bytes:
    head = {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chat = sse([
        (None, {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ANSWER}}]}),
        (None, {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 30, "completion_tokens": 8, "total_tokens": 38}}),
    ], done=True)  # fmt: skip
    return chat if dialect == "chat" else ssewire.translate(chat, "chat", dialect)


def openai_usage(stream: bytes, asked: bool) -> bytes:
    """api.openai.com's usage rule for a chat stream: no usage unless the request set
    ``stream_options.include_usage``; then ``"usage": null`` on every chunk and one chunk with
    ``"choices": []`` and the usage before ``[DONE]``."""
    chunks, usage = [], None
    for event in stream.split(b"\n\n"):
        data = event.partition(b"data: ")[2]
        if not data or data == b"[DONE]":
            continue
        chunk = json.loads(data)
        usage = chunk.pop("usage", None) or usage
        if asked:
            chunk["usage"] = None
        chunks.append((None, chunk))
    if asked and usage is not None and chunks:
        head = {k: chunks[-1][1][k] for k in ("id", "object", "created", "model")}
        chunks.append((None, {**head, "choices": [], "usage": usage}))
    return sse(chunks, done=True)


def error_body(dialect: str, status: int, message: str) -> bytes:
    kind = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error",
            529: "overloaded_error"}.get(status, "api_error")  # fmt: skip
    if dialect == "messages":
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    if dialect == "ollama":
        return json.dumps({"error": message}).encode()
    if dialect == "cohere":
        return json.dumps({"id": "e6c4b7a2-0c2b-4c53-9d4e-1f2a3b4c5d6e", "message": message}).encode()
    if dialect == "gemini":
        status_name = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED"}.get(status, "INTERNAL")
        return json.dumps({"error": {"code": status, "message": message, "status": status_name}}).encode()
    return json.dumps({"error": {"message": message, "type": "requests" if status == 429 else kind,
                                 "param": None, "code": "rate_limit_exceeded" if status == 429 else None}}).encode()  # fmt: skip


class Reply:
    def __init__(self, status: int, body: bytes, headers: Optional[List[Tuple[str, str]]] = None,
                 cut: bool = False) -> None:  # fmt: skip
        self.status = status
        self.body = body
        self.headers = headers or []
        self.cut = cut


class StrictUpstream(LoopThreadServer):
    """A strict, scripted upstream of ``dialect`` on 127.0.0.1 (see the module's text).
    ``fail``: ``None``, ``("status", code)`` (the first request answered with that error and
    ``retry-after: 7``), ``"cut"`` (the first stream cut in the middle), ``"event"`` (an error
    event inside the first stream)."""

    def __init__(self, dialect: str, server: str = "aiohttp", fail: Any = None, model: str = "m",
                 same_ids: bool = True, linger: float = 0.0) -> None:  # fmt: skip
        self.dialect = dialect
        #: Seconds a stream's body waits after its last event before it ends (a server that
        #: closes late: the client has read its stream's end marker by then).
        self.linger = linger
        #: Whether a call must come back under the id this upstream gave it (Anthropic checks
        #: only that a result answers a call of the turn before: a client whose SDK keeps no
        #: call ids, ollama-python's, makes ids up).
        self.same_ids = same_ids
        self.server = server
        self.fail = fail
        self.model = model
        self.requests: List[Dict[str, Any]] = []
        self.violations: List[str] = []
        self.issued_thinking = False
        self._run()

    # -- the rules ------------------------------------------------------------------------------

    def refuse(self, rule: str) -> Reply:
        self.violations.append(rule)
        return Reply(400, error_body(self.dialect, 400, rule))

    def answer(self, target: str, headers: List[Tuple[str, str]], body: bytes) -> Reply:
        """The reply to one request (``target``: the raw request target)."""
        names = [k.lower() for k, _ in headers]
        record = {"target": target, "headers": headers, "body": body}
        self.requests.append(record)
        if len(set(names)) != len(names):
            return self.refuse(f"duplicate header names: {sorted(names)}")
        h = dict((k.lower(), v) for k, v in headers)
        if h.get("content-type") != "application/json":
            return self.refuse(f"content-type {h.get('content-type')!r}")
        own = {"chat": ("authorization", f"Bearer {KEY}"), "responses": ("authorization", f"Bearer {KEY}"),
               "messages": ("x-api-key", KEY), "gemini": ("x-goog-api-key", KEY),
               "ollama": ("authorization", f"Bearer {KEY}"), "cohere": ("authorization", f"Bearer {KEY}")}[self.dialect]  # fmt: skip
        foreign = [n for n in CREDENTIAL_HEADERS if n in h and n != own[0]]
        if foreign:
            return self.refuse(f"credential headers of another provider: {foreign}")
        if h.get(own[0]) != own[1]:
            self.violations.append("credential")
            return Reply(401, error_body(self.dialect, 401, "invalid credential"))
        if self.dialect == "messages" and not h.get("anthropic-version"):
            return self.refuse("anthropic-version is required")
        path, _, query = target.partition("?")
        try:
            request = json.loads(body)
        except ValueError:
            return self.refuse("body is not JSON")
        streaming = True
        if self.dialect == "gemini":
            want = f"/v1beta/models/{quote(self.model, safe='')}:"
            if not path.startswith(want) or path[len(want):] not in ("streamGenerateContent", "generateContent"):
                return self.refuse(f"path {target!r}")
            streaming = path.endswith("streamGenerateContent")
            if query not in (("alt=sse",) if streaming else ("",)):
                return self.refuse(f"query {query!r}")
        else:
            if path != PATHS[self.dialect] or query not in ("", "beta=true"):
                return self.refuse(f"path {target!r}")
            if request.get("model") != self.model:
                return self.refuse(f"model {request.get('model')!r}")
            # Ollama streams unless told not to.
            streaming = bool(request.get("stream", self.dialect == "ollama"))
        first = len(self.requests) == 1
        if first and self.fail is not None:
            if isinstance(self.fail, tuple):
                return Reply(self.fail[1], error_body(self.dialect, self.fail[1], "slow down"),
                             [("retry-after", "7"), ("x-request-id", "req_up_1")])  # fmt: skip
        broken = self.check_loop(request)
        if broken is not None:
            return self.refuse(broken)
        if not streaming:
            return self.refuse("this upstream streams only (the gateway always asks for a stream)")
        if self.has_result(request):
            stream = answer_stream(self.dialect)
        else:
            thinking = self.thinking_on(request)
            self.issued_thinking = thinking
            stream = call_stream(self.dialect, thinking)
        if self.dialect == "chat":
            options = request.get("stream_options")
            if options is not None and not isinstance(options, dict):
                return self.refuse("stream_options must be an object")
            stream = openai_usage(stream, bool(options) and options.get("include_usage") is True)
        if first and self.fail == "cut":
            return Reply(200, stream[: len(stream) // 2], cut=True)
        if first and self.fail == "event":
            events = stream.split(b"\n\n")
            err = error_body(self.dialect, 529, "Overloaded").decode()
            if self.dialect == "messages":
                bad = "event: error\ndata: " + err
            elif self.dialect == "responses":
                bad = "event: error\ndata: " + json.dumps({"type": "error", "sequence_number": 2, "code": "server_error",
                                                           "message": "Overloaded", "param": None})  # fmt: skip
            elif self.dialect == "ollama":  # an error line under 200
                lines = stream.split(b"\n")
                return Reply(200, lines[0] + b"\n" + err.encode() + b"\n")
            elif self.dialect == "cohere":  # a message-end that failed
                bad = "event: message-end\ndata: " + json.dumps({"type": "message-end", "delta": {
                    "finish_reason": "ERROR", "error": "Overloaded", "usage": {}}})  # fmt: skip
            else:
                bad = "data: " + err
            stream = b"\n\n".join(events[:1] + [bad.encode()]) + b"\n\n"
        return Reply(200, stream)

    def thinking_on(self, request: Dict[str, Any]) -> bool:
        if self.dialect == "messages":
            return (request.get("thinking") or {}).get("type") in ("enabled", "adaptive")
        if self.dialect == "ollama":
            return request.get("think") not in (None, False)
        if self.dialect == "cohere":
            return (request.get("thinking") or {}).get("type") == "enabled"
        return True

    def has_result(self, request: Dict[str, Any]) -> bool:
        text = json.dumps(request)
        return any(k in text for k in ('"tool_call_id"', '"tool_result"', '"function_call_output"', '"functionResponse"'))

    def check_loop(self, request: Dict[str, Any]) -> Optional[str]:
        """The provider's rule for a request that carries the tool call back, or None."""
        if not self.has_result(request):
            return None
        d = self.dialect
        if d == "chat":
            asked = [c["id"] for m in request.get("messages", []) for c in m.get("tool_calls") or []]
            answered = [m.get("tool_call_id") for m in request.get("messages", []) if m.get("role") == "tool"]
            if len(asked) != 1 or (self.same_ids and asked != [CALL_IDS["chat"]]) or answered != asked:
                return f"every tool_calls id must be answered: {asked} / {answered}"
        elif d == "messages":
            turns = [m for m in request["messages"] if m["role"] == "assistant" and isinstance(m["content"], list)
                     and any(b.get("type") == "tool_use" for b in m["content"])]  # fmt: skip
            if not turns:
                return "the assistant turn with the tool_use is missing"
            content = turns[-1]["content"]
            uses = [b["id"] for b in content if b.get("type") == "tool_use"]
            if len(uses) != 1 or (self.same_ids and uses != [CALL_IDS["messages"]]):
                return "the tool_use id is not the one sent"
            answers = [b.get("tool_use_id") for m in request["messages"] if m["role"] == "user"
                       and isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip
            if answers != uses:
                return f"tool_result block(s) provided that do not match a tool_use: {answers} / {uses}"
            if self.issued_thinking and self.thinking_on(request):
                first = content[0]
                if first.get("type") != "thinking":
                    return ("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                            f"`{first.get('type')}`. When `thinking` is enabled, a final `assistant` message must "
                            "start with a thinking block")  # fmt: skip
                if first.get("signature") != SIGNATURE or first.get("thinking") != THINKING:
                    return "messages.1.content.0: Invalid `signature` in `thinking` block"
        elif d in ("ollama", "cohere"):
            turns = [m for m in request.get("messages", []) if m.get("role") == "assistant" and m.get("tool_calls")]
            if not turns:
                return "the assistant turn with the tool calls is missing"
            calls = turns[-1]["tool_calls"]
            # The results right after the turn that made the calls, in order.
            after = request["messages"][request["messages"].index(turns[-1]) + 1 :]
            results = []
            for m in after:
                if m.get("role") != "tool":
                    break
                results.append(m)
            if d == "ollama":
                # Ollama: arguments an object; each result names its tool.
                if not all(isinstance((c.get("function") or {}).get("arguments"), dict) for c in calls):
                    return "json: cannot unmarshal string into Go struct field .tool_calls.function.arguments"
                if [r.get("tool_name") for r in results] != [c["function"]["name"] for c in calls]:
                    return "a tool result names no tool it was asked for"
            else:
                # Cohere: arguments JSON text; every call answered by its id.
                if not all(isinstance((c.get("function") or {}).get("arguments"), str) for c in calls):
                    return "invalid request: tool_calls.function.arguments must be a string"
                if [r.get("tool_call_id") for r in results] != [c.get("id") for c in calls]:
                    return "invalid request: every tool call must have a tool result"
        elif d == "gemini":
            calls = [p for c in request.get("contents", []) for p in c.get("parts", []) if "functionCall" in p]
            if not calls:
                return "the functionCall part is missing"
            if calls[0].get("thoughtSignature") != GEMINI_SIGNATURE:
                return "Function call is missing a thought_signature in functionCall parts"
        else:
            items = request.get("input", [])
            kinds = [i.get("type") for i in items if isinstance(i, dict)]
            calls = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call"]
            if [c.get("call_id") for c in calls] != [CALL_IDS["responses"]]:
                return "the function_call item is missing"
            at = kinds.index("function_call")
            reasoning = [i for i in items[:at] if isinstance(i, dict) and i.get("type") == "reasoning"]
            if not reasoning or reasoning[-1].get("id") != "rs_w1" or reasoning[-1].get("encrypted_content") != ENCRYPTED:
                return ("Item 'fc_item_w1' of type 'function_call' was provided without its required "
                        "'reasoning' item: 'rs_w1'")  # fmt: skip
            outputs = [i.get("call_id") for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
            if outputs != [CALL_IDS["responses"]]:
                return "No tool output found for function call"
        return None

    # -- the HTTP layers --------------------------------------------------------------------------

    async def _start(self) -> int:
        if self.server == "aiohttp":
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_route("*", "/{tail:.*}", self._aiohttp)
            self._runner = web.AppRunner(app)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            return int(self._runner.addresses[0][1])
        self._server = await asyncio.start_server(self._h11, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def _stop(self) -> None:
        if self.server == "aiohttp":
            await self._runner.cleanup()
        else:
            self._server.close()
            await self._server.wait_closed()

    async def _aiohttp(self, request: web.Request) -> web.StreamResponse:
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.raw_headers]
        reply = self.answer(request.raw_path, headers, await request.read())
        kind = STREAM_TYPE.get(self.dialect, "text/event-stream") if reply.status == 200 else "application/json"
        response = web.StreamResponse(status=reply.status, headers={"content-type": kind, **dict(reply.headers)})
        response.enable_chunked_encoding()
        await response.prepare(request)
        await response.write(reply.body)
        if self.linger and reply.status == 200:
            await asyncio.sleep(self.linger)
        if reply.cut:
            assert request.transport is not None
            request.transport.abort()
            return response
        await response.write_eof()
        return response

    async def _h11(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=1 << 20)
        try:
            head: Optional[h11.Request] = None
            body = b""
            for _ in range(100_000):
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    data = await asyncio.wait_for(reader.read(65536), TIMEOUT)
                    conn.receive_data(data)
                    continue
                if isinstance(event, h11.Request):
                    head = event
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
            assert head is not None
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in head.headers.raw_items()]
            reply = self.answer(head.target.decode("ascii"), headers, body)
        except h11.RemoteProtocolError as e:
            self.violations.append(f"HTTP: {e}")
            writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        kind = STREAM_TYPE.get(self.dialect, "text/event-stream") if reply.status == 200 else "application/json"
        out = conn.send(h11.Response(status_code=reply.status, headers=[
            ("content-type", kind), ("transfer-encoding", "chunked"), *reply.headers]))  # fmt: skip
        writer.write(out or b"")
        writer.write(conn.send(h11.Data(data=reply.body)) or b"")
        if not reply.cut:
            writer.write(conn.send(h11.EndOfMessage()) or b"")
        await writer.drain()
        writer.close()

