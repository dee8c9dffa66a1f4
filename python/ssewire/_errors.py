"""The exceptions of ssewire.

They are plain Python classes (the Rust core creates them through ``ssewire._core``, which
re-exports them) rather than Rust pyclasses: a pyclass extending ``BaseException`` cannot take
keyword arguments (``BaseException.__init__`` refuses them) and does not pickle, and both
matter for exceptions that cross process pools and get re-raised by user code.
"""

from __future__ import annotations

from typing import Any, Optional


class StreamError(Exception):
    """An error the server sent inside (or instead of) an event stream, or a stream that ended
    before its terminal marker (``code == "incomplete_stream"``, a retry condition).

    Streams record it on ``.error``; they never raise it. ``raise stream.error`` works.

    Attributes: ``message`` (str), ``type`` (the error's type as sent, e.g.
    ``"overloaded_error"``, or None), ``code`` (as sent: a str, an int, or None), ``raw`` (the
    decoded JSON document that carried the error, ``{}`` when there was none).
    """

    def __init__(
        self,
        message: str,
        type: Optional[Any] = None,
        code: Optional[Any] = None,
        raw: Optional[dict[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.type = type
        self.code = code
        self.raw: dict[str, Any] = {} if raw is None else raw

    def __str__(self) -> str:
        details = [f"{name}={value}" for name, value in (("type", self.type), ("code", self.code)) if value is not None]
        return f"{self.message} ({', '.join(details)})" if details else self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, type={self.type!r}, code={self.code!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.type, self.code, self.raw), self.__dict__)


class EventTooLargeError(ValueError):
    """One event grew past ``max_event_size``.

    The parser dropped that event, skipped the rest of it (up to the blank line that would
    have dispatched it) and kept going: it is ready for more input. ``events`` holds every other
    event (or decoded item) the failing call produced, so nothing else is lost.

    Attributes: ``limit`` (the configured limit, bytes), ``size`` (how large the event had
    become when it crossed the limit), ``events`` (list).
    """

    def __init__(self, limit: int, size: int, events: Optional[list[Any]] = None) -> None:
        super().__init__(
            f"event larger than max_event_size={limit} bytes (reached {size} bytes); "
            "it was dropped and parsing resumes at the next event"
        )
        self.limit = limit
        self.size = size
        self.events: list[Any] = [] if events is None else events

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.limit, self.size, self.events), self.__dict__)


class ConcurrentUseError(RuntimeError):
    """A parser or stream was called while another call on the same object was running.

    One parser (or stream) reads one response, from one thread at a time. A call that overlaps
    another call on the same object — from another thread while the first one has released the
    GIL to parse a large input, on a free-threaded build, or re-entrantly from a finalizer — is
    refused with this error and changes nothing; the running call is not disturbed. Use one
    object per stream, or a lock around a shared one.
    """


class HTTPProtocolError(ValueError):
    """The bytes read off a connection are not a readable HTTP/1.x response, or the connection
    ended before the response did (``HTTPResponseReader``, ``StreamProtocol`` in HTTP mode).

    ``kind`` says which: ``"malformed"`` (status line, header fields, chunk framing, conflicting
    ``Content-Length``), ``"too_large"`` (a head or trailer section over ``max_head_size``, a
    chunk-size line over 16 KiB), ``"incomplete"`` (the connection closed first) or
    ``"unsupported"`` (a transfer or content coding other than chunked / identity, a
    ``101 Switching Protocols``).
    """

    def __init__(self, message: str, kind: str = "malformed") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.kind), self.__dict__)


class HTTPStatusError(StreamError):
    """The server answered with a status outside 2xx (``StreamProtocol`` in HTTP mode).

    The body was still read into the stream, so ``error`` holds what the server said (the
    stream's ``StreamError``: a JSON error body, or ``not_event_stream`` for an HTML page), or
    None when its body carried no error. As a ``StreamError``: ``message`` is
    ``"HTTP <status> <reason>"`` followed by the server's message, ``type`` is ``"http_error"``,
    ``code`` the status, ``raw`` the server's error document (``{}`` without one).

    Attributes: ``status`` (int), ``reason`` (str), ``headers`` (list of ``(name, value)``),
    ``error`` (``StreamError`` or None).
    """

    def __init__(
        self,
        status: int,
        reason: str = "",
        headers: Optional[list[tuple[str, str]]] = None,
        error: Optional[StreamError] = None,
    ) -> None:
        message = f"HTTP {status} {reason}".rstrip()
        if error is not None:
            message += f": {error.message}"
        super().__init__(message, "http_error", status, None if error is None else error.raw)
        self.status = status
        self.reason = reason
        self.headers: list[tuple[str, str]] = [] if headers is None else headers
        self.error = error

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.status, self.reason, self.headers, self.error), self.__dict__)
