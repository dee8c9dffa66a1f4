"""Anthropic-compatible Messages streams: ``ssewire.MessagesStream`` + ``MessageAccumulator``
(API.md sections 2 and 3, issue 4).

1. Captures: every ``tests/data/messages/NAME.sse`` (a raw response body, exact bytes) is fed
   whole, byte by byte and at random points (``splitting``); all ways must give the same items
   and the same ``done``/``error``, and the accumulated ``result()``, ``done``, ``error``, the
   warnings and (when listed) the item kinds must equal ``NAME.json``. The expected files were
   derived by hand from the wire bytes; they are the specification, never pasted program
   output. An ``error`` object lists only the fields compared (``incomplete_stream`` errors give
   just their ``code``); ``warnings`` lists, per expected warning, substrings it must contain.
2. Focused tests of item attributes, pings, error forms, cut streams.
3. The accumulator alone, on hand-made items with the same attributes (no Rust needed).
4. A differential test against the anthropic SDK's own accumulator
   (``anthropic.lib.streaming._messages.accumulate_event``) on generated streams.
5. Fuzzing: no input makes the stream or the accumulator raise (bounded hypothesis runs).
"""

from __future__ import annotations

import json
import random
from typing import Any, Optional

import pytest
import ssewire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ssewire import MessageAccumulator, MessagesStream, StreamError
from support import paths
from support import streams as _streams
from support.dialects import DialectKit, assert_notes
from support.splitting import split_ways

DATA = paths.DATA / "messages"
CAPTURES = sorted(p.stem for p in DATA.glob("*.sse"))

EVENT_FIELDS = (
    "type", "index", "delta_type", "text", "partial_json", "thinking", "signature", "stop_reason",
    "stop_sequence", "content_block", "message", "usage", "citation", "raw",
)  # fmt: skip


# --- helpers -------------------------------------------------------------------------------------


KIT = DialectKit(MessagesStream, MessageAccumulator, ssewire.MessageEvent, EVENT_FIELDS, lambda item: item.type)
kind_of = KIT.kind_of
decode = KIT.decode
accumulate = KIT.accumulate


def frame(obj: Any, event: Optional[str] = "auto") -> bytes:
    """One SSE event; ``event="auto"`` names it after the JSON ``type``, None leaves it out."""
    if event == "auto":
        event = obj.get("type") if isinstance(obj, dict) else None
    head = f"event: {event}\n" if event is not None else ""
    return (head + "data: " + json.dumps(obj, ensure_ascii=False) + "\n\n").encode()




START = {
    "type": "message_start",
    "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
                "model": "claude-x", "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1}},
}  # fmt: skip
STOP = {"type": "message_stop"}


def text_block(index: int, *texts: str) -> bytes:
    out = frame({"type": "content_block_start", "index": index,
                 "content_block": {"type": "text", "text": ""}})  # fmt: skip
    for t in texts:
        out += frame({"type": "content_block_delta", "index": index,
                      "delta": {"type": "text_delta", "text": t}})  # fmt: skip
    return out + frame({"type": "content_block_stop", "index": index})


def message_delta(stop_reason: str = "end_turn", **usage: Any) -> bytes:
    return frame({"type": "message_delta",
                  "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                  "usage": usage or {"output_tokens": 5}})  # fmt: skip


# --- 1. captures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CAPTURES)
def test_capture_result_paths(name: str) -> None:
    """The stream's own fold: s.result() after feed(), consume() or a mix, every split, equals
    the expected result and the accumulator's; s.errors is the same on every path."""
    KIT.check_result_paths(DATA, name)


@pytest.mark.parametrize("name", CAPTURES)
def test_capture(name: str) -> None:
    """Every wire form: fed every way, accumulated, compared with its expected document."""
    acc, expected = KIT.check_capture(DATA, name)
    assert_notes(acc.warnings, expected.get("warnings", []))


def test_every_capture_has_its_expected_result() -> None:
    assert len(CAPTURES) >= 20
    for name in CAPTURES:
        assert (DATA / f"{name}.json").exists(), name
    assert sorted(p.stem for p in DATA.glob("*.json")) == CAPTURES


@pytest.mark.parametrize("name", ["tool_use_fragments", "parallel_tool_use", "citations",
                                  "cut_mid_tool_input", "tool_input_invalid"])  # fmt: skip
def test_capture_accumulated_while_feeding(name: str) -> None:
    """Adding the items of each feed() as they come gives the same result (and warnings) as
    adding all at the end, and result() may be called mid-stream without disturbing it."""
    for acc, expected in KIT.accumulated_while_feeding(DATA, name):
        assert_notes(acc.warnings, expected.get("warnings", []))


# --- 2. focused tests ----------------------------------------------------------------------------


def test_event_attributes() -> None:
    citation = {"type": "char_location", "cited_text": "x", "document_index": 0}
    body = (
        frame(START)
        + frame({"type": "content_block_start", "index": 0,
                 "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}})
        + frame({"type": "content_block_delta", "index": 0,
                 "delta": {"type": "input_json_delta", "partial_json": "{\"a\""}})
        + frame({"type": "content_block_delta", "index": 1,
                 "delta": {"type": "text_delta", "text": "hé"}})
        + frame({"type": "content_block_delta", "index": 2,
                 "delta": {"type": "thinking_delta", "thinking": "hm"}})
        + frame({"type": "content_block_delta", "index": 2,
                 "delta": {"type": "signature_delta", "signature": "sig"}})
        + frame({"type": "content_block_delta", "index": 1,
                 "delta": {"type": "citations_delta", "citation": citation}})
        + frame({"type": "content_block_stop", "index": 0})
        + frame({"type": "message_delta", "delta": {"stop_reason": "stop_sequence",
                 "stop_sequence": "END"}, "usage": {"output_tokens": 7}})
        + frame(STOP)
    )  # fmt: skip
    items, stream = decode(body)
    assert stream.done and stream.error is None
    assert all(type(i) is ssewire.MessageEvent for i in items)
    start, block, js, text, think, sig, cite, stop, delta, end = items
    assert (start.type, start.index, start.message) == ("message_start", None, START["message"])
    assert start.raw == START and start.usage is None and start.content_block is None
    assert (block.type, block.index) == ("content_block_start", 0)
    assert block.content_block == {"type": "tool_use", "id": "t", "name": "f", "input": {}}
    assert (js.type, js.index, js.delta_type, js.partial_json) == (
        "content_block_delta", 0, "input_json_delta", '{"a"')  # fmt: skip
    assert (text.delta_type, text.text, text.partial_json) == ("text_delta", "hé", None)
    assert (think.delta_type, think.thinking) == ("thinking_delta", "hm")
    assert (sig.delta_type, sig.signature) == ("signature_delta", "sig")
    # the common deltas carry only typed fields
    assert js.raw is None and text.raw is None and think.raw is None and sig.raw is None
    assert (cite.delta_type, cite.citation) == ("citations_delta", citation)
    assert cite.raw["delta"]["citation"] == citation
    assert (stop.type, stop.index) == ("content_block_stop", 0)
    assert (delta.type, delta.stop_reason, delta.stop_sequence) == (
        "message_delta", "stop_sequence", "END")  # fmt: skip
    assert delta.usage == {"output_tokens": 7}
    assert end.type == "message_stop" and end.raw == STOP
    for item in items:
        assert repr(item).startswith("MessageEvent(")


def test_pings_give_no_items() -> None:
    body = (
        b"event: ping\ndata: {\"type\": \"ping\"}\n\n"
        + b"data: {\"type\":\"ping\"}\n\n"
        + b"event: ping\n\n"
        + b": comment\n\n"
    )
    items, stream = decode(body + frame(STOP))
    assert [kind_of(i) for i in items] == ["message_stop"]
    assert stream.done and stream.error is None


def test_message_stop_sets_done_and_only_it() -> None:
    stream = MessagesStream()
    stream.feed(frame(START) + text_block(0, "a") + message_delta())
    assert not stream.done
    stream.feed(frame(STOP))
    assert stream.done
    assert stream.finish() == [] and stream.error is None


def test_type_wins_over_event_name() -> None:
    """Dispatch is on the JSON `type`; the `event:` name is only a fallback."""
    body = frame({"type": "content_block_delta", "index": 0,
                  "delta": {"type": "text_delta", "text": "x"}}, event="message_start")  # fmt: skip
    body += b'event: message_stop\ndata: {}\n\n'
    items, stream = decode(body)
    assert [kind_of(i) for i in items] == ["content_block_delta", "message_stop"]
    assert stream.done


@pytest.mark.parametrize("event", ["error", None])
def test_overloaded_error_is_a_stream_error_with_its_own_type(event: Optional[str]) -> None:
    err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    items, stream = decode(frame(START) + text_block(0, "kept") + frame(err, event=event))
    assert [kind_of(i) for i in items][-1] == "stream_error"
    assert not stream.done
    e = stream.error
    assert isinstance(e, StreamError) and isinstance(e, Exception)
    assert (e.message, e.type, e.code, e.raw) == ("Overloaded", "overloaded_error", None, err)
    item = items[-1]
    assert item.event == (event or "message")
    assert json.loads(item.data) == err
    assert item.error.type == "overloaded_error"
    with pytest.raises(StreamError, match="Overloaded"):
        raise stream.error
    acc = accumulate(items)
    assert acc.error.type == "overloaded_error"
    assert acc.result()["content"] == [{"type": "text", "text": "kept"}]


def test_event_error_in_the_openai_envelope() -> None:
    """`event: error` with the OpenAI-style envelope some routers use (xerotier's docs)."""
    err = {"error": {"message": "Request timed out after 30s.", "type": "timeout_error",
                     "code": "timeout"}}  # fmt: skip
    items, stream = decode(frame(START) + frame(err, event="error") + b"data: [DONE]\n\n")
    assert [kind_of(i) for i in items] == ["message_start", "stream_error"]
    assert (stream.error.type, stream.error.code) == ("timeout_error", "timeout")


def test_data_frame_with_error_key_is_a_stream_error() -> None:
    """API.md section 2: "a `data:` frame whose JSON has an `error` key" is one of the wire
    forms of a mid-stream error, for every dialect (a proxy passing through an OpenAI-style
    error envelope without `event:` line or `type`)."""
    err = {"error": {"message": "Provider disconnected", "type": "server_error",
                     "code": "provider_error"}}  # fmt: skip
    items, stream = decode(frame(START) + text_block(0, "kept") + frame(err, event=None))
    assert [kind_of(i) for i in items][-1] == "stream_error"
    assert stream.error is not None
    assert (stream.error.message, stream.error.code) == ("Provider disconnected", "provider_error")


def test_first_error_wins_and_is_not_replaced_by_incomplete() -> None:
    e1 = {"type": "error", "error": {"type": "overloaded_error", "message": "first"}}
    e2 = {"type": "error", "error": {"type": "api_error", "message": "second"}}
    items, stream = decode(frame(e1) + frame(e2))
    assert [kind_of(i) for i in items] == ["stream_error", "stream_error"]
    assert stream.error.message == "first"
    acc = accumulate(items)
    assert acc.error.message == "first" and len(acc.errors) == 2


def test_cut_stream_is_incomplete() -> None:
    stream = MessagesStream()
    items = stream.feed(frame(START) + text_block(0, "partial"))
    assert stream.error is None and not stream.done
    items += stream.finish()
    assert not stream.done
    assert isinstance(stream.error, StreamError) and stream.error.code == "incomplete_stream"
    acc = accumulate(items)
    assert acc.error is None  # the accumulator only sees server-sent errors
    assert acc.result()["content"] == [{"type": "text", "text": "partial"}]


def test_empty_body_is_incomplete() -> None:
    items, stream = decode(b"")
    assert items == [] and not stream.done
    assert stream.error is not None and stream.error.code == "incomplete_stream"


def test_malformed_frame_is_reported_and_stream_goes_on() -> None:
    bad = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n'
    items, stream = decode(frame(START) + bad + text_block(0, "ok") + message_delta() + frame(STOP))
    assert kind_of(items[1]) == "malformed_json"
    err = items[1]
    assert err.event == "content_block_delta"
    assert err.data == '{"type":"content_block_delta","index":0,'
    assert err.error.type == "malformed_json"
    assert stream.done and stream.error is None
    acc = accumulate(items)
    assert acc.errors == [err] and acc.error is None
    assert acc.result()["content"] == [{"type": "text", "text": "ok"}]


def test_feed_accepts_buffers() -> None:
    data = (DATA / "text_basic.sse").read_bytes()
    for wrap in (bytes, bytearray, memoryview):
        stream = MessagesStream()
        items = stream.feed(wrap(data)) + stream.finish()
        assert accumulate(items).result()["content"][0]["text"].startswith("Hello, wörld")
    with pytest.raises(TypeError):
        MessagesStream().feed("data: {}\n\n")  # type: ignore[arg-type]


def test_max_event_size() -> None:
    stream = MessagesStream(max_event_size=64)
    assert stream.max_event_size == 64
    big = frame({"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": "x" * 200}})  # fmt: skip
    with pytest.raises(ssewire.EventTooLargeError) as info:
        stream.feed(frame({"type": "ping"}) + big + frame(STOP))
    assert [kind_of(i) for i in info.value.events] == ["message_stop"]


def test_message_delta_extra_keys_and_null_usage_values() -> None:
    body = (
        frame(dict(START, message=dict(START["message"], container=None, extra_key=1)))
        + frame({"type": "message_delta",
                 "delta": {"stop_reason": "pause_turn", "stop_sequence": None,
                           "container": {"id": "c1"}, "stop_details": None},
                 "usage": {"output_tokens": 3, "input_tokens": None,
                           "cache_read_input_tokens": 5}})
        + frame({"type": "message_delta", "delta": {"stop_reason": None},
                 "usage": {"output_tokens": 9}})
        + frame(STOP)
    )  # fmt: skip
    result = accumulate(decode(body)[0]).result()
    assert result["stop_reason"] == "pause_turn"  # a later null does not erase it
    assert result["container"] == {"id": "c1"}
    assert result["extra_key"] == 1 and result["stop_details"] is None
    assert result["usage"] == {"input_tokens": 10, "output_tokens": 9, "cache_read_input_tokens": 5}


# --- 3. the accumulator alone, on hand-made items -----------------------------------------------


_DELTA_FIELDS = ("delta_type", "text", "partial_json", "thinking", "signature", "stop_reason",
                 "stop_sequence", "citation")  # fmt: skip


def FakeEvent(**fields: Any) -> Any:
    """A real ``MessageEvent`` decoded from an event built of ``fields`` (the item's attribute
    names; ``None`` values left out, as a server would)."""
    raw = fields.pop("raw", None)
    event: dict[str, Any] = dict(raw) if raw is not None else {}
    event["type"] = fields.pop("type")
    for key in ("index", "content_block", "message", "usage"):
        if fields.get(key) is not None:
            event[key] = fields.pop(key)
    delta = {("type" if k == "delta_type" else k): fields.pop(k) for k in _DELTA_FIELDS
             if fields.get(k) is not None}  # fmt: skip
    assert not [k for k, v in fields.items() if v is not None], fields
    if delta:
        event["delta"] = delta
    [item] = MessagesStream().feed(b"data: " + json.dumps(event).encode() + b"\n\n")
    assert type(item) is ssewire.MessageEvent, item
    return item


def error_items() -> list[Any]:
    """Real ErrorItems: a malformed frame, then two server-reported errors."""
    items = MessagesStream().feed(
        b"data: {bad\n\n"
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "one"}}\n\n'
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "two"}}\n\n'
    )
    assert [i.kind for i in items] == ["malformed_json", "stream_error", "stream_error"]
    return items


def delta(index: Any, delta_type: str, **fields: Any) -> FakeEvent:
    return FakeEvent(type="content_block_delta", index=index, delta_type=delta_type, **fields)


def test_fake_items_full_result() -> None:
    acc = MessageAccumulator()
    acc.add_all([
        FakeEvent(type="message_start", message=dict(START["message"], container=None)),
        FakeEvent(type="content_block_start", index=1,
                  content_block={"type": "thinking", "thinking": "a", "signature": ""}),
        delta(1, "thinking_delta", thinking="b"),
        delta(1, "signature_delta", signature="s1"),
        delta(1, "signature_delta", signature="s2"),
        FakeEvent(type="content_block_start", index=0,
                  content_block={"type": "text", "text": "pre:", "citations": None}),
        delta(0, "text_delta", text="x"),
        delta(0, "citations_delta", citation={"c": 1}),
        FakeEvent(type="content_block_start", index=2,
                  content_block={"type": "server_tool_use", "id": "s", "name": "web_search"}),
        FakeEvent(type="content_block_stop", index=2),
        FakeEvent(type="message_delta", stop_reason="end_turn", usage={"output_tokens": 4}),
        FakeEvent(type="message_stop"),
        FakeEvent(type="something_new", raw={"type": "something_new"}),
    ])  # fmt: skip
    assert acc.result() == {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [
            {"type": "text", "text": "pre:x", "citations": [{"c": 1}]},
            {"type": "thinking", "thinking": "ab", "signature": "s2"},
            {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
        ],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 4}, "container": None,
    }  # fmt: skip
    assert acc.warnings == [] and acc.errors == [] and acc.error is None


def test_fake_no_message_start() -> None:
    acc = MessageAccumulator()
    acc.add(FakeEvent(type="message_delta", stop_reason="max_tokens", usage={"output_tokens": 2}))
    assert acc.result() == {
        "id": None, "type": "message", "role": "assistant", "model": None, "content": [],
        "stop_reason": "max_tokens", "stop_sequence": None, "usage": {"output_tokens": 2},
    }  # fmt: skip


def test_fake_delta_before_start_and_unknown_delta_warn() -> None:
    acc = MessageAccumulator()
    acc.add_all([
        delta(0, "text_delta", text="t"),
        delta(1, "input_json_delta", partial_json='{"k": [1]}'),
        delta(0, "mystery_delta"),
        delta(0, "mystery_delta"),
        FakeEvent(type="content_block_start", index=2, content_block="not a dict"),
    ])  # fmt: skip
    assert acc.result()["content"] == [
        {"type": "text", "text": "t"},
        {"type": "tool_use", "input": {"k": [1]}},
        {"type": None},
    ]
    assert_notes(acc.warnings, [["content block 0", "text_delta", "before"],
                                ["content block 1", "input_json_delta", "before"],
                                ["content block 0", "mystery_delta"]])  # fmt: skip


def test_fake_second_start_replaces_first() -> None:
    acc = MessageAccumulator()
    acc.add_all([
        FakeEvent(type="content_block_start", index=0, content_block={"type": "text", "text": ""}),
        delta(0, "text_delta", text="lost"),
        FakeEvent(type="content_block_start", index=0, content_block={"type": "text", "text": ""}),
        delta(0, "text_delta", text="kept"),
    ])  # fmt: skip
    assert acc.result()["content"] == [{"type": "text", "text": "kept"}]
    assert_notes(acc.warnings, [["content block 0", "second content_block_start"]])


def test_fake_tool_input_forms() -> None:
    tool = {"type": "tool_use", "id": "t", "name": "f", "input": {"pre": True}}
    acc = MessageAccumulator()
    acc.add_all([
        FakeEvent(type="content_block_start", index=0, content_block=tool),  # no fragments
        FakeEvent(type="content_block_start", index=1, content_block=tool),
        delta(1, "input_json_delta", partial_json=""),  # only empty fragments
        delta(1, "input_json_delta", partial_json="  "),
        FakeEvent(type="content_block_start", index=2, content_block=tool),
        delta(2, "input_json_delta", partial_json="[1,"),
        delta(2, "input_json_delta", partial_json=" 2]"),  # valid JSON, not an object: kept
        FakeEvent(type="content_block_start", index=3, content_block=tool),
        delta(3, "input_json_delta", partial_json='{"a": '),
    ])  # fmt: skip
    content = acc.result()["content"]
    # Block 3 stops early: its input is the partial value so far (`{"a": ` reads as `{}`).
    assert [b["input"] for b in content] == [{"pre": True}, {"pre": True}, [1, 2], {}]
    assert content[3]["partial_json"] == '{"a": '
    assert all("partial_json" not in b for b in content[:3])
    assert_notes(acc.warnings, [["content block 3 (tool_use t)", "end before the JSON does"]])
    # The stream goes on: the warning given by result() is withdrawn once the JSON completes.
    acc.add(delta(3, "input_json_delta", partial_json="1}"))
    acc.add(FakeEvent(type="content_block_stop", index=3))
    assert acc.result()["content"][3]["input"] == {"a": 1}
    assert "partial_json" not in acc.result()["content"][3]
    assert acc.warnings == []


def test_fake_errors_are_collected() -> None:
    acc = MessageAccumulator()
    bad, e1, e2 = error_items()
    acc.add_all([bad, e1, e2, ssewire.Event("{}", "ping")])
    assert acc.errors == [bad, e1, e2]
    assert acc.error is e1.error
    for foreign in (object(), {"type": "message_stop"}, ssewire.ChatCompletionStream().feed(
            b'data: {"choices": []}\n\n')[0]):  # fmt: skip
        with pytest.raises(TypeError, match="MessageEvent"):
            acc.add(foreign)


def test_result_is_a_new_dict_each_call() -> None:
    acc = accumulate(decode((DATA / "cache_usage_stop_sequence.sse").read_bytes())[0])
    r1 = acc.result()
    r1["content"].append("junk")
    r1["usage"]["input_tokens"] = -1
    r2 = acc.result()
    assert len(r2["content"]) == 1 and r2["usage"]["input_tokens"] == 12


def test_a_block_no_delta_changes_is_the_block_as_sent() -> None:
    """A block no delta follows (a server tool's result, kilobytes of it) is the result's as
    sent: its keys in their order, the last of duplicate keys counting, as ``json.loads`` reads
    it, however the body is cut; a tool block without an input still gets ``{}``."""
    result_block = (
        '{ "type" : "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": '
        '[{"type": "web_search_result", "url": "https://example.com", "title": "\\"q\\" \\u00e9",'
        ' "encrypted_content": "EqQB"}], "tool_use_id": "srvtoolu_2" }'
    )
    tool_block = '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search"}'
    body = frame(START)
    for index, block in enumerate([tool_block, result_block]):
        body += (
            f'event: content_block_start\ndata: {{"type":"content_block_start","index":{index},'
            f'"content_block":{block}}}\n\n'
        ).encode()
        body += frame({"type": "content_block_stop", "index": index})
    body += message_delta() + frame(STOP)
    for way in split_ways(body):
        stream = MessagesStream()
        for piece in way.pieces:
            stream.consume(piece)
        stream.finish()
        content = stream.result()["content"]
        assert content[0] == {**json.loads(tool_block), "input": {}}
        assert content[1] == json.loads(result_block)
        assert list(content[1]) == ["type", "tool_use_id", "content"]
        assert content[1]["tool_use_id"] == "srvtoolu_2"


# --- 4. differential test against the anthropic SDK's accumulator ---------------------------------


def _split(text: str, rng: random.Random) -> list[str]:
    """``text`` cut at random character positions (inside words, escapes, anywhere)."""
    if len(text) < 2:
        return [text]
    points = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 8))))
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randint(0, 6 if depth < 2 else 3)
    if kind == 0:
        return rng.randint(-1000, 10**12)
    if kind == 1:
        return rng.choice([True, False, None, 1.5, -0.25])
    if kind in (2, 3):
        return "".join(_streams.tokens(rng.randint(0, 6), rng.randint(0, 10**6)))
    if kind == 4:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}_{rng.choice(['é', 'x', '東', 'q'])}": _random_json(rng, depth + 1)
            for i in range(rng.randint(0, 4))}  # fmt: skip


def generated_messages_events(seed: int) -> list[dict[str, Any]]:
    """A random, well-formed Messages event sequence (the JSON objects, pings included)."""
    rng = random.Random(seed)
    usage: dict[str, Any] = {"input_tokens": rng.randint(1, 5000), "output_tokens": 1}
    if rng.random() < 0.5:
        usage.update(cache_creation_input_tokens=rng.randint(0, 3000),
                     cache_read_input_tokens=rng.randint(0, 3000))  # fmt: skip
    message = {"id": f"msg_{seed}", "type": "message", "role": "assistant", "content": [],
               "model": "claude-sonnet-4-5", "stop_reason": None, "stop_sequence": None,
               "usage": usage}  # fmt: skip
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]

    def start(index: int, block: dict[str, Any]) -> None:
        events.append({"type": "content_block_start", "index": index, "content_block": block})

    def delta(index: int, kind: str, **fields: Any) -> None:
        events.append({"type": "content_block_delta", "index": index,
                       "delta": {"type": kind, **fields}})  # fmt: skip

    stop_reason = "end_turn"
    for index in range(rng.randint(1, 5)):
        if rng.random() < 0.2:
            events.append({"type": "ping"})
        kind = rng.choice(["text", "text", "thinking", "tool_use", "server_tool_use",
                           "redacted_thinking"])  # fmt: skip
        if kind == "text":
            start(index, {"type": "text", "text": ""})
            for piece in _streams.tokens(rng.randint(1, 30), seed * 31 + index):
                delta(index, "text_delta", text=piece)
                if rng.random() < 0.05:
                    citation = {"type": "char_location", "cited_text": piece,
                                "document_index": 0, "document_title": "Doc",
                                "start_char_index": 0, "end_char_index": len(piece)}  # fmt: skip
                    delta(index, "citations_delta", citation=citation)
        elif kind == "thinking":
            start(index, {"type": "thinking", "thinking": "", "signature": ""})
            for piece in _streams.tokens(rng.randint(1, 20), seed * 17 + index):
                delta(index, "thinking_delta", thinking=piece)
            delta(index, "signature_delta", signature=f"sig{seed}x{index}")
        elif kind == "redacted_thinking":
            start(index, {"type": "redacted_thinking", "data": f"opaque{seed}"})
        else:
            start(index, {"type": kind, "id": f"toolu_{seed}_{index}", "name": "tool", "input": {}})
            args = {"q": _random_json(rng), "n": rng.randint(0, 99)}
            text = json.dumps(args, ensure_ascii=rng.random() < 0.5)
            for piece in ([""] if rng.random() < 0.3 else []) + _split(text, rng):
                delta(index, "input_json_delta", partial_json=piece)
            stop_reason = "tool_use"
        events.append({"type": "content_block_stop", "index": index})
    final_usage: dict[str, Any] = {"output_tokens": rng.randint(1, 4000)}
    if rng.random() < 0.3:
        final_usage["cache_read_input_tokens"] = rng.randint(0, 9000)
    if rng.random() < 0.2:
        final_usage["server_tool_use"] = {"web_search_requests": rng.randint(0, 3)}
    stop_sequence = None
    if stop_reason == "end_turn" and rng.random() < 0.3:
        stop_reason, stop_sequence = "stop_sequence", "\n\nHuman:"
    events.append({"type": "message_delta",
                   "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
                   "usage": final_usage})  # fmt: skip
    events.append({"type": "message_stop"})
    return events


def _body(events: list[dict[str, Any]], named: bool) -> bytes:
    return b"".join(frame(e, event="auto" if named else None) for e in events)


def _sdk_message(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The final message as the anthropic SDK's own stream accumulator builds it."""
    from anthropic._models import construct_type
    from anthropic.types import RawMessageStreamEvent
    from support import anthropic_accumulator

    snapshot = None
    step = anthropic_accumulator()
    for obj in events:
        if obj["type"] == "ping":  # the SDK's stream drops pings before accumulating
            continue
        event = construct_type(type_=RawMessageStreamEvent, value=obj)
        snapshot = step(event, snapshot)
    assert snapshot is not None
    return snapshot.to_dict(warnings=False)


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


GENERATED = [(f"generated-{seed}", seed) for seed in range(30)]
SHIPPED = [
    ("streams-text", dict(n_chunks=60, seed=1)),
    ("streams-tool", dict(n_chunks=30, seed=2, tool_use=True)),
    ("streams-thinking-tool", dict(n_chunks=40, seed=3, tool_use=True, thinking=True)),
    ("streams-no-ping", dict(n_chunks=10, seed=4, ping=False, thinking=True)),
]


def _events_of(body: bytes) -> list[dict[str, Any]]:
    parser = ssewire.SSEParser()
    return [json.loads(e.data) for e in parser.feed(body) + parser.finish()]


@pytest.mark.parametrize("name,spec", GENERATED + SHIPPED, ids=[n for n, _ in GENERATED + SHIPPED])
def test_differential_against_anthropic_sdk(name: str, spec: Any) -> None:
    if isinstance(spec, int):
        events = generated_messages_events(spec)
        body = _body(events, named=spec % 3 != 0)
    else:
        body = _streams.messages_stream(**spec)
        events = _events_of(body)
    sdk = _sdk_message(events)

    rng = random.Random(name)
    stream = MessagesStream()
    acc = MessageAccumulator()
    for piece in _streams.chunked(body, rng.randint(1, 300), seed=rng.randint(0, 10**6)):
        acc.add_all(stream.feed(piece))
    acc.add_all(stream.finish())
    assert stream.done and stream.error is None and acc.errors == [] and acc.warnings == []
    ours = acc.result()

    assert _without_nulls(ours["content"]) == _without_nulls(sdk["content"])
    assert ours["stop_reason"] == sdk["stop_reason"]
    assert ours["stop_sequence"] == sdk.get("stop_sequence")
    assert _without_nulls(ours["usage"]) == _without_nulls(sdk["usage"])
    assert (ours["id"], ours["model"], ours["role"]) == (sdk["id"], sdk["model"], sdk["role"])
    tool_types = ("tool_use", "server_tool_use")
    assert [b["input"] for b in ours["content"] if b["type"] in tool_types] == [
        b["input"] for b in sdk["content"] if b["type"] in tool_types]  # fmt: skip


# --- 5. fuzzing ----------------------------------------------------------------------------------

_values = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=5),
    st.lists(st.integers(0, 2), max_size=2), st.dictionaries(st.sampled_from(["type", "text"]),
                                                             st.text(max_size=3), max_size=2),
)  # fmt: skip
_event = st.fixed_dictionaries(
    {"type": st.sampled_from(["message_start", "content_block_start", "content_block_delta",
                              "content_block_stop", "message_delta", "message_stop", "error",
                              "ping", "other"])},
    optional={
        "index": st.one_of(st.integers(-2, 3), _values),
        "message": st.one_of(_values, st.just(START["message"])),
        "content_block": st.one_of(_values, st.sampled_from([
            {"type": "text", "text": "a"}, {"type": "tool_use", "id": "t", "input": 3},
            {"type": "thinking", "thinking": None}])),
        "delta": st.one_of(_values, st.fixed_dictionaries({
            "type": st.sampled_from(["text_delta", "input_json_delta", "thinking_delta",
                                     "signature_delta", "citations_delta", "x"])},
            optional={"text": _values, "partial_json": _values, "thinking": _values,
                      "signature": _values, "citation": _values, "stop_reason": _values})),
        "usage": _values,
        "error": _values,
    },
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_event, st.booleans()), max_size=12), st.binary(max_size=20))
def test_fuzz_never_raises(events: list[tuple[dict[str, Any], bool]], tail: bytes) -> None:
    body = b"".join(frame(e, event="auto" if named else None) for e, named in events) + tail
    stream = MessagesStream()
    acc = MessageAccumulator()
    acc.add_all(stream.feed(body))
    acc.add_all(stream.finish())
    result = acc.result()
    assert result["type"] == "message" and isinstance(result["content"], list)
    json.dumps(result, default=repr)


def test_deeply_nested_tool_input_never_raises() -> None:
    """A 1.2 kB input nested 600 levels deep used to raise RecursionError in the accumulator:
    past the converter's limit (128 levels) it is reported in ``warnings`` and kept as text."""
    deep = "[" * 600 + "]" * 600
    shallow = "[" * 100 + "]" * 100
    for nested, parsed in ((deep, False), (shallow, True)):
        events = [
            {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": []}},
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": '{"x": ' + nested[:7]}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": nested[7:] + "}"}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_stop"},
        ]  # fmt: skip
        body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        stream = MessagesStream()
        acc = MessageAccumulator()
        acc.add_all(stream.feed(body))
        block = stream.result()["content"][0]
        assert acc.result() == stream.result()
        if parsed:
            assert block["input"] == {"x": json.loads(nested)} and acc.warnings == []
        else:
            assert block["input"] == {} and block["partial_json"] == '{"x": ' + nested + "}"
            assert_notes(acc.warnings, [["content block 0 (tool_use t)", "never formed valid JSON"]])


def _message_start(order: str, role: str, usage: str) -> str:
    keys = [
        ("id", '"msg_1"'), ("type", '"message"'), ("role", role), ("model", '"claude-x"'),
        ("content", "[]"), ("stop_reason", "null"), ("stop_sequence", "null"), ("usage", usage),
    ]  # fmt: skip
    if order == "model first":
        keys.insert(0, keys.pop(3))
    elif order == "no role":
        keys.pop(2)
    elif order == "escaped":
        keys[0] = ("id", '"msg_\\u00e9"')
    keys.append(("container", '{"id": "c"}'))
    body = ", ".join(f'"{k}": {v}' for k, v in keys)
    return f'{{"type": "message_start", "message": {{{body}}}}}'


@pytest.mark.parametrize("order", ["anthropic", "model first", "no role", "escaped"])
@pytest.mark.parametrize("role", ['"assistant"', '""', "null", '"user"'])
@pytest.mark.parametrize("usage", ['{"input_tokens": 5, "output_tokens": 1, "x": 2}', "null"])
def test_a_result_written_to_python_is_the_tree_converted(order: str, role: str, usage: str) -> None:
    """``result()`` writes its dict straight from the fold (issue 47: the message as sent, its
    keys set over it, when it begins with Anthropic's keys in order); the accumulator converts
    the fold's tree. Both are the same object, keys in the same order (``json.dumps`` equal),
    for messages that take that way and messages that do not, fed whole and byte by byte."""
    events = [
        ("message_start", _message_start(order, role, usage)),
        ("content_block_start", '{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}'),
        ("content_block_delta", '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a\\"b"}}'),
        ("content_block_start", '{"type": "content_block_start", "index": 1, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}'),
        ("content_block_delta", '{"type": "content_block_delta", "index": 1, "delta": {"type": "thinking_delta", "thinking": "hm"}}'),
        ("content_block_delta", '{"type": "content_block_delta", "index": 1, "delta": {"type": "signature_delta", "signature": "sig"}}'),
        ("content_block_start", '{"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}'),
        ("content_block_delta", '{"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\\"q\\": 1}"}}'),
        ("message_delta", '{"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null, "stop_details": null}, "usage": {"output_tokens": 9, "x": null, "y": null}}'),
        ("message_stop", '{"type": "message_stop"}'),
    ]  # fmt: skip
    body = "".join(f"event: {kind}\ndata: {data}\n\n" for kind, data in events).encode()
    for pieces in ([body], [body[i : i + 1] for i in range(len(body))]):
        stream = MessagesStream()
        accumulator = MessageAccumulator()
        for piece in pieces:
            accumulator.add_all(stream.feed(piece))
        accumulator.add_all(stream.finish())
        written, converted = stream.result(), accumulator.result()
        assert json.dumps(written) == json.dumps(converted), (order, role, usage)
        assert written["role"] == ("user" if role == '"user"' and order != "no role" else "assistant")
        assert written["usage"] == (
            {"input_tokens": 5, "output_tokens": 9, "x": 2, "y": None}
            if usage != "null"
            else {"output_tokens": 9, "x": None, "y": None}
        )
        assert [block["type"] for block in written["content"]] == ["text", "thinking", "tool_use"]
        assert written["content"][0]["text"] == 'a"b' and written["content"][1]["signature"] == "sig"
        if order == "anthropic":
            assert list(written)[:8] == [
                "id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage",
            ]  # fmt: skip
