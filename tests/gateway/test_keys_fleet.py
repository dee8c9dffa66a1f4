"""Issue 51: ``[keys]`` across a fleet, with a real ``redis-server`` on loopback. Two gateway
processes (``ssewire gateway --config``) sharing one Redis admit exactly a key's limit under
concurrent load; Redis stopped mid-run is 503 (``on_store_error = "closed"``) or served
(``"open"``), and a stream in flight when it stops ends whole. Every wait is bounded; only
127.0.0.1 is contacted."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import aiohttp
import pytest

pytest.importorskip("redis")
from ssewire.gateway import _config as config  # noqa: E402
from support.clock import minute_ahead  # noqa: E402
from support.failing_upstream import FailingUpstream  # noqa: E402
from support.gateway_app import Gateway  # noqa: E402
from support.gateway_process import Process, free_port  # noqa: E402
from support.redis_server import RedisServer  # noqa: E402
from support.sdk_loops import _post  # noqa: E402
from support.strict_upstream import ANSWER, KEY, StrictUpstream  # noqa: E402

TEAM = "sk-team-fleet-0123456789"
TIMEOUT = 60.0
LIMIT = 20


def body() -> Dict[str, Any]:
    return {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Weather in Paris?"}]}


def write_config(path: Path, port: int, upstream: str, store: str) -> None:
    path.write_text(f"""
[server]
port = {port}
workers = 1

[[upstream]]
name = "up"
url = "{upstream}"
dialect = "chat"
keys_env = ["FLEET_UPSTREAM_KEY"]

[[route]]
model = "m"
targets = ["up"]

[keys]
store = "{store}"

[[keys.key]]
name = "team-a"
key_sha256 = "{hashlib.sha256(TEAM.encode()).hexdigest()}"
requests_per_minute = {LIMIT}
""")


def test_two_gateway_processes_on_one_redis_admit_exactly_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLEET_UPSTREAM_KEY", KEY)
    with RedisServer() as redis, StrictUpstream("chat") as up:
        gateways: List[Process] = []
        try:
            ports = []
            for n in range(2):
                port = free_port()
                write_config(tmp_path / f"gw{n}.toml", port, up.url(), redis.url)
                gateways.append(Process(tmp_path / f"gw{n}.toml"))
                ports.append(port)

            async def burst() -> List[Tuple[int, str, bytes]]:
                async def one(port: int) -> Tuple[int, str, bytes]:
                    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
                        async with s.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body(),
                                          headers={"authorization": f"Bearer {TEAM}"}) as r:  # fmt: skip
                            return r.status, r.headers.get("retry-after", ""), await r.read()

                calls = [one(ports[i % 2]) for i in range(3 * LIMIT)]
                return await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)

            minute_ahead(25)  # the burst, in one window
            got = asyncio.run(burst())
            for gw in gateways:
                gw.wait(lambda gw=gw: sum(1 for x in gw.lines if "status" in x) >= 3 * LIMIT // 2)
        finally:
            codes = [gw.stop() for gw in gateways]
    assert codes == [0, 0]
    statuses = [status for status, _, _ in got]
    assert statuses.count(200) == LIMIT and statuses.count(429) == 2 * LIMIT, statuses
    for status, retry, data in got:
        if status == 200:
            assert ANSWER.split()[0].encode() in data or b"get_weather" in data
        else:
            assert 1 <= int(retry) <= 60 and json.loads(data)["error"]["message"].startswith("the key 'team-a'")
    assert len(up.requests) == LIMIT and up.violations == []
    # Each process answered its half (which of them admitted is a race), and their log lines
    # name the key, never its text.
    lines = [line for gw in gateways for line in gw.lines]
    assert [len([x for x in gw.lines if "status" in x]) for gw in gateways] == [3 * LIMIT // 2] * 2
    assert {x.get("key") for x in lines if "status" in x} == {"team-a"}
    assert TEAM not in json.dumps(lines)


def cfg(url: str, store: str, on_store_error: str) -> config.Config:
    key = {"name": "team-a", "key_sha256": hashlib.sha256(TEAM.encode()).hexdigest(), "requests_per_minute": 1000}
    c = config.parse({
        "upstream": [{"name": "up", "url": url, "dialect": "chat"}],
        "route": [{"model": "*", "targets": ["up"]}],
        "keys": {"store": store, "on_store_error": on_store_error, "key": [key]},
    })  # fmt: skip
    return config.Config(c.server, (config.Upstream("up", url, "chat", (KEY,)),), c.routes, c.retry,
                         c.breaker, None, c.keys)  # fmt: skip


@pytest.mark.parametrize("on_store_error", ["closed", "open"])
def test_redis_stopped_mid_run(on_store_error: str) -> None:
    """A stream in flight when Redis stops ends whole (its end charge is lost, and logged);
    the next request is 503 in the client's shape (closed) or served (open)."""
    auth = {"authorization": f"Bearer {TEAM}"}
    with RedisServer() as redis, FailingUpstream("chat", [None, "slow"]) as up:
        gw = Gateway(cfg(up.url(), redis.url, on_store_error))
        try:
            assert _post(gw, "chat", body(), headers=auth)[0] == 200
            in_flight: List[Tuple[int, bytes, Dict[str, str]]] = []
            reader = threading.Thread(target=lambda: in_flight.append(_post(gw, "chat", body(), headers=auth)))
            reader.start()
            deadline = time.monotonic() + TIMEOUT
            while len(up.requests) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            redis.stop()
            reader.join(TIMEOUT)
            after = _post(gw, "chat", body(), headers=auth)
            messages = _post(gw, "messages", {"model": "m", "max_tokens": 10, "stream": True,
                                              "messages": [{"role": "user", "content": "hi"}]},
                             headers={"x-api-key": TEAM, "anthropic-version": "2023-06-01"})  # fmt: skip
        finally:
            gw.close()
    [(status, data, _)] = in_flight
    assert status == 200 and data.endswith(b"data: [DONE]\n\n")
    if on_store_error == "closed":
        assert after[0] == 503 and "store" in json.loads(after[1])["error"]["message"]
        assert messages[0] == 503 and json.loads(messages[1])["type"] == "error"  # the Messages shape
        assert len(up.requests) == 2
    else:
        assert after[0] == 200 and messages[0] == 200
        assert len(up.requests) == 4
    assert any("store_error" in r for r in gw.records)


def test_the_redis_store_costs_a_request_two_round_trips() -> None:
    """Admission is one script call and the end charge another; nothing else reaches Redis
    (counted by Redis itself: the calls clients sent, not what the scripts run inside)."""
    import redis as redis_py

    def sent(port: int) -> Dict[str, int]:
        client = redis_py.Redis(host="127.0.0.1", port=port)
        try:
            return {k: int(v["calls"]) for k, v in client.info("commandstats").items()}
        finally:
            client.close()

    auth = {"authorization": f"Bearer {TEAM}"}
    with RedisServer() as redis, StrictUpstream("chat") as up:
        c = cfg(up.url(), redis.url, "closed")
        limited = config.KeysConfig(c.keys.store, c.keys.on_store_error, tuple(  # type: ignore[union-attr]
            config._keys.Key(k.name, k.digest, k.models, requests_per_minute=1000, tokens_per_minute=10**9,
                             budget_tokens=10**12) for k in c.keys.keys))  # type: ignore[union-attr]  # fmt: skip
        gw = Gateway(config.Config(c.server, c.upstreams, c.routes, c.retry, c.breaker, None, limited))
        try:
            assert _post(gw, "chat", body(), headers=auth)[0] == 200  # scripts loaded, a connection open
            time.sleep(0.5)
            before = sent(redis.port)
            for _ in range(10):
                assert _post(gw, "chat", body(), headers=auth)[0] == 200
            deadline = time.monotonic() + TIMEOUT
            while sent(redis.port).get("cmdstat_evalsha", 0) - before.get("cmdstat_evalsha", 0) < 20:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            after = sent(redis.port)
        finally:
            gw.close()
    by_gateway = {k: after[k] - before.get(k, 0) for k in after
                  if k not in ("cmdstat_get", "cmdstat_incrby", "cmdstat_expire", "cmdstat_ttl", "cmdstat_info",
                               "cmdstat_hello", "cmdstat_client|setinfo") and after[k] != before.get(k, 0)}  # fmt: skip
    assert by_gateway == {"cmdstat_evalsha": 20}, by_gateway
