"""Shared benchmark fixtures: corpora built once per session, their parametrization, and a
summary of the ratios at the end of a real run.

Sizes. A real run (``--benchmark-enable``) uses realistic sizes: 1000-token streams (~120-300
KB each) and a 4 MiB ``data:`` line. When benchmarks are disabled (the default ``addopts``, so a
plain ``pytest`` run executes every benchmark once, as a test) or ``SSEWIRE_BENCH_QUICK=1`` is
set, the corpora shrink to 200 tokens and 256 KiB so the whole suite takes a second or two.

At the end of a real run a summary prints, per group, each peer's best time as a multiple of
ssewire's (the figure to quote: both ran in the same process, on the same input, minutes apart)
and the throughput in MB/s of input.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Tuple

import pytest
import ssewire
from support import streams as _streams

# -- sizes ---------------------------------------------------------------------------------


def is_quick(config: pytest.Config) -> bool:
    """True when benchmarks only run once as tests, or SSEWIRE_BENCH_QUICK=1 asks for it."""
    if os.environ.get("SSEWIRE_BENCH_QUICK", "") not in ("", "0"):
        return True
    session = getattr(config, "_benchmarksession", None)
    if session is not None:
        return bool(session.disabled)
    return bool(config.getoption("benchmark_disable", False)) and not config.getoption(
        "benchmark_enable", False
    )


# -- corpora -------------------------------------------------------------------------------

#: name -> generator(n_chunks) of a stream body.
CORPORA: Dict[str, Callable[[int], bytes]] = {
    "chat": lambda n: _streams.chat_stream(n, seed=1),
    "messages": lambda n: _streams.messages_stream(n, seed=2),
    "responses": lambda n: _streams.responses_stream(n, seed=3),
}

#: name -> how a body is cut into reads.
CHUNKINGS: Dict[str, Callable[[bytes], List[bytes]]] = {
    # Full socket reads: a client that falls behind, or a fast local server.
    "4KiB": lambda body: _streams.chunked(body, 4096),
    # Irregular reads of 1 B - 8 KiB (mean 4 KiB): cuts inside lines and UTF-8 characters.
    "irregular": lambda body: _streams.chunked(body, 4096, seed=11),
    # One read per event: a live stream paced by the model (per-call overhead dominates).
    "per-event": _streams.event_reads,
}


class Corpora:
    """Bodies, reads and the expected ``(event, data)`` sequence, built once and cached."""

    def __init__(self, quick: bool) -> None:
        self.quick = quick
        self.n_chunks = 200 if quick else 1000
        self.large_size = (256 << 10) if quick else (4 << 20)
        self._bodies: Dict[str, bytes] = {}
        self._reads: Dict[Tuple[str, str], List[bytes]] = {}
        self._expected: Dict[str, List[Tuple[str, str]]] = {}

    def body(self, corpus: str) -> bytes:
        if corpus not in self._bodies:
            if corpus == "large":
                self._bodies[corpus] = _streams.large_event_stream(self.large_size)
            else:
                self._bodies[corpus] = CORPORA[corpus](self.n_chunks)
        return self._bodies[corpus]

    def reads(self, corpus: str, chunking: str) -> List[bytes]:
        key = (corpus, chunking)
        if key not in self._reads:
            body = self.body(corpus)
            if chunking == "1KiB":
                self._reads[key] = _streams.chunked(body, 1024)
            else:
                self._reads[key] = CHUNKINGS[chunking](body)
            assert b"".join(self._reads[key]) == body
        return self._reads[key]

    def expected(self, corpus: str) -> List[Tuple[str, str]]:
        """What ssewire makes of the body fed whole: the reference for every peer."""
        if corpus not in self._expected:
            parser = ssewire.SSEParser()
            events = parser.feed(self.body(corpus)) + parser.finish()
            self._expected[corpus] = [(e.event, e.data) for e in events]
        return self._expected[corpus]


@pytest.fixture(scope="session")
def corpora(request: pytest.FixtureRequest) -> Corpora:
    return Corpora(is_quick(request.config))


# -- parametrization -----------------------------------------------------------------------


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``stream_case``: one parameter per (corpus, chunking), marked with its benchmark group
    ``"<corpus> / <chunking>"``, so each table compares the peers on identical reads."""
    if "stream_case" in metafunc.fixturenames:
        metafunc.parametrize(
            "stream_case",
            [
                pytest.param(
                    (corpus, chunking),
                    id=f"{corpus}-{chunking}",
                    marks=pytest.mark.benchmark(group=f"{corpus} / {chunking}"),
                )
                for corpus in CORPORA
                for chunking in CHUNKINGS
            ],
        )


# -- ratio summary -------------------------------------------------------------------------


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Per group: each peer's best time as a multiple of ssewire's, and MB/s of input."""
    session = getattr(config, "_benchmarksession", None)
    if session is None or session.disabled or not session.benchmarks:
        return
    groups: Dict[str, Dict[str, Any]] = {}
    for bench in session.benchmarks:
        if not bench or not (bench.params or {}).get("peer"):
            continue
        groups.setdefault(bench.group or "", {})[bench.params["peer"]] = bench
    if not groups:
        return
    write = terminalreporter.write_line
    terminalreporter.section("ssewire ratios (peer best time / ssewire best time)")
    width = max(len(g) for g in groups) + 2
    write(f"{'group':<{width}}{'peer':<14}{'best':>11}{'x ssewire':>11}{'MB/s':>9}{'events/s':>12}")
    for group in sorted(groups):
        benches = groups[group]
        base = benches.get("ssewire")
        for peer, bench in benches.items():  # in run order: ssewire first
            best = bench.stats.min
            ratio = f"{best / base.stats.min:.1f}x" if base is not None else "-"
            size = bench.extra_info.get("bytes", 0)
            events = bench.extra_info.get("events", 0)
            write(
                f"{group:<{width}}{peer:<14}{best * 1e3:>9.3f}ms{ratio:>11}"
                f"{size / best / 1e6:>9.1f}{events / best:>12,.0f}"
            )
