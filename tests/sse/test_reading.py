"""``iter`` / ``aiter`` / ``tap`` / ``atap`` without a network: the sources they accept, the
chunk types, what happens on an early stop and when the source fails (``ssewire._reading``
documents both), and that they add nothing per item (``tap`` builds no items).

The real-socket side (every HTTP client, every capture) is ``test_clients.py``.
"""

from __future__ import annotations

import asyncio
import gc
import io
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import pytest
import ssewire
from support import paths
from support import streams as _streams
from support.dialects import error_fields
from support.splitting import split_ways

DATA = paths.DATA
BODIES = {
    ssewire.ChatCompletionStream: _streams.chat_stream(40, seed=7, tool_calls=True),
    ssewire.MessagesStream: _streams.messages_stream(40, seed=8, tool_use=True),
    ssewire.ResponsesStream: _streams.responses_stream(40, seed=9, tool_calls=True),
}
# The body of a stream cut off mid-frame: finish() has work to do (the incomplete_stream error).
CUT = (DATA / "chat" / "cut_mid_frame.sse").read_bytes()


def snapshot(stream: Any, items: list[Any]) -> Any:
    """Items (their reprs carry every field) and the stream's end state."""
    return (
        [repr(i) for i in items],
        stream.result(),
        stream.done,
        error_fields(stream.error),
    )


def reference(cls: Any, body: bytes) -> Any:
    stream = cls()
    items = stream.feed(body) + stream.finish()
    return snapshot(stream, items)


def test_public_classes_are_the_rust_streams_with_the_methods() -> None:
    """The public names are subclasses of the Rust classes, with no per-instance dict."""
    for name in (
        "ChatCompletionStream",
        "MessagesStream",
        "ResponsesStream",
        "SSEParser",
    ):
        cls = getattr(ssewire, name)
        assert issubclass(cls, getattr(ssewire._core, name))
        assert not hasattr(cls(), "__dict__")
        assert callable(cls.iter) and callable(cls.aiter)
    assert not hasattr(ssewire.SSEParser, "tap")  # SSEParser has no consume()


@pytest.mark.parametrize("cls", list(BODIES), ids=lambda c: c.__name__)
def test_iter_every_split_and_chunk_type(cls: Any) -> None:
    """``iter`` over any cutting of the body, as bytes, bytearray or memoryview, gives the
    items of feeding it whole (plus finish()'s) and the same end state."""
    body = BODIES[cls]
    expected = reference(cls, body)
    for way in split_ways(body):
        for wrap in (bytes, bytearray, memoryview):
            stream = cls()
            items = list(stream.iter(wrap(p) for p in way.pieces))
            assert snapshot(stream, items) == expected, (way.name, wrap)


def test_iter_yields_finish_items_and_finishes() -> None:
    """A stream cut mid-frame: the loop ends with the stream finished (incomplete_stream)."""
    stream = ssewire.ChatCompletionStream()
    list(stream.iter([CUT]))
    assert stream.error is not None and stream.error.code == "incomplete_stream"
    assert snapshot(stream, [])[1:] == reference(ssewire.ChatCompletionStream, CUT)[1:]


def test_sources_files_and_single_objects(tmp_path: Path) -> None:
    """A binary file (read in blocks, never lines), a BytesIO, one bytes object, a bytearray:
    all read like the whole body."""
    body = BODIES[ssewire.MessagesStream]
    expected = reference(ssewire.MessagesStream, body)
    path = tmp_path / "body.sse"
    path.write_bytes(body)
    with path.open("rb") as f, path.open("rb", buffering=0) as raw:
        sources = [f, raw, io.BytesIO(body), body, bytearray(body), memoryview(body)]
        for source in sources:
            stream = ssewire.MessagesStream()
            assert snapshot(stream, list(stream.iter(source))) == expected, type(source)


def test_a_file_is_read_in_blocks_not_lines() -> None:
    """``tap`` over a file yields blocks of up to READ_SIZE bytes: a body of short lines comes
    in few pieces."""
    body = BODIES[ssewire.ChatCompletionStream]
    stream = ssewire.ChatCompletionStream()
    pieces = list(stream.tap(io.BytesIO(body)))
    assert b"".join(pieces) == body
    assert (
        len(pieces) == -(-len(body) // ssewire._reading.READ_SIZE) < body.count(b"\n")
    )
    assert stream.done


def test_the_sse_parser_iterates() -> None:
    body = ssewire.encode_event("a\nb", event="x", id="1") + b"data: c\n\ndata: cut"
    for way in split_ways(body):
        parser = ssewire.SSEParser()
        events = list(parser.iter(way.pieces))
        assert [(e.event, e.data, e.id) for e in events] == [
            ("x", "a\nb", "1"),
            ("message", "c", "1"),
        ]
        # finish() ran: the input is reported as ending mid-event, and the cut event was
        # dropped (a blank line now dispatches nothing).
        assert parser.pending is True
        assert parser.feed(b"\n\n") == []


@pytest.mark.parametrize("method", ["iter", "tap", "aiter", "atap"])
def test_str_is_a_type_error(method: str) -> None:
    """A str source, or a str chunk, is a TypeError naming the problem, raised on first use."""
    for source, words in (
        ("data: x\n\n", "not str"),
        (["data: x\n\n"], "str"),
        (5, "int"),
    ):
        stream = ssewire.ChatCompletionStream()
        gen = getattr(stream, method)(source)
        with pytest.raises(TypeError, match=words):
            if method.startswith("a"):
                asyncio.run(gen.__anext__())
            else:
                next(gen)


def test_tap_yields_the_same_objects_and_builds_no_items() -> None:
    """``tap`` hands back each chunk object itself, consumed (result() folds it before the
    caller sees it); the end state equals feeding. No item is built: the stream's feed() is
    never called."""
    body = BODIES[ssewire.ResponsesStream]

    class NoFeed(ssewire.ResponsesStream):
        __slots__ = ()

        def feed(self, data: Any) -> list[Any]:
            raise AssertionError("tap must not build items")

    expected = reference(ssewire.ResponsesStream, body)
    for way in split_ways(body):
        chunks = [bytearray(p) for p in way.pieces]
        stream = NoFeed()
        seen = []
        for chunk in stream.tap(iter(chunks)):
            seen.append(chunk)
        assert all(a is b for a, b in zip(seen, chunks)) and len(seen) == len(chunks)
        assert snapshot(stream, [])[1:] == expected[1:], way.name


def test_tap_consumes_before_yielding() -> None:
    """When the caller gets a chunk, the stream already holds it (a proxy may read result()
    mid-relay)."""
    body = BODIES[ssewire.ChatCompletionStream]
    stream = ssewire.ChatCompletionStream()
    for chunk in stream.tap([body]):
        assert stream.done is True
        assert not stream.errors


# --- early stop and failing sources --------------------------------------------------------


def _pieces(body: bytes, n: int = 8) -> list[bytes]:
    size = -(-len(body) // n)
    return [body[i : i + size] for i in range(0, len(body), size)]


@pytest.mark.parametrize("method", ["iter", "tap"])
def test_stopping_early_leaves_the_stream_open(method: str) -> None:
    """``break`` (and the generator closed or collected): finish() is not called; the stream
    holds exactly the chunks read so far (all of the last one), and goes on from there."""
    body = BODIES[ssewire.ChatCompletionStream]
    pieces = _pieces(body)
    stream = ssewire.ChatCompletionStream()
    source = iter(pieces)
    gen = getattr(stream, method)(source)
    next(gen)  # one item, or one chunk: the first chunk was read either way
    gen.close()
    del gen
    gc.collect()
    prefix = ssewire.ChatCompletionStream()
    prefix.consume(pieces[0])
    assert not stream.done and stream.error is None
    assert stream.result() == prefix.result()
    # The rest of the source, read through the same stream, completes it.
    list(getattr(stream, method)(source))
    assert snapshot(stream, [])[1:] == reference(ssewire.ChatCompletionStream, body)[1:]


@pytest.mark.parametrize("method", ["iter", "tap", "aiter", "atap"])
def test_a_failing_source_propagates_and_the_stream_keeps_what_it_had(
    method: str,
) -> None:
    body = BODIES[ssewire.MessagesStream]
    pieces = _pieces(body)
    boom = ConnectionResetError("peer went away")

    def failing() -> Iterator[bytes]:
        yield from pieces[:3]
        raise boom

    async def afailing() -> AsyncIterator[bytes]:
        for p in pieces[:3]:
            yield p
        raise boom

    stream = ssewire.MessagesStream()
    with pytest.raises(ConnectionResetError) as caught:
        if method.startswith("a"):

            async def drain() -> None:
                async for _ in getattr(stream, method)(afailing()):
                    pass

            asyncio.run(drain())
        else:
            for _ in getattr(stream, method)(failing()):
                pass
    assert caught.value is boom
    prefix = ssewire.MessagesStream()
    prefix.consume(b"".join(pieces[:3]))
    assert not stream.done and stream.error is None  # not finished
    assert stream.result() == prefix.result()
    stream.finish()
    assert stream.error is not None and stream.error.code == "incomplete_stream"


@pytest.mark.parametrize("cls", list(BODIES), ids=lambda c: c.__name__)
def test_aiter_and_atap_over_async_and_sync_sources(cls: Any) -> None:
    body = BODIES[cls]
    expected = reference(cls, body)
    pieces = _pieces(body, 13)

    async def source() -> AsyncIterator[bytes]:
        for p in pieces:
            await asyncio.sleep(0)
            yield p

    async def main() -> None:
        for make in (source, lambda: pieces, lambda: body):
            stream = cls()
            items = [i async for i in stream.aiter(make())]
            assert snapshot(stream, items) == expected
            stream = cls()
            relayed = [c async for c in stream.atap(make())]
            assert b"".join(relayed) == body
            assert snapshot(stream, [])[1:] == expected[1:]

    asyncio.run(asyncio.wait_for(main(), 30))


def test_too_large_event_propagates_from_iter() -> None:
    """A limit the user set still raises (the error model lists it), from iter and tap."""
    body = ssewire.encode_event("x" * 5000)
    for method in ("iter", "tap"):
        stream = ssewire.ChatCompletionStream(max_event_size=1000)
        with pytest.raises(ssewire.EventTooLargeError):
            list(getattr(stream, method)([body]))


def test_result_keys_are_shared_strings_and_read_as_json_loads_reads_them() -> None:
    """The keys of results and raw JSON parts are one string object per short key on a thread
    (a dict of known keys costs no new string): the same object from result to result, while
    a key with escapes, a long key and many distinct keys still read as ``json.loads`` reads
    them."""
    import json


    def result(extra: dict[str, Any]) -> tuple[dict[str, Any], str]:
        text = json.dumps({"type": "response.completed", "response": {"id": "r", "output": [], "extra": extra}})
        s = ssewire.ResponsesStream()
        s.consume(f"event: response.completed\ndata: {text}\n\n".encode())
        return s.result(), text

    (a, _), (b, _) = result({"n": 1}), result({"n": 2})
    assert list(a) == list(b) and all(x is y for x, y in zip(a, b))
    odd = {"k\u00e9y": 1, "x" * 60: 2, **{f"key{n}": n for n in range(600)}}
    flooded, text = result(odd)
    assert flooded["extra"] == json.loads(text)["response"]["extra"]
    assert "k\u00e9y" in flooded["extra"] and "x" * 60 in flooded["extra"]
