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
        details = [
            f"{name}={value}"
            for name, value in (("type", self.type), ("code", self.code))
            if value is not None
        ]
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
    """The bytes of a connection are not a readable HTTP/1.x response (``StreamProtocol``
    reading an HTTP reply from a raw socket, ``HTTPResponseReader``).

    ``kind`` says which: ``"malformed"`` (status line, header fields, chunk framing,
    conflicting ``Content-Length``), ``"too_large"`` (a head or trailer section over
    ``max_head_size``, more than 256 fields, a chunk-size line over 16 KiB), ``"incomplete"``
    (the connection closed inside the head or a framed body) or ``"unsupported"`` (a transfer
    or content coding other than chunked / identity, a ``101 Switching Protocols``).

    ``body``: the body bytes that the failing ``feed()`` read before the error (``b""`` when
    none), so that the body returned in all is the same however the input was cut.
    """

    def __init__(self, message: str = "", kind: str = "malformed", body: bytes = b"") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.body = body

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.kind, self.body), self.__dict__)


class HTTPStatusError(Exception):
    """``StreamProtocol`` read a complete HTTP response whose status is not 2xx. The body was
    still fed to the stream, so ``stream.error`` holds what the server said when it sent a JSON
    error (or ``not_event_stream`` for an HTML page, with its text).

    Attributes: ``status`` (int), ``reason`` (str), ``headers`` (list of (name, value)),
    ``stream`` (the stream, finished).
    """

    def __init__(self, status: int, reason: str, headers: list[tuple[str, str]], stream: Any) -> None:
        detail = getattr(getattr(stream, "error", None), "message", None)
        super().__init__(f"HTTP {status} {reason}" + (f": {detail}" if detail else ""))
        self.status = status
        self.reason = reason
        self.headers = headers
        self.stream = stream

    def __reduce__(self) -> tuple[Any, ...]:
        # The stream (a Rust object) does not pickle: a copy that crossed a process pool keeps
        # the status, reason, headers and message, with ``stream`` None.
        return (_status_error, (type(self), self.status, self.reason, self.headers, str(self)))


def _status_error(cls: Any, status: int, reason: str, headers: Any, message: str) -> Any:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.status, error.reason, error.headers, error.stream = status, reason, headers, None
    return error


class RequestError(ValueError):
    """A request body is not a request of the dialect it was said to be
    (``ssewire.translate_request``): not an object, a field of the wrong type, a tool result for
    no call.

    Attributes: ``message`` (str), ``path`` (where: a JSON path such as
    ``"$.messages[3].tool_call_id"``).
    """

    def __init__(self, message: str = "", path: str = "$") -> None:
        super().__init__(f"{message} (at {path})")
        self.message = message
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.path), self.__dict__)
