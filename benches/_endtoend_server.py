"""The paced event-stream server of the end-to-end benchmark (``bench_endtoend.py``,
``endtoend_table.py``), run in its own process so that its CPU time is not counted with the
clients'.

Why not ``tests/support/loopback.py``: that server runs one thread per connection and caps the pauses of
one response at 0.25 s, so with 200 streams it writes as fast as it can and the client's reads
merge many writes; here every write is *due at a time*, so that a client that keeps up sees the
write pattern. It serves the same bodies to every connection (``bodies()``), cut by one of three
write patterns (``PATTERNS``):

* ``a``: random pieces of 1-200 bytes (uniform), cut anywhere (inside lines, UTF-8 characters);
* ``b``: one write per event (each ``\\n\\n``-terminated frame);
* ``c``: random pieces of 1-2000 bytes (uniform).

Pacing: with ``rate`` events per second (per stream), a body of ``E`` events is spread over
``E / rate`` seconds: a piece is written when the stream reaches its last byte (offset / length
of the body times that span), after a random phase of up to one event interval, so the 200
streams do not write in lockstep. ``rate == 0``: everything as fast as possible (smoke tests).
A write that is late (the server or the machine fell behind) goes out at once; ``stats`` counts
writes more than 5 ms late.

Ports, both on 127.0.0.1 only: ``http`` answers ``POST /<dialect>/<pattern>/...`` (any method,
any tail, so an SDK's ``base_url`` can point at ``/chat/a/v1``) with a ``200``
``text/event-stream`` response, ``Transfer-Encoding: chunked``, one HTTP chunk per write,
``Connection: close``; ``raw`` reads the same request and answers with the body bytes alone (no
status line, no headers, no chunk framing), then closes: the input of
``ssewire.StreamProtocol`` as it is today (a stream reader that does not parse HTTP).

Control: the parent talks to the process through its stdin/stdout (``Server`` below); the first
stdout line is ``{"http": port, "raw": port}``; a ``stats`` line on stdin is answered with one
JSON line and resets the counters; end of stdin (the parent exited) stops the server. Bounded:
the process exits after ``--max-seconds``; reading a request head is capped at 64 KiB and 30 s,
a request body at 1 MiB, and each response at its span plus ``--conn-timeout`` seconds.

    python benches/_endtoend_server.py --chunks 100 --rate 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any, Dict, List, Optional, Tuple

HOST = "127.0.0.1"
PATTERNS: Dict[str, str] = {
    "a": "random 1-200 B writes",
    "b": "one write per event",
    "c": "random 1-2000 B writes",
}
MAX_REQUEST_BODY = 1 << 20
HEAD_TIMEOUT = 30.0
LATE = 0.005

_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
    b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
)


def bodies(chunks: int) -> Dict[str, bytes]:
    """dialect -> the stream body every connection gets (``chunks`` token chunks): an OpenAI
    chat stream with two tool calls and a usage chunk, an Anthropic Messages stream with a
    thinking block, a text block and a tool_use block. The clients build the same bodies for
    their references."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the suite's support
    from support import streams

    return {
        "chat": streams.chat_stream(chunks, seed=7, tool_calls=True),
        "messages": streams.messages_stream(chunks, seed=2, tool_use=True, thinking=True),
    }


def pieces(body: bytes, pattern: str, seed: int) -> List[bytes]:
    """``body`` cut by ``pattern`` (see ``PATTERNS``); deterministic for ``seed``."""
    if pattern == "b":
        out = []
        start = 0
        end = body.find(b"\n\n")
        while end >= 0:
            out.append(body[start : end + 2])
            start = end + 2
            end = body.find(b"\n\n", start)
        if start < len(body):
            out.append(body[start:])
        return out
    top = {"a": 200, "c": 2000}[pattern]
    rng = random.Random(f"{pattern}:{seed}")
    out = []
    i = 0
    while i < len(body):  # bounded: every round takes at least one byte
        k = rng.randint(1, top)
        out.append(body[i : i + k])
        i += k
    return out


class _State:
    def __init__(self, bodies_: Dict[str, bytes], rate: float, conn_timeout: float) -> None:
        self.bodies = bodies_
        self.events = {name: body.count(b"\n\n") for name, body in bodies_.items()}
        self.rate = rate
        self.conn_timeout = conn_timeout
        self.connections = 0
        self.writes = 0
        self.late = 0
        self.errors = 0

    def stats(self) -> Dict[str, int]:
        out = {"connections": self.connections, "writes": self.writes, "late": self.late,
               "errors": self.errors}  # fmt: skip
        self.connections = self.writes = self.late = self.errors = 0
        return out


async def _read_request(reader: asyncio.StreamReader) -> str:
    """The request's path, after reading its head and body (Content-Length or chunked)."""
    head = await reader.readuntil(b"\r\n\r\n")  # limit: the reader's 64 KiB
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    path = parts[1] if len(parts) > 1 else ""
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        total = 0
        while True:  # bounded by MAX_REQUEST_BODY
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            total += size
            if total > MAX_REQUEST_BODY:
                raise ValueError("request body too large")
            await reader.readexactly(size + 2)
    else:
        length = int(headers.get("content-length", "0") or "0")
        if length > MAX_REQUEST_BODY:
            raise ValueError("request body too large")
        await reader.readexactly(length)
    return path


async def _respond(state: _State, writer: asyncio.StreamWriter, path: str, raw: bool) -> None:
    segments = path.split("?", 1)[0].split("/")
    dialect = segments[1] if len(segments) > 1 else ""
    pattern = segments[2] if len(segments) > 2 else ""
    body = state.bodies.get(dialect)
    if body is None or pattern not in PATTERNS:
        if not raw:
            writer.write(b"HTTP/1.1 404 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return
    state.connections += 1
    rng = random.Random(state.connections)
    cuts = pieces(body, pattern, state.connections)
    loop = asyncio.get_running_loop()
    span = state.events[dialect] / state.rate if state.rate > 0 else 0.0
    start = loop.time() + (rng.uniform(0, 1 / state.rate) if state.rate > 0 else 0.0)
    if not raw:
        writer.write(_HEAD)
    offset = 0
    for piece in cuts:
        offset += len(piece)
        if span:
            due = start + span * offset / len(body)
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            elif wait < -LATE:
                state.late += 1
        writer.write(piece if raw else b"%x\r\n%s\r\n" % (len(piece), piece))
        state.writes += 1
        await writer.drain()
    if not raw:
        writer.write(b"0\r\n\r\n")


async def _handle(
    state: _State, raw: bool, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        path = await asyncio.wait_for(_read_request(reader), HEAD_TIMEOUT)
        span = max(state.events.values()) / state.rate if state.rate > 0 else 0.0
        await asyncio.wait_for(_respond(state, writer, path, raw), span + state.conn_timeout)
        await writer.drain()
    except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
            asyncio.TimeoutError):  # fmt: skip
        state.errors += 1
    finally:
        writer.close()


async def _serve(args: argparse.Namespace) -> None:
    state = _State(bodies(args.chunks), args.rate, args.conn_timeout)
    http = await asyncio.start_server(
        lambda r, w: _handle(state, False, r, w), HOST, 0, backlog=1024
    )
    raw = await asyncio.start_server(lambda r, w: _handle(state, True, r, w), HOST, 0, backlog=1024)
    ports = {"http": http.sockets[0].getsockname()[1], "raw": raw.sockets[0].getsockname()[1]}
    print(json.dumps(ports), flush=True)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()

    def control() -> None:  # a thread: blocking reads of the parent's commands
        for line in sys.stdin:
            if line.strip() == "stats":
                loop.call_soon_threadsafe(lambda: print(json.dumps(state.stats()), flush=True))
        loop.call_soon_threadsafe(lambda: stop.done() or stop.set_result(None))

    threading.Thread(target=control, daemon=True).start()
    try:
        await asyncio.wait_for(stop, args.max_seconds)
    except asyncio.TimeoutError:
        pass
    http.close()
    raw.close()


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100, help="token chunks per stream")
    parser.add_argument("--rate", type=float, default=20.0, help="events/s per stream, 0: no pause")
    parser.add_argument("--conn-timeout", type=float, default=60.0)
    parser.add_argument("--max-seconds", type=float, default=3600.0)
    asyncio.run(_serve(parser.parse_args(argv)))


class Server:
    """The server process, started by the parent: ``Server(chunks=..., rate=...)``, then
    ``url(dialect, pattern)``, ``raw_address()``, ``stats()``, ``close()`` (or a ``with``
    block). Only 127.0.0.1 is bound."""

    def __init__(self, *, chunks: int, rate: float, max_seconds: float = 3600.0) -> None:
        self.chunks = chunks
        self.rate = rate
        cmd = [sys.executable, str(Path(__file__).resolve()), "--chunks", str(chunks),
               "--rate", str(rate), "--max-seconds", str(max_seconds)]  # fmt: skip
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self._stdin: IO[str] = self._proc.stdin  # type: ignore[assignment]
        self._stdout: IO[str] = self._proc.stdout  # type: ignore[assignment]
        ports = self._readline(30.0)
        self.http_port: int = ports["http"]
        self.raw_port: int = ports["raw"]

    def _readline(self, timeout: float) -> Any:
        box: List[str] = []
        reader = threading.Thread(target=lambda: box.append(self._stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if not box or not box[0]:
            self.close()
            raise RuntimeError("the benchmark server did not answer")
        return json.loads(box[0])

    def url(self, dialect: str, pattern: str) -> str:
        """``http://127.0.0.1:PORT/<dialect>/<pattern>``: append the API path to it."""
        return f"http://{HOST}:{self.http_port}/{dialect}/{pattern}"

    def raw_address(self) -> Tuple[str, int]:
        return (HOST, self.raw_port)

    def stats(self) -> Dict[str, int]:
        """Connections, writes, late writes (> 5 ms) and failed connections since the last
        call."""
        self._stdin.write("stats\n")
        self._stdin.flush()
        return self._readline(30.0)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._stdin.close()
            except OSError:
                pass
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=10)
        self._stdout.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


if __name__ == "__main__":
    main()
