"""OpenAI-compatible chat completions: ``ssewire.ChatCompletionStream`` and
``ssewire.ChatCompletionAccumulator`` (API.md sections 2 and 3, issue 3).

1. Captures: every ``tests/data/chat/NAME.sse`` (a raw response body, exact bytes) is fed
   whole, byte by byte and at random points (``splitting``), all ways must give the same items
   and the same ``done``/``error``, and the accumulated ``result()``, ``done``, ``error`` and
   (when listed) the item kinds must equal ``NAME.json``. The expected files were derived by
   hand from the wire bytes; they are the specification, never pasted program output. An
   ``error`` object in them lists only the fields compared (``incomplete_stream`` errors give
   just their ``code``; their message is the implementation's).
2. Focused tests of item attributes, ``[DONE]``, malformed frames, errors, cut streams.
3. The accumulator alone, on hand-made items with the same attributes (no Rust needed).
4. A differential test against the openai SDK's own accumulator
   (``openai.lib.streaming.chat.ChatCompletionStreamState``) on generated streams.
5. Fuzzing: no input makes the stream or the accumulator raise (bounded hypothesis runs).
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
import ssewire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ssewire import ChatCompletionAccumulator, ChatCompletionStream, StreamError
from support import paths
from support import streams as _streams
from support.dialects import DialectKit

DATA = paths.DATA / "chat"
CAPTURES = sorted(p.stem for p in DATA.glob("*.sse"))

CHUNK_FIELDS = (
    "id", "object", "created", "model", "system_fingerprint", "service_tier", "index", "role",
    "content", "refusal", "reasoning", "reasoning_content", "tool_calls", "finish_reason",
    "reasoning_details", "logprobs", "usage", "extra", "choice_extra", "delta_extra",
)  # fmt: skip


# --- helpers -------------------------------------------------------------------------------------


KIT = DialectKit(ChatCompletionStream, ChatCompletionAccumulator, ssewire.ChatChunk, CHUNK_FIELDS, lambda item: "chunk")
item_key = KIT.item_key
kind_of = KIT.kind_of
decode = KIT.decode
accumulate = KIT.accumulate


def frame(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


# --- 1. captures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CAPTURES)
def test_capture_result_paths(name: str) -> None:
    """The stream's own fold: s.result() after feed(), consume() or a mix, every split, equals
    the expected result and the accumulator's; s.errors is the same on every path."""
    KIT.check_result_paths(DATA, name)


@pytest.mark.parametrize("name", CAPTURES)
def test_capture(name: str) -> None:
    """Every wire form: fed every way, accumulated, compared with its expected document."""
    KIT.check_capture(DATA, name)


def test_every_capture_has_its_expected_result() -> None:
    assert len(CAPTURES) >= 40
    for name in CAPTURES:
        assert (DATA / f"{name}.json").exists(), name
    assert sorted(p.stem for p in DATA.glob("*.json")) == CAPTURES


@pytest.mark.parametrize(
    "name", ["basic_stop", "tool_calls_parallel_interleaved", "docs_sansa_stream"]
)
def test_capture_accumulated_while_feeding(name: str) -> None:
    """Adding the items of each feed() as they come gives the same result as adding all at
    the end, and result() may be called mid-stream without disturbing the accumulation."""
    for _ in KIT.accumulated_while_feeding(DATA, name):
        pass  # each way is checked inside


# --- 2. focused tests -------------------------------------------------------------------------

FULL_CHUNK: dict[str, Any] = {
    "id": "chatcmpl-A",
    "object": "chat.completion.chunk",
    "created": 1700000000,
    "model": "openai/gpt-5.4-mini",
    "service_tier": "default",
    "system_fingerprint": "fp_1",
    "choices": [
        {
            "index": 0,
            "delta": {
                "role": "assistant",
                "content": "Hi",
                "refusal": None,
                "reasoning": "r",
                "reasoning_content": "rc",
                "tool_calls": [
                    {"index": 0, "id": "call_1", "type": "function",
                     "function": {"name": "f", "arguments": '{"a"'}},
                    {"index": 0, "function": {"arguments": ":1}"}},
                    {"index": 1, "id": "call_2", "function": {"name": "g"}},
                ],
                "reasoning_details": [{"type": "reasoning.text", "text": "t", "index": 0}],
                "annotations": [{"type": "url_citation"}],
            },
            "logprobs": {
                "content": [
                    {"token": "Hi", "logprob": -0.1, "bytes": [72, 105], "top_logprobs": []}
                ],
                "refusal": None,
            },
            "finish_reason": None,
            "native_finish_reason": None,
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    "sansa": {"routed": True, "routed_model": "openai/gpt-5.4-mini", "routing_latency_ms": 287},
}  # fmt: skip


def test_chunk_attributes() -> None:
    items, stream = decode(frame(FULL_CHUNK) + DONE)
    assert stream.done and stream.error is None
    assert len(items) == 1
    c = items[0]
    assert type(c) is ssewire.ChatChunk
    assert (c.id, c.object, c.created, c.model) == (
        "chatcmpl-A", "chat.completion.chunk", 1700000000, "openai/gpt-5.4-mini")  # fmt: skip
    assert (c.service_tier, c.system_fingerprint) == ("default", "fp_1")
    assert (c.index, c.role, c.content, c.refusal) == (0, "assistant", "Hi", None)
    assert (c.reasoning, c.reasoning_content, c.finish_reason) == ("r", "rc", None)
    calls = c.tool_calls
    assert calls is not None
    assert [(t.index, t.id, t.type, t.name, t.arguments) for t in calls] == [
        (0, "call_1", "function", "f", '{"a"'),
        (0, None, None, None, ":1}"),
        (1, "call_2", None, "g", None),
    ]
    assert all(type(t) is ssewire.ToolCallDelta for t in calls)
    assert c.reasoning_details == [{"type": "reasoning.text", "text": "t", "index": 0}]
    assert c.logprobs == FULL_CHUNK["choices"][0]["logprobs"]
    assert c.usage == {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    assert c.extra == {"sansa": FULL_CHUNK["sansa"]}
    assert c.choice_extra == {"native_finish_reason": None}
    assert c.delta_extra == {"annotations": [{"type": "url_citation"}]}


def test_numbers_decode_exactly() -> None:
    """Floats (logprobs, costs) come out as the same doubles Python's json module gives: the
    shortest repr of a double must round-trip."""
    values = [-0.40159101448507484, 0.0000549, 1e-300, -9.5, 2.5e-05, 0.1 + 0.2, 123456789.12345678]
    chunk = {"id": "c", "usage": {"cost": values, "big": 2**63 - 1, "neg": -(2**63)},
             "choices": [{"index": 0, "delta": {"content": "x"},
                          "logprobs": {"content": [{"token": "x", "logprob": v, "bytes": [120],
                                                    "top_logprobs": []} for v in values],
                                       "refusal": None}}]}  # fmt: skip
    data = frame(chunk)
    [c] = decode(data)[0]
    assert c.usage == json.loads(json.dumps(chunk["usage"]))
    assert [e["logprob"] for e in c.logprobs["content"]] == values


def test_chunk_without_extras_or_optional_fields() -> None:
    chunk = {"id": "x", "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}]}
    [c] = decode(frame(chunk))[0]
    assert not c.extra and not c.choice_extra and not c.delta_extra
    assert c.object is None and c.created is None and c.model is None
    assert c.tool_calls is None and c.logprobs is None and c.usage is None
    assert c.reasoning_details is None and c.role is None


def test_one_item_per_choice_and_one_for_empty_choices() -> None:
    head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    two = dict(head, choices=[
        {"index": 1, "delta": {"content": "b"}, "finish_reason": None},
        {"index": 0, "delta": {"content": "a"}, "finish_reason": "stop"},
    ], sansa={"routed": False})  # fmt: skip
    usage = dict(head, choices=[], usage={"prompt_tokens": 1, "total_tokens": 2})
    items, _ = decode(frame(two) + frame(usage) + DONE)
    assert [(i.index, i.content, i.finish_reason) for i in items] == [
        (1, "b", None), (0, "a", "stop"), (None, None, None)]  # fmt: skip
    for i in items[:2]:  # chunk-level fields repeated on every choice of the chunk
        assert (i.id, i.created, i.model, i.extra) == ("c", 1, "m", {"sansa": {"routed": False}})
    assert items[2].usage == usage["usage"] and items[2].id == "c"


def test_done_inside_content_is_content() -> None:
    chunk = {"id": "c", "choices": [{"index": 0, "delta": {"content": "data: [DONE]"}}]}
    chunk2 = {"id": "c", "choices": [{"index": 0, "delta": {"content": "[DONE]"}}]}
    stream = ChatCompletionStream()
    items: list[Any] = stream.feed(frame(chunk) + frame(chunk2))
    assert [i.content for i in items] == ["data: [DONE]", "[DONE]"]
    assert not stream.done
    assert stream.feed(DONE) == []
    assert stream.done
    assert stream.finish() == [] and stream.error is None


@pytest.mark.parametrize("value", [b"[DONE]", b"[DONE]\r"])
def test_done_exact_sets_done(value: bytes) -> None:
    stream = ChatCompletionStream()
    stream.feed(b"data:" + value + b"\n\n")
    assert stream.done


@pytest.mark.parametrize("value", [b" [DONE]", b"[DONE] ", b"[done]", b"[DONE]x", b"DONE"])
def test_almost_done_is_not_done(value: bytes) -> None:
    stream = ChatCompletionStream()
    items = stream.feed(b"data: " + value + b"\n\n")
    assert not stream.done
    assert [kind_of(i) for i in items] == ["malformed_json"]


def test_malformed_frame_reports_where_and_stream_goes_on() -> None:
    good = {"id": "c", "choices": [{"index": 0, "delta": {"content": "ok"}}]}
    bad = b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"x"}\n\n'
    items, stream = decode(frame(good) + bad + frame(good) + DONE)
    assert [kind_of(i) for i in items] == ["chunk", "malformed_json", "chunk"]
    err = items[1]
    assert err.data == bad[6:-2].decode()
    assert err.event == "message"
    assert isinstance(err.error, StreamError)
    message = err.error.message
    # says where the JSON broke: a line/column or byte position
    assert re.search(r"\d", message) and re.search(r"column|position|offset|byte", message), message
    assert stream.done and stream.error is None
    acc = accumulate(items)
    assert acc.errors == [err] and acc.error is None
    assert acc.result()["choices"][0]["message"]["content"] == "okok"


def test_cut_stream_is_incomplete() -> None:
    good = {"id": "c", "choices": [{"index": 0, "delta": {"content": "partial"}}]}
    stream = ChatCompletionStream()
    items = stream.feed(frame(good))
    assert stream.error is None and not stream.done
    items += stream.finish()
    assert not stream.done
    assert isinstance(stream.error, StreamError)
    assert stream.error.code == "incomplete_stream"
    with pytest.raises(StreamError) as info:
        raise stream.error
    assert info.value.code == "incomplete_stream"
    assert accumulate(items).result()["choices"][0]["message"]["content"] == "partial"


def test_empty_body_is_incomplete() -> None:
    items, stream = decode(b"")
    assert items == [] and not stream.done
    assert stream.error is not None and stream.error.code == "incomplete_stream"


def test_raise_stream_error() -> None:
    err = {"error": {"message": "Provider disconnected", "type": "server_error",
                     "code": "provider_error"}}  # fmt: skip
    items, stream = decode(frame(err) + DONE)
    assert stream.done and stream.error is not None
    with pytest.raises(StreamError, match="Provider disconnected") as info:
        raise stream.error
    e = info.value
    assert isinstance(e, Exception)
    assert (e.message, e.type, e.code, e.raw) == (
        "Provider disconnected", "server_error", "provider_error", err)  # fmt: skip
    [item] = items
    assert item.kind == "stream_error" and item.error.raw == err


def test_first_error_wins_and_is_not_replaced_by_incomplete() -> None:
    e1 = {"error": {"message": "first", "code": 1}}
    e2 = {"error": {"message": "second", "code": 2}}
    items, stream = decode(frame(e1) + b"event: error\ndata: " + json.dumps(e2).encode() + b"\n\n")
    assert [kind_of(i) for i in items] == ["stream_error", "stream_error"]
    assert not stream.done and stream.error is not None
    assert (stream.error.message, stream.error.code) == ("first", 1)
    acc = accumulate(items)
    assert acc.error.message == "first" and len(acc.errors) == 2


def test_error_value_that_is_a_string() -> None:
    items, stream = decode(frame({"error": "upstream exploded"}) + DONE)
    assert [kind_of(i) for i in items] == ["stream_error"]
    assert stream.error is not None and "upstream exploded" in stream.error.message


def test_error_frame_with_choices_reaches_the_result() -> None:
    ok = {"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]}
    err = {"error": {"code": "provider_error", "message": "Provider disconnected"},
           "choices": [{"finish_reason": "error"}]}  # fmt: skip
    items, stream = decode(frame(ok) + frame(err) + DONE)
    assert [kind_of(i) for i in items] == ["chunk", "stream_error", "chunk"]
    assert items[2].finish_reason == "error"
    choice = accumulate(items).result()["choices"]
    message = {"role": "assistant", "content": "Hel", "refusal": None}
    assert choice == [{"index": 0, "message": message, "logprobs": None, "finish_reason": "error"}]


@pytest.mark.parametrize(
    "body",
    [
        b'{"error":{"message":"bad \\ud800"}}\n',
        b'data: {"error":{"message":"\\ud800"}}\n\n',
        b'event: error\ndata: {"error":{"message":"\\udfff"}}\n\n',
        b'data: {"id":"x","usage":{"a":"\\ud800"},"v":"\\udfff","choices":[{"index":0,'
        b'"delta":{"annotations":"\\ud800","reasoning_details":["\\ud800"]},'
        b'"native":"\\ud800","logprobs":{"content":"\\ud800"}}]}\n\n',
        b'data: {"id":"\\ud800","choices":[{"index":0,"delta":{"content":"\\udc00x"}}]}\n\n',
    ],
    ids=["json body", "error frame", "event error", "lazy parts", "strings"],
)
def test_lone_surrogate_escapes_never_raise(body: bytes) -> None:
    """JSON allows ``\\ud800`` (a lone surrogate escape; Python's json accepts it). It is bad
    data, never an exception: not from feed(), finish(), an attribute, or the accumulator."""
    stream = ChatCompletionStream()
    items = stream.feed(body) + stream.finish()
    for item in items:
        item_key(item)
    accumulate(items).result()
    assert stream.error is None or isinstance(stream.error.message, str)


def test_events_with_other_names_pass_through() -> None:
    items, _ = decode(b"event: ping\ndata: {}\n\n" + DONE)
    assert items == [ssewire.Event("{}", "ping")]
    assert accumulate(items).result()["choices"] == []


def test_feed_accepts_buffers() -> None:
    data = (DATA / "basic_stop.sse").read_bytes()
    for wrap in (bytes, bytearray, memoryview):
        stream = ChatCompletionStream()
        items = stream.feed(wrap(data)) + stream.finish()
        assert accumulate(items).result()["choices"][0]["message"]["content"] == "Hello, world!"
    with pytest.raises(TypeError):
        ChatCompletionStream().feed("data: [DONE]\n\n")  # type: ignore[arg-type]


# --- 3. the accumulator alone, on hand-made items ---------------------------------------------


def make_item(**fields: Any) -> Any:
    """A real ``ChatChunk`` decoded from a chunk built of ``fields`` (the ``ChatChunk``
    attribute names; ``None`` values are left out, as a server would)."""
    index = fields.pop("index", None)
    tools = fields.pop("tool_calls", None)
    top = {k: fields.pop(k) for k in ("id", "created", "model", "system_fingerprint",
                                       "service_tier", "usage") if fields.get(k) is not None}  # fmt: skip
    top.update(fields.pop("extra", None) or {})
    choice: dict[str, Any] = {}
    for k in ("finish_reason", "logprobs"):
        if fields.get(k) is not None:
            choice[k] = fields.pop(k)
    choice.update(fields.pop("choice_extra", None) or {})
    delta = {k: v for k, v in fields.items() if v is not None and k != "delta_extra"}
    delta.update(fields.get("delta_extra") or {})
    if tools is not None:
        delta["tool_calls"] = [
            {k: v for k, v in (("index", t[0]), ("id", t[1]), ("type", t[2])) if v is not None}
            | {"function": {k: v for k, v in (("name", t[3]), ("arguments", t[4])) if v is not None}}
            for t in tools
        ]
    if delta:
        choice["delta"] = delta
    if index is not None:
        choice["index"] = index
    top["choices"] = [choice] if choice else []
    stream = ChatCompletionStream()
    [item] = stream.feed(b"data: " + json.dumps(top).encode() + b"\n\n")
    assert type(item) is ssewire.ChatChunk, item
    return item


def FakeTool(index: int, id: Any = None, type: Any = None, name: Any = None,
             arguments: Any = None) -> tuple[Any, ...]:  # fmt: skip
    return (index, id, type, name, arguments)


FakeChunk = make_item


def error_items() -> list[Any]:
    """Real ErrorItems: a malformed frame, then two server-reported errors."""
    stream = ChatCompletionStream()
    items = stream.feed(b'data: {"bad\n\n'
                        b'data: {"error": {"message": "one", "code": "a"}}\n\n'
                        b'data: {"error": {"message": "two", "code": "b"}}\n\n')  # fmt: skip
    assert [i.kind for i in items] == ["malformed_json", "stream_error", "stream_error"]
    return items


def test_foreign_objects_are_a_type_error() -> None:
    acc = ChatCompletionAccumulator()

    class Duck:
        index = content = None

    message_event = ssewire.MessagesStream().feed(
        b'event: message_stop\ndata: {"type": "message_stop"}\n\n'
    )[0]
    for foreign in (Duck(), {"index": 0}, None, message_event):
        with pytest.raises(TypeError, match="ChatChunk"):
            acc.add(foreign)
    acc.add(ssewire.Event("{}", "ping"))  # a named event the dialect does not decode: ignored
    assert acc.result()["choices"] == [] and acc.errors == []


def test_wrong_typed_fields_never_raise() -> None:
    """Finding 7 of issue 9: values of an unexpected JSON type are kept as sent."""
    body = b"".join(
        b"data: " + json.dumps(c).encode() + b"\n\n"
        for c in [
            {"choices": [{"index": 0, "delta": {"content": "a", "reasoning_details": 1}}]},
            {"choices": [{"index": 0, "delta": {"reasoning_details": True}}]},
            {"choices": [{"index": 0, "delta": {"reasoning_details": "x"}, "logprobs": 5}]},
            {"choices": [{"index": 0, "delta": {"annotations": {"a": [1]}}}], "usage": "many"},
            {"choices": [{"index": 0, "delta": {"annotations": 7}}], "router": [1]},
        ]
    ) + b"data: [DONE]\n\n"
    for path in ("feed", "consume"):
        stream = ChatCompletionStream()
        items = stream.feed(body) if path == "feed" else stream.consume(body)
        result = stream.result()
        if path == "feed":
            assert ssewire.accumulate(body) == result
            acc = ChatCompletionAccumulator()
            acc.add_all(items)
            assert acc.result() == result
        message = result["choices"][0]["message"]
        assert message["reasoning_details"] == "x"  # not a list: the last value, as sent
        assert message["annotations"] == 7
        assert result["choices"][0]["logprobs"] == {"content": None, "refusal": None}
        assert result["usage"] == "many" and result["router"] == [1]


def test_fake_items_full_result() -> None:
    acc = ChatCompletionAccumulator()
    acc.add(FakeChunk(id="a", created=0, model="", index=None, extra={"x": None}))  # Azure-like
    acc.add(FakeChunk(id="a", created=5, model="m", index=1, role="assistant", content="B",
                      extra={"x": 1, "y": None}))  # fmt: skip
    acc.add(FakeChunk(index=0, content="A", system_fingerprint="fp", service_tier="flex"))
    acc.add(ssewire.Event("{}", "ping"))
    acc.add(FakeChunk(index=0, tool_calls=[FakeTool(1, "id1", None, "g", "{"),
                                           FakeTool(0, "id0", "function", "f", ""),
                                           FakeTool(1, "id1", None, "g", "}")]))  # fmt: skip
    acc.add(FakeChunk(index=0, finish_reason="tool_calls", extra={"x": None, "y": 2},
                      usage={"total_tokens": 3}, choice_extra={"k": None}))  # fmt: skip
    acc.add(FakeChunk(index=1, finish_reason="stop", choice_extra={"k": "v"}))
    acc.add(FakeChunk(index=None, usage={"total_tokens": 4}))
    assert acc.result() == {
        "id": "a", "object": "chat.completion", "created": 5, "model": "m",
        "service_tier": "flex", "system_fingerprint": "fp", "usage": {"total_tokens": 4},
        "x": 1, "y": 2,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "A", "refusal": None,
                                     "tool_calls": [
                {"id": "id0", "type": "function", "function": {"name": "f", "arguments": ""}},
                {"id": "id1", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
             "logprobs": None, "finish_reason": "tool_calls", "k": None},
            {"index": 1, "message": {"role": "assistant", "content": "B", "refusal": None},
             "logprobs": None, "finish_reason": "stop", "k": "v"},
        ],
    }  # fmt: skip


def test_fake_errors_are_collected() -> None:
    acc = ChatCompletionAccumulator()
    bad, e1, e2 = error_items()
    acc.add_all([bad, e1, e2])
    assert acc.errors == [bad, e1, e2]
    assert acc.error is e1.error


def test_fake_choice_without_index_counts_as_choice_zero() -> None:
    acc = ChatCompletionAccumulator()
    acc.add(FakeChunk(index=0, content="x"))
    acc.add(FakeChunk(index=None, finish_reason="error"))
    acc.add(FakeChunk(index=None, usage={"total_tokens": 1}))
    [choice] = acc.result()["choices"]
    assert choice["finish_reason"] == "error" and choice["message"]["content"] == "x"


def test_fake_sparse_and_negative_indexes() -> None:
    acc = ChatCompletionAccumulator()
    for index in (10**9, -1, 3, 0):
        acc.add(FakeChunk(index=index, content=str(index)))
    acc.add(FakeChunk(index=-1, content="!"))
    got = [(c["index"], c["message"]["content"]) for c in acc.result()["choices"]]
    assert got == [(-1, "-1!"), (0, "0"), (3, "3"), (10**9, str(10**9))]


def test_fake_empty_lists_are_not_streamed_fields() -> None:
    acc = ChatCompletionAccumulator()
    acc.add(FakeChunk(index=0, content="a", tool_calls=[], reasoning_details=[]))
    message = acc.result()["choices"][0]["message"]
    assert message == {"role": "assistant", "content": "a", "refusal": None}


def test_fake_delta_extra_merge_rules() -> None:
    acc = ChatCompletionAccumulator()
    acc.add(FakeChunk(index=0, delta_extra={"s": "a", "l": [1], "d": {"id": "x", "t": "p", "n": 1},
                                            "o": 1, "z": None}))  # fmt: skip
    acc.add(FakeChunk(index=0, delta_extra={"s": "b", "l": [2], "d": {"id": "x", "t": "q", "n": 2},
                                            "o": None, "z": None}))  # fmt: skip
    acc.add(FakeChunk(index=0, delta_extra={"o": True, "d": {"name": "f", "e": [3]}}))
    acc.add(FakeChunk(index=0, delta_extra={"d": {"name": "f", "e": [4]}}))
    message = acc.result()["choices"][0]["message"]
    assert message == {
        "role": "assistant", "content": None, "refusal": None,
        "s": "ab", "l": [1, 2], "o": True, "z": None,
        "d": {"id": "x", "t": "pq", "n": 2, "name": "f", "e": [3, 4]},
    }  # fmt: skip


def test_fake_reasoning_details_merge() -> None:
    acc = ChatCompletionAccumulator()
    acc.add(FakeChunk(index=0, reasoning_details=[
        {"type": "reasoning.text", "text": "a", "index": 0, "signature": None},
        "odd",  # not a dict: kept as sent
    ]))  # fmt: skip
    acc.add(FakeChunk(index=0, reasoning_details=[
        {"type": "reasoning.text", "text": "b", "index": 0, "signature": "s"},
        {"type": "reasoning.text", "text": "c", "index": None},
        {"type": "reasoning.text", "text": "d", "index": [1]},  # unhashable: kept as sent
    ]))  # fmt: skip
    assert acc.result()["choices"][0]["message"]["reasoning_details"] == [
        {"type": "reasoning.text", "text": "ab", "index": 0, "signature": "s"},
        "odd",
        {"type": "reasoning.text", "text": "c", "index": None},
        {"type": "reasoning.text", "text": "d", "index": [1]},
    ]


def test_fake_logprobs() -> None:
    acc = ChatCompletionAccumulator()
    acc.add(FakeChunk(index=0, logprobs={"content": None, "refusal": None}))
    assert acc.result()["choices"][0]["logprobs"] == {"content": None, "refusal": None}
    acc.add(FakeChunk(index=0, logprobs={"content": [1], "refusal": None}))
    acc.add(FakeChunk(index=0, logprobs={"content": [2], "refusal": [3]}))
    result = acc.result()
    assert result["choices"][0]["logprobs"] == {"content": [1, 2], "refusal": [3]}
    result["choices"][0]["logprobs"]["content"].append("mutated")
    assert acc.result()["choices"][0]["logprobs"] == {"content": [1, 2], "refusal": [3]}


def test_fake_identity_fields_first_non_empty() -> None:
    acc = ChatCompletionAccumulator()
    acc.add(FakeChunk(index=0, tool_calls=[FakeTool(0, "", None, "", "a")]))
    acc.add(FakeChunk(index=0, tool_calls=[FakeTool(0, "call", "function", "fn", "b")]))
    acc.add(FakeChunk(index=0, tool_calls=[FakeTool(0, "call", "custom", "fn", None)]))
    [call] = acc.result()["choices"][0]["message"]["tool_calls"]
    assert call == {"id": "call", "type": "function", "function": {"name": "fn", "arguments": "ab"}}


# --- 4. differential test against the openai SDK's accumulator --------------------------------


def _frames_of(body: bytes) -> list[Any]:
    """The JSON payloads of a generated body (simple `data: {...}\\n\\n` frames only)."""
    out = []
    for block in body.decode("utf-8").split("\n\n"):
        if block.startswith("data: ") and block != "data: [DONE]":
            out.append(json.loads(block[6:]))
    return out


def _multi_choice_stream(seed: int, n: int) -> bytes:
    """``n`` interleaved choices with content or refusal, logprobs, in-order tool calls; the
    first chunk introduces every choice in index order (the SDK needs that)."""
    rng = random.Random(seed)
    head = {
        "id": f"chatcmpl-diff{seed}",
        "object": "chat.completion.chunk",
        "created": 1712345678 + seed,
        "model": "gpt-4o-mini",
        "system_fingerprint": "fp_d",
    }
    first = [
        {"index": i, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
        for i in range(n)
    ]
    frames = [dict(head, choices=first)]
    plans = []
    for i in range(n):
        kind = rng.choice(["content", "refusal", "tools"])
        steps: list[dict[str, Any]] = []
        if kind == "tools":
            for t in range(rng.randint(1, 3)):
                args = json.dumps({"q": "".join(_streams.tokens(3, seed * 10 + t)), "n": t})
                function = {"name": f"fn{t}", "arguments": ""}
                call = {"index": t, "id": f"call_{i}_{t}", "type": "function", "function": function}
                steps.append({"tool_calls": [call]})
                for k in range(0, len(args), 5):
                    fragment = {"index": t, "function": {"arguments": args[k : k + 5]}}
                    steps.append({"tool_calls": [fragment]})
        else:
            for tok in _streams.tokens(rng.randint(1, 12), seed * 100 + i):
                steps.append({kind: tok, "_lp": tok})
        reasons = {"content": rng.choice(["stop", "length"]), "refusal": "stop"}
        plans.append((steps, reasons.get(kind, "tool_calls")))
    cursors = [0] * n
    open_choices = list(range(n))
    while open_choices:
        choices = []
        for i in rng.sample(open_choices, rng.randint(1, len(open_choices))):
            steps, reason = plans[i]
            choice: dict[str, Any] = {"index": i, "delta": {}, "logprobs": None}
            if cursors[i] < len(steps):
                delta = dict(steps[cursors[i]])
                cursors[i] += 1
                tok = delta.pop("_lp", None)
                if tok is not None:
                    entry = {"token": tok, "logprob": -rng.random(), "bytes": list(tok.encode()),
                             "top_logprobs": []}  # fmt: skip
                    part = "content" if "content" in delta else "refusal"
                    choice["logprobs"] = {"content": None, "refusal": None, part: [entry]}
                choice.update(delta=delta, finish_reason=None)
            else:
                choice["finish_reason"] = reason
                open_choices.remove(i)
            choices.append(choice)
        frames.append(dict(head, choices=choices))
    usage = {"prompt_tokens": 3, "completion_tokens": 9, "total_tokens": 12}
    frames.append(dict(head, choices=[], usage=usage))
    return b"".join(frame(f) for f in frames) + DONE


def _generated_streams() -> list[tuple[str, bytes]]:
    out = []
    for seed in range(3):
        for tool_calls in (False, True):
            for usage in (True, "inline", False):
                body = _streams.chat_stream(
                    n_chunks=40, seed=seed, tool_calls=tool_calls, usage=usage
                )
                out.append((f"chat_stream(seed={seed},tools={tool_calls},usage={usage})", body))
        body = _streams.chat_stream(n_chunks=30, seed=seed, reasoning="reasoning")
        out.append((f"chat_stream(seed={seed},reasoning)", body))
    for seed in range(6):
        out.append((f"multi_choice(seed={seed})", _multi_choice_stream(seed, 1 + seed % 4)))
    return out


@pytest.mark.parametrize(
    "name,body", _generated_streams(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_differential_against_openai_sdk(name: str, body: bytes) -> None:
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state: Any = ChatCompletionStreamState()
    for payload in _frames_of(body):
        state.handle_chunk(ChatCompletionChunk.construct(**payload))
    sdk = state.get_final_completion()

    stream = ChatCompletionStream()
    acc = ChatCompletionAccumulator()
    for piece in _streams.chunked(body, 1500) if hasattr(_streams, "chunked") else [body]:
        acc.add_all(stream.feed(piece))
    acc.add_all(stream.finish())
    assert stream.done and stream.error is None and not acc.errors
    ours = acc.result()

    assert (ours["id"], ours["model"], ours["created"]) == (sdk.id, sdk.model, sdk.created)
    assert ours["system_fingerprint"] == sdk.system_fingerprint
    assert ours["usage"] == (sdk.usage.to_dict() if sdk.usage is not None else None)
    assert len(ours["choices"]) == len(sdk.choices)
    for mine, theirs in zip(ours["choices"], sdk.choices):
        assert mine["index"] == theirs.index
        message = mine["message"]
        assert message["content"] == theirs.message.content
        assert message["refusal"] == theirs.message.refusal
        assert mine["finish_reason"] == theirs.finish_reason
        sdk_calls = [(t.id, t.type, t.function.name, t.function.arguments)
                     for t in theirs.message.tool_calls or []]  # fmt: skip
        my_calls = [(t["id"], t["type"], t["function"]["name"], t["function"]["arguments"])
                    for t in message.get("tool_calls", [])]  # fmt: skip
        assert my_calls == sdk_calls
        if theirs.logprobs is None:
            assert mine["logprobs"] is None
        else:
            for part in ("content", "refusal"):
                sdk_list = getattr(theirs.logprobs, part)
                want = [lp.to_dict() for lp in sdk_list] if sdk_list is not None else None
                assert mine["logprobs"][part] == want


# --- 5. fuzzing -------------------------------------------------------------------------------

_JSON_BITS = [
    b'{"id":"c","choices":[{"index":0,"delta":{"content":"x"}}]}',
    b'{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}',
    b'{"choices":[{"index":"0","delta":{"content":5}}]}',
    b'{"choices":{"index":0},"usage":[1]}',
    b'{"choices":[{"index":-3,"delta":{"tool_calls":{"index":0}},"logprobs":[1]}]}',
    b'{"choices":[{"index":0,"delta":{"reasoning_details":"x","role":7}}],"created":"x"}',
    b'{"choices":[null,1,"x",{"index":99999999999999999999}]}',
    b'{"error":5}', b'{"error":{"message":7,"code":[1]}}', b'{"error":null}', b'[1,2]',
    b'"str"', b"null", b"[DONE]", b"{", b'{"id":"\\ud800"}', b"\xff\xfe", b"{}{}", b"1e999",
]  # fmt: skip
_LINE_BITS = [b"data: ", b"data:", b"event: error\n", b"event: x\n", b": hb\n", b"\n", b"\r\n",
              b"\r", b"id: 1\n", b"retry: 5\n"]  # fmt: skip


def _consume(data: bytes, cuts: list[int]) -> None:
    bounds = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    stream = ChatCompletionStream()
    acc = ChatCompletionAccumulator()
    for a, b in zip(bounds, bounds[1:]):
        acc.add_all(stream.feed(data[a:b]))
    acc.add_all(stream.finish())
    result = acc.result()
    assert isinstance(result, dict) and isinstance(result["choices"], list)
    assert isinstance(stream.done, bool)
    assert stream.error is None or isinstance(stream.error, StreamError)
    json.dumps(result, default=repr)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=600), st.lists(st.integers(min_value=0), max_size=8))
def test_fuzz_random_bytes(data: bytes, cuts: list[int]) -> None:
    _consume(data, cuts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(_LINE_BITS), st.sampled_from(_JSON_BITS),
                       st.sampled_from([b"\n\n", b"\n", b"\r\n\r\n", b""])),  # fmt: skip
             max_size=12),
    st.lists(st.integers(min_value=0), max_size=8),
)
def test_fuzz_structured_garbage(parts: list[tuple[bytes, bytes, bytes]], cuts: list[int]) -> None:
    _consume(b"".join(a + b + c for a, b, c in parts), cuts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_mutated_captures(data: Any) -> None:
    name = data.draw(st.sampled_from(CAPTURES))
    body = bytearray((DATA / f"{name}.sse").read_bytes())
    for _ in range(data.draw(st.integers(1, 6))):
        if not body:
            break
        pos = data.draw(st.integers(0, len(body) - 1))
        op = data.draw(st.sampled_from(["flip", "delete", "insert"]))
        if op == "flip":
            body[pos] = data.draw(st.integers(0, 255))
        elif op == "delete":
            del body[pos : pos + data.draw(st.integers(1, 40))]
        else:
            insert = [b"\n", b"{", b'"', b"\\", b"[DONE]", b"\xe2\x82"]
            body[pos:pos] = data.draw(st.sampled_from(insert))
    _consume(bytes(body), data.draw(st.lists(st.integers(min_value=0), max_size=6)))


def _magistral(spaced: bool) -> bytes:
    """A Magistral turn: thinking deltas as content parts (one thinking part of one text
    part), then the answer; ``spaced`` writes the parts with a space after each colon (each
    chunk then decoded, no template taking it)."""
    sep = (", ", ": ") if spaced else (",", ":")

    def chunk(content: object) -> str:
        c = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "magistral-medium-2507",
             "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}  # fmt: skip
        text = json.dumps(c, separators=(",", ":"), ensure_ascii=False)
        if isinstance(content, list):
            parts = json.dumps(content, separators=(",", ":"), ensure_ascii=False)
            text = text.replace(parts, json.dumps(content, separators=sep, ensure_ascii=False))
        return f"data: {text}\n\n"

    def thinking(text: str) -> list:
        return [{"type": "thinking", "thinking": [{"type": "text", "text": text}]}]

    frames = [chunk("")] + [chunk(thinking(t)) for t in ["Let", ' me "think"\n', "", "é done"]]
    frames += [chunk("The answer"), chunk(" is 4."), chunk(thinking("after")), "data: [DONE]\n\n"]
    return "".join(frames).encode()


def test_magistral_thinking_fits_read_as_decoded() -> None:
    """Magistral's thinking deltas after the first are read by a template whose hole is the
    text (issue 47): the items (their content, their dicts), the result, a result assembled
    from the items and a translation are those of the same turn decoded chunk by chunk."""
    fast, slow = _magistral(False), _magistral(True)
    assert fast != slow

    def items(body: bytes) -> list:
        return [i for i in ChatCompletionStream().feed(body) if isinstance(i, ssewire.ChatChunk)]

    a, b = items(fast), items(slow)
    assert [i.content for i in a] == [i.content for i in b]
    assert [i.to_dict() for i in a] == [i.to_dict() for i in b]
    assert a[2].content == [{"type": "thinking", "thinking": [{"type": "text", "text": ' me "think"\n'}]}]
    results = []
    for body in (fast, slow):
        s = ChatCompletionStream()
        s.consume(body)
        acc = ChatCompletionAccumulator()
        acc.add_all(items(body))
        assert acc.result() == s.result()
        results.append(s.result())
    assert results[0] == results[1]
    assert results[0]["choices"][0]["message"]["content"][0]["thinking"][0]["text"] == 'Let me "think"\né done'
    translated = [ssewire.Translator("chat", "messages").feed(body) for body in (fast, slow)]
    assert translated[0] == translated[1]
