"""Memory stays flat: parsing the same streams over and over must not grow the process (no
leaked Python references from the Rust side, no caches that grow without bound). Measured as
resident memory from /proc, since tracemalloc does not see the Rust allocator."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import pytest
import ssewire
from support import paths, registry
from support import streams as _streams

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
                "gemini": ssewire.GeminiStream,
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
        "gemini": _streams.gemini_stream(n_chunks=300, seed=3, thinking=True, function_call=True),
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


_MEASURE = """
import gc, json, resource, sys
from pathlib import Path
import ssewire
from support import registry
from support import streams as _streams

def rss():
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize()

dialect = sys.argv[1]
make = {"chat": ssewire.ChatCompletionStream, "messages": ssewire.MessagesStream,
        "responses": ssewire.ResponsesStream, "gemini": ssewire.GeminiStream}[dialect]
body = getattr(_streams, dialect + "_stream")(n_chunks=1000, seed=5)
gc.collect()
before = rss()
idle = [make() for _ in range(5000)]
gc.collect()
per_idle = (rss() - before) / len(idle)
before = rss()
folded = []
for _ in range(2000):
    s = make()
    s.consume(body)
    folded.append(s)
gc.collect()
per_folded = (rss() - before) / len(folded)
text = len(json.dumps(folded[0].result()))
print(json.dumps([per_idle, per_folded, text, len(body)]))
"""


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="CPython memory model")
@pytest.mark.parametrize("dialect", registry.NAMES)
def test_memory_per_stream_is_the_folded_text_once(dialect: str) -> None:
    """Issue 8: a gateway holds thousands of streams. An idle stream costs under a kilobyte or
    so; one that has folded a 1,000-token reply holds that reply about once (the fold keeps the
    text, not the frames), within the allocator's slack. Measured in a fresh interpreter (RSS
    of 5,000 idle and 2,000 folded streams held at once), so memory freed by earlier tests
    cannot hide anything. Prints the figures (``pytest -s``)."""
    import os
    import subprocess

    # The child imports the suite's `support` package (tests/), as the suite does.
    here = str(paths.TESTS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", _MEASURE, dialect], capture_output=True,
                         text=True, timeout=120, check=True, env=env).stdout  # fmt: skip
    idle, folded, text, wire = json.loads(out)
    print(f"\n{dialect}: idle stream {idle / 1024:.1f} KiB; after a 1,000-token reply "
          f"({wire / 1024:.0f} KiB on the wire, result {text / 1024:.1f} KiB as JSON): "
          f"{folded / 1024:.1f} KiB")  # fmt: skip
    assert idle < 4 * 1024
    # The fold holds the text about once: a small constant times the result's JSON size
    # (string growth slack, allocator rounding, the frame template), far below the wire size.
    assert folded < 4 * text + 8 * 1024, (folded, text)
    assert folded < wire / 8
