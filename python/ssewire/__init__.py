"""ssewire: the fastest correct way for Python to read the Server-Sent Events of LLM APIs.

A Rust core frames ``text/event-stream`` bodies exactly as the WHATWG spec says; push bytes in
as they arrive, get events out::

    import ssewire

    parser = ssewire.SSEParser()
    for event in parser.iter(response.iter_bytes()):   # finish() is called at the end
        print(event.event, event.data)
"""

from ssewire._api import AccumulateError, aaccumulate, accumulate, detect_dialect
from ssewire._core import (
    DEFAULT_MAX_EVENT_SIZE,
    ChatChunk,
    ChatCompletionAccumulator,
    CohereEvent,
    ConcurrentUseError,
    ConverseEvent,
    ErrorItem,
    Event,
    EventStreamMessage,
    EventTooLargeError,
    GeminiChunk,
    HTTPResponseReader,
    MessageAccumulator,
    MessageEvent,
    OllamaChunk,
    PartialJSON,
    ResponseAccumulator,
    ResponseEvent,
    StreamError,
    ToolCallDelta,
    __version__,
    encode_event,
    encode_eventstream_message,
)
from ssewire._errors import HTTPProtocolError, HTTPStatusError, RequestError
from ssewire._protocol import StreamProtocol
from ssewire._reading import (
    ChatCompletionStream,
    CohereStream,
    ConverseStream,
    EventStreamParser,
    GeminiStream,
    MessagesStream,
    OllamaStream,
    ResponsesStream,
    SSEParser,
)
from ssewire._request import ErrorTranslation, RequestTranslation, translate_error, translate_request
from ssewire._translate import Translator, translate

__all__ = [
    "AccumulateError",
    "ChatChunk",
    "ChatCompletionAccumulator",
    "ChatCompletionStream",
    "CohereEvent",
    "CohereStream",
    "ConcurrentUseError",
    "ConverseEvent",
    "ConverseStream",
    "DEFAULT_MAX_EVENT_SIZE",
    "ErrorItem",
    "HTTPProtocolError",
    "HTTPResponseReader",
    "HTTPStatusError",
    "ErrorTranslation",
    "Event",
    "EventStreamMessage",
    "EventStreamParser",
    "EventTooLargeError",
    "GeminiChunk",
    "GeminiStream",
    "MessageAccumulator",
    "MessageEvent",
    "MessagesStream",
    "OllamaChunk",
    "OllamaStream",
    "PartialJSON",
    "RequestError",
    "RequestTranslation",
    "ResponseAccumulator",
    "ResponseEvent",
    "ResponsesStream",
    "SSEParser",
    "StreamError",
    "StreamProtocol",
    "ToolCallDelta",
    "Translator",
    "__version__",
    "aaccumulate",
    "accumulate",
    "detect_dialect",
    "encode_event",
    "encode_eventstream_message",
    "translate",
    "translate_error",
    "translate_request",
]
