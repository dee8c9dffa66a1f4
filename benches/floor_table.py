"""What a stream's result alone costs (issue 47): per provider shape, the cheapest known way to
make the Python objects of ``result()`` (msgspec decoding the result's own JSON text, compact)
beside ``SSEParser`` framing the stream, msgspec decoding every payload, and ssewire's
``consume`` + ``result()``, all in µs of one stream, in one run.

    python benches/floor_table.py [--rounds N] [--events N | --one-delta] [--only SUBSTRING]

Two targets of the issue are ratios that no parser can go under this way:

- ``ours ÷ SSEParser``: ours makes the result's objects and frames the stream, so it costs
  at least *result objects* + what framing costs; the column ``floor ÷ SSEParser`` is
  *result objects* ÷ ``SSEParser`` (framing left out: the floor is lower than the truth).
- ``msgspec ÷ ours`` (how many times faster than msgspec's generic decode): at most
  *every payload* ÷ *result objects*, the column ``msgspec ÷ floor``.

Thread CPU time, the best of ``--rounds`` rounds; read the ratios, not the µs (the machine is
shared). Not a test; ``bench_providers.py``'s ``test_floor_table_runs`` runs it once, small.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Optional

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the suite's support

import _providers  # noqa: E402
import msgspec  # noqa: E402
from compare_builds import cpu  # noqa: E402
from fixed_cost_table import framing, one_delta  # noqa: E402
from provider_table import payloads  # noqa: E402
from support import registry as _registry  # noqa: E402


def row(name: str, rounds: int, events: Optional[int], reps: int = 0) -> Dict[str, Any]:
    """One shape's stream (``events`` long, or its one-delta stream when ``None``), in µs."""
    dialect, _ = _providers.SHAPES[name]
    body = one_delta(name) if events is None else _providers.corpus(name, events=events)
    cls = _registry.STREAMS[dialect]
    decoder = msgspec.json.Decoder()
    docs = payloads(body, dialect)

    def ours() -> Any:
        s = cls()
        s.consume(body)
        s.finish()
        return s.result()

    result = ours()
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode()
    # The floor makes the very objects ``result()`` returns.
    assert decoder.decode(text) == result, name

    def every_payload() -> None:
        for doc in docs:
            decoder.decode(doc)

    cases: Dict[str, Callable[[], Any]] = {
        "sse": framing(body, dialect),
        "ours": ours,
        "msgspec": every_payload,
        "floor": lambda: decoder.decode(text),
    }
    for f in cases.values():
        f()  # warmed up
    # Enough streams a round to be far above the clock's resolution.
    reps = reps or max(200, 40_000 // max(len(docs), 1))
    # Rounds interleaved, each case's best kept (one slow moment of the machine spoils no cell).
    times = {k: float("inf") for k in cases}
    for _ in range(rounds):
        for k, f in cases.items():
            times[k] = min(times[k], cpu(f, reps) / 1e3)
    return {"name": name, "events": len(docs), **times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--events", type=int, default=50, help="stream length (the provider table's)")
    parser.add_argument("--one-delta", action="store_true", help="the one-delta streams of fixed_cost_table.py")
    parser.add_argument("--only", default="", help="a substring of the shapes to run")
    args = parser.parse_args()
    events = None if args.one_delta else args.events
    print(f"thread CPU, best of {args.rounds}; CPython {sys.version.split()[0]}; "
          f"{'one-delta streams' if events is None else f'{events}-event streams'}; µs per stream\n")  # fmt: skip
    print("| shape | payloads | SSEParser | ours | msgspec, every payload | result objects (floor) "
          "| ours ÷ SSEParser | floor ÷ SSEParser | msgspec ÷ ours | msgspec ÷ floor |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in _providers.SHAPES:
        if args.only not in name:
            continue
        r = row(name, args.rounds, events)
        print(f"| {name} | {r['events']} | {r['sse']:.2f} | {r['ours']:.2f} | {r['msgspec']:.2f} | {r['floor']:.2f} "
              f"| {r['ours'] / r['sse']:.2f}x | {r['floor'] / r['sse']:.2f}x | {r['msgspec'] / r['ours']:.2f}x "
              f"| {r['msgspec'] / r['floor']:.2f}x |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
