"""Issue 51, first part: the Redis store of the key counts against a real redis-server on
loopback: the memory store's rules, each step one script; many concurrent admissions from two
clients (two gateways) admit exactly the limit; a stopped Redis is a ``StoreError``."""

from __future__ import annotations

import asyncio

import pytest
from ssewire.gateway._keys import Key, MemoryStore, digest_of

pytest.importorskip("redis")
from ssewire.gateway._redis_store import RedisStore, StoreError  # noqa: E402
from support.redis_server import RedisServer  # noqa: E402

K = Key(name="team-a", digest=digest_of("sk"), requests_per_minute=25, tokens_per_minute=1000)
#: Every rule at once, over a minute's end and a budget: the Redis scripts against the memory
#: store's decisions, step by step.
ALL = Key(name="team-b", digest=digest_of("sk-b"), requests_per_minute=7, tokens_per_minute=400,
          budget_tokens=2000, budget_period=3600)  # fmt: skip


def test_the_same_decisions_as_the_memory_store() -> None:
    async def run(url: str) -> None:
        redis_store, memory = RedisStore(url), MemoryStore()
        try:
            now = 1_700_000_010.0
            for i in range(30):
                a = await redis_store.admit(K, now + i / 10, 50)
                b = memory.admit(K, now + i / 10, 50)
                assert (a.ticket is None, a.full, a.retry_after) == (b.ticket is None, b.full, b.retry_after), i
                if a.ticket is not None and b.ticket is not None and i % 3 == 0:
                    await redis_store.charge(a.ticket, 10, now + i / 10)
                    memory.charge(b.ticket, 10, now + i / 10)
        finally:
            await redis_store.close()

    with RedisServer() as server:
        asyncio.run(run(server.url))


def test_every_rule_decides_as_the_memory_store_does() -> None:
    async def run(url: str) -> None:
        redis_store, memory = RedisStore(url), MemoryStore()
        try:
            now = 1_700_003_590.0  # ten seconds before a minute's and an hour's end
            held = []
            for i in range(60):
                t = now + i * 0.5
                a = await redis_store.admit(ALL, t, 40)
                b = memory.admit(ALL, t, 40)
                assert (a.ticket is None, a.full, a.retry_after) == (b.ticket is None, b.full, b.retry_after), i
                if a.ticket is not None and b.ticket is not None:
                    held.append((a.ticket, b.ticket))
                if len(held) > 2:  # answers end a second or so later, some past the window
                    ra, mb = held.pop(0)
                    spent = (i * 37) % 150
                    await redis_store.charge(ra, spent, t)
                    memory.charge(mb, spent, t)
        finally:
            await redis_store.close()

    with RedisServer() as server:
        asyncio.run(run(server.url))


def test_two_gateways_admit_exactly_the_limit_under_load() -> None:
    async def run(url: str) -> int:
        a, b = RedisStore(url), RedisStore(url)  # two processes' clients of one Redis
        try:
            now = 1_700_000_100.0
            tasks = [(a if i % 2 else b).admit(K, now, 1) for i in range(200)]
            decisions = await asyncio.gather(*tasks)
            return sum(d.ticket is not None for d in decisions)
        finally:
            await a.close()
            await b.close()

    with RedisServer() as server:
        assert asyncio.run(run(server.url)) == 25


def test_a_valkey_url_is_a_redis_url() -> None:
    """Valkey speaks Redis's protocol: ``valkey://`` reaches the same server."""
    from ssewire.gateway._redis_store import redis_url

    assert redis_url("valkeys://h:6380/1") == "rediss://h:6380/1"

    async def run(url: str) -> None:
        store = RedisStore(url)
        try:
            assert (await store.admit(K, 1_700_000_000.0, 1)).ticket is not None
        finally:
            await store.close()

    with RedisServer() as server:
        asyncio.run(run(server.url.replace("redis://", "valkey://")))


def test_a_stopped_redis_is_a_store_error() -> None:
    async def run(url: str, server: RedisServer) -> None:
        store = RedisStore(url)
        try:
            assert (await store.admit(K, 1_700_000_000.0, 1)).ticket is not None
            server.stop()
            with pytest.raises(StoreError):
                await store.admit(K, 1_700_000_001.0, 1)
        finally:
            await store.close()

    with RedisServer() as server:
        asyncio.run(run(server.url, server))
