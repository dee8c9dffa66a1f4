"""Virtual keys, rate limits and budgets (API.md section 15), sans-IO: which key a client
holds, what it may ask for, and whether a request is admitted now, decided over counts a store
keeps (``MemoryStore`` here; the Redis store keeps the same counts with one script per step).

Rules (section 15):
- a key is known by the SHA-256 of its text (the gateway never needs the clear key);
- a key's ``models`` are globs over the model the client asked for (none: every route);
- windows are fixed and aligned to the Unix epoch: the UTC minute for the per-minute limits,
  the budget period's hour, day or 30-day span;
- a request is admitted while every count is below its limit (the request that crosses a
  limit is served; the next is refused, ``retry_after`` whole seconds, at least 1, until the
  window that is full ends);
- requests are counted when admitted; tokens are charged an estimate at admission and
  corrected at the end (into the windows of the admission: a window's count is what its
  requests cost); an answer that ends without usage keeps the estimate.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

#: The budget periods, in seconds.
PERIODS = {"1h": 3600, "1d": 86400, "30d": 30 * 86400}
#: The per-minute window, in seconds.
MINUTE = 60


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
        return not self.models or any(fnmatch.fnmatchcase(model, glob) for glob in self.models)

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
    #: (counter, window start) of each token counter it was charged in.
    windows: List[Tuple[str, int]] = field(default_factory=list)
    charged: bool = False


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


class MemoryStore:
    """The counts of one process. Each step (``admit``, ``charge``) runs whole with no await in
    it, so the asyncio workers of one process see it as atomic. Old windows are dropped as new
    ones open (memory: a few counters per key)."""

    def __init__(self) -> None:
        self.counts: Dict[Tuple[str, str, int], int] = {}

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
        for counter, limit, length in limits:
            start = window_start(now, length)
            if self._get(key.name, counter, start) >= limit:
                return Decision(full=counter, retry_after=retry_after(now, start, length))
        ticket = Ticket(key=key.name, estimate=estimate)
        for counter, _, length in limits:
            start = window_start(now, length)
            self._forget_before(key.name, counter, start)
            if counter == "rpm":
                self._add(key.name, counter, start, 1)
            else:
                self._add(key.name, counter, start, estimate)
                ticket.windows.append((counter, start))
        return Decision(ticket=ticket)

    def charge(self, ticket: Ticket, tokens: Optional[int]) -> None:
        """The answer ended: its token count replaces the estimate in the windows it was
        charged in (``None``: no usage came, the estimate stays). Once per ticket."""
        if ticket.charged or tokens is None:
            ticket.charged = True
            return
        ticket.charged = True
        for counter, start in ticket.windows:
            self._add(ticket.key, counter, start, tokens - ticket.estimate)


def estimate_tokens(body: bytes) -> int:
    """A request's tokens estimated from its body's size (about four bytes a token), at least 1."""
    return max(1, len(body) // 4)
