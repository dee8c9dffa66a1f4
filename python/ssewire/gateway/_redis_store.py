"""The Redis (or Valkey) store of the virtual keys' counts (API.md section 15): the same
rules as ``_keys.MemoryStore``, each step one atomic script (one round trip), so that every
worker of every gateway host sharing one Redis admits no more than the limits. Gateways keep no
count of their own.

Counters are ``ssewire:k:<name>:<counter>:<window start>`` integers, each expiring a minute
after its window ends."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Tuple

from ssewire.gateway._keys import Decision, Key, Ticket, refusal, window_start

#: Admission: KEYS are the key's counters in this window; ARGV holds, per counter, its limit,
#: its increment and its time to live. Refused (nothing counted) when a count is at its limit:
#: returns the full counters as bits (counter i: 2^(i-1)); else 0 after counting.
ADMIT = """
local full = 0
for i = 1, #KEYS do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if n >= tonumber(ARGV[3 * i - 2]) then full = full + 2 ^ (i - 1) end
end
if full > 0 then return full end
for i = 1, #KEYS do
  redis.call('INCRBY', KEYS[i], ARGV[3 * i - 1])
  redis.call('EXPIRE', KEYS[i], ARGV[3 * i])
end
return 0
"""

#: The end charge: ARGV[2i - 1] added to counter KEYS[i], none below 0; a counter that is not
#: there is made with time to live ARGV[2i] (the window of the end, when the answer outlived
#: the window of its admission). Redis 2.6+ (no KEEPTTL).
CHARGE = """
for i = 1, #KEYS do
  local n = redis.call('INCRBY', KEYS[i], ARGV[2 * i - 1])
  if n < 0 then redis.call('INCRBY', KEYS[i], -n) end
  if redis.call('TTL', KEYS[i]) < 0 then redis.call('EXPIRE', KEYS[i], ARGV[2 * i]) end
end
return 0
"""

#: A counter outlives its window by this many seconds (clocks of a fleet differ a little).
SLACK = 60
#: The most one store step may take, in seconds, before it counts as the store failing
#: (``on_store_error``): a Redis that does not answer costs a request this much, no more.
STEP_TIMEOUT = 2.0


def counter_key(name: str, counter: str, start: int) -> str:
    """A counter's Redis key; the key's name in braces (a cluster's hash tag: one key's
    counters share a slot, as one script needs)."""
    return f"ssewire:k:{{{name}}}:{counter}:{start}"


def redis_url(url: str) -> str:
    """``url`` as the redis client reads it: Valkey speaks Redis's protocol, so
    ``valkey://`` is ``redis://`` and ``valkeys://`` is ``rediss://`` (TLS)."""
    for scheme, same in (("valkeys://", "rediss://"), ("valkey://", "redis://")):
        if url.startswith(scheme):
            return same + url[len(scheme) :]
    return url


def carried_key(owner: str, id_: str) -> str:
    """Where a carrier waits (``carry = "store"``): by its owner (the key's name, in braces:
    a cluster's hash tag) and its short id."""
    return f"ssewire:c:{{{owner}}}:{id_}"


def ttl(now: float, start: int, length: int) -> int:
    return max(1, int(start + length - now) + SLACK)


class RedisStore:
    """Counts in Redis through ``redis.asyncio``; ``url`` as ``redis.asyncio.from_url`` reads
    it (``redis://host:6379/0``). A store that cannot be reached, or does not answer within
    ``STEP_TIMEOUT``, raises ``StoreError`` (no retries: the request does not wait for them)."""

    def __init__(self, url: str) -> None:
        self.url = redis_url(url)
        self._client: Any = None
        self._admit: Any = None
        self._charge: Any = None

    @property
    def client(self) -> Any:
        """The client, made on first use, in the event loop that uses it (redis-py's asyncio
        parts bind to the running loop; on CPython 3.9 made outside one they fail)."""
        if self._client is None:
            import redis.asyncio
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff

            self._client = redis.asyncio.from_url(
                self.url, socket_timeout=STEP_TIMEOUT, socket_connect_timeout=STEP_TIMEOUT,
                retry=Retry(NoBackoff(), 0),
            )  # fmt: skip
            self._admit = self._client.register_script(ADMIT)
            self._charge = self._client.register_script(CHARGE)
        return self._client

    async def _run(self, step: str, keys: List[str], args: List[int]) -> Any:
        """Runs the script of ``step`` (``admit`` or ``charge``): one round trip."""
        client = self.client
        script = self._admit if step == "admit" else self._charge
        try:
            return await asyncio.wait_for(script(keys=keys, args=args, client=client), STEP_TIMEOUT)
        except Exception as e:  # redis.RedisError, OSError, timeouts
            raise StoreError(str(e) or type(e).__name__) from e

    async def admit(self, key: Key, now: float, estimate: int) -> Decision:
        limits = key.limits()
        if not limits:
            return Decision(ticket=Ticket(key=key.name, estimate=estimate))
        keys: List[str] = []
        args: List[int] = []
        ticket = Ticket(key=key.name, estimate=estimate)
        for counter, limit, length in limits:
            start = window_start(now, length)
            keys.append(counter_key(key.name, counter, start))
            args += [limit, 1 if counter == "rpm" else estimate, ttl(now, start, length)]
            if counter != "rpm":
                ticket.windows.append((counter, start, length))
        full = int(await self._run("admit", keys, args))
        if full:
            return refusal(now, [(c, length) for i, (c, _, length) in enumerate(limits) if full >> i & 1])
        return Decision(ticket=ticket)

    async def charge(self, ticket: Ticket, tokens: Optional[int], now: float) -> None:
        if ticket.charged:
            return
        ticket.charged = True
        if tokens is None:
            return
        keys: List[str] = []
        args: List[int] = []
        for counter, start, length, delta in ticket.corrections(tokens, now):
            if delta:
                keys.append(counter_key(ticket.key, counter, start))
                args += [delta, ttl(now, start, length)]
        if keys:
            await self._run("charge", keys, args)

    async def keep_carried(self, pairs: List[Tuple[str, str]], ttl: int, now: float, owner: str = "") -> None:
        """Keeps each carrier under its short id and ``owner`` for ``ttl`` seconds: one round
        trip."""
        if not pairs:
            return
        pipe = self.client.pipeline(transaction=False)
        for id_, carrier in pairs:
            pipe.set(carried_key(owner, id_), carrier, ex=ttl)
        try:
            await asyncio.wait_for(pipe.execute(), STEP_TIMEOUT)
        except Exception as e:
            raise StoreError(str(e) or type(e).__name__) from e

    async def carried(self, ids: List[str], now: float, owner: str = "") -> Dict[str, str]:
        """The carriers ``owner`` kept under ``ids``: one round trip."""
        if not ids:
            return {}
        try:
            values = await asyncio.wait_for(
                self.client.mget([carried_key(owner, i) for i in ids]), STEP_TIMEOUT
            )
        except Exception as e:
            raise StoreError(str(e) or type(e).__name__) from e
        return {i: v.decode("ascii", "replace") for i, v in zip(ids, values) if v is not None}

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()


class StoreError(Exception):
    """The store could not be reached (``on_store_error`` decides: 503, or serve)."""
