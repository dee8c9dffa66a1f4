"""End to end over real sockets (issue 15): CPU per event of many concurrent LLM streams read
over loopback, for every way of reading them with ssewire (httpx sync and async, aiohttp,
requests, the raw asyncio ``StreamProtocol``) against httpx-sse + ``json.loads`` and the SDKs.

The server (``_endtoend_server.py``) runs in its own process and writes each stream in one of
three patterns, paced like a live model (``RATE`` events per second per stream): random 1-200 B
writes (``a``), one write per event (``b``), random 1-2000 B writes (``c``). The clients
(``_endtoend.py``) read ``STREAMS`` concurrent streams (threads for sync clients, tasks for
async ones) and the cost is the client process's CPU time (``time.process_time``, all threads)
per SSE event. Every stream's final text and usage are checked against ssewire's result of the
whole body, in a first, counted pass (which also counts the client's reads) and in every timed
round.

With benchmarks disabled (the default ``addopts``: a smoke test) it reads 4 short streams,
unpaced. A real run::

    pytest benches/bench_endtoend.py --benchmark-enable --benchmark-min-rounds=3

(the figure is ``extra_info["cpu_us_per_event"]``, e.g. with ``--benchmark-json``; the
benchmark's own timer shows wall time). ``benches/endtoend_table.py`` runs the same loads
interleaved and prints the README's table.
"""

from __future__ import annotations

import statistics
from typing import Any, Iterator, List

import _endtoend
import pytest

from conftest import is_quick

#: A real run: concurrent streams, token chunks per stream (~130 chat events), events per
#: second per stream.
STREAMS = 200
CHUNKS = 100
RATE = 20.0
#: The smoke test: few short streams, as fast as the server can write them.
QUICK_STREAMS = 4
QUICK_CHUNKS = 20


@pytest.fixture(scope="module")
def quick(request: Any) -> bool:
    return is_quick(request.config)


@pytest.fixture(scope="module")
def server(quick: bool) -> Iterator[_endtoend.Server]:
    with _endtoend.Server(
        chunks=QUICK_CHUNKS if quick else CHUNKS, rate=0.0 if quick else RATE
    ) as s:
        yield s


@pytest.mark.parametrize("pattern", list(_endtoend.PATTERNS))
@pytest.mark.parametrize("key", list(_endtoend.ROWS))
def test_endtoend(benchmark: Any, server: Any, quick: bool, key: str, pattern: str) -> None:
    row = _endtoend.ROWS[key]
    benchmark.group = f"end to end: {row.dialect}, write pattern {pattern}"
    n = QUICK_STREAMS if quick else STREAMS
    checked = _endtoend.run_load(row, server, pattern, n, count=True)  # results checked inside
    assert checked.events == n * _endtoend.events_per_stream(row.dialect, server.chunks)
    if row.counts:
        assert checked.reads is not None and checked.reads > 0
    spent: List[float] = []

    def run() -> None:
        spent.append(_endtoend.run_load(row, server, pattern, n).cpu)

    benchmark.pedantic(run, rounds=1 if quick else 3, iterations=1)
    benchmark.extra_info.update(
        streams=n,
        events=checked.events,
        rate=server.rate,
        cpu_us_per_event=round(statistics.median(spent) / checked.events * 1e6, 2),
        reads_per_event=None if checked.reads is None else round(checked.reads / checked.events, 3),
    )
