"""The gateway's cost under load (issue 26): CPU of the gateway *process* per event it relays or
translates, for many concurrent streams over loopback.

Three parts, two processes:

- this process runs the **upstream** (an asyncio server on 127.0.0.1 that answers every POST
  with one recorded-shape chat stream, each event in its own write: ``pace`` seconds apart
  (``paced``, as a model sends them: the gateway reads one event per read) or back to back
  (``unpaced``: the kernel joins them, reads carry many events)), and the **clients** (raw
  asyncio connections reading the gateway's responses with ``ssewire.StreamProtocol``; each
  one's final message is checked against the upstream's body);
- the **gateway** is a child process (``python -m ssewire.gateway``, or ``_plain_proxy.py``, a plain
  aiohttp proxy that does not parse), and its CPU (all its threads, user + system, from
  ``/proc/<pid>/task/*/schedstat``, nanoseconds) is read before and after the load.

Linux only (``/proc``). Every wait is bounded (``TIMEOUT``); only 127.0.0.1 is bound or
contacted. Used by ``bench_gateway.py`` (pytest-benchmark) and ``gateway_table.py`` (a table).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import ssewire

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import _providers  # noqa: E402

TIMEOUT = 300.0
HOST = "127.0.0.1"
#: The stream every upstream response carries: OpenAI's chat shape, text as models write it.
SHAPE = "chat openai"

#: mode -> (command after the interpreter, client path, client request body).
MODES: Dict[str, Tuple[List[str], str, Dict[str, Any]]] = {
    "plain aiohttp proxy (no parsing)": (
        [str(HERE / "_plain_proxy.py")], "/v1/chat/completions",
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "gateway, relaying chat": (
        ["-m", "ssewire.gateway"], "/v1/chat/completions",
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ),
    # Issue 46: the same relay through a configuration of three upstreams (the route's first
    # target answers; two more behind it, retries and breakers on), routed by the model.
    "gateway, relaying chat, 3-upstream config with failover": (
        ["-m", "ssewire.gateway", "--config"], "/v1/chat/completions",
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ),
    # ... and the same config served by two worker processes (the CPU counted is every
    # process's: the parent's and both workers').
    "gateway, relaying chat, 3-upstream config, workers = 2": (
        ["-m", "ssewire.gateway", "--config"], "/v1/chat/completions",
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ),
    # Issue 51: the same relay with virtual keys (a key with a request rate, a token rate and a
    # budget, all far above the load) counted in Redis: admission and the end charge per request.
    "gateway, relaying chat, [keys] on Redis (3 limits)": (
        ["-m", "ssewire.gateway", "--config"], "/v1/chat/completions",
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "gateway, translating chat -> Messages": (
        ["-m", "ssewire.gateway", "--upstream-dialect", "chat"], "/v1/messages",
        {"model": "m", "stream": True, "max_tokens": 4096,
         "messages": [{"role": "user", "content": "hi"}]},
    ),
    # Metering's cost (issue 38): the same two, recording the OpenTelemetry GenAI metrics and
    # a span per request (`--metrics`; no OTLP endpoint set, so nothing is exported).
    "gateway, relaying chat, --metrics": (
        ["-m", "ssewire.gateway", "--metrics"], "/v1/chat/completions",
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "gateway, translating chat -> Messages, --metrics": (
        ["-m", "ssewire.gateway", "--upstream-dialect", "chat", "--metrics"], "/v1/messages",
        {"model": "m", "stream": True, "max_tokens": 4096,
         "messages": [{"role": "user", "content": "hi"}]},
    ),
}  # fmt: skip


def workers_of(mode: str) -> int:
    return 2 if mode.endswith("workers = 2") else 1


#: The key the clients hold (``authorization: Bearer``).
CLIENT_KEY = "sk-bench"


def keys_config(store: str) -> str:
    """``[keys]``: the clients' key, with every kind of limit, none reached by the load."""
    import hashlib

    digest = hashlib.sha256(CLIENT_KEY.encode()).hexdigest()
    return f"""
[keys]
store = "{store}"
[[keys.key]]
name = "bench"
key_sha256 = "{digest}"
models = ["m"]
requests_per_minute = 1000000
tokens_per_minute = 1000000000000
budget_tokens = 10000000000000
budget_period = "30d"
"""


def fleet_config(url: str, workers: int = 1, store: Optional[str] = None) -> str:
    """Three chat upstreams (the first is the load's upstream) and routes that reach them by
    model, with retries and breakers: what a gateway in front of several providers reads;
    ``[keys]`` in ``store`` when given."""
    ups = f"[server]\nworkers = {workers}\n" + "".join(f"""
[[upstream]]
name = "{name}"
url = "{url}"
dialect = "chat"
""" for name in ("primary", "secondary", "tertiary"))
    return ups + """
[[route]]
model = "gpt-*"
targets = ["secondary"]
[[route]]
model = "m"
targets = ["primary", "secondary", "tertiary"]
[retry]
attempts = 2
[breaker]
failures = 5
""" + (keys_config(store) if store is not None else "")


def body(events: int = 1004, seed: int = 0) -> bytes:
    """A chat stream of about ``events`` events in the shape OpenAI sends."""
    paragraphs = max(1, events * 37 // 1004)
    return _providers.corpus(SHAPE, seed, paragraphs)


def events_of(stream: bytes) -> List[bytes]:
    """The stream's events, each with its blank line (one write each)."""
    return [e + b"\n\n" for e in stream.split(b"\n\n") if e.strip()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def process_cpu_ns(pid: int) -> int:
    """CPU time of every thread of ``pid`` and of its child processes so far (user + system),
    in nanoseconds."""
    total = 0
    task = Path(f"/proc/{pid}/task")
    for t in task.iterdir():
        try:
            total += int((t / "schedstat").read_text().split()[0])
            children = (t / "children").read_text().split()
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended between the listing and the read
        total += sum(process_cpu_ns(int(child)) for child in children)
    return total


def requests_by_pid(log: Path, start: int) -> Dict[int, int]:
    """How many requests each worker logged, from byte ``start`` of the gateway's log."""
    counts: Dict[int, int] = {}
    with log.open("rb") as f:
        f.seek(start)
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and "pid" in record and "status" in record:
                counts[record["pid"]] = counts.get(record["pid"], 0) + 1
    return counts


class Upstream(asyncio.Protocol):
    """One upstream connection: reads requests (keep-alive), answers each with the stream."""

    def __init__(self, events: List[bytes], pace: float) -> None:
        self.events = events
        self.pace = pace
        self.buffer = b""
        self.transport: Optional[asyncio.Transport] = None
        self.busy = False
        self.requests = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > 1 << 20:
            assert self.transport is not None
            self.transport.close()
            return
        self._next()

    def _next(self) -> None:
        if self.busy:
            return
        head_end = self.buffer.find(b"\r\n\r\n")
        if head_end < 0:
            return
        head = self.buffer[:head_end].decode("latin-1").lower()
        length = 0
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip() == "content-length":
                length = int(value)
        if len(self.buffer) < head_end + 4 + length:
            return
        self.buffer = self.buffer[head_end + 4 + length:]
        self.busy = True
        self.requests += 1
        asyncio.get_running_loop().create_task(self._answer())

    async def _answer(self) -> None:
        t = self.transport
        assert t is not None
        t.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n")  # fmt: skip
        pace = self.pace
        # A random start, so the streams' events do not arrive in lockstep.
        await asyncio.sleep(random.random() * pace)
        for event in self.events:
            if t.is_closing():
                return
            t.write(b"%x\r\n%s\r\n" % (len(event), event))
            if pace:
                await asyncio.sleep(pace)
        t.write(b"0\r\n\r\n")
        self.busy = False
        self._next()


def final_text(dialect: str, result: Dict[str, Any]) -> str:
    if dialect == "chat":
        return str(result["choices"][0]["message"]["content"])
    return "".join(b.get("text", "") for b in result["content"] if b.get("type") == "text")


async def _client(port: int, path: str, request: Dict[str, Any], dialect: str) -> str:
    payload = json.dumps(request).encode()
    head = (f"POST {path} HTTP/1.1\r\nhost: {HOST}:{port}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(payload)}\r\nauthorization: Bearer {CLIENT_KEY}\r\n"
            "anthropic-version: 2023-06-01\r\n\r\n").encode()  # fmt: skip
    stream = ssewire.MessagesStream() if dialect == "messages" else ssewire.ChatCompletionStream()
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(
        lambda: ssewire.StreamProtocol(stream, request=head + payload), HOST, port
    )
    await protocol.wait()
    assert stream.error is None, stream.error
    return final_text(dialect, stream.result())


async def _wait_listening(port: int, proc: "subprocess.Popen[bytes]", seconds: float = 60) -> None:
    """Returns once ``proc`` accepts connections on ``port``; raises if it exits first (its
    stderr's end said) or does not listen within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
            raise RuntimeError(f"the process exited with {proc.returncode}: {err[-2000:]}")
        try:
            _, w = await asyncio.open_connection(HOST, port)
            w.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError(f"the process did not listen within {seconds:g} s")


async def run(mode: str, *, streams: int = 50, events: int = 1004, pace: float = 0.005,
              rounds: int = 3, loop: str = "auto") -> Dict[str, Any]:  # fmt: skip
    """Runs ``rounds`` loads of ``streams`` concurrent streams through a fresh gateway of
    ``mode``; returns the best round's gateway CPU per event (µs) and the figures behind it."""
    command, path, request = MODES[mode]
    stream = body(events)
    chunks = events_of(stream)
    dialect = "messages" if path.endswith("/messages") else "chat"
    want = final_text("chat", ssewire.accumulate(stream, "chat"))
    running = asyncio.get_running_loop()
    server = await running.create_server(lambda: Upstream(chunks, pace), HOST, 0)
    up_port = server.sockets[0].getsockname()[1]
    port = free_port()
    scratch = Path(tempfile.mkdtemp())
    log = scratch / "gateway.log"
    redis = None
    if "Redis" in mode:  # a redis-server of this run, on loopback
        sys.path.insert(0, str(ROOT / "tests"))
        from support.redis_server import RedisServer

        redis = RedisServer()
    if command[-1] == "--config":
        config = scratch / "gateway.toml"
        store = redis.url if redis is not None else None
        config.write_text(fleet_config(f"http://{HOST}:{up_port}", workers_of(mode), store))
        argv = [sys.executable, *command, str(config), "--host", HOST, "--port", str(port), "--loop", loop]
    else:
        argv = [sys.executable, *command, "--upstream", f"http://{HOST}:{up_port}",
                "--host", HOST, "--port", str(port), "--loop", loop]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.PIPE)
    try:
        await _wait_listening(port, proc)
        # A warm-up stream (imports, first connections), not counted.
        assert await asyncio.wait_for(_client(port, path, request, dialect), TIMEOUT) == want
        spent: List[float] = []
        walls: List[float] = []
        log_start = log.stat().st_size
        per_round: List[float] = []
        for _ in range(rounds):
            counted = redis_commands(redis)
            before, t0 = process_cpu_ns(proc.pid), time.monotonic()
            calls = [_client(port, path, request, dialect) for _ in range(streams)]
            texts = await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)
            spent.append(process_cpu_ns(proc.pid) - before)
            walls.append(time.monotonic() - t0)
            if redis is not None:
                await asyncio.sleep(0.5)  # the end charges run beside the answers' ends
                per_round.append((redis_commands(redis) - counted - MEASURING) / streams)
            assert all(t == want for t in texts), mode
        n = streams * len(chunks)
        best = min(spent)
        served = requests_by_pid(log, log_start)
        figures = {"mode": mode, "loop": loop, "pace_s": pace, "streams": streams,
                   "events_per_stream": len(chunks), "events": n,
                   "cpu_us_per_event": best / n / 1e3, "rounds_cpu_s": [s / 1e9 for s in spent],
                   "wall_s": min(walls), "requests_by_worker": sorted(served.values())}  # fmt: skip
        if redis is not None:  # what the key store costs a request, in Redis commands (round trips)
            figures["redis_commands_per_request"] = min(per_round)
        return figures
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate(timeout=30)
        server.close()
        await server.wait_closed()
        if redis is not None:
            redis.stop()
        if err and b"Traceback" in err:
            sys.stderr.write(err.decode("utf-8", "replace")[-4000:])


#: The commands one ``redis_commands`` call adds itself (its connection's and its INFO).
MEASURING = 0
#: What the gateway's scripts run inside Redis: not round trips (``total_commands_processed``
#: would count them).
IN_SCRIPTS = {"cmdstat_get", "cmdstat_incrby", "cmdstat_expire", "cmdstat_ttl"}


def redis_commands(redis: Any) -> int:
    """The commands clients have sent ``redis`` so far, each a round trip (a script step,
    ``EVALSHA``, is one; what it runs inside is not counted; 0 without a Redis). Opening a
    connection counts too, so the best round (connections already open) is the figure.
    ``MEASURING`` is set from two calls in a row, the first time."""
    global MEASURING
    if redis is None:
        return 0
    if not MEASURING:
        first = _sent(redis.port)
        MEASURING = _sent(redis.port) - first
    return _sent(redis.port)


def _sent(port: int) -> int:
    import redis as redis_py

    client = redis_py.Redis(host=HOST, port=port)
    try:
        stats = client.info("commandstats")
        return sum(int(v["calls"]) for k, v in stats.items() if k not in IN_SCRIPTS)
    finally:
        client.close()


def measure(mode: str, **options: Any) -> Dict[str, Any]:
    """``run`` in a fresh event loop of this process."""
    return asyncio.run(run(mode, **options))


def have_proc() -> bool:
    return os.path.isdir(f"/proc/{os.getpid()}/task")
