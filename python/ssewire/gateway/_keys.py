"""Virtual keys, rate limits and budgets (API.md section 15), sans-IO: which key a client
holds, what it may ask for, and whether a request is admitted now, decided over counts a store
keeps (``MemoryStore`` here; the Redis store keeps the same counts with one script per step).

Rules (section 15):
- a key is known by the SHA-256 of its text (the gateway never needs the clear key);
- a key's ``models`` are globs over the model the client asked for (none: every route), read
  as routes read theirs (``*`` and ``?``, the rest literal);
- windows are fixed and aligned to the Unix epoch: the UTC minute for the per-minute limits,
  the budget period's hour, day or 30-day span;
- a request is admitted while every count is below its limit (the request that crosses a
  limit is served; the next is refused, ``retry_after`` whole seconds, at least 1, until the
  window that is full ends);
- requests are counted when admitted; tokens are charged an estimate at admission and
  corrected at the end, in the window of the admission while it lasts; an answer that outlives
  that window has what it spent past the estimate charged in the window of its end (a stream
  that runs across the minute's end is still counted); an answer that ends without usage keeps
  the estimate;
- a refusal's ``retry_after`` is until the last of the full windows ends.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from ssewire.gateway._paths import glob

#: The budget periods, in seconds.
PERIODS = {"1h": 3600, "1d": 86400, "30d": 30 * 86400}
#: The per-minute window, in seconds.
MINUTE = 60
#: The clock of the windows (seconds since the epoch): the gateway reads it at admission and
#: at the end charge (the tests hold it inside one window).
clock: Callable[[], float] = time.time
#: The most carriers one process keeps (``carry = "store"`` on the memory store).
MAX_CARRIERS = 100_000


@dataclass(frozen=True)
class Key:
    """One virtual key of the configuration."""

    name: str
    #: The SHA-256 digest of the key's text.
    digest: bytes
    #: Globs over the model the client asked for (empty: every route).
    models: Tuple[str, ...] = ()
    requests_per_minute: Optional[int] = None
    tokens_per_minute: Optional[int] = None
    budget_tokens: Optional[int] = None
    #: The budget window's length in seconds (a value of ``PERIODS``).
    budget_period: int = PERIODS["30d"]

    def allows(self, model: str) -> bool:
        """Whether the key may ask for ``model`` (its globs, matched case-sensitively)."""
        return not self.models or any(glob(pattern).match(model) for pattern in self.models)

    def limits(self) -> List[Tuple[str, int, int]]:
        """The key's counters that have a limit: (counter, limit, window length in seconds)."""
        out = []
        if self.requests_per_minute is not None:
            out.append(("rpm", self.requests_per_minute, MINUTE))
        if self.tokens_per_minute is not None:
            out.append(("tpm", self.tokens_per_minute, MINUTE))
        if self.budget_tokens is not None:
            out.append(("budget", self.budget_tokens, self.budget_period))
        return out


def digest_of(text: str) -> bytes:
    """The SHA-256 digest a key is known by."""
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).digest()


class Keys:
    """The configuration's keys, found by the digest of what a client sends."""

    def __init__(self, keys: List[Key]) -> None:
        self.keys = list(keys)
        self._by_digest: Dict[bytes, Key] = {k.digest: k for k in keys}

    def identify(self, given: Optional[str]) -> Optional[Key]:
        """The key a client's credential is, or None (no credential, or an unknown one)."""
        if not given:
            return None
        digest = digest_of(given)
        found = self._by_digest.get(digest)
        # The lookup is by digest (no timing leak of the clear key); the comparison is kept
        # constant-time all the same.
        return found if found is not None and hmac.compare_digest(found.digest, digest) else None


def window_start(now: float, length: int) -> int:
    """The start of the fixed window of ``length`` seconds that holds ``now`` (epoch-aligned)."""
    return int(now // length) * length


@dataclass
class Ticket:
    """What an admitted request was counted as: the windows it counted in and its estimate,
    for the charge at its end."""

    key: str
    estimate: int
    #: (counter, window start, window length) of each token counter it was charged in.
    windows: List[Tuple[str, int, int]] = field(default_factory=list)
    charged: bool = False

    def corrections(self, tokens: int, now: float) -> List[Tuple[str, int, int, int]]:
        """Where the end charge goes: (counter, window start, window length, tokens to add)
        per token counter: the difference in the admission's window while it lasts, else what
        was spent past the estimate in the window of now (nothing when less was spent)."""
        delta = tokens - self.estimate
        out = []
        for counter, start, length in self.windows:
            current = window_start(now, length)
            if current == start:
                out.append((counter, start, length, delta))
            elif delta > 0:
                out.append((counter, current, length, delta))
        return out


@dataclass(frozen=True)
class Decision:
    """An admission: ``ticket`` when admitted, else the counter that is full and
    ``retry_after`` (whole seconds, at least 1)."""

    ticket: Optional[Ticket] = None
    full: Optional[str] = None
    retry_after: int = 0


def retry_after(now: float, start: int, length: int) -> int:
    """Whole seconds until the window ends, at least 1."""
    return max(1, math.ceil(start + length - now))


def refusal(now: float, full: List[Tuple[str, int]]) -> Decision:
    """The refusal for the full counters ``full`` ((counter, window length), in the key's
    order): the first names it, and it lasts until the last full window ends."""
    wait = max(retry_after(now, window_start(now, length), length) for _, length in full)
    return Decision(full=full[0][0], retry_after=wait)


class MemoryStore:
    """The counts of one process. Each step (``admit``, ``charge``) runs whole with no await in
    it, so the asyncio workers of one process see it as atomic. Old windows are dropped as new
    ones open (memory: a few counters per key)."""

    def __init__(self) -> None:
        self.counts: Dict[Tuple[str, str, int], int] = {}
        #: Carriers by (owner, short id), with the time they are let go, oldest first.
        self.carriers: Dict[Tuple[str, str], Tuple[str, float]] = {}

    def _get(self, key: str, counter: str, start: int) -> int:
        return self.counts.get((key, counter, start), 0)

    def _add(self, key: str, counter: str, start: int, n: int) -> None:
        slot = (key, counter, start)
        self.counts[slot] = max(0, self.counts.get(slot, 0) + n)

    def _forget_before(self, key: str, counter: str, start: int) -> None:
        for slot in [s for s in self.counts if s[0] == key and s[1] == counter and s[2] < start]:
            del self.counts[slot]

    def admit(self, key: Key, now: float, estimate: int) -> Decision:
        """Counts the request and charges its estimate when every count is below its limit;
        else refuses it (nothing counted)."""
        limits = key.limits()
        full = [(counter, length) for counter, limit, length in limits
                if self._get(key.name, counter, window_start(now, length)) >= limit]  # fmt: skip
        if full:
            return refusal(now, full)
        ticket = Ticket(key=key.name, estimate=estimate)
        for counter, _, length in limits:
            start = window_start(now, length)
            self._forget_before(key.name, counter, start)
            if counter == "rpm":
                self._add(key.name, counter, start, 1)
            else:
                self._add(key.name, counter, start, estimate)
                ticket.windows.append((counter, start, length))
        return Decision(ticket=ticket)

    def keep_carried(self, pairs: List[Tuple[str, str]], ttl: int, now: float, owner: str = "") -> None:
        """Keeps each carrier under its short id and ``owner`` (the key's name) for ``ttl``
        seconds (``carry = "store"``). Kept in the order they came: the ones whose time is up
        are let go from the front, and past ``MAX_CARRIERS`` the oldest go."""
        carriers = self.carriers
        for slot, (_, until) in list(itertools.islice(carriers.items(), len(pairs) + 1)):
            if until > now:
                break
            del carriers[slot]
        for id_, carrier in pairs:
            carriers.pop((owner, id_), None)
            carriers[(owner, id_)] = (carrier, now + ttl)
        while len(carriers) > MAX_CARRIERS:
            del carriers[next(iter(carriers))]

    def carried(self, ids: List[str], now: float, owner: str = "") -> Dict[str, str]:
        """The carriers ``owner`` kept under ``ids`` (those still kept)."""
        kept = ((i, self.carriers.get((owner, i))) for i in ids)
        return {i: c[0] for i, c in kept if c is not None and c[1] > now}

    def charge(self, ticket: Ticket, tokens: Optional[int], now: float) -> None:
        """The answer ended: its token count corrects the estimate (``Ticket.corrections``;
        ``None``: no usage came, the estimate stays). Once per ticket."""
        if ticket.charged or tokens is None:
            ticket.charged = True
            return
        ticket.charged = True
        for counter, start, _, delta in ticket.corrections(tokens, now):
            self._add(ticket.key, counter, start, delta)


def estimate_tokens(body: bytes) -> int:
    """A request's tokens estimated from its body's size (about four bytes a token), at least 1."""
    return max(1, len(body) // 4)
