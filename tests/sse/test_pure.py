"""``support.pure.PureSSEParser`` agrees with the Rust ``ssewire.SSEParser``, and the
``support.streams`` generators make valid, deterministic LLM stream bodies.

Every comparison feeds both parsers the same pieces and compares everything observable: the
events, the exceptions for oversized events (limit, size, surviving events), and the state
after the input (``last_event_id``, ``retry``, ``pending``) before and after ``finish()``.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, List, Sequence

import pytest
import ssewire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import streams as _streams
from support.pure import PureEvent, PureSSEParser
from support.splitting import check_all_ways, feed_all_ways

Parser = Callable[..., Any]


def run(make: Parser, pieces: Iterable[bytes], **kwargs: Any) -> List[Any]:
    """Feeds ``pieces``; returns a transcript of everything observable."""
    parser = make(**kwargs)
    transcript: List[Any] = []

    def feed(piece: bytes) -> None:
        try:
            events = parser.feed(piece)
        except ssewire.EventTooLargeError as exc:
            transcript.append(("too_large", exc.limit, exc.size))
            events = exc.events
        transcript.extend(("event", e.event, e.data, e.id, e.retry) for e in events)

    for piece in pieces:
        feed(piece)
    transcript.append(("state", parser.last_event_id, parser.retry, parser.pending))
    assert parser.finish() == []
    transcript.append(("finished", parser.last_event_id, parser.retry, parser.pending))
    # After finish the parser starts a new stream but keeps the id (a reconnect).
    feed(b"data: z\n\n")
    return transcript


def assert_agree(pieces: Sequence[bytes], **kwargs: Any) -> List[Any]:
    rust = run(ssewire.SSEParser, pieces, **kwargs)
    pure = run(PureSSEParser, pieces, **kwargs)
    assert pure == rust, f"pieces={list(pieces)!r}"
    return rust


def state(parser: Any) -> tuple:
    return (parser.last_event_id, parser.retry, parser.pending)


def assert_agree_all_ways(body: bytes, **kwargs: Any) -> None:
    """The project's ``splitting`` ways: each parser is split-independent, and the two agree
    on every way (items, errors, state after finish)."""
    check_all_ways(lambda: PureSSEParser(**kwargs), body, observe=state)
    rust = feed_all_ways(lambda: ssewire.SSEParser(**kwargs), body, observe=state)
    pure = feed_all_ways(lambda: PureSSEParser(**kwargs), body, observe=state)
    for r, p in zip(rust, pure):
        assert p.items == r.items, (r.way.name, body)
        assert p.observed == r.observed, (r.way.name, body)
        sizes = [(getattr(e, "limit", None), getattr(e, "size", None)) for e in p.errors]
        assert sizes == [(getattr(e, "limit", None), getattr(e, "size", None)) for e in r.errors]


def splits(body: bytes) -> List[List[bytes]]:
    """The same body whole, byte by byte, in 4 KiB reads and in irregular reads."""
    return [
        [body],
        [body[i : i + 1] for i in range(len(body))],
        _streams.chunked(body, 4096),
        _streams.chunked(body, 64, seed=1),
        _streams.chunked(body, 7, seed=2),
    ]


CORPORA = {
    "chat": lambda: _streams.chat_stream(120, seed=1),
    "chat-tools-reasoning": lambda: _streams.chat_stream(
        60, seed=2, tool_calls=True, reasoning=True
    ),
    "chat-inline-usage": lambda: _streams.chat_stream(40, seed=3, usage="inline"),
    "chat-no-usage": lambda: _streams.chat_stream(40, seed=4, usage=False, reasoning="reasoning"),
    "messages": lambda: _streams.messages_stream(120, seed=5),
    "messages-thinking-tools": lambda: _streams.messages_stream(
        60, seed=6, thinking=True, tool_use=True
    ),
    "responses": lambda: _streams.responses_stream(120, seed=7),
    "responses-tools-named": lambda: _streams.responses_stream(
        40, seed=8, tool_calls=True, event_lines=True, done_marker=True
    ),
}


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_corpora_agree_however_split(name: str) -> None:
    body = CORPORA[name]()
    expected = None
    for pieces in splits(body):
        got = assert_agree(pieces)
        # And the split does not change the result.
        expected = expected or got
        assert got == expected
    assert expected is not None and sum(1 for t in expected if t[0] == "event") > 40
    assert_agree_all_ways(body[:3000])


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_corpora_with_crlf_and_cr_line_ends(name: str) -> None:
    body = CORPORA[name]()
    for ending in (b"\r\n", b"\r"):
        converted = body.replace(b"\n", ending)
        for pieces in splits(converted)[::2]:
            assert_agree(pieces)


TRICKY = [
    b"data: a\n\ndata: b\r\rdata: c\r\n\r\ndata: d\r\n\n",
    b"data: x\r\r\ndata: y\n\n",
    b"data: a\r\ndata: b\r\n\r\n",
    b"\xef\xbb\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n",
    b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n",
    b"\xef\xbbdata: a\n\n",
    b"\xefdata\n\ndata:\xef\n\n",
    b"\xef\xbb\xbf",
    b"\xef\xbb",
    b": heartbeat\n\n:\n\n: x\ndata: a\n: y\n\n",
    b"data\n\ndata\ndata\n\n",
    b"data:no space\n\ndata:  two\n\ndata:\ttab\n\n",
    b"Data: a\nDATA: b\nfoo: c\ndata: d\n\n",
    b"data: a\ndata:\ndata: c\n\n",
    b"event: x\n\ndata: a\n\nevent: y\ndata: b\n\ndata: c\n\n",
    b"event:\ndata: a\n\nevent: message\ndata: b\n\n",
    b"event: \ndata: a\n\nevent:  x\ndata: b\n\nevent: x\n\nevent: y\ndata: c\ndata: d\n\n",
    b"event: x\ndata: a\nid: 9\n\nevent: x\ndata:b\n\nevent: x\ndata: \xff\n\n",
    b"id: 1\ndata: a\n\ndata: b\n\nid: 2\x00x\ndata: c\n\nid\ndata: d\n\n",
    b"id: 1\ndata: a\n\nid: 2\ndata: b\n",
    b"id: 7\n\n",
    b"id: 7\n\ndata: after\n\n",
    b"id: \xff\xfe\ndata: a\n\n",
    "retry: 5\ndata: a\n\nretry: +5\ndata: b\n\nretry:  5\ndata: c\n\nretry: 1_000\ndata: d\n\n"
    "retry: \u0665\ndata: e\n\nretry:\ndata: f\n\nretry: 007\ndata: g\n\n".encode(),
    b"retry: 99999999999999999999999999\ndata: big\n\nretry: 18446744073709551616\ndata: x\n\n",
    b"retry: 300\n\n",
    "data: h\u00e9llo \U0001f600 \u6771\u4eac\n\n".encode(),
    b"data: \xff\xc3\n\ndata: a\xf0\x9f\x98b\n\ndata: \xed\xa0\x80\n\ndata: \xc0\xaf\n\n",
    b"data: \xe2\x82\ndata: \xac\n\n",
    b"event: \xff\ndata: a\n\n",
    b"data: a\n\ndata: b\n",
    b"data: a\n\ndata: b",
    b"data: a\n\n",
    b"data: a\ndata: b\r",
    b"\n\n\n\ndata: a\n\n\n\n\ndata: b\n\n",
    b"\r\n\r\ndata: a",
    b"data: [DONE]\n\n",
    b"event: ping\ndata: {\"type\":\"ping\"}\n\nevent: message_stop\ndata: {}\n\n",
    b"data: one\n\ndata: two\n\nid: 3\ndata: three\n\ndata: four\n\n",
    b"data: a\n\n: c\n\ndata: b\n\ndata:c\n\n",
    b"data:\n\ndata: \n\n",
    b"\x00data: a\n\ndata: \x00\n\n",
    b"",
]


@pytest.mark.parametrize("body", TRICKY, ids=range(len(TRICKY)))
def test_tricky_inputs_agree_at_every_split(body: bytes) -> None:
    assert_agree_all_ways(body)
    assert_agree_all_ways(body, max_event_size=8)
    whole = assert_agree([body])
    assert_agree([body[i : i + 1] for i in range(len(body))])
    for cut in range(len(body) + 1):
        assert_agree([body[:cut], body[cut:]])
    for a in range(0, len(body) + 1, 3):
        for b in range(a, len(body) + 1, 5):
            assert_agree([body[:a], body[a:b], body[b:]])
    # Feeding more than once also exercises the fast path (the first feed of a stream
    # always takes the checked path for the BOM).
    assert_agree([b"", body[:1], body[1:], b""])
    assert whole == assert_agree([body[:1], body[1:]])


@pytest.mark.parametrize(
    "pieces",
    [
        [b"data: ok\n\ndata: 0123456789\ndata: more\n\ndata: after\n\n"],
        [b"data: 1\ndata: 2\n"],
        [b"data: ok\n\n", b"data: 012345", b"6789abcdef", b"ghij\n\ndata: x\n\n"],
        [b"id: 5\ndata: 0123456789abc\n\ndata: x\n\n"],
        [b": a long comment line\ndata: x\n\n"],
        [b"data: x\n\n", b"\xef\xbb\xbfdata: 0123456789abcdef\n", b"\ndata: y\n\n"],
        [b"data: a\r", b"\ndata: 0123456789abcdef\r\r", b"data: ok\r\n\r\n"],
    ],
)
def test_size_limit_agrees(pieces: List[bytes]) -> None:
    body = b"".join(pieces)
    for limit in (0, 1, 5, 12, 16, 40):
        assert_agree(pieces, max_event_size=limit)
        assert_agree([body[i : i + 1] for i in range(len(body))], max_event_size=limit)


# -- property tests --------------------------------------------------------------------

LINES = st.one_of(
    st.sampled_from(
        [
            b"data: hello",
            b"data:",
            b"data",
            "data: h\u00e9\U0001f600".encode(),
            b"data: \xe2\x82",
            b"event: e",
            b"event:",
            b"id: 42",
            b"id: 4\x002",
            b"id",
            b"retry: 100",
            b"retry: x",
            b": ping",
            b"",
            b"\xef\xbb\xbf",
        ]
    ),
    st.binary(max_size=12),
)
ENDS = st.sampled_from([b"\n", b"\r", b"\r\n"])


@st.composite
def stream_and_cuts(draw: Any) -> tuple[bytes, List[bytes]]:
    lines = draw(st.lists(st.tuples(LINES, ENDS), max_size=24))
    body = b"".join(line + end for line, end in lines)
    if draw(st.booleans()):
        body += draw(LINES)  # unterminated last line
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=8)))
    pieces = []
    prev = 0
    for c in cuts:
        pieces.append(body[prev:c])
        prev = c
    pieces.append(body[prev:])
    return body, pieces


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream_and_cuts())
def test_property_any_stream_any_split(case: tuple[bytes, List[bytes]]) -> None:
    body, pieces = case
    whole = assert_agree([body])
    assert assert_agree(pieces) == whole
    assert_agree([b""] + pieces)  # the real first feed is empty: the rest may go fast


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream_and_cuts(), st.integers(0, 40))
def test_property_size_limit(case: tuple[bytes, List[bytes]], limit: int) -> None:
    body, pieces = case
    assert_agree(pieces, max_event_size=limit)
    assert_agree([body], max_event_size=limit)


VALUES = st.sampled_from(
    ["x", "", " ", "a: b", "{\"k\":\"v\"}", "h\u00e9\U0001f600", "event: y", "data: z", "\ufeff"]
).map(str.encode) | st.sampled_from([b"\xff", b"\xe2\x82", b"\x00", b"[DONE]"])


@st.composite
def llm_shaped(draw: Any) -> bytes:
    """Streams made of the block shapes LLM servers send, and near misses of them (the
    pure framer has fast paths for the common shapes; these must fall back correctly)."""
    shapes = [
        lambda t, v, w: b"data: " + v,
        lambda t, v, w: b"event: " + t + b"\ndata: " + v,
        lambda t, v, w: b"event: " + t,
        lambda t, v, w: b"event:\ndata: " + v,
        lambda t, v, w: b"event: \ndata: " + v,
        lambda t, v, w: b"event: " + t + b"\ndata: " + v + b"\ndata: " + w,
        lambda t, v, w: b"data: " + v + b"\ndata: " + w,
        lambda t, v, w: b"id: " + w + b"\ndata: " + v,
        lambda t, v, w: b"event: " + t + b"\nid: " + w + b"\ndata: " + v,
        lambda t, v, w: b"data: " + v + b"\nevent: " + t,
        lambda t, v, w: b": ping",
        lambda t, v, w: b"retry: 5\ndata: " + v,
        lambda t, v, w: b"data:" + v,
        lambda t, v, w: b"",
    ]
    n = draw(st.integers(0, 12))
    blocks = []
    for _ in range(n):
        shape = draw(st.sampled_from(shapes))
        blocks.append(shape(draw(VALUES), draw(VALUES), draw(VALUES)))
    sep = draw(st.sampled_from([b"\n\n", b"\n\n", b"\r\n\r\n", b"\r\r", b"\n\n\n"]))
    body = sep.join(blocks) + (sep if draw(st.booleans()) else b"")
    return body


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(llm_shaped(), st.lists(st.integers(0, 10_000), max_size=6), st.booleans())
def test_property_llm_shaped_streams(body: bytes, cuts: List[int], warm: bool) -> None:
    points = sorted(c % (len(body) + 1) for c in cuts)
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)])]
    # A first read that is already framed moves both parsers past the start of the stream,
    # so every piece after it takes the fast paths.
    prefix = [b"data: warm\n\n"] if warm else []
    assert_agree(prefix + pieces)
    assert_agree(prefix + [body])
    assert_agree(prefix + [body[i : i + 1] for i in range(len(body))])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**16), st.integers(1, 300))
def test_property_corpus_random_reads(seed: int, size: int) -> None:
    body = _streams.chat_stream(20, seed=seed, tool_calls=seed % 2 == 0)
    assert_agree(_streams.chunked(body, size, seed=seed))


# -- behaviour of the pure parser itself ------------------------------------------------


def test_pure_event_equals_rust_event_both_ways() -> None:
    rust = ssewire.SSEParser().feed(b"event: e\nid: 1\nretry: 5\ndata: x\n\n")[0]
    pure = PureSSEParser().feed(b"event: e\nid: 1\nretry: 5\ndata: x\n\n")[0]
    assert pure == rust and rust == pure and not (pure != rust)
    assert hash(pure) == hash(rust)
    assert PureEvent("x", "e", "1", 5) == pure
    assert PureEvent("x", "e", "1", 6) != rust
    assert PureEvent("x") == ssewire.Event("x")
    assert PureEvent("x") != object() and PureEvent("x") != "x"
    assert "PureEvent(event='e', data='x', id='1', retry=5)" == repr(pure)


def test_accepts_buffers_and_refuses_text() -> None:
    body = b"data: a\n\n"
    for wrap in (bytes, bytearray, memoryview, lambda b: memoryview(b"..." + b)[3:]):
        assert [e.data for e in PureSSEParser().feed(wrap(body))] == ["a"]
    with pytest.raises(TypeError, match="encode"):
        PureSSEParser().feed("data: a\n\n")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        PureSSEParser().feed(12)  # type: ignore[arg-type]


def test_huge_line_in_small_reads() -> None:
    line = b"data: " + b"x" * (1 << 20) + b"\n\n"
    parser = PureSSEParser()
    events = []
    for piece in _streams.chunked(line, 1024):
        events += parser.feed(piece)
    assert len(events) == 1 and len(events[0].data) == 1 << 20
    with pytest.raises(ssewire.EventTooLargeError) as info:
        small = PureSSEParser(max_event_size=1000)
        for piece in _streams.chunked(line, 512):
            small.feed(piece)
    assert info.value.limit == 1000


# -- the stream generators ------------------------------------------------------------


def frames(body: bytes) -> List[Any]:
    return [(e.event, e.data) for e in ssewire.SSEParser().feed(body)]


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_generated_frames_are_json(name: str) -> None:
    body = CORPORA[name]()
    assert body.endswith(b"\n\n") and b"\r" not in body
    parser = ssewire.SSEParser()
    events = parser.feed(body)
    assert not parser.pending
    for event in events:
        if event.data == "[DONE]":
            assert event is events[-1]
            continue
        obj = json.loads(event.data)
        assert isinstance(obj, dict)
        if event.event != "message":
            assert obj["type"] == event.event
    # Generators write compact JSON with raw UTF-8, like real servers.
    assert b'": ' not in body.split(b"\n", 1)[0] and b"\\u00" not in body


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_generators_are_deterministic(name: str) -> None:
    assert CORPORA[name]() == CORPORA[name]()


def test_seed_changes_the_body_and_sizes_are_realistic() -> None:
    assert _streams.chat_stream(50, seed=1) != _streams.chat_stream(50, seed=2)
    texts = _streams.tokens(5000, seed=3)
    assert all(1 <= len(t) <= 12 for t in texts)
    assert any(ord(c) > 127 for t in texts for c in t)
    assert any('"' in t or "\\" in t or "\n" in t for t in texts)
    assert len(set(texts)) > 50


def test_chat_stream_shape() -> None:
    events = frames(_streams.chat_stream(30, seed=9))
    assert events[-1] == ("message", "[DONE]")
    chunks = [json.loads(d) for _, d in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    content = [c["choices"][0]["delta"].get("content") for c in chunks[1:31]]
    assert content == _streams.tokens(30, seed=9)
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 30
    inline = [json.loads(d) for _, d in frames(_streams.chat_stream(5, usage="inline"))[:-1]]
    assert inline[-1]["choices"][0]["finish_reason"] == "stop" and inline[-1]["usage"]
    tools = [json.loads(d) for _, d in frames(_streams.chat_stream(5, tool_calls=True))[:-1]]
    args: dict = {}
    for c in tools[:-1]:  # the last chunk is the usage chunk, with "choices": []
        for call in c["choices"][0]["delta"].get("tool_calls") or ():
            args[call["index"]] = args.get(call["index"], "") + call["function"]["arguments"]
    assert [json.loads(a) for a in args.values()] == [a for _, a in _streams._TOOLS]
    assert tools[-2]["choices"][0]["finish_reason"] == "tool_calls"


def test_messages_stream_shape() -> None:
    events = frames(_streams.messages_stream(10, seed=1, thinking=True, tool_use=True))
    names = [e for e, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    text = "".join(
        json.loads(d)["delta"]["text"]
        for e, d in events
        if e == "content_block_delta" and '"text_delta"' in d
    )
    assert text == "".join(_streams.tokens(10, seed=1))
    assert json.loads(events[-2][1])["delta"]["stop_reason"] == "tool_use"


def test_responses_stream_shape() -> None:
    events = frames(_streams.responses_stream(10, seed=1, tool_calls=True))
    objs = [json.loads(d) for _, d in events]
    assert [o["sequence_number"] for o in objs] == list(range(len(objs)))
    assert objs[0]["type"] == "response.created" and objs[-1]["type"] == "response.completed"
    deltas = "".join(o["delta"] for o in objs if o["type"] == "response.output_text.delta")
    final = objs[-1]["response"]
    assert final["output"][0]["content"][0]["text"] == deltas
    assert final["status"] == "completed" and final["usage"]["output_tokens"] > 10
    named = frames(_streams.responses_stream(3, event_lines=True, done_marker=True))
    assert named[0][0] == "response.created" and named[-1] == ("message", "[DONE]")


def test_chunked_and_event_reads() -> None:
    body = _streams.chat_stream(50, seed=4)
    for pieces in (
        _streams.chunked(body, 4096),
        _streams.chunked(body, 4096, seed=5),
        _streams.chunked(body, 1, seed=6),
        _streams.event_reads(body),
        _streams.event_reads(body, 3),
    ):
        assert b"".join(pieces) == body and all(pieces)
    assert {len(p) for p in _streams.chunked(body, 4096)[:-1]} == {4096}
    irregular = _streams.chunked(body, 256, seed=5)
    assert len({len(p) for p in irregular}) > 5
    assert irregular == _streams.chunked(body, 256, seed=5)
    assert len(_streams.event_reads(body)) == len(frames(body))
    with pytest.raises(ValueError):
        _streams.chunked(body, 0)
    assert _streams.chunked(b"", 10) == _streams.chunked(b"", 10, seed=3) == []
