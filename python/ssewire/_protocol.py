"""``StreamProtocol``: an ``asyncio.Protocol`` that feeds a connection's bytes to a stream as
``data_received`` gets them, for code that reads raw sockets (``loop.create_connection``,
``loop.connect_accepted_socket``) instead of going through an HTTP client.

Two modes:

- HTTP (the default when a ``request`` is sent, or ``http=True``): the connection carries an
  HTTP/1.1 response. The Rust ``HTTPResponseReader`` reads its status line and headers and
  de-frames its body (chunked, ``Content-Length`` or delimited by the close), and only the
  body's bytes reach the stream. ``status`` / ``reason`` / ``headers`` are set once the head is
  read; the stream is finished, and the connection closed, when the body ends (a keep-alive
  server need not close it). A non-2xx status makes ``wait()`` raise ``HTTPStatusError`` after
  the body was fed (so ``stream.error`` says what the server said). Bytes that are not an
  HTTP/1.1 response raise ``HTTPProtocolError``. TLS comes from asyncio (``ssl=``).
- Raw (``http=False``): the bytes *are* the event stream (what follows an HTTP head your own
  code consumed).

Each chunk of body is one ``feed`` (or one ``consume`` when no ``on_item`` is given: no item
objects at all); at the end ``finish()`` is called and ``wait()`` returns the stream, with
``done`` / ``error`` / ``result()`` final.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, List, Optional, Tuple

from ssewire import _core, _errors

__all__ = ["StreamProtocol"]


class StreamProtocol(asyncio.Protocol):
    """Feeds a connection's bytes to ``stream`` (any ssewire stream or ``SSEParser``) and
    passes each decoded item to ``on_item``.

    - ``on_item=None``: a dialect stream only *consumes* the bytes (nothing is built; read
      ``result()`` at the end); an ``SSEParser`` feeds and drops its events.
    - ``request``: bytes written once the connection is made (an HTTP request; send no
      ``Accept-Encoding``, or ``identity``: a compressed body is refused, not parsed).
    - ``http``: read an HTTP/1.1 response (status line, headers, chunked / ``Content-Length`` /
      close-delimited body) and feed only its body; ``None`` (the default) means "when a
      ``request`` is given". ``status``, ``reason`` and ``headers`` are then set once the head
      is read; ``http`` is then the ``HTTPResponseReader`` (``trailers``, ``framing``, ...).
      ``max_head_size`` bounds the head and the trailer section (``HTTPProtocolError`` past it).
    - ``await protocol.wait()``: returns the stream once the body ended (HTTP: its last chunk
      or byte; raw: the peer closed) and ``finish()`` has run (its items go to ``on_item``
      too). HTTP: a non-2xx status raises ``HTTPStatusError`` instead (the body was fed, the
      stream finished: ``exc.stream.error`` holds the server's error); bytes that are not an
      HTTP/1.1 response raise ``HTTPProtocolError``. If the connection was lost with an error,
      that ``OSError`` is raised, and the stream is still finished. If ``feed`` or ``on_item``
      raises (``EventTooLargeError``, or the callback's own error; a ``StopIteration`` comes
      out as a ``RuntimeError`` caused by it, as in generators), the connection is aborted
      and ``wait()`` raises that exception; the stream is left as it was, not finished.

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
        max_head_size: int = _core.DEFAULT_MAX_HEAD_SIZE,
    ) -> None:
        self.stream = stream
        self.on_item = on_item
        self.request = request
        self.transport: Optional[asyncio.BaseTransport] = None
        if http is None:
            http = request is not None
        self.http: Optional[_core.HTTPResponseReader] = (
            _core.HTTPResponseReader(max_head_size=max_head_size) if http else None
        )
        #: The response's status code, reason and headers (HTTP mode), once its head is read.
        self.status: Optional[int] = None
        self.reason: Optional[str] = None
        self.headers: List[Tuple[str, str]] = []
        # Without on_item: consume (nothing built) where the stream can, else feed and drop.
        self._take: Callable[[bytes], object] = getattr(stream, "consume", None) or stream.feed
        self._finished: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        if self.request:
            transport.write(self.request)  # type: ignore[attr-defined]

    def _body(self, data: bytes) -> None:
        if not data:
            return
        on_item = self.on_item
        if on_item is None:
            self._take(data)
        else:
            for item in self.stream.feed(data):
                on_item(item)

    def data_received(self, data: bytes) -> None:
        if self._finished.done():
            return
        try:
            reader = self.http
            if reader is None:
                self._body(data)
                return
            try:
                body = reader.feed(data)
            except _errors.HTTPProtocolError as error:
                # The body bytes before the bad framing reach the stream, as they would have
                # had the reads been cut just before it.
                self._body(error.body)
                raise
            if self.status is None and reader.status is not None:
                self.status, self.reason, self.headers = reader.status, reader.reason, reader.headers
                _check_content_coding(reader)
            self._body(body)
            if reader.body_complete:
                self._end(None)
                if self.transport is not None:
                    self.transport.close()
        except Exception as exc:
            self._fail(exc)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        transport = self.transport
        if transport is not None and not transport.is_closing():
            # The peer closed: mark our side closed too (Python 3.9's TLS transport does not
            # by itself), so `is_closing()` tells the same on every version.
            transport.close()
        if self._finished.done():
            return
        if self.http is not None and exc is None:
            try:
                self.http.finish()  # a close inside the head or a framed body: an error
            except Exception as error:
                self._finish_stream()
                self._finished.set_exception(error)
                return
        self._end(exc)

    def _finish_stream(self) -> Optional[BaseException]:
        try:
            items = self.stream.finish()
            if self.on_item is not None:
                for item in items:
                    self.on_item(item)
        except Exception as error:
            return _settable(error)
        return None

    def _end(self, exc: Optional[Exception]) -> None:
        error = self._finish_stream()
        if error is not None:
            self._finished.set_exception(error)
        elif exc is not None:
            self._finished.set_exception(exc)
        elif self.status is not None and not 200 <= self.status < 300:
            self._finished.set_exception(
                _errors.HTTPStatusError(self.status, self.reason or "", self.headers, self.stream)
            )
        else:
            self._finished.set_result(self.stream)

    def _fail(self, exc: Exception) -> None:
        self._finished.set_exception(_settable(exc))
        if self.transport is not None:
            self.transport.abort()  # type: ignore[attr-defined]

    async def wait(self) -> Any:
        """Waits for the end of the stream; returns the stream (see the class docstring)."""
        return await asyncio.shield(self._finished)


def _check_content_coding(reader: _core.HTTPResponseReader) -> None:
    """A body in a content coding (gzip, br, ...) is not an event stream: refused, before any
    of it reaches the stream, rather than parsed as garbage."""
    coding = reader.header("content-encoding", "")
    if any(c.strip().lower() not in ("", "identity") for c in coding.split(",")):
        raise _errors.HTTPProtocolError(
            f"unsupported content coding {coding[:40]!r}: request the body uncompressed "
            "(no Accept-Encoding, or Accept-Encoding: identity)",
            "unsupported",
        )


def _settable(exc: BaseException) -> BaseException:
    """``exc``, or for a ``StopIteration`` (which a future refuses) a ``RuntimeError`` caused
    by it, as generators turn one (PEP 479)."""
    if isinstance(exc, StopIteration):
        wrapped = RuntimeError(f"StopIteration raised by a callback: {exc!r}")
        wrapped.__cause__ = exc
        return wrapped
    return exc
