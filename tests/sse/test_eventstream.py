"""``EventStreamParser``: the AWS event stream framing (Amazon Bedrock's streaming responses),
checked against the AWS SDKs' shared vectors and botocore's own parser, whole, byte by byte and
at random cuts; hostile input stops the framing with one error item and never raises."""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from pathlib import Path
from typing import Any, List, Sequence, Tuple

import pytest
import ssewire
from hypothesis import given, settings
from hypothesis import strategies as st
from support import paths

botocore_eventstream = pytest.importorskip("botocore.eventstream")

VECTORS = paths.DATA / "eventstream"
POSITIVE = sorted((VECTORS / "encoded" / "positive").iterdir())
NEGATIVE = sorted((VECTORS / "encoded" / "negative").iterdir())
#: The decoded negative vectors' words for each fault kind.
KINDS = {
    "Prelude checksum mismatch": "prelude_crc_mismatch",
    "Message checksum mismatch": "message_crc_mismatch",
}


def parse(body: bytes, cuts: Sequence[int] = (), **kwargs: Any) -> List[Any]:
    p = ssewire.EventStreamParser(**kwargs)
    out: List[Any] = []
    last = 0
    for cut in [*cuts, len(body)]:
        out += p.feed(body[last:cut])
        last = cut
    return out + p.finish()


def shown(items: List[Any]) -> List[Tuple[Any, ...]]:
    return [
        ("message", m.headers, m.payload) if isinstance(m, ssewire.EventStreamMessage) else ("error", m.kind)
        for m in items
    ]


def botocore_messages(body: bytes) -> List[Tuple[Any, ...]]:
    buf = botocore_eventstream.EventStreamBuffer()
    buf.add_data(body)
    return [("message", m.headers, m.payload) for m in buf]


def random_cuts(n: int, rng: random.Random) -> List[int]:
    return sorted(rng.sample(range(1, n), min(n - 1, rng.randint(1, 12)))) if n > 1 else []


@pytest.mark.parametrize("vector", POSITIVE, ids=lambda p: p.name)
def test_positive_vectors_decode_as_botocore_and_their_decoded_file_say(vector: Path) -> None:
    body = vector.read_bytes()
    whole = shown(parse(body))
    assert whole == botocore_messages(body)
    assert len(whole) == 1
    decoded = json.loads((VECTORS / "decoded" / "positive" / vector.name).read_text())
    (_, headers, payload) = whole[0]
    assert len(body) == decoded["total_length"]
    assert struct.unpack(">I", body[8:12])[0] == decoded["prelude_crc"] % 2**32  # some files write it signed
    assert struct.unpack(">I", body[-4:])[0] == decoded["message_crc"] % 2**32
    assert [h["name"] for h in decoded["headers"]] == list(headers)

    assert payload == base64.b64decode(decoded["payload"])
    for h in decoded["headers"]:
        if h["type"] in (6, 7):  # bytes and strings: base64 in the decoded files
            value = base64.b64decode(h["value"])
            assert headers[h["name"]] == (value.decode() if h["type"] == 7 else value)
        elif h["type"] in (0, 1, 3, 4, 5, 8):
            assert headers[h["name"]] == h["value"]
        elif h["type"] == 2:  # a byte, signed as botocore reads it
            assert headers[h["name"]] % 256 == h["value"] % 256
        else:  # a UUID: its 16 bytes
            assert headers[h["name"]] == base64.b64decode(h["value"])
    for cuts in ([*range(1, len(body))], random_cuts(len(body), random.Random(vector.name))):
        assert shown(parse(body, cuts)) == whole


@pytest.mark.parametrize("vector", NEGATIVE, ids=lambda p: p.name)
def test_negative_vectors_are_refused_with_their_kind(vector: Path) -> None:
    body = vector.read_bytes()
    kind = KINDS[(VECTORS / "decoded" / "negative" / vector.name).read_text().strip()]
    for cuts in ([], [*range(1, len(body))], [len(body) // 2]):
        items = parse(body, cuts)
        assert shown(items) == [("error", kind)]
        assert items[0].error.code == kind and items[0].error.type == "invalid_response"
    with pytest.raises(botocore_eventstream.ParserError):
        botocore_messages(body)


def test_a_header_name_given_twice_is_refused_as_botocore_refuses_it() -> None:
    """botocore raises ``DuplicateHeader``; this framed a message (which value counted was
    whichever came last). The messages around it still frame."""
    import struct
    import zlib

    headers = b"".join(bytes([len(n)]) + n + b"\x07" + struct.pack(">H", len(v)) + v
                       for n, v in [(b":event-type", b"a"), (b":message-type", b"event"), (b":event-type", b"b")])  # fmt: skip
    payload = b"{}"
    total = 16 + len(headers) + len(payload)
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    body += struct.pack(">I", zlib.crc32(body))
    with pytest.raises(botocore_eventstream.DuplicateHeader):
        botocore_messages(body)
    good = _message("before", b"{}")
    for cuts in ([], [len(good) + 7]):
        items = parse(good + body, cuts)
        assert shown(items)[-1] == ("error", "invalid_header"), shown(items)
        assert [i.event_type for i in items[:-1]] == ["before"]
        assert "appears twice" in items[-1].error.message


_values = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.text(max_size=40),
    st.binary(max_size=40),
)


@settings(max_examples=150, deadline=None)
@given(
    messages=st.lists(
        st.tuples(
            st.dictionaries(st.text(min_size=1, max_size=20), _values, max_size=6), st.binary(max_size=300)
        ),
        min_size=1,
        max_size=6,
    ),
    seed=st.integers(0, 2**32),
)
def test_messages_written_here_read_as_botocore_reads_them(messages: List[Any], seed: int) -> None:
    body = b"".join(ssewire.encode_eventstream_message(h, p) for h, p in messages)
    whole = shown(parse(body))
    assert whole == botocore_messages(body)
    assert [m[1:] for m in whole] == [(h, p) for h, p in messages]
    assert shown(parse(body, random_cuts(len(body), random.Random(seed)))) == whole


def _message(event: str, payload: bytes) -> bytes:
    return ssewire.encode_eventstream_message({":event-type": event, ":message-type": "event"}, payload)


def test_every_corrupted_byte_stops_the_framing_quietly_after_the_good_messages() -> None:
    """Flip any byte of the second of three messages: the first is read, then one error item
    (or, for a byte whose change still reads, the messages as they now read), never an
    exception, never a message read after a fault."""
    good = _message("a", b'{"n": 1}')
    second = _message("contentBlockDelta", b'{"delta": {"text": "hi"}}')
    body = good + second + good
    for at in range(len(good), len(good) + len(second)):
        bad = bytearray(body)
        bad[at] ^= 0x41
        items = parse(bytes(bad))
        kinds = shown(items)
        assert kinds[0] == ("message", {":event-type": "a", ":message-type": "event"}, b'{"n": 1}')
        errors = [k for k in kinds if k[0] == "error"]
        assert len(errors) <= 1
        if errors:
            assert kinds[-1] == errors[0], "nothing after a fault"


def test_a_length_that_cannot_be_is_refused_before_any_buffering() -> None:
    def prelude(total: int, headers: int) -> bytes:
        head = struct.pack(">II", total, headers)
        return head + struct.pack(">I", zlib.crc32(head))

    for total, headers, kind in [
        (15, 0, "invalid_length"),
        (30, 20, "invalid_length"),
        (2**32 - 1, 0, "event_too_large"),
        (2**20, 200_000, "headers_too_long"),
    ]:
        p = ssewire.EventStreamParser()
        items = p.feed(prelude(total, headers) + b"\0" * 64)
        assert shown(items) == [("error", kind)]
        assert p.error_item is items[0] and not p.pending
        assert p.feed(_message("a", b"{}")) == [], "framing stopped"
    p = ssewire.EventStreamParser(max_event_size=1000)
    assert shown(p.feed(_message("big", b"x" * 2000))) == [("error", "event_too_large")]
    p = ssewire.EventStreamParser()
    assert p.feed(_message("a", b"{}")[:-3]) == [] and p.pending
    assert shown(p.finish()) == [("error", "incomplete_stream")]  # the one retry condition of a body that ends early


def test_iter_reads_chunks() -> None:
    body = b"".join(_message(f"e{i}", b"{}") for i in range(5))
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]
    assert [m.event_type for m in ssewire.EventStreamParser().iter(chunks)] == [f"e{i}" for i in range(5)]
    m = parse(body)[0]
    assert m.message_type == "event" and m == parse(body)[0] and "EventStreamMessage(" in repr(m)


def test_bad_header_values_are_refused_by_the_writer() -> None:
    with pytest.raises(TypeError):
        ssewire.encode_eventstream_message({"x": 1.5}, b"")  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        ssewire.encode_eventstream_message({"x" * 256: 1}, b"")
    with pytest.raises(ValueError):
        ssewire.encode_eventstream_message({"x": "y" * 70000}, b"")
