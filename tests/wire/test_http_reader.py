"""Issue 15: ``StreamProtocol`` reads an HTTP/1.1 response from a raw socket (the "feed raw
socket bytes" path): the head parsed, the body de-chunked / length-delimited / close-delimited
in Rust, only the body fed to the stream; status and headers exposed; a non-2xx status an
error; over loopback with and without TLS (asyncio's own). Every wait is bounded."""

from __future__ import annotations

import asyncio
import json
import random
import ssl
from typing import Any, List, Optional, Tuple

import pytest
import ssewire
from support import streams as _streams
from support.loopback import LoopbackServer
from support.splitting import split_ways

TIMEOUT = 20.0
BODY = _streams.chat_stream(n_chunks=80, seed=7, tool_calls=True)


def reference(body: bytes) -> Any:
    s = ssewire.ChatCompletionStream()
    s.feed(body)
    s.finish()
    return s.done, s.result()


def chunked(body: bytes, seed: int, extensions: bool = False) -> bytes:
    rng = random.Random(seed)
    out, pos = b"", 0
    while pos < len(body):
        n = rng.randint(1, 300)
        piece = body[pos : pos + n]
        ext = b";name=value" if extensions and rng.random() < 0.5 else b""
        out += f"{len(piece):x}".encode() + ext + b"\r\n" + piece + b"\r\n"
        pos += n
    return out + b"0\r\nX-Checksum: abc\r\n\r\n"


def response(body: bytes, framing: str, status: str = "200 OK", seed: int = 0) -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/event-stream\r\nX-Request-Id: r-1\r\n"
    if framing == "chunked":
        return (head + "Transfer-Encoding: chunked\r\n\r\n").encode() + chunked(body, seed, True)
    if framing == "length":
        return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    return (head + "Connection: close\r\n\r\n").encode() + body


# --- the reader alone -----------------------------------------------------------------------------


@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
def test_reader_gives_the_body_at_every_split(framing: str) -> None:
    raw = b"HTTP/1.1 100 Continue\r\n\r\n" + response(BODY, framing, seed=3)
    for way in split_ways(raw, random_splits=6):
        r = ssewire._core.HTTPResponseReader()
        body = b"".join(r.feed(p) for p in way.pieces)
        r.finish()
        assert body == BODY, way.name
        assert r.status == 200 and r.reason == "OK"
        assert ("X-Request-Id", "r-1") in r.headers
        assert r.body_complete is True


@pytest.mark.parametrize("raw", [
    b"<html><body>502 Bad Gateway</body></html>\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1" * 100_000,
    b"HTTP/1.1 200 OK\r\nX: " + b"a" * 200_000,
    b"HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n",
])  # fmt: skip
def test_reader_refuses_what_is_not_a_response(raw: bytes) -> None:
    r = ssewire._core.HTTPResponseReader()
    with pytest.raises(ssewire.HTTPProtocolError):
        r.feed(raw)
        r.finish()
    assert isinstance(ssewire.HTTPProtocolError(), ValueError)


def test_reader_cut_bodies_are_errors_at_finish() -> None:
    for framing in ("chunked", "length"):
        raw = response(BODY, framing)
        r = ssewire._core.HTTPResponseReader()
        r.feed(raw[: len(raw) - 40])
        with pytest.raises(ssewire.HTTPProtocolError, match="closed"):
            r.finish()


# --- over loopback ------------------------------------------------------------------------------


async def connect(port: int, path: str, *, on_item: Any = None, ssl_ctx: Optional[ssl.SSLContext] = None,
                  stream: Any = None) -> Tuple[Any, Any]:  # fmt: skip
    loop = asyncio.get_running_loop()
    stream = stream or ssewire.ChatCompletionStream()
    request = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{{}}".encode()
    _, protocol = await loop.create_connection(
        lambda: ssewire.StreamProtocol(stream, on_item, request=request),
        "127.0.0.1", port, ssl=ssl_ctx, server_hostname="localhost" if ssl_ctx else None,
    )  # fmt: skip
    return protocol, await asyncio.wait_for(protocol.wait(), TIMEOUT)


@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
@pytest.mark.parametrize("items", [False, True], ids=["consume", "items"])
def test_stream_protocol_reads_http_responses(framing: str, items: bool) -> None:
    """Before: the chunk-size lines of a chunked reply were parsed as SSE (done=True, usage
    lost, error items only in `errors`)."""
    with LoopbackServer(timeout=TIMEOUT) as server:
        prefix = server.add(BODY, framing=framing, seed=5, delay=0.0005)
        got: List[Any] = []
        protocol, stream = asyncio.run(connect(server.port, prefix + "/v1/chat/completions",
                                               on_item=got.append if items else None))  # fmt: skip
    assert protocol.status == 200 and any(k.lower() == "content-type" for k, _ in protocol.headers)
    assert (stream.done, stream.result()) == reference(BODY)
    assert stream.error is None and stream.errors == []
    assert bool(got) is items


def test_a_non_2xx_status_is_an_error_with_the_servers_message() -> None:
    error = json.dumps({"error": {"message": "rate limited", "type": "rate_limit_error"}}).encode()
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>\r\n"
    with LoopbackServer(timeout=TIMEOUT) as server:
        p1 = server.add(error, status=429, content_type="application/json", framing="length")
        p2 = server.add(page, status=502, content_type="text/html", framing="chunked")

        async def both() -> Tuple[Any, Any]:
            out = []
            for p in (p1, p2):
                with pytest.raises(ssewire.HTTPStatusError) as info:
                    await connect(server.port, p + "/v1/chat/completions")
                out.append(info.value)
            return out[0], out[1]

        e429, e502 = asyncio.run(both())
    assert e429.status == 429 and e429.stream.error.message == "rate limited"
    assert "rate limited" in str(e429)
    assert e502.status == 502 and e502.stream.error.code == "not_event_stream"
    assert "502 Bad Gateway" in e502.stream.error.raw["body"]


def test_stop_iteration_from_a_callback_is_a_runtime_error() -> None:
    def stop(item: Any) -> None:
        raise StopIteration

    with LoopbackServer(timeout=TIMEOUT) as server:
        prefix = server.add(BODY, framing="chunked")
        with pytest.raises(RuntimeError, match="StopIteration") as info:
            asyncio.run(connect(server.port, prefix + "/v1/chat/completions", on_item=stop))
    assert isinstance(info.value.__cause__, StopIteration)


# --- TLS (asyncio's), and a keep-alive server that does not close ---------------------------------


def test_stream_protocol_over_tls_ends_at_the_body_end() -> None:
    """A TLS server (asyncio's ssl) that keeps the connection open after a chunked reply cut
    into odd writes: the protocol ends at the last chunk, it does not wait for a close."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("localhost", "127.0.0.1")
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(server_ctx)
    client_ctx = ssl.create_default_context()
    ca.configure_trust(client_ctx)
    raw = response(BODY, "chunked", seed=11)

    async def main() -> Any:
        closed = asyncio.Event()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
            rng = random.Random(1)
            pos = 0
            while pos < len(raw):  # bounded by the response's length
                n = rng.randint(1, 97)
                writer.write(raw[pos : pos + n])
                await writer.drain()
                pos += n
            try:  # keep-alive: no close from this side; wait (bounded) for the client's
                await asyncio.wait_for(reader.read(), TIMEOUT)
            finally:
                closed.set()
                writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_ctx)
        port = server.sockets[0].getsockname()[1]
        async with server:
            protocol, stream = await connect(port, "/v1/chat/completions", ssl_ctx=client_ctx)
            await asyncio.wait_for(closed.wait(), TIMEOUT)  # the client closed, not the server
        return protocol, stream

    protocol, stream = asyncio.run(main())
    assert protocol.status == 200
    assert (stream.done, stream.result()) == reference(BODY)


def test_http_status_error_pickles_without_its_stream() -> None:
    import pickle

    s = ssewire.ChatCompletionStream()
    s.feed(b'{"error": {"message": "slow down"}}')
    s.finish()
    e = ssewire.HTTPStatusError(429, "Too Many Requests", [("Retry-After", "2")], s)
    back = pickle.loads(pickle.dumps(e))
    assert (back.status, back.reason, back.headers, back.stream) == (429, "Too Many Requests", [("Retry-After", "2")], None)
    assert str(back) == str(e) and "slow down" in str(back)
