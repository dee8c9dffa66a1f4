"""Issue 46: ``ssewire gateway --config`` as a process: ``workers = 2`` serve one port (both
serve), SIGHUP reloads the file in every worker (a bad file keeps the running config),
SIGTERM drains (new connections refused, the stream in flight ends whole, exit 0), and
``/metrics`` is the sum over the workers. Real processes, loopback only, every wait bounded."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
import urllib.request
from pathlib import Path
from typing import List

import pytest
from support.failing_upstream import FailingUpstream
from support.gateway_process import TIMEOUT, Process, free_port
from support.strict_upstream import ANSWER


def write_config(path: Path, port: int, upstream: str, model: str, extra: str = "") -> None:
    path.write_text(f"""
[server]
port = {port}
workers = 2
drain_timeout = 20
{extra}
[[upstream]]
name = "up"
url = "{upstream}"
dialect = "chat"

[[route]]
model = "fast"
targets = [{{ upstream = "up", model = "{model}" }}]
""")


def ask(port: int, stream: bool = False) -> str:
    body = json.dumps({"model": "fast", "stream": stream, "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body,
                                     headers={"content-type": "application/json", "connection": "close"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=TIMEOUT) as r:
        text = r.read().decode()
    if stream:
        return text
    return str(json.loads(text)["choices"][0]["message"]["content"])


def test_two_workers_serve_one_port_and_reload_on_sighup(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "gateway.toml"
    with FailingUpstream("chat") as up:
        write_config(config, port, up.url(), "model-one")
        gw = Process(config)
        try:
            for _ in range(40):
                assert ask(port) == ANSWER
            gw.wait(lambda: len(gw.lines) >= 40)
            pids = {line["pid"] for line in gw.lines}
            assert len(pids) == 2 and gw.proc.pid not in pids  # both workers served
            assert {r["body"]["model"] for r in up.requests} == {"model-one"}
            write_config(config, port, up.url(), "model-two")
            gw.proc.send_signal(signal.SIGHUP)
            gw.wait(lambda: sum(1 for x in gw.lines if x.get("event") == "reload" and x.get("ok")) == 2)
            before = len(up.requests)
            for _ in range(10):
                assert ask(port) == ANSWER
            assert {r["body"]["model"] for r in up.requests[before:]} == {"model-two"}
            config.write_text(config.read_text().replace('dialect = "chat"', 'dialect = "chat"\nbogus = 1'))
            gw.proc.send_signal(signal.SIGHUP)
            gw.wait(lambda: sum(1 for x in gw.lines if x.get("event") == "reload" and "error" in x) == 2)
            refused = [x["error"] for x in gw.lines if x.get("event") == "reload" and "error" in x]
            assert all("upstream.bogus: unknown key" in e for e in refused)
            before = len(up.requests)
            assert ask(port) == ANSWER  # the running config stays
            assert up.requests[before]["body"]["model"] == "model-two"
        finally:
            assert gw.stop() == 0


def test_sigterm_drains_the_stream_in_flight_and_refuses_new_connections(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "gateway.toml"
    with FailingUpstream("chat", ["slow"]) as up:
        write_config(config, port, up.url(), "m")
        gw = Process(config)
        got: List[str] = []
        reader = threading.Thread(target=lambda: got.append(ask(port, stream=True)), daemon=True)
        reader.start()
        gw.wait(lambda: len(up.requests) == 1)
        gw.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + TIMEOUT
        refused = False
        while time.monotonic() < deadline and not refused:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                time.sleep(0.02)
            except OSError:
                refused = True
        assert refused
        assert gw.proc.wait(TIMEOUT) == 0
        reader.join(TIMEOUT)
        assert got and "data: [DONE]" in got[0] and ANSWER.split()[0] in got[0]  # whole, to its end


def test_metrics_are_the_sum_over_the_workers(tmp_path: Path) -> None:
    pytest.importorskip("prometheus_client")
    pytest.importorskip("opentelemetry.exporter.prometheus")
    port = free_port()
    config = tmp_path / "gateway.toml"
    with FailingUpstream("chat") as up:
        write_config(config, port, up.url(), "m", extra="metrics = true")
        gw = Process(config)
        try:
            for _ in range(30):
                assert ask(port) == ANSWER
            gw.wait(lambda: len(gw.lines) >= 30)
            assert len({line["pid"] for line in gw.lines}) == 2
            for _ in range(4):  # whichever worker is scraped, the count is the fleet's
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=TIMEOUT) as r:
                    text = r.read().decode()
                counts = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                          if line.startswith("gen_ai_client_operation_duration_seconds_count")]  # fmt: skip
                assert sum(counts) == 30, text[:2000]
        finally:
            assert gw.stop() == 0
