"""Prints the README's end-to-end table: CPU per event of every client path of
``_endtoend.ROWS`` (rows) for each write pattern (columns), each cell with its ratio to the
httpx-sse baseline of the same table and pattern, all measured in one run.

    nice -n 10 python benches/endtoend_table.py                 # 200 streams, 20 and 50 events/s
    python benches/endtoend_table.py --streams 4 --chunks 20 --rates 0 --rounds 1   # a quick look

Per rate: one server process (``_endtoend_server.py``); first a counted pass of every (row,
pattern) that checks every result and counts the client's reads (it also warms up); then
``--rounds`` timed rounds, each running every pattern and every row in turn (interleaved, so a
slow minute of a shared machine hits all rows alike). A cell is the median over the rounds of
the client process's CPU seconds (``time.process_time``) per SSE event, in µs; the ratio is
that median over the baseline's median (below 1: less CPU than httpx-sse). Bounded: every load
has a timeout (``_endtoend.run_load``), the server process exits with this one.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
from importlib import metadata
from pathlib import Path
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _endtoend  # noqa: E402
from _endtoend import PATTERNS, ROWS, Row  # noqa: E402

PACKAGES = ["ssewire", "httpx", "httpx-sse", "aiohttp", "requests", "openai", "anthropic", "httpx2"]


def _versions() -> str:
    out = []
    for name in PACKAGES:
        try:
            out.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(out)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _event_size(dialect: str, chunks: int) -> int:
    body = _endtoend.bodies(chunks)[dialect]
    return round(len(body) / _endtoend.events_per_stream(dialect, chunks))


def measure(
    rows: List[Row], patterns: List[str], streams: int, chunks: int, rate: float, rounds: int,
    log: bool = True,
) -> Tuple[Dict[Tuple[str, str], List[float]], Dict[Tuple[str, str], Optional[float]], Dict[str, int]]:
    """{(row, pattern): CPU µs/event per round}, {(row, pattern): reads/event}, server stats."""
    cpu: Dict[Tuple[str, str], List[float]] = {}
    reads: Dict[Tuple[str, str], Optional[float]] = {}
    totals = {"writes": 0, "late": 0, "errors": 0}
    with _endtoend.Server(chunks=chunks, rate=rate) as server:
        for pattern in patterns:
            for row in rows:
                load = _endtoend.run_load(row, server, pattern, streams, count=True)
                reads[(row.key, pattern)] = None if load.reads is None else load.reads / load.events
        server.stats()  # the counted pass's writes are not reported
        for r in range(rounds):
            for pattern in patterns:
                for row in rows:
                    load = _endtoend.run_load(row, server, pattern, streams)
                    us = load.cpu / load.events * 1e6
                    cpu.setdefault((row.key, pattern), []).append(us)
                    if log:
                        print(f"# rate {rate:g} round {r + 1}/{rounds} {pattern} {row.key}: "
                              f"{us:.1f} µs/event, wall {load.wall:.1f} s", file=sys.stderr,
                              flush=True)  # fmt: skip
        stats = server.stats()
    for key in totals:
        totals[key] += stats[key]
    return cpu, reads, totals


def table(
    rows: List[Row], patterns: List[str], cpu: Dict[Tuple[str, str], List[float]],
    reads: Dict[Tuple[str, str], Optional[float]], title: str,
) -> List[str]:
    head = [title] + [f"{p}: {PATTERNS[p]}" for p in patterns] + ["client reads per event"]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for row in rows:
        cells = [row.label]
        for p in patterns:
            mine = statistics.median(cpu[(row.key, p)])
            base = statistics.median(cpu[(row.baseline, p)])
            cells.append(f"{mine:.0f} µs ({mine / base:.2f}x)")
        counted = [reads[(row.key, p)] for p in patterns]
        cells.append(" / ".join(f"{r:.2f}" for r in counted) if None not in counted else "")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=200, help="concurrent streams per load")
    parser.add_argument("--chunks", type=int, default=100, help="token chunks per stream")
    parser.add_argument("--rates", default="20,50", help="events/s per stream, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--patterns", default="".join(PATTERNS))
    parser.add_argument("--rows", default="", help="only rows whose key contains this")
    args = parser.parse_args(argv)
    patterns = [p for p in args.patterns if p in PATTERNS]
    selected = [r for r in ROWS.values() if args.rows in r.key]
    rows = [r for r in selected if r.baseline in {s.key for s in selected}]
    started = datetime.datetime.now(datetime.timezone.utc)

    out = [
        f"Measured {started:%Y-%m-%d} in one run of `benches/endtoend_table.py` "
        f"(`--streams {args.streams} --chunks {args.chunks} --rates {args.rates} "
        f"--rounds {args.rounds}`), on {os.cpu_count()} CPUs ({_cpu_model()}), "
        f"{platform.system()}, {platform.python_implementation()} {platform.python_version()}; "
        f"{_versions()}.",
        "",
    ]
    for dialect in ("chat", "messages"):
        n = _endtoend.events_per_stream(dialect, args.chunks)
        out.append(f"- {dialect}: {n} events per stream, {_event_size(dialect, args.chunks)} B "
                   "per event on average")  # fmt: skip
    out.append("")
    for rate in [float(x) for x in args.rates.split(",")]:
        cpu, reads, stats = measure(rows, patterns, args.streams, args.chunks, rate, args.rounds)
        pace = f"{rate:g} events/s per stream" if rate > 0 else "unpaced"
        for dialect in ("chat", "messages"):
            these = [r for r in rows if r.dialect == dialect]
            if not these:
                continue
            title = f"{dialect}, {args.streams} streams, {pace}"
            out += table(these, patterns, cpu, reads, title) + [""]
        late = stats["late"] / stats["writes"] if stats["writes"] else 0.0
        out.append(f"({pace}: the server wrote {stats['writes']:,} pieces in the timed rounds, "
                   f"{late:.1%} of them more than 5 ms late; {stats['errors']} failed "
                   "connections.)")  # fmt: skip
        out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
