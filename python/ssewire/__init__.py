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
    ChatChunk,
    ChatCompletionStream,
    ConcurrentUseError,
    ErrorItem,
    Event,
    EventTooLargeError,
    MessageEvent,
    MessagesStream,
    ResponseEvent,
    ResponsesStream,
    SSEParser,
    StreamError,
    ToolCallDelta,
    __version__,
)
from ssewire._accumulators import ChatCompletionAccumulator
from ssewire._accumulators_messages import MessageAccumulator
from ssewire._accumulators_responses import ResponseAccumulator
from ssewire._api import AccumulateError, aaccumulate, accumulate, detect_dialect

__all__ = [
    "AccumulateError",
    "ChatChunk",
    "ChatCompletionAccumulator",
    "ChatCompletionStream",
    "ConcurrentUseError",
    "DEFAULT_MAX_EVENT_SIZE",
    "ErrorItem",
    "Event",
    "EventTooLargeError",
    "MessageAccumulator",
    "MessageEvent",
    "MessagesStream",
    "ResponseAccumulator",
    "ResponseEvent",
    "ResponsesStream",
    "SSEParser",
    "StreamError",
    "ToolCallDelta",
    "__version__",
    "aaccumulate",
    "accumulate",
    "detect_dialect",
]
