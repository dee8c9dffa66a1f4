"""Partial JSON benchmarks (issue 11): streamed tool arguments read after every delta.

The document: ~1.5 MiB of tool arguments, an array of ~10,000 small objects (ids, names,
prices, tags, a note with escapes and non-ASCII text), cut at seeded random points into 40,000
str deltas, as an LLM API streams them. Every peer reads the partial value after every delta,
the way an app shows arguments as they fill in.

Peers, in one run (group ``partial-json``):

* ``ssewire``: one ``ssewire.PartialJSON``, ``feed(delta)`` then ``value`` after every delta.
* ``json.loads-once``: a single ``json.loads`` of the whole text: the floor (target: ssewire's
  40,000 feeds and reads within 5x of it).
* ``jiter-1/<step>``: what the SDKs do, ``jiter.from_json(buffer, partial_mode=
  "trailing-strings")`` on the whole buffer after every delta, timed on every ``step``-th
  delta only (the full run takes minutes: it is quadratic). Each call costs time linear in its
  buffer, and the sampled buffers are spread evenly over the document, so the full run's time
  is the sampled time times ``step`` (printed in the summary as an estimate). The buffers are
  built before timing, so the SDK's own quadratic ``bytes`` concatenation is not even counted.

Flatness: ``test_time_per_delta_is_flat`` times ssewire's feeds and reads over the first and the
last 10% of the deltas (best of 5 passes, CPU time) and compares them per delta.

Under the default ``--benchmark-disable`` every case runs once on a small document (a test).
A real run, for the figures::

    python -m pytest benches/bench_partial_json.py --benchmark-enable \\
        --benchmark-timer=time.thread_time --benchmark-min-rounds=5
"""

from __future__ import annotations

import json
import random
import time
from typing import Any, List

import jiter
import pytest
import ssewire

from conftest import is_quick

FULL_OBJECTS, FULL_DELTAS = 10_000, 40_000
QUICK_OBJECTS, QUICK_DELTAS = 200, 800


def make_document(n_objects: int, seed: int = 11) -> str:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "café", "naïve", "東京", "zürich", "🚀"]
    items = []
    for i in range(n_objects):
        items.append(
            {
                "id": i,
                "sku": f"SKU-{rng.randrange(10**8):08d}",
                "name": " ".join(rng.choice(words) for _ in range(3)),
                "price": round(rng.uniform(0, 1000), 2),
                "tags": rng.sample(words, 2),
                "active": rng.random() < 0.5,
                "note": f'"{i}"\n\t{rng.choice(words)}',
            }
        )
    return json.dumps({"items": items}, ensure_ascii=False)


def cut(text: str, n_deltas: int, seed: int = 12) -> List[str]:
    rng = random.Random(seed)
    points = sorted(rng.sample(range(1, len(text)), n_deltas - 1))
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


class Case:
    def __init__(self, quick: bool) -> None:
        n_objects, n_deltas = (QUICK_OBJECTS, QUICK_DELTAS) if quick else (FULL_OBJECTS, FULL_DELTAS)
        self.text = make_document(n_objects)
        self.deltas = cut(self.text, n_deltas)
        self.expected = json.loads(self.text)
        self.step = 10 if quick else 400
        # The buffers jiter re-parses at the sampled deltas (built before timing).
        self.samples: List[bytes] = []
        buf: List[str] = []
        for k, delta in enumerate(self.deltas):
            buf.append(delta)
            if k % self.step == self.step - 1:
                self.samples.append("".join(buf).encode())


@pytest.fixture(scope="module")
def case(request: pytest.FixtureRequest) -> Case:
    return Case(is_quick(request.config))


def run_ssewire(deltas: List[str]) -> Any:
    p = ssewire.PartialJSON()
    value = None
    for delta in deltas:
        p.feed(delta)
        value = p.value
    return value


def run_jiter_sample(samples: List[bytes]) -> Any:
    value = None
    for buf in samples:
        value = jiter.from_json(buf, partial_mode="trailing-strings")
    return value


@pytest.mark.benchmark(group="partial-json")
@pytest.mark.parametrize("peer", ["ssewire", "json.loads-once", "jiter-sampled"])
def test_partial_json(benchmark: Any, case: Case, peer: str) -> None:
    benchmark.extra_info["bytes"] = len(case.text.encode())
    benchmark.extra_info["deltas"] = len(case.deltas)
    if peer == "ssewire":
        assert run_ssewire(case.deltas) == case.expected
        result = benchmark(run_ssewire, case.deltas)
        assert result == case.expected
    elif peer == "json.loads-once":
        assert benchmark(json.loads, case.text) == case.expected
    else:
        # The same partial values as ssewire at the sampled deltas, except where the buffer
        # ends in a number (jiter shows a number that may still grow; ssewire leaves it out).
        p = ssewire.PartialJSON()
        for k, delta in enumerate(case.deltas):
            p.feed(delta)
            if k % case.step == case.step - 1:
                buf = case.samples[k // case.step]
                if not buf.rstrip()[-1:].isdigit():
                    assert jiter.from_json(buf, partial_mode="trailing-strings") == p.value
        benchmark.extra_info["calls_per_timed_call"] = case.step
        benchmark(run_jiter_sample, case.samples)
        if benchmark.stats is not None:
            full = benchmark.stats.stats.min * case.step
            print(f"\njiter re-parsing after every delta, estimated: {full:.2f} s")


def _segment_time(case: Case, first: int, last: int, rounds: int = 5) -> float:
    """Best CPU time per delta of feeding and reading deltas[first:last] (the deltas before it
    fed untimed)."""
    best = float("inf")
    for _ in range(rounds):
        p = ssewire.PartialJSON()
        for delta in case.deltas[:first]:
            p.feed(delta)
        t0 = time.thread_time()
        for delta in case.deltas[first:last]:
            p.feed(delta)
            _ = p.value
        best = min(best, time.thread_time() - t0)
        assert p.value is not None
    return best / (last - first)


def test_time_per_delta_is_flat(case: Case, request: pytest.FixtureRequest) -> None:
    n = len(case.deltas)
    tenth = n // 10
    early = _segment_time(case, 0, tenth)
    late = _segment_time(case, n - tenth, n)
    print(f"\nper delta: first 10% {early * 1e9:.0f} ns, last 10% {late * 1e9:.0f} ns")
    if not is_quick(request.config):
        # Quadratic re-parsing would make the last tenth ~10x slower than the first.
        assert late < 2 * early, (early, late)
