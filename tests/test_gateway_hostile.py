"""Issue 15: the gateway example (``examples/gateway.py``) under clients that misbehave, and
an upstream that does. Real sockets on 127.0.0.1 only; every wait is bounded."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from typing import Any, List, Tuple

import aiohttp
import pytest

from loopback import LoopbackServer
from ssewire._bench import streams as _streams
from test_examples import EXAMPLES, PATHS, TIMEOUT, Gateway

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason="examples/ not in this tree")


@pytest.fixture()
def upstream() -> Any:
    with LoopbackServer(timeout=TIMEOUT) as server:
        yield server


def wait_for(predicate: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def raw_post(port: int, path: str) -> socket.socket:
    """A client that sends its request and then never reads (it only holds the socket)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    body = b'{"stream": true}'
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(body)}\r\n\r\n".encode() + body)  # fmt: skip
    return sock


def status_of(port: int, raw_path: str) -> int:
    """The status of a request whose path is sent exactly as given (no client normalisation)."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(f"POST {raw_path} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                     "Connection: close\r\n\r\n{}".encode())  # fmt: skip
        head = sock.recv(64)
    return int(head.split()[1])


def test_client_disconnect_is_logged_as_such_without_a_traceback(
    upstream: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    body = _streams.chat_stream(n_chunks=400, seed=1)
    prefix = upstream.add(body, delay=0.01, writes=400)
    gw = Gateway(upstream.url())
    try:
        async def leave_early() -> None:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
                async with s.post(gw.url(prefix + PATHS["chat"]), json={}) as r:
                    await r.content.readexactly(200)  # a little, then go away

        with caplog.at_level(logging.DEBUG):
            asyncio.run(leave_early())
            wait_for(lambda: len(gw.records) == 1)
        [record] = gw.records
        assert record["done"] is False and record["client_disconnected"] is True
        assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    finally:
        gw.close()


def test_client_that_stops_at_done_is_a_complete_stream(upstream: LoopbackServer,
                                                         caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    """Like the SDKs, which stop reading at `[DONE]` and close: complete, and quiet."""
    body = _streams.chat_stream(n_chunks=30, seed=2)
    prefix = upstream.add(body, delay=0.0)
    gw = Gateway(upstream.url())
    try:
        async def until_done() -> None:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
                async with s.post(gw.url(prefix + PATHS["chat"]), json={}) as r:
                    seen = b""
                    while b"[DONE]" not in seen:
                        chunk = await r.content.read(1024)
                        assert chunk
                        seen += chunk

        with caplog.at_level(logging.DEBUG):
            for _ in range(20):
                asyncio.run(until_done())
            wait_for(lambda: len(gw.records) == 20)
        assert all(r["done"] and r["error"] is None for r in gw.records)
        assert not [r for r in caplog.records if r.exc_info]
    finally:
        gw.close()


def test_stalled_clients_do_not_starve_the_others(upstream: LoopbackServer) -> None:
    """Before: clients that never read held every pooled upstream connection, and a normal
    client timed out. Now a write to a client may block for `write_timeout` at most."""
    big = _streams.chat_stream(n_chunks=20_000, seed=3)  # megabytes: fills the socket buffers
    prefix = upstream.add(big, delay=0.0)
    gw = Gateway(upstream.url(), connections=4, write_timeout=0.5)
    stalled: List[socket.socket] = []
    try:
        stalled = [raw_post(gw.port, prefix + PATHS["chat"]) for _ in range(4)]
        small = upstream.add(_streams.chat_stream(n_chunks=20, seed=4), delay=0.0)

        async def normal() -> Tuple[int, bytes]:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15)) as s:
                async with s.post(gw.url(small + PATHS["chat"]), json={}) as r:
                    return r.status, await r.read()

        started = time.monotonic()
        status, data = asyncio.run(normal())
        assert status == 200 and data.endswith(b"data: [DONE]\n\n")
        assert time.monotonic() - started < 15
        wait_for(lambda: sum(1 for r in gw.records if r["client_disconnected"]) == 4, 15)
    finally:
        for sock in stalled:
            sock.close()
        gw.close()


@pytest.mark.parametrize("raw_path", [
    "/../../admin/v1/chat/completions",
    "/x/%2e%2e/%2E%2E/v1/chat/completions",
    "/./v1/messages",
    "/a/..%2f..%2fv1/responses",
])  # fmt: skip
def test_dot_segments_cannot_escape_the_upstream_prefix(upstream: LoopbackServer, raw_path: str) -> None:
    gw = Gateway(upstream.url())
    try:
        assert status_of(gw.port, raw_path) == 400
        assert upstream.requests == []  # nothing reached the upstream
    finally:
        gw.close()


def test_a_huge_upstream_error_message_is_logged_in_short(upstream: LoopbackServer) -> None:
    message = "x" * 5_000_000
    body = json.dumps({"error": {"message": message, "type": "server_error"}}).encode()
    prefix = upstream.add(body, status=500, content_type="application/json", framing="length")
    gw = Gateway(upstream.url())
    try:
        async def one() -> int:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
                async with s.post(gw.url(prefix + PATHS["messages"]), json={}) as r:
                    await r.read()
                    return r.status

        assert asyncio.run(one()) == 500
        wait_for(lambda: len(gw.records) == 1)
        logged = gw.records[0]["error"]["message"]
        assert logged.startswith("xxx") and len(logged) < 600 and "5000000 characters" in logged
    finally:
        gw.close()
