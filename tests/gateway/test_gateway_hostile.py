"""Issue 15: the gateway example (``examples/gateway.py``) under clients that misbehave, and
an upstream that does. Real sockets on 127.0.0.1 only; every wait is bounded."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from typing import Any, List, Tuple

import aiohttp
import pytest
from support import streams as _streams
from support.gateway_app import PATHS, TIMEOUT, Gateway
from support.loopback import LoopbackServer
from support.paths import EXAMPLES

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


def raw_post(port: int, path: str, small_buffer: bool = True) -> socket.socket:
    """A client that sends its request and then never reads (it only holds the socket).
    ``small_buffer=False`` leaves the socket's receive buffer as the kernel sets it (a client
    that will read later: a 4 KiB buffer set after the connect can leave the window shut)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    if small_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    body = b'{"stream": true, "stream_options": {"include_usage": true}}'
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
                async with s.post(gw.url(prefix + PATHS["chat"]), json={"stream": True}) as r:
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


def test_a_slow_client_gets_every_byte(upstream: LoopbackServer) -> None:
    """Issue 26: the upstream's body goes onto the client's socket in the read's own callback;
    when the socket is full, reading the upstream pauses, and resumes once the client drains.
    A client that reads nothing for a while (less than ``write_timeout``) and then reads
    everything gets the upstream's bytes exactly."""
    big = _streams.chat_stream(n_chunks=20_000, seed=5)  # megabytes: fills the socket buffers
    prefix = upstream.add(big, delay=0.0)
    gw = Gateway(upstream.url(), write_timeout=20.0)
    try:
        sock = raw_post(gw.port, prefix + PATHS["chat"], small_buffer=False)
        with sock:
            time.sleep(1.0)  # the gateway meets a full socket and pauses the upstream
            received = b""
            deadline = time.monotonic() + TIMEOUT
            while not received.endswith(b"\r\n0\r\n\r\n") and time.monotonic() < deadline:
                data = sock.recv(1 << 16)
                assert data, "the gateway closed the connection early"
                received += data
        head, _, chunked = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        pieces, at = [], 0
        for _ in range(len(chunked)):  # de-chunk: bounded by the bytes received
            line_end = chunked.index(b"\r\n", at)
            size = int(chunked[at:line_end], 16)
            if size == 0:
                break
            pieces.append(chunked[line_end + 2 : line_end + 2 + size])
            at = line_end + 4 + size
        assert b"".join(pieces) == big
        wait_for(lambda: len(gw.records) == 1)
        assert gw.records[0]["done"] is True and gw.records[0]["client_disconnected"] is False
    finally:
        gw.close()


@pytest.mark.parametrize("path", ["chat", "messages"])
def test_an_upstream_cut_off_mid_body_cuts_the_client_off(upstream: LoopbackServer, path: str) -> None:
    """The upstream's connection drops inside its chunked body: the client's response is
    aborted too (not ended cleanly, which would pass a truncated stream for a whole one), and
    the log tells the upstream's error. Relayed (chat) and translated (chat -> Messages)."""
    body = _streams.chat_stream(n_chunks=200, seed=6)
    prefix = upstream.add(body, delay=0.0, truncate=len(body) // 2)
    gw = Gateway(upstream.url(), upstream_dialect="chat")
    try:
        async def fetch() -> Tuple[int, bytes, str]:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
                payload = {"model": "m", "stream": True, "max_tokens": 100,
                           "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
                async with s.post(gw.url(prefix + PATHS[path]), json=payload) as r:
                    try:
                        return r.status, await r.read(), "complete"
                    except aiohttp.ClientPayloadError as e:
                        return r.status, b"", type(e).__name__

        status, _, how = asyncio.run(fetch())
        assert status == 200 and how == "ClientPayloadError"
        wait_for(lambda: len(gw.records) == 1)
        [record] = gw.records
        assert record["done"] is False and record["client_disconnected"] is False
        assert "HTTPProtocolError" in record["upstream_error"]
    finally:
        gw.close()


def test_the_gateway_relays_from_an_https_upstream(tmp_path: Any) -> None:
    """The upstream connection is TLS for an ``https://`` upstream (verified with the given
    context): a real TLS server on 127.0.0.1, the body relayed byte for byte."""
    from support.tls import _certificate

    server_ctx, client_ctx = _certificate(tmp_path)
    body = _streams.chat_stream(n_chunks=50, seed=7)
    seen: List[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))  # fmt: skip
        seen.append(head + await asyncio.wait_for(reader.readexactly(length), TIMEOUT))
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(body), body))  # fmt: skip
        await writer.drain()
        writer.close()

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = asyncio.run_coroutine_threadsafe(
        asyncio.start_server(answer, "127.0.0.1", 0, ssl=server_ctx), loop).result(TIMEOUT)  # fmt: skip
    port = server.sockets[0].getsockname()[1]
    gw = Gateway(f"https://127.0.0.1:{port}/base", ssl_context=client_ctx)
    try:
        async def fetch() -> bytes:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
                asked = {"stream": True, "stream_options": {"include_usage": True}}
                async with s.post(gw.url(PATHS["chat"]), json=asked) as r:
                    return await r.read()

        assert asyncio.run(fetch()) == body
        assert seen and seen[0].startswith(b"POST /base" + PATHS["chat"].encode() + b" HTTP/1.1\r\n")
        wait_for(lambda: len(gw.records) == 1)
        assert gw.records[0]["done"] is True
    finally:
        gw.close()
        server.close()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(TIMEOUT)
        loop.close()


def test_a_translated_upstream_error_is_relayed_and_logged_once(upstream: LoopbackServer) -> None:
    """An upstream that answers an error instead of a stream, in front of a client of another
    dialect: the client gets the upstream's status and its error in the client's dialect, and
    the log holds one record
    (the upstream's error), not a second one for a stream that never came."""
    body = json.dumps({"error": {"message": "rate limited", "type": "rate_limit_error"}}).encode()
    prefix = upstream.add(body, status=429, content_type="application/json", framing="length")
    gw = Gateway(upstream.url(), upstream_dialect="chat")
    try:
        async def one() -> Tuple[int, bytes]:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
                payload = {"model": "m", "stream": True, "max_tokens": 10,
                           "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
                async with s.post(gw.url(prefix + PATHS["messages"]), json=payload) as r:
                    return r.status, await r.read()

        status, got = asyncio.run(one())
        # In the client's own words (issue 33): Anthropic's error object, the message kept.
        assert status == 429
        assert json.loads(got) == {"type": "error", "error": {"type": "rate_limit_error", "message": "rate limited"}}
        wait_for(lambda: len(gw.records) >= 1)
        time.sleep(0.2)  # a second record would be written by now
        assert len(gw.records) == 1
        assert gw.records[0]["status"] == 429 and "rate limited" in gw.records[0]["error"]["message"]
    finally:
        gw.close()
