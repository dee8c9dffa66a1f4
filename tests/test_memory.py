"""Memory stays flat: parsing the same streams over and over must not grow the process (no
leaked Python references from the Rust side, no caches that grow without bound). Measured as
resident memory from /proc, since tracemalloc does not see the Rust allocator."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

import ssewire
from ssewire import _streams

pytestmark = pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc")


def _rss_bytes() -> int:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    import resource

    return pages * resource.getpagesize()


def _run_all(rounds: int, bodies: dict[str, bytes]) -> None:
    for _ in range(rounds):
        for name, body in bodies.items():
            stream = {
                "chat": ssewire.ChatCompletionStream,
                "messages": ssewire.MessagesStream,
                "responses": ssewire.ResponsesStream,
            }[name]()
            items = []
            for piece in _streams.chunked(body, 4096):
                items += stream.feed(piece)
            items += stream.finish()
            ssewire.accumulate(body, dialect=name)
            for item in items:  # touch the lazily decoded parts too
                for attr in ("usage", "raw", "extra", "message", "response"):
                    getattr(item, attr, None)
        parser = ssewire.SSEParser(max_event_size=64)
        try:
            parser.feed(b"data: " + b"x" * 100 + b"\n\ndata: ok\n\n")
        except ssewire.EventTooLargeError as exc:
            assert exc.events


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="CPython memory model")
def test_repeated_parsing_does_not_grow_memory() -> None:
    bodies = {
        "chat": _streams.chat_stream(n_chunks=300, seed=3, tool_calls=True),
        "messages": _streams.messages_stream(n_chunks=300, seed=3),
        "responses": _streams.responses_stream(n_chunks=300, seed=3),
    }
    _run_all(20, bodies)  # warm up: allocator pools, interned names, lazy type objects
    gc.collect()
    before = _rss_bytes()
    _run_all(150, bodies)
    gc.collect()
    grown = _rss_bytes() - before
    # 150 rounds parse ~60 MB of stream text; a leak of even one small object per event
    # would grow far past this bound.
    assert grown < 8 * 1024 * 1024, f"resident memory grew by {grown / 1e6:.1f} MB"
