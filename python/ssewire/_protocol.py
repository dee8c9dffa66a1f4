"""``StreamProtocol``: an ``asyncio.Protocol`` that feeds a connection's bytes to a stream as
``data_received`` gets them, for code that reads raw sockets (``loop.create_connection``,
``loop.connect_accepted_socket``; TLS is asyncio's ``ssl=``) instead of going through an HTTP
client.

Two modes:

- HTTP (the default when a ``request`` is sent, or ``http=True``): the connection carries one
  HTTP/1.x response. ``HTTPResponseReader`` (Rust) reads its status line and header fields
  (``status``, ``reason``, ``headers``), skips interim 1xx responses, and de-frames the body
  (chunked, ``Content-Length`` or close-delimited); only body bytes reach the stream. The
  response ends at the end of its body: the stream is finished and the connection closed then,
  without waiting for the server to close a keep-alive connection.
- Raw (``http=False``, the default without a ``request``): the connection's bytes *are* the
  event stream (what follows an HTTP head your own code has consumed is the same thing).
  ``finish()`` runs when the peer closes the connection.

Each body piece is one ``feed`` (or one ``consume`` when no ``on_item`` is given: no item
objects at all); at the end ``finish()`` is called and ``wait()`` returns the stream, with
``done`` / ``error`` / ``result()`` final.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional

from ssewire._core import DEFAULT_MAX_HEAD_SIZE, HTTPResponseReader
from ssewire._errors import HTTPProtocolError, HTTPStatusError

__all__ = ["StreamProtocol"]


class StreamProtocol(asyncio.Protocol):
    """Feeds a connection's response body to ``stream`` (any ssewire stream or ``SSEParser``)
    and passes each decoded item to ``on_item``.

    - ``on_item=None``: a dialect stream only *consumes* the bytes (nothing is built; read
      ``result()`` at the end); an ``SSEParser`` feeds and drops its events.
    - ``request``: bytes written once the connection is made (an HTTP request: send
      ``Accept-Encoding: identity`` or none; a compressed body cannot be read).
    - ``http``: read the connection as an HTTP/1.x response (see the module docs); default:
      True when a ``request`` is given, else False (the raw mode: the bytes are the body).
      ``max_head_size`` bounds the response head (and trailers).
    - ``status``, ``reason``, ``headers`` (list of ``(name, value)``): the response's, once its
      head has arrived (``None``, ``None``, ``[]`` before, and in raw mode).
    - ``await protocol.wait()``: returns the stream once the body ended (HTTP mode) or the
      peer closed the connection (raw mode), and ``finish()`` has run (its items go to
      ``on_item`` too). It raises instead:

      - ``ssewire.HTTPStatusError`` (a ``StreamError``) for a status outside 2xx. The body was
        read into the stream all the same and the stream finished, so ``exc.error`` (the
        stream's ``error``) says what the server said: its JSON error, or
        ``not_event_stream`` for an HTML page from a proxy.
      - ``ssewire.HTTPProtocolError`` (a ``ValueError``) when the bytes are not a readable
        HTTP response (the connection is aborted; the stream is left as it was, not
        finished), or when the connection closed before the body ended (``kind ==
        "incomplete"``; the stream is finished, so it has ``incomplete_stream`` unless it was
        done).
      - the ``OSError`` the connection was lost with, the stream still finished.
      - what ``feed`` or ``on_item`` raised (``EventTooLargeError``, or the callback's own
        error): the connection is aborted and the stream left as it was, not finished.

    Must be created while the event loop runs (inside the protocol factory given to
    ``loop.create_connection``, which is where it is normally built).
    """

    def __init__(
        self,
        stream: Any,
        on_item: Optional[Callable[[Any], object]] = None,
        *,
        request: Optional[bytes] = None,
        http: Optional[bool] = None,
        max_head_size: int = DEFAULT_MAX_HEAD_SIZE,
    ) -> None:
        self.stream = stream
        self.on_item = on_item
        self.request = request
        self.transport: Optional[asyncio.BaseTransport] = None
        if http is None:
            http = request is not None
        self.reader: Optional[HTTPResponseReader] = (
            HTTPResponseReader(max_head_size=max_head_size) if http else None
        )
        self.status: Optional[int] = None
        self.reason: Optional[str] = None
        self.headers: list[tuple[str, str]] = []
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
            reader = self.reader
            if reader is None:
                self._deliver(data)
                return
            body = reader.feed(data)
            if self.status is None and reader.head_complete:
                self._read_head(reader)
            if body:
                self._deliver(body)
            if reader.body_complete:
                self._end(None)
                if self.transport is not None:
                    self.transport.close()
        except Exception as exc:
            self._fail(exc)

    def _deliver(self, data: bytes) -> None:
        on_item = self.on_item
        if on_item is None:
            self._take(data)
        else:
            for item in self.stream.feed(data):
                on_item(item)

    def _read_head(self, reader: HTTPResponseReader) -> None:
        self.status = reader.status
        self.reason = reader.reason
        self.headers = reader.headers
        coding = reader.header("content-encoding", "")
        codings = [c.strip().lower() for c in coding.split(",") if c.strip()]
        if any(c != "identity" for c in codings):
            raise HTTPProtocolError(
                f"unsupported content coding {coding[:40]!r}: request the body uncompressed "
                "(no Accept-Encoding, or Accept-Encoding: identity)",
                "unsupported",
            )

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self._finished.done():
            return
        if exc is None and self.reader is not None:
            try:
                self.reader.finish()  # a close-delimited body ends here
            except HTTPProtocolError as error:  # the response was cut short
                exc = error
        self._end(exc)

    def _end(self, exc: Optional[BaseException]) -> None:
        """Finishes the stream and settles ``wait()``."""
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
        elif self.status is not None and not 200 <= self.status <= 299:
            self._finished.set_exception(
                HTTPStatusError(
                    self.status,
                    self.reason or "",
                    self.headers,
                    getattr(self.stream, "error", None),
                )
            )
        else:
            self._finished.set_result(self.stream)

    def _fail(self, exc: Exception) -> None:
        self._finished.set_exception(exc)
        if self.transport is not None:
            self.transport.abort()  # type: ignore[attr-defined]

    async def wait(self) -> Any:
        """Waits for the end of the response; returns the stream (see the class docstring)."""
        return await asyncio.shield(self._finished)
