"""``ssewire.accumulate()``, ``aaccumulate()``, ``detect_dialect()`` and ``AccumulateError``
(API.md section 3, issue 5).

1. accumulate on every input form (bytes, bytearray, memoryview, a list of reads, a generator,
   one-byte reads, an async generator) gives what the dialect's stream + accumulator give.
2. Dialect detection: each dialect's real shapes, the fallbacks for an error alone, and
   sniffing across tiny first reads (it must buffer until a line decides).
3. Errors: ``AccumulateError`` carries the partial result on a cut-off stream, an error
   frame, a JSON error body, an Anthropic ``event: error``, a plain SSE cut mid-event.
4. ``dialect="sse"``: the list of events.

Expected texts are those the sample captures were written with (see the ``_samples`` files).
"""

from __future__ import annotations

import asyncio
import pickle
from importlib import resources
from typing import Any, AsyncIterator, Dict, Iterator, List

import pytest
import ssewire
from ssewire import (
    AccumulateError,
    StreamError,
    aaccumulate,
    accumulate,
    detect_dialect,
)
from ssewire._api import SNIFF_LIMIT, _Assembly
from support import paths
from support import streams as _streams

CHAT_TEXT = (
    "Server-Sent Events (SSE) let a server push updates over one long-lived HTTP response: each "
    "event is a few `field: value` lines ended by a blank line — that’s how LLM APIs stream tokens."
)
MESSAGES_TEXT = "I'll check the current weather in São Paulo for you and convert it to Celsius."
MESSAGES_INPUT = {"location": "São Paulo, Brazil", "unit": "celsius"}
RESPONSES_TEXT = (
    "A haiku about streams:\n\nBytes arrive in bursts,\nblank lines close each little thought,\n"
    "the parser keeps up."
)

STREAMS: Dict[str, Any] = {
    "chat": (ssewire.ChatCompletionStream, ssewire.ChatCompletionAccumulator),
    "messages": (ssewire.MessagesStream, ssewire.MessageAccumulator),
    "responses": (ssewire.ResponsesStream, ssewire.ResponseAccumulator),
}


def sample(name: str) -> bytes:
    return (resources.files("ssewire") / "_samples" / name).read_bytes()


def by_hand(dialect: str, body: bytes) -> dict:
    """What the push API gives: the reference for accumulate()."""
    stream_cls, acc_cls = STREAMS[dialect]
    stream, acc = stream_cls(), acc_cls()
    acc.add_all(stream.feed(body))
    acc.add_all(stream.finish())
    assert stream.done and stream.error is None
    return acc.result()


def text_of(dialect: str, result: dict) -> str:
    if dialect == "chat":
        return result["choices"][0]["message"]["content"]
    if dialect == "messages":
        return "".join(b["text"] for b in result["content"] if b["type"] == "text")
    return "".join(
        c["text"] for item in result["output"] if item["type"] == "message"
        for c in item["content"] if c["type"] == "output_text"
    )  # fmt: skip


def one_byte_reads(body: bytes) -> List[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


def generated(dialect: str, n: int = 40) -> bytes:
    if dialect == "chat":
        return _streams.chat_stream(n, seed=5, tool_calls=True)
    if dialect == "messages":
        return _streams.messages_stream(n, seed=5, tool_use=True, thinking=True)
    return _streams.responses_stream(n, seed=5, tool_calls=True)


# --- 1. input forms --------------------------------------------------------------------------


def test_samples_assemble_to_what_they_say() -> None:
    chat = accumulate(sample("chat.sse"))
    assert chat["object"] == "chat.completion"
    assert chat["id"] == "chatcmpl-BvQk7m2pXcN8dE4rT1yZ0aWfLs9Hj"
    assert text_of("chat", chat) == CHAT_TEXT
    assert chat["choices"][0]["finish_reason"] == "stop"
    assert chat["usage"]["total_tokens"] == 67

    msg = accumulate(sample("messages.sse"))
    assert msg["type"] == "message" and msg["stop_reason"] == "tool_use"
    assert text_of("messages", msg) == MESSAGES_TEXT
    assert msg["content"][1]["type"] == "tool_use"
    assert msg["content"][1]["input"] == MESSAGES_INPUT

    resp = accumulate(sample("responses.sse"))
    assert resp["object"] == "response" and resp["status"] == "completed"
    assert text_of("responses", resp) == RESPONSES_TEXT


@pytest.mark.parametrize("dialect", ["chat", "messages", "responses"])
def test_every_input_form_gives_the_push_api_result(dialect: str) -> None:
    body = generated(dialect)
    want = by_hand(dialect, body)
    assert text_of(dialect, want) == "".join(_streams.tokens(40, 5))

    def gen() -> Iterator[bytes]:
        yield from _streams.chunked(body, 97, seed=3)

    forms: List[Any] = [
        body,
        bytearray(body),
        memoryview(body),
        _streams.chunked(body, 4096),
        _streams.chunked(body, 13, seed=1),
        gen(),
        iter(one_byte_reads(body)),
        [b"", body[:1], b"", body[1:]],  # empty reads, a 1-byte first read
        (bytearray(r) for r in _streams.chunked(body, 50)),
    ]
    for form in forms:
        assert accumulate(form) == want
        assert accumulate(form if not hasattr(form, "__next__") else [body], dialect) == want


def test_a_reused_bytearray_read_is_copied_while_sniffing() -> None:
    # A reader that refills one buffer: what was buffered for sniffing must not change.
    body = sample("chat.sse")

    def refilling() -> Iterator[bytearray]:
        buf = bytearray(5)
        for i in range(0, len(body), 5):
            piece = body[i : i + 5]
            buf[: len(piece)] = piece
            yield buf if len(piece) == 5 else bytearray(piece)

    assert text_of("chat", accumulate(refilling())) == CHAT_TEXT


@pytest.mark.parametrize("dialect", ["chat", "messages", "responses"])
def test_aaccumulate_on_an_async_generator(dialect: str) -> None:
    body = generated(dialect)
    want = by_hand(dialect, body)

    async def aiter_bytes() -> AsyncIterator[bytes]:
        for read in _streams.chunked(body, 64, seed=2):
            await asyncio.sleep(0)
            yield read

    async def tiny_first() -> AsyncIterator[bytes]:
        yield body[:1]
        yield body[1:]

    assert asyncio.run(aaccumulate(aiter_bytes())) == want
    assert asyncio.run(aaccumulate(tiny_first(), dialect)) == want
    # Plain bytes and sync iterables are accepted too.
    assert asyncio.run(aaccumulate(body)) == want
    assert asyncio.run(aaccumulate([body])) == want


def test_httpx_responses_sync_and_async() -> None:
    # What users write: the body of an httpx streaming response as it arrives.
    import httpx

    body = sample("chat.sse")
    want = by_hand("chat", body)
    reads = _streams.chunked(body, 100, seed=4)
    url = "https://api.example.com/v1/chat/completions"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=iter(reads))

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        with client.stream("POST", url) as response:
            assert accumulate(response.iter_bytes()) == want
        with client.stream("POST", url) as response:
            assert accumulate(response) == want

    async def ahandler(request: httpx.Request) -> httpx.Response:
        async def content() -> AsyncIterator[bytes]:
            for read in reads:
                yield read

        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=content())

    async def main() -> List[dict]:
        out = []
        async with httpx.AsyncClient(transport=httpx.MockTransport(ahandler)) as client:
            async with client.stream("POST", url) as response:
                out.append(await aaccumulate(response.aiter_bytes()))
            async with client.stream("POST", url) as response:
                out.append(await aaccumulate(response))
        return out

    assert asyncio.run(main()) == [want, want]


def test_aaccumulate_raises_accumulate_error() -> None:
    async def cut() -> AsyncIterator[bytes]:
        yield sample("messages.sse")[:600]

    with pytest.raises(AccumulateError) as info:
        asyncio.run(aaccumulate(cut()))
    assert info.value.code == "incomplete_stream"
    assert info.value.dialect == "messages"
    assert info.value.result["id"] == "msg_01XFDUDYJgAACzvnptvVoYEL"


def test_misuse_raises() -> None:
    with pytest.raises(TypeError, match="str"):
        accumulate("data: x\n\n")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str"):
        accumulate(["data: x\n\n"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        accumulate(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown dialect"):
        accumulate(b"", dialect="openai")


def test_max_event_size_is_passed_on() -> None:
    body = b"data: " + b"x" * 5000 + b"\n\n"
    with pytest.raises(ssewire.EventTooLargeError):
        accumulate(body, "sse", max_event_size=1000)
    with pytest.raises(ssewire.EventTooLargeError):
        accumulate(sample("chat.sse"), max_event_size=100)
    assert accumulate(body, "sse", max_event_size=10_000)["events"][0]["data"] == "x" * 5000


# --- 2. dialect detection --------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, dialect",
    [
        (sample("chat.sse"), "chat"),
        (sample("messages.sse"), "messages"),
        (sample("responses.sse"), "responses"),
        (sample("events.sse"), "sse"),
        (_streams.chat_stream(3), "chat"),
        (_streams.chat_stream(3, reasoning=True, usage="inline"), "chat"),
        (_streams.messages_stream(3, ping=False, thinking=True), "messages"),
        (_streams.responses_stream(3), "responses"),  # data-only frames
        (_streams.responses_stream(3, event_lines=True, done_marker=True), "responses"),
        # data-only Anthropic frames (some gateways drop the event: lines)
        (b'data: {"type":"message_start","message":{"id":"m"}}\n\n', "messages"),
        # a chat chunk without "object", from a minimal compatible server
        (b'data: {"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n', "chat"),
        (b"data: [DONE]\n\n", "chat"),
        (b"data:[DONE]\r\n\r\n", "chat"),
        # CR-only line ends
        (b"event: message_start\rdata: {}\r\r", "messages"),
        (b"\xef\xbb\xbfevent: response.created\ndata: {}\n\n", "responses"),
        # comments and an unknown event before the decisive line
        (b": ping\n\nevent: other\ndata: 1\n\ndata: [DONE]\n\n", "chat"),
        # text that *mentions* a marker is escaped inside JSON and decides nothing
        (b'data: {"text":"\\"type\\":\\"message_start\\""}\n\n', "sse"),
        (b"data: hello\n\nevent: tick\ndata: 2\n\n", "sse"),
        (b"", "sse"),
        (b": just a comment\n\n", "sse"),
        # an error alone still tells which API sent it
        (b'{"error":{"message":"Rate limit","type":"rate_limit_error"}}', "chat"),
        (b'data: {"error":{"message":"boom"}}\n\n', "chat"),
        (b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', "messages"),
        (
            b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"x"}}\n\n',
            "messages",
        ),
        (
            b'event: error\ndata: {"type":"error","code":"server_error","message":"x",'
            b'"param":null,"sequence_number":2}\n\n',
            "responses",
        ),
        (b'  {"id":"chatcmpl-1","object":"chat.completion","choices":[]}', "chat"),
    ],
)
def test_detect_dialect(body: bytes, dialect: str) -> None:
    assert detect_dialect(body) == dialect
    assert detect_dialect(bytearray(body)) == dialect
    assert detect_dialect(memoryview(body)) == dialect
    assert detect_dialect(body.decode("utf-8")) == dialect


def test_detect_dialect_looks_at_the_first_decisive_line() -> None:
    # A chat stream whose content quotes an Anthropic event line decides on its first frame.
    body = _streams.chat_stream(2) + b"event: message_start\ndata: {}\n\n"
    assert detect_dialect(body) == "chat"
    assert detect_dialect(b"event: message_start\ndata: {}\n\n" + _streams.chat_stream(2)) == "messages"


def test_a_cut_line_does_not_decide_early() -> None:
    # A name cut short could be anything: the event line needs its line end.
    assert detect_dialect(b"event: message_sta") == "sse"
    asm = _Assembly()
    asm.feed(b"event: message_sta")
    assert asm.dialect is None  # still buffering
    asm.feed(b"rt\ndata: ")
    assert asm.dialect is None  # an event decides once it is complete (the decoders' rules)
    asm.feed(b'{}\n\nevent: ping\ndata: {"type": "ping"}\n\n')
    assert asm.dialect == "messages"


@pytest.mark.parametrize("dialect", ["chat", "messages", "responses"])
def test_sniffing_buffers_across_tiny_reads(dialect: str) -> None:
    body = generated(dialect)
    asm = _Assembly()
    items: List[Any] = []
    first_event = body.index(b"\n\n") + 2
    for i, read in enumerate(one_byte_reads(body)):
        items += asm.feed(read)
        if asm.dialect is None:
            # Nothing decoded while sniffing, and not for long: the first event decides.
            assert not items and i < first_event + 512
    items += asm.finish()
    assert asm.dialect == dialect
    assert asm.error is None
    assert asm.result() == by_hand(dialect, body)
    # The items are those of the dialect stream fed whole.
    stream_cls, _ = STREAMS[dialect]
    stream = stream_cls()
    whole = stream.feed(body) + stream.finish()
    assert [type(i) for i in items] == [type(i) for i in whole]


def test_the_first_event_decides_without_waiting_for_more() -> None:
    body = sample("messages.sse")
    first = body[: body.index(b"\n\n") + 2]
    asm = _Assembly()
    items = asm.feed(first)
    assert asm.dialect == "messages"
    assert [i.type for i in items] == ["message_start"]


def test_sniffing_gives_up_after_the_limit() -> None:
    # Nothing but heartbeats for longer than SNIFF_LIMIT: read as a generic event stream.
    beats = b": keep-alive\n\n" * (SNIFF_LIMIT // 14 + 10)
    asm = _Assembly()
    for read in _streams.chunked(beats, 100):
        asm.feed(read)
    assert asm.dialect == "sse"
    assert len(asm.head) == 16 * 1024  # the head kept for error messages
    assert accumulate(beats + b"data: [DONE]\n\n") == {
        "events": [{"event": "message", "data": "[DONE]", "id": None, "retry": None}]
    }


def test_explicit_dialect_skips_detection() -> None:
    body = b": nothing decisive\n\n"
    with pytest.raises(AccumulateError) as info:
        accumulate(body, "chat")
    assert info.value.dialect == "chat"
    assert info.value.result["choices"] == []
    assert accumulate(sample("chat.sse"), "sse")["events"][-1]["data"] == "[DONE]"


# --- 3. errors -------------------------------------------------------------------------------


def test_cut_off_stream_raises_with_the_partial_result() -> None:
    body = sample("chat.sse")
    cut = body[: body.index(b" push") + 200]  # inside a later frame
    with pytest.raises(AccumulateError) as info:
        accumulate(_streams.chunked(cut, 100))
    err = info.value
    assert isinstance(err, StreamError) and isinstance(err, Exception)
    assert err.code == "incomplete_stream" and err.error.code == "incomplete_stream"
    assert err.dialect == "chat"
    assert str(err) == str(err.error) and err.message == err.error.message
    partial = err.result["choices"][0]["message"]["content"]
    assert partial and CHAT_TEXT.startswith(partial) and partial != CHAT_TEXT
    assert err.result["choices"][0]["finish_reason"] is None


def test_error_frame_mid_stream_raises_with_the_text_so_far() -> None:
    body = sample("chat.sse")
    head = body[: body.index(b"data: ", 2000)]
    error = b'data: {"error":{"message":"The server had an error","type":"server_error","code":null}}\n\n'
    with pytest.raises(AccumulateError) as info:
        accumulate([head, error, b"data: [DONE]\n\n"])
    err = info.value
    assert err.message == "The server had an error"
    assert err.type == "server_error" and err.code is None
    assert err.raw == {"error": {"message": "The server had an error", "type": "server_error", "code": None}}
    assert CHAT_TEXT.startswith(err.result["choices"][0]["message"]["content"])


def test_json_error_body_raises() -> None:
    body = b'{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}'
    with pytest.raises(AccumulateError) as info:
        accumulate(body)
    assert info.value.code == "invalid_api_key"
    assert info.value.dialect == "chat"
    assert info.value.result["choices"] == []
    # The same for the generic dialect: a JSON body is not an event stream.
    with pytest.raises(AccumulateError) as info:
        accumulate(body, "sse")
    assert info.value.message == "Incorrect API key provided"
    assert info.value.result == {"events": []}


def test_anthropic_error_event_raises() -> None:
    body = sample("messages.sse")
    cut = body[: body.index(b"event: content_block_stop")]
    error = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    with pytest.raises(AccumulateError) as info:
        accumulate([cut, error])
    err = info.value
    assert err.message == "Overloaded" and err.type == "overloaded_error"
    assert err.dialect == "messages"
    assert text_of("messages", err.result) == MESSAGES_TEXT


def test_responses_cut_before_completed_raises() -> None:
    body = sample("responses.sse")
    cut = body[: body.index(b"event: response.completed")]
    with pytest.raises(AccumulateError) as info:
        accumulate(cut)
    assert info.value.code == "incomplete_stream"
    assert info.value.dialect == "responses"
    assert info.value.result["id"].startswith("resp_")


def test_malformed_frame_is_skipped_not_raised() -> None:
    body = sample("chat.sse")
    i = body.index(b"data: ", 3000)
    broken = body[:i] + b"data: {not json\n\n" + body[i:]
    assert text_of("chat", accumulate(broken)) == CHAT_TEXT


def test_accumulate_error_pickles_and_reprs() -> None:
    err = AccumulateError(StreamError("boom", "server_error", 500, {"error": "boom"}), {"x": 1}, "chat")
    assert (err.message, err.type, err.code, err.raw) == ("boom", "server_error", 500, {"error": "boom"})
    assert str(err) == "boom (type=server_error, code=500)"
    assert "AccumulateError('boom'" in repr(err)
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, AccumulateError)
    assert (again.result, again.dialect, again.message) == ({"x": 1}, "chat", "boom")
    with pytest.raises(StreamError):
        raise err


# --- 4. the generic "sse" dialect ------------------------------------------------------------


def test_sse_dialect_lists_the_events() -> None:
    body = b"\xef\xbb\xbf: hi\nretry: 10\nid: 7\nevent: a\ndata: x\ndata: y\n\ndata: z\r\n\r\n"
    want = {
        "events": [
            {"event": "a", "data": "x\ny", "id": "7", "retry": 10},
            {"event": "message", "data": "z", "id": "7", "retry": None},
        ]
    }
    assert accumulate(body) == want
    assert accumulate(body, "sse") == want
    assert accumulate(one_byte_reads(body), "sse") == want
    assert accumulate(b"", "sse") == {"events": []}
    assert accumulate(b"  \n", "sse") == {"events": []}


def test_sse_sample() -> None:
    events = accumulate(sample("events.sse"))["events"]
    assert [e["event"] for e in events] == [
        "build.started", "build.log", "build.log", "message", "build.finished",
    ]  # fmt: skip
    assert [e["id"] for e in events] == ["1041", "1042", "1043", "1044", "1045"]
    assert events[0]["retry"] == 3000
    assert events[1]["data"].count("\n") == 1
    assert events[2]["data"].startswith(" indented")


def test_sse_cut_mid_event_raises() -> None:
    with pytest.raises(AccumulateError) as info:
        accumulate([b"data: one\n\n", b"data: tw"])
    err = info.value
    assert err.code == "incomplete_stream" and err.dialect == "sse"
    assert err.result == {"events": [{"event": "message", "data": "one", "id": None, "retry": None}]}


def test_one_detector_for_detect_dialect_and_the_translator() -> None:
    """Issue 28: ``detect_dialect`` and ``Translator("auto")`` apply the same (Rust) rules, so
    they agree on every capture of every dialect (the translator takes a body no event of
    which decides for chat after its sniffing window, where ``detect_dialect`` says "sse")."""
    data = paths.DATA
    checked = 0
    for path in sorted(data.glob("*/*.sse")):
        body = path.read_bytes()
        said = detect_dialect(body)
        t = ssewire.Translator("auto", "chat")
        t.feed(body)
        t.finish()
        told = t.source_dialect
        assert said == told or (said == "sse" and told == "chat"), (path.name, said, told)
        checked += 1
    assert checked > 100
