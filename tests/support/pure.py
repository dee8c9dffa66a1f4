"""A pure-Python WHATWG event-stream framer: the reference peer of ``ssewire.SSEParser``.

``PureSSEParser`` follows the rules of the Rust framer (``src/framing/sse.rs``) and has the same
interface, so it serves two purposes: the always-available "best pure Python" baseline of the
benchmarks (it is tuned, not a strawman), and an independent second implementation that the
tests compare the Rust one against, including the ``max_event_size`` behaviour.

Strategy. Lines end only at the ASCII bytes CR and LF, and lossy UTF-8 decoding is local
around ASCII bytes (an ASCII byte always decodes to itself and ends any invalid sequence), so
decoding a run of complete lines at once gives exactly what decoding each field value on its
own gives. The input is therefore split at the byte level, and decoded with
``errors="replace"`` only up to a line end: a character split across two feeds is never cut.
Per ``feed()`` the fast path makes a few C-level passes over the input and does Python-level
work per *event*, never per byte and, for the common shapes, not per line:

1. CR and CRLF become LF with two ``bytes.replace`` calls, only if the input has a CR at all.
   A CR that ends the input is a complete line end; ``_skip_lf`` drops an LF that starts the
   next input, so a CRLF split across feeds is one line end.
2. ``rfind(b"\n\n")`` finds the blank line that ends the last complete event, and everything
   before it is decoded in one call. When that run is all ``data: D`` events (OpenAI) or all
   ``event: T\ndata: D`` events (Anthropic), which two ``count`` calls prove, one ``split``
   yields the values and ``map`` builds the events with no Python loop; a read holding exactly
   one such event (a live, token-paced stream) has its own shortcut. Anything else is split
   into blocks and lines and goes through the general field handler.
3. After it comes the unfinished event: its complete lines are handled at once (their size
   counted in bytes), and the unfinished line is kept as a list of pieces, joined once when
   its line end arrives - a multi-megabyte line in small reads is never rescanned or recopied.

The start of a stream skips a BOM (also one split across inputs) first. Inputs read while
skipping an oversized event, and inputs that could push the unfinished event past
``max_event_size``, take the checked path instead: a line-by-line port of the Rust loop with
exact limit checks, so ``EventTooLargeError`` carries the same ``limit``, ``size`` and
``events`` as the Rust parser's.

Cost: O(bytes received) for any split pattern; no input makes it quadratic. Memory: the
unfinished event and line (at most ``max_event_size`` bytes) and the returned list.
"""

from __future__ import annotations

import re
from itertools import repeat
from typing import Any, List, Optional, Tuple, Union

from ssewire._core import DEFAULT_MAX_EVENT_SIZE, EventTooLargeError

__all__ = ["PureEvent", "PureSSEParser"]

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(b"[\r\n]")
_U64_MAX = (1 << 64) - 1
# Endless iterators for map(); map() stops at its shortest input, so they are reusable.
_LFS = repeat("\n")
_MESSAGES = repeat("message")
_DATA_SEPS = repeat("\ndata: ")


class PureEvent:
    """One server-sent event; equal to an ``ssewire.Event`` with the same fields."""

    __slots__ = ("data", "event", "id", "retry")

    def __init__(
        self,
        data: str,
        event: str = "message",
        id: Optional[str] = None,
        retry: Optional[int] = None,
    ) -> None:
        self.data = data
        self.event = event
        self.id = id
        self.retry = retry

    def __eq__(self, other: object) -> bool:
        # Field by field, not by type, so a PureEvent and a Rust ``ssewire.Event`` compare
        # equal in either order (the Rust ``__eq__`` returns NotImplemented for us).
        try:
            return bool(
                self.data == other.data  # type: ignore[attr-defined]
                and self.event == other.event  # type: ignore[attr-defined]
                and self.id == other.id  # type: ignore[attr-defined]
                and self.retry == other.retry  # type: ignore[attr-defined]
            )
        except AttributeError:
            return NotImplemented

    def __hash__(self) -> int:
        # The tuple the Rust Event hashes, so equal events hash alike across the two.
        return hash((self.event, self.data, self.id, self.retry))

    def __repr__(self) -> str:
        return (
            f"PureEvent(event={self.event!r}, data={self.data!r}, id={self.id!r}, "
            f"retry={self.retry!r})"
        )


def _as_bytes(data: Any) -> bytes:
    """``bytes`` for any 1-byte-item buffer; ``TypeError`` for ``str`` and non-buffers."""
    if isinstance(data, str):
        raise TypeError(
            "feed() takes bytes, bytearray or memoryview, not str "
            "(encode the text to UTF-8 first)"
        )
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(
            f"feed() takes bytes, bytearray or memoryview, not {type(data).__name__}"
        ) from None
    if view.itemsize != 1:
        raise TypeError(f"feed() takes a buffer of bytes, not items of {view.itemsize} bytes")
    return view.tobytes()


class PureSSEParser:
    """Push-based, sans-IO WHATWG event-stream parser in pure Python.

    Same interface and results as ``ssewire.SSEParser``: ``feed()`` bytes, get the
    ``PureEvent``s they complete; ``finish()`` ends the input.
    """

    __slots__ = (
        "_max",
        "_tail",
        "_tail_len",
        "_skip_lf",
        "_bom",
        "_checked",
        "_data",
        "_event",
        "_retry",
        "_id",
        "_id_set",
        "_committed",
        "_committed_set",
        "_reconnect",
        "_event_size",
        "_has_fields",
        "_discarding",
        "_discard_nonempty",
        "_ended_mid",
    )

    def __init__(self, *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        if max_event_size < 0:
            raise OverflowError("max_event_size must not be negative")
        self._max = max_event_size
        self._reconnect: Optional[int] = None
        self._committed = ""
        self._committed_set = False
        self._id: Optional[str] = None  # the last event ID buffer; None until an id is taken
        self._id_set = False
        self._reset_stream()

    def _reset_stream(self) -> None:
        self._tail: List[bytes] = []  # pieces of the unfinished line
        self._tail_len = 0
        self._skip_lf = False  # the last input ended in CR
        self._bom: Optional[int] = 0  # BOM bytes matched; None once past the stream start
        self._checked = True  # take the checked path (BOM pending, or discarding)
        self._data: List[str] = []
        self._event = ""
        self._retry: Optional[int] = None
        self._event_size = 0  # bytes of the unfinished event's field lines
        self._has_fields = False
        self._discarding = False
        self._discard_nonempty = False
        self._ended_mid = False

    # -- public interface ---------------------------------------------------------------

    @property
    def last_event_id(self) -> str:
        """The last event id as of the last complete event block (``""`` if none)."""
        return self._committed

    @property
    def pending(self) -> bool:
        """Whether the input so far ends in the middle of an event."""
        return bool(
            self._ended_mid
            or self._tail
            or self._has_fields
            or self._discarding
            or self._bom  # part of a BOM held back
        )

    @property
    def retry(self) -> Optional[int]:
        """The reconnection time in milliseconds from the last valid ``retry:`` field."""
        return self._reconnect

    @property
    def max_event_size(self) -> int:
        """The limit on the size of one event, in bytes."""
        return self._max

    def __repr__(self) -> str:
        return f"PureSSEParser(max_event_size={self._max}, pending={self.pending})"

    def finish(self) -> List[PureEvent]:
        """Ends the input. Nothing incomplete is dispatched (per the spec), so this returns
        ``[]``; ``pending`` then tells whether the input ended mid-event. The parser is reset
        for a new stream, keeping ``last_event_id`` and ``retry`` for a reconnect."""
        ended_mid = self.pending
        self._reset_stream()
        self._ended_mid = ended_mid
        self._id = self._committed if self._committed_set else None
        self._id_set = self._committed_set
        return []

    def feed(self, data: Union[bytes, bytearray, memoryview]) -> List[PureEvent]:
        """Parses ``data`` and returns the events it completes."""
        if data.__class__ is not bytes:
            data = _as_bytes(data)
        self._ended_mid = False
        if self._skip_lf and data:
            self._skip_lf = False
            if data[0] == 10:
                data = data[1:]
        if self._checked:
            if self._discarding:
                return self._feed_checked(data)
            # The start of a stream: skip a BOM, then frame the rest as usual.
            skip = self._skip_bom(data)
            if self._bom is not None:
                return []  # all of it was the start of a BOM (or it was empty)
            self._checked = False
            if skip:
                data = data[skip:]
        if self._event_size + self._tail_len + len(data) > self._max:
            return self._feed_checked(data)

        # Fast path: no event can reach the size limit within this input.
        tail = self._tail
        if tail:
            if b"\n" not in data and b"\r" not in data:
                tail.append(data)  # still no line end: join the pieces once it comes
                self._tail_len += len(data)
                return []
            tail.append(data)
            text = b"".join(tail)
            self._tail = []
            self._tail_len = 0
        else:
            text = data
        if b"\r" in text:
            if text[-1] == 13:
                self._skip_lf = True
            text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")

        out: List[PureEvent] = []
        end = text.rfind(b"\n\n")  # the blank line ending the last complete event
        if end < 0:
            self._unfinished(text, out)
            return out
        n = len(text)
        start = 0
        if self._has_fields:
            # The first block finishes the event under way; the others start fresh.
            start = text.find(b"\n\n") + 2
            self._blocks([text[: start - 2].decode("utf-8", "replace")], out)
        head = text[start : start + 7]
        if start > end:
            pass  # that was the only complete event
        elif head[:6] == b"data: ":
            if end == n - 2 and text.find(b"\n", start) == end:
                # Exactly one single-line data event: a live stream's read.
                value = text[start + 6 : end].decode("utf-8", "replace")
                out.append(PureEvent(value, "message", self._id))
            else:
                values = text[start + 6 : end].decode("utf-8", "replace").split("\n\ndata: ")
                if any(map(str.__contains__, values, _LFS)):
                    self._blocks(("data: " + "\n\ndata: ".join(values)).split("\n\n"), out)
                else:  # all single-line data events
                    out += map(PureEvent, values, _MESSAGES, repeat(self._id))
        elif head == b"event: " and end == n - 2 and (
            text.startswith(b"data: ", text.find(b"\n", start) + 1)
            and text.count(b"\n", start) == 3
        ):
            # Exactly one "event: T\ndata: D" event: a live stream's read.
            nl = text.find(b"\n", start)
            out.append(
                PureEvent(
                    text[nl + 7 : end].decode("utf-8", "replace"),
                    text[start + 7 : nl].decode("utf-8", "replace") or "message",
                    self._id,
                )
            )
        elif head == b"event: ":
            rest = text[start + 7 : end].decode("utf-8", "replace")
            blocks = rest.split("\n\nevent: ")
            k = len(blocks)
            if (
                # Each block is "T\ndata: D": its LFs are the k - 1 block separators (two
                # each) and one "\ndata: " per block, so no value holds another line.
                rest.count("\n") == 3 * k - 2
                and rest.count("\ndata: ") == k
                and all(map(str.__contains__, blocks, _DATA_SEPS))
            ):
                ident = self._id
                out += [
                    PureEvent(d, t or "message", ident)
                    for t, _, d in map(str.partition, blocks, _DATA_SEPS)
                ]
            else:
                self._blocks(("event: " + rest).split("\n\n"), out)
        else:
            self._blocks(text[start:end].decode("utf-8", "replace").split("\n\n"), out)
        if self._id_set:
            self._committed = self._id  # type: ignore[assignment]
            self._committed_set = True
        if end + 2 < n:
            self._unfinished(text[end + 2 :], out)
        return out

    # -- the general handlers -----------------------------------------------------------

    def _blocks(self, blocks: List[str], out: List[PureEvent]) -> None:
        """Handles decoded blocks that each end with a blank line (size checks are not
        needed: the caller knows none can fire, and each block's event ends here)."""
        field = self._field
        dispatch = self._dispatch
        append = out.append
        for block in blocks:
            if not self._has_fields:
                # The two shapes of nearly every LLM event, when no event is under way:
                # "data: D" and "event: T\ndata: D" (a blank line ends every block).
                if block[:6] == "data: ":
                    if "\n" not in block:
                        append(PureEvent(block[6:], "message", self._id))
                        continue
                elif block[:7] == "event: ":
                    nl = block.find("\n")
                    if block.startswith("data: ", nl + 1) and block.find("\n", nl + 1) < 0:
                        append(PureEvent(block[nl + 7 :], block[7:nl] or "message", self._id))
                        continue
            for line in block.split("\n"):
                if not line:
                    dispatch(out)
                elif line[0] != ":":
                    self._has_fields = True
                    field(line)
            dispatch(out)

    def _unfinished(self, rest: bytes, out: List[PureEvent]) -> None:
        """Handles the bytes after the last blank line: complete lines now (a blank one can
        only come first), the unfinished line is kept."""
        if b"\n" in rest:
            lines = rest.split(b"\n")
            rest = lines.pop()
            for line in lines:
                if not line:
                    self._dispatch(out)
                elif line[0] != 58:  # not a ":" comment
                    self._event_size += len(line)
                    self._has_fields = True
                    self._field(line.decode("utf-8", "replace"))
        if rest:
            self._tail = [rest]
            self._tail_len = len(rest)

    def _field(self, line: str) -> None:
        """One field line (not empty, not a comment), decoded."""
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\x00" not in value:
                self._id = value
                self._id_set = True
        elif name == "retry":
            if value.isascii() and value.isdigit():  # ASCII digits only, and not empty
                digits = value.lstrip("0")
                ms = _U64_MAX if len(digits) > 20 else min(int(digits or "0"), _U64_MAX)
                self._retry = ms
                self._reconnect = ms
        # unknown fields are ignored

    def _dispatch(self, out: List[PureEvent]) -> None:
        """A blank line: commit the id, and dispatch the event if it has data."""
        if self._id_set:
            self._committed = self._id  # type: ignore[assignment]
            self._committed_set = True
        data = self._data
        if data:
            text = data[0] if len(data) == 1 else "\n".join(data)
            out.append(PureEvent(text, self._event or "message", self._id, self._retry))
            self._data = []
        self._event = ""
        self._retry = None
        self._event_size = 0
        self._has_fields = False

    # -- the checked path ---------------------------------------------------------------

    def _feed_checked(self, data: bytes) -> List[PureEvent]:
        """A line-by-line port of the Rust loop, with exact size-limit checks.

        Used for the first input of a stream (BOM), while skipping an oversized event, and
        when this input could push the unfinished event past ``max_event_size``.
        """
        out: List[PureEvent] = []
        too_large: Optional[Tuple[int, int]] = None
        pos = 0
        if self._bom is not None:
            pos = self._skip_bom(data)
        tail = b"".join(self._tail)
        self._tail = []
        self._tail_len = 0
        n = len(data)
        search = _LINE_END.search
        while pos < n:
            found = search(data, pos)
            if found is None:
                # An unfinished line: keep it for the next input.
                if self._discarding:
                    self._discard_nonempty = True
                else:
                    tail += data[pos:]
                    size = self._event_size + len(tail)
                    if size > self._max:
                        tail = b""
                        err = self._start_discarding(size, True)
                        if too_large is None:
                            too_large = err
                break
            end = found.start()
            nxt = end + 1
            if data[end] == 13:
                if nxt < n:
                    if data[nxt] == 10:
                        nxt += 1
                else:
                    self._skip_lf = True
            line = data[pos:end]
            if self._discarding:
                blank = not line and not self._discard_nonempty
                self._discard_nonempty = False
                if blank:
                    self._discarding = False
            else:
                if tail:
                    line = tail + line
                    tail = b""
                line_err = self._line_checked(line, out)
                if too_large is None:
                    too_large = line_err
            pos = nxt
        if tail:
            self._tail = [tail]
            self._tail_len = len(tail)
        self._checked = self._bom is not None or self._discarding
        if too_large is not None:
            raise EventTooLargeError(too_large[0], too_large[1], out)
        return out

    def _line_checked(self, line: bytes, out: List[PureEvent]) -> Optional[Tuple[int, int]]:
        if not line:
            self._dispatch(out)
            return None
        size = self._event_size + len(line)
        if size > self._max:
            return self._start_discarding(size, False)
        if line[0] == 58:
            return None  # a comment counts toward the limit while read, not after
        self._event_size = size
        self._has_fields = True
        self._field(line.decode("utf-8", "replace"))
        return None

    def _start_discarding(self, size: int, mid_line: bool) -> Tuple[int, int]:
        """Drops the current event and skips the rest of it, up to its blank line."""
        self._data = []
        self._event = ""
        self._retry = None
        self._event_size = 0
        self._has_fields = False
        self._discarding = True
        self._discard_nonempty = mid_line
        return (self._max, size)

    def _skip_bom(self, data: bytes) -> int:
        """Skips a leading BOM (even one split across inputs); returns where framing starts."""
        matched = self._bom or 0
        want = _BOM[matched:]
        k = min(len(want), len(data))
        if data[:k] == want[:k]:
            self._bom = None if k == len(want) else matched + k
            return k
        # Not a BOM after all: the bytes held back start the first line.
        if matched:
            self._tail = [_BOM[:matched]]
            self._tail_len = matched
        self._bom = None
        return 0
