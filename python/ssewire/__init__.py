"""ssewire: the fastest correct way for Python to read the Server-Sent Events of LLM APIs.

A Rust core frames ``text/event-stream`` bodies exactly as the WHATWG spec says; push bytes in
as they arrive, get events out::

    import ssewire

    parser = ssewire.SSEParser()
    for chunk in response.iter_bytes():
        for event in parser.feed(chunk):
            print(event.event, event.data)
    parser.finish()
"""

from ssewire._core import (
    DEFAULT_MAX_EVENT_SIZE,
    Event,
    EventTooLargeError,
    SSEParser,
    StreamError,
    __version__,
)

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "Event",
    "EventTooLargeError",
    "SSEParser",
    "StreamError",
    "__version__",
]
