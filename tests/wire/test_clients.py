"""Real HTTP clients over a real socket on 127.0.0.1, read through ``iter`` / ``aiter`` /
``tap`` / ``atap`` / ``StreamProtocol``, give what feeding the whole body gives.

The server (``support/loopback.py``) writes every body in random-sized, delayed writes, cut inside
multi-byte UTF-8 characters and between CR and LF. Each client reads every capture of
``tests/data`` (all three dialects, errors, malformed frames and cut-off streams included) and
generated streams (``support.streams``, with non-ASCII text, tool calls, reasoning, and a CRLF
copy). The reference for each body is a fresh stream fed the whole body then finished: the
items (every attribute), ``result()``, ``done`` and ``error`` must be equal; ``tap`` relays
every chunk the client gave, the same objects, and the relayed bytes equal the body. The
captures' own expected ``result`` / ``done`` (hand-derived JSON) are checked as well.

Bounded: one request per (client, body, way), every request with a 10 s timeout and every
async run under ``asyncio.wait_for``; only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any, Callable, NamedTuple, Optional

import aiohttp
import httpx
import pytest
import requests
import ssewire
from support import paths
from support import streams as _streams
from support.dialects import error_fields, snap
from support.loopback import LoopbackServer, split_points

DATA = paths.DATA
TIMEOUT = 10.0
RUN_TIMEOUT = 120.0
#: Longest pause before each write: short, so ~100 bodies per client stay quick; the writes
#: still reach the client as separate reads (checked by the test below).
DELAY = 0.0001
STREAMS = {
    "chat": ssewire.ChatCompletionStream,
    "messages": ssewire.MessagesStream,
    "responses": ssewire.ResponsesStream,
    "sse": ssewire.SSEParser,
}
REQUEST = {
    "model": "m",
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}


class Case(NamedTuple):
    dialect: str
    name: str
    body: bytes
    #: The capture's hand-derived expectation (``tests/data/*/NAME.json``), if any.
    spec: Optional[dict]


def _sse_body() -> bytes:
    events = [
        ("héllo\r\nwörld", None, "1", 3000),
        ("日本語のテキスト" * 20, "delta", None, None),
        ("", "ping", "", None),
        (" leading space\rlone CR", "message", "2", None),
    ]
    body = b": comment\r\n" + b"".join(
        ssewire.encode_event(d, event=e, id=i, retry=r) for d, e, i, r in events
    )
    return body.replace(b"\n\n", b"\r\n\r\n") + b"data: unfinished"


def cases() -> list[Case]:
    out = []
    for dialect in ("chat", "messages", "responses"):
        for path in sorted((DATA / dialect).glob("*.sse")):
            spec = json.loads(path.with_suffix(".json").read_text("utf-8"))
            out.append(Case(dialect, f"{dialect}/{path.stem}", path.read_bytes(), spec))
    chat = _streams.chat_stream(300, seed=1, tool_calls=True, reasoning=True)
    messages = _streams.messages_stream(300, seed=2, tool_use=True, thinking=True)
    responses = _streams.responses_stream(300, seed=3, tool_calls=True)
    out += [
        Case("chat", "generated chat", chat, None),
        Case("chat", "generated chat, CRLF", chat.replace(b"\n", b"\r\n"), None),
        Case("messages", "generated messages", messages, None),
        Case(
            "messages",
            "generated messages, CRLF",
            messages.replace(b"\n", b"\r\n"),
            None,
        ),
        Case("responses", "generated responses", responses, None),
        Case("sse", "encoded events, CRLF, cut", _sse_body(), None),
    ]
    return out


CASES = cases()


def state(stream: Any) -> Any:
    """What a stream holds at the end: result, done, error (``SSEParser``: its own state)."""
    if isinstance(stream, ssewire.SSEParser):
        return (stream.last_event_id, stream.pending, stream.retry)
    return (stream.result(), stream.done, error_fields(stream.error))


def reference(case: Case) -> tuple[list[Any], Any]:
    """The items and end state of the whole body fed at once."""
    stream = STREAMS[case.dialect]()
    items = stream.feed(case.body) + stream.finish()
    return snap(items), state(stream)


REFERENCE = {case.name: reference(case) for case in CASES}


def test_the_references_match_the_captures_specs() -> None:
    """Anchor: the whole-body references agree with the hand-derived expectations."""
    for case in CASES:
        if case.spec is not None:
            result, done, _error = REFERENCE[case.name][1]
            assert (result, done) == (case.spec["result"], case.spec["done"]), case.name


def test_the_cuts_reach_the_client_as_separate_reads(urls: dict[str, str]) -> None:
    """Guard: the cuts inside UTF-8 characters and between CR and LF are boundaries between
    the reads httpx hands out (TCP may merge writes under load, so most, not all)."""
    hit = total = 0
    with httpx.Client(timeout=TIMEOUT) as client:
        for i, case in enumerate(CASES):
            with client.stream("POST", urls[case.name], json=REQUEST) as r:
                ends, pos = set(), 0
                for chunk in r.iter_bytes():
                    pos += len(chunk)
                    ends.add(pos)
            body = case.body
            tricky = [
                p
                for p in split_points(body, seed=i)
                if 0x80 <= body[p] <= 0xBF or body[p - 1 : p + 1] == b"\r\n"
            ]
            total += len(tricky)
            hit += sum(p in ends for p in tricky)
    assert total > 100 and hit >= total // 2, (hit, total)


@pytest.fixture(scope="module")
def server() -> Any:
    with LoopbackServer(timeout=TIMEOUT) as srv:
        yield srv


FRAMINGS = ("chunked", "close", "length")


@pytest.fixture(scope="module")
def urls(server: LoopbackServer) -> dict[str, str]:
    """One route per case, the framings taking turns."""
    return {
        case.name: server.url(
            server.add(case.body, framing=FRAMINGS[i % 3], seed=i, delay=DELAY)
        )
        + "/v1/x"
        for i, case in enumerate(CASES)
    }


class Recorder:
    """Wraps a chunk source and keeps the objects it handed out (to check ``tap`` relays the
    very same objects)."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.given: list[Any] = []

    def __iter__(self) -> Any:
        for chunk in self.source:
            self.given.append(chunk)
            yield chunk

    async def __aiter__(self) -> Any:
        async for chunk in self.source:
            self.given.append(chunk)
            yield chunk


def check_read(case: Case, stream: Any, items: list[Any]) -> None:
    assert (snap(items), state(stream)) == REFERENCE[case.name], case.name


def check_tap(case: Case, stream: Any, relayed: list[Any], recorder: Recorder) -> None:
    assert len(relayed) == len(recorder.given), case.name
    assert all(a is b for a, b in zip(relayed, recorder.given)), case.name
    assert b"".join(relayed) == case.body, case.name
    assert state(stream) == REFERENCE[case.name][1], case.name


TAPPING = [case for case in CASES if case.dialect != "sse"]


# --- sync clients ----------------------------------------------------------------------------


def _httpx_chunks(client: httpx.Client, url: str, use: Callable[[Any], Any]) -> Any:
    with client.stream("POST", url, json=REQUEST) as r:
        return use(r.iter_bytes())


def _requests_chunks(
    session: requests.Session, url: str, use: Callable[[Any], Any]
) -> Any:
    with session.post(url, json=REQUEST, stream=True, timeout=TIMEOUT) as r:
        return use(r.iter_content(None))


def _urllib_file(_: Any, url: str, use: Callable[[Any], Any]) -> Any:
    # ``http.client.HTTPResponse`` is a binary file object: read in blocks, not lines.
    req = urllib.request.Request(url, data=json.dumps(REQUEST).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
        return use(r)


SYNC_CLIENTS = {
    "httpx": (lambda: httpx.Client(timeout=TIMEOUT), _httpx_chunks),
    "requests": (requests.Session, _requests_chunks),
    "urllib file object": (lambda: None, _urllib_file),
}


@pytest.mark.parametrize("client_name", list(SYNC_CLIENTS))
def test_sync_clients_iter(client_name: str, urls: dict[str, str]) -> None:
    make, read = SYNC_CLIENTS[client_name]
    client = make()
    for case in CASES:
        stream = STREAMS[case.dialect]()
        items = read(client, urls[case.name], lambda chunks: list(stream.iter(chunks)))
        check_read(case, stream, items)


@pytest.mark.parametrize("client_name", ["httpx", "requests"])
def test_sync_clients_tap(client_name: str, urls: dict[str, str]) -> None:
    make, read = SYNC_CLIENTS[client_name]
    client = make()
    for case in TAPPING:
        stream = STREAMS[case.dialect]()

        def relay(chunks: Any) -> tuple[list[Any], Recorder]:
            recorder = Recorder(chunks)
            return list(stream.tap(recorder)), recorder

        relayed, recorder = read(client, urls[case.name], relay)
        check_tap(case, stream, relayed, recorder)


# --- async clients ---------------------------------------------------------------------------


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, RUN_TIMEOUT))


async def _collect(aiterator: Any) -> list[Any]:
    return [x async for x in aiterator]


async def _httpx_async(urls: dict[str, str], tap: bool) -> None:
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        for case in TAPPING if tap else CASES:
            stream = STREAMS[case.dialect]()
            async with client.stream("POST", urls[case.name], json=REQUEST) as r:
                if tap:
                    recorder = Recorder(r.aiter_bytes())
                    check_tap(
                        case, stream, await _collect(stream.atap(recorder)), recorder
                    )
                else:
                    check_read(
                        case, stream, await _collect(stream.aiter(r.aiter_bytes()))
                    )


async def _aiohttp(urls: dict[str, str], tap: bool) -> None:
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        for i, case in enumerate(TAPPING if tap else CASES):
            stream = STREAMS[case.dialect]()
            async with session.post(urls[case.name], json=REQUEST) as r:
                # Both of aiohttp's chunk iterators, taking turns.
                source = r.content.iter_any() if i % 2 else r.content.iter_chunked(37)
                if tap:
                    recorder = Recorder(source)
                    check_tap(
                        case, stream, await _collect(stream.atap(recorder)), recorder
                    )
                else:
                    check_read(case, stream, await _collect(stream.aiter(source)))


@pytest.mark.parametrize("tap", [False, True], ids=["aiter", "atap"])
def test_httpx_async(tap: bool, urls: dict[str, str]) -> None:
    run(_httpx_async(urls, tap))


@pytest.mark.parametrize("tap", [False, True], ids=["aiter", "atap"])
def test_aiohttp(tap: bool, urls: dict[str, str]) -> None:
    run(_aiohttp(urls, tap))


# --- raw asyncio sockets ---------------------------------------------------------------------


async def _raw(server: LoopbackServer, consume: bool) -> None:
    loop = asyncio.get_running_loop()
    for i, case in enumerate(CASES):
        # "raw": the server answers with the body itself, no HTTP head.
        prefix = server.add(case.body, framing="raw", seed=1000 + i, delay=DELAY)
        request = f"GET {prefix} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        stream = STREAMS[case.dialect]()
        items: list[Any] = []
        on_item = None if consume else items.append
        _, protocol = await loop.create_connection(
            lambda: ssewire.StreamProtocol(stream, on_item, request=request, http=False),
            "127.0.0.1",
            server.port,
        )
        assert await asyncio.wait_for(protocol.wait(), TIMEOUT) is stream
        if consume:  # nothing built; the end state is the same
            assert items == [] and state(stream) == REFERENCE[case.name][1], case.name
        else:
            check_read(case, stream, items)


@pytest.mark.parametrize("consume", [False, True], ids=["items", "consume"])
def test_raw_asyncio_stream_protocol(consume: bool, server: LoopbackServer) -> None:
    run(_raw(server, consume))


# --- the source fails mid-stream -------------------------------------------------------------


def test_a_dropped_connection_propagates_and_the_stream_keeps_what_it_read(
    server: LoopbackServer,
) -> None:
    """The server stops mid-body: the client's error comes out of ``iter`` / ``tap``
    unchanged; ``finish()`` was not called (no ``incomplete_stream`` yet); ``result()`` holds
    what arrived, which is what feeding the bytes that arrived gives."""
    body = _streams.chat_stream(200, seed=5)
    cut = len(body) // 2
    url = server.url(server.add(body, truncate=cut)) + "/v1/x"
    expected = ssewire.ChatCompletionStream()
    expected.consume(body[:cut])
    with httpx.Client(timeout=TIMEOUT) as client:
        for method in ("iter", "tap"):
            stream = ssewire.ChatCompletionStream()
            with pytest.raises(httpx.RemoteProtocolError):
                with client.stream("POST", url, json=REQUEST) as r:
                    for _ in getattr(stream, method)(r.iter_bytes()):
                        pass
            assert not stream.done and stream.error is None, method
            assert stream.result() == expected.result(), method
            assert stream.result()["choices"][0]["message"]["content"], method
            stream.finish()
            assert stream.error is not None and stream.error.code == "incomplete_stream"


def test_stream_protocol_failures(server: LoopbackServer) -> None:
    """A limit hit in ``feed`` or an error in ``on_item`` aborts the connection and comes out
    of ``wait()``; a body that ends normally resolves to the stream."""
    body = ssewire.encode_event("x" * 4000) + _streams.chat_stream(20, seed=4)
    prefix = server.add(body, framing="raw", delay=DELAY)
    request = f"GET {prefix} HTTP/1.1\r\n\r\n".encode()

    class Boom(Exception):
        pass

    def explode(item: Any) -> None:
        raise Boom

    async def connect(stream: Any, on_item: Any) -> Any:
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.create_connection(
            lambda: ssewire.StreamProtocol(stream, on_item, request=request, http=False),
            "127.0.0.1",
            server.port,
        )
        try:
            return await asyncio.wait_for(protocol.wait(), TIMEOUT)
        finally:
            assert transport.is_closing()

    async def main() -> None:
        with pytest.raises(ssewire.EventTooLargeError):
            await connect(ssewire.ChatCompletionStream(max_event_size=1000), None)
        with pytest.raises(Boom):
            await connect(ssewire.ChatCompletionStream(), explode)
        stream = ssewire.ChatCompletionStream()
        assert await connect(stream, None) is stream and stream.done

    run(main())
