"""The clients of the end-to-end benchmark (``bench_endtoend.py``, ``endtoend_table.py``): many
concurrent LLM streams read over loopback from the paced server of ``_endtoend_server.py`` (a
separate process), and the client process's CPU time per event.

One *load* is ``n`` concurrent streams of one dialect and write pattern read by one client path
(``ROWS``): threads for the sync clients (one shared client object, one thread per stream),
tasks in one asyncio loop for the async ones. Its cost is ``time.process_time()`` of the whole
client process (every thread; the server's process is not counted) from just before the first
request to the last stream's result, divided by the SSE events received (``[DONE]`` and pings
included). Client objects (httpx / aiohttp / requests sessions, SDK objects) are made before
the clock starts and closed after it stops; the TCP connections (one per stream, the server
closes it) are inside.

Every path does the same job: read the stream to its end and produce the final text and token
usage, item by item as a user would (ssewire: ``iter`` / ``aiter`` / ``on_item`` over the items,
then ``result()``; httpx-sse: ``json.loads`` of every data and the dict accumulator of
``_peers.py``; the SDKs: every chunk / event object, text collected). Each result is checked
against ssewire's result of the whole body; a wrong or missing result fails the load.

``StreamProtocol`` sends its request on a raw asyncio socket to the server's HTTP port and
reads the HTTP/1.1 response itself (status, headers, chunked body: in Rust), as a user of the
"raw socket bytes" path would.

Cost: every load is linear in ``n`` times the body size; every wait is bounded (``timeout``).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

import _peers
import aiohttp
import anthropic
import httpx
import httpx_sse
import openai
import requests
import requests.adapters
import ssewire
from _endtoend_server import PATTERNS, Server, bodies

__all__ = ["ROWS", "Load", "Row", "Server", "PATTERNS", "run_load", "reference", "events_per_stream"]

API_PATH = {"chat": "/v1/chat/completions", "messages": "/v1/messages"}
REQUEST = {
    "chat": {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    "messages": {"model": "m", "max_tokens": 1024, "stream": True,
                 "messages": [{"role": "user", "content": "hi"}]},
}  # fmt: skip
STREAMS = {"chat": ssewire.ChatCompletionStream, "messages": ssewire.MessagesStream}
ACCUMULATORS = {"chat": _peers.ChatDictAccumulator, "messages": _peers.MessageDictAccumulator}

Result = Tuple[Optional[str], Optional[int]]


# -- what every path must produce ---------------------------------------------------------


def summary(dialect: str, result: Dict[str, Any]) -> Result:
    """(final text, token count) of a final object: chat's first choice's content and
    ``total_tokens``, Messages' text blocks joined and ``output_tokens``."""
    if dialect == "chat":
        return (result["choices"][0]["message"]["content"], result["usage"]["total_tokens"])
    text = "".join(b.get("text", "") for b in result["content"] if b.get("type") == "text")
    return (text, result["usage"]["output_tokens"])


_REFERENCES: Dict[Tuple[str, int], Result] = {}


def reference(dialect: str, chunks: int) -> Result:
    """ssewire's summary of the whole body, fed at once: what every path must match."""
    key = (dialect, chunks)
    if key not in _REFERENCES:
        stream = STREAMS[dialect]()
        stream.feed(bodies(chunks)[dialect])
        stream.finish()
        assert stream.done and stream.error is None
        _REFERENCES[key] = summary(dialect, stream.result())
    return _REFERENCES[key]


def events_per_stream(dialect: str, chunks: int) -> int:
    """SSE events in one body (``[DONE]`` and pings included)."""
    parser = ssewire.SSEParser()
    return len(parser.feed(bodies(chunks)[dialect]) + parser.finish())


class Target(NamedTuple):
    """Where one load's streams come from."""

    dialect: str
    url: str  # the HTTP base: http://127.0.0.1:PORT/<dialect>/<pattern>
    raw: Tuple[str, int]  # the raw port's address
    path: str  # the request path, API path included


class Counter:
    """Reads seen by the counted (check) pass of a load; ``None`` rows do not count."""

    def __init__(self) -> None:
        self.reads = 0
        self.lock = threading.Lock()

    def wrap(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            with self.lock:
                self.reads += 1
            yield chunk

    async def awrap(self, chunks: Any) -> Any:
        async for chunk in chunks:
            self.reads += 1
            yield chunk


# -- sync paths: run(ctx, target, counter) -> Result, in one thread per stream --------------


def _ssewire_httpx_sync(client: httpx.Client, t: Target, c: Optional[Counter]) -> Result:
    stream = STREAMS[t.dialect]()
    with client.stream("POST", t.url + API_PATH[t.dialect], json=REQUEST[t.dialect]) as r:
        chunks = r.iter_bytes() if c is None else c.wrap(r.iter_bytes())
        for _item in stream.iter(chunks):
            pass
    return summary(t.dialect, stream.result())


def _ssewire_requests(session: requests.Session, t: Target, c: Optional[Counter]) -> Result:
    stream = STREAMS[t.dialect]()
    url = t.url + API_PATH[t.dialect]
    with session.post(url, json=REQUEST[t.dialect], stream=True, timeout=TIMEOUT) as r:
        chunks = r.iter_content(None) if c is None else c.wrap(r.iter_content(None))
        for _item in stream.iter(chunks):
            pass
    return summary(t.dialect, stream.result())


def _httpx_sse_sync(client: httpx.Client, t: Target, c: Optional[Counter]) -> Result:
    acc = ACCUMULATORS[t.dialect]()
    url = t.url + API_PATH[t.dialect]
    with httpx_sse.connect_sse(client, "POST", url, json=REQUEST[t.dialect]) as source:
        for event in source.iter_sse():
            if event.data == "[DONE]":
                break
            acc.add(json.loads(event.data))
    return summary(t.dialect, acc.result())


# -- async paths: await run(ctx, target, counter) -> Result, one task per stream ------------


async def _ssewire_httpx_async(client: httpx.AsyncClient, t: Target, c: Optional[Counter]) -> Result:
    stream = STREAMS[t.dialect]()
    async with client.stream("POST", t.url + API_PATH[t.dialect], json=REQUEST[t.dialect]) as r:
        chunks = r.aiter_bytes() if c is None else c.awrap(r.aiter_bytes())
        async for _item in stream.aiter(chunks):
            pass
    return summary(t.dialect, stream.result())


async def _ssewire_aiohttp(session: aiohttp.ClientSession, t: Target, c: Optional[Counter]) -> Result:
    stream = STREAMS[t.dialect]()
    async with session.post(t.url + API_PATH[t.dialect], json=REQUEST[t.dialect]) as r:
        chunks = r.content.iter_any()
        async for _item in stream.aiter(chunks if c is None else c.awrap(chunks)):
            pass
    return summary(t.dialect, stream.result())


class _CountingProtocol(ssewire.StreamProtocol):
    counter: Counter

    def data_received(self, data: bytes) -> None:
        self.counter.reads += 1
        super().data_received(data)


def _drop(item: Any) -> None:
    pass


async def _stream_protocol(_ctx: Any, t: Target, c: Optional[Counter]) -> Result:
    # A raw asyncio socket to the HTTP port: StreamProtocol sends the request and reads the
    # HTTP/1.1 response (head, chunked body) in Rust.
    host, port = t.url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    body = json.dumps(REQUEST[t.dialect]).encode()
    request = (f"POST {t.path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
               ).encode() + body  # fmt: skip
    stream = STREAMS[t.dialect]()
    cls = ssewire.StreamProtocol if c is None else _CountingProtocol
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.create_connection(
        lambda: cls(stream, on_item=_drop, request=request), host, int(port)
    )
    if c is not None:
        protocol.counter = c  # type: ignore[attr-defined]
    try:
        await protocol.wait()
    finally:
        transport.close()
    return summary(t.dialect, stream.result())


async def _httpx_sse_async(client: httpx.AsyncClient, t: Target, c: Optional[Counter]) -> Result:
    acc = ACCUMULATORS[t.dialect]()
    url = t.url + API_PATH[t.dialect]
    async with httpx_sse.aconnect_sse(client, "POST", url, json=REQUEST[t.dialect]) as source:
        async for event in source.aiter_sse():
            if event.data == "[DONE]":
                break
            acc.add(json.loads(event.data))
    return summary(t.dialect, acc.result())


async def _openai_sdk(sdk: openai.AsyncOpenAI, t: Target, c: Optional[Counter]) -> Result:
    response = await sdk.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    text: List[str] = []
    usage = None
    async for chunk in response:
        for choice in chunk.choices:
            if choice.index == 0 and choice.delta.content:
                text.append(choice.delta.content)
        if chunk.usage is not None:
            usage = chunk.usage.total_tokens
    return ("".join(text), usage)


async def _anthropic_sdk(sdk: anthropic.AsyncAnthropic, t: Target, c: Optional[Counter]) -> Result:
    response = await sdk.messages.create(
        model="m", max_tokens=1024, messages=[{"role": "user", "content": "hi"}], stream=True
    )
    text: List[str] = []
    usage = None
    async for event in response:
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            text.append(event.delta.text)
        elif event.type == "message_delta":
            usage = event.usage.output_tokens
    return ("".join(text), usage)


# -- client objects, made before the clock starts -------------------------------------------

TIMEOUT = 60.0


def _httpx_client(n: int, t: Optional[Target] = None) -> httpx.Client:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    return httpx.Client(timeout=TIMEOUT, limits=limits)


def _httpx_async_client(n: int, t: Optional[Target] = None) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    return httpx.AsyncClient(timeout=TIMEOUT, limits=limits)


def _requests_session(n: int, t: Optional[Target] = None) -> requests.Session:
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_connections=1, pool_maxsize=n)
    session.mount("http://", adapter)
    return session


def _aiohttp_session(n: int, t: Optional[Target] = None) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=n)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=TIMEOUT))


class _NoContext:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: Any) -> None:
        return None


#: The SDKs' own HTTP library (httpx2 in openai 3.x / anthropic 2.x; httpx before).
_SDK_HTTP: Any = getattr(openai._base_client, "httpx2", None) or httpx


def _sdk_http_client(n: int) -> Any:
    lib = _SDK_HTTP
    limits = lib.Limits(max_connections=n, max_keepalive_connections=n)
    return lib.AsyncClient(timeout=TIMEOUT, limits=limits)


def _openai_client(n: int, t: Target) -> Any:
    return openai.AsyncOpenAI(api_key="sk-bench", base_url=t.url + "/v1", max_retries=0,
                              http_client=_sdk_http_client(n))  # fmt: skip


def _anthropic_client(n: int, t: Target) -> Any:
    return anthropic.AsyncAnthropic(api_key="sk-bench", base_url=t.url,
                                    max_retries=0, http_client=_sdk_http_client(n))  # fmt: skip


class Row(NamedTuple):
    """One client path of the table."""

    key: str
    label: str  # the table's row label (Markdown)
    dialect: str
    mode: str  # "sync": one thread per stream; "async": one task per stream
    run: Callable[..., Any]
    make: Callable[[int, Target], Any]  # (n, target) -> the client object, a context manager
    baseline: str  # the key of the row this one is compared with
    counts: bool  # the check pass counts the client's reads


ROWS: Dict[str, Row] = {
    r.key: r
    for r in [
        Row("chat-httpx-sse-sync", "httpx-sse + `json.loads` + dict accumulator (httpx, sync, threads) — baseline",
            "chat", "sync", _httpx_sse_sync, _httpx_client, "chat-httpx-sse-sync", False),
        Row("chat-ssewire-httpx-sync", "ssewire `iter(r.iter_bytes())` (httpx, sync, threads)",
            "chat", "sync", _ssewire_httpx_sync, _httpx_client, "chat-httpx-sse-sync", True),
        Row("chat-ssewire-requests", "ssewire `iter(r.iter_content(None))` (requests, threads)",
            "chat", "sync", _ssewire_requests, _requests_session, "chat-httpx-sse-sync", True),
        Row("chat-httpx-sse-async", "httpx-sse + `json.loads` + dict accumulator (httpx, async) — baseline",
            "chat", "async", _httpx_sse_async, _httpx_async_client, "chat-httpx-sse-async", False),
        Row("chat-ssewire-httpx-async", "ssewire `aiter(r.aiter_bytes())` (httpx, async)",
            "chat", "async", _ssewire_httpx_async, _httpx_async_client, "chat-httpx-sse-async", True),
        Row("chat-ssewire-aiohttp", "ssewire `aiter(r.content.iter_any())` (aiohttp)",
            "chat", "async", _ssewire_aiohttp, _aiohttp_session, "chat-httpx-sse-async", True),
        Row("chat-ssewire-protocol", "ssewire `StreamProtocol` (raw asyncio socket, HTTP/1.1 read in Rust)",
            "chat", "async", _stream_protocol, lambda n, t: _NoContext(), "chat-httpx-sse-async", True),
        Row("chat-openai-sdk", "openai SDK `AsyncOpenAI` `stream=True` (" + _SDK_HTTP.__name__ + ", async)",
            "chat", "async", _openai_sdk, _openai_client, "chat-httpx-sse-async", False),
        Row("messages-httpx-sse-async", "httpx-sse + `json.loads` + dict accumulator (httpx, async) — baseline",
            "messages", "async", _httpx_sse_async, _httpx_async_client, "messages-httpx-sse-async", False),
        Row("messages-ssewire-httpx-async", "ssewire `aiter(r.aiter_bytes())` (httpx, async)",
            "messages", "async", _ssewire_httpx_async, _httpx_async_client, "messages-httpx-sse-async", True),
        Row("messages-anthropic-sdk", "anthropic SDK `AsyncAnthropic` `stream=True` (" + _SDK_HTTP.__name__ + ", async)",
            "messages", "async", _anthropic_sdk, _anthropic_client, "messages-httpx-sse-async", False),
    ]
}  # fmt: skip


# -- one load -------------------------------------------------------------------------------


class Load(NamedTuple):
    cpu: float  # process CPU seconds of the client side
    wall: float
    events: int  # SSE events received, all streams
    reads: Optional[int]  # client reads (the counted pass only)


def _target(server: Server, dialect: str, pattern: str) -> Target:
    return Target(dialect, server.url(dialect, pattern), server.raw_address(),
                  f"/{dialect}/{pattern}{API_PATH[dialect]}")  # fmt: skip


def _run_sync(row: Row, target: Target, n: int, counter: Optional[Counter], timeout: float) -> Any:
    results: List[Any] = [None] * n

    def one(i: int) -> None:
        try:
            results[i] = row.run(ctx, target, counter)
        except BaseException as exc:  # reported below, with the row
            results[i] = exc

    with row.make(n, target) as ctx:
        threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
        wall0, cpu0 = time.perf_counter(), time.process_time()
        for thread in threads:
            thread.start()
        deadline = wall0 + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.perf_counter()))
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    if any(thread.is_alive() for thread in threads):
        raise TimeoutError(f"{row.key}: streams still running after {timeout} s")
    return cpu, wall, results


def _run_async(row: Row, target: Target, n: int, counter: Optional[Counter], timeout: float) -> Any:
    async def main() -> Any:
        async with row.make(n, target) as ctx:
            calls = [row.run(ctx, target, counter) for _ in range(n)]
            wall0, cpu0 = time.perf_counter(), time.process_time()
            results = await asyncio.wait_for(
                asyncio.gather(*calls, return_exceptions=True), timeout
            )
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        return cpu, wall, results

    return asyncio.run(main())


def run_load(
    row: Row, server: Server, pattern: str, n: int, *, count: bool = False, timeout: float = 300.0
) -> Load:
    """``n`` concurrent streams of ``row.dialect`` cut by ``pattern``, read by ``row``; every
    result checked. ``count``: also count the client's reads (rows with ``counts``; the
    counting wrapper costs CPU, so a counted load is not a timed one)."""
    target = _target(server, row.dialect, pattern)
    counter = Counter() if count and row.counts else None
    runner = _run_sync if row.mode == "sync" else _run_async
    cpu, wall, results = runner(row, target, n, counter, timeout)
    want = reference(row.dialect, server.chunks)
    for got in results:
        if isinstance(got, BaseException):
            raise AssertionError(f"{row.key} / {pattern}: a stream failed: {got!r}") from got
        assert got == want, f"{row.key} / {pattern}: {got!r} != {want!r}"
    events = n * events_per_stream(row.dialect, server.chunks)
    return Load(cpu, wall, events, None if counter is None else counter.reads)
