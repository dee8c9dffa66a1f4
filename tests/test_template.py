"""The frame-template fast path (src/dialect/template.rs) must be invisible: a stream that
reuses the previous frame's shape decodes every frame exactly as a fresh stream that decodes it
from scratch. Frames are built by splicing arbitrary bytes into the text hole of a real frame,
so the hole may hold escapes, quotes, control characters, or text that changes the JSON
structure (then the fast path must step aside and the full decoder must take over)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import ssewire

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


def _attrs(item: Any) -> Any:
    if isinstance(item, ssewire.ErrorItem):
        return ("error", item.kind, item.error.message, item.data)
    names = [n for n in dir(item) if not n.startswith("_")]
    values = []
    for n in names:
        v = getattr(item, n)
        if isinstance(v, list):
            v = [_attrs(x) if hasattr(x, "arguments") else x for x in v]
        elif isinstance(v, ssewire.ToolCallDelta):
            v = _attrs(v)
        values.append((n, v))
    return (type(item).__name__, tuple(values))


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
