"""Time a gateway adds to the first byte of a streamed answer (issue 46), beside LiteLLM's proxy.

Each target is a process in front of the same upstream (a process of its own, 127.0.0.1):
``direct`` (no gateway), a plain aiohttp proxy that parses nothing (``_plain_proxy.py``, the
floor of an aiohttp gateway), ``ssewire gateway`` with one upstream (``--upstream``) and with the
three-upstream config of ``_gateway_load.fleet_config`` (retries and breakers on), and
LiteLLM's proxy (``litellm --config``, one worker, its model list pointing at the upstream)
when a ``litellm`` command is given.

A client keeps one HTTP/1.1 connection per concurrent caller and sends, one after another,
streamed chat requests in OpenAI's shape; the time counted is from the request's write to the
first read that holds a ``data:`` line of the answer, and the rest of the answer is read before
the next request. ``concurrency`` callers run at once; each target gets a warm-up round first.
The figure to read is what a target adds: its p50 / p99 minus the direct p50 / p99 of the same
run. Every wait is bounded; only 127.0.0.1 is bound or contacted (LiteLLM runs with its local
model-cost map and no telemetry).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _gateway_load as load  # noqa: E402

HOST = load.HOST
TIMEOUT = 60.0
PATH = "/v1/chat/completions"
#: The client's key, and LiteLLM's master key (it refuses to start without one).
KEY = "sk-bench-" + "5e" * 32
REQUEST = b'{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}'

LITELLM_CONFIG = """model_list:
  - model_name: m
    litellm_params:
      model: openai/m
      api_base: {url}/v1
      api_key: sk-upstream
litellm_settings:
  telemetry: false
  drop_params: true
"""


def _head(port: int, path: str) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nhost: {HOST}:{port}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(REQUEST)}\r\nauthorization: Bearer {KEY}\r\n\r\n").encode() + REQUEST  # fmt: skip


async def _caller(port: int, path: str, count: int, times: List[float]) -> None:
    """``count`` requests on one kept connection; appends each first-byte time (seconds)."""
    reader, writer = await asyncio.open_connection(HOST, port)
    message = _head(port, path)
    try:
        for _ in range(count):
            t0 = time.perf_counter()
            writer.write(message)
            seen = b""
            first: Optional[float] = None
            while True:
                data = await asyncio.wait_for(reader.read(65536), TIMEOUT)
                if not data:
                    raise RuntimeError("the connection closed mid-answer")
                seen += data
                if first is None and b"data:" in seen:
                    first = time.perf_counter() - t0
                # Chunked: the answer ends with the zero-size chunk.
                if seen.endswith(b"\r\n0\r\n\r\n"):
                    break
            if not seen.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(seen[:300].decode("latin-1"))
            assert first is not None
            times.append(first)
    finally:
        writer.close()


async def _round(port: int, path: str, requests: int, concurrency: int) -> List[float]:
    times: List[float] = []
    each = max(1, requests // concurrency)
    await asyncio.wait_for(
        asyncio.gather(*(_caller(port, path, each, times) for _ in range(concurrency))),
        TIMEOUT * 10,
    )
    return times


def percentile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _start(name: str, up: str, port: int, litellm: Optional[str], scratch: Path) -> "subprocess.Popen[bytes]":
    common = ["--host", HOST, "--port", str(port)]
    if name == "plain aiohttp proxy (no parsing)":
        argv = [sys.executable, str(Path(__file__).parent / "_plain_proxy.py"), "--upstream", up, *common]
    elif name == "ssewire gateway, one upstream":
        argv = [sys.executable, "-m", "ssewire.gateway", "--upstream", up, *common]
    elif name == "ssewire gateway, 3-upstream config":
        config = scratch / "gateway.toml"
        config.write_text(load.fleet_config(up))
        argv = [sys.executable, "-m", "ssewire.gateway", "--config", str(config), *common]
    else:
        assert litellm is not None
        config = scratch / "litellm.yaml"
        config.write_text(LITELLM_CONFIG.format(url=up))
        argv = [litellm, "--config", str(config), "--num_workers", "1", *common]
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_TELEMETRY="False",
               LITELLM_LOG="ERROR", DISABLE_SCHEMA_UPDATE="True", NO_DOCS="True",
               LITELLM_MASTER_KEY=KEY)  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


async def run(*, requests: int = 500, concurrencies: tuple = (1, 50), events: int = 20,
              litellm: Optional[str] = None) -> Dict[str, Dict[int, Dict[str, float]]]:  # fmt: skip
    """{target: {concurrency: {"p50_ms", "p99_ms", "n"}}}, every target against one upstream."""
    # The upstream is a process of its own, so that neither it nor the clients queue
    # behind the other at concurrency 50.
    up_port = load.free_port()
    upstream = subprocess.Popen([sys.executable, __file__, "upstream", str(up_port), str(events)],
                                stderr=subprocess.PIPE)  # fmt: skip
    up = f"http://{HOST}:{up_port}"
    targets = ["plain aiohttp proxy (no parsing)", "ssewire gateway, one upstream",
               "ssewire gateway, 3-upstream config"]  # fmt: skip
    if litellm:
        targets.append("LiteLLM proxy")
    out: Dict[str, Dict[int, Dict[str, float]]] = {}
    scratch = Path(tempfile.mkdtemp())
    procs: Dict[str, "subprocess.Popen[bytes]"] = {"upstream": upstream}
    ports: Dict[str, int] = {"direct": up_port}
    try:
        await _wait_listening(up_port, upstream)
        for name in targets:
            ports[name] = load.free_port()
            procs[name] = _start(name, up, ports[name], litellm, scratch)
        for name in targets:
            await _wait_listening(ports[name], procs[name])
        for concurrency in concurrencies:
            # Targets alternate in slices, so the machine's load falls on each alike.
            times: Dict[str, List[float]] = {name: [] for name in ports}
            for name in ports:  # warm-up: imports, pools, first connections
                await _round(ports[name], PATH, concurrency * 2, concurrency)
            slices = 5
            for _ in range(slices):
                for name in ports:
                    times[name] += await _round(ports[name], PATH, requests // slices, concurrency)
            for name, values in times.items():
                out.setdefault(name, {})[concurrency] = {
                    "p50_ms": percentile(values, 0.50) * 1e3,
                    "p99_ms": percentile(values, 0.99) * 1e3,
                    "n": len(values),
                }
        return out
    finally:
        for proc in procs.values():
            proc.terminate()
        for name, proc in procs.items():
            try:
                _, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate(timeout=30)
            if err and b"Traceback" in err:
                sys.stderr.write(f"-- {name}\n" + err.decode("utf-8", "replace")[-3000:])


async def _wait_listening(port: int, proc: "subprocess.Popen[bytes]") -> None:
    """``_gateway_load``'s, with LiteLLM's slower start (a minute or more on a loaded machine)
    allowed for."""
    await load._wait_listening(port, proc, seconds=180)


async def _serve_upstream(port: int, events: int) -> None:
    chunks = load.events_of(load.body(events))
    server = await asyncio.get_running_loop().create_server(
        lambda: load.Upstream(chunks, 0.0), HOST, port
    )
    async with server:
        await server.serve_forever()


def new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


if __name__ == "__main__" and sys.argv[1:2] == ["upstream"]:
    new_loop().run_until_complete(_serve_upstream(int(sys.argv[2]), int(sys.argv[3])))
