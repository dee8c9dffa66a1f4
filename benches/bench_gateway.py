"""Services over real sockets (issue 10): CPU seconds per 1,000 events for many concurrent LLM
streams read over loopback, in the process that reads them, ssewire against the ways Python
services read them today.

* ``client``: 200 concurrent chat streams (``--benchmark-disable``: 20) from a real HTTP server
  on 127.0.0.1 (``tests/support/loopback.py``), each read to its final message in one asyncio loop:
  ``ssewire`` (httpx ``aiter_bytes()`` through ``ChatCompletionStream.aiter``, then
  ``result()``); ``httpx-sse`` (``aconnect_sse`` + ``json.loads`` + the dict accumulator of
  ``_peers.py``); ``openai-sdk`` (``AsyncOpenAI(...).chat.completions.create(stream=True)``,
  every chunk iterated).
* ``gateway``: the same load through ``ssewire.gateway`` (aiohttp), metering with
  ``stream.consume()`` (``ssewire``) or with httpx-sse's line decoder + ``json.loads`` + the
  dict accumulator (``httpx-sse``); only the gateway's thread is measured.
* ``gateway cost`` (issue 26): the gateway as its own process, 50 concurrent streams of ~1,000
  events from a paced upstream (one event per read, 5 ms apart, as a model sends them) or an
  unpaced one (back to back), relaying and translating chat -> Messages, beside a plain aiohttp
  proxy that parses nothing (``_plain_proxy.py``), on uvloop and on asyncio's loop.
  ``extra_info["cpu_us_per_event"]`` is the gateway process's CPU (every thread, user +
  system) per event, the best of the rounds; the figure to read. ``_gateway_load.py`` runs it;
  ``gateway_table.py`` prints the same as a table.

Each benchmark round runs the whole load and reports the CPU time of the measured thread
(``time.thread_time`` for the client loop, the gateway thread's CPU clock for the gateway), so
the server threads' work is not counted; ``extra_info`` has CPU seconds per 1,000 events. Every peer's
results are checked against the whole body before timing. Ratios within one run only::

    pytest benches/bench_gateway.py --benchmark-enable --benchmark-timer=time.thread_time \\
        --benchmark-min-rounds=3 --benchmark-columns=min,mean
"""

from __future__ import annotations

import asyncio
import codecs
import inspect
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import _gateway_load
import _peers
import _providers
import httpx
import httpx_sse
import openai
import pytest
import ssewire
from httpx_sse._decoders import SSEDecoder
from support import streams as _streams

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "examples"))
from support.loopback import LoopbackServer  # noqa: E402

TIMEOUT = 120.0
N_CHUNKS = 300  # ~330 events per stream
#: What the clients ask: a stream, with its usage (the gateway takes out a usage chunk a
#: client did not ask for).
REQUEST = {"stream": True, "stream_options": {"include_usage": True}}


def _streams_count(config: Any) -> int:
    from conftest import is_quick

    return 20 if is_quick(config) else 200


@pytest.fixture(scope="module")
def server() -> Any:
    with LoopbackServer(timeout=TIMEOUT) as s:
        yield s


@pytest.fixture(scope="module")
def body() -> bytes:
    return _streams.chat_stream(n_chunks=N_CHUNKS, seed=7, tool_calls=True)


def _reference(body: bytes) -> Any:
    result = ssewire.accumulate(body, "chat")
    return (result["choices"][0]["message"]["content"], result["usage"]["total_tokens"])


async def _ssewire(client: httpx.AsyncClient, url: str) -> Any:
    stream = ssewire.ChatCompletionStream()
    async with client.stream("POST", url + "/v1/chat/completions", json=REQUEST) as r:
        async for _ in stream.aiter(r.aiter_bytes()):
            pass
    result = stream.result()
    return (result["choices"][0]["message"]["content"], result["usage"]["total_tokens"])


async def _httpx_sse(client: httpx.AsyncClient, url: str) -> Any:
    acc = _peers.ChatDictAccumulator()
    async with httpx_sse.aconnect_sse(
        client, "POST", url + "/v1/chat/completions", json=REQUEST
    ) as es:
        async for event in es.aiter_sse():
            if event.data == "[DONE]":
                break
            acc.add(json.loads(event.data))
    result = acc.result()
    return (result["choices"][0]["message"]["content"], result["usage"]["total_tokens"])


async def _openai(client: httpx.AsyncClient, url: str) -> Any:
    sdk = openai.AsyncOpenAI(api_key="sk-bench", base_url=url + "/v1", max_retries=0,
                             http_client=client)  # fmt: skip
    stream = await sdk.chat.completions.create(model="m", messages=[], stream=True,
                                               stream_options={"include_usage": True})
    text: List[str] = []
    usage = None
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                text.append(choice.delta.content)
        if chunk.usage is not None:
            usage = chunk.usage.total_tokens
    return ("".join(text), usage)


CLIENTS = {"ssewire": _ssewire, "httpx-sse": _httpx_sse, "openai-sdk": _openai}


def _run_clients(peer: str, url: str, n: int) -> List[Any]:
    async def load() -> List[Any]:
        limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
        async with httpx.AsyncClient(timeout=TIMEOUT, limits=limits) as client:
            calls = [CLIENTS[peer](client, url) for _ in range(n)]
            return await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)

    return asyncio.run(load())


@pytest.mark.benchmark(group="services: client, 200 concurrent chat streams")
@pytest.mark.parametrize("peer", list(CLIENTS))
def test_client(benchmark: Any, request: Any, server: Any, body: bytes, peer: str) -> None:
    n = _streams_count(request.config)
    url = server.url(server.add(body, delay=0.0005))
    want = _reference(body)
    assert all(got == want for got in _run_clients(peer, url, n)), peer
    events = n * len(ssewire.SSEParser().feed(body))
    spent: List[float] = []

    def run() -> None:
        before = time.thread_time()
        assert len(_run_clients(peer, url, n)) == n
        spent.append(time.thread_time() - before)

    benchmark.pedantic(run, rounds=3, iterations=1)
    benchmark.extra_info["events"] = events
    benchmark.extra_info["cpu_s_per_1000_events"] = round(min(spent) / events * 1e3, 6)


class _HttpxSseMeter:
    """The gateway's meter written the pure-Python way: httpx-sse's decoder over the relayed
    lines, ``json.loads`` of every data, the dict accumulator of ``_peers.py``."""

    error = None

    def __init__(self) -> None:
        self.acc = _peers.ChatDictAccumulator()
        self.decoder = SSEDecoder()
        self.text = codecs.getincrementaldecoder("utf-8")("replace")
        self.tail = ""

    def consume(self, chunk: bytes) -> None:
        lines = (self.tail + self.text.decode(chunk)).split("\n")
        self.tail = lines.pop()
        for line in lines:
            event = self.decoder.decode(line.rstrip("\r"))
            if event is not None and event.data and event.data != "[DONE]":
                self.acc.add(json.loads(event.data))

    def finish(self) -> None:
        self.consume(b"\n\n")

    def result(self) -> Dict[str, Any]:
        return self.acc.result()  # type: ignore[no-any-return]


@pytest.mark.benchmark(group="services: gateway (atap), 200 concurrent chat streams")
@pytest.mark.parametrize("peer", ["ssewire", "httpx-sse"])
def test_gateway(benchmark: Any, request: Any, server: Any, body: bytes, peer: str) -> None:
    from support.gateway_app import Gateway

    n = _streams_count(request.config)
    meters = None if peer == "ssewire" else {"chat": _HttpxSseMeter}
    gateway = Gateway(server.url(), meters=meters)
    try:
        prefix = server.add(body, delay=0.0005)
        url = gateway.url(prefix)
        assert all(got == _reference(body) for got in _run_clients("ssewire", url, n))
        assert len(gateway.records) == n
        assert all(r["usage"]["total_tokens"] == _reference(body)[1] for r in gateway.records), peer
        clock = time.pthread_getcpuclockid(gateway.thread.ident)  # type: ignore[arg-type]
        spent: List[float] = []

        def run() -> None:
            before = time.clock_gettime(clock)
            _run_clients("ssewire", url, n)
            spent.append(time.clock_gettime(clock) - before)

        benchmark.pedantic(run, rounds=3, iterations=1)
        events = n * len(ssewire.SSEParser().feed(body))
        benchmark.extra_info["events"] = events
        benchmark.extra_info["gateway_cpu_s_per_1000_events"] = round(min(spent) / events * 1e3, 6)
    finally:
        gateway.close()


GATEWAY_LOOPS = ["uvloop", "asyncio"]


@pytest.mark.benchmark(group="services: gateway cost, gateway process CPU per event")
@pytest.mark.skipif(not _gateway_load.have_proc(), reason="reads the gateway's CPU from /proc")
@pytest.mark.parametrize("loop", GATEWAY_LOOPS)
@pytest.mark.parametrize("pace", ["paced", "unpaced"])
@pytest.mark.parametrize("mode", list(_gateway_load.MODES))
def test_gateway_cost(benchmark: Any, request: Any, mode: str, pace: str, loop: str) -> None:
    quick = _is_quick(request.config)
    if loop == "uvloop":
        pytest.importorskip("uvloop")
    options = dict(streams=5, events=100, rounds=1) if quick else dict(streams=50, events=1004, rounds=3)
    figures: List[Dict[str, Any]] = []

    def run() -> None:
        figures.append(_gateway_load.measure(mode, pace=0.005 if pace == "paced" else 0.0,
                                             loop=loop, **options))  # fmt: skip

    benchmark.pedantic(run, rounds=1, iterations=1)
    best = figures[0]
    assert best["events"] > 0 and best["cpu_us_per_event"] > 0
    benchmark.extra_info.update(best)


@pytest.mark.benchmark(group="services: gateway, time added to the first byte")
def test_first_byte(benchmark: Any, request: Any) -> None:
    """Issue 46: the first byte of a streamed answer through the gateway (one upstream, and a
    three-upstream config) beside the upstream direct; ``first_byte_table.py`` adds LiteLLM's
    proxy and prints what each adds."""
    import _first_byte

    quick = _is_quick(request.config)
    options = dict(requests=20, concurrencies=(1, 5)) if quick else dict(requests=500, concurrencies=(1, 50))
    figures: List[Dict[str, Any]] = []

    def run() -> None:
        loop = _first_byte.new_loop()
        try:
            figures.append(loop.run_until_complete(_first_byte.run(**options)))
        finally:
            loop.close()

    benchmark.pedantic(run, rounds=1, iterations=1)
    for name, by_concurrency in figures[0].items():
        for concurrency, f in by_concurrency.items():
            assert f["n"] >= options["requests"] // 2 and 0 < f["p50_ms"] <= f["p99_ms"], (name, f)
            benchmark.extra_info[f"{name}, concurrency {concurrency}"] = f


def _is_quick(config: Any) -> bool:
    from conftest import is_quick

    return bool(is_quick(config))


@pytest.mark.benchmark(group="services: metering, per request")
def test_metering_record(benchmark: Any) -> None:
    """Issue 38: ``GatewayMetrics.record`` (four GenAI histograms and a client span) per
    request, with the Prometheus reader ``ssewire gateway --metrics`` makes;
    ``extra_info["us_per_event_1000"]`` spreads it over a 1,000-event stream
    (``metering_cost.py`` prints the table)."""
    pytest.importorskip("opentelemetry.sdk")
    prometheus_client = pytest.importorskip("prometheus_client")
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from opentelemetry.sdk.metrics import MeterProvider
    from ssewire.otel import GatewayMetrics

    if "registry" not in inspect.signature(PrometheusMetricReader).parameters:
        pytest.skip("this opentelemetry-exporter-prometheus has no registry= parameter")
    reader = PrometheusMetricReader(registry=prometheus_client.CollectorRegistry())
    metrics = GatewayMetrics(MeterProvider(metric_readers=[reader]))
    s = ssewire.ChatCompletionStream()
    s.consume(_providers.corpus("chat openai", paragraphs=4, events=50))
    s.finish()
    entry = {"dialect": "chat", "status": 200, "request_model": "m", "model": "gpt-4o",
             "tokens": s.usage, "timing": s.timing}  # fmt: skip
    assert entry["tokens"] and entry["timing"]
    benchmark(metrics.record, entry, 0.5)
    if benchmark.stats:
        benchmark.extra_info["us_per_event_1000"] = benchmark.stats.stats.min * 1e6 / 1000
