"""Property tests: ``ssewire.SSEParser`` against a tiny reference of the WHATWG algorithm.

Hypothesis builds event streams from a grammar of lines (data, event, id, retry, comments,
unknown fields, blank lines, raw bytes) with random line terminators, and cuts them at random
points. The parser must give the same events however the input is cut, and the same events,
last event id, reconnection time and ``pending`` as the reference below.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ssewire import SSEParser
from support.splitting import feed_pieces

BOM = b"\xef\xbb\xbf"

# --- the reference -----------------------------------------------------------------------------


class Reference(NamedTuple):
    events: list[tuple[str, str, Optional[str], Optional[int]]]
    last_event_id: str
    retry: Optional[int]
    pending: bool


_LINE_END = re.compile(r"\r\n|\r|\n")


def reference(body: bytes) -> Reference:
    """WHATWG HTML "Interpreting an event stream", written for clarity over the whole input.

    Decode (UTF-8, one leading BOM stripped, invalid bytes to U+FFFD), split into lines at
    CRLF/LF/CR, process each line; the text after the last line end is an incomplete line and
    is discarded, as is an event without its blank line. ``pending``: input ended mid-event
    (an incomplete line, or a field line since the last blank line).
    """
    if body.startswith(BOM):
        body = body[len(BOM) :]
    *lines, rest = _LINE_END.split(body.decode("utf-8", "replace"))
    events = []
    data: list[str] = []
    event_type = ""
    id_buffer: Optional[str] = None  # None: no id was ever set
    last_event_id = ""
    event_retry: Optional[int] = None
    reconnection_time: Optional[int] = None
    has_fields = False
    for line in lines:
        if line == "":  # dispatch
            if id_buffer is not None:
                last_event_id = id_buffer
            if data:
                events.append((event_type or "message", "\n".join(data), id_buffer, event_retry))
            data, event_type, event_retry, has_fields = [], "", None, False
            continue
        if line.startswith(":"):
            continue
        has_fields = True
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event_type = value
        elif name == "id":
            if "\0" not in value:
                id_buffer = value
        elif name == "retry":
            if value and all(c in "0123456789" for c in value):
                event_retry = reconnection_time = int(value)
    return Reference(events, last_event_id, reconnection_time, rest != "" or has_fields)


def test_reference_sanity() -> None:
    """The reference itself follows the spec on a hand-checked stream."""
    ref = reference(BOM + b"id: 1\r\ndata: a\rdata\n\nretry: 5\nevent: e\ndata: b\n\nid: 2\ndata")
    assert ref.events == [("message", "a\n", "1", None), ("e", "b", "1", 5)]
    assert (ref.last_event_id, ref.retry, ref.pending) == ("1", 5, True)


# --- the grammar -------------------------------------------------------------------------------

_text = st.text(
    alphabet=st.one_of(
        st.sampled_from(" :x\x00\u00e9\u4e2d\U0001f600\ufeff"),
        st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"),
    ),
    max_size=8,
).map(lambda s: s.encode("utf-8"))

_separator = st.sampled_from([b":", b": ", b":  ", b""])

# Values up to 10**12 only: the reference's ints are unbounded, the parser's are 64-bit.
_retry_value = st.one_of(
    st.sampled_from([b"+5", b" 5", b"1_000", b"", b"5 ", b"-1", b"007", b"0"]),
    st.sampled_from(["\u0665", "\uff15", "\u00b2", "1\u0661"]).map(str.encode),  # not ASCII
    st.integers(0, 10**12).map(lambda n: str(n).encode()),
)


def _field(name: bytes, values: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    return st.builds(lambda sep, value: name + sep + value, _separator, values)


_unknown_field = st.builds(  # some of them nearly known
    lambda name, sep, value: name + sep + value,
    st.sampled_from([b"foo", b"Data", b"EVENT", b"Id", b"data ", BOM + b"data", b"x"]),
    _separator,
    _text,
)

# Branches of one_of are drawn about equally often: repeats weight the common lines.
_line = st.one_of(
    *[_field(b"data", _text)] * 3,
    *[_field(b"event", st.one_of(st.sampled_from([b"", b"message", b"up"]), _text))] * 2,
    *[_field(b"id", st.one_of(st.sampled_from([b"", b"7", b"1\x002", b"\x00"]), _text))] * 2,
    *[_field(b"retry", _retry_value)] * 2,
    st.builds(lambda v: b":" + v, _text),  # comment
    _unknown_field,
    st.just(b""),  # a blank line inside a block
    st.binary(max_size=12),  # anything, including stray CR/LF and invalid UTF-8
)

_line_end = st.sampled_from([b"\n", b"\r", b"\r\n"])


def _join(lines: list[tuple[bytes, bytes]]) -> bytes:
    return b"".join(line + end for line, end in lines)


# A block: a few lines, then the blank line that dispatches them. Streams are runs of blocks,
# so that events (and what carries from one to the next) are common, not rare accidents.
_block = st.builds(
    lambda lines, end: _join(lines) + end,
    st.lists(st.tuples(_line, _line_end), max_size=5),
    _line_end,
)

streams = st.builds(
    lambda start, blocks, tail: start + b"".join(blocks) + _join(tail[0]) + tail[1],
    st.sampled_from([b"", b"", BOM, BOM[:2], BOM + BOM]),
    st.lists(_block, max_size=8),
    # The end: maybe an unfinished block, maybe an unterminated last line.
    st.tuples(st.lists(st.tuples(_line, _line_end), max_size=2), st.one_of(st.just(b""), _line)),
)

# Small alphabet of meaningful tokens, for inputs the line grammar would not produce.
token_streams = st.lists(
    st.sampled_from(
        [
            *(b"data", b"event", b"id", b"retry", b":", b" ", b"\r", b"\n", b"\r\n"),
            *(b"5", b"x", b"\x00", BOM, BOM[:1], BOM[1:], b"\xff"),
            *(b"\xf0\x9f", b"\x98\x80", b"\xe4\xb8\xad"),  # an emoji in two halves, CJK
        ]
    ),
    max_size=60,
).map(b"".join)


# --- the properties ----------------------------------------------------------------------------


# Moderate: the whole suite runs on 2 CI cores. No deadline and no "too slow" health check, so
# a busy machine cannot make the tests flaky.
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _observe(parser: SSEParser) -> tuple[str, Optional[int], bool]:
    return (parser.last_event_id, parser.retry, parser.pending)


def _as_tuple(event: object) -> tuple[str, str, Optional[str], Optional[int]]:
    return (event.event, event.data, event.id, event.retry)  # type: ignore[attr-defined]


def _check(body: bytes, cuts: list[int]) -> None:
    """Fed whole, byte by byte and cut at ``cuts``: all agree with the reference."""
    ref = reference(body)
    expected_state = (ref.last_event_id, ref.retry, ref.pending)
    bounds = [0, *sorted(cuts), len(body)]
    for name, pieces in [
        ("whole", [body]),
        ("cut", [body[a:b] for a, b in zip(bounds, bounds[1:])]),
        ("byte by byte", [body[i : i + 1] for i in range(len(body))]),
    ]:
        outcome = feed_pieces(SSEParser, pieces, observe=_observe, way_name=name)
        assert not outcome.errors
        assert [_as_tuple(e) for e in outcome.items] == ref.events, (name, pieces)
        assert outcome.observed == expected_state, (name, pieces)


@SETTINGS
@given(st.data())
def test_grammar_streams_match_reference_however_split(data: st.DataObject) -> None:
    """Streams from the line grammar: same events as the reference, for any split."""
    body = data.draw(streams, label="body")
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=8), label="cuts")
    _check(body, cuts)


@SETTINGS
@given(st.data())
def test_token_streams_match_reference_however_split(data: st.DataObject) -> None:
    """Streams glued from meaningful tokens (split BOMs, CR/LF pairs, partial characters)."""
    body = data.draw(token_streams, label="body")
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=8), label="cuts")
    _check(body, cuts)
