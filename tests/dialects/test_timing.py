"""``s.timing``: when a stream's bytes and output arrived, read in the core once per
``feed()`` / ``consume()`` call. A loopback server paces a real stream (a first output after a
known delay, then one chunk per interval); the figures the stream reports match the pacing.
Nothing but 127.0.0.1 is contacted; every loop is bounded in count and time."""

from __future__ import annotations

import asyncio
import json
import time
from typing import List

import pytest
import ssewire

FIRST = 0.080  # the server's delay before the first output
EVERY = 0.030  # and between output chunks after it
CHUNKS = 8


def _chunk(delta: dict) -> bytes:
    doc = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}  # fmt: skip
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
    writer.write(_chunk({"role": "assistant", "content": ""}))  # no output yet
    await writer.drain()
    await asyncio.sleep(FIRST)
    for i in range(CHUNKS):
        if i:
            await asyncio.sleep(EVERY)
        writer.write(_chunk({"content": f"token{i} "}))
        await writer.drain()
    writer.write(b"data: [DONE]\n\n")
    await writer.drain()
    writer.close()


async def _read(stream: ssewire.ChatCompletionStream) -> List[float]:
    server = await asyncio.start_server(_serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reads: List[float] = []
    async with server:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 0\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 200")
        for _ in range(1000):
            data = await asyncio.wait_for(reader.read(65536), 5)
            if not data:
                break
            reads.append(time.monotonic())
            stream.consume(data)
        stream.finish()
        writer.close()
    return reads


def test_the_figures_follow_the_pacing() -> None:
    started = time.monotonic()
    s = ssewire.ChatCompletionStream(started=started)
    asyncio.run(asyncio.wait_for(_read(s), 20))
    t = s.timing
    assert s.done and t["output_chunks"] == CHUNKS
    assert t["started"] == started
    assert t["first_byte"] <= t["first_output"] <= t["last_output"] <= t["finished"]
    # The first output came FIRST after the first byte; then one chunk per EVERY. The lower
    # bounds are the pacing itself (a figure read at the wrong time falls under them); the
    # upper ones are loose, for a loaded machine or an emulated one (CI's arm64 under qemu).
    assert FIRST - 0.005 <= t["first_output"] - t["first_byte"] <= FIRST + 0.5
    assert EVERY - 0.005 <= t["time_per_output_chunk"] <= EVERY * 5
    assert t["time_to_first_output"] == pytest.approx(t["first_output"] - started)
    assert t["duration"] == pytest.approx(t["finished"] - started)


def test_before_any_byte_and_the_translator() -> None:
    s = ssewire.MessagesStream()
    t = s.timing
    assert t["first_byte"] is None and t["output_chunks"] == 0 and t["time_to_first_output"] is None
    assert t["started"] <= time.monotonic()
    tr = ssewire.Translator("chat", "messages")
    tr.feed(_chunk({"content": "hi"}))
    assert tr.timing is not None and tr.timing["output_chunks"] == 1
    assert ssewire.Translator("auto", "messages").timing is None
