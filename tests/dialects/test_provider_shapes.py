"""Every provider shape of the benchmark corpora (benches/_providers.py: model-like text with
escapes, each provider's own vendor keys) reads the same fed whole, one byte at a time and at
random cuts, with items and with consume(); the fast path's fold equals the fold of the items
decoded one fresh stream per frame (no template at all); and every shape reaches the fast path
once the stream has shown it."""

from __future__ import annotations

import json
import sys
from typing import Any, Optional

import pytest
import ssewire
from support import paths
from support.items import _seen
from support.splitting import split_ways

BENCHES = paths.BENCHES
if not (BENCHES / "_providers.py").is_file():
    pytest.skip("benches/ not in this tree", allow_module_level=True)
sys.path.insert(0, str(BENCHES))
import _providers  # noqa: E402

CLASSES = {
    "chat": (ssewire.ChatCompletionStream, ssewire.ChatCompletionAccumulator),
    "messages": (ssewire.MessagesStream, ssewire.MessageAccumulator),
    "responses": (ssewire.ResponsesStream, ssewire.ResponseAccumulator),
    "gemini": (ssewire.GeminiStream, None),
    "ollama": (ssewire.OllamaStream, None),
    "cohere": (ssewire.CohereStream, None),
}


def _frames(dialect: str, body: bytes) -> list:
    """The records of a body: its SSE events, or an NDJSON dialect's lines (as unnamed events)."""
    if dialect in _providers.NDJSON:
        return [ssewire.Event(data=line.decode()) for line in body.splitlines()]
    return ssewire.SSEParser().feed(body)


def _frame(dialect: str, event: Any) -> bytes:
    """One record as its body spells it."""
    if dialect in _providers.NDJSON:
        return event.data.encode() + b"\n"
    return ((f"event: {event.event}\n" if event.event != "message" else "") + f"data: {event.data}\n\n").encode()


@pytest.mark.parametrize("name", sorted(_providers.SHAPES))
def test_a_provider_shape_reads_the_same_every_way(name: str) -> None:
    dialect, _ = _providers.SHAPES[name]
    cls, accumulator = CLASSES[dialect]
    body = _providers.corpus(name, paragraphs=3)
    whole = _seen(cls, [body], consume=False)
    assert whole[2] is None and whole[4], name
    for way in split_ways(body, random_splits=1):
        for consume in (False, True):
            got = _seen(cls, way.pieces, consume)
            assert got[1:] == whole[1:], (name, way.name, consume)
            if not consume:
                assert got[0] == whole[0], (name, way.name)
    if accumulator is not None:
        fresh = accumulator()
        for event in ssewire.SSEParser().feed(body):
            frame = (f"event: {event.event}\n" if event.event != "message" else "") + f"data: {event.data}\n\n"
            fresh.add_all(cls().feed(frame.encode()))
        # The stream writes its result straight to Python objects; the accumulator converts
        # the fold's tree: the same object, keys in the same order.
        assert json.dumps(fresh.result()) == json.dumps(whole[1]), name


def _delta_key(dialect: str, data: str) -> Optional[tuple[Any, ...]]:
    """What makes a delta frame like the delta frame before it (the same text field, block,
    item and kind), or None for a frame that is not a text delta."""
    try:
        o = json.loads(data)
    except ValueError:
        return None
    if not isinstance(o, dict):
        return None
    if dialect == "chat":
        choices = o.get("choices") or []
        if len(choices) != 1 or choices[0].get("finish_reason"):
            return None
        delta = choices[0].get("delta") or {}
        for field in ("content", "reasoning", "reasoning_content", "refusal"):
            if isinstance(delta.get(field), str) and delta[field]:
                return (field, "role" in delta, sorted(o), sorted(choices[0]), sorted(delta))
        calls = delta.get("tool_calls") or []
        if len(calls) == 1 and isinstance((calls[0].get("function") or {}).get("arguments"), str):
            return ("arguments", calls[0].get("index"), sorted(calls[0]))
        return None
    if dialect == "messages":
        delta = o.get("delta") or {}
        if o.get("type") == "content_block_delta" and delta.get("type") in ("text_delta", "thinking_delta", "input_json_delta"):
            return (delta["type"], o.get("index"))
        return None
    if dialect == "cohere":
        kind = o.get("type")
        if kind in ("content-delta", "tool-plan-delta", "tool-call-delta"):
            return (kind, o.get("index"))
        return None
    if dialect == "ollama":
        m = o.get("message") or {}
        if o.get("done") is False and not m.get("tool_calls"):
            return ("thinking" if m.get("thinking") else "content" if m else "response",)
        return None
    if dialect == "responses":
        kind = o.get("type", "")
        if kind.endswith(".delta") and isinstance(o.get("delta"), str):
            return (kind, o.get("output_index"), o.get("content_index"), o.get("summary_index"), o.get("item_id"))
        return None
    candidates = o.get("candidates") or []
    if len(candidates) == 1 and not candidates[0].get("finishReason"):
        parts = (candidates[0].get("content") or {}).get("parts") or []
        if len(parts) == 1 and isinstance(parts[0].get("text"), str) and set(parts[0]) <= {"text", "thought"}:
            return ("text", parts[0].get("thought", False))
    return None


#: The shapes of many deltas (a Gemini answer of seven or two chunks has no run of deltas alike).
DELTA_SHAPES = sorted(name for name in _providers.SHAPES if "seven chunks" not in name and "two chunks" not in name)


@pytest.mark.parametrize("name", DELTA_SHAPES)
def test_every_provider_shape_reaches_the_fast_path(name: str) -> None:
    """Once a stream has shown a delta's shape, the deltas like it are read by the template
    (escaped text, vendor keys whose values change, `reasoning_details`, a shell call's
    `command_index`), fed whole or one event per read: at most one in ten is decoded in full."""
    dialect, _ = _providers.SHAPES[name]
    cls = CLASSES[dialect][0]
    body = _providers.corpus(name, paragraphs=3)
    events = _frames(dialect, body)
    like_the_last = 0
    last = None
    for event in events:
        key = _delta_key(dialect, event.data)
        if key is not None:
            like_the_last += key == last
            last = key
    assert like_the_last >= 20, name
    whole = cls()
    whole.consume(body)
    one_by_one = cls()
    for event in events:
        one_by_one.consume(_frame(dialect, event))
    for s in (whole, one_by_one):
        assert s._fast_frames >= like_the_last * 0.9, (name, s._fast_frames, like_the_last)
