"""``ssewire.encode_event`` and ``Event.encode``: what a service that emits SSE writes.

The property: ``SSEParser`` over the encoding of arbitrary events gives back the same events,
also several encodings concatenated and cut anywhere. "The same" is what SSE can carry, as the
WHATWG rules read it (the expectation below is derived from those rules, not from the
encoder): CR and CRLF in data read back as LF; no type or type ``""`` reads back as
``"message"``; an event without an id carries the last id given before it.
"""

from __future__ import annotations

from typing import Optional

import pytest
import ssewire
from hypothesis import given, settings
from hypothesis import strategies as st
from support.splitting import assert_same_all_ways

# Text with the characters the spec treats specially: line ends, the colon, spaces, NUL, a BOM.
_text = st.lists(
    st.sampled_from(["\r", "\n", "\r\n", " ", ":", "\0", "\ufeff", "é", "日", "😀"])
    | st.characters(blacklist_categories=("Cs",)),
    max_size=20,
).map("".join)
_line = _text.map(lambda s: s.replace("\r", "").replace("\n", ""))
_events = st.lists(
    st.tuples(
        _text,
        st.none() | st.sampled_from(["message", "", " delta"]) | _line,
        st.none() | _line.map(lambda s: s.replace("\0", "")),
        st.none() | st.integers(0, 2**64 - 1),
    ),
    min_size=1,
    max_size=6,
)


def _expected(
    events: list[tuple[str, Optional[str], Optional[str], Optional[int]]],
) -> list:
    """What a spec reader gives for these events sent in a row."""
    out = []
    last_id: Optional[str] = None
    for data, event, id_, retry in events:
        if id_ is not None:
            last_id = id_
        data = data.replace("\r\n", "\n").replace("\r", "\n")
        out.append((event or "message", data, last_id, retry))
    return out


def _fields(ev: ssewire.Event) -> tuple:
    return (ev.event, ev.data, ev.id, ev.retry)


@settings(max_examples=200, deadline=None)
@given(_events)
def test_round_trip_through_the_parser(events: list) -> None:
    """The concatenated encodings, fed whole, byte by byte and at random cuts, read back as
    the events (each way must agree, see ``splitting``)."""
    wire = b"".join(
        ssewire.encode_event(d, event=e, id=i, retry=r) for d, e, i, r in events
    )
    got = assert_same_all_ways(ssewire.SSEParser, wire, key=_fields)
    assert [_fields(ev) for ev in got] == _expected(events)


@settings(max_examples=100, deadline=None)
@given(_events)
def test_event_encode_round_trips_parsed_events(events: list) -> None:
    """An event read from a stream, encoded again, reads back as itself (the re-encoded stream
    is the same stream for a reader)."""
    wire = b"".join(
        ssewire.encode_event(d, event=e, id=i, retry=r) for d, e, i, r in events
    )
    parsed = ssewire.SSEParser().feed(wire)
    again = ssewire.SSEParser().feed(b"".join(ev.encode() for ev in parsed))
    assert again == parsed


def test_the_wire_form() -> None:
    """The exact bytes for the cases the spec makes special."""
    assert ssewire.encode_event("hi") == b"data: hi\n\n"
    assert (
        ssewire.encode_event("a\r\nb\rc\nd", event="delta", id="7", retry=0)
        == b"event: delta\nid: 7\nretry: 0\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
    )
    assert ssewire.encode_event("") == b"data:\n\n"  # still dispatches
    assert ssewire.encode_event(" x", event=" t") == b"event:  t\ndata:  x\n\n"
    assert ssewire.encode_event("x", event="message") == b"data: x\n\n"
    assert ssewire.encode_event("x", id="") == b"id:\ndata: x\n\n"
    assert (
        ssewire.Event("x", "ping", "9", 10).encode()
        == b"event: ping\nid: 9\nretry: 10\ndata: x\n\n"
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"event": "a\nb"}, ValueError, "event type"),
        ({"event": "a\r"}, ValueError, "event type"),
        ({"id": "a\r\nb"}, ValueError, "id"),
        ({"id": "a\0b"}, ValueError, "NUL"),
        ({"retry": -1}, ValueError, "retry"),
        ({"retry": 2**64}, ValueError, "retry"),
        ({"retry": "5"}, TypeError, "retry"),
        ({"retry": True}, TypeError, "retry"),
        # A lone surrogate is no longer an error (issue 15): it is written as U+FFFD, as the
        # rest of ssewire reads text (tests/sse/test_encode_errors.py).
    ],
)
def test_what_cannot_be_encoded(kwargs: dict, error: type, words: str) -> None:
    """A value that would change the stream's framing is an error, never altered silently."""
    with pytest.raises(error, match=words):
        ssewire.encode_event("x", **kwargs)


def test_event_encode_rejects_a_hand_made_bad_event() -> None:
    with pytest.raises(ValueError, match="event type"):
        ssewire.Event("x", "a\nb").encode()
    with pytest.raises(ValueError, match="NUL"):
        ssewire.Event("x", None, "a\0").encode()
