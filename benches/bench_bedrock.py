"""Bedrock benchmarks: ``ssewire.ConverseStream`` and ``EventStreamParser`` against the ways
Python reads a Bedrock ``ConverseStream`` body today (issue 37).

Corpus (deterministic): a Converse tool turn as Bedrock sends it: ``messageStart``, text deltas
of 1-4 tokens cut from a model-written document (``_providers.deltas``: quotes, newlines and
non-ASCII as models write them), a ``toolUse`` block whose JSON input arrives in pieces,
``messageStop``, ``metadata``; every payload padded under ``p`` as Bedrock pads it. 1,000 text
deltas (200 in quick mode). Read whole and one message per read (a live socket).

Tasks and peers, in the same run on the same reads:

* ``framing``: the messages (headers and payload) out of the bytes: ``ssewire``
  (``EventStreamParser.feed``) against ``botocore`` (``EventStreamBuffer``, pure Python, what
  boto3 and the SDKs that talk to Bedrock use).
* ``feed+accumulate``: the final ``converse()`` response: ``ssewire`` (``ConverseStream``
  ``feed`` + ``result()``), ``ssewire-consume`` (``consume`` + ``result()``), ``botocore+json``
  (``EventStreamBuffer`` + ``json.loads`` of each payload + a dict fold, what a hand-written
  gateway does) and ``boto3`` (botocore's ``EventStream`` with the bedrock-runtime model's
  parser, what ``converse_stream()["stream"]`` yields, + the same fold).

Correctness before timing: every peer's final text and tool input equal ``ConverseStream``'s.

    pytest benches/bench_bedrock.py --benchmark-enable --benchmark-group-by=group \\
        --benchmark-timer=time.thread_time
"""

from __future__ import annotations

import json
import random
from typing import Any, Callable, Dict, List, Tuple

import _providers
import pytest
import ssewire

from conftest import is_quick

eventstream = pytest.importorskip("botocore.eventstream")


def corpus(deltas: int) -> bytes:
    rng = random.Random("bedrock")
    pieces = _providers.deltas(_providers.model_text(rng, 60), rng)[:deltas]
    events: List[Tuple[str, Dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
    events += [("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}}) for p in pieces]
    events.append(("contentBlockStop", {"contentBlockIndex": 0}))
    events.append(
        (
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tooluse_x", "name": "search"}}},
        )
    )
    args = json.dumps({"query": " ".join(pieces[:12]), "limit": 5})
    events += [("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": args[i : i + 9]}}})
               for i in range(0, len(args), 9)]  # fmt: skip
    events += [("contentBlockStop", {"contentBlockIndex": 1}), ("messageStop", {"stopReason": "tool_use"}),
               ("metadata", {"usage": {"inputTokens": 812, "outputTokens": len(pieces), "totalTokens": 812 + len(pieces)},
                             "metrics": {"latencyMs": 2210}})]  # fmt: skip
    pad = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return b"".join(
        ssewire.encode_eventstream_message(
            {":event-type": kind, ":content-type": "application/json", ":message-type": "event"},
            json.dumps(dict(payload, p=pad[: rng.randint(1, len(pad))]), ensure_ascii=False).encode(),
        )
        for kind, payload in events
    )


def messages_of(body: bytes) -> List[bytes]:
    out, at = [], 0
    while at < len(body):
        n = int.from_bytes(body[at : at + 4], "big")
        out.append(body[at : at + n])
        at += n
    return out


# -- peers --------------------------------------------------------------------------------


def fold(events: List[Tuple[str, Dict[str, Any]]]) -> Tuple[str, str]:
    """The dict fold a gateway writes by hand: the text and the tool input, joined."""
    text: List[str] = []
    tool: List[str] = []
    for kind, p in events:
        if kind == "contentBlockDelta":
            d = p["delta"]
            if "text" in d:
                text.append(d["text"])
            elif "toolUse" in d:
                tool.append(d["toolUse"]["input"])
    return "".join(text), "".join(tool)


def botocore_json(reads: List[bytes]) -> Tuple[str, str]:
    buf = eventstream.EventStreamBuffer()
    events = []
    for r in reads:
        buf.add_data(r)
        for m in buf:
            events.append((m.headers[":event-type"], json.loads(m.payload)))
    return fold(events)


def _boto3_parts() -> Any:
    import botocore.session
    from botocore.parsers import EventStreamJSONParser

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("ConverseStream").output_shape.members["stream"]
    return shape, EventStreamJSONParser()


class _Raw:
    def __init__(self, reads: List[bytes]) -> None:
        self._reads = reads

    def stream(self) -> Any:
        return iter(self._reads)


def boto3_stream(reads: List[bytes], parts: Any) -> Tuple[str, str]:
    shape, parser = parts
    events = []
    for e in eventstream.EventStream(_Raw(reads), shape, parser, "ConverseStream"):
        ((kind, payload),) = e.items()
        events.append((kind, payload))
    return fold(events)


def ssewire_feed(reads: List[bytes]) -> Tuple[str, str]:
    s = ssewire.ConverseStream()
    for r in reads:
        s.feed(r)
    s.finish()
    return _answer(s.result())


def ssewire_consume(reads: List[bytes]) -> Tuple[str, str]:
    s = ssewire.ConverseStream()
    for r in reads:
        s.consume(r)
    s.finish()
    return _answer(s.result())


def _answer(result: Dict[str, Any]) -> Tuple[str, str]:
    blocks = result["output"]["message"]["content"]
    text = "".join(b.get("text", "") for b in blocks)
    tool = next(json.dumps(b["toolUse"]["input"]) for b in blocks if "toolUse" in b)
    return text, tool


def framing_ssewire(reads: List[bytes]) -> int:
    p = ssewire.EventStreamParser()
    return sum(len(p.feed(r)) for r in reads)


def framing_botocore(reads: List[bytes]) -> int:
    buf = eventstream.EventStreamBuffer()
    n = 0
    for r in reads:
        buf.add_data(r)
        n += sum(1 for _ in buf)
    return n


# -- cases --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def body(request: pytest.FixtureRequest) -> bytes:
    return corpus(200 if is_quick(request.config) else 1000)


def _reads(body: bytes, chunking: str) -> List[bytes]:
    return [body] if chunking == "whole" else messages_of(body)


CHUNKINGS = ["whole", "one message per read"]


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("peer", ["ssewire", "botocore"])
def test_framing(benchmark: Any, body: bytes, chunking: str, peer: str) -> None:
    reads = _reads(body, chunking)
    run: Callable[[List[bytes]], int] = framing_ssewire if peer == "ssewire" else framing_botocore
    n = len(messages_of(body))
    assert run(reads) == n
    benchmark.group = f"bedrock framing / {chunking}"
    benchmark.extra_info.update(bytes=len(body), events=n)
    benchmark(run, reads)


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("peer", ["ssewire", "ssewire-consume", "botocore+json", "boto3"])
def test_feed_accumulate(benchmark: Any, body: bytes, chunking: str, peer: str) -> None:
    reads = _reads(body, chunking)
    if peer == "boto3":
        parts = _boto3_parts()
        run: Callable[[List[bytes]], Tuple[str, str]] = lambda r: boto3_stream(r, parts)  # noqa: E731
    else:
        run = {"ssewire": ssewire_feed, "ssewire-consume": ssewire_consume, "botocore+json": botocore_json}[
            peer
        ]
    text, tool = ssewire_consume(reads)
    got_text, got_tool = run(reads)
    assert got_text == text and json.loads(got_tool) == json.loads(tool)
    benchmark.group = f"bedrock converse feed+accumulate / {chunking}"
    benchmark.extra_info.update(bytes=len(body), events=len(messages_of(body)))
    benchmark(run, reads)
