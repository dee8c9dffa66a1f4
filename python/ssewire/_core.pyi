"""Type stubs for the Rust extension module ``ssewire._core`` (hand-written, checked with
``python -m mypy.stubtest ssewire._core``)."""

from typing import Any, Final, Optional, Union, final

from typing_extensions import Buffer

__version__: Final[str]
DEFAULT_MAX_EVENT_SIZE: Final[int]

_Bytes = Union[bytes, bytearray, memoryview, Buffer]

class EventTooLargeError(ValueError):
    """An event grew past ``max_event_size``; it was dropped and parsing resumed after it.
    ``events`` holds everything else the failing call produced."""

    @property
    def limit(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def events(self) -> list[Any]: ...
    def __init__(self, limit: int, size: int, events: Optional[list[Any]] = None) -> None: ...

class StreamError(Exception):
    """An error sent by the server in (or instead of) a stream, or a stream that ended before
    its terminal marker (``code == "incomplete_stream"``)."""

    @property
    def message(self) -> str: ...
    @property
    def type(self) -> Optional[Any]: ...
    @property
    def code(self) -> Optional[Any]: ...
    @property
    def raw(self) -> dict[str, Any]: ...
    def __init__(
        self,
        message: str,
        type: Optional[Any] = None,
        code: Optional[Any] = None,
        raw: Optional[dict[str, Any]] = None,
    ) -> None: ...

@final
class Event:
    """One server-sent event."""

    @property
    def event(self) -> str: ...
    @property
    def data(self) -> str: ...
    @property
    def id(self) -> Optional[str]: ...
    @property
    def retry(self) -> Optional[int]: ...
    def __init__(
        self,
        data: str,
        event: Optional[str] = None,
        id: Optional[str] = None,
        retry: Optional[int] = None,
    ) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class SSEParser:
    """Push-based WHATWG event-stream parser: ``feed()`` bytes, get ``Event``s."""

    def __init__(self, *, max_event_size: int = ...) -> None: ...
    def feed(self, data: _Bytes) -> list[Event]: ...
    def finish(self) -> list[Event]: ...
    @property
    def last_event_id(self) -> str: ...
    @property
    def pending(self) -> bool: ...
    @property
    def retry(self) -> Optional[int]: ...
    @property
    def max_event_size(self) -> int: ...
