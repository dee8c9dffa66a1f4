"""Serving a gateway app: a runner whose connections get a deadline for their first request
head (``runner``), ``serve`` until cancelled, and the event loop (``new_loop``)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Optional

from aiohttp import web

from ssewire.gateway._server import HEAD_TIMEOUT

#: How long the rest of a body the gateway refused (too large, too slow) is read and dropped
#: before the connection closes (aiohttp's default is 10 s).
LINGER = 1.0


class _HeadWatch(asyncio.Protocol):
    """A connection's protocol with a deadline for its first request head: closed when no
    blank line ending a head has arrived within ``timeout`` (a client trickling its head byte
    by byte). Everything else goes to aiohttp's own protocol as it is (later heads on a kept
    connection: aiohttp's keep-alive timeout, set to the same value, where it has one)."""

    def __init__(self, inner: Any, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self.tail = b""
        self.done = False
        self.timer: Optional[asyncio.TimerHandle] = None
        self.transport: Optional[asyncio.BaseTransport] = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.timer = asyncio.get_running_loop().call_later(self.timeout, self._expire)
        self.inner.connection_made(transport)

    def _expire(self) -> None:
        if not self.done and self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if not self.done:
            seen = self.tail + data[:65536]
            if b"\r\n\r\n" in seen or b"\n\n" in seen:
                self.done = True
                if self.timer is not None:
                    self.timer.cancel()
            self.tail = seen[-3:]
        self.inner.data_received(data)

    def eof_received(self) -> Optional[bool]:
        return self.inner.eof_received()  # type: ignore[no-any-return]

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class _Runner(web.AppRunner):
    """``web.AppRunner`` whose connections get a deadline for their first request head."""

    @property
    def server(self) -> Any:
        inner = super().server
        if inner is None:
            return None
        timeout = self.app[HEAD_TIMEOUT]
        return lambda: _HeadWatch(inner(), timeout)


def runner(app: web.Application, **options: Any) -> web.AppRunner:
    """An ``aiohttp.web.AppRunner`` for a gateway app, with its ``head_timeout``: a connection
    that has not sent a whole request head by then (a client trickling it byte by byte) is
    closed; the unread body of a refused request is not waited for past ``LINGER``."""
    return _Runner(app, keepalive_timeout=app[HEAD_TIMEOUT], lingering_time=LINGER, **options)


async def serve(app: web.Application, host: str, port: int) -> None:
    """Serves a gateway app on ``host:port`` until cancelled."""
    run = runner(app)
    await run.setup()
    try:
        await web.TCPSite(run, host, port).start()
        print(f"ssewire gateway: serving on http://{host}:{port}", file=sys.stderr, flush=True)
        await asyncio.Event().wait()
    finally:
        await run.cleanup()


def new_loop(name: str = "auto") -> asyncio.AbstractEventLoop:
    """An event loop: uvloop's where it is installed (``auto``) or asked for, else asyncio's."""
    if name != "asyncio":
        try:
            import uvloop
        except ImportError:
            if name == "uvloop":
                raise
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()
