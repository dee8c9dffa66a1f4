"""What the one-loop readers cost over the hand-written loops they replace.

Groups ``reading <corpus> / <chunking>`` (the shared corpora and chunkings of ``conftest``):

* ``ssewire``: ``for item in s.iter(reads)`` — the API (the 1.0 of the summary);
* ``feed-loop``: ``for read in reads: for item in s.feed(read)``, then ``finish()``.

Groups ``relaying <corpus> / <chunking>``:

* ``ssewire``: ``for chunk in s.tap(reads)`` — the relay loop of a proxy;
* ``consume-loop``: ``for read in reads: s.consume(read)``, then ``finish()``.

Each peer's ``result()`` / ``done`` is asserted equal before timing. Run for real::

    python -m pytest benches/bench_reading.py --benchmark-enable \\
        --benchmark-timer=time.thread_time --benchmark-min-rounds=5
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

import pytest
import ssewire

STREAMS = {
    "chat": ssewire.ChatCompletionStream,
    "messages": ssewire.MessagesStream,
    "responses": ssewire.ResponsesStream,
}
CHUNKINGS = ("4KiB", "per-event")


def iter_loop(cls: Any, reads: List[bytes]) -> Any:
    s = cls()
    for _ in s.iter(reads):
        pass
    return s


def feed_loop(cls: Any, reads: List[bytes]) -> Any:
    s = cls()
    for read in reads:
        for _ in s.feed(read):
            pass
    for _ in s.finish():
        pass
    return s


def tap_loop(cls: Any, reads: List[bytes]) -> Any:
    s = cls()
    for _ in s.tap(reads):
        pass
    return s


def consume_loop(cls: Any, reads: List[bytes]) -> Any:
    s = cls()
    for read in reads:
        s.consume(read)
    s.finish()
    return s


PEERS: Dict[str, Dict[str, Callable[[Any, List[bytes]], Any]]] = {
    "reading": {"ssewire": iter_loop, "feed-loop": feed_loop},
    "relaying": {"ssewire": tap_loop, "consume-loop": consume_loop},
}


def _cases() -> List[Any]:
    return [
        pytest.param(
            task,
            corpus,
            chunking,
            peer,
            id=f"{task}-{corpus}-{chunking}-{peer}",
            marks=pytest.mark.benchmark(group=f"{task} {corpus} / {chunking}"),
        )
        for task in PEERS
        for corpus in STREAMS
        for chunking in CHUNKINGS
        for peer in PEERS[task]
    ]


@pytest.mark.parametrize(("task", "corpus", "chunking", "peer"), _cases())
def test_reading(
    benchmark: Any, corpora: Any, task: str, corpus: str, chunking: str, peer: str
) -> None:
    cls = STREAMS[corpus]
    reads = corpora.reads(corpus, chunking)
    run = PEERS[task][peer]
    reference = feed_loop(cls, reads)
    got = run(cls, reads)
    assert (got.result(), got.done) == (reference.result(), reference.done)
    benchmark.extra_info.update(reads=len(reads), bytes=sum(map(len, reads)))
    benchmark(run, cls, reads)
