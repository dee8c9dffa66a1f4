"""The examples in ``examples/`` and the gateway (``ssewire.gateway``) run for real: the gateway
relays streams from a real upstream server (``tests/support/loopback.py``, on 127.0.0.1) to real
clients, byte for byte, and logs what the upstream sent; each client example reads a stream
through ``iter`` / ``aiter``. Loopback only; every wait has a timeout and every loop a count.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
import sys
from collections import Counter
from typing import Any, Dict, Iterator, List, Tuple

import aiohttp
import pytest
import ssewire
import ssewire.gateway as gateway_module
from aiohttp import web
from support import streams as _streams
from support.gateway_app import PATHS, TIMEOUT, Gateway
from support.loopback import LoopbackServer
from support.paths import DATA, EXAMPLES

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason="examples/ not in this tree")


def example(name: str) -> Any:
    """Imports ``examples/<name>.py`` as a module."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def upstream() -> Iterator[LoopbackServer]:
    with LoopbackServer(timeout=TIMEOUT) as server:
        yield server


@pytest.fixture(scope="module")
def gateway(upstream: LoopbackServer) -> Iterator[Gateway]:
    g = Gateway(upstream.url())
    try:
        yield g
    finally:
        g.close()


def bodies() -> List[Tuple[str, bytes]]:
    """(dialect, body): a capture and generated streams of every dialect, all complete."""
    out = [
        ("chat", (DATA / "chat" / "basic_stop.sse").read_bytes()),
        ("messages", (DATA / "messages" / "text_basic.sse").read_bytes()),
        ("responses", (DATA / "responses" / "text_message.sse").read_bytes()),
    ]
    for seed in range(2):
        out += [
            ("chat", _streams.chat_stream(n_chunks=60, seed=seed, tool_calls=bool(seed))),
            ("messages", _streams.messages_stream(n_chunks=60, seed=seed, tool_use=bool(seed))),
            ("responses", _streams.responses_stream(n_chunks=60, seed=seed)),
        ]
    return out


def expected_record(dialect: str, body: bytes) -> Dict[str, Any]:
    """What the gateway must log for ``body``: its record of the whole body read at once."""
    stream = {"chat": ssewire.ChatCompletionStream, "messages": ssewire.MessagesStream,
              "responses": ssewire.ResponsesStream}[dialect]()  # fmt: skip
    stream.feed(body)
    stream.finish()
    return gateway_module.record(dialect, stream)


#: The keys of ``gateway_module.record``: what a stream's log line says of the stream (the
#: line also names the request: its path, model, status).
RECORD_KEYS = ("dialect", "model", "usage", "text_length", "text_start", "done",
               "client_disconnected", "error")  # fmt: skip


def key(record: Dict[str, Any]) -> str:
    return json.dumps({k: record[k] for k in RECORD_KEYS}, sort_keys=True)


async def _fetch(session: aiohttp.ClientSession, url: str) -> Tuple[int, bytes]:
    # The chat bodies end with a usage chunk: a client that gets one asked for it (the
    # gateway takes out one that was not asked for).
    body = {"stream": True, "stream_options": {"include_usage": True}}
    async with session.post(url, json=body) as r:
        return r.status, await r.read()


def test_gateway_relays_byte_for_byte_under_load(upstream: LoopbackServer, gateway: Gateway) -> None:
    """200 concurrent streams through the gateway: every client gets exactly the upstream's
    bytes, and the gateway logs, for each stream, the usage and final text the upstream sent."""
    routes = []
    for n, (dialect, body) in enumerate(bodies()):
        prefix = upstream.add(body, delay=0.0005, seed=n)
        routes.append((dialect, body, prefix))
    plan = [routes[i % len(routes)] for i in range(200)]

    async def load() -> List[Tuple[int, bytes]]:
        connector = aiohttp.TCPConnector(limit=200)
        timeout = aiohttp.ClientTimeout(total=TIMEOUT)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            calls = [_fetch(session, gateway.url(p + PATHS[d])) for d, _, p in plan]
            return await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)

    before = len(gateway.records)
    got = asyncio.run(load())
    for (dialect, body, _), (status, data) in zip(plan, got):
        assert status == 200 and data == body, dialect
    logged = gateway.records[before:]
    assert len(logged) == len(plan)
    want = Counter(key(expected_record(d, b)) for d, b, _ in plan)
    assert Counter(key(r) for r in logged) == want
    # The records carry what matters: a final text for every stream, usage where it was sent.
    assert all(r["text_length"] > 0 and r["error"] is None for r in logged)
    assert sum(1 for r in logged if r["usage"]) == sum(1 for d, b, _ in plan
                                                       if ssewire.accumulate(b, d)["usage"])  # fmt: skip


def test_gateway_relays_an_upstream_error(upstream: LoopbackServer, gateway: Gateway) -> None:
    """A JSON error body with its status is relayed as is, and logged as the stream's error."""
    body = b'{"error": {"message": "invalid x-api-key", "type": "authentication_error"}}'
    prefix = upstream.add(body, status=401, content_type="application/json", framing="length")

    async def one() -> Tuple[int, bytes]:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
            return await _fetch(s, gateway.url(prefix + "/v1/messages"))

    before = len(gateway.records)
    assert asyncio.run(one()) == (401, body)
    [record] = gateway.records[before:]
    assert record["error"]["message"] == "invalid x-api-key" and record["usage"] is None


def test_gateway_refuses_other_paths(gateway: Gateway) -> None:
    async def one() -> int:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
            async with s.post(gateway.url("/v1/embeddings"), json={}) as r:
                return r.status

    assert asyncio.run(one()) == 404


@pytest.mark.parametrize(
    ("name", "dialect"),
    [("client_httpx", "chat"), ("client_requests", "chat"),
     ("client_httpx_async", "messages"), ("client_aiohttp", "responses")],
)  # fmt: skip
@pytest.mark.parametrize("via_gateway", [False, True])
def test_client_examples(
    name: str, dialect: str, via_gateway: bool, upstream: LoopbackServer, gateway: Gateway
) -> None:
    """Each client example reads a stream (straight from the upstream, or through the gateway),
    prints its text as it arrives, and returns the same final object as the whole body."""
    body = [b for d, b in bodies() if d == dialect][-1]
    prefix = upstream.add(body, delay=0.0005)
    base = gateway.url(prefix) if via_gateway else upstream.url(prefix)
    module = example(name)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = module.run(base)
        if asyncio.iscoroutine(result):
            result = asyncio.run(asyncio.wait_for(result, TIMEOUT))
    assert result == ssewire.accumulate(body, dialect)
    text = gateway_module.final_text(dialect, result)
    assert text and text in printed.getvalue()


@pytest.mark.parametrize("argv", [["-m", "ssewire.gateway"], ["-m", "ssewire", "gateway"]])
def test_gateway_command_line_help(argv: List[str]) -> None:
    """The gateway runs as a command (``ssewire gateway``, ``python -m ssewire.gateway``)."""
    import subprocess

    out = subprocess.run([sys.executable, *argv, "--help"],
                         capture_output=True, text=True, timeout=TIMEOUT, check=True)  # fmt: skip
    for option in ("--upstream", "--upstream-dialect", "--upstream-key-env", "--client-keys-env",
                   "--pass-through-auth", "--max-body-size"):  # fmt: skip
        assert option in out.stdout


def test_gateway_embedding_example(upstream: LoopbackServer) -> None:
    """``examples/gateway.py`` builds the gateway into an application with a route of its own
    and logs through the caller's function."""
    module = example("gateway")
    body = (DATA / "chat" / "basic_stop.sse").read_bytes()
    prefix = upstream.add(body)
    lines: List[Dict[str, Any]] = []
    app = module.build(upstream.url(prefix), lines.append)

    async def run() -> Tuple[int, bytes, int]:
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
                async with s.get(f"http://127.0.0.1:{port}/healthz") as r:
                    health = r.status
                async with s.post(f"http://127.0.0.1:{port}/v1/chat/completions", json={"stream": True}) as r:
                    return r.status, await r.read(), health
        finally:
            await runner.cleanup()

    status, got, health = asyncio.run(run())
    assert (status, got, health) == (200, body, 200)
    assert [line["text_length"] for line in lines] == [len(ssewire.accumulate(body, "chat")["choices"][0]["message"]["content"])]
