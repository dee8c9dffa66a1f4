"""Issue 15, first part: no wrong result that looks like success.

Each case here used to end with ``done=True`` and ``error is None`` (so the README's
``if stream.error:`` check passed) while the result was empty or wrong, or with a retry
condition where the body was an HTML error page. Every case is fed whole, byte by byte and at
random split points (``tests/support/splitting.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import ssewire
from ssewire import _cli
from support.splitting import check_all_ways, split_ways

STREAMS = {
    "chat": ssewire.ChatCompletionStream,
    "messages": ssewire.MessagesStream,
    "responses": ssewire.ResponsesStream,
    "gemini": ssewire.GeminiStream,  # issue 28: the same guarantees for the fourth dialect
}
ACCUMULATORS = {
    "chat": ssewire.ChatCompletionAccumulator,
    "messages": ssewire.MessageAccumulator,
    "responses": ssewire.ResponseAccumulator,
}


def sample(dialect: str) -> bytes:
    return (resources.files("ssewire") / "_samples" / f"{dialect}.sse").read_bytes()


def ev(kind: str, obj: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps(obj)}\n\n"


def tool_stream(fragments: list[str]) -> bytes:
    """A Messages stream with one tool_use block whose input arrives as ``fragments``."""
    body = ev("message_start", {"type": "message_start", "message": {
        "id": "msg_t", "type": "message", "role": "assistant", "model": "claude", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}})  # fmt: skip
    body += ev("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
        "type": "tool_use", "id": "toolu_w", "name": "get_weather", "input": {}}})  # fmt: skip
    for fragment in fragments:
        body += ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "input_json_delta", "partial_json": fragment}})  # fmt: skip
    body += ev("content_block_stop", {"type": "content_block_stop", "index": 0})
    body += ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                 "usage": {"output_tokens": 9}})  # fmt: skip
    body += ev("message_stop", {"type": "message_stop"})
    return body.encode()


def observe(stream: Any) -> Any:
    error = stream.error
    return (
        stream.done,
        None if error is None else (error.code, error.type, error.raw),
        stream.warnings,
        stream.result(),
    )


# --- invalid tool-call JSON: the stream has warnings, the block keeps the raw text --------------


@pytest.mark.parametrize(
    ("fragments", "input_", "says"),
    [
        # Mangled: never valid JSON. The start `input` stays, so a warning is all that tells.
        (['{"location": "San Francisco, CA", ', '"unit": fahrenheit}'], {}, "never formed valid JSON"),
        # Cut: valid JSON that stops early; `input` is the partial value.
        (['{"location": "San Francisco, CA", "unit": "fahr', 'enheit"'],
         {"location": "San Francisco, CA", "unit": "fahrenheit"}, "end before the JSON does"),
    ],
    ids=["mangled", "cut"],
)
def test_messages_invalid_tool_input_is_on_the_stream(fragments: list[str], input_: Any, says: str) -> None:
    body = tool_stream(fragments)
    whole = check_all_ways(ssewire.MessagesStream, body, key=repr, observe=observe)
    done, error, warnings, result = whole.observed
    assert done is True and error is None
    assert len(warnings) == 1 and "toolu_w" in warnings[0] and says in warnings[0]
    block = result["content"][0]
    assert block["input"] == input_
    assert block["partial_json"] == "".join(fragments)  # the raw text received
    # The same list the accumulator gives, through feed() and consume() alike.
    acc = ssewire.MessageAccumulator()
    acc.add_all(whole.items)
    assert acc.warnings == warnings
    consumed = ssewire.MessagesStream()
    consumed.consume(body)
    consumed.finish()
    assert consumed.warnings == warnings


def test_messages_warning_shows_before_the_block_stops() -> None:
    """A stream still open (or cut) reports tool input that cannot be JSON when read."""
    body = tool_stream(['{"a": ]'])
    cut = body[: body.index(b"event: content_block_stop")]
    s = ssewire.MessagesStream()
    s.feed(cut)
    assert len(s.warnings) == 1 and "never formed valid JSON" in s.warnings[0]


def test_chat_invalid_tool_arguments_are_a_warning() -> None:
    def chunk(delta: dict, finish: Any = None) -> str:
        return "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"  # fmt: skip

    call = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "f", "arguments": '{"x": 1,'}}
    body = (chunk({"role": "assistant", "tool_calls": [call]})
            + chunk({"tool_calls": [{"index": 0, "function": {"arguments": " oops}"}}]})
            + chunk({}, "tool_calls") + "data: [DONE]\n\n").encode()  # fmt: skip
    whole = check_all_ways(ssewire.ChatCompletionStream, body, key=repr, observe=observe)
    done, error, warnings, result = whole.observed
    assert done is True and error is None
    assert len(warnings) == 1 and "tool call 0 (call_9)" in warnings[0] and "not valid JSON" in warnings[0]
    assert result["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"x": 1, oops}'
    acc = ssewire.ChatCompletionAccumulator()
    acc.add_all(whole.items)
    assert acc.warnings == warnings
    # Valid arguments: no warning.
    ok = ssewire.ChatCompletionStream()
    ok.feed(sample("chat"))
    ok.finish()
    assert ok.warnings == []


# --- the wrong stream class ---------------------------------------------------------------------


@pytest.mark.parametrize("body_dialect", sorted(STREAMS))
@pytest.mark.parametrize("stream_dialect", sorted(STREAMS))
def test_a_body_of_another_dialect_is_an_error(body_dialect: str, stream_dialect: str) -> None:
    body = sample(body_dialect)
    whole = check_all_ways(STREAMS[stream_dialect], body, key=repr, observe=observe)
    _, error, _, _ = whole.observed
    if body_dialect == stream_dialect:
        assert error is None
        return
    assert error is not None and error[0] == "wrong_dialect" and error[1] == "invalid_response"
    s = STREAMS[stream_dialect]()
    s.consume(body)
    s.finish()
    assert s.error is not None and s.error.code == "wrong_dialect"
    assert "another dialect" in s.error.message


def test_wrong_dialect_is_reported_when_the_terminal_marker_arrives() -> None:
    """A chat body's `[DONE]` ends a MessagesStream: the error is there before finish()."""
    s = ssewire.MessagesStream()
    s.feed(sample("chat"))
    assert s.error is not None and s.error.code == "wrong_dialect"


def test_own_events_after_a_foreign_one_are_no_error() -> None:
    """An unknown object before the dialect's own events (a router's keep-alive) is fine."""
    body = b'data: {"status": "queued"}\n\n' + sample("messages")
    s = ssewire.MessagesStream()
    s.feed(body)
    s.finish()
    assert s.error is None and s.done


def test_error_only_bodies_are_not_wrong_dialect() -> None:
    body = b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}\n\n'
    for cls in STREAMS.values():
        s = cls()
        s.feed(body)
        s.finish()
        assert s.error is not None and s.error.message == "busy"


def test_cli_wrong_dialect_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chat.sse"
    path.write_bytes(sample("chat"))
    assert _cli.main([str(path), "--dialect", "messages"]) == 3
    assert "wrong_dialect" in capsys.readouterr().err
    assert _cli.main([str(path), "--dialect", "chat"]) == 0


# --- a body that is not an event stream -----------------------------------------------------------

HTML_502 = (b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
            b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")  # fmt: skip
TEXT_404 = b"404 page not found\n"


@pytest.mark.parametrize("body", [HTML_502, TEXT_404], ids=["html-502", "text-404"])
@pytest.mark.parametrize("dialect", sorted(STREAMS))
def test_a_body_that_is_not_an_event_stream_has_its_own_code(dialect: str, body: bytes) -> None:
    whole = check_all_ways(STREAMS[dialect], body, key=repr, observe=observe)
    done, error, _, _ = whole.observed
    assert done is False
    code, type_, raw = error
    assert (code, type_) == ("not_event_stream", "invalid_response")
    assert raw == {"body": body.decode()}  # the text is kept
    assert [item.error.code for item in whole.items] == ["not_event_stream"]
    assert STREAMS[dialect]().finish() == []  # an empty body is still just a cut stream


def test_not_an_event_stream_keeps_only_the_start_of_a_large_body() -> None:
    s = ssewire.ChatCompletionStream()
    s.feed(b"<html>" + b"x" * 1_000_000)
    s.finish()
    assert s.error.code == "not_event_stream"
    assert len(s.error.raw["body"]) == 16 * 1024


@pytest.mark.parametrize("body", [b": ping\n\n: ping\n", b"event: message_start\n", b"retry: 5\n"])
def test_event_streams_without_events_are_still_cut_streams(body: bytes) -> None:
    for cls in STREAMS.values():
        s = cls()
        s.feed(body)
        s.finish()
        assert s.error.code == "incomplete_stream"


def test_cli_exits_2_on_an_html_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "page.html"
    path.write_bytes(HTML_502)
    for extra in ([], ["--events"], ["--dialect", "messages"], ["--dialect", "sse"]):
        assert _cli.main([str(path), *extra]) == 2
        out, err = capsys.readouterr()
        assert out == "" and "not an event stream" in err


# --- the end-of-input rule ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "body"),
    [
        ("chat", sample("chat").rstrip(b"\n") + b"\n"),
        ("messages", sample("messages").rstrip(b"\n") + b"\n"),
        ("responses", sample("responses").rstrip(b"\n") + b"\n"),
        ("chat", sample("chat").rstrip(b"\n")),
        ("gemini", sample("gemini").rstrip(b"\r\n") + b"\r\n"),
    ],
    ids=["chat-no-blank-line", "messages-no-blank-line", "responses-no-blank-line", "chat-no-newline",
         "gemini-no-blank-line"],
)
def test_dialect_streams_decode_an_unclosed_last_event_at_finish(dialect: str, body: bytes) -> None:
    """The terminal marker cut just before its blank line still counts (finish() flushes)."""
    whole = check_all_ways(STREAMS[dialect], body, key=repr, observe=observe)
    done, error, _, result = whole.observed
    assert done is True and error is None
    full = STREAMS[dialect]()
    full.feed(sample(dialect))
    full.finish()
    assert result == full.result()


def test_sse_parser_dispatches_nothing_incomplete() -> None:
    """SSEParser follows the spec: an event without its blank line is not dispatched."""
    body = b"data: a\n\ndata: [DONE]\n"
    for way in split_ways(body):
        p = ssewire.SSEParser()
        events = [e for piece in way.pieces for e in p.feed(piece)]
        assert p.pending is True
        events += p.finish()
        assert [e.data for e in events] == ["a"], way.name


# --- chat fold memory: many choices cost a small constant each -----------------------------------

MEMORY_SCRIPT = r"""
import sys, ssewire
n = int(sys.argv[1])
choices = ",".join('{"index":%d,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]}}' % i for i in range(n))
body = ('data: {"id":"x","object":"chat.completion.chunk","choices":[%s]}\n\n' % choices).encode()
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096
s = ssewire.ChatCompletionStream(max_event_size=1 << 28)
before = rss()
s.consume(body)
print(len(body), rss() - before)
"""


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc")
def test_chat_fold_state_of_many_choices_is_linear_and_small() -> None:
    """Before: one B-tree leaf of 11 choice slots per choice, and one of 11 tool-call slots
    per choice (1.4 GiB for a 16 MiB event of 320k choices, ~46 bytes per wire byte here)."""
    out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, "100000"], capture_output=True,
                         text=True, timeout=300, check=True)  # fmt: skip
    size, grown = map(int, out.stdout.split())
    assert grown < 16 * size, f"{grown / size:.1f} bytes of fold state per wire byte"


def test_wrong_dialect_does_not_depend_on_the_reads() -> None:
    """Found by the fuzz smoke: the check ran once per feed() call, so a terminal marker and an
    own event in the same read gave no error while separate reads gave one. It now runs frame
    by frame: the outcome follows the stream's order only."""
    body = (b'data: {"type":"ping"}\n\ndata: [DONE]\n\n'
            b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
            b'"output_index":0,"content_index":0,"delta":"x"}\n\n')  # fmt: skip
    whole = check_all_ways(ssewire.ResponsesStream, body, key=repr, observe=observe)
    assert whole.observed[1][0] == "wrong_dialect"
