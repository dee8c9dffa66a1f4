"""The frame-template fast path (src/dialect/template.rs) must be invisible: a stream that
reuses the previous frame's shape decodes every frame exactly as a fresh stream that decodes it
from scratch. Frames are built by splicing arbitrary bytes into the text hole of a real frame,
so the hole may hold escapes, quotes, control characters, or text that changes the JSON
structure (then the fast path must step aside and the full decoder must take over)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import ssewire
from hypothesis import given, settings
from hypothesis import strategies as st
from support.items import _attrs, _seen
from support.splitting import split_ways

CHAT_HEAD = (
    '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m",'
    '"choices":[{"index":0,"delta":{"content":"'
)
CHAT_TAIL = '"},"logprobs":null,"finish_reason":null}],"usage":null}'
TOOL_HEAD = (
    '{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
    '"function":{"arguments":"'
)
TOOL_TAIL = '"}}]},"finish_reason":null}]}'
MSG_HEAD = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'
MSG_TAIL = '"}}'

# Raw hole contents: JSON-escaped text, and raw fragments that are not a valid literal or that
# close the string early and add structure.
_json_text = st.text(max_size=12).map(lambda t: json.dumps(t)[1:-1])
_raw = st.sampled_from(
    ['a","refusal":"x', "a\\", '\\"', "\\u00e9", "\\ud83d\\ude00", "\\x", "a\nb", '"', "", "\\\\", '}]}']
)
_hole = st.one_of(_json_text, _raw, st.text(alphabet='ab"\\\n{}:,', max_size=6))


def _body(frames: list[str], event: str | None) -> bytes:
    line = f"event: {event}\n" if event else ""
    return "".join(f"{line}data: {f}\n\n" for f in frames).encode()


def _same_as_fresh(cls: Any, frames: list[str], event: str | None = None) -> None:
    body = _body(frames, event)
    stream = cls()
    templated = [_attrs(i) for i in stream.feed(body)]
    fresh: list[Any] = []
    for f in frames:
        fresh.extend(_attrs(i) for i in cls().feed(_body([f], event)))
    assert templated == fresh


@settings(max_examples=150, deadline=None)
@given(st.lists(_hole, min_size=1, max_size=8))
def test_chat_content_hole(holes: list[str]) -> None:
    frames = [CHAT_HEAD + "first" + CHAT_TAIL] + [CHAT_HEAD + h + CHAT_TAIL for h in holes]
    _same_as_fresh(ssewire.ChatCompletionStream, frames)


@settings(max_examples=100, deadline=None)
@given(st.lists(_hole, min_size=1, max_size=8))
def test_chat_tool_arguments_hole(holes: list[str]) -> None:
    frames = [TOOL_HEAD + "{" + TOOL_TAIL] + [TOOL_HEAD + h + TOOL_TAIL for h in holes]
    _same_as_fresh(ssewire.ChatCompletionStream, frames)


@settings(max_examples=100, deadline=None)
@given(st.lists(_hole, min_size=1, max_size=8))
def test_messages_text_hole(holes: list[str]) -> None:
    frames = [MSG_HEAD + "first" + MSG_TAIL] + [MSG_HEAD + h + MSG_TAIL for h in holes]
    _same_as_fresh(ssewire.MessagesStream, frames, event="content_block_delta")


def test_a_changed_frame_shape_is_decoded_in_full() -> None:
    """A frame that differs outside the hole (another choice index, a finish reason, another
    event type) must not be taken for the template."""
    frames = [
        CHAT_HEAD + "a" + CHAT_TAIL,
        CHAT_HEAD.replace('"index":0', '"index":1') + "b" + CHAT_TAIL,
        CHAT_HEAD + "c" + CHAT_TAIL.replace('"finish_reason":null', '"finish_reason":"stop"'),
        CHAT_HEAD + "d" + CHAT_TAIL,
    ]
    _same_as_fresh(ssewire.ChatCompletionStream, frames)
    items = ssewire.ChatCompletionStream().feed(_body(frames, None))
    assert [(i.index, i.content, i.finish_reason) for i in items] == [
        (0, "a", None),
        (1, "b", None),
        (0, "c", "stop"),
        (0, "d", None),
    ]
    msgs = [MSG_HEAD + "a" + MSG_TAIL, MSG_HEAD + "b" + MSG_TAIL]
    body = _body(msgs[:1], "content_block_delta") + _body(msgs[1:], "other_event")
    items = ssewire.MessagesStream().feed(body)
    assert [(i.type, i.text) for i in items] == [("content_block_delta", "a"), ("content_block_delta", "b")]


RESP_HEAD = '{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"'
_number = st.one_of(
    st.integers(min_value=0, max_value=10**12).map(str),
    st.sampled_from(["07", "-1", "1.5", " 3", "", "1e3", "99999999999999999999"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_hole, _number), min_size=1, max_size=8), st.booleans())
def test_responses_text_and_sequence_number_holes(holes: list[tuple[str, str]], number_first: bool) -> None:
    def frame(text: str, number: str) -> str:
        if number_first:
            head = RESP_HEAD.replace('"delta":"', f'"sequence_number":{number},"delta":"')
            return head + text + '"}'
        return RESP_HEAD + text + f'","sequence_number":{number}}}'

    frames = [frame("first", "1")] + [frame(h, n) for h, n in holes]
    _same_as_fresh(ssewire.ResponsesStream, frames)


def _gemini(text: str, candidates: str, total: str, thought: bool = False) -> str:
    """A Gemini text chunk in Google's spelling, with its cumulative usage counts."""
    flag = ',"thought": true' if thought else ""
    return (
        '{"candidates": [{"content": {"parts": [{"text": "' + text + '"' + flag + '}],"role": "model"},'
        '"index": 0}],"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": ' + candidates
        + ',"totalTokenCount": ' + total + ',"promptTokensDetails": [{"modality": "TEXT","tokenCount": 9}]},'
        '"modelVersion": "gemini-2.5-flash","responseId": "r1"}'
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_hole, _number, _number, st.booleans()), min_size=1, max_size=8))
def test_gemini_text_and_usage_holes(holes: list[tuple[str, str, str, bool]]) -> None:
    """Gemini repeats a cumulative usage object on every chunk: its counts are number holes and
    the object a span; anything else in them (not a count, another key) is decoded in full."""
    frames = [_gemini("first", "1", "10")] + [_gemini(h, a, b, t) for h, a, b, t in holes]
    _same_as_fresh(ssewire.GeminiStream, frames)
    body = "".join(f"data: {f}\r\n\r\n" for f in frames).encode()
    for consume in (False, True):
        assert _seen(ssewire.GeminiStream, [body], consume) == _seen(
            ssewire.GeminiStream, [body[i : i + 1] for i in range(len(body))], consume
        )


def test_gemini_template_keeps_the_other_keys_of_its_chunk() -> None:
    """Vertex chunks carry a `createTime` and no index; some models send `safetyRatings` with
    every chunk. A template hit folds them again: a chunk of another shape in between that
    sent another value must not win over the later hits (the last value sent wins)."""
    def vertex(text: str, rating: str, extra_part: str = "") -> str:
        return (
            '{"candidates": [{"content": {"role": "model","parts": [{"text": "' + text + '"}' + extra_part
            + ']},"safetyRatings": [{"category": "HARM_CATEGORY_HATE_SPEECH","probability": "' + rating
            + '"}]}],"usageMetadata": {"trafficType": "ON_DEMAND"},"modelVersion": "gemini-2.5-pro",'
            '"createTime": "2025-11-20T10:00:00.000000Z","responseId": "v1"}'
        )

    frames = [vertex("a", "NEGLIGIBLE"), vertex("b", "NEGLIGIBLE"),
              vertex("c", "LOW", ',{"executableCode": {"code": "1"}}'),  # another shape
              vertex("d", "NEGLIGIBLE")]  # fmt: skip
    _same_as_fresh(ssewire.GeminiStream, frames)
    body = "".join(f"data: {f}\r\n\r\n" for f in frames).encode()
    for reads in ([body], [body[i : i + 1] for i in range(len(body))]):
        s = ssewire.GeminiStream()
        for r in reads:
            s.consume(r)
        result = s.result()
        cand = result["candidates"][0]
        assert cand["safetyRatings"][0]["probability"] == "NEGLIGIBLE"
        assert "index" not in cand and result["createTime"].startswith("2025")
        assert [p.get("text") for p in cand["content"]["parts"]] == ["abc", None, "d"]


def test_a_template_made_from_an_empty_string_keeps_its_place() -> None:
    """The first frame's text is empty and sits beside another empty string: the hole must be
    the content's own place, or the copies would put the new text in the wrong field."""
    for head, tail in (
        ('{"choices":[{"index":0,"delta":{"refusal":"","content":"', '"}}]}'),
        ('{"choices":[{"index":0,"delta":{"content":"', '","refusal":""}}]}'),
    ):
        frames = [head + text + tail for text in ("", "x", "", "yz")]
        _same_as_fresh(ssewire.ChatCompletionStream, frames)
        items = ssewire.ChatCompletionStream().feed(_body(frames, None))
        assert [(i.content, i.refusal) for i in items] == [("", ""), ("x", ""), ("", ""), ("yz", "")]


_padding = st.one_of(
    st.text(alphabet="abcXYZ0189_-", max_size=16),
    st.sampled_from(["\\u0041", "\\x", 'a","b":"c', "a\\", "\\\\", ""]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_hole, _padding), min_size=1, max_size=8))
def test_chat_with_obfuscation_padding(holes: list[tuple[str, str]]) -> None:
    """OpenAI pads every chunk with a random `obfuscation` string (on by default): the
    template must skip over it, and a padding that is not a valid string must not pass."""
    def frame(text: str, pad: str) -> str:
        return CHAT_HEAD + text + CHAT_TAIL[:-1] + ',"obfuscation":"' + pad + '"}'

    frames = [frame("first", "Qx7")] + [frame(h, p) for h, p in holes]
    _same_as_fresh(ssewire.ChatCompletionStream, frames)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_hole, _padding, _number), min_size=1, max_size=8))
def test_responses_with_obfuscation_and_sequence_number(holes: list[tuple[str, str, str]]) -> None:
    def frame(text: str, pad: str, number: str) -> str:
        return RESP_HEAD + text + f'","obfuscation":"{pad}","sequence_number":{number}}}'

    frames = [frame("first", "Qx7", "1")] + [frame(*h) for h in holes]
    _same_as_fresh(ssewire.ResponsesStream, frames)


def test_obfuscation_is_not_a_vendor_extra() -> None:
    body = (
        b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,'
        b'"delta":{"content":"Hi"}}],"obfuscation":"k3Jd"}\n\ndata: [DONE]\n\n'
    )
    stream = ssewire.ChatCompletionStream()
    (item,) = stream.feed(body)
    assert item.extra is None and item.has_json is False


# -- whole frames read straight from the wire (StreamCore::run + Shape::fill_raw) ---------------
#
# While the framer is between events, a frame of the template's shape is read from the bytes
# without the framer. Every other spelling of the same frame must go to the framer and come out
# the same: the checks feed each body whole (the fast path takes every frame it can) and one
# byte at a time (it never sees a whole frame), with items and with consume(), and compare all
# the stream shows.

RESP_HEAD = (
    '{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,'
    '"content_index":0,"delta":"'
)

_DIALECT_FRAMES = {
    # dialect: (stream class, event type, data of a frame with hole h and number n)
    "chat": (ssewire.ChatCompletionStream, None, lambda h, n: f"{CHAT_HEAD}{h}{CHAT_TAIL}"),
    "messages": (ssewire.MessagesStream, "content_block_delta", lambda h, n: f"{MSG_HEAD}{h}{MSG_TAIL}"),
    "responses": (
        ssewire.ResponsesStream,
        "response.output_text.delta",
        lambda h, n: f'{RESP_HEAD}{h}","logprobs":[],"sequence_number":{n}}}',
    ),
    "gemini": (ssewire.GeminiStream, None, lambda h, n: _gemini(h, str(n + 1), str(n + 10))),
}

#: How one frame is written on the wire: the template's own spelling, and the others the
#: framer reads as the same (or a slightly different) frame.
_SPELLINGS = [
    "plain",
    "crlf",
    "cr",
    "no-space",  # data:{...}
    "id",  # an id: line before it
    "comment",  # a heartbeat comment inside the event
    "retry",
    "split-data",  # the JSON over two data lines
    "bad-utf8",  # an invalid byte in the hole
    "lone-surrogate",  # a lone surrogate escape in the hole
    "blank-lines",  # extra blank lines after it
]


def _wire(event: str | None, data: str, spelling: str) -> bytes:
    nl = {"crlf": "\r\n", "cr": "\r"}.get(spelling, "\n")
    colon = ":" if spelling == "no-space" else ": "
    lines = []
    if spelling == "id":
        lines.append("id: 7")
    if spelling == "retry":
        lines.append("retry: 1500")
    if event:
        lines.append(f"event{colon}{event}")
    if spelling == "comment":
        lines.append(": keep-alive")
    if spelling == "split-data":
        cut = len(data) // 2
        lines += [f"data{colon}{data[:cut]}", f"data{colon}{data[cut:]}"]
    else:
        lines.append(f"data{colon}{data}")
    text = nl.join(lines) + nl + nl + (nl if spelling == "blank-lines" else "")
    raw = text.encode()
    if spelling == "bad-utf8":
        raw = raw.replace(b"\x01HOLE\x01", b"a\xffb")
    return raw


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(_DIALECT_FRAMES)),
    st.lists(st.tuples(_hole, st.sampled_from(_SPELLINGS)), min_size=1, max_size=10),
)
def test_frames_read_without_the_framer_match_the_framer(dialect: str, frames: list[tuple[str, str]]) -> None:
    cls, event, data_of = _DIALECT_FRAMES[dialect]
    body = b""
    for n, (hole, spelling) in enumerate(frames):
        if spelling == "bad-utf8":
            hole = "\x01HOLE\x01"
        elif spelling == "lone-surrogate":
            hole = hole + "\\ud800"
        body += _wire(event, data_of(hole, n), spelling)
    whole, one_by_one = [body], [body[i : i + 1] for i in range(len(body))]
    for consume in (False, True):
        assert _seen(cls, whole, consume) == _seen(cls, one_by_one, consume)


def test_the_fast_path_takes_template_frames_and_leaves_the_rest() -> None:
    """The spellings above are read the same way; the plain ones really are the fast path's
    (a frame of the template's shape is taken whole, a CRLF one is framed)."""
    cls, event, data_of = _DIALECT_FRAMES["messages"]
    plain = b"".join(_wire(event, data_of(f"t{n}", n), "plain") for n in range(3))
    crlf = b"".join(_wire(event, data_of(f"t{n}", n), "crlf") for n in range(3))
    for body in (plain, crlf, plain + crlf + plain):
        s = cls()
        items = s.feed(body)
        assert [i.text for i in items] == ["t0", "t1", "t2"] * (body.count(b"t0"))
    # An oversized frame of the template's shape is refused as the framer refuses it, and the
    # frames around it are kept.
    s = ssewire.MessagesStream(max_event_size=200)
    big = _wire(event, data_of("x" * 300, 1), "plain")
    body = _wire(event, data_of("a", 0), "plain") + big + _wire(event, data_of("b", 2), "plain")
    with pytest.raises(ssewire.EventTooLargeError) as raised:
        s.feed(body)
    assert [getattr(i, "text", None) for i in raised.value.events] == ["a", "b"]
    assert raised.value.limit == 200


def test_runs_of_empty_lines_and_comments_between_template_frames() -> None:
    """Between events the framer gets everything that is not a template frame: a run of empty
    lines (in one piece), heartbeat comments, an unnamed event; the frames around them are read
    the same whole and one byte at a time."""
    cls, event, data_of = _DIALECT_FRAMES["messages"]
    body = (
        _wire(event, data_of("a", 0), "plain")
        + b"\n" * 100_000
        + b": ping\n\n" * 1000
        + _wire(event, data_of("b", 1), "plain")
        + b"\n\n\n"
        + _wire(event, data_of("c", 2), "plain")
    )
    whole = _seen(cls, [body], consume=False)
    assert [dict(i[1])["text"] for i in whole[0]] == ["a", "b", "c"]
    assert whole == _seen(cls, [body[i : i + 7] for i in range(0, len(body), 7)], consume=False)


# -- templates made from escaped text (issue 25) ------------------------------------------------
#
# Real model output has a newline, a quote or a non-ASCII character (escaped as \uXXXX by most
# encoders) in most deltas. A template is made from such a frame too: the escaped literal is
# found in the frame (src/json/read.rs, locate_escaped) and left open, and later frames'
# escapes are decoded in the pass that finds the string's end (scan_string).

_escaped_text = st.text(
    alphabet=st.sampled_from(list('ab \n\t"\\/`é€😀\u2028\x01')), min_size=1, max_size=10
).map(lambda t: json.dumps(t)[1:-1] if "\\" in json.dumps(t) else json.dumps(t + "\n")[1:-1])
_some_escaped_text = st.one_of(_escaped_text, _json_text)


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(sorted(_DIALECT_FRAMES)),
    _escaped_text,
    st.lists(st.one_of(_some_escaped_text, _raw), min_size=1, max_size=8),
)
def test_a_template_made_from_escaped_text_is_invisible(dialect: str, first: str, rest: list[str]) -> None:
    """The first frame's text holds an escape (so the template is made from an escaped literal);
    the frames after it decode as fresh streams decode them, fed whole, one byte at a time and
    at random cuts, with items and with consume()."""
    cls, event, data_of = _DIALECT_FRAMES[dialect]
    frames = [data_of(first, 0)] + [data_of(h, n + 1) for n, h in enumerate(rest)]
    _same_as_fresh(cls, frames, event)
    body = b"".join(_wire(event, f, "plain") for f in frames)
    for consume in (False, True):
        whole = _seen(cls, [body], consume)
        for way in split_ways(body, random_splits=2):
            assert _seen(cls, way.pieces, consume) == whole, way.name


def test_escaped_text_is_decoded_on_the_fast_path_as_in_full() -> None:
    """Escapes of every kind in template frames (after an escaped first frame): newlines,
    quotes, backslashes, \\u escapes of the BMP and surrogate pairs, in both hex cases."""
    texts = ["a\\nb", 'say \\"hi\\"', "c:\\\\dir", "caf\\u00e9", "\\ud83d\\ude00!", "\\uD83D\\uDE00", "tab\\tend"]
    expected = [json.loads(f'"{t}"') for t in texts]
    for dialect, attr in [("chat", "content"), ("messages", "text"), ("responses", "delta"), ("gemini", "text")]:
        cls, event, data_of = _DIALECT_FRAMES[dialect]
        body = b"".join(_wire(event, data_of(t, n), "plain") for n, t in enumerate(texts))
        for way in split_ways(body, random_splits=2):
            s = cls()
            items = [i for chunk in way.pieces for i in s.feed(chunk)]
            assert [getattr(i, attr) for i in items] == expected, (dialect, way.name)
            c = cls()
            for chunk in way.pieces:
                c.consume(chunk)
            assert c.result() == s.result(), (dialect, way.name)


def test_an_escaped_text_that_stands_twice_in_its_frame_is_not_a_template() -> None:
    """The same escaped string as two values of one frame (a chat content and a vendor key):
    its place cannot be told, so no template is made from that frame, and every frame is
    still decoded as in full."""
    frames = [
        CHAT_HEAD + "x\\ny" + CHAT_TAIL.replace('"logprobs":null', '"logprobs":null,"text":"x\\ny"'),
        CHAT_HEAD + "x\\nz" + CHAT_TAIL.replace('"logprobs":null', '"logprobs":null,"text":"x\\ny"'),
    ]
    _same_as_fresh(ssewire.ChatCompletionStream, frames)
    items = ssewire.ChatCompletionStream().feed(_body(frames, None))
    assert [i.content for i in items] == ["x\ny", "x\nz"]


# -- vendor keys on the fast path (issue 25) ------------------------------------------------------
#
# Keys the decoder does not know, at the chunk's, the choice's and the delta's level, of every
# JSON type. Their string and integer values are holes of the template (so a stream whose vendor
# values change on every chunk, such as Together's `text` and `token_id`, stays on it), the rest
# fixed parts; either way every frame must decode as a fresh stream decodes it.

_vendor_value = st.one_of(
    _json_text.map(lambda t: f'"{t}"'),
    _escaped_text.map(lambda t: f'"{t}"'),
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.sampled_from(["null", "true", "false", "1.5", "-0.0", "1e3", "[]", "[1,\"a\"]", "{}", '{"k":"v"}', '""']),
)
_level = st.sampled_from(["chunk", "choice", "delta"])


def _chat_with_vendor(text: str, vendor: list[tuple[str, str, str]]) -> str:
    def keys(level: str) -> str:
        return "".join(f',"{k}":{v}' for lv, k, v in vendor if lv == level)

    return (
        '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m"' + keys("chunk") + ","
        '"choices":[{"index":0' + keys("choice") + ',"delta":{"content":"' + text + '"' + keys("delta") + "},"
        '"logprobs":null,"finish_reason":null}]}'
    )


_vendor_keys = st.lists(
    st.tuples(_level, st.sampled_from(["text", "token_id", "seed", "x_meta", "provider"]), _vendor_value),
    max_size=4,
    unique_by=lambda t: (t[0], t[1]),
)


@settings(max_examples=150, deadline=None)
@given(
    _vendor_keys,
    st.lists(st.tuples(_some_escaped_text, st.lists(_vendor_value, min_size=4, max_size=4)), min_size=1, max_size=8),
    st.booleans(),
)
def test_vendor_keys_of_every_type_at_every_level(
    keys: list[tuple[str, str, str]], frames: list[tuple[str, list[str]]], reshape: bool
) -> None:
    """The first frame sets which vendor keys the chunks carry; later frames carry the same
    keys with other values (or, with `reshape`, every other frame drops the last key: the
    shape changes mid-stream). Fed whole, one byte at a time and at random cuts, with items
    and with consume(), everything equals fresh decodes."""
    bodies = [_chat_with_vendor("first", keys)]
    for n, (text, values) in enumerate(frames):
        vendor = [(lv, k, values[i]) for i, (lv, k, _) in enumerate(keys)]
        if reshape and n % 2 and vendor:
            vendor = vendor[:-1]
        bodies.append(_chat_with_vendor(text, vendor))
    cls = ssewire.ChatCompletionStream
    _same_as_fresh(cls, bodies)
    body = _body(bodies, None)
    # The fold of the fast path equals the fold of items decoded in full (one fresh stream a
    # frame: no template), when the stream is one (a malformed frame is an error item).
    fresh = ssewire.ChatCompletionAccumulator()
    for f in bodies:
        fresh.add_all(cls().feed(_body([f], None)))
    templated = cls()
    templated.consume(body)
    assert templated.result() == fresh.result()
    for consume in (False, True):
        whole = _seen(cls, [body], consume)
        for way in split_ways(body, random_splits=2):
            assert _seen(cls, way.pieces, consume) == whole, way.name


def test_a_together_stream_keeps_its_changing_vendor_values() -> None:
    """Together / Hugging Face chunks repeat the text under the choice's `text` and number each
    token under the delta's `token_id`: the items and the result carry each chunk's own values
    (the result keeps the last, as the fold always has)."""
    texts = ["Hel", "lo \\n", 'a \\"q\\"', "caf\\u00e9"]
    frames = [
        '{"id":"","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        f'"text":"{t}","logprobs":null,"finish_reason":null,"seed":null,"delta":{{"token_id":{100 + n},'
        f'"role":"assistant","content":"{t}","tool_calls":null}}}}],"usage":null}}'
        for n, t in enumerate(texts)
    ]
    body = _body(frames, None)
    decoded = [json.loads(f'"{t}"') for t in texts]
    for way in split_ways(body, random_splits=2):
        s = ssewire.ChatCompletionStream()
        items = [i for piece in way.pieces for i in s.feed(piece)]
        assert [i.content for i in items] == decoded
        assert [i.choice_extra for i in items] == [{"text": t, "seed": None} for t in decoded]
        assert [i.delta_extra for i in items] == [{"token_id": 100 + n} for n in range(len(texts))]
        result = s.result()
        assert result["choices"][0]["message"]["content"] == "".join(decoded)
        assert result["choices"][0]["text"] == decoded[-1]
        assert result["choices"][0]["message"]["token_id"] == 100 + len(texts) - 1
        c = ssewire.ChatCompletionStream()
        for piece in way.pieces:
            c.consume(piece)
        assert c.result() == result


# -- vendor keys of Messages and Responses events on the fast path (issue 25) --------------------
#
# A key the decoder does not know, at the event's level or (Messages) the delta's: the event
# keeps its raw JSON (`raw` of its item, what the fold reads), and the template leaves its string
# and number values open, so a stream whose vendor values change on every delta (a shell call's
# `command_index`, a vendor's token counter) stays on it.


def _messages_with_vendor(text: str, vendor: list[tuple[str, str, str]]) -> str:
    def keys(level: str) -> str:
        return "".join(f',"{k}":{v}' for lv, k, v in vendor if lv == level)

    return (
        '{"type":"content_block_delta","index":0' + keys("event") + ','
        '"delta":{"type":"text_delta","text":"' + text + '"' + keys("delta") + "}}"
    )


def _responses_with_vendor(text: str, vendor: list[tuple[str, str, str]], n: int) -> str:
    keys = "".join(f',"{k}":{v}' for _, k, v in vendor)
    return (
        '{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,'
        f'"delta":"{text}"' + keys + f',"sequence_number":{n + 3}}}'
    )


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(["messages", "responses"]),
    st.lists(
        st.tuples(
            st.sampled_from(["event", "delta"]),
            st.sampled_from(["text", "command_index", "seed", "x_meta", "provider"]),
            _vendor_value,
        ),
        max_size=4,
        unique_by=lambda t: (t[0], t[1]),
    ),
    st.lists(st.tuples(_some_escaped_text, st.lists(_vendor_value, min_size=4, max_size=4)), min_size=1, max_size=8),
    st.booleans(),
)
def test_messages_and_responses_vendor_keys_of_every_type(
    dialect: str, keys: list[tuple[str, str, str]], frames: list[tuple[str, list[str]]], reshape: bool
) -> None:
    """As for chat: the first frame sets the vendor keys, later frames carry other values (with
    `reshape`, every other frame drops one); fed whole, one byte at a time and at random cuts,
    with items and with consume(), everything equals fresh decodes, and the fold of the fast
    path equals the fold of items decoded in full."""
    if dialect == "messages":
        cls, acc, event = ssewire.MessagesStream, ssewire.MessageAccumulator, "content_block_delta"
        make = lambda text, vendor, n: _messages_with_vendor(text, vendor)  # noqa: E731
        start = (
            '{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],'
            '"model":"c","usage":{"input_tokens":1,"output_tokens":1}}}'
        )
        block = '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'
        opening = [("message_start", start), ("content_block_start", block)]
    else:
        cls, acc, event = ssewire.ResponsesStream, ssewire.ResponseAccumulator, "response.output_text.delta"
        keys = [k for k in keys if k[0] == "event"]
        make = _responses_with_vendor
        opening = []
    bodies = [make("first", keys, 0)]
    for n, (text, values) in enumerate(frames):
        vendor = [(lv, k, values[i]) for i, (lv, k, _) in enumerate(keys)]
        if reshape and n % 2 and vendor:
            vendor = vendor[:-1]
        bodies.append(make(text, vendor, n + 1))
    head = "".join(f"event: {e}\ndata: {d}\n\n" for e, d in opening).encode()
    body = head + _body(bodies, event)
    fresh_items: list[Any] = []
    fresh = acc()
    for e, d in opening:
        got = cls().feed(f"event: {e}\ndata: {d}\n\n".encode())
        fresh.add_all(got)
    for f in bodies:
        got = cls().feed(_body([f], event))
        fresh_items.extend(_attrs(i) for i in got)
        fresh.add_all(got)
    templated = cls()
    items = [_attrs(i) for i in templated.feed(body)]
    assert items[len(opening):] == fresh_items
    assert templated.result() == fresh.result()
    for consume in (False, True):
        whole = _seen(cls, [body], consume)
        for way in split_ways(body, random_splits=2):
            assert _seen(cls, way.pieces, consume) == whole, way.name


def test_a_shell_call_command_streams_on_the_fast_path_with_its_raw_event() -> None:
    """`response.shell_call_command.delta` carries `command_index`, a key this decoder does not
    name: each item keeps its own raw event (with its own delta and index), and the deltas fold
    into the call as the full decode folds them."""
    frames = [
        '{"type":"response.shell_call_command.delta","output_index":0,"command_index":%d,'
        '"delta":"%s","obfuscation":"%s","sequence_number":%d}' % (n // 3, t, "x" * (n % 5), n + 4)
        for n, t in enumerate(["ls", " -la", " \\\"a b\\\"", "cat", " f.txt", "\\n", "echo", " hi"])
    ]
    body = _body(frames, "response.shell_call_command.delta")
    for way in split_ways(body, random_splits=2):
        s = ssewire.ResponsesStream()
        items = [i for piece in way.pieces for i in s.feed(piece)]
        assert [i.raw for i in items] == [json.loads(f) for f in frames]
        assert [i.delta for i in items] == [json.loads(f)["delta"] for f in frames]
        assert [i.sequence_number for i in items] == list(range(4, 12))


def _openrouter_reasoning(text: str, index: str, extra: str) -> str:
    return (
        '{"id":"gen-1","provider":"Anthropic","model":"m","object":"chat.completion.chunk","created":1,'
        '"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"' + text + '",'
        '"reasoning_details":[{"type":"reasoning.text","text":"' + text + '","format":"anthropic-claude-v1",'
        '"index":' + index + extra + "}]},"
        '"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}'
    )


@settings(max_examples=120, deadline=None)
@given(
    st.lists(
        st.tuples(_some_escaped_text, st.sampled_from(["0", "1", "12", "null", '"a"']), st.sampled_from(["", ',"id":null', ',"signature":"s"'])),
        min_size=1,
        max_size=8,
    )
)
def test_openrouter_reasoning_details_on_the_fast_path(frames: list[tuple[str, str, str]]) -> None:
    """OpenRouter repeats each reasoning delta in `reasoning_details` beside `"content": ""`:
    the reasoning is the text hole, the details' strings and numbers raw holes written back as
    sent. Items, the fold and every way of feeding equal fresh decodes; the blocks merge by
    index as the full decode merges them."""
    bodies = [_openrouter_reasoning("Think", "0", "")] + [_openrouter_reasoning(t, i, x) for t, i, x in frames]
    cls = ssewire.ChatCompletionStream
    _same_as_fresh(cls, bodies)
    body = _body(bodies, None)
    fresh = ssewire.ChatCompletionAccumulator()
    for f in bodies:
        fresh.add_all(cls().feed(_body([f], None)))
    templated = cls()
    templated.consume(body)
    assert templated.result() == fresh.result()
    for consume in (False, True):
        whole = _seen(cls, [body], consume)
        for way in split_ways(body, random_splits=2):
            assert _seen(cls, way.pieces, consume) == whole, way.name
    # Frames that differ from the first only in values are read by the template.
    plain = [_openrouter_reasoning(f"step {n} \\n", str(n % 2), "") for n in range(10)]
    s = cls()
    s.consume(_body(plain, None))
    assert s._fast_frames == 9


def test_messages_text_of_the_next_block_takes_the_fast_path() -> None:
    """The block index is a hole of a Messages template: after a citation or a tool call the
    text of the next block fits the same template under consume() (the fold puts it in its
    own block), and every way of reading gives the same result as items decoded in full."""

    def delta(index: int, text: str) -> bytes:
        data = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}
        return _wire("content_block_delta", json.dumps(data, separators=(",", ":")), "plain")

    def start(index: int) -> bytes:
        data = {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        stop = {"type": "content_block_stop", "index": index}
        return _wire("content_block_start", json.dumps(data, separators=(",", ":")), "plain"), _wire(
            "content_block_stop", json.dumps(stop, separators=(",", ":")), "plain"
        )

    body = b""
    for index in range(4):
        opening, closing = start(index)
        body += opening + b"".join(delta(index, f"b{index} t{n} ") for n in range(3)) + closing
    s = ssewire.MessagesStream()
    s.consume(body)
    # Every text delta is a template frame across the four blocks (the first by the shape
    # known ahead, the rest by the one learnt from it), and so is each block's start and stop
    # (shapes known ahead).
    assert s._fast_frames == 4 * 3 + 4 * 2
    assert [b["text"] for b in s.result()["content"]] == [f"b{i} t0 b{i} t1 b{i} t2 " for i in range(4)]
    for consume in (False, True):
        whole = _seen(ssewire.MessagesStream, [body], consume)
        assert whole[1]["content"] == s.result()["content"]
        for way in split_ways(body, random_splits=2):
            assert _seen(ssewire.MessagesStream, way.pieces, consume) == whole, way.name
