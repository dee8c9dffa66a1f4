"""The Redis (or Valkey) store of the virtual keys' counts (API.md section 15): the same
rules as ``_keys.MemoryStore``, each step one atomic script (one round trip), so that every
worker of every gateway host sharing one Redis admits no more than the limits. Gateways keep no
count of their own.

Counters are ``ssewire:k:<name>:<counter>:<window start>`` integers, each expiring a minute
after its window ends."""

from __future__ import annotations

from typing import Any, List, Optional

from ssewire.gateway._keys import Decision, Key, Ticket, retry_after, window_start

#: Admission: KEYS are the key's counters in this window; ARGV holds, per counter, its limit,
#: its increment and its time to live. Refused (nothing counted) when a count is at its limit:
#: returns the 1-based index of the first full counter; else 0 after counting.
ADMIT = """
for i = 1, #KEYS do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if n >= tonumber(ARGV[3 * i - 2]) then return i end
end
for i = 1, #KEYS do
  redis.call('INCRBY', KEYS[i], ARGV[3 * i - 1])
  redis.call('EXPIRE', KEYS[i], ARGV[3 * i])
end
return 0
"""

#: The end charge: ARGV[1] added to each counter of KEYS (the answer's tokens less the
#: estimate), none below 0; a counter whose window is gone is left gone.
CHARGE = """
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local n = redis.call('INCRBY', KEYS[i], ARGV[1])
    if n < 0 then redis.call('SET', KEYS[i], 0, 'KEEPTTL') end
  end
end
return 0
"""

#: A counter outlives its window by this many seconds (clocks of a fleet differ a little).
SLACK = 60


def counter_key(name: str, counter: str, start: int) -> str:
    return f"ssewire:k:{name}:{counter}:{start}"


class RedisStore:
    """Counts in Redis through ``redis.asyncio``; ``url`` as ``redis.asyncio.from_url`` reads
    it (``redis://host:6379/0``). A store that cannot be reached raises ``StoreError``."""

    def __init__(self, url: str) -> None:
        import redis.asyncio

        self.client: Any = redis.asyncio.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self._admit = self.client.register_script(ADMIT)
        self._charge = self.client.register_script(CHARGE)

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
            ttl = max(1, int(start + length - now) + SLACK)
            args += [limit, 1 if counter == "rpm" else estimate, ttl]
            if counter != "rpm":
                ticket.windows.append((counter, start))
        try:
            full = int(await self._admit(keys=keys, args=args))
        except Exception as e:  # redis.RedisError, OSError, timeouts
            raise StoreError(str(e)) from e
        if full:
            counter, _, length = limits[full - 1]
            start = window_start(now, length)
            return Decision(full=counter, retry_after=retry_after(now, start, length))
        return Decision(ticket=ticket)

    async def charge(self, ticket: Ticket, tokens: Optional[int]) -> None:
        if ticket.charged:
            return
        ticket.charged = True
        if tokens is None or not ticket.windows or tokens == ticket.estimate:
            return
        keys = [counter_key(ticket.key, counter, start) for counter, start in ticket.windows]
        try:
            await self._charge(keys=keys, args=[tokens - ticket.estimate])
        except Exception as e:
            raise StoreError(str(e)) from e

    async def close(self) -> None:
        await self.client.aclose()


class StoreError(Exception):
    """The store could not be reached (``on_store_error`` decides: 503, or serve)."""
