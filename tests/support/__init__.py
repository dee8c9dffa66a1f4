"""``ssewire bench``: ssewire side by side with every pure-Python SSE parser that is installed.

Strategy. For each dialect a deterministic stream body is generated (``support.streams``) and
cut into socket-sized reads; then three tasks are timed on the same reads:

- ``framing``: bytes -> events (``ssewire.SSEParser``);
- ``feed``: bytes -> decoded per-event objects (the dialect stream's ``feed()``; a peer frames
  and ``json.loads`` each event, and the SDKs also build their typed event models, which is
  what their ``Stream`` hands to users);
- ``feed+accumulate``: bytes -> the final object (ssewire: the dialect stream's ``consume()``
  + ``result()``, which folds in Rust and builds no per-event object; the SDKs use their own
  stream helpers: ``ChatCompletionStreamState``, ``ResponseStreamState``,
  ``accumulate_event``; the plain parsers fold the decoded dicts with a small dict
  accumulator written here). Each row of the table says what it runs.

Every peer is first run once and its output checked against ssewire's (the same events, the
same text assembled); a peer that is not installed, raises or gives a different result is
skipped with a note. Then each case runs repeatedly for a time budget and the best time
counts (``time.perf_counter``; the minimum is the least disturbed run). The ratio is the
peer's best time divided by ssewire's on the same task: "ssewire is N times faster".

Cost: linear in stream size times repeats; ``--quick`` keeps the whole run to a few seconds
plus the time the SDKs take to import.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import os
import platform
import sys
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import ssewire

from support import streams as _streams
from support.pure import PureSSEParser

__all__ = ["main", "run"]

DIALECTS = ("chat", "messages", "responses")
TASKS = ("framing", "feed", "feed+accumulate")
PEERS = ("pure-python", "openai-sdk", "anthropic-sdk", "httpx-sse", "sseclient-py")

#: Streams of this many content chunks (tokens) unless ``--chunks`` says otherwise.
DEFAULT_CHUNKS = 1000
QUICK_CHUNKS = 200
#: Seconds each case keeps repeating (at least ``MIN_REPEATS`` runs).
DEFAULT_BUDGET = 0.4
QUICK_BUDGET = 0.03
MIN_REPEATS = 3
QUICK_MIN_REPEATS = 1
MAX_REPEATS = 10_000

_SEEDS = {"chat": 1, "messages": 2, "responses": 3}


def make_body(dialect: str, chunks: int) -> bytes:
    """The benchmark stream of ``dialect``: a plain text answer of ``chunks`` tokens, framed
    as the provider frames it (chat: with the usage chunk; responses: with ``event:`` lines
    as api.openai.com sends them; messages: with the ``ping``)."""
    seed = _SEEDS[dialect]
    if dialect == "chat":
        return _streams.chat_stream(chunks, seed=seed)
    if dialect == "messages":
        return _streams.messages_stream(chunks, seed=seed)
    return _streams.responses_stream(chunks, seed=seed, event_lines=True)


def expected_text(dialect: str, chunks: int) -> str:
    return "".join(_streams.tokens(chunks, _SEEDS[dialect]))


# --- reading results: dicts (json.loads) and SDK models alike -------------------------------


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def _delta_texts(dialect: str, objs: Sequence[Any]) -> str:
    """The answer text carried by decoded events (dicts or SDK models)."""
    parts: List[str] = []
    for o in objs:
        if dialect == "chat":
            for ch in _get(o, "choices") or ():
                text = _get(_get(ch, "delta") or {}, "content")
                if text:
                    parts.append(text)
        elif dialect == "messages":
            if _get(o, "type") == "content_block_delta":
                delta = _get(o, "delta")
                if _get(delta, "type") == "text_delta":
                    parts.append(_get(delta, "text"))
        elif _get(o, "type") == "response.output_text.delta":
            parts.append(_get(o, "delta"))
    return "".join(parts)


def _ssewire_delta_texts(dialect: str, items: Sequence[Any]) -> str:
    parts: List[str] = []
    for it in items:
        if dialect == "chat":
            text = getattr(it, "content", None)
        elif dialect == "messages":
            text = getattr(it, "text", None) if getattr(it, "type", "") == "content_block_delta" else None
        else:
            text = getattr(it, "delta", None) if getattr(it, "type", "") == "response.output_text.delta" else None
        if text:
            parts.append(text)
    return "".join(parts)


def _final_text(dialect: str, result: Any) -> str:
    """The answer text of a final object (dict or SDK model)."""
    if dialect == "chat":
        choices = _get(result, "choices") or []
        return (_get(_get(choices[0], "message"), "content") or "") if choices else ""
    if dialect == "messages":
        return "".join(
            _get(b, "text") or "" for b in _get(result, "content") or () if _get(b, "type") == "text"
        )
    if dialect == "gemini":
        candidates = _get(result, "candidates") or []
        parts = _get(_get(candidates[0], "content"), "parts") or () if candidates else ()
        return "".join(_get(p, "text") or "" for p in parts if not _get(p, "thought"))
    return "".join(
        _get(c, "text") or ""
        for item in _get(result, "output") or ()
        if _get(item, "type") == "message"
        for c in _get(item, "content") or ()
        if _get(c, "type") == "output_text"
    )


# --- the plain dict accumulators of the pure-Python peers ------------------------------------
# What a careful user writes around json.loads: fragments in lists, joined once at the end.


def _fold_chat(chunks: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    head: Dict[str, Any] = {}
    usage = None
    states: Dict[int, Dict[str, Any]] = {}
    for c in chunks:
        if not head and c.get("id"):
            head = {"id": c["id"], "created": c.get("created"), "model": c.get("model")}
        if c.get("usage"):
            usage = c["usage"]
        for ch in c.get("choices") or ():
            st = states.get(ch.get("index", 0))
            if st is None:
                st = states[ch.get("index", 0)] = {
                    "role": None, "content": [], "tools": {}, "finish_reason": None}
            delta = ch.get("delta") or {}
            if delta.get("role"):
                st["role"] = delta["role"]
            if delta.get("content"):
                st["content"].append(delta["content"])
            for tc in delta.get("tool_calls") or ():
                call = st["tools"].setdefault(
                    tc.get("index", 0), {"id": None, "name": None, "arguments": []})
                fn = tc.get("function") or {}
                call["id"] = call["id"] or tc.get("id")
                call["name"] = call["name"] or fn.get("name")
                if fn.get("arguments"):
                    call["arguments"].append(fn["arguments"])
            if ch.get("finish_reason"):
                st["finish_reason"] = ch["finish_reason"]
    choices = []
    for index in sorted(states):
        st = states[index]
        message: Dict[str, Any] = {"role": st["role"] or "assistant",
                                   "content": "".join(st["content"]) or None}
        if st["tools"]:
            message["tool_calls"] = [
                {"id": t["id"], "type": "function",
                 "function": {"name": t["name"], "arguments": "".join(t["arguments"])}}
                for _, t in sorted(st["tools"].items())
            ]
        choices.append({"index": index, "message": message, "finish_reason": st["finish_reason"]})
    return dict(head, object="chat.completion", choices=choices, usage=usage)


def _fold_messages(events: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    message: Dict[str, Any] = {}
    blocks: List[Dict[str, Any]] = []
    parts: List[List[str]] = []
    for ev in events:
        kind = ev.get("type")
        if kind == "content_block_delta":
            delta = ev["delta"]
            dkind = delta.get("type")
            key = {"text_delta": "text", "input_json_delta": "partial_json",
                   "thinking_delta": "thinking", "signature_delta": "signature"}.get(dkind)
            if key is not None:
                parts[ev["index"]].append(delta[key])
        elif kind == "content_block_start":
            blocks.append(dict(ev["content_block"]))
            parts.append([])
        elif kind == "message_start":
            message = dict(ev["message"])
        elif kind == "message_delta":
            message.update(ev.get("delta") or {})
            if ev.get("usage"):
                message["usage"] = dict(message.get("usage") or {}, **ev["usage"])
    for block, fragments in zip(blocks, parts):
        if block.get("type") == "tool_use":
            text = "".join(fragments)
            block["input"] = json.loads(text) if text else {}
        elif block.get("type") == "text":
            block["text"] = "".join(fragments)
        elif block.get("type") == "thinking":
            block["thinking"] = "".join(f for f in fragments)
    message["content"] = blocks
    return message


def _fold_responses(events: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    response: Dict[str, Any] = {}
    items: Dict[int, Dict[str, Any]] = {}
    texts: Dict[Tuple[int, int], List[str]] = {}
    for ev in events:
        kind = ev.get("type", "")
        if kind == "response.output_text.delta":
            texts.setdefault((ev["output_index"], ev["content_index"]), []).append(ev["delta"])
        elif kind == "response.output_item.added":
            items[ev["output_index"]] = dict(ev["item"], content=list(ev["item"].get("content") or []))
        elif kind == "response.content_part.added":
            items[ev["output_index"]]["content"].append(dict(ev["part"]))
        elif kind == "response.output_item.done":
            items[ev["output_index"]] = ev["item"]
        elif kind in ("response.created", "response.in_progress", "response.completed",
                      "response.incomplete", "response.failed"):
            response = ev["response"]
    for (oi, ci), fragments in texts.items():
        content = items[oi]["content"]
        if ci < len(content) and not content[ci].get("text"):
            content[ci]["text"] = "".join(fragments)
    if not response.get("output"):
        response = dict(response, output=[items[i] for i in sorted(items)])
    return response


_FOLDS = {"chat": _fold_chat, "messages": _fold_messages, "responses": _fold_responses}


def _loads_events(dialect: str, events: Any, key: Callable[[Any], Tuple[Optional[str], str]]) -> List[Any]:
    """``json.loads`` of every event's data (no ``[DONE]``, no ``ping``)."""
    loads = json.loads
    out = []
    for ev in events:
        name, data = key(ev)
        if data.startswith("[DONE]") or name == "ping" or not data:
            continue
        out.append(loads(data))
    return out


# --- the peers ------------------------------------------------------------------------------


class Runner(NamedTuple):
    """One parser's way to do one task: ``run(reads) -> output``, ``check(output) -> value``
    compared with ssewire's."""

    run: Callable[[List[bytes]], Any]
    check: Callable[[Any], Any]
    #: What the runner actually runs, printed beside its row (a task is done differently by
    #: each parser: ssewire's final object comes from consume() + result(), not feed()).
    runs: str = ""


def _framing_key(ev: Any) -> Tuple[str, str]:
    return (ev.event or "message", ev.data)


def _ssewire_runners(dialect: str) -> Dict[str, Runner]:
    stream_cls: Any = {"chat": ssewire.ChatCompletionStream, "messages": ssewire.MessagesStream,
                  "responses": ssewire.ResponsesStream}[dialect]
    def framing(reads: List[bytes]) -> List[Any]:
        parser = ssewire.SSEParser()
        out: List[Any] = []
        for read in reads:
            out += parser.feed(read)
        out += parser.finish()
        return out

    def feed(reads: List[bytes]) -> List[Any]:
        stream = stream_cls()
        out: List[Any] = []
        for read in reads:
            out += stream.feed(read)
        out += stream.finish()
        return out

    def accumulate(reads: List[bytes]) -> Any:
        # The stream folds as it decodes; consume() builds no item objects.
        stream = stream_cls()
        consume = stream.consume
        for read in reads:
            consume(read)
        stream.finish()
        return stream.result()

    return {
        "framing": Runner(framing, lambda out: [_framing_key(e) for e in out], "SSEParser.feed()"),
        "feed": Runner(feed, lambda out: _ssewire_delta_texts(dialect, out), "stream.feed()"),
        "feed+accumulate": Runner(accumulate, lambda out: _final_text(dialect, out), "stream.consume() + result()"),
    }


def _plain_runners(
    dialect: str, frame: Callable[[List[bytes]], Any], key: Callable[[Any], Tuple[Optional[str], str]]
) -> Dict[str, Runner]:
    """Runners of a plain framer: framing, + json.loads, + the dict accumulator."""
    fold = _FOLDS[dialect]

    def framing(reads: List[bytes]) -> List[Any]:
        return list(frame(reads))

    def feed(reads: List[bytes]) -> List[Any]:
        return _loads_events(dialect, frame(reads), key)

    def accumulate(reads: List[bytes]) -> Any:
        return fold(_loads_events(dialect, frame(reads), key))

    return {
        "framing": Runner(framing, lambda out: [(key(e)[0] or "message", key(e)[1]) for e in out], "framer"),
        "feed": Runner(feed, lambda out: _delta_texts(dialect, out), "framer + json.loads"),
        "feed+accumulate": Runner(accumulate, lambda out: _final_text(dialect, out), "framer + json.loads + dict fold"),
    }


def _pure_python(dialect: str) -> Dict[str, Runner]:
    def frame(reads: List[bytes]) -> List[Any]:
        parser = PureSSEParser()
        out: List[Any] = []
        for read in reads:
            out += parser.feed(read)
        out += parser.finish()
        return out

    return _plain_runners(dialect, frame, lambda e: (e.event, e.data))


def _httpx_sse(dialect: str) -> Dict[str, Runner]:
    import httpx
    import httpx_sse

    def frame(reads: List[bytes]) -> Any:
        # The documented path: EventSource over a streaming httpx.Response (it includes
        # httpx's incremental UTF-8 decoding of each read, as in real use).
        response = httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=iter(reads)
        )
        return httpx_sse.EventSource(response).iter_sse()

    return _plain_runners(dialect, frame, lambda e: (e.event, e.data))


def _sseclient(dialect: str) -> Dict[str, Runner]:
    import sseclient

    def frame(reads: List[bytes]) -> Any:
        return sseclient.SSEClient(iter(reads)).events()

    return _plain_runners(dialect, frame, lambda e: (e.event, e.data))


def _openai_sdk(dialect: str) -> Dict[str, Runner]:
    from openai._streaming import SSEDecoder

    def frame(reads: List[bytes]) -> Any:
        return SSEDecoder().iter_bytes(iter(reads))

    runners = {"framing": _plain_runners(dialect, frame, _framing_key)["framing"]}
    if dialect == "messages":
        return runners  # the openai SDK has no Anthropic models
    from openai._models import construct_type

    if dialect == "chat":
        from openai.lib.streaming.chat import ChatCompletionStreamState
        from openai.types.chat import ChatCompletionChunk as model
    else:
        from openai import omit
        from openai.lib.streaming.responses._responses import ResponseStreamState
        from openai.types.responses import ResponseStreamEvent as model

    def events(reads: List[bytes]) -> Any:
        # What openai.Stream yields: json.loads of each data, built into the typed model.
        loads = json.loads
        for sse in SSEDecoder().iter_bytes(iter(reads)):
            if sse.data.startswith("[DONE]"):
                break
            yield construct_type(type_=model, value=loads(sse.data))

    def feed(reads: List[bytes]) -> List[Any]:
        return list(events(reads))

    if dialect == "chat":

        def accumulate(reads: List[bytes]) -> Any:
            state: Any = ChatCompletionStreamState()
            for chunk in events(reads):
                state.handle_chunk(chunk)
            return state.get_final_completion()

    else:

        def accumulate(reads: List[bytes]) -> Any:
            state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
            for event in events(reads):
                state.handle_event(event)
            return state._completed_response  # what ResponseStream.get_final_response() returns

    runners["feed"] = Runner(feed, lambda out: _delta_texts(dialect, out), "Stream events (typed models)")
    runners["feed+accumulate"] = Runner(accumulate, lambda out: _final_text(dialect, out), "Stream + ChatCompletionStreamState / ResponseStreamState")
    return runners


def anthropic_accumulator() -> Callable[[Any, Any], Any]:
    """The anthropic SDK's own message accumulator for one stream, as ``step(event, snapshot)
    -> snapshot``. Recent SDKs take the tool-input JSON buffers as an argument
    (``json_bufs``); older ones, such as 0.125 (the newest for Python 3.9), keep them inside."""
    from anthropic.lib.streaming._messages import accumulate_event

    if "json_bufs" not in inspect.signature(accumulate_event).parameters:
        return lambda event, snapshot: accumulate_event(event=event, current_snapshot=snapshot)
    json_bufs: Dict[int, bytes] = {}
    return lambda event, snapshot: accumulate_event(
        event=event, current_snapshot=snapshot, json_bufs=json_bufs
    )


def _anthropic_sdk(dialect: str) -> Dict[str, Runner]:
    from anthropic._streaming import SSEDecoder

    def frame(reads: List[bytes]) -> Any:
        return SSEDecoder().iter_bytes(iter(reads))

    runners = {"framing": _plain_runners(dialect, frame, _framing_key)["framing"]}
    if dialect != "messages":
        return runners
    from anthropic._models import construct_type
    from anthropic.types import RawMessageStreamEvent

    def events(reads: List[bytes]) -> Any:
        # What anthropic.Stream yields: named events but pings, each built into its model.
        loads = json.loads
        for sse in SSEDecoder().iter_bytes(iter(reads)):
            if sse.event == "ping" or sse.event is None or not sse.data:
                continue
            yield construct_type(type_=RawMessageStreamEvent, value=loads(sse.data))

    def feed(reads: List[bytes]) -> List[Any]:
        return list(events(reads))

    def accumulate(reads: List[bytes]) -> Any:
        snapshot = None
        step = anthropic_accumulator()
        for event in events(reads):
            snapshot = step(event, snapshot)
        return snapshot

    runners["feed"] = Runner(feed, lambda out: _delta_texts(dialect, out), "Stream events (typed models)")
    runners["feed+accumulate"] = Runner(accumulate, lambda out: _final_text(dialect, out), "Stream + accumulate_event")
    return runners


_PEER_FACTORIES: Dict[str, Callable[[str], Dict[str, Runner]]] = {
    "pure-python": _pure_python,
    "openai-sdk": _openai_sdk,
    "anthropic-sdk": _anthropic_sdk,
    "httpx-sse": _httpx_sse,
    "sseclient-py": _sseclient,
}
_PEER_MODULES = {
    "pure-python": None,
    "openai-sdk": "openai",
    "anthropic-sdk": "anthropic",
    "httpx-sse": "httpx_sse",
    "sseclient-py": "sseclient",
}


# --- running --------------------------------------------------------------------------------


class Progress:
    """Progress on stderr: a bar redrawn with carriage returns on a terminal, else one plain
    line per case (safe in logs and CI)."""

    def __init__(self, total: int, stream: Any = None, enabled: bool = True) -> None:
        self.total = max(1, total)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self._width = 0

    def note(self, text: str) -> None:
        if not self.enabled:
            return
        if self.tty:
            self._show(text)
        else:
            self.stream.write(f"ssewire bench: {text}\n")
            self.stream.flush()

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self.tty:
            self._draw(label)
        else:
            self.stream.write(f"ssewire bench: [{self.done}/{self.total}] {label}\n")
            self.stream.flush()

    def _draw(self, label: str) -> None:
        filled = self.done * 24 // self.total
        self._show(f"[{'#' * filled}{'.' * (24 - filled)}] {self.done}/{self.total} {label}")

    def _show(self, line: str) -> None:
        pad = max(0, self._width - len(line))
        self._width = len(line)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()


def _time(fn: Callable[[List[bytes]], Any], reads: List[bytes], budget: float, min_repeats: int) -> Tuple[float, int]:
    """Best time of repeated runs: at least ``min_repeats``, then until ``budget`` is spent."""
    gc.collect()
    best = float("inf")
    spent = 0.0
    n = 0
    clock = time.perf_counter
    while n < min_repeats or (spent < budget and n < MAX_REPEATS):
        t0 = clock()
        fn(reads)
        dt = clock() - t0
        if dt < best:
            best = dt
        spent += dt
        n += 1
    return best, n


def _load_peers(names: Sequence[str], skipped: List[Dict[str, str]]) -> List[str]:
    """The names among ``names`` whose modules import; the others go to ``skipped``."""
    import importlib

    ok = []
    for name in names:
        module = _PEER_MODULES[name]
        if module is not None:
            try:
                importlib.import_module(module)
            except ImportError as e:
                skipped.append({"parser": name, "reason": f"not installed ({e.name or module})"})
                continue
            except Exception as e:  # a broken install: note it, go on with the others
                skipped.append({"parser": name, "reason": f"import failed: {type(e).__name__}: {e}"})
                continue
        ok.append(name)
    return ok


def run(
    dialects: Sequence[str] = DIALECTS,
    chunks: int = DEFAULT_CHUNKS,
    read_size: int = 4096,
    peers: Sequence[str] = PEERS,
    budget: float = DEFAULT_BUDGET,
    min_repeats: int = MIN_REPEATS,
    progress: Optional[Progress] = None,
) -> Dict[str, Any]:
    """Run the benchmark; returns the figures (the ``--json`` document)."""
    skipped: List[Dict[str, str]] = []
    if progress is not None:
        progress.note("loading peers: " + ", ".join(peers))
    t0 = time.perf_counter()
    available = _load_peers(peers, skipped)
    load_seconds = time.perf_counter() - t0

    # Build every runner first, so the progress total is known.
    plan: List[Tuple[str, str, str, Runner]] = []
    inputs: Dict[str, Tuple[bytes, List[bytes], int]] = {}
    for dialect in dialects:
        body = make_body(dialect, chunks)
        reads = _streams.chunked(body, read_size)
        parser = ssewire.SSEParser()
        n_events = len(parser.feed(body)) + len(parser.finish())
        inputs[dialect] = (body, reads, n_events)
        by_parser = {"ssewire": _ssewire_runners(dialect)}
        for name in available:
            try:
                by_parser[name] = _PEER_FACTORIES[name](dialect)
            except Exception as e:
                skipped.append({"parser": name, "dialect": dialect,
                                "reason": f"setup failed: {type(e).__name__}: {e}"})
        for task in TASKS:
            for name, runners in by_parser.items():
                if task in runners:
                    plan.append((dialect, task, name, runners[task]))
    if progress is not None:
        progress.total = max(1, len(plan))
    # The SDKs leave hundreds of thousands of objects (pydantic models) behind: one full
    # collection took 0.2 s here. Freezing them out of the collector's view keeps each
    # case's gc.collect() cheap and keeps their scanning out of every parser's timings.
    gc.collect()
    gc.freeze()
    try:
        results = _run_plan(plan, inputs, chunks, budget, min_repeats, progress, skipped)
    finally:
        gc.unfreeze()
    if progress is not None:
        progress.close()
    return {
        "ssewire": ssewire.__version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "config": {
            "dialects": list(dialects),
            "chunks": chunks,
            "read_size": read_size,
            "budget_s": budget,
            "min_repeats": min_repeats,
            "peers": list(peers),
        },
        "peer_import_s": load_seconds,
        "results": results,
        "skipped": skipped,
    }


def _run_plan(
    plan: List[Tuple[str, str, str, Runner]],
    inputs: Dict[str, Tuple[bytes, List[bytes], int]],
    chunks: int,
    budget: float,
    min_repeats: int,
    progress: Optional[Progress],
    skipped: List[Dict[str, str]],
) -> List[Dict[str, Any]]:
    """Check, then time, every case of the plan, in order (ssewire first in each task)."""
    results: List[Dict[str, Any]] = []
    base: Dict[Tuple[str, str], float] = {}
    reference: Dict[Tuple[str, str], Any] = {}
    for dialect, task, name, runner in plan:
        body, reads, n_events = inputs[dialect]
        label = f"{dialect} {task} {name}"
        if progress is not None:
            progress.step(label)
        key = (dialect, task)
        try:
            value = runner.check(runner.run(reads))
        except Exception as e:
            skipped.append({"parser": name, "dialect": dialect, "task": task,
                            "reason": f"failed: {type(e).__name__}: {e}"})
            continue
        if name == "ssewire":
            want = expected_text(dialect, chunks) if task != "framing" else None
            if want is not None and value != want:  # a bug in ssewire: say so, time nothing
                skipped.append({"parser": name, "dialect": dialect, "task": task,
                                "reason": "assembled the wrong text (a bug: please report it)"})
                continue
            reference[key] = value
        elif key not in reference:
            skipped.append({"parser": name, "dialect": dialect, "task": task,
                            "reason": "no ssewire result to compare with"})
            continue
        elif value != reference[key]:
            skipped.append({"parser": name, "dialect": dialect, "task": task,
                            "reason": "gave a different result than ssewire"})
            continue
        best, repeats = _time(runner.run, reads, budget, min_repeats)
        if name == "ssewire":
            base[key] = best
        ratio = best / base[key] if base.get(key) else None
        results.append({
            "dialect": dialect,
            "task": task,
            "parser": name,
            "seconds": best,
            "repeats": repeats,
            "events": n_events,
            "bytes": len(body),
            "events_per_s": n_events / best if best > 0 else None,
            "mb_per_s": len(body) / best / 1e6 if best > 0 else None,
            "ratio": ratio,
            "runs": runner.runs,
        })
    return results


def format_table(figures: Dict[str, Any]) -> str:
    """The results as a fixed-width text table, with the notes under it."""
    cfg = figures["config"]
    lines = [
        f"ssewire {figures['ssewire']} on {figures['python']}, {figures['platform']}, "
        f"{figures['cpu_count']} CPUs",
        f"streams of {cfg['chunks']} chunks, fed in {cfg['read_size']}-byte reads; "
        "best of repeated runs",
        "",
    ]
    header = f"{'task':<28}{'parser':<15}{'events/s':>13}{'MB/s':>10}{'ratio':>9}  runs"
    lines += [header, "-" * len(header)]
    previous = None
    for r in figures["results"]:
        task = f"{r['dialect']} {r['task']}"
        if previous is not None and task != previous:
            lines.append("")
        previous = task
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.1f}x"
        rate = "-" if r["events_per_s"] is None else f"{r['events_per_s']:,.0f}"
        mbs = "-" if r["mb_per_s"] is None else f"{r['mb_per_s']:.1f}"
        lines.append(f"{task:<28}{r['parser']:<15}{rate:>13}{mbs:>10}{ratio:>9}  {r.get('runs', '')}")
    lines.append("")
    lines.append("ratio = peer time / ssewire time on the same task: ssewire is that many times faster")
    if figures.get("peer_import_s") is not None:
        lines.append(f"(importing the peers took {figures['peer_import_s']:.1f} s, not timed)")
    for s in figures["skipped"]:
        where = " ".join(s[k] for k in ("dialect", "task") if s.get(k))
        lines.append(f"skipped: {s['parser']}{' (' + where + ')' if where else ''}: {s['reason']}")
    return "\n".join(lines)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def _peer_list(text: str) -> List[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in names if p not in PEERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown peer {', '.join(unknown) or text!r}: choose from {', '.join(PEERS)}"
        )
    return names


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ssewire bench",
        description=(
            "Time ssewire against every pure-Python SSE parser that is installed, on generated "
            "LLM streams fed in socket-sized reads: framing (bytes -> events), feed (-> decoded "
            "events) and feed+accumulate (-> the final object). Each peer's output is checked "
            "against ssewire's before it is timed."
        ),
        epilog=(
            "ratio = peer time / ssewire time on the same task. Peers: "
            + ", ".join(PEERS)
            + " (the pure-Python one ships with ssewire; the others are used when installed)."
        ),
    )
    parser.add_argument("--quick", action="store_true",
                        help=f"a run of a few seconds ({QUICK_CHUNKS}-chunk streams, short timing)")
    parser.add_argument("--json", metavar="FILE", dest="json_file",
                        help="also save the figures (and the machine's description) as JSON")
    parser.add_argument("--dialect", choices=DIALECTS + ("all",), default="all",
                        help="which dialect's stream to use (default: all)")
    parser.add_argument("--chunks", type=_positive_int, metavar="N",
                        help=f"tokens per stream (default: {DEFAULT_CHUNKS}; --quick: {QUICK_CHUNKS})")
    parser.add_argument("--read-size", type=_positive_int, default=4096, metavar="BYTES",
                        help="bytes per read fed to the parsers (default: 4096)")
    parser.add_argument("--peers", type=_peer_list, metavar="LIST", default=list(PEERS),
                        help="comma-separated peers to compare (default: all installed)")
    # Undocumented knobs for tests and experiments.
    parser.add_argument("--budget", type=_budget, help=argparse.SUPPRESS)
    parser.add_argument("--min-repeats", type=_positive_int, help=argparse.SUPPRESS)
    parser.add_argument("--no-progress", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``ssewire bench``; returns the exit status (0 done, 2 bad arguments or unwritable
    ``--json`` file)."""
    parser = make_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else sys.argv[2:])
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    dialects = DIALECTS if args.dialect == "all" else (args.dialect,)
    chunks = args.chunks or (QUICK_CHUNKS if args.quick else DEFAULT_CHUNKS)
    budget = args.budget if args.budget is not None else (QUICK_BUDGET if args.quick else DEFAULT_BUDGET)
    min_repeats = args.min_repeats or (QUICK_MIN_REPEATS if args.quick else MIN_REPEATS)
    out_file = None
    if args.json_file:
        try:  # opened first, so that a bad path fails before a long run
            out_file = open(args.json_file, "w", encoding="utf-8")
        except OSError as e:
            sys.stderr.write(f"ssewire bench: cannot write {args.json_file}: {e.strerror or e}\n")
            return 2
    progress = Progress(0, enabled=not args.no_progress)
    try:
        figures = run(dialects, chunks, args.read_size, args.peers, budget, min_repeats, progress)
    except BaseException:
        if out_file is not None:
            out_file.close()
        raise
    figures["config"]["quick"] = bool(args.quick)
    figures["command"] = "ssewire bench" + "".join(" " + a for a in (argv if argv is not None else sys.argv[2:]))
    sys.stdout.write(format_table(figures) + "\n")
    sys.stdout.flush()
    if out_file is not None:
        with out_file:
            json.dump(figures, out_file, indent=2)
            out_file.write("\n")
        sys.stderr.write(f"ssewire bench: figures saved to {args.json_file}\n")
    return 0
