"""Framing benchmarks: the same LLM streams, fed the same reads, framed by ssewire and by the
Python SSE parsers people use today.

Peers (all in the same run, so every figure is a ratio measured minutes apart on the same
machine, never an absolute number from a different day):

* ``ssewire``: ``ssewire.SSEParser`` (Rust).
* ``pure-python``: ``support.pure.PureSSEParser``, a tuned pure-Python framer with the same
  rules: the best that honest pure Python does (bytes-level splitting, one decode per read).
* ``openai-sdk``: ``openai._streaming.SSEDecoder().iter_bytes()``, what ``openai.Stream`` runs.
* ``httpx-sse``: ``httpx_sse.EventSource(response).iter_sse()`` over an ``httpx.Response``
  streaming the reads (the ``connect_sse`` path, including httpx's text decoding).
* ``sseclient-py``: ``sseclient.SSEClient(reads).events()``.

Corpora (``support.streams``, deterministic): an OpenAI Chat Completions stream, an Anthropic
Messages stream (named events) and an OpenAI Responses stream, each cut into 4 KiB reads,
irregular reads (1 B - 8 KiB) and one read per event; plus one event with a 4 MiB ``data:``
line fed in 1 KiB reads (throughput; a parser that re-buffers shows up as quadratic here).
Every peer's ``(event, data)`` sequence is asserted equal to ssewire's before it is timed.

Run for real (the project's ``addopts`` disable benchmarks, which makes a plain ``pytest`` run
each benchmark once as a test, on small corpora)::

    pytest benches --benchmark-enable --benchmark-group-by=group \\
        --benchmark-columns=min,mean,ops

Reading the results: one table per group, ``<corpus> / <chunking>``. pytest-benchmark prints
each value followed by its multiple of the best in the table, e.g. ``12.5 (8.31)``; in a
group, the row ``ssewire`` is normally the 1.0 and every other row's multiple is "ssewire is N
times faster than this peer on this input". Compare ``min`` (least disturbed by other load on a
shared machine). After the tables, a summary lists the same ratios and MB/s of input per
group. ``extra_info`` carries ``events``, ``bytes`` and ``reads`` of each case (in the JSON
written by ``--benchmark-json``) for per-event or per-byte figures.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import httpx
import httpx_sse
import pytest
import sseclient
import ssewire
from openai._streaming import SSEDecoder as OpenAISSEDecoder
from support.pure import PureSSEParser

# -- peers ---------------------------------------------------------------------------------
# Each runner frames a whole stream given as a list of reads and returns the event objects,
# the way its users consume it. Each key function maps an event to (event type, data).


def run_ssewire(reads: List[bytes]) -> List[Any]:
    parser = ssewire.SSEParser()
    out: List[Any] = []
    for read in reads:
        out += parser.feed(read)
    out += parser.finish()
    return out


def run_pure(reads: List[bytes]) -> List[Any]:
    parser = PureSSEParser()
    out: List[Any] = []
    for read in reads:
        out += parser.feed(read)
    out += parser.finish()
    return out


def run_openai(reads: List[bytes]) -> List[Any]:
    # What openai.Stream does with response.iter_bytes(): the SDK's own framer.
    return list(OpenAISSEDecoder().iter_bytes(iter(reads)))


def run_httpx_sse(reads: List[bytes]) -> List[Any]:
    # The documented path, connect_sse() -> EventSource.iter_sse(), over an httpx.Response
    # streaming the reads (includes httpx's incremental UTF-8 decoding of each read).
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=iter(reads)
    )
    return list(httpx_sse.EventSource(response).iter_sse())


def run_sseclient(reads: List[bytes]) -> List[Any]:
    # sseclient-py iterates any iterable of byte chunks (usually a requests response).
    return list(sseclient.SSEClient(iter(reads)).events())


def _key(e: Any) -> Tuple[str, str]:
    return (e.event, e.data)


def _key_openai(e: Any) -> Tuple[str, str]:
    return (e.event or "message", e.data)  # the SDK reports "no event: field" as None


Runner = Callable[[List[bytes]], List[Any]]

#: id -> (runner, key). ssewire first: the summary divides by its time.
PEERS: Dict[str, Tuple[Runner, Callable[[Any], Tuple[str, str]]]] = {
    "ssewire": (run_ssewire, _key),
    "pure-python": (run_pure, _key),
    "openai-sdk": (run_openai, _key_openai),
    "httpx-sse": (run_httpx_sse, _key),
    "sseclient-py": (run_sseclient, _key),
}


def check(peer: str, reads: List[bytes], expected: List[Tuple[str, str]]) -> None:
    """Correctness before timing: the peer's (event, data) sequence must equal ssewire's."""
    run, key = PEERS[peer]
    got = [key(e) for e in run(reads)]
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g == e, f"{peer}: event {i} differs: {g!r} != {e!r}"
    assert len(got) == len(expected), f"{peer}: {len(got)} events, expected {len(expected)}"


# -- benchmarks ----------------------------------------------------------------------------


@pytest.mark.parametrize("peer", list(PEERS))
def test_framing(benchmark: Any, corpora: Any, stream_case: Tuple[str, str], peer: str) -> None:
    """One stream, cut one way (``stream_case``, see conftest), framed by one peer."""
    corpus, chunking = stream_case
    reads = corpora.reads(corpus, chunking)
    expected = corpora.expected(corpus)
    check(peer, reads, expected)
    benchmark.extra_info.update(
        events=len(expected), bytes=len(corpora.body(corpus)), reads=len(reads)
    )
    events = benchmark(PEERS[peer][0], reads)
    assert len(events) == len(expected)


@pytest.mark.parametrize("peer", list(PEERS))
@pytest.mark.benchmark(group="large data line / 1KiB")
def test_large_line(benchmark: Any, corpora: Any, peer: str) -> None:
    """One ``data:`` line of 4 MiB (a base64 image) in 1 KiB reads: throughput, and whether
    a peer re-buffers (sseclient-py appends every read to one ``bytes``: quadratic)."""
    reads = corpora.reads("large", "1KiB")
    expected = corpora.expected("large")
    check(peer, reads, expected)
    size = len(corpora.body("large"))
    benchmark.extra_info.update(events=len(expected), bytes=size, reads=len(reads))
    run = PEERS[peer][0]
    if peer == "sseclient-py" and not corpora.quick:
        # Quadratic: seconds per run at 4 MiB. A few rounds are enough to show it.
        events = benchmark.pedantic(run, args=(reads,), rounds=3, iterations=1)
    else:
        events = benchmark(run, reads)
    assert len(events) == len(expected)
    stats = getattr(benchmark, "stats", None)
    if stats:  # None when benchmarks are disabled
        benchmark.extra_info["MB/s"] = round(size / stats.stats.min / 1e6, 1)
