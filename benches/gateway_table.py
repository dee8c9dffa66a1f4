"""The gateway-cost table of the README (issue 26): CPU of the gateway process per event, for
50 concurrent streams of ~1,000 events over loopback, paced (one event per read, 5 ms apart, as
a model sends them) and unpaced (written back to back), for ``ssewire.gateway`` relaying
and translating chat -> Messages, beside a plain aiohttp proxy that parses nothing, on uvloop
and on asyncio's own loop.

    python benches/gateway_table.py [--rounds N] [--streams N] [--events N] [--pace SECONDS]
                                    [--only TEXT] [--paced-only]

The gateway runs as its own process; its CPU (every thread, user + system) is read from
``/proc`` around each round, and the best round counts. The upstream and the clients share
this process, on the other core. Linux only. Not a test: ``bench_gateway.py``'s
``test_gateway_cost`` runs the same load under pytest-benchmark (small, once, in CI).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _gateway_load  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--events", type=int, default=1004)
    parser.add_argument("--pace", type=float, default=0.005, help="seconds between events, paced")
    parser.add_argument("--only", default="", help="the modes whose names hold this text (and the plain proxy)")
    parser.add_argument("--paced-only", action="store_true", help="only the paced columns")
    args = parser.parse_args()
    loops = ["uvloop", "asyncio"]
    try:
        import uvloop  # noqa: F401
    except ImportError:
        loops = ["asyncio"]
    print(f"{args.streams} streams x ~{args.events} events; gateway process CPU per event (µs), "
          f"best of {args.rounds}")  # fmt: skip
    paces = (args.pace,) if args.paced_only else (args.pace, 0.0)
    header = ["what", *[f"{'paced' if p else 'unpaced'}, {loop}" for p in paces for loop in loops]]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    modes = [m for m in _gateway_load.MODES if args.only in m or m.startswith("plain")]
    for mode in modes:
        cells = []
        shares = []
        trips = []
        for pace in paces:
            for loop in loops:
                r = _gateway_load.measure(mode, streams=args.streams, events=args.events,
                                          pace=pace, rounds=args.rounds, loop=loop)  # fmt: skip
                cells.append(f"{r['cpu_us_per_event']:.1f}")
                if "redis_commands_per_request" in r:
                    trips.append(r["redis_commands_per_request"])
                served = r["requests_by_worker"]
                if len(served) > 1 or _gateway_load.workers_of(mode) > 1:
                    shares.append(min(served) / sum(served) if len(served) > 1 else 0.0)
        note = f" (the least busy worker served {min(shares):.0%})" if shares else ""
        if trips:
            note += f" (Redis round trips per request: {max(trips):.1f})"
        print(f"| {mode}{note} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
