"""What metering costs (issue 38), as CPU per request and per event of streams of 50 and 1,000
events, measured here rather than read off the gateway table (whose rounds differ by more than
the cost itself):

- ``GatewayMetrics.record``: the four GenAI histograms and one client span per request, with
  the providers ``ssewire gateway --metrics`` makes (a Prometheus reader; with an OTLP endpoint
  also a periodic OTLP reader and a batch span processor, whose exports run on their own
  threads and are not counted here);
- ``s.usage`` and ``s.timing`` read once per stream (the gateway's log line reads both);
- ``consume()`` + ``result()`` of a 50-event stream, for scale: the timing's clock read is one
  per ``consume()`` call and is inside it.

    python benches/metering_cost.py [--rounds N]

Thread CPU time, best of ``--rounds``; one run, so read the figures against each other.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

import _providers  # noqa: E402
import ssewire  # noqa: E402


def per_call(f: Callable[[], Any], calls: int, rounds: int) -> float:
    """Best thread-CPU µs per call of ``f`` over ``rounds`` rounds of ``calls`` calls."""
    best = float("inf")
    for _ in range(rounds):
        t = time.thread_time_ns()
        for _ in range(calls):
            f()
        best = min(best, (time.thread_time_ns() - t) / calls)
    return best / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    import prometheus_client
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from opentelemetry.sdk.metrics import MeterProvider
    from ssewire.otel import GatewayMetrics

    metrics = GatewayMetrics(MeterProvider(metric_readers=[PrometheusMetricReader(registry=prometheus_client.CollectorRegistry())]))
    body = _providers.corpus("chat openai", paragraphs=4, events=50)
    s = ssewire.ChatCompletionStream()
    s.consume(body)
    s.finish()
    entry = {"dialect": "chat", "client_dialect": "chat", "status": 200, "request_model": "m",
             "model": "gpt-4o", "tokens": s.usage, "timing": s.timing}  # fmt: skip

    def stream() -> None:
        t = ssewire.ChatCompletionStream()
        t.consume(body)
        t.result()

    record = per_call(lambda: metrics.record(entry, 0.5), args.calls, args.rounds)
    read = per_call(lambda: (s.usage, s.timing), args.calls, args.rounds)
    consume = per_call(stream, args.calls, args.rounds)
    print("| what | µs per request | µs per event, 50 events | µs per event, 1,000 events |")
    print("|---|---:|---:|---:|")
    for name, us in (("GatewayMetrics.record (4 histograms, 1 span)", record),
                     ("s.usage + s.timing, read once", read),
                     ("for scale: consume() + result(), 50-event chat stream", consume)):  # fmt: skip
        print(f"| {name} | {us:.1f} | {us / 50:.3f} | {us / 1000:.4f} |")


if __name__ == "__main__":
    main()
