"""OpenAI-compatible Responses streams: ``ssewire.ResponsesStream`` + ``ResponseAccumulator``
(API.md sections 2 and 3, issue 4).

1. Captures: every ``tests/data/responses/NAME.sse`` (a raw response body, exact bytes) is fed
   whole, byte by byte and at random points (``splitting``); all ways must give the same items
   and the same ``done``/``error``, and the accumulated ``result()``, ``done``, ``error``,
   ``mismatches``, ``warnings`` and (when listed) the item kinds must equal ``NAME.json``. The
   expected files were derived by hand from the wire bytes; they are the specification, never
   pasted program output. An ``error`` object lists only the fields compared
   (``incomplete_stream`` errors give just their ``code``); ``mismatches`` / ``warnings`` list,
   per expected note, substrings it must contain.
2. Focused tests of item attributes, terminal events, error forms, cut streams.
3. The accumulator alone, on hand-made items with the same attributes (no Rust needed).
4. A differential test against the openai SDK's Responses stream state
   (``openai.lib.streaming.responses._responses.ResponseStreamState``) on generated streams,
   and a check of the assembly from deltas alone against the generator's truth.
5. Fuzzing: no input makes the stream or the accumulator raise (bounded hypothesis runs).
"""

from __future__ import annotations

import functools
import json
import random
from typing import Any, Optional

import pytest
import ssewire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ssewire import ResponseAccumulator, ResponsesStream
from support import paths
from support import streams as _streams
from support.dialects import DialectKit, assert_notes

DATA = paths.DATA / "responses"
CAPTURES = sorted(p.stem for p in DATA.glob("*.sse"))

EVENT_FIELDS = (
    "type", "sequence_number", "output_index", "content_index", "summary_index", "item_id",
    "delta", "text", "refusal", "arguments", "item", "part", "response", "logprobs", "raw",
)  # fmt: skip


# --- helpers -------------------------------------------------------------------------------------


KIT = DialectKit(ResponsesStream, ResponseAccumulator, ssewire.ResponseEvent, EVENT_FIELDS, lambda item: item.type)
kind_of = KIT.kind_of
decode = KIT.decode
accumulate = KIT.accumulate


def frame(obj: Any, event: Optional[str] = None) -> bytes:
    head = f"event: {event}\n" if event is not None else ""
    return (head + "data: " + json.dumps(obj, ensure_ascii=False) + "\n\n").encode()




def response(status: str = "in_progress", output: Any = (), **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1, "status": status,
            "error": None, "incomplete_details": None, "model": "gpt-x", "output": list(output),
            "usage": None, **extra}  # fmt: skip


CREATED = {"type": "response.created", "sequence_number": 0, "response": response()}
MESSAGE = {"id": "msg_1", "type": "message", "status": "in_progress", "content": [],
           "role": "assistant"}  # fmt: skip


def text_delta(text: str, output_index: int = 0, content_index: int = 0,
               **extra: Any) -> dict[str, Any]:  # fmt: skip
    return {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": output_index,
            "content_index": content_index, "delta": text, **extra}  # fmt: skip


# --- 1. captures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CAPTURES)
def test_capture_result_paths(name: str) -> None:
    """The stream's own fold: s.result() after feed(), consume() or a mix, every split, equals
    the expected result and the accumulator's; s.errors is the same on every path."""
    KIT.check_result_paths(DATA, name)


@pytest.mark.parametrize("name", CAPTURES)
def test_capture(name: str) -> None:
    """Every wire form: fed every way, accumulated, compared with its expected document."""
    acc, expected = KIT.check_capture(DATA, name, raw_has_error_key=False)
    assert_notes(acc.mismatches, expected.get("mismatches", []))
    assert_notes(acc.warnings, expected.get("warnings", []))


def test_every_capture_has_its_expected_result() -> None:
    assert len(CAPTURES) >= 15
    for name in CAPTURES:
        assert (DATA / f"{name}.json").exists(), name
    assert sorted(p.stem for p in DATA.glob("*.json")) == CAPTURES


@pytest.mark.parametrize("name", ["text_message", "reasoning_summary", "terminal_mismatch",
                                  "docs_nanogpt_filled", "no_terminal"])  # fmt: skip
def test_capture_accumulated_while_feeding(name: str) -> None:
    """Adding each feed()'s items as they come, calling result() after every feed, gives the
    same result and the same notes as adding everything at the end."""
    for acc, expected in KIT.accumulated_while_feeding(DATA, name):
        assert_notes(acc.mismatches, expected.get("mismatches", []))


# --- 2. focused tests ----------------------------------------------------------------------------


def test_event_attributes() -> None:
    part = {"type": "output_text", "annotations": [], "text": ""}
    logprobs = [{"token": "Hi", "logprob": -0.5, "top_logprobs": []}]
    events = [
        CREATED,
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
         "item": MESSAGE},
        {"type": "response.content_part.added", "sequence_number": 2, "item_id": "msg_1",
         "output_index": 0, "content_index": 0, "part": part},
        dict(text_delta("Hi"), sequence_number=3, logprobs=[], obfuscation="xyz"),
        dict(text_delta("!"), sequence_number=4, logprobs=logprobs),
        {"type": "response.output_text.done", "sequence_number": 5, "item_id": "msg_1",
         "output_index": 0, "content_index": 0, "text": "Hi!", "logprobs": []},
        {"type": "response.refusal.done", "sequence_number": 6, "item_id": "msg_1",
         "output_index": 0, "content_index": 1, "refusal": "no"},
        {"type": "response.function_call_arguments.done", "sequence_number": 7, "item_id": "fc",
         "output_index": 1, "arguments": "{}"},
        {"type": "response.reasoning_summary_text.delta", "sequence_number": 8, "item_id": "rs",
         "output_index": 2, "summary_index": 3, "delta": "sum"},
        {"type": "response.completed", "sequence_number": 9, "response": response("completed")},
    ]  # fmt: skip
    items, stream = decode(b"".join(frame(e, e["type"]) for e in events))
    assert stream.done and stream.error is None
    assert all(type(i) is ssewire.ResponseEvent for i in items)
    created, added, part_added, d1, d2, text_done, refusal_done, args_done, summary, done = items
    assert (created.type, created.sequence_number, created.response) == (
        "response.created", 0, CREATED["response"])  # fmt: skip
    assert created.raw == CREATED
    assert (added.output_index, added.item, added.item_id) == (0, MESSAGE, None)
    assert (part_added.item_id, part_added.content_index, part_added.part) == ("msg_1", 0, part)
    # a plain delta carries only typed fields; obfuscation padding and empty logprobs are dropped
    assert (d1.delta, d1.item_id, d1.output_index, d1.content_index) == ("Hi", "msg_1", 0, 0)
    assert d1.raw is None and d1.logprobs is None and d1.text is None
    assert (d2.delta, d2.logprobs) == ("!", logprobs)
    assert (text_done.text, text_done.delta) == ("Hi!", None)
    assert (refusal_done.refusal, refusal_done.content_index) == ("no", 1)
    assert (args_done.arguments, args_done.item_id, args_done.output_index) == ("{}", "fc", 1)
    assert (summary.delta, summary.summary_index, summary.content_index) == ("sum", 3, None)
    assert done.type == "response.completed" and done.response == response("completed")
    for item in items:
        assert repr(item).startswith("ResponseEvent(")


@pytest.mark.parametrize("kind", ["response.completed", "response.incomplete", "response.failed"])
def test_terminal_events_set_done(kind: str) -> None:
    stream = ResponsesStream()
    stream.feed(frame(CREATED))
    assert not stream.done
    stream.feed(frame({"type": kind, "sequence_number": 1, "response": response(kind[9:])}))
    assert stream.done
    assert stream.finish() == []
    assert (stream.error is None) is (kind != "response.failed")


def test_done_marker_sets_done() -> None:
    items, stream = decode(frame(CREATED) + b"data: [DONE]\n\n")
    assert [kind_of(i) for i in items] == ["response.created"]
    assert stream.done and stream.error is None


def test_failed_gives_error_item_then_event() -> None:
    error = {"code": "server_error", "message": "boom"}
    failed = {"type": "response.failed", "sequence_number": 1,
              "response": response("failed", error=error)}  # fmt: skip
    items, stream = decode(frame(CREATED) + frame(failed, "response.failed"))
    assert [kind_of(i) for i in items] == ["response.created", "stream_error", "response.failed"]
    err_item = items[1]
    assert err_item.event == "response.failed"
    assert json.loads(err_item.data) == failed
    e = stream.error
    assert (e.message, e.type, e.code, e.raw) == ("boom", None, "server_error", failed)
    assert err_item.error.message == "boom"
    acc = accumulate(items)
    assert acc.error.code == "server_error"
    result = acc.result()
    assert result["status"] == "failed" and result["error"] == error


def test_failed_without_error_object() -> None:
    failed = {"type": "response.failed", "sequence_number": 1, "response": response("failed")}
    items, stream = decode(frame(failed))
    assert [kind_of(i) for i in items] == ["stream_error", "response.failed"]
    assert stream.error.message and stream.done


@pytest.mark.parametrize(
    "event,body",
    [
        ("error", {"type": "error", "code": "rate_limit_exceeded", "message": "slow down",
                   "param": None, "sequence_number": 2}),
        (None, {"type": "error", "code": "rate_limit_exceeded", "message": "slow down",
                "param": None, "sequence_number": 2}),
        (None, {"type": "error", "error": {"type": "rate_limit_error",
                                           "code": "rate_limit_exceeded", "message": "slow down"}}),
        (None, {"type": "response.error", "error": {"code": "rate_limit_exceeded",
                                                    "message": "slow down"}}),
        ("error", {"error": {"message": "slow down", "type": "rate_limit_error",
                             "code": "rate_limit_exceeded"}}),
    ],
)  # fmt: skip
def test_error_event_forms(event: Optional[str], body: dict[str, Any]) -> None:
    items, stream = decode(frame(CREATED) + frame(body, event))
    assert [kind_of(i) for i in items] == ["response.created", "stream_error"]
    assert not stream.done
    assert (stream.error.message, stream.error.code) == ("slow down", "rate_limit_exceeded")
    assert stream.error.raw == body
    assert items[1].event == (event or "message")
    acc = accumulate(items)
    assert acc.error is items[1].error or acc.error.message == "slow down"
    assert acc.result()["status"] == "in_progress"


@pytest.mark.parametrize("event", ["error", None])
def test_error_event_type_is_not_the_event_discriminator(event: Optional[str]) -> None:
    """OpenAI's top-level error event is ``{"type": "error", "code", "message", "param"}``:
    its ``type`` names the event, not the error. ``StreamError.type`` is the error's own type
    (what a caller decides to retry on), and this error has none, with or without the
    ``event: error`` line that api.openai.com sends."""
    body = {"type": "error", "code": "rate_limit_exceeded", "message": "slow down",
            "param": None, "sequence_number": 2}  # fmt: skip
    _, stream = decode(frame(body, event))
    assert stream.error.type is None


def test_data_frame_with_error_key_is_a_stream_error() -> None:
    """API.md section 2: "a `data:` frame whose JSON has an `error` key" is one of the wire
    forms of a mid-stream error, for every dialect."""
    err = {"error": {"message": "Provider disconnected", "type": "server_error",
                     "code": "provider_error"}}  # fmt: skip
    items, stream = decode(frame(CREATED) + frame(err))
    assert [kind_of(i) for i in items] == ["response.created", "stream_error"]
    assert (stream.error.message, stream.error.code) == ("Provider disconnected", "provider_error")


def test_unknown_event_types_pass_through() -> None:
    odd = {"type": "response.brand_new", "sequence_number": 3, "stuff": [1, {"a": None}]}
    items, stream = decode(frame(CREATED) + frame(odd) + frame({"no_type": True}))
    assert [kind_of(i) for i in items] == ["response.created", "response.brand_new", "message"]
    assert items[1].raw == odd and items[1].sequence_number == 3
    assert items[2].raw == {"no_type": True}
    acc = accumulate(items)
    assert acc.result() == response() and acc.warnings == [] and acc.errors == []


def test_cut_stream_is_incomplete() -> None:
    stream = ResponsesStream()
    added = {"type": "response.output_item.added", "output_index": 0, "item": MESSAGE}
    items = stream.feed(frame(CREATED) + frame(added) + frame(text_delta("part")))
    assert stream.error is None and not stream.done
    items += stream.finish()
    assert stream.error.code == "incomplete_stream" and not stream.done
    acc = accumulate(items)
    assert acc.error is None
    assert acc.result()["output"][0]["content"] == [
        {"type": "output_text", "annotations": [], "text": "part"}]  # fmt: skip


def test_empty_body_is_incomplete() -> None:
    items, stream = decode(b"")
    assert items == [] and stream.error.code == "incomplete_stream"
    assert accumulate(items).result() == {
        "id": None, "object": "response", "created_at": None, "model": None, "status": None,
        "output": [], "usage": None, "error": None, "incomplete_details": None,
    }  # fmt: skip


def test_feed_accepts_buffers_and_limit() -> None:
    data = (DATA / "text_message.sse").read_bytes()
    for wrap in (bytes, bytearray, memoryview):
        stream = ResponsesStream()
        items = stream.feed(wrap(data)) + stream.finish()
        assert accumulate(items).result()["status"] == "completed"
    with pytest.raises(TypeError):
        ResponsesStream().feed("data: {}\n\n")  # type: ignore[arg-type]
    stream = ResponsesStream(max_event_size=200)
    assert stream.max_event_size == 200
    with pytest.raises(ssewire.EventTooLargeError) as info:
        stream.feed(frame(text_delta("x" * 300)) + frame(text_delta("y")))
    assert [i.delta for i in info.value.events] == ["y"]


# --- 3. the accumulator alone, on hand-made items -----------------------------------------------


def FakeEvent(**fields: Any) -> Any:
    """A real ``ResponseEvent`` decoded from an event built of ``fields`` (the item's attribute
    names, ``raw`` merged in; ``None`` values left out, as a server would)."""
    raw = fields.pop("raw", None)
    event: dict[str, Any] = dict(raw) if raw is not None else {}
    event.update({k: v for k, v in fields.items() if v is not None})
    [item] = ResponsesStream().feed(b"data: " + json.dumps(event).encode() + b"\n\n")
    assert type(item) is ssewire.ResponseEvent, item
    return item


def fake(kind: str, **fields: Any) -> Any:
    return FakeEvent(type=kind, **fields)


def test_fake_items_every_kind() -> None:
    acc = ResponseAccumulator()
    acc.add_all([
        fake("response.queued", response=response("queued")),
        fake("response.in_progress", response=response(metadata={"a": 1})),
        # a reasoning item: summary parts and reasoning text
        fake("response.output_item.added", output_index=0,
             item={"id": "rs", "type": "reasoning", "summary": []}),
        fake("response.reasoning_summary_part.added", output_index=0, summary_index=0,
             part={"type": "summary_text", "text": ""}),
        fake("response.reasoning_summary_text.delta", output_index=0, summary_index=0, delta="S1"),
        fake("response.reasoning_summary_text.delta", output_index=0, summary_index=1, delta="S2"),
        fake("response.reasoning_text.delta", output_index=0, content_index=0, delta="R"),
        # a message: text (with annotation and logprobs) and a refusal part
        fake("response.output_item.added", output_index=1, item=MESSAGE),
        fake("response.content_part.added", output_index=1, content_index=0,
             part={"type": "output_text", "annotations": [{"a": 0}], "text": ""}),
        fake("response.output_text.delta", output_index=1, content_index=0, delta="T",
             logprobs=[{"token": "T"}]),
        fake("response.output_text.annotation.added", output_index=1, content_index=0,
             raw={"annotation": {"a": 1}}),
        fake("response.refusal.delta", output_index=1, content_index=1, delta="no"),
        # tool calls of several kinds, located by item id when the output index is missing
        fake("response.output_item.added", output_index=2,
             item={"id": "fc", "type": "function_call", "arguments": "", "name": "f"}),
        fake("response.function_call_arguments.delta", item_id="fc", delta="{\"x\":"),
        fake("response.function_call_arguments.delta", output_index=2, delta="1}"),
        fake("response.output_item.added", output_index=3,
             item={"id": "ct", "type": "custom_tool_call", "input": ""}),
        fake("response.custom_tool_call_input.delta", output_index=3, delta="print("),
        fake("response.custom_tool_call_input.delta", output_index=3, delta="1)"),
        fake("response.output_item.added", output_index=4,
             item={"id": "ci", "type": "code_interpreter_call", "code": ""}),
        fake("response.code_interpreter_call_code.delta", output_index=4, delta="1+"),
        fake("response.code_interpreter_call_code.delta", output_index=4, delta="1"),
        fake("response.code_interpreter_call_code.done", output_index=4, raw={"code": "1+1"}),
        fake("response.output_item.added", output_index=5,
             item={"id": "mc", "type": "mcp_call", "arguments": ""}),
        fake("response.mcp_call_arguments.delta", output_index=5, delta="{}"),
        fake("response.web_search_call.searching", output_index=6),
    ])  # fmt: skip
    result = acc.result()
    assert result["status"] == "in_progress" and result["metadata"] == {"a": 1}
    assert result["output"] == [
        {"id": "rs", "type": "reasoning",
         "summary": [{"type": "summary_text", "text": "S1"},
                     {"type": "summary_text", "text": "S2"}],
         "content": [{"type": "reasoning_text", "text": "R"}]},
        {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant",
         "content": [{"type": "output_text", "annotations": [{"a": 0}, {"a": 1}], "text": "T",
                      "logprobs": [{"token": "T"}]},
                     {"type": "refusal", "refusal": "no"}]},
        {"id": "fc", "type": "function_call", "arguments": "{\"x\":1}", "name": "f"},
        {"id": "ct", "type": "custom_tool_call", "input": "print(1)"},
        {"id": "ci", "type": "code_interpreter_call", "code": "1+1"},
        {"id": "mc", "type": "mcp_call", "arguments": "{}"},
    ]  # fmt: skip
    assert acc.warnings == [] and acc.mismatches == [] and acc.errors == []


def test_fake_events_for_unannounced_items_warn() -> None:
    acc = ResponseAccumulator()
    acc.add_all([
        fake("response.output_text.delta", output_index=0, content_index=0, item_id="m", delta="a"),
        fake("response.function_call_arguments.delta", output_index=1, item_id="f", delta="{}"),
        fake("response.reasoning_summary_text.delta", output_index=2, summary_index=0, delta="s"),
        fake("response.output_text.delta", item_id="nowhere", delta="lost"),
        fake("response.output_text.delta", delta="lost too"),
    ])  # fmt: skip
    assert acc.result()["output"] == [
        {"id": "m", "type": "message", "role": "assistant",
         "content": [{"type": "output_text", "annotations": [], "text": "a"}]},
        {"id": "f", "type": "function_call", "arguments": "{}"},
        {"id": None, "type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}]},
    ]  # fmt: skip
    assert_notes(acc.warnings, [
        ["output[0]", "assumed a message"], ["output[1]", "assumed a function_call"],
        ["output[2]", "assumed a reasoning"], ["names no output item"], ["names no output item"],
    ])  # fmt: skip


FC2_DONE = {"id": "fc2", "type": "function_call", "arguments": "[2]", "status": "completed"}


def test_fake_full_values_win_and_differences_are_noted() -> None:
    acc = ResponseAccumulator()
    acc.add_all([
        fake("response.output_item.added", output_index=0, item=MESSAGE),
        fake("response.output_text.delta", output_index=0, content_index=0, delta="Hello"),
        fake("response.output_text.done", output_index=0, content_index=0, text="Hello!"),
        fake("response.output_text.delta", output_index=0, content_index=1, delta="two"),
        fake("response.content_part.done", output_index=0, content_index=1,
             part={"type": "output_text", "annotations": [], "text": "TWO"}),
        fake("response.output_item.added", output_index=1,
             item={"id": "fc", "type": "function_call", "arguments": ""}),
        fake("response.function_call_arguments.delta", output_index=1, delta="{"),
        fake("response.function_call_arguments.done", output_index=1, arguments="{}"),
        fake("response.output_item.added", output_index=2,
             item={"id": "fc2", "type": "function_call", "arguments": ""}),
        fake("response.function_call_arguments.delta", output_index=2, delta="[1]"),
        fake("response.output_item.done", output_index=2, item=FC2_DONE),
    ])  # fmt: skip
    output = acc.result()["output"]
    assert output[0]["content"] == [
        {"type": "output_text", "annotations": [], "text": "Hello!"},
        {"type": "output_text", "annotations": [], "text": "TWO"},
    ]
    assert output[1]["arguments"] == "{}"
    assert output[2] == FC2_DONE
    assert_notes(acc.mismatches, [
        ["content[0].text", "'Hello'", "response.output_text.done", "'Hello!'"],
        ["content[1].text", "'two'", "response.content_part.done", "'TWO'"],
        ["output[1]", "arguments", "'{'", "'{}'"],
        ["output[2]", "arguments", "'[1]'", "response.output_item.done", "'[2]'"],
    ])  # fmt: skip
    # The terminal response wins; its differences from the (already corrected) output are noted.
    acc.add(fake("response.completed", response=response("completed", output=output[:2])))
    assert acc.result()["output"] == output[:2]
    assert_notes(acc.mismatches[4:], [["response.completed", "2 output items", "3 assembled"]])


def test_fake_terminal_item_type_or_id_differs() -> None:
    acc = ResponseAccumulator()
    acc.add_all([
        fake("response.output_item.added", output_index=0, item=MESSAGE),
        fake("response.output_text.delta", output_index=0, content_index=0, delta="x"),
        fake("response.incomplete", response=response("incomplete", output=[
            {"id": "other", "type": "message", "content": []}],
            incomplete_details={"reason": "content_filter"})),
    ])  # fmt: skip
    result = acc.result()
    assert result["status"] == "incomplete"
    assert result["incomplete_details"] == {"reason": "content_filter"}
    assert_notes(acc.mismatches, [["output[0]", "id", "'msg_1'", "'other'"]])


def test_fake_only_done_events_are_not_mismatches() -> None:
    """A server that sends no deltas, only the full values, streamed nothing to compare."""
    item = dict(MESSAGE, status="completed",
                content=[{"type": "output_text", "annotations": [], "text": "all"}])  # fmt: skip
    acc = ResponseAccumulator()
    acc.add_all([
        fake("response.output_item.added", output_index=0, item=MESSAGE),
        fake("response.content_part.added", output_index=0, content_index=0,
             part={"type": "output_text", "annotations": [], "text": ""}),
        fake("response.output_text.done", output_index=0, content_index=0, text="all"),
        fake("response.output_item.done", output_index=0, item=item),
        fake("response.completed", response=response("completed", output=[item])),
    ])  # fmt: skip
    assert acc.result()["output"] == [item]
    assert acc.mismatches == [] and acc.warnings == []


def test_fake_terminal_without_response_and_later_snapshots() -> None:
    acc = ResponseAccumulator()
    acc.add_all([
        fake("response.created", response=response()),
        fake("response.completed", response="garbage"),
        fake("response.completed", response=response("completed", output=[], usage={"n": 1})),
        fake("response.in_progress", response=response(model="later")),
    ])  # fmt: skip
    result = acc.result()
    assert (result["status"], result["usage"], result["model"]) == ("completed", {"n": 1}, "gpt-x")
    assert_notes(acc.warnings, [["response.completed", "without a response"]])


def test_fake_errors_are_collected() -> None:
    bad, e1, e2 = ResponsesStream().feed(
        b"data: {bad\n\n"
        b'event: error\ndata: {"type": "error", "code": "a", "message": "1"}\n\n'
        b'event: error\ndata: {"type": "error", "code": "b", "message": "2"}\n\n'
    )
    acc = ResponseAccumulator()
    acc.add_all([bad, e1, e2, ssewire.Event("{}", "ping")])
    assert acc.errors == [bad, e1, e2] and acc.error is e1.error
    for foreign in (object(), {"type": "response.completed"}, ssewire.MessagesStream().feed(
            b'data: {"type": "message_stop"}\n\n')[0]):  # fmt: skip
        with pytest.raises(TypeError, match="ResponseEvent"):
            acc.add(foreign)


def test_result_is_a_new_dict_each_call() -> None:
    acc = accumulate(decode((DATA / "no_terminal.sse").read_bytes())[0])
    r1 = acc.result()
    r1["output"][0]["content"].clear()
    r1["status"] = "junk"
    r2 = acc.result()
    assert r2["status"] == "in_progress" and r2["output"][0]["content"][0]["text"] == "Partial"


# --- 4. differential test against the openai SDK's Responses stream state -------------------------


def _split(text: str, rng: random.Random) -> list[str]:
    if len(text) < 2:
        return [text]
    points = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 8))))
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def generated_responses_events(seed: int) -> list[dict[str, Any]]:
    """A random, well-formed Responses event sequence ending in ``response.completed``."""
    rng = random.Random(seed)
    rid = f"resp_{seed}"
    events: list[dict[str, Any]] = []

    def emit(obj: dict[str, Any]) -> None:
        obj["sequence_number"] = len(events)
        events.append(obj)

    def texts(n: int) -> list[str]:
        return _streams.tokens(rng.randint(1, n), rng.randint(0, 10**6))

    base = {"id": rid, "object": "response", "created_at": 1730000000 + seed,
            "status": "in_progress", "error": None, "incomplete_details": None,
            "model": "gpt-4.1", "output": [], "usage": None}  # fmt: skip
    emit({"type": "response.created", "response": dict(base)})
    if rng.random() < 0.5:
        emit({"type": "response.in_progress", "response": dict(base)})
    output: list[dict[str, Any]] = []
    for index in range(rng.randint(1, 4)):
        kind = rng.choice(["message", "message", "function_call", "reasoning"])
        item_id = f"{kind[:2]}_{seed}_{index}"
        ref = {"item_id": item_id, "output_index": index}
        if kind == "message":
            emit({"type": "response.output_item.added", "output_index": index,
                  "item": {"id": item_id, "type": "message", "status": "in_progress",
                           "content": [], "role": "assistant"}})  # fmt: skip
            content = []
            for ci in range(rng.choice([1, 1, 2])):
                at = dict(ref, content_index=ci)
                if rng.random() < 0.15:
                    emit({"type": "response.content_part.added", **ref, "content_index": ci,
                          "part": {"type": "refusal", "refusal": ""}})  # fmt: skip
                    pieces = texts(10)
                    for p in pieces:
                        emit({"type": "response.refusal.delta", **at, "delta": p})
                    full = "".join(pieces)
                    emit({"type": "response.refusal.done", **at, "refusal": full})
                    part: dict[str, Any] = {"type": "refusal", "refusal": full}
                else:
                    emit({"type": "response.content_part.added", **ref, "content_index": ci,
                          "part": {"type": "output_text", "annotations": [], "logprobs": [],
                                   "text": ""}})  # fmt: skip
                    pieces = texts(40)
                    for p in pieces:
                        emit({"type": "response.output_text.delta", **ref, "content_index": ci,
                              "delta": p, "logprobs": []})  # fmt: skip
                    full = "".join(pieces)
                    annotations = []
                    if rng.random() < 0.3:
                        annotations.append({"type": "url_citation", "start_index": 0,
                                            "end_index": len(full), "url": "https://x.example",
                                            "title": "X"})  # fmt: skip
                        emit({"type": "response.output_text.annotation.added", **ref,
                              "content_index": ci, "annotation_index": 0,
                              "annotation": annotations[0]})  # fmt: skip
                    emit({"type": "response.output_text.done", **ref, "content_index": ci,
                          "text": full, "logprobs": []})  # fmt: skip
                    part = {"type": "output_text", "annotations": annotations, "logprobs": [],
                            "text": full}  # fmt: skip
                emit({"type": "response.content_part.done", **at, "part": part})
                content.append(part)
            item: dict[str, Any] = {"id": item_id, "type": "message", "status": "completed",
                                    "content": content, "role": "assistant"}  # fmt: skip
        elif kind == "function_call":
            added = {"id": item_id, "type": "function_call", "status": "in_progress",
                     "arguments": "", "call_id": f"call_{seed}_{index}",
                     "name": "get_weather"}  # fmt: skip
            emit({"type": "response.output_item.added", "output_index": index, "item": added})
            args = json.dumps({"city": "".join(texts(5)), "days": rng.randint(1, 9)},
                              ensure_ascii=rng.random() < 0.5)  # fmt: skip
            for p in _split(args, rng):
                emit({"type": "response.function_call_arguments.delta", **ref, "delta": p})
            emit({"type": "response.function_call_arguments.done", **ref, "arguments": args})
            item = dict(added, status="completed", arguments=args)
        else:
            emit({"type": "response.output_item.added", "output_index": index,
                  "item": {"id": item_id, "type": "reasoning", "summary": []}})  # fmt: skip
            summary = []
            for si in range(rng.randint(1, 2)):
                emit({"type": "response.reasoning_summary_part.added", **ref, "summary_index": si,
                      "part": {"type": "summary_text", "text": ""}})  # fmt: skip
                pieces = texts(15)
                for p in pieces:
                    emit({"type": "response.reasoning_summary_text.delta", **ref,
                          "summary_index": si, "delta": p})  # fmt: skip
                full = "".join(pieces)
                emit({"type": "response.reasoning_summary_text.done", **ref, "summary_index": si,
                      "text": full})  # fmt: skip
                emit({"type": "response.reasoning_summary_part.done", **ref, "summary_index": si,
                      "part": {"type": "summary_text", "text": full}})  # fmt: skip
                summary.append({"type": "summary_text", "text": full})
            item = {"id": item_id, "type": "reasoning", "summary": summary}
        emit({"type": "response.output_item.done", "output_index": index, "item": item})
        output.append(item)
    usage = {"input_tokens": rng.randint(1, 999), "output_tokens": rng.randint(1, 999)}
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    emit({"type": "response.completed",
          "response": dict(base, status="completed", output=output, usage=usage)})  # fmt: skip
    return events


def _events_of(body: bytes) -> list[dict[str, Any]]:
    parser = ssewire.SSEParser()
    return [json.loads(e.data) for e in parser.feed(body) + parser.finish() if e.data != "[DONE]"]


def _body(events: list[dict[str, Any]], named: bool) -> bytes:
    return b"".join(frame(e, e["type"] if named else None) for e in events)


def _feed(body: bytes, seed: Any) -> ResponseAccumulator:
    rng = random.Random(str(seed))
    stream = ResponsesStream()
    acc = ResponseAccumulator()
    for piece in _streams.chunked(body, rng.randint(1, 300), seed=rng.randint(0, 10**6)):
        acc.add_all(stream.feed(piece))
    acc.add_all(stream.finish())
    return acc


def _sdk_run(events: list[dict[str, Any]]) -> tuple[Any, dict[Any, str]]:
    """Feeds the SDK's stream state; returns its final response (as a dict) and the last text
    / arguments snapshot it assembled from the deltas, by (output_index, content_index)."""
    from openai._models import construct_type_unchecked
    from openai._types import omit
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
    final = None
    snapshots: dict[Any, str] = {}
    for obj in events:
        event = construct_type_unchecked(
            type_=ResponseStreamEvent, value=obj  # type: ignore[arg-type]
        )
        for out in state.handle_event(event):
            if out.type == "response.completed":
                final = out.response.to_dict(warnings=False)
            elif out.type == "response.output_text.delta":
                snapshots[(out.output_index, out.content_index)] = out.snapshot
            elif out.type == "response.function_call_arguments.delta":
                snapshots[(out.output_index, None)] = out.snapshot
    return final, snapshots


@functools.lru_cache(maxsize=None)
def _sdk_rebuilds_output_of_a_bare_terminal() -> bool:
    """Whether the installed SDK assembles a terminal response sent without ``output`` from
    the stream; older ones, such as openai 2.48 (the newest for Python 3.9), fail on it with a
    TypeError inside the SDK."""
    events = generated_responses_events(0)
    terminal = events[-1]["response"]
    bare = dict(events[-1], response={k: v for k, v in terminal.items() if k != "output"})
    try:
        _sdk_run(events[:-1] + [bare])
    except TypeError:
        return False
    return True


# Keys the SDK adds to what the server sent (its structured-output parsing helpers).
_SDK_ONLY = frozenset(("parsed", "parsed_arguments"))


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if v is not None and k not in _SDK_ONLY}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _strip_full_values(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Only what streams: no `.done` events, no terminal response."""
    return [
        e for e in events
        if not e["type"].endswith(".done") and e["type"] != "response.completed"
    ]  # fmt: skip


GENERATED = [(f"generated-{seed}", seed) for seed in range(24)]
SHIPPED = [
    ("streams-text", dict(n_chunks=60, seed=1)),
    ("streams-tools", dict(n_chunks=30, seed=2, tool_calls=True)),
    ("streams-named-done", dict(n_chunks=20, seed=3, tool_calls=True, event_lines=True,
                                done_marker=True)),
]  # fmt: skip


@pytest.mark.parametrize("name,spec", GENERATED + SHIPPED, ids=[n for n, _ in GENERATED + SHIPPED])
def test_differential_against_openai_sdk(name: str, spec: Any) -> None:
    if isinstance(spec, int):
        events = generated_responses_events(spec)
        body = _body(events, named=spec % 2 == 0)
    else:
        body = _streams.responses_stream(**spec)
        events = _events_of(body)
    terminal = events[-1]["response"]
    sdk_final, sdk_snapshots = _sdk_run(events)

    # The whole stream: the terminal response wins, and the deltas agreed with it.
    acc = _feed(body, name)
    assert acc.errors == [] and acc.warnings == [] and acc.mismatches == []
    ours = acc.result()
    assert _normal(ours) == _normal(sdk_final)
    assert ours["output"] == terminal["output"] and ours["usage"] == terminal["usage"]

    # A terminal response without `output`: both rebuild it from the stream.
    bare = dict(events[-1], response={k: v for k, v in terminal.items() if k != "output"})
    acc = _feed(_body(events[:-1] + [bare], named=True), name)
    assert acc.mismatches == []
    assert acc.result()["output"] == terminal["output"]
    if _sdk_rebuilds_output_of_a_bare_terminal():
        sdk_bare, _ = _sdk_run(events[:-1] + [bare])
        assert _normal(acc.result()) == _normal(sdk_bare)

    # Deltas alone (no `.done` event, no terminal): the texts assembled equal the truth and
    # the SDK's own delta snapshots.
    acc = _feed(_body(_strip_full_values(events), named=False), name)
    assembled = acc.result()["output"]
    assert acc.mismatches == [] and acc.warnings == []
    assert [(i["id"], i["type"]) for i in assembled] == [
        (i["id"], i["type"]) for i in terminal["output"]]  # fmt: skip
    for index, (got, want) in enumerate(zip(assembled, terminal["output"])):
        if want["type"] == "function_call":
            assert got["arguments"] == want["arguments"]
            assert sdk_snapshots[(index, None)] == want["arguments"]
            assert (got["name"], got["call_id"]) == (want["name"], want["call_id"])
        elif want["type"] == "message":
            for ci, part in enumerate(want["content"]):
                field = "refusal" if part["type"] == "refusal" else "text"
                assert got["content"][ci]["type"] == part["type"]
                assert got["content"][ci][field] == part[field]
                assert got["content"][ci].get("annotations") == part.get("annotations")
                if field == "text":
                    assert sdk_snapshots[(index, ci)] == part["text"]
        else:
            assert got["summary"] == want["summary"]


# --- 5. fuzzing ----------------------------------------------------------------------------------

_values = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.text(max_size=4),
    st.lists(st.integers(0, 2), max_size=2),
    st.dictionaries(st.sampled_from(["type", "text", "id", "output", "content", "error"]),
                    st.one_of(st.text(max_size=3), st.lists(st.none(), max_size=1)), max_size=3),
)  # fmt: skip
_types = st.sampled_from([
    "response.created", "response.in_progress", "response.completed", "response.incomplete",
    "response.failed", "response.output_item.added", "response.output_item.done",
    "response.content_part.added", "response.content_part.done", "response.output_text.delta",
    "response.output_text.done", "response.refusal.delta", "response.refusal.done",
    "response.function_call_arguments.delta", "response.function_call_arguments.done",
    "response.reasoning_summary_text.delta", "response.reasoning_summary_part.added",
    "response.reasoning_text.done", "response.output_text.annotation.added",
    "response.custom_tool_call_input.done", "error", "other",
])  # fmt: skip
_event = st.fixed_dictionaries(
    {"type": _types},
    optional={
        "output_index": st.one_of(st.integers(-1, 2), st.none()),
        "content_index": st.one_of(st.integers(0, 1), st.none()),
        "summary_index": st.integers(0, 1),
        "item_id": st.sampled_from(["a", "b"]),
        "delta": st.text(max_size=3),
        "text": _values, "refusal": _values, "arguments": _values, "input": _values,
        "item": st.one_of(_values, st.just(MESSAGE)),
        "part": _values, "response": st.one_of(_values, st.just(response())),
        "logprobs": _values, "annotation": _values,
    },
)  # fmt: skip


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_event, max_size=12), st.binary(max_size=16))
def test_fuzz_never_raises(events: list[dict[str, Any]], tail: bytes) -> None:
    body = b"".join(frame(e) for e in events) + tail
    stream = ResponsesStream()
    acc = ResponseAccumulator()
    acc.add_all(stream.feed(body))
    acc.add_all(stream.finish())
    result = acc.result()
    assert result["object"] is not None and "output" in result
    json.dumps(result, default=repr)
    assert all(isinstance(n, str) for n in acc.mismatches + acc.warnings)
