"""One-call helpers: ``accumulate()`` a whole response body, ``detect_dialect()`` of a body.

Strategy. ``accumulate()`` is a thin driver over the push API: it sniffs the dialect from the
first bytes (the Rust detector, ``translate::Sniffer``, shared with ``Translator("auto")``:
buffering at most :data:`SNIFF_LIMIT` bytes or 16 events, and only until an event decides),
then feeds every read to the dialect's Rust stream and every decoded item to the dialect's
accumulator, and returns ``result()``. The sniffer frames each read once, so sniffing costs
O(bytes held) whatever the read sizes, and the rest is O(bytes) in Rust plus O(items) in the
accumulator.

Errors are made visible with an exception that still carries the partial result:
:class:`AccumulateError` (a subclass of ``ssewire.StreamError``) is raised when the stream
carried an error (any wire form the dialect streams recognise, or a JSON error body sent
instead of a stream) or ended before its terminal marker; ``err.result`` is what was
assembled up to that point and ``err.error`` the stream's own ``StreamError``. Code that only
wants the text can therefore write ``except ssewire.StreamError as e: partial = e.result``.
"""

from __future__ import annotations

from typing import Any, AsyncIterable, Iterable, Optional, Union

from ssewire import _core
from ssewire._core import StreamError
from ssewire._reading import chunks_of

__all__ = [
    "AccumulateError",
    "DIALECTS",
    "SNIFF_LIMIT",
    "aaccumulate",
    "accumulate",
    "detect_dialect",
]

#: The dialect names ``accumulate()`` and the command line take (``"auto"`` besides): the
#: core's registry (``_core.DIALECTS``), then the generic ``"sse"``.
DIALECTS = (*(spec["name"] for spec in _core.DIALECTS), "sse")

#: ``dialect="auto"`` decides within this many bytes of input (or ``_core.SNIFF_EVENTS``
#: events): the one buffering policy of the Rust detector, which ``Translator("auto")`` and the
#: command line share. A head that has shown no decisive event by then falls back as
#: ``detect_dialect`` describes.
SNIFF_LIMIT: int = _core.SNIFF_BYTES
#: How much of a body's head ``accumulate`` keeps for its error messages.

_BytesLike = Union[bytes, bytearray, memoryview]

# --- dialect detection -----------------------------------------------------------------------
# One detector: the Rust decoders' own rules (`_core._detect_dialect`, which
# `Translator("auto")` applies too), event by event, the earliest decisive event winning.


_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


def _first_significant(head: bytes) -> bytes:
    """The first byte after a BOM and white space (``b""`` if there is none yet)."""
    if head.startswith(_BOM):
        head = head[3:]
    return head.lstrip(_WHITESPACE)[:1]


def detect_dialect(first_bytes: Union[_BytesLike, str]) -> str:
    """Tell which dialect a response body is from its first bytes.

    Returns ``"messages"``, ``"responses"``, ``"chat"``, ``"gemini"`` or ``"sse"`` (a generic
    event stream): the dialect of the earliest event that is one dialect's own, by the rules
    the dialect streams' decoders apply (the ones ``Translator("auto")`` uses too): an
    Anthropic event name or ``"type"`` (``message_start``, ``content_block_delta``, ...), a
    Responses one (``response.*``), a chat chunk (``"object":"chat.completion.chunk"`` or
    ``choices``) or ``data: [DONE]``, a Gemini chunk (``candidates``, ``usageMetadata``,
    ``promptFeedback``) or a body that is a JSON array. An event counts once it is complete
    (its blank line, or the end of ``first_bytes``). When no line decides, an error alone still points to its API:
    ``{"type":"error"...}`` is Anthropic's form (``"responses"`` if it also has a
    ``sequence_number``), and an ``"error"`` key or any other JSON body gives ``"chat"``, so
    that a dialect stream reports it as a ``StreamError``.

    ``first_bytes`` is taken as all there is: pass the first few KB of the body (the first
    event is enough for every real LLM stream). ``accumulate(dialect="auto")`` does this for
    you, buffering only until a line decides or :data:`SNIFF_LIMIT` bytes have arrived.
    """
    if isinstance(first_bytes, str):
        first_bytes = first_bytes.encode("utf-8")
    sniffer = _core._DialectSniffer()
    return sniffer.feed(memoryview(first_bytes)[: SNIFF_LIMIT + 1]) or sniffer.finish()


class AccumulateError(StreamError):
    """Raised by :func:`accumulate` when the stream carried an error or ended early.

    A subclass of ``ssewire.StreamError`` with the original error's ``message``, ``type``,
    ``code`` and ``raw`` (so ``str(err)`` reads the same), plus:

    - ``result``: the dict assembled from everything before the error (the same shape as on
      success; for a stream cut off mid-answer it holds the text received so far);
    - ``error``: the stream's own ``StreamError`` (``code == "incomplete_stream"`` when the
      input ended before the terminal marker: a retry condition);
    - ``dialect``: the dialect the body was read as.
    """

    def __init__(self, error: StreamError, result: dict, dialect: str = "") -> None:  # type: ignore[type-arg]
        super().__init__(error.message, error.type, error.code, error.raw)
        self.error = error
        self.result = result
        self.dialect = dialect

    def __reduce__(self) -> Any:
        return (AccumulateError, (self.error, self.result, self.dialect))

    def __repr__(self) -> str:
        return (
            f"AccumulateError({self.message!r}, type={self.type!r}, code={self.code!r}, "
            f"dialect={self.dialect!r})"
        )


#: The one driver of ``accumulate``, ``aaccumulate`` and the command line, in the core: sniff
#: (when asked: the Rust detector, holding the bytes until an event tells), then the dialect's
#: stream, which folds what it decodes itself (``result()``); the generic ``"sse"`` dialect
#: collects its events (``{"events": [...]}``; a body that is one JSON document is read as a
#: chat stream reads it, an input ended mid-event is ``incomplete_stream``). With
#: ``items=False`` no item object is built; ``record_too_large`` keeps oversized events'
#: errors in ``too_large`` instead of raising them; ``head`` (16 KiB) and ``size`` serve
#: diagnostics; ``error`` is the stream's error, else the first one its events carried.
_Assembly = _core._Assembly


def _outcome(asm: Any) -> dict:  # type: ignore[type-arg]
    """The result, or ``AccumulateError`` with it if the stream failed."""
    result: dict = asm.result()  # type: ignore[type-arg]
    err = asm.error
    if err is not None:
        raise AccumulateError(err, result, asm.dialect or "")
    return result


def _reads(data: Any) -> Iterable[Any]:
    iter_bytes = getattr(data, "iter_bytes", None)
    if iter_bytes is not None:  # an httpx.Response itself
        return iter_bytes()  # type: ignore[no-any-return]
    return chunks_of(data, "accumulate")


def accumulate(
    data: Union[_BytesLike, Iterable[_BytesLike]],
    dialect: str = "auto",
    *,
    max_event_size: Optional[int] = None,
    framing: Optional[str] = None,
) -> dict:  # type: ignore[type-arg]
    """Read a whole streamed response body and return the final object it assembles.

    ``data`` is the raw body: ``bytes`` / ``bytearray`` / ``memoryview``, or an iterable of
    them as it arrives (``response.iter_bytes()`` of httpx, ``iter_content(None)`` of
    requests, a list of captured reads); an ``httpx.Response`` opened with ``stream=True``
    is read through its ``iter_bytes()``. ``dialect`` is ``"chat"``, ``"messages"``,
    ``"responses"``, ``"sse"`` or ``"auto"`` (default: sniffed from the first bytes with the
    rules of :func:`detect_dialect`, buffering at most :data:`SNIFF_LIMIT` bytes).
    ``max_event_size`` is passed to the stream (default: ``ssewire.DEFAULT_MAX_EVENT_SIZE``).
    ``framing="eventstream"`` reads Amazon Bedrock's InvokeModelWithResponseStream body (each
    ``chunk`` one document of the named dialect: ``"messages"`` for Claude); by default each
    dialect's own framing (SSE; the event stream for ``"converse"``).

    Returns the dict of the dialect's accumulator: a ``chat.completion`` for ``"chat"``, a
    ``message`` for ``"messages"``, the ``response`` object for ``"responses"`` (each shaped
    like the provider's non-streaming response), and for ``"sse"``
    ``{"events": [{"event", "data", "id", "retry"}, ...]}``.

    Raises :class:`AccumulateError` (a ``StreamError``) when the stream carried an error (an
    error frame, an ``event: error``, or a JSON error body instead of a stream) or ended
    before its terminal marker (for ``"sse"``: in the middle of an event); its ``result``
    holds the partial dict and its ``error`` the stream's ``StreamError``. A frame whose JSON
    does not decode is skipped (the next frames still decode) and does not raise.
    ``EventTooLargeError`` (a ``ValueError``) propagates when an event outgrows
    ``max_event_size``; ``TypeError`` when ``data`` or a read is ``str``.
    """
    asm = _Assembly(dialect, max_event_size, items=False, framing=framing)
    feed = asm.feed
    for read in _reads(data):
        feed(read)
    asm.finish()
    return _outcome(asm)


async def aaccumulate(
    data: Union[AsyncIterable[_BytesLike], Iterable[_BytesLike], _BytesLike],
    dialect: str = "auto",
    *,
    max_event_size: Optional[int] = None,
    framing: Optional[str] = None,
) -> dict:  # type: ignore[type-arg]
    """The ``async`` form of :func:`accumulate`: ``data`` is an async iterable of bytes
    (``response.aiter_bytes()`` of httpx, ``response.content.iter_any()`` of aiohttp), or
    an ``httpx.Response`` itself (read through ``aiter_bytes()``); a plain iterable or bytes
    object is accepted too. Same result and errors."""
    asm = _Assembly(dialect, max_event_size, items=False, framing=framing)
    aiter_bytes = getattr(data, "aiter_bytes", None)
    if aiter_bytes is not None:  # an httpx.Response itself
        data = aiter_bytes()
    if hasattr(data, "__aiter__"):
        async for read in data:
            asm.feed(read)
    else:
        for read in _reads(data):
            asm.feed(read)
    asm.finish()
    return _outcome(asm)
