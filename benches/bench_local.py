"""Ollama and Cohere benchmarks (issue 50): ``OllamaStream`` and ``CohereStream`` against the
ways Python reads those streams today, on the same reads in the same run.

Corpora (deterministic, ``_shapes_local``): an Ollama ``/api/chat`` answer of a thinking model
(thinking lines, content lines of 1-4 tokens with a new ``created_at`` each, a tool call line,
the terminal line) and a Cohere v2 tool turn (thinking deltas, plan deltas, a call whose
arguments stream in pieces, ``message-end``, ``[DONE]``); ~1,000 records (~200 in quick mode).
Read whole and one record per read (a live socket).

Peers, each producing the same final text and tool call (checked before timing):

* Ollama: ``ssewire`` (``consume`` + ``result()``), ``ssewire-feed`` (items + ``result()``),
  ``lines`` (Python's line framer alone handing each line over: the floor, as ``SSEParser``
  is for SSE), ``lines+json`` (the framer + ``json.loads`` + a dict fold: the pure-Python
  reader) and ``ollama-python`` (its own path: ``json.loads`` of each line into a
  ``ChatResponse``, + the same fold).
* Cohere: ``ssewire``, ``ssewire-feed``, ``sseparser`` (``SSEParser`` framing alone),
  ``sseparser+json`` (+ ``json.loads`` + a dict fold) and ``cohere-sdk`` (the SDK's own
  ``SSEDecoder`` and ``parse_sse_obj`` into its event types, + the fold).

    pytest benches/bench_local.py --benchmark-enable --benchmark-group-by=group \\
        --benchmark-timer=time.thread_time
"""

from __future__ import annotations

import json
import random
from typing import Any, Callable, Dict, List, Tuple

import _providers
import pytest
import ssewire
from _shapes_local import _cohere, _ollama

from conftest import is_quick

Answer = Tuple[str, str]


def corpus(dialect: str, n: int) -> bytes:
    rng = random.Random(f"local:{dialect}")
    pieces = _providers.deltas(_providers.model_text(rng, 60), rng)[:n]
    return (_ollama(rng, pieces, "tools") if dialect == "ollama" else _cohere(rng, pieces, "tools")).encode()


# -- Ollama peers -------------------------------------------------------------------------


def _ollama_fold(parts: List[Dict[str, Any]]) -> Answer:
    text: List[str] = []
    call = ""
    for p in parts:
        m = p.get("message") or {}
        text.append(m.get("content") or "")
        for c in m.get("tool_calls") or []:
            call = json.dumps(c["function"]["arguments"], separators=(",", ":"))
    return "".join(text), call


def ollama_lines(reads: List[bytes]) -> int:
    buf, n = b"", 0
    for r in reads:
        buf += r
        *lines, buf = buf.split(b"\n")
        n += len(lines)
    return n


def ollama_lines_json(reads: List[bytes]) -> Answer:
    buf, parts = b"", []
    for r in reads:
        buf += r
        *lines, buf = buf.split(b"\n")
        parts += [json.loads(line) for line in lines if line]
    return _ollama_fold(parts)


def ollama_sdk(reads: List[bytes]) -> Answer:
    from ollama import ChatResponse

    buf, text, call = b"", [], ""
    for r in reads:
        buf += r
        *lines, buf = buf.split(b"\n")
        for line in lines:
            part = ChatResponse(**json.loads(line))
            text.append(part.message.content or "")
            for c in part.message.tool_calls or []:
                call = json.dumps(dict(c.function.arguments), separators=(",", ":"))
    return "".join(text), call


def _ollama_answer(r: Dict[str, Any]) -> Answer:
    calls = r["message"].get("tool_calls") or []
    return r["message"]["content"], json.dumps(calls[-1]["function"]["arguments"], separators=(",", ":"))


# -- Cohere peers -------------------------------------------------------------------------


def _cohere_fold(events: List[Dict[str, Any]]) -> Answer:
    text: List[str] = []
    args: List[str] = []
    for e in events:
        m = (e.get("delta") or {}).get("message") or {}
        if e["type"] == "tool-plan-delta":
            text.append(m.get("tool_plan") or "")
        elif e["type"] == "content-delta":
            text.append((m.get("content") or {}).get("text") or "")
        elif e["type"] == "tool-call-delta":
            args.append(m["tool_calls"]["function"]["arguments"])
    return "".join(text), "".join(args)


def cohere_sseparser(reads: List[bytes]) -> int:
    p = ssewire.SSEParser()
    return sum(len(p.feed(r)) for r in reads)


def cohere_sseparser_json(reads: List[bytes]) -> Answer:
    p = ssewire.SSEParser()
    events = [json.loads(e.data) for r in reads for e in p.feed(r) if e.data != "[DONE]"]
    return _cohere_fold(events)


def cohere_sdk(reads: List[bytes]) -> Answer:
    from cohere.core.http_sse._decoders import SSEDecoder
    from cohere.core.pydantic_utilities import parse_sse_obj
    from cohere.v2.types.v2chat_stream_response import V2ChatStreamResponse

    decoder, text, args, rest = SSEDecoder(), [], [], ""
    for r in reads:
        *lines, rest = (rest + r.decode()).split("\n")
        for line in lines:
            sse = decoder.decode(line)
            if sse is None or sse.data == "[DONE]":
                continue
            e = parse_sse_obj(sse, V2ChatStreamResponse)
            delta = getattr(e, "delta", None)
            m = getattr(delta, "message", None)
            if e.type == "tool-plan-delta":
                text.append(m.tool_plan or "")
            elif e.type == "content-delta":
                text.append(m.content.text or "")
            elif e.type == "tool-call-delta":
                args.append(m.tool_calls.function.arguments or "")
    return "".join(text), "".join(args)


def _cohere_answer(r: Dict[str, Any]) -> Answer:
    m = r["message"]
    text = (m.get("tool_plan") or "") + "".join(p.get("text", "") for p in m.get("content") or [])
    return text, m["tool_calls"][0]["function"]["arguments"]


# -- ssewire ------------------------------------------------------------------------------


def _ssewire(dialect: str, consume: bool) -> Callable[[List[bytes]], Answer]:
    cls = getattr(ssewire, {"ollama": "OllamaStream", "cohere": "CohereStream"}[dialect])
    answer = _ollama_answer if dialect == "ollama" else _cohere_answer

    def run(reads: List[bytes]) -> Answer:
        s = cls()
        for r in reads:
            if consume:
                s.consume(r)
            else:
                s.feed(r)
        s.finish()
        return answer(s.result())

    return run


PEERS: Dict[str, Dict[str, Callable[[List[bytes]], Any]]] = {
    "ollama": {"ssewire": _ssewire("ollama", True), "ssewire-feed": _ssewire("ollama", False),
               "lines": ollama_lines, "lines+json": ollama_lines_json, "ollama-python": ollama_sdk},
    "cohere": {"ssewire": _ssewire("cohere", True), "ssewire-feed": _ssewire("cohere", False),
               "sseparser": cohere_sseparser, "sseparser+json": cohere_sseparser_json, "cohere-sdk": cohere_sdk},
}  # fmt: skip
#: The peers that only frame (no answer to compare).
FRAMERS = {"lines", "sseparser"}


@pytest.fixture(scope="module")
def bodies(request: pytest.FixtureRequest) -> Dict[str, bytes]:
    n = 200 if is_quick(request.config) else 1000
    return {d: corpus(d, n) for d in PEERS}


def _reads(body: bytes, dialect: str, chunking: str) -> List[bytes]:
    if chunking == "whole":
        return [body]
    if dialect == "ollama":
        return body.splitlines(keepends=True)
    return [f + b"\n\n" for f in body.split(b"\n\n") if f]


@pytest.mark.parametrize("chunking", ["whole", "one record per read"])
@pytest.mark.parametrize(("dialect", "peer"), [(d, p) for d, peers in PEERS.items() for p in peers])
def test_read_and_fold(benchmark: Any, bodies: Dict[str, bytes], dialect: str, peer: str, chunking: str) -> None:
    if peer == "ollama-python":
        pytest.importorskip("ollama")
    if peer == "cohere-sdk":
        pytest.importorskip("cohere")
    body = bodies[dialect]
    reads = _reads(body, dialect, chunking)
    run = PEERS[dialect][peer]
    want = _ssewire(dialect, True)([body])
    got = run(reads)
    if peer not in FRAMERS:
        assert got == want, (peer, got[0][:80], want[0][:80])
    benchmark.group = f"{dialect} read + fold / {chunking}"
    benchmark.extra_info.update(bytes=len(body))
    benchmark(run, reads)
