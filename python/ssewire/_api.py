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

from typing import Any, AsyncIterable, Dict, Iterable, List, Optional, Union

from ssewire import _core
from ssewire._core import EventTooLargeError, SSEParser, StreamError
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
_HEAD_KEPT = 16 * 1024

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


# --- the generic "sse" dialect ---------------------------------------------------------------


class _EventStream:
    """``SSEParser`` behind the dialect streams' interface (``done``, ``error``).

    ``done`` is true when the input did not end in the middle of an event, ``error`` an
    ``incomplete_stream`` ``StreamError`` when it did. A body whose first significant byte is
    ``{`` or ``[`` is a JSON document, not an event stream: as the dialect streams do, it is
    reported as a ``StreamError`` (the error it carries, or ``invalid_response``); the body is
    handed to a Rust dialect stream so both read it with the same rules.
    """

    __slots__ = ("_kwargs", "_target", "_lead", "done", "error")

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._target: Any = None  # SSEParser or, for a JSON body, ChatCompletionStream
        self._lead: List[bytes] = []  # a BOM / white space seen before the first decision
        self.done = False
        self.error: Optional[StreamError] = None

    def feed(self, data: _BytesLike) -> List[Any]:
        target = self._target
        if target is None:
            chunk = bytes(data)
            lead = b"".join(self._lead) + chunk
            first = _first_significant(lead)
            if not first:
                self._lead = [lead]
                return []
            self._lead = []
            if first in (b"{", b"["):
                target = self._target = _core.ChatCompletionStream(**self._kwargs)
            else:
                target = self._target = SSEParser(**self._kwargs)
            data = lead
        return target.feed(data)  # type: ignore[no-any-return]

    def finish(self) -> List[Any]:
        target = self._target
        if target is None:  # nothing but white space: an empty stream
            self.done = True
            return []
        items: List[Any] = target.finish()
        if isinstance(target, SSEParser):
            self.done = not target.pending
            if target.pending:
                self.error = StreamError(
                    "the stream ended in the middle of an event",
                    "incomplete_stream",
                    "incomplete_stream",
                )
        else:
            self.error = target.error
        return items


class _EventListAccumulator:
    """The "accumulator" of the ``sse`` dialect: the list of events, as dicts."""

    __slots__ = ("error", "errors", "_events")

    def __init__(self) -> None:
        self.error: Optional[StreamError] = None
        self.errors: List[Any] = []
        self._events: List[Any] = []

    def add(self, item: Any) -> None:
        kind = getattr(item, "kind", None)
        if kind is not None:  # an ErrorItem (from a JSON body)
            self.errors.append(item)
            if kind == "stream_error" and self.error is None:
                self.error = item.error
            return
        self._events.append(item)

    def add_all(self, items: Iterable[Any]) -> None:
        for item in items:
            self.add(item)

    def result(self) -> dict:  # type: ignore[type-arg]
        return {
            "events": [{"event": e.event, "data": e.data, "id": e.id, "retry": e.retry} for e in self._events]
        }


# --- dialect -> (stream, accumulator) --------------------------------------------------------

_STREAM_CLASSES = {spec["name"]: spec["stream_class"] for spec in _core.DIALECTS}


def _new_stream(dialect: str, max_event_size: Optional[int], framing: Optional[str] = None) -> Any:
    kwargs: Dict[str, Any] = {} if max_event_size is None else {"max_event_size": max_event_size}
    if dialect == "sse":
        return _EventStream(**kwargs)
    return getattr(_core, _STREAM_CLASSES[dialect])(framing=framing, **kwargs)


def _check_framing(dialect: str, framing: Optional[str]) -> Optional[str]:
    if framing is None:
        return None
    if framing not in ("sse", "eventstream"):
        raise ValueError(f"unknown framing {framing!r}: expected 'sse' or 'eventstream'")
    if framing == "eventstream" and dialect in ("auto", "sse"):
        raise ValueError(
            "framing='eventstream' needs the dialect of the model's chunks named "
            "(dialect='messages' for Claude on Bedrock's InvokeModelWithResponseStream)"
        )
    return framing


def _check_dialect(dialect: str) -> str:
    if dialect != "auto" and dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}: expected 'auto', " + ", ".join(map(repr, DIALECTS)))
    return dialect


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


class _Assembly:
    """Push-style driver shared by ``accumulate``, ``aaccumulate`` and the command line:
    sniff (when asked), then the dialect stream, which folds what it decodes itself (its
    ``result()``). With ``items=False`` (``accumulate``) the stream only consumes: no item
    object is built; with ``items=True`` (the command line) ``feed``/``finish`` return the
    decoded items (empty while sniffing). The ``sse`` dialect collects its events instead."""

    __slots__ = (
        "dialect",
        "stream",
        "acc",
        "head",
        "size",
        "too_large",
        "_sniffer",
        "_max",
        "_record_too_large",
        "_items",
        "_framing",
    )

    def __init__(
        self,
        dialect: str = "auto",
        max_event_size: Optional[int] = None,
        record_too_large: bool = False,
        items: bool = True,
        framing: Optional[str] = None,
    ) -> None:
        _check_dialect(dialect)
        self._framing = _check_framing(dialect, framing)
        self._items = items
        self._max = max_event_size
        self._record_too_large = record_too_large
        #: The dialect in use (``None`` while still sniffing).
        self.dialect: Optional[str] = None
        self.stream: Any = None
        self.acc: Any = None
        #: The first bytes of the body (up to 16 KiB), for diagnostics.
        self.head = bytearray()
        self.size = 0
        #: ``EventTooLargeError``s met (only with ``record_too_large``; else they raise).
        self.too_large: List[EventTooLargeError] = []
        self._sniffer: Optional[_core._DialectSniffer] = None
        if dialect == "auto":
            self._sniffer = _core._DialectSniffer(
                _core.DEFAULT_MAX_EVENT_SIZE if max_event_size is None else max_event_size
            )
        else:
            self._start(dialect)

    def _start(self, dialect: str) -> None:
        self.stream = _new_stream(dialect, self._max, self._framing)
        if dialect == "sse":
            self.acc = _EventListAccumulator()
            self._items = True
        self.dialect = dialect

    def _note(self, data: Any) -> Any:
        """Records the head and size of ``data``; returns ``data``, or its bytes when it is a
        buffer that is not flat bytes (strided, multi-dimensional or of wider items)."""
        view = memoryview(data)
        if not (view.c_contiguous and view.ndim == 1 and view.itemsize == 1):
            data = view.tobytes()
            view = memoryview(data)
        room = _HEAD_KEPT - len(self.head)
        if room > 0:
            self.head += view[:room]
        self.size += view.nbytes
        return data

    def _feed_stream(self, data: Any) -> List[Any]:
        try:
            if not self._items:
                self.stream.consume(data)
                return []
            items: List[Any] = self.stream.feed(data)
        except EventTooLargeError as e:
            items = list(e.events)
            if self.acc is not None:
                self.acc.add_all(items)
            if not self._record_too_large:
                raise
            self.too_large.append(e)
            return items
        if self.acc is not None:
            self.acc.add_all(items)
        return items

    def feed(self, data: _BytesLike) -> List[Any]:
        if isinstance(data, str):
            raise TypeError("response bodies are bytes: got a str chunk (use iter_bytes(), not iter_text())")
        data = self._note(data)
        sniffer = self._sniffer
        if sniffer is not None:
            dialect = sniffer.feed(data)
            if dialect is None:
                return []
            self._sniffer = None
            self._start(dialect)
            data = sniffer.take()
        return self._feed_stream(data)

    def finish(self) -> List[Any]:
        items: List[Any] = []
        sniffer = self._sniffer
        if sniffer is not None:
            self._sniffer = None
            self._start(sniffer.finish())
            items = self._feed_stream(sniffer.take())
        try:
            last: List[Any] = self.stream.finish()
        except EventTooLargeError as e:  # pragma: no cover - finish() owes nothing new
            last = list(e.events)
            if not self._record_too_large:
                raise
            self.too_large.append(e)
        if self.acc is not None:
            self.acc.add_all(last)
        return items + last

    @property
    def error(self) -> Optional[StreamError]:
        """The stream's error (after ``finish``), else the first error the events carried."""
        err = self.stream.error if self.stream is not None else None
        if err is None and self.acc is not None:
            err = self.acc.error
        return err

    def result(self) -> dict:  # type: ignore[type-arg]
        if self.acc is not None:
            return self.acc.result()  # type: ignore[no-any-return]
        return self.stream.result()  # type: ignore[no-any-return]

    def outcome(self) -> dict:  # type: ignore[type-arg]
        """The result, or ``AccumulateError`` with it if the stream failed."""
        result = self.result()
        err = self.error
        if err is not None:
            raise AccumulateError(err, result, self.dialect or "")
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
    return asm.outcome()


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
    return asm.outcome()
