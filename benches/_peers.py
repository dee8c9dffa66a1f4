"""Shared pieces of the dialect benchmarks (``bench_chat.py``, ``bench_messages.py``,
``bench_responses.py``): the corpora and their reads, the generic runners, and the
hand-optimised pure-Python peers.

Every runner takes a whole stream as the list of reads a socket would hand out and returns what
its users consume: decoded objects for the *feed* task, the final assembled object for the
*feed + accumulate* task. Runners build their own parser/accumulator on each call, so one call
is one stream.

Pure-Python peers, written to be as fast as honest Python gets, so that the ratios are
conservative:

* the framer is ``support.pure.PureSSEParser`` (bytes-level splitting, one decode per read,
  one ``str.split`` for a run of plain ``data:`` events);
* JSON is ``orjson.loads``, once per frame;
* the dict accumulators below keep one small ``__slots__`` object per choice / block / output
  item, append string fragments to lists and join each list once in ``result()``; the common
  delta (one text fragment) takes one branch and no helper call. They cover the wire forms the
  corpora use and the usual variations (several choices, tool calls merged by index, refusal
  and reasoning text, thinking + signature, citations, usage merging, terminal responses), but
  not ssewire's long tail (vendor extras, ``reasoning_details`` merging, error-form
  normalisation): they do less work than ssewire's accumulators, never more.

Cost: every runner is linear in the bytes of the stream.
"""

from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import httpx
import httpx_sse
import msgspec
import orjson
import pytest

# The suite's shared support code (tests/support), also when a table script runs this directly.
_sys.path.insert(0, str(_Path(__file__).resolve().parent.parent / "tests"))
import ssewire
from support import streams as _streams  # noqa: E402
from support.pure import PureSSEParser

# -- corpora -------------------------------------------------------------------------------

#: Token chunks per stream: a real run (``--benchmark-enable``) and the one-shot test run.
N_CHUNKS = 1000
N_CHUNKS_QUICK = 100

#: dialect -> generator(n_chunks) of a stream body. The shapes the providers' own APIs send:
#: chat with two parallel tool calls and the usage-only last chunk (``include_usage``);
#: messages with a thinking block, a text block and a tool_use block; responses with a
#: message item and a function_call item, ``event:`` lines included (as api.openai.com).
DIALECTS: Dict[str, Callable[[int], bytes]] = {
    "chat": lambda n: _streams.chat_stream(n, seed=1, tool_calls=True),
    "messages": lambda n: _streams.messages_stream(n, seed=2, tool_use=True, thinking=True),
    "responses": lambda n: _streams.responses_stream(n, seed=3, tool_calls=True, event_lines=True),
    "gemini": lambda n: _streams.gemini_stream(n, seed=4, thinking=True, function_call=True),
}

#: chunking -> how a body is cut into reads (the same cuts as ``conftest.CHUNKINGS``).
CHUNKINGS: Dict[str, Callable[[bytes], List[bytes]]] = {
    # Full socket reads.
    "4KiB": lambda body: _streams.chunked(body, 4096),
    # One read per event: a live stream paced by the model (per-call overhead dominates).
    "per-event": _streams.event_reads,
}

#: The tasks, as they appear in group names.
FEED = "feed"
ACCUMULATE = "feed+accumulate"


def cases(dialect: str, task: str) -> List[Any]:
    """One ``pytest.param`` per chunking, marked with its group ``"<dialect> <task> /
    <chunking>"``: each table then compares the peers on identical reads."""
    return [
        pytest.param(
            chunking,
            id=chunking,
            marks=pytest.mark.benchmark(group=f"{dialect} {task} / {chunking}"),
        )
        for chunking in CHUNKINGS
    ]


class Corpus:
    """One dialect's stream: the body, its reads per chunking, and what the checks need."""

    def __init__(self, dialect: str, quick: bool) -> None:
        self.dialect = dialect
        self.n_chunks = N_CHUNKS_QUICK if quick else N_CHUNKS
        self.body = DIALECTS[dialect](self.n_chunks)
        self.reads = {name: cut(self.body) for name, cut in CHUNKINGS.items()}
        for reads in self.reads.values():
            assert b"".join(reads) == self.body
        frames = ssewire.SSEParser().feed(self.body)
        #: SSE events (frames) in the body, ``[DONE]`` and pings included.
        self.events = len(frames)
        #: The ``data`` of every JSON frame, as bytes, extracted once (msgspec's input).
        self.payloads = [f.data.encode() for f in frames if f.data != "[DONE]"]

    def info(self, chunking: str) -> Dict[str, Any]:
        """``benchmark.extra_info`` of a case."""
        return {
            "events": self.events,
            "bytes": len(self.body),
            "reads": len(self.reads[chunking]) if chunking in self.reads else 1,  # "whole"
            "chunks": self.n_chunks,
        }


_CORPORA: Dict[Tuple[str, bool], Corpus] = {}


def corpus(dialect: str, quick: bool) -> Corpus:
    """The dialect's corpus, built once per session and size."""
    key = (dialect, quick)
    if key not in _CORPORA:
        _CORPORA[key] = Corpus(dialect, quick)
    return _CORPORA[key]


# -- generic runners -----------------------------------------------------------------------


def ssewire_feed(stream_cls: Any, reads: List[bytes]) -> List[Any]:
    """ssewire: framing + decoding of every read, then ``finish()``."""
    stream = stream_cls()
    feed = stream.feed
    out: List[Any] = []
    for read in reads:
        out += feed(read)
    out += stream.finish()
    return out


def ssewire_result(stream_cls: Any, reads: List[bytes]) -> Any:
    """ssewire: ``feed`` every read (items built; the stream folds them itself), ``finish()``,
    then the stream's own ``result()``."""
    stream = stream_cls()
    feed = stream.feed
    for read in reads:
        feed(read)
    stream.finish()
    return stream.result()


def ssewire_consume(stream_cls: Any, reads: List[bytes]) -> Any:
    """ssewire: ``consume`` every read (no item objects at all), ``finish()``, ``result()``:
    the metering / proxy path."""
    stream = stream_cls()
    consume = stream.consume
    for read in reads:
        consume(read)
    stream.finish()
    return stream.result()


def ssewire_accumulate(stream_cls: Any, acc_cls: Any, reads: List[bytes]) -> Any:
    """ssewire: feed + the public accumulator's ``add_all`` per read, ``finish()``,
    ``result()`` (items that come from elsewhere: the accumulator classes)."""
    stream = stream_cls()
    acc = acc_cls()
    feed = stream.feed
    add_all = acc.add_all
    for read in reads:
        add_all(feed(read))
    add_all(stream.finish())
    return acc.result()


def ssewire_reference(stream_cls: Any, acc_cls: Any, body: bytes) -> Any:
    """ssewire's result for a whole body, which must end cleanly: what every peer must match."""
    stream = stream_cls()
    acc = acc_cls()
    acc.add_all(stream.feed(body))
    acc.add_all(stream.finish())
    assert stream.done and stream.error is None
    return acc.result()


def pure_feed(reads: List[bytes]) -> List[Any]:
    """PureSSEParser + ``orjson.loads`` per frame: the JSON objects of the stream."""
    feed = PureSSEParser().feed
    loads = orjson.loads
    out: List[Any] = []
    for read in reads:
        for event in feed(read):
            data = event.data
            if data != "[DONE]":
                out.append(loads(data))
    return out


def pure_accumulate(acc_cls: Any, reads: List[bytes]) -> Any:
    """PureSSEParser + ``orjson.loads`` + a dict accumulator below."""
    parser = PureSSEParser()
    feed = parser.feed
    loads = orjson.loads
    acc = acc_cls()
    add = acc.add
    for read in reads:
        for event in feed(read):
            data = event.data
            if data != "[DONE]":
                add(loads(data))
    parser.finish()
    return acc.result()


def _httpx_events(reads: List[bytes]) -> Any:
    # The documented httpx-sse path, connect_sse() -> EventSource.iter_sse(), over an
    # httpx.Response that streams the reads (httpx decodes each read to text incrementally).
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=iter(reads)
    )
    return httpx_sse.EventSource(response).iter_sse()


def httpx_sse_feed(reads: List[bytes]) -> List[Any]:
    """httpx-sse + ``orjson.loads`` per frame."""
    loads = orjson.loads
    return [loads(sse.data) for sse in _httpx_events(reads) if sse.data != "[DONE]"]


def httpx_sse_accumulate(acc_cls: Any, reads: List[bytes]) -> Any:
    """httpx-sse + ``orjson.loads`` + a dict accumulator below."""
    loads = orjson.loads
    acc = acc_cls()
    add = acc.add
    for sse in _httpx_events(reads):
        data = sse.data
        if data != "[DONE]":
            add(loads(data))
    return acc.result()


def msgspec_decode(decode: Callable[[bytes], Any], payloads: List[bytes]) -> List[Any]:
    """msgspec: decode each pre-extracted payload into its Struct (the decode-only limit)."""
    return [decode(p) for p in payloads]


def struct_to_builtins(value: Any) -> Any:
    """A decoded msgspec value as plain JSON-like values: Structs become dicts (fields left at
    their default omitted, as the key was absent), ``msgspec.Raw`` is decoded (for checks)."""
    if isinstance(value, msgspec.Struct):
        out = {}
        for name in value.__struct_fields__:
            v = getattr(value, name)
            if isinstance(v, msgspec.Raw):
                if not bytes(v):
                    continue  # the key was absent
                v = msgspec.json.decode(v)
            out[name] = struct_to_builtins(v)
        return out
    if isinstance(value, list):
        return [struct_to_builtins(v) for v in value]
    return value


def dict_accumulate(acc_cls: Any, objects: List[Any]) -> Any:
    """Fold already-decoded objects (JSON dicts, or ssewire items) with an accumulator: the
    checks before timing use it to assemble what a feed-only peer decoded."""
    acc = acc_cls()
    for obj in objects:
        acc.add(obj)
    return acc.result()


# -- dict accumulators: chat ---------------------------------------------------------------


class _ChatChoice:
    __slots__ = ("index", "role", "content", "refusal", "reasoning", "reasoning_content",
                 "tool_calls", "finish_reason", "logprobs")

    def __init__(self, index: int) -> None:
        self.index = index
        self.role: Optional[str] = None
        self.content: List[str] = []
        self.refusal: List[str] = []
        self.reasoning: List[str] = []
        self.reasoning_content: List[str] = []
        self.tool_calls: Optional[Dict[int, List[Any]]] = None  # index -> [id, type, name, [args]]
        self.finish_reason: Optional[str] = None
        self.logprobs: Optional[Dict[str, List[Any]]] = None

    def add_delta(self, delta: Dict[str, Any]) -> None:
        """Any delta other than a lone ``content`` fragment."""
        v = delta.get("content")
        if v is not None:
            self.content.append(v)
        v = delta.get("role")
        if v is not None and self.role is None:
            self.role = v
        v = delta.get("refusal")
        if v is not None:
            self.refusal.append(v)
        v = delta.get("reasoning")
        if v is not None:
            self.reasoning.append(v)
        v = delta.get("reasoning_content")
        if v is not None:
            self.reasoning_content.append(v)
        v = delta.get("tool_calls")
        if v:
            calls = self.tool_calls
            if calls is None:
                calls = self.tool_calls = {}
            for frag in v:
                index = frag.get("index", 0)
                call = calls.get(index)
                if call is None:
                    call = calls[index] = [None, None, None, []]
                if not call[0]:
                    call[0] = frag.get("id")
                if call[1] is None:
                    call[1] = frag.get("type")
                fn = frag.get("function")
                if fn:
                    if not call[2]:
                        call[2] = fn.get("name")
                    args = fn.get("arguments")
                    if args:
                        call[3].append(args)

    def add_logprobs(self, logprobs: Dict[str, Any]) -> None:
        merged = self.logprobs
        if merged is None:
            merged = self.logprobs = {}
        for key in ("content", "refusal"):
            v = logprobs.get(key)
            if v:
                merged.setdefault(key, []).extend(v)

    def build(self) -> Dict[str, Any]:
        message: Dict[str, Any] = {
            "role": self.role or "assistant",
            "content": "".join(self.content) if self.content else None,
            "refusal": "".join(self.refusal) if self.refusal else None,
        }
        if self.tool_calls is not None:
            message["tool_calls"] = [
                {"id": c[0], "type": c[1] or "function",
                 "function": {"name": c[2], "arguments": "".join(c[3])}}
                for _, c in sorted(self.tool_calls.items())
            ]
        if self.reasoning:
            message["reasoning"] = "".join(self.reasoning)
        if self.reasoning_content:
            message["reasoning_content"] = "".join(self.reasoning_content)
        return {"index": self.index, "message": message, "logprobs": self.logprobs,
                "finish_reason": self.finish_reason}


class ChatDictAccumulator:
    """``chat.completion.chunk`` dicts -> a ``chat.completion`` dict."""

    __slots__ = ("_first", "_service_tier", "_fingerprint", "_usage", "_choices", "error")

    def __init__(self) -> None:
        self._first: Optional[Dict[str, Any]] = None
        self._service_tier: Optional[str] = None
        self._fingerprint: Optional[str] = None
        self._usage: Optional[Dict[str, Any]] = None
        self._choices: Dict[int, _ChatChoice] = {}
        self.error: Optional[Dict[str, Any]] = None

    def add(self, chunk: Dict[str, Any]) -> None:
        if self._first is None:
            self._first = chunk
        v = chunk.get("system_fingerprint")
        if v is not None:
            self._fingerprint = v
        v = chunk.get("service_tier")
        if v is not None:
            self._service_tier = v
        v = chunk.get("usage")
        if v is not None:
            self._usage = v
        choices = chunk.get("choices")
        if not choices:
            if "error" in chunk and self.error is None:
                self.error = chunk["error"]
            return
        states = self._choices
        for choice in choices:
            index = choice.get("index", 0)
            state = states.get(index)
            if state is None:
                state = states[index] = _ChatChoice(index)
            delta = choice.get("delta")
            if delta:
                content = delta.get("content")
                if content is not None and len(delta) == 1:
                    state.content.append(content)  # the common chunk: one text fragment
                else:
                    state.add_delta(delta)
            v = choice.get("finish_reason")
            if v is not None:
                state.finish_reason = v
            v = choice.get("logprobs")
            if v is not None:
                state.add_logprobs(v)

    def result(self) -> Dict[str, Any]:
        first = self._first or {}
        return {
            "id": first.get("id"),
            "object": "chat.completion",
            "created": first.get("created"),
            "model": first.get("model"),
            "service_tier": self._service_tier,
            "system_fingerprint": self._fingerprint,
            "choices": [self._choices[i].build() for i in sorted(self._choices)],
            "usage": self._usage,
        }


# -- dict accumulators: Anthropic messages -------------------------------------------------

#: delta type -> the key of its text fragment.
_FRAGMENT_KEY = {"text_delta": "text", "input_json_delta": "partial_json",
                 "thinking_delta": "thinking"}
#: block type -> the field its fragments are joined into ("input" is parsed as JSON).
_BLOCK_FIELD = {"text": "text", "thinking": "thinking", "tool_use": "input",
                "server_tool_use": "input"}


class MessageDictAccumulator:
    """Anthropic Messages event dicts -> a ``message`` dict."""

    __slots__ = ("_message", "_blocks", "_parts", "done", "error")

    def __init__(self) -> None:
        self._message: Optional[Dict[str, Any]] = None
        self._blocks: Dict[int, Dict[str, Any]] = {}
        self._parts: Dict[int, List[str]] = {}
        self.done = False
        self.error: Optional[Dict[str, Any]] = None

    def add(self, event: Dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "content_block_delta":
            delta = event["delta"]
            key = _FRAGMENT_KEY.get(delta["type"])
            if key is not None:
                self._parts[event["index"]].append(delta[key])  # the common event
            elif delta["type"] == "signature_delta":
                self._blocks[event["index"]]["signature"] = delta["signature"]
            elif delta["type"] == "citations_delta":
                self._blocks[event["index"]].setdefault("citations", []).append(delta["citation"])
        elif kind == "content_block_start":
            index = event["index"]
            self._blocks[index] = dict(event["content_block"])
            self._parts[index] = []
        elif kind == "message_start":
            started = self._message = dict(event["message"])
            started["usage"] = dict(started.get("usage") or {})
        elif kind == "message_delta":
            message = self._message
            if message is None:
                return
            delta = event.get("delta") or {}
            message["stop_reason"] = delta.get("stop_reason")
            message["stop_sequence"] = delta.get("stop_sequence")
            usage = message["usage"]
            for k, v in (event.get("usage") or {}).items():
                if v is not None:  # cumulative counts overwrite; a null keeps the start value
                    usage[k] = v
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            if self.error is None:
                self.error = event.get("error")
        # ping, content_block_stop: nothing to do

    def result(self) -> Dict[str, Any]:
        message = dict(self._message or {"type": "message", "role": "assistant"})
        content = []
        for index in sorted(self._blocks):
            block = dict(self._blocks[index])
            parts = self._parts[index]
            field = _BLOCK_FIELD.get(block.get("type", ""))
            if field == "input":
                text = "".join(parts)
                if text:
                    block["input"] = orjson.loads(text)
            elif field is not None and parts:
                block[field] = block.get(field, "") + "".join(parts)
            content.append(block)
        message["content"] = content
        return message


# -- dict accumulators: OpenAI responses ---------------------------------------------------

_TERMINAL = frozenset(("response.completed", "response.incomplete", "response.failed"))
_LIFECYCLE = frozenset(("response.created", "response.in_progress", "response.queued"))


class ResponseDictAccumulator:
    """OpenAI Responses event dicts -> the ``response`` dict. Output items are assembled from
    the deltas; a terminal event's full response, when it carries ``output``, wins."""

    __slots__ = ("_response", "_final", "_items", "_text", "_args", "_done", "error")

    def __init__(self) -> None:
        self._response: Optional[Dict[str, Any]] = None
        self._final: Optional[Dict[str, Any]] = None
        self._items: Dict[int, Dict[str, Any]] = {}
        self._text: Dict[int, List[List[str]]] = {}  # output_index -> per content part: fragments
        self._args: Dict[int, List[str]] = {}
        self._done: Dict[int, Dict[str, Any]] = {}
        self.error: Optional[Dict[str, Any]] = None

    def add(self, event: Dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "response.output_text.delta":
            self._text[event["output_index"]][event["content_index"]].append(event["delta"])
        elif kind == "response.function_call_arguments.delta":
            self._args[event["output_index"]].append(event["delta"])
        elif kind == "response.output_item.added":
            index = event["output_index"]
            item = self._items[index] = dict(event["item"])
            if item.get("type") == "message":
                item["content"] = list(item.get("content") or ())
                self._text[index] = [[] for _ in item["content"]]
            else:
                self._args[index] = []
        elif kind == "response.content_part.added":
            index = event["output_index"]
            self._items[index]["content"].append(dict(event["part"]))
            self._text[index].append([])
        elif kind == "response.output_item.done":
            self._done[event["output_index"]] = event["item"]
        elif kind in _TERMINAL:
            self._final = event["response"]
            if kind == "response.failed":
                self.error = self._final.get("error")
        elif kind in _LIFECYCLE:
            self._response = event["response"]
        elif kind == "error":
            if self.error is None:
                self.error = event
        # *.done of parts and texts repeat what the deltas built

    def assembled_output(self) -> List[Dict[str, Any]]:
        """The output items built from the deltas alone."""
        output = []
        for index in sorted(self._items):
            item = dict(self._items[index])
            if item.get("type") == "message":
                item["content"] = [
                    dict(part, text=part.get("text", "") + "".join(frags))
                    if part.get("type") == "output_text" else part
                    for part, frags in zip(item["content"], self._text[index])
                ]
            elif item.get("type") == "function_call":
                item["arguments"] = item.get("arguments", "") + "".join(self._args[index])
            done = self._done.get(index)
            if done is not None:
                item["status"] = done.get("status", item.get("status"))
            output.append(item)
        return output

    def result(self) -> Dict[str, Any]:
        final = self._final
        if final is not None and final.get("output"):
            return final
        response = dict(final or self._response or {"object": "response"})
        response["output"] = self.assembled_output()
        return response


# -- the two benchmark bodies every dialect file runs ------------------------------------------


def bench_feed(
    benchmark: Any, corpora: Any, dialect: str, peers: Dict[str, Any], reference: Any,
    chunking: str, peer: str,
) -> None:
    """Times ``peers[peer]`` feeding one stream (msgspec: decoding its payloads), after checking
    that what it decoded assembles to ssewire's result."""
    corpus_ = corpus(dialect, corpora.quick)
    run, assemble = peers[peer]
    arg = corpus_.payloads if peer == "msgspec" else corpus_.reads[chunking]
    assert assemble(run(arg)) == reference(corpora.quick), f"{peer} disagrees with ssewire"
    benchmark.extra_info.update(corpus_.info(chunking))
    benchmark(run, arg)


def bench_accumulate(
    benchmark: Any, corpora: Any, dialect: str, peers: Dict[str, Any], reference: Any,
    chunking: str, peer: str,
) -> None:
    """Times ``peers[peer]`` feeding and accumulating one stream (msgspec: decoding its
    payloads, the decode-only limit), after checking its result."""
    corpus_ = corpus(dialect, corpora.quick)
    run, summarize = peers[peer]
    arg = corpus_.payloads if peer == "msgspec" else corpus_.reads[chunking]
    assert summarize(run(arg)) == reference(corpora.quick), f"{peer} disagrees with ssewire"
    benchmark.extra_info.update(corpus_.info(chunking))
    benchmark(run, arg)


# -- dict accumulators: Gemini -------------------------------------------------------------


class GeminiDictAccumulator:
    """Gemini ``GenerateContentResponse`` chunk dicts -> the non-streaming response dict, by
    the rules of API.md section 9 that a straightforward reader applies: consecutive text parts
    of one kind join (a signature stays with its text), other parts are kept as sent, the other
    keys of a candidate and of the chunk take the last value (``usageMetadata`` is cumulative).
    Vertex's streamed call arguments are not assembled (the corpus has none)."""

    __slots__ = ("_candidates", "_top", "done", "error")

    def __init__(self) -> None:
        self._candidates: Dict[int, Dict[str, Any]] = {}
        self._top: Dict[str, Any] = {}
        self.done = False
        self.error: Optional[Dict[str, Any]] = None

    def add(self, chunk: Dict[str, Any]) -> None:
        if "error" in chunk:
            if self.error is None:
                self.error = chunk["error"]
            return
        for position, cand in enumerate(chunk.get("candidates") or ()):
            index = cand.get("index", position)
            folded = self._candidates.get(index)
            if folded is None:
                folded = self._candidates[index] = {}
            for key, value in cand.items():
                if key == "content":
                    content = folded.setdefault("content", {"role": "model", "parts": []})
                    if value.get("role"):
                        content["role"] = value["role"]
                    parts = content["parts"]
                    for part in value.get("parts") or ():
                        last = parts[-1] if parts else None
                        if (
                            "text" in part and "functionCall" not in part and last is not None
                            and "text" in last and "functionCall" not in last
                            and bool(last.get("thought")) == bool(part.get("thought"))
                            and not ("thoughtSignature" in last and "thoughtSignature" in part)
                        ):
                            last["text"] += part["text"]
                            if "thoughtSignature" in part:
                                last["thoughtSignature"] = part["thoughtSignature"]
                        else:
                            parts.append(dict(part))
                elif value is not None:
                    folded[key] = value
            if index == 0 and "finishReason" in cand:
                self.done = True
        for key, value in chunk.items():
            if key != "candidates" and value is not None:
                self._top[key] = value

    def result(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"candidates": [self._candidates[i] for i in sorted(self._candidates)]}
        out.update(self._top)
        return out
