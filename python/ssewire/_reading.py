"""Reading a whole response in one loop (``iter`` / ``aiter``) and relaying it (``tap`` /
``atap``), written once for every stream class.

The public stream classes are thin Python subclasses of the Rust ones (``__slots__ = ()``: no
per-instance dict) with these methods mixed in; ``feed``, ``consume`` and ``finish`` stay in
Rust, so each chunk still costs one crossing and ``tap`` builds no item objects.

Semantics, the same for all four methods:

- Sources: any iterable of ``bytes`` / ``bytearray`` / ``memoryview`` (httpx ``iter_bytes()``,
  requests ``iter_content(None)``, aiohttp ``iter_chunked(n)`` / ``iter_any()``, a list of
  reads); a binary file object (read in blocks of up to ``READ_SIZE`` bytes with ``read1`` where
  it exists, so a socket file or an ``http.client`` response yields what has arrived, never
  lines); a single bytes-like object (one chunk). ``aiter`` / ``atap`` take an async iterable
  and also accept all of these. A ``str`` source or chunk is a ``TypeError``.
- At the end of the source, ``finish()`` is called (``iter`` / ``aiter`` yield its items too),
  so ``done``, ``error`` and ``result()`` are final when the loop ends.
- Stopping early (``break``, the generator closed or garbage-collected, the task cancelled)
  does *not* call ``finish()``: the stream stays open exactly as of the last chunk read. Its
  ``result()`` already folds that whole chunk (also the items of it that were not yielded), and
  the caller may go on feeding it or call ``finish()`` (which then records an
  ``incomplete_stream`` error if the terminal marker was not seen).
- An exception raised by the source (a dropped connection, a read timeout) propagates
  unchanged, and ``finish()`` is not called either: the stream keeps everything read before it.
"""

from __future__ import annotations

import io
import time
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterable,
    AsyncIterator,
    Iterable,
    Iterator,
    List,
    Protocol,
    TypeVar,
    Union,
)

from ssewire import _core

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = [
    "ChatCompletionStream",
    "CohereStream",
    "GeminiStream",
    "OllamaStream",
    "MessagesStream",
    "READ_SIZE",
    "ResponsesStream",
    "SSEParser",
]

#: Block size for reading a binary file object.
READ_SIZE = 65536

_Item = TypeVar("_Item")
_Chunk = TypeVar("_Chunk", bound="Union[bytes, bytearray, memoryview, Buffer]")
_BytesLike = Union[bytes, bytearray, memoryview, "Buffer"]


class _Feeds(Protocol[_Item]):
    def feed(self, data: _BytesLike, /) -> List[_Item]: ...
    def finish(self) -> List[_Item]: ...


class _Consumes(Protocol):
    def consume(self, data: _BytesLike, /) -> None: ...
    def finish(self) -> List[Any]: ...


def chunks_of(source: Any, method: str) -> Iterable[Any]:
    """The chunks of a synchronous ``source`` (see the module docstring); ``method`` names the
    caller in the ``TypeError`` for a source that is not one. Also used by ``accumulate()``."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return (source,)
    if isinstance(source, str):
        raise TypeError(
            f"{method}() takes bytes-like chunks (an iterable of them, one object, or a binary "
            "file), not str (encode the text to UTF-8, or pass response.iter_bytes())"
        )
    if isinstance(source, io.IOBase):
        read = getattr(source, "read1", None) or source.read
        return iter(lambda: read(READ_SIZE), b"")
    try:
        return iter(source)  # type: ignore[no-any-return]
    except TypeError:
        raise TypeError(
            f"{method}() takes bytes-like chunks (an iterable of them, one object, or a binary "
            f"file), not {type(source).__name__}"
        ) from None


class _Reading:
    """``iter`` / ``aiter``: items as they decode, then ``finish()``."""

    __slots__ = ()

    def iter(self: _Feeds[_Item], chunks: Union[Iterable[_BytesLike], _BytesLike]) -> Iterator[_Item]:
        """Yields the items of every chunk of ``chunks`` as it is read, then those of
        ``finish()``. See the module ``ssewire._reading`` for sources, early stops and errors."""
        feed = self.feed
        for chunk in chunks_of(chunks, "iter"):
            yield from feed(chunk)
        yield from self.finish()

    async def aiter(
        self: _Feeds[_Item],
        chunks: Union[AsyncIterable[_BytesLike], Iterable[_BytesLike], _BytesLike],
    ) -> AsyncIterator[_Item]:
        """The ``async`` form of :meth:`iter`: ``chunks`` is an async iterable (httpx
        ``aiter_bytes()``, aiohttp ``content.iter_any()``) or anything ``iter`` takes."""
        feed = self.feed
        if hasattr(chunks, "__aiter__"):
            async for chunk in chunks:
                for item in feed(chunk):
                    yield item
        else:
            for chunk in chunks_of(chunks, "aiter"):
                for item in feed(chunk):
                    yield item
        for item in self.finish():
            yield item


class _Tapping(_Reading):
    """``tap`` / ``atap``: the chunks themselves, consumed on the way, then ``finish()``."""

    __slots__ = ()

    def tap(self: _Consumes, chunks: Iterable[_Chunk]) -> Iterator[_Chunk]:
        """Yields every chunk of ``chunks`` unchanged (the same object) after consuming it (no
        items are built), then calls ``finish()``: relay the upstream bytes as they are and read
        ``result()`` / ``error`` / ``done`` at the end. See ``ssewire._reading`` for early
        stops and errors."""
        consume = self.consume
        for chunk in chunks_of(chunks, "tap"):
            consume(chunk)
            yield chunk
        self.finish()

    async def atap(
        self: _Consumes, chunks: Union[AsyncIterable[_Chunk], Iterable[_Chunk]]
    ) -> AsyncIterator[_Chunk]:
        """The ``async`` form of :meth:`tap` (httpx ``aiter_bytes()``, aiohttp
        ``content.iter_any()``, or anything ``tap`` takes)."""
        consume = self.consume
        if hasattr(chunks, "__aiter__"):
            async for chunk in chunks:
                consume(chunk)
                yield chunk
        else:
            for chunk in chunks_of(chunks, "atap"):
                consume(chunk)
                yield chunk
        self.finish()


class ConverseStream(_Tapping, _core.ConverseStream):
    __slots__ = ()
    __doc__ = _core.ConverseStream.__doc__


class SSEParser(_Reading, _core.SSEParser):
    __slots__ = ()
    __doc__ = _core.SSEParser.__doc__


class EventStreamParser(_Reading, _core.EventStreamParser):
    __slots__ = ()
    __doc__ = _core.EventStreamParser.__doc__


class ChatCompletionStream(_Tapping, _core.ChatCompletionStream):
    __slots__ = ()
    __doc__ = _core.ChatCompletionStream.__doc__


class MessagesStream(_Tapping, _core.MessagesStream):
    __slots__ = ()
    __doc__ = _core.MessagesStream.__doc__


class ResponsesStream(_Tapping, _core.ResponsesStream):
    __slots__ = ()
    __doc__ = _core.ResponsesStream.__doc__


class GeminiStream(_Tapping, _core.GeminiStream):
    __slots__ = ()
    __doc__ = _core.GeminiStream.__doc__


class OllamaStream(_Tapping, _core.OllamaStream):
    __slots__ = ()
    __doc__ = _core.OllamaStream.__doc__


class CohereStream(_Tapping, _core.CohereStream):
    __slots__ = ()
    __doc__ = _core.CohereStream.__doc__


for _cls in (
    SSEParser,
    EventStreamParser,
    ConverseStream,
    ChatCompletionStream,
    MessagesStream,
    ResponsesStream,
    GeminiStream,
    OllamaStream,
    CohereStream,
):
    _cls.__module__ = "ssewire"
del _cls
# The core makes a Translator's source stream of these classes (it imports no Python module).
# The core's clock and time.monotonic() read the same clock: one reference pair for `timing`.
_core._set_clock(time.monotonic())
_core._set_stream_classes([globals()[spec["stream_class"]] for spec in _core.DIALECTS])
