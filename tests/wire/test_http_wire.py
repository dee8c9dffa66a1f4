"""``HTTPResponseReader`` and ``StreamProtocol``'s HTTP mode, at the level of the wire: a raw connection's HTTP/1.1
response read as HTTP (status line, header fields, the body de-framed), never as SSE.

The finding this answers: over HTTP/1.1 the chunk-size lines of a chunked reply used to reach
the stream as SSE text (``done`` True, usage lost, error items from the chunk lines), and the
README's example (no request) never ended. Here:

- the reader alone, on responses fed whole, byte by byte and cut at every point: chunked
  bodies with chunk extensions and trailers, ``Content-Length``, close-delimited, interim 1xx
  responses, bad chunk sizes, an oversize head (an error, not memory);
- ``StreamProtocol`` over ``loop.create_connection`` against a real asyncio server on
  127.0.0.1, plain and TLS (a self-signed certificate made at test time): chunked replies cut at
  odd points on a keep-alive connection (``wait()`` returns at the body's end, not when the
  server closes), ``Content-Length`` and close-delimited replies, a 500 with a JSON error
  body, a 502 HTML page, a cut body, a malformed reply; and against ``tests/support/loopback.py``'s
  server with its random writes.

Bounded: every connection is under ``asyncio.wait_for``; the servers hold a connection at most
``HOLD`` seconds; only 127.0.0.1 is bound or contacted.
"""

from __future__ import annotations

import asyncio
import json
import random
import ssl
from typing import Any, Callable, Optional

import pytest
import ssewire
from support import streams as _streams
from support.loopback import LoopbackServer
from support.tls import HOST, _certificate

TIMEOUT = 10.0
#: How long the test server keeps a keep-alive connection open after its response.
HOLD = 8.0


# --- wire builders ---------------------------------------------------------------------------


def chunked_wire(
    body: bytes,
    *,
    seed: int = 0,
    status: str = "200 OK",
    extra_headers: str = "",
    extensions: bool = True,
    trailers: bool = True,
) -> bytes:
    """``body`` as a chunked HTTP/1.1 response with random chunk sizes (cutting events, UTF-8
    characters and CRLF pairs), some chunk extensions, upper- and lower-case hex with leading
    zeros, and a trailer section."""
    rng = random.Random(seed)
    out = [
        f"HTTP/1.1 {status}\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
        f"Cache-Control: no-cache\r\n{extra_headers}Transfer-Encoding: chunked\r\n\r\n".encode()
    ]
    i = 0
    while i < len(body):
        n = min(len(body) - i, rng.choice([1, 2, 3, 7, 16, 100, 255, 4096]))
        size = rng.choice(["%x", "%X", "00%x"]) % n
        ext = rng.choice(["", ";a=1", ' ; name="quoted;value"', ";x"]) if extensions else ""
        out.append(f"{size}{ext}\r\n".encode() + body[i : i + n] + b"\r\n")
        i += n
    out.append(b"0\r\n")
    if trailers:
        out.append(b"X-Trailer: done\r\nX-Usage-Tokens: 42\r\n")
    out.append(b"\r\n")
    return b"".join(out)


def length_wire(body: bytes, status: str = "200 OK", content_type: str = "text/event-stream") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


def close_wire(body: bytes, status: str = "200 OK") -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n".encode() + body


def cut(wire: bytes, seed: int, pieces: int = 60) -> list[bytes]:
    """``wire`` cut at seeded random points, plus a cut inside every chunk-size line and
    between every CR and LF of the first few hundred bytes (the head and first chunks)."""
    rng = random.Random(f"cut:{seed}")
    points = set(rng.sample(range(1, len(wire)), min(pieces - 1, len(wire) - 1)))
    points.update(i for i in range(1, min(len(wire), 400)) if wire[i - 1 : i + 1] == b"\r\n")
    bounds = [0, *sorted(points), len(wire)]
    return [wire[a:b] for a, b in zip(bounds, bounds[1:])]


# --- the reader alone ------------------------------------------------------------------------


def read_whole(wire: bytes, pieces: Optional[list[bytes]] = None, **kw: Any) -> tuple[Any, bytes]:
    """Feeds ``pieces`` (default: ``wire`` whole) then finishes; returns (reader, body)."""
    reader = ssewire.HTTPResponseReader(**kw)
    body = b"".join(reader.feed(p) for p in (pieces if pieces is not None else [wire]))
    reader.finish()
    return reader, body


def snapshot(reader: Any) -> tuple[Any, ...]:
    return (
        reader.status,
        reader.reason,
        reader.http_version,
        reader.headers,
        reader.trailers,
        reader.framing,
        reader.interim,
        reader.head_complete,
        reader.body_complete,
        reader.body_size,
    )


def outcome(wire: bytes, pieces: list[bytes]) -> tuple[Any, ...]:
    """Body and state, or the error (kind, message, body, state), after feeding ``pieces`` and
    finishing."""
    reader = ssewire.HTTPResponseReader()
    body = b""
    try:
        for p in pieces:
            body += reader.feed(p)
        reader.finish()
    except ssewire.HTTPProtocolError as exc:
        # The body the failing call read before the error comes with the error, so the body
        # in all does not depend on the cuts either.
        return ("error", exc.kind, str(exc), body + exc.body, snapshot(reader))
    return (body, snapshot(reader))


def assert_same_every_split(wire: bytes) -> tuple[Any, ...]:
    """Whole, byte by byte, and cut at every single point: the same outcome."""
    expected = outcome(wire, [wire])
    assert outcome(wire, [wire[i : i + 1] for i in range(len(wire))]) == expected
    for i in range(len(wire) + 1):
        assert outcome(wire, [wire[:i], b"", wire[i:]]) == expected, i
    return expected


def test_chunked_split_at_every_byte_with_extensions_and_trailers() -> None:
    body = "data: {\"x\": \"héllo wörld\"}\r\n\r\n: ping\n\ndata: [DONE]\n\n".encode()
    wire = chunked_wire(body, seed=3)
    got, state = assert_same_every_split(wire)
    assert got == body
    status, reason, version, headers, trailers, framing, interim, head, done, size = state
    assert (status, reason, version, framing, interim) == (200, "OK", "HTTP/1.1", "chunked", [])
    assert ("Transfer-Encoding", "chunked") in headers
    assert trailers == [("X-Trailer", "done"), ("X-Usage-Tokens", "42")]
    assert head and done and size == len(body)


def test_the_chunk_framing_never_reaches_the_body() -> None:
    """The finding: a chunked reply read as SSE. Read as HTTP, the stream sees exactly the
    body: same result, usage kept, no error items, as when the body is fed directly."""
    body = _streams.chat_stream(80, seed=11)
    wire = chunked_wire(body, seed=11)
    for pieces in ([wire], cut(wire, 1), cut(wire, 2, pieces=400)):
        reader = ssewire.HTTPResponseReader()
        stream = ssewire.ChatCompletionStream()
        for p in pieces:
            stream.consume(reader.feed(p))
        stream.finish()
        expected = ssewire.ChatCompletionStream()
        expected.consume(body)
        expected.finish()
        assert stream.result() == expected.result()
        assert stream.errors == [] and stream.error is None and stream.done
        assert stream.result()["usage"]["total_tokens"] > 0


def test_content_length_and_close_delimited() -> None:
    body = b"data: one\n\ndata: two\n\n"
    got, state = assert_same_every_split(length_wire(body))
    assert got == body and state[5] == "length" and state[8]
    # A list of one repeated value is that value (RFC 9112 section 6.3); different values are
    # an error (see test_unreadable_responses_are_errors).
    wire = length_wire(body).replace(b"Content-Length: ", b"Content-Length: %d, " % len(body))
    assert assert_same_every_split(wire)[0] == body
    # Content-Length: complete as soon as the body is in, before any close; bytes after it
    # are not body.
    reader = ssewire.HTTPResponseReader()
    assert reader.feed(length_wire(body) + b"HTTP/1.1 200 OK\r\n\r\nextra") == body
    assert reader.body_complete
    # Close-delimited: the body ends at finish(), and may hold anything, blank lines too.
    wire = close_wire(b"data: x\r\n\r\n\r\n\r\nHTTP/1.1 200 OK\r\n\r\n")
    got, state = assert_same_every_split(wire)
    assert got == b"data: x\r\n\r\n\r\n\r\nHTTP/1.1 200 OK\r\n\r\n" and state[5] == "close"
    reader = ssewire.HTTPResponseReader()
    reader.feed(wire)
    assert reader.head_complete and not reader.body_complete
    reader.finish()
    assert reader.body_complete
    # HTTP/1.0, no length.
    reader, got = read_whole(b"HTTP/1.0 200 OK\r\n\r\nabc")
    assert (got, reader.http_version, reader.framing) == (b"abc", "HTTP/1.0", "close")
    # No body: 204, and Content-Length: 0.
    for wire in (b"HTTP/1.1 204 No Content\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"):
        reader = ssewire.HTTPResponseReader()
        assert reader.feed(wire) == b"" and reader.body_complete


def test_interim_responses_are_skipped() -> None:
    wire = (
        b"\r\nHTTP/1.1 100 Continue\r\n\r\n"  # a blank line before a status line is skipped
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
        + length_wire(b"data: ok\n\n", status="200 Fine")
    )
    got, state = assert_same_every_split(wire)
    assert got == b"data: ok\n\n"
    assert state[:2] == (200, "Fine") and state[6] == [100, 103]
    assert ("Link", "</style.css>; rel=preload") not in state[3]


def test_headers_as_sent() -> None:
    wire = (
        b"HTTP/1.1 200 OK\r\nX-Multi: a\r\nx-multi: b\r\nX-Latin: caf\xe9\r\n"
        b"Content-Length: 2\r\n\r\nok"
    )
    reader, body = read_whole(wire)
    assert body == b"ok"
    assert reader.headers == [
        ("X-Multi", "a"),
        ("x-multi", "b"),
        ("X-Latin", "café"),
        ("Content-Length", "2"),
    ]
    assert reader.header("X-MULTI") == "a, b"
    assert reader.header("absent") is None and reader.header("absent", "d") == "d"
    assert "200" in repr(reader)
    with pytest.raises(TypeError):
        reader.feed("text")  # type: ignore[arg-type]


BAD_CHUNKS = [
    b"x\r\n",  # not hex
    b"\r\n",  # no size
    b"-1\r\n",
    b"+1\r\n",  # a sign is not a hex digit (int(..., 16) and from_str_radix take it)
    b"0x10\r\n",
    b"1 1\r\n",  # junk after the size
    b"1\rX",  # CR without LF
    b"1;ext\x01\r\n",  # control character in an extension
    b"10000000000000000\r\n",  # over 2**64-1
    b"3\r\nabcd\r\n",  # data longer than its size
]


@pytest.mark.parametrize("bad", BAD_CHUNKS, ids=[repr(b) for b in BAD_CHUNKS])
def test_bad_chunk_sizes_are_errors(bad: bytes) -> None:
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n" + bad + b"0\r\n\r\n"
    result = assert_same_every_split(wire)
    assert result[:2] == ("error", "malformed"), result
    # The body before the bad line was returned; the failure is final.
    reader = ssewire.HTTPResponseReader()
    with pytest.raises(ssewire.HTTPProtocolError) as first:
        body = reader.feed(wire[:50])
        body += reader.feed(wire[50:])
    with pytest.raises(ssewire.HTTPProtocolError) as again:
        reader.feed(b"0\r\n\r\n")
    assert str(again.value) == str(first.value) and isinstance(first.value, ValueError)


@pytest.mark.parametrize(
    "wire, kind",
    [
        (b"data: {}\n\n", "malformed"),  # an event stream, not an HTTP response
        (b"HTTP/1.1 2000 OK\r\n\r\n", "malformed"),
        (b"HTTP/1.1 200 OK\r\nNo Colon\r\n\r\n", "malformed"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "malformed"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n", "malformed"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "unsupported"),
        # Every Transfer-Encoding field counts, not only the last one.
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n", "unsupported"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "unsupported"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "malformed"),
        (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "unsupported"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n", "malformed"),
        (b"", "incomplete"),
        (b"HTTP/1.1 200 OK\r\nContent-Type: te", "incomplete"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", "incomplete"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "incomplete"),
    ],
)
def test_unreadable_responses_are_errors(wire: bytes, kind: str) -> None:
    result = assert_same_every_split(wire) if wire else outcome(wire, [])
    assert result[:2] == ("error", kind), result


def test_an_oversize_head_is_an_error_not_memory() -> None:
    """A server that sends an endless head (or endless blank lines, or one endless chunk-size
    line, or endless trailers) gets an error once the limit is passed: the reader stops
    there, it does not keep what it was sent."""
    limit = 4096
    piece = b"X-Filler: " + b"a" * 1000 + b"\r\n"
    endless: list[tuple[bytes, bytes]] = [
        (b"HTTP/1.1 200 OK\r\n", piece),
        (b"", b"\r\n" * 500),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", piece),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;", b"x" * 1000),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"0" * 1000),
    ]
    for start, more in endless:
        reader = ssewire.HTTPResponseReader(max_head_size=limit)
        reader.feed(start)
        fed = len(start)
        with pytest.raises(ssewire.HTTPProtocolError) as err:
            for _ in range(100_000):  # bounded: 100 MB at most, the error comes far earlier
                reader.feed(more)
                fed += len(more)
        assert err.value.kind == "too_large", err.value
        # The chunk-size line limit is 16 KiB; the head and trailer limit is max_head_size.
        assert fed <= 16 * 1024 + len(start) + len(more), fed
    assert ssewire.HTTPResponseReader().feed(b"HTTP/1.1 200 OK\r\n" + piece * 60 + b"\r\n") == b""
    with pytest.raises(ssewire.HTTPProtocolError):
        ssewire.HTTPResponseReader().feed(b"HTTP/1.1 200 OK\r\n" + piece * 70 + b"\r\n")


def test_random_bytes_never_escape_the_error_model() -> None:
    """Hostile input: only ``HTTPProtocolError`` comes out, the body never exceeds the input,
    and the outcome does not depend on the cuts."""
    rng = random.Random(7)
    alphabet = [
        b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 100 Continue\r\n\r\n", b"Transfer-Encoding: chunked\r\n",
        b"Content-Length: 4\r\n", b"\r\n", b"\n", b"\r", b"0", b"a", b";", b" ", b"x:y\r\n",
        b"data: x\n\n", b"\x00", b"\xff",
    ]
    for _ in range(400):
        wire = b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
        expected = outcome(wire, [wire])
        if expected[0] != "error":
            assert len(expected[0]) <= len(wire)
        assert outcome(wire, [wire[i : i + 1] for i in range(len(wire))]) == expected, wire
        i = rng.randint(0, len(wire))
        assert outcome(wire, [wire[:i], wire[i:]]) == expected, wire


def test_protocol_errors_pickle_with_their_kind() -> None:
    import pickle

    err = ssewire.HTTPProtocolError("bad", "malformed")
    back = pickle.loads(pickle.dumps(err))
    assert (type(back), back.kind, str(back)) == (ssewire.HTTPProtocolError, "malformed", "bad")
    assert isinstance(back, ValueError)


# --- over loopback: an asyncio server on 127.0.0.1, plain and TLS ----------------------------


class Server:
    """An asyncio server on 127.0.0.1 that answers every connection with ``pieces`` (written
    one by one, a short pause between them), then keeps the connection open until the client
    closes it (at most ``HOLD`` s) unless ``close``. Records each request head and when each
    connection was closed by the client."""

    def __init__(self, pieces: list[bytes], *, close: bool = False, ssl_ctx: Optional[ssl.SSLContext] = None) -> None:
        self.pieces = pieces
        self.close = close
        self.ssl = ssl_ctx
        self.requests: list[bytes] = []
        self.client_closed: list[bool] = []
        self.bodies: list[bytes] = []
        self.server: Optional[asyncio.AbstractServer] = None

    async def __aenter__(self) -> "Server":
        self.server = await asyncio.start_server(self._handle, HOST, 0, ssl=self.ssl)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.server is not None
        self.server.close()
        await asyncio.wait_for(self.server.wait_closed(), TIMEOUT)

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            self.requests.append(await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT))
            for piece in self.pieces:
                writer.write(piece)
                await writer.drain()
                await asyncio.sleep(0.0005)
            if not self.close:
                # Keep-alive: the response is over, the connection stays until the client
                # closes it (read() returns b"" then).
                # What is read before the end of file is the request body.
                self.bodies.append(await asyncio.wait_for(reader.read(), HOLD))
                self.client_closed.append(True)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ssl.SSLError):
            self.client_closed.append(False)
        finally:
            writer.close()


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    return _certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(params=["plain", "tls"])
def contexts(request: pytest.FixtureRequest, tls: Any) -> tuple[Optional[ssl.SSLContext], Optional[ssl.SSLContext]]:
    return tls if request.param == "tls" else (None, None)


REQUEST = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nContent-Length: 2\r\n\r\n{}"


async def fetch(
    wire_pieces: list[bytes],
    stream: Any,
    contexts: Any,
    *,
    close: bool = False,
    on_item: Optional[Callable[[Any], object]] = None,
    request: bytes = REQUEST,
) -> tuple[Any, Any, Server, Optional[BaseException]]:
    """One connection through ``StreamProtocol``: (protocol, wait()'s result, server, the
    exception wait() raised)."""
    server_ctx, client_ctx = contexts
    loop = asyncio.get_running_loop()
    async with Server(wire_pieces, close=close, ssl_ctx=server_ctx) as server:
        transport, protocol = await loop.create_connection(
            lambda: ssewire.StreamProtocol(stream, on_item, request=request),
            HOST,
            server.port,
            ssl=client_ctx,
            server_hostname=HOST if client_ctx else None,
        )
        result: Any = None
        error: Optional[BaseException] = None
        try:
            result = await asyncio.wait_for(protocol.wait(), TIMEOUT)
        except Exception as exc:
            error = exc
        assert transport.is_closing()
        for _ in range(200):  # let the server see the close (bounded: 2 s)
            if server.client_closed or close:
                break
            await asyncio.sleep(0.01)
    return protocol, result, server, error


def reference(factory: Callable[[], Any], body: bytes) -> Any:
    stream = factory()
    stream.consume(body)
    stream.finish()
    return stream


def test_chunked_keep_alive_over_loopback(contexts: Any) -> None:
    """Chunked replies cut at odd points on a keep-alive connection: the stream gets exactly
    the body (same result, usage, no error items), ``wait()`` returns at the chunked
    terminator while the server still holds the connection open, and the protocol tells the
    status and headers."""

    async def main() -> None:
        for seed, (factory, body) in enumerate(
            [
                (ssewire.ChatCompletionStream, _streams.chat_stream(120, seed=21, tool_calls=True)),
                (ssewire.MessagesStream, _streams.messages_stream(60, seed=22)),
                (ssewire.ResponsesStream, _streams.responses_stream(60, seed=23)),
            ]
        ):
            expected = reference(factory, body)
            for consume in (False, True):
                stream = factory()
                items: list[Any] = []
                start = asyncio.get_running_loop().time()
                protocol, result, server, error = await fetch(
                    cut(chunked_wire(body, seed=seed), seed + 10 * consume, pieces=150),
                    stream,
                    contexts,
                    on_item=None if consume else items.append,
                )
                assert error is None and result is stream
                # Ended by the body, well before the server's HOLD would have closed it.
                assert asyncio.get_running_loop().time() - start < HOLD / 2
                assert server.client_closed == [True]
                assert server.requests == [REQUEST[: REQUEST.index(b"\r\n\r\n") + 4]]
                assert server.bodies == [b"{}"]
                assert stream.result() == expected.result()
                assert stream.errors == [] and stream.error is None and stream.done
                assert (protocol.status, protocol.reason) == (200, "OK")
                assert ("Transfer-Encoding", "chunked") in protocol.headers
                assert protocol.http.trailers == [("X-Trailer", "done"), ("X-Usage-Tokens", "42")]
                if not consume:
                    assert len(items) > 50
            assert "usage" in json.dumps(stream.result())

    asyncio.run(main())


def test_length_close_and_interim_over_loopback(contexts: Any) -> None:
    body = _streams.chat_stream(60, seed=31)
    expected = reference(ssewire.ChatCompletionStream, body)

    async def main() -> None:
        for wire, close in [
            (length_wire(body), False),  # keep-alive, ended by Content-Length
            (close_wire(body), True),  # ended by the server's close
            (b"HTTP/1.1 100 Continue\r\n\r\n" + chunked_wire(body, seed=4, trailers=False), False),
        ]:
            stream = ssewire.ChatCompletionStream()
            protocol, result, server, error = await fetch(cut(wire, 5), stream, contexts, close=close)
            assert error is None and result is stream
            assert stream.result() == expected.result() and stream.errors == [] and stream.done
            assert protocol.status == 200

    asyncio.run(main())


def test_error_statuses_over_loopback(contexts: Any) -> None:
    """A 500 with a JSON error body and a 502 HTML page from a proxy: ``wait()`` raises
    ``HTTPStatusError`` carrying the status and what the server said; the stream was fed the
    body and finished."""
    error_body = json.dumps(
        {"error": {"message": "The server had an error", "type": "server_error", "code": None}}
    ).encode()
    html = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n"

    async def main() -> None:
        stream = ssewire.ChatCompletionStream()
        protocol, result, _, error = await fetch(
            cut(length_wire(error_body, "500 Internal Server Error", "application/json"), 3),
            stream,
            contexts,
        )
        assert isinstance(error, ssewire.HTTPStatusError)
        assert (error.status, error.reason, error.stream) == (500, "Internal Server Error", stream)
        assert stream.error is not None and stream.error.message == "The server had an error"
        assert "The server had an error" in str(error)
        assert ("Content-Type", "application/json") in error.headers
        assert protocol.status == 500

        stream = ssewire.MessagesStream()
        _, _, _, error = await fetch(
            cut(chunked_wire(html, seed=9, status="502 Bad Gateway"), 4), stream, contexts
        )
        assert isinstance(error, ssewire.HTTPStatusError) and error.status == 502
        assert stream.error is not None and stream.error.code == "not_event_stream"
        assert error.stream is stream and "502 Bad Gateway" in stream.error.raw["body"]

    asyncio.run(main())


def test_broken_responses_over_loopback(contexts: Any) -> None:
    """A body cut short (the server closes mid-chunk), a malformed reply, a compressed body:
    ``HTTPProtocolError``, never SSE parsing of the framing."""
    body = _streams.chat_stream(40, seed=41)
    wire = chunked_wire(body, seed=41)

    async def main() -> None:
        stream = ssewire.ChatCompletionStream()
        protocol, _, _, error = await fetch(
            cut(wire[: len(wire) // 2], 6), stream, contexts, close=True
        )
        assert isinstance(error, ssewire.HTTPProtocolError) and error.kind == "incomplete"
        # Finished: a cut stream is a retry condition; what arrived was kept, and it is
        # exactly the body bytes that arrived (no framing in it).
        assert stream.error is not None and stream.error.code == "incomplete_stream"
        arrived = protocol.http.body_size
        assert 0 < arrived < len(body)
        assert stream.result() == reference(ssewire.ChatCompletionStream, body[:arrived]).result()

        stream = ssewire.ChatCompletionStream()
        bad = wire.replace(b"\r\n0", b"\r\nzz", 1)
        protocol, _, _, error = await fetch([bad], stream, contexts)
        assert isinstance(error, ssewire.HTTPProtocolError) and error.kind == "malformed"
        # The body before the bad chunk line reached the stream (however the reads were cut);
        # the stream is left unfinished.
        arrived = protocol.http.body_size
        assert 0 < arrived < len(body) and not stream.done and stream.error is None
        before = ssewire.ChatCompletionStream()
        before.consume(body[:arrived])
        assert stream.result() == before.result()

        stream = ssewire.ChatCompletionStream()
        gz = length_wire(b"\x1f\x8b\x08\x00junk").replace(b"\r\n\r\n", b"\r\nContent-Encoding: gzip\r\n\r\n", 1)
        _, _, _, error = await fetch([gz], stream, contexts)
        assert isinstance(error, ssewire.HTTPProtocolError) and error.kind == "unsupported"
        # Refused before any body byte reached the stream; the stream is left unfinished.
        assert not stream.done and stream.error is None and stream.errors == []

    asyncio.run(main())


def test_raw_mode_still_reads_a_bare_event_stream(contexts: Any) -> None:
    """``http=False`` (and no request): the connection's bytes are the body, as before."""
    body = _streams.chat_stream(30, seed=51)

    async def main() -> None:
        server_ctx, client_ctx = contexts
        loop = asyncio.get_running_loop()
        stream = ssewire.ChatCompletionStream()
        async with Server(cut(body, 8), close=True, ssl_ctx=server_ctx) as server:
            _, protocol = await loop.create_connection(
                lambda: ssewire.StreamProtocol(stream, request=b"GET / HTTP/1.1\r\n\r\n", http=False),
                HOST, server.port, ssl=client_ctx, server_hostname=HOST if client_ctx else None,
            )
            assert await asyncio.wait_for(protocol.wait(), TIMEOUT) is stream
        assert protocol.status is None and protocol.http is None
        assert stream.result() == reference(ssewire.ChatCompletionStream, body).result()

    asyncio.run(main())


@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
def test_stream_protocol_against_the_loopback_server(framing: str) -> None:
    """``tests/support/loopback.py``'s server (random writes, cut inside UTF-8 and CRLF) in each
    framing: the same result as the body fed whole."""
    cases = [
        (ssewire.ChatCompletionStream, _streams.chat_stream(100, seed=61, reasoning=True)),
        (ssewire.MessagesStream, _streams.messages_stream(80, seed=62, tool_use=True)),
    ]

    async def main(server: LoopbackServer) -> None:
        loop = asyncio.get_running_loop()
        for i, (factory, body) in enumerate(cases):
            prefix = server.add(body, framing=framing, seed=i, delay=0.0002)
            request = f"POST {prefix} HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: 0\r\n\r\n".encode()
            stream = factory()
            _, protocol = await loop.create_connection(
                lambda: ssewire.StreamProtocol(stream, request=request), HOST, server.port
            )
            assert await asyncio.wait_for(protocol.wait(), TIMEOUT) is stream
            assert stream.result() == reference(factory, body).result()
            assert stream.errors == [] and stream.done and protocol.status == 200

    with LoopbackServer() as server:
        asyncio.run(main(server))
