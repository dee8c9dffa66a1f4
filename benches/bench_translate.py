"""Translation benchmarks (issue 16): ``ssewire.Translator`` against a straightforward
pure-Python translator (``_translate_peer.py``: ``PureSSEParser`` + ``orjson`` in, dict state,
``orjson`` out), and against ``consume()`` of the same upstream (the cost of only reading it),
for every ordered pair of chat, Messages, Responses and Gemini (twelve), on the bench corpora
(``_peers.DIALECTS``): the whole body in one read, 4 KiB reads and one read per event.

Correctness before timing: the pure-Python peer's output, read back by ssewire's target
stream, assembles the same final text as ssewire's translation.

Groups: ``translate <source>-><target> / <chunking>``; peers ``ssewire`` (the translation),
``consume`` (the upstream only consumed: the floor), ``pure-python``. Targets (issue 16):
``ssewire`` at most 2x ``consume``; ``pure-python`` at least 10x ``ssewire``. Run for real::

    pytest benches/bench_translate.py --benchmark-enable --benchmark-timer=time.thread_time \\
        --benchmark-group-by=group --benchmark-min-rounds=5
"""

from __future__ import annotations

from typing import Any, List

import _peers
import _translate_peer
import pytest
import ssewire
from support import _final_text, registry

DIALECTS = registry.NAMES
# Every ordered pair: Gemini a target too since issue 27.
PAIRS = registry.PAIRS
STREAMS = registry.STREAMS


def ssewire_translate(source: str, target: str, reads: List[bytes]) -> List[bytes]:
    t = ssewire.Translator(source, target)
    feed = t.feed
    out = [feed(r) for r in reads]
    out.append(t.finish())
    return out


def ssewire_consume(source: str, _target: str, reads: List[bytes]) -> Any:
    s = STREAMS[source]()
    consume = s.consume
    for r in reads:
        consume(r)
    s.finish()
    return s


RUNNERS = {"ssewire": ssewire_translate, "consume": ssewire_consume, "pure-python": _translate_peer.translate}


def text_of(target: str, outs: List[bytes]) -> str:
    s = STREAMS[target]()
    s.feed(b"".join(outs))
    s.finish()
    return _final_text(target, s.result())


CHUNKINGS = ["whole"] + list(_peers.CHUNKINGS)


@pytest.mark.parametrize("peer", list(RUNNERS))
@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{s}-{t}" for s, t in PAIRS])
def test_translate(benchmark: Any, corpora: Any, source: str, target: str, chunking: str, peer: str) -> None:
    corpus = _peers.corpus(source, corpora.quick)
    reads = [corpus.body] if chunking == "whole" else corpus.reads[chunking]
    run = RUNNERS[peer]
    if peer == "pure-python":
        want = text_of(target, ssewire_translate(source, target, reads))
        assert want and text_of(target, run(source, target, reads)) == want, "the peer disagrees"
    benchmark.group = f"translate {source}->{target} / {chunking}"
    benchmark.extra_info.update(corpus.info(chunking))
    benchmark(run, source, target, reads)
