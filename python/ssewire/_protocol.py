"""``StreamProtocol``: an ``asyncio.Protocol`` that feeds a connection's bytes to a stream as
``data_received`` gets them, for code that reads raw sockets (``loop.create_connection``,
``loop.connect_accepted_socket``) instead of going through an HTTP client.

It reads a connection whose bytes *are* the event stream (what follows an HTTP head your own
code has consumed is the same thing: hand the rest to ``stream.feed`` and switch protocols).
Each ``data_received`` is one ``feed`` (or one ``consume`` when no ``on_item`` is given: no
item objects at all); at end of file ``finish()`` is called and ``wait()`` returns the stream,
with ``done`` / ``error`` / ``result()`` final.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional

__all__ = ["StreamProtocol"]


class StreamProtocol(asyncio.Protocol):
    """Feeds every ``data_received`` chunk to ``stream`` (any ssewire stream or
    ``SSEParser``) and passes each decoded item to ``on_item``.

    - ``on_item=None``: a dialect stream only *consumes* the bytes (nothing is built; read
      ``result()`` at the end); an ``SSEParser`` feeds and drops its events.
    - ``request``: bytes written once the connection is made (e.g. an HTTP request).
    - ``await protocol.wait()``: returns the stream once the peer closed the connection and
      ``finish()`` has run (its items go to ``on_item`` too). If the connection was lost with
      an error, that ``OSError`` is raised instead, and the stream is still finished. If
      ``feed`` or ``on_item`` raises (``EventTooLargeError``, or the callback's own error), the
      connection is aborted and ``wait()`` raises that exception; the stream is left as it
      was, not finished.

    Must be created while the event loop runs (inside the protocol factory given to
    ``loop.create_connection``, which is where it is normally built).
    """

    def __init__(
        self,
        stream: Any,
        on_item: Optional[Callable[[Any], object]] = None,
        *,
        request: Optional[bytes] = None,
    ) -> None:
        self.stream = stream
        self.on_item = on_item
        self.request = request
        self.transport: Optional[asyncio.BaseTransport] = None
        # Without on_item: consume (nothing built) where the stream can, else feed and drop.
        self._take: Callable[[bytes], object] = getattr(stream, "consume", None) or stream.feed
        self._finished: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        if self.request:
            transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        if self._finished.done():
            return
        try:
            on_item = self.on_item
            if on_item is None:
                self._take(data)
            else:
                for item in self.stream.feed(data):
                    on_item(item)
        except Exception as exc:
            self._fail(exc)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self._finished.done():
            return
        try:
            items = self.stream.finish()
            if self.on_item is not None:
                for item in items:
                    self.on_item(item)
        except Exception as error:
            self._finished.set_exception(error)
            return
        if exc is not None:
            self._finished.set_exception(exc)
        else:
            self._finished.set_result(self.stream)

    def _fail(self, exc: Exception) -> None:
        self._finished.set_exception(exc)
        if self.transport is not None:
            self.transport.abort()  # type: ignore[attr-defined]

    async def wait(self) -> Any:
        """Waits for the end of the stream; returns the stream (see the class docstring)."""
        return await asyncio.shield(self._finished)
