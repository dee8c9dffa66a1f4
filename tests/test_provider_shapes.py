"""Every provider shape of the benchmark corpora (benches/_providers.py: model-like text with
escapes, each provider's own vendor keys) reads the same fed whole, one byte at a time and at
random cuts, with items and with consume(); the fast path's fold equals the fold of the items
decoded one fresh stream per frame (no template at all)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ssewire
from splitting import split_ways
from test_template import _seen

BENCHES = Path(__file__).resolve().parent.parent / "benches"
if not (BENCHES / "_providers.py").is_file():
    pytest.skip("benches/ not in this tree", allow_module_level=True)
sys.path.insert(0, str(BENCHES))
import _providers  # noqa: E402

CLASSES = {
    "chat": (ssewire.ChatCompletionStream, ssewire.ChatCompletionAccumulator),
    "messages": (ssewire.MessagesStream, ssewire.MessageAccumulator),
    "responses": (ssewire.ResponsesStream, ssewire.ResponseAccumulator),
    "gemini": (ssewire.GeminiStream, None),
}


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
        assert fresh.result() == whole[1], name
