"""The upstream HTTP/1.1 client: a pool of kept-alive connections per upstream (``Pool``) and
one request on one of them (``Exchange``).

``ssewire.HTTPResponseReader`` de-frames the response in Rust; every piece of body goes to the
exchange's ``sink`` in the same callback that read it (no task wakes per event). Timeouts are
the upstream's own: ``connect_timeout`` to open a connection, ``first_byte_timeout`` from the
request sent to the first byte of the answer, ``idle_timeout`` for the longest silence inside
the body. A connection whose answer ended whole (a length or chunked body, HTTP/1.1, no
``connection: close``) goes back to the pool; any other is closed. A kept connection the
upstream closed before it answered is tried again once on a new one (it never saw the
request as answered).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from typing import Callable, Deque, List, Optional, Tuple
from urllib.parse import urlsplit

import ssewire
from ssewire.gateway._config import Upstream as UpstreamConfig

#: The longest a kept connection waits idle in the pool before it is closed.
KEEP_IDLE = 30.0


class Failure(Exception):
    """A try that failed before the client could be answered: ``kind`` is "connect" (the
    connection was refused or not made), "timeout" (connect, first byte or idle) or "cut"
    (the upstream closed before its head or inside its body)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Connection(asyncio.Protocol):
    """One connection to an upstream; its exchange (one at a time) gets what it reads."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.transport: Optional[asyncio.Transport] = None
        self.exchange: Optional[Exchange] = None
        self.closed = False
        self.used = 0  # exchanges begun on it
        self.idle_since = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.exchange is not None:
            self.exchange.data(data)
        elif self.transport is not None:
            self.transport.close()  # bytes nobody asked for: the connection is not kept

    def eof_received(self) -> Optional[bool]:
        if self.exchange is not None:
            self.exchange.poke()
        return None

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.closed = True
        self.pool.forget(self)
        if self.exchange is not None:
            self.exchange.lost(exc)

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class Pool:
    """An upstream's connections in one worker: at most ``max_connections`` at once (a request
    past them waits for one), the idle ones kept for the next request."""

    def __init__(self, cfg: UpstreamConfig, ssl_context: Optional[ssl.SSLContext] = None) -> None:
        target = urlsplit(cfg.url)
        self.cfg = cfg
        self.tls = (ssl_context or ssl.create_default_context()) if target.scheme == "https" else None
        self.host = target.hostname or ""
        self.port = target.port or (443 if self.tls else 80)
        self.netloc = target.netloc
        self.base = target.path.rstrip("/")
        self.idle: Deque[Connection] = deque()
        self._slots: Optional[asyncio.Semaphore] = None  # made in the serving loop

    @property
    def slots(self) -> asyncio.Semaphore:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.cfg.max_connections)
        return self._slots

    def forget(self, conn: Connection) -> None:
        try:
            self.idle.remove(conn)
        except ValueError:
            pass

    def release(self, conn: Connection) -> None:
        if conn.closed or self.cfg.max_connections <= len(self.idle):
            conn.close()
            return
        conn.exchange = None
        conn.idle_since = time.monotonic()
        self.idle.append(conn)

    def close(self) -> None:
        while self.idle:
            self.idle.popleft().close()

    async def connection(self) -> Connection:
        """A kept connection, else a new one (``Failure`` when it cannot be made in time)."""
        now = time.monotonic()
        while self.idle:
            conn = self.idle.pop()
            if not conn.closed and now - conn.idle_since < KEEP_IDLE:
                return conn
            conn.close()
        loop = asyncio.get_running_loop()
        conn = Connection(self)
        try:
            made = loop.create_connection(lambda: conn, self.host, self.port, ssl=self.tls)
            await asyncio.wait_for(made, self.cfg.connect_timeout)
        except asyncio.TimeoutError:
            raise Failure("timeout", "the upstream's connection was not made in time") from None
        except (OSError, ssl.SSLError) as e:
            raise Failure("connect", f"the upstream could not be reached: {e}") from None
        return conn

    def request(self, path: str, body: bytes, headers: List[Tuple[str, str]]) -> bytes:
        lines = [f"POST {self.base}{path} HTTP/1.1", f"host: {self.netloc}", "content-type: application/json",
                 f"content-length: {len(body)}", "accept-encoding: identity", "connection: keep-alive"]  # fmt: skip
        lines += [f"{k}: {v}" for k, v in headers]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body

    async def open(self, path: str, body: bytes, headers: List[Tuple[str, str]]) -> Exchange:
        """Sends the request; returns once the response's head is read. ``Failure`` for a
        connection refused, a timeout or a close before the head (the caller holds a slot of
        ``slots`` and must ``stop()`` the exchange)."""
        request = self.request(path, body, headers)
        for _ in range(2):
            conn = await self.connection()
            reused = conn.used > 0
            ex = Exchange(conn, request, self)
            try:
                # Awaited as is (no shield: one loop turn less before the first byte); a
                # cancelled wait cancels the future, which every use of it allows for.
                await ex.head
            except Failure as e:
                if reused and e.kind == "cut" and not ex.got_bytes:
                    continue  # a kept connection closed by the upstream meanwhile: once more
                raise
            except BaseException:
                ex.stop()
                raise
            return ex
        raise Failure("cut", "the upstream closed the connection before it answered")


class Exchange:
    """One request on one connection. ``head`` resolves once the response's status and
    header fields are read; every piece of body goes to ``sink`` as it is read (to ``early``
    before a sink is set); ``end`` resolves when the body ended, or with the error that ended
    it (a ``Failure``, or the sink's own error)."""

    def __init__(self, conn: Connection, request: bytes, pool: Pool) -> None:
        loop = asyncio.get_running_loop()
        self.loop = loop
        self.conn = conn
        self.pool = pool
        self.reader = ssewire.HTTPResponseReader()
        self.head: asyncio.Future[None] = loop.create_future()
        self.end: asyncio.Future[None] = loop.create_future()
        self.sink: Optional[Callable[[bytes], None]] = None
        self.early: List[bytes] = []
        self.got_bytes = False
        self.paused = False
        self._wake: Optional[asyncio.Future[None]] = None
        self.last = loop.time()
        cfg = pool.cfg
        self._timer: Optional[asyncio.TimerHandle] = loop.call_later(cfg.first_byte_timeout, self._expire)
        conn.exchange = self
        conn.used += 1
        if conn.transport is None or conn.closed:
            self.stop(Failure("cut", "the upstream closed the connection"))
        else:
            conn.transport.write(request)

    def _expire(self) -> None:
        """The first byte or a piece of body took too long: a timeout, unless something came
        since the timer was set (then it is set again for the rest)."""
        cfg = self.pool.cfg
        if not self.got_bytes:
            self.stop(Failure("timeout", "the upstream did not answer in time"))
            return
        if self.paused:  # the gateway stopped reading (a slow client): no silence of the upstream's
            self.last = self.loop.time()
        left = self.last + cfg.idle_timeout - self.loop.time()
        if left <= 0:
            self.stop(Failure("timeout", "the upstream's stream was silent too long"))
        else:
            self._timer = self.loop.call_later(left, self._expire)

    def data(self, data: bytes) -> None:
        if self.end.done():
            return
        if not self.got_bytes:
            self.got_bytes = True
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self.loop.call_later(self.pool.cfg.idle_timeout, self._expire)
        self.last = self.loop.time()
        try:
            body = self.reader.feed(data)
            if not self.head.done() and self.reader.head_complete:
                self.head.set_result(None)
            if body:
                if self.sink is None:
                    self.early.append(body)
                else:
                    self.sink(body)
            if self.reader.body_complete:
                self.stop()
        except ssewire.HTTPProtocolError as error:
            self.stop(Failure("cut", f"the upstream's answer is no HTTP/1.1 response: {error}"))
        except Exception as error:  # the sink's
            self.stop(error)

    def lost(self, exc: Optional[Exception]) -> None:
        if self.end.done():
            return
        why = f"{type(exc).__name__}: {exc}" if exc is not None else "closed"
        if exc is None:
            try:
                self.reader.finish()  # a close inside the head or a framed body: an error
            except ssewire.HTTPProtocolError as error:
                why = f"HTTPProtocolError: {error}"
            else:
                if self.reader.body_complete:  # a body delimited by the close: it ended well
                    self.stop()
                    return
        if self.head.done():
            self.stop(Failure("cut", f"the upstream's answer was cut off before its end ({why})"))
        else:
            self.stop(Failure("cut", f"the upstream closed the connection before it answered ({why})"))

    def reusable(self) -> bool:
        r = self.reader
        if r.http_version != "HTTP/1.1" or r.framing not in ("length", "chunked", "none"):
            return False
        return "close" not in str(r.header("connection", "")).lower()

    def stop(self, error: Optional[BaseException] = None) -> None:
        """Ends the request (``error``: why, when it did not end well); the connection goes
        back to the pool when the answer ended whole, else it is closed."""
        if self.end.done():
            return
        if self._timer is not None:
            self._timer.cancel()
        for future in (self.head, self.end):
            if future.done():
                continue
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)
                future.exception()  # marked retrieved: the caller may not await both
        self.poke()
        conn = self.conn
        if conn.exchange is self:
            conn.exchange = None
            if error is None and self.reader.body_complete and self.reusable():
                if self.paused and conn.transport is not None:
                    self.paused = False
                    conn.transport.resume_reading()
                self.pool.release(conn)
            else:
                conn.close()

    def failed(self) -> bool:
        """The request ended, and not with the end of the body."""
        return self.end.done() and self.end.exception() is not None

    def pause(self) -> None:
        """The client's socket is full: stop reading the upstream, wake the handler."""
        if self.conn.transport is not None and not self.end.done():
            self.conn.transport.pause_reading()
            self.paused = True
            self.poke()

    def resume(self) -> None:
        if self.conn.transport is not None and not self.end.done() and self.paused:
            self.paused = False
            self.conn.transport.resume_reading()

    def poke(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def wait(self) -> None:
        """Returns when the request has ended, or its reading was paused by ``pause()``."""
        if self.end.done() or self.paused:
            return
        self._wake = self.loop.create_future()
        await self._wake
