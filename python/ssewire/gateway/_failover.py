"""Which upstream serves a request, and what happens when it fails (API.md section 14), with
no I/O: a ``Plan`` is told each try's outcome and says what to do next. Tests drive it with a
clock of their own.

- ``Router``: the first route whose model pattern (exact, or a glob of ``*`` and ``?``)
  matches the client's model.
- ``Keys``: an upstream's keys used in turn; a key answered 429 rests.
- ``Breaker``: consecutive failed tries open it; after the cooldown one trial at a time.
- ``Plan``: one request's tries, target by target: retries with full-jitter backoff (at least
  the upstream's ``retry-after``, which, past ``retry_after_max``, sends it to the next target
  at once), another key at once after a 429, targets whose breaker is open skipped.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Union

from ssewire.gateway import _config as config
from ssewire.gateway._paths import glob


class Router:
    """The routes of a configuration, in file order."""

    def __init__(self, routes: tuple[config.Route, ...]) -> None:
        self.routes = [(glob(r.model), r) for r in routes]

    def match(self, model: str) -> Optional[config.Route]:
        for pattern, route in self.routes:
            if pattern.match(model):
                return route
        return None

    def models(self) -> List[str]:
        """The route models that are no glob (what ``/v1/models`` lists)."""
        return [r.model for _, r in self.routes if "*" not in r.model and "?" not in r.model]


class Keys:
    """An upstream's keys, used round robin; a key answered 429 rests until a time."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = list(keys)
        self.resting: Dict[int, float] = {}
        self.turn = 0

    def take(self, now: float) -> Optional[int]:
        """The index of the next key not resting (None: every key rests; -1: no keys at all)."""
        if not self.keys:
            return -1
        for _ in range(len(self.keys)):
            i = self.turn % len(self.keys)
            self.turn = i + 1
            if self.resting.get(i, 0.0) <= now:
                self.resting.pop(i, None)
                return i
        return None

    def rest(self, i: int, until: float) -> None:
        if i >= 0:
            self.resting[i] = max(self.resting.get(i, 0.0), until)


class Breaker:
    """Closed, open (skipped until the cooldown ends) or half-open (one trial at a time)."""

    def __init__(self, failures: int, cooldown: float) -> None:
        self.limit, self.cooldown = failures, cooldown
        self.failures = 0
        self.opened: Optional[float] = None
        self.trial = False

    def state(self, now: float) -> str:
        if self.opened is None:
            return "closed"
        return "open" if now < self.opened + self.cooldown else "half-open"

    def allow(self, now: float) -> bool:
        """May a try go now? In half-open, the one that may becomes the trial."""
        state = self.state(now)
        if state == "closed":
            return True
        if state == "open" or self.trial:
            return False
        self.trial = True
        return True

    def succeeded(self) -> None:
        self.failures, self.opened, self.trial = 0, None, False

    def failed(self, now: float) -> None:
        self.failures += 1
        if self.opened is not None or (self.limit and self.failures >= self.limit):
            self.opened = now  # a failed trial opens it again for a whole cooldown
        self.trial = False

    def ended(self) -> None:
        """A trial that neither succeeded nor failed (the client left): the next may try."""
        self.trial = False


class Upstream:
    """An upstream's state in one worker: its configuration, keys and breaker (kept across a
    reload that leaves the upstream as it was)."""

    def __init__(self, cfg: config.Upstream, breaker: config.Breaker) -> None:
        self.cfg = cfg
        self.keys = Keys(cfg.keys)
        self.breaker = Breaker(breaker.failures, breaker.cooldown)


@dataclass
class Try:
    """One try: the upstream, the model it gets, the key (None: no key of the gateway's)."""

    upstream: Upstream
    model: Optional[str]
    key: Optional[str]
    key_index: int
    #: The upstream's breaker let this try through as its half-open trial.
    trial: bool = False


@dataclass
class Wait:
    """Sleep this long, then ask again."""

    seconds: float


@dataclass
class Outcome:
    """What came of a try: ``status`` (an HTTP status) or ``failure`` ("connect", "timeout",
    "cut"); ``retry_after`` in seconds when the upstream said; ``answer``, what the client
    gets when this is the last."""

    status: Optional[int] = None
    failure: Optional[str] = None
    retry_after: Optional[float] = None
    answer: object = None

    @property
    def kind(self) -> Union[int, str]:
        return self.failure if self.failure is not None else (self.status or 0)


Step = Union[Try, Wait, None]


class Plan:
    """One request's tries over a route's targets. ``next(now)`` says what to do: a ``Try``,
    a ``Wait``, or None when no target is left (the client gets ``last``); ``record(try,
    outcome, now)`` takes what came of a try and says whether it is the client's answer."""

    def __init__(self, route: config.Route, upstreams: Dict[str, Upstream], retry: config.Retry,
                 rng: Optional[Callable[[], float]] = None) -> None:  # fmt: skip
        self.targets = [(upstreams[t.upstream], t.model) for t in route.targets]
        self.retry = retry
        self.rng = rng or random.random
        self.target = 0
        self.tries = 0  # on the current target
        self.switches = 0  # keys changed at once after a 429, on the current target
        self.last: Optional[Outcome] = None
        self.pending: Optional[float] = None  # the wait before the next try of this target

    def next(self, now: float) -> Step:
        if self.pending is not None:
            wait, self.pending = self.pending, None
            if wait > 0:
                return Wait(wait)
        while self.target < len(self.targets):
            up, model = self.targets[self.target]
            if self.tries >= self.retry.attempts or not up.breaker.allow(now):
                self._next_target()
                continue
            trial = up.breaker.state(now) == "half-open"
            i = up.keys.take(now)
            if i is None:  # every key rests: the upstream failed with 429
                self.last = self.last if self.last is not None and self.last.status == 429 else Outcome(429)
                if trial:
                    up.breaker.ended()
                self._next_target()
                continue
            self.tries += 1
            key = up.cfg.keys[i] if i >= 0 else None
            return Try(up, model, key, i, trial)
        return None

    def _next_target(self) -> None:
        self.target += 1
        self.tries = self.switches = 0
        self.pending = None

    def record(self, tried: Try, outcome: Outcome, now: float) -> bool:
        """Takes what came of ``tried``; True when it is the client's answer."""
        up, retry = tried.upstream, self.retry
        failed = outcome.kind in retry.on
        if not failed:
            up.breaker.succeeded()
            return True
        self.last = outcome
        if outcome.status == 429 and up.cfg.rest_keys and tried.key_index >= 0:
            rest = outcome.retry_after if outcome.retry_after is not None else 30.0
            up.keys.rest(tried.key_index, now + max(rest, 1.0))
            if self.switches < len(up.cfg.keys) - 1:
                self.switches += 1
                self.tries -= 1  # another key at once: not an attempt
                if tried.trial:
                    up.breaker.ended()
                return False
        up.breaker.failed(now)
        after = outcome.retry_after
        if after is not None and after > retry.retry_after_max:
            self._next_target()
            return False
        if self.tries < retry.attempts:
            ceiling = min(retry.max_backoff, retry.backoff * 2 ** (self.tries - 1))
            self.pending = max(self.rng() * ceiling, after or 0.0)
        return False
