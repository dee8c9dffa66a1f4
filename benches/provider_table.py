"""The provider-shape table of the README (issue 25): per provider shape (benches/_providers.py:
text with newlines, quotes and non-ASCII as models write it, each provider's own keys), ns per
event and GB/s of ssewire's ``consume`` + ``result()``, beside ``SSEParser`` framing the same
body, msgspec decoding every payload (cut beforehand) into Python objects, and ``Translator``
into another dialect, as ratios.

    python benches/provider_table.py [--rounds N] [--reads whole|event]

``--reads event`` feeds one event per call (a live socket), ``whole`` the body in one call.
Thread CPU time, the best of N rounds per cell, all cells in one run: read the ratios, not the
absolute numbers (the machine is shared). Not a test; ``test_provider_table_runs`` in
``bench_providers.py`` runs it once, small, as a smoke test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the suite's support

import _providers  # noqa: E402
import msgspec  # noqa: E402
import ssewire  # noqa: E402
from consume_table import best  # noqa: E402
from support import registry as _registry  # noqa: E402
from support import streams as _streams  # noqa: E402

CLASSES = _registry.STREAMS
#: The dialect each source is translated into for the Translator column.
TARGET = {"chat": "messages", "messages": "chat", "responses": "messages", "gemini": "chat", "ollama": "chat",
          "cohere": "chat"}  # fmt: skip


def lines_framer(pieces: List[bytes]) -> int:
    """The NDJSON framer alone, in Python, handing each line over (the ``SSEParser`` column of
    an NDJSON dialect): a buffer cut at each line feed."""
    buf, n = b"", 0
    for piece in pieces:
        buf += piece
        *lines, buf = buf.split(b"\n")
        n += len(lines)
    return n


def payloads(body: bytes, dialect: str) -> List[bytes]:
    """The JSON documents of a body, as msgspec is handed them: its lines (NDJSON), else its
    events' data but ``[DONE]``."""
    if dialect in _providers.NDJSON:
        return body.splitlines()
    return [e.data.encode() for e in ssewire.SSEParser().feed(body) if e.data != "[DONE]"]


def row(name: str, rounds: int, reads: str, paragraphs: int, events: Optional[int] = None) -> Dict[str, Any]:
    dialect, _ = _providers.SHAPES[name]
    body = _providers.corpus(name, paragraphs=paragraphs, events=events)
    ndjson = dialect in _providers.NDJSON
    docs = payloads(body, dialect)
    if ndjson:
        n = len(docs)
        pieces: List[bytes] = body.splitlines(keepends=True) if reads == "event" else [body]
    else:
        n = len(ssewire.SSEParser().feed(body))
        pieces = _streams.event_reads(body) if reads == "event" else [body]
    cls = CLASSES[dialect]
    decoder = msgspec.json.Decoder()

    def consume() -> None:
        s = cls()
        for p in pieces:
            s.consume(p)
        s.result()

    def sse() -> None:
        if ndjson:
            lines_framer(pieces)
            return
        p = ssewire.SSEParser()
        for piece in pieces:
            p.feed(piece)

    def generic() -> None:
        for p in docs:
            decoder.decode(p)

    def translate() -> None:
        t = ssewire.Translator(dialect, TARGET[dialect])
        for p in pieces:
            t.feed(p)
        t.finish()

    texts = [
        getattr(i, a, None)
        for i in cls().feed(body)
        for a in ("content", "text", "delta", "reasoning_content", "thinking", "partial_json")
    ]
    texts = [t for t in texts if isinstance(t, str)]
    # A short stream is timed over enough repeats to be far above the clock's resolution.
    reps = max(1, 20_000 // max(n, 1))

    def repeated(f: Any) -> Any:
        return lambda: [f() for _ in range(reps)]

    times = {
        k: best(repeated(f), rounds) / reps
        for k, f in [("consume", consume), ("sse", sse), ("msgspec", generic), ("translate", translate)]
    }
    return {
        "name": name,
        "events": n,
        "bytes": len(body),
        "escaped": _providers.escape_rate(texts),
        **{k: v / n * 1e9 for k, v in times.items()},
        "gbps": len(body) / times["consume"] / 1e9,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reads", choices=["whole", "event"], default="whole")
    parser.add_argument("--paragraphs", type=int, default=40, help="document length per corpus")
    parser.add_argument("--only", help="a substring of the shapes to run")
    parser.add_argument(
        "--lengths",
        help="comma-separated stream lengths in events (e.g. 10,50,200,1000): print instead the "
        "consume + result() ÷ SSEParser ratio of each shape at each length (a short agent turn "
        "pays a stream's fixed costs over fewer events)",
    )
    args = parser.parse_args()
    if args.lengths:
        lengths_table(args, [int(n) for n in args.lengths.split(",")])
        return
    print(f"reads: {args.reads}; thread CPU, best of {args.rounds}; CPython {sys.version.split()[0]}\n")
    print(
        "| shape | events | escaped deltas | consume + result() | GB/s | SSEParser | msgspec decode | consume ÷ SSEParser | consume ÷ msgspec | translate ÷ consume |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows: List[Dict[str, Any]] = []
    for name in _providers.SHAPES:
        if args.only and args.only not in name:
            continue
        rows.append(row(name, args.rounds, args.reads, args.paragraphs))
        print_row(rows[-1])
    # Per dialect: every shape of it as one corpus (ns per event weighted by events).
    for dialect in dict.fromkeys(_providers.SHAPES[r["name"]][0] for r in rows):
        mine = [r for r in rows if _providers.SHAPES[r["name"]][0] == dialect]
        events = sum(r["events"] for r in mine)
        total: Dict[str, Any] = {"name": f"**{dialect}, all shapes**", "events": events}
        for key in ("consume", "sse", "msgspec", "translate"):
            total[key] = sum(r[key] * r["events"] for r in mine) / events
        total["escaped"] = sum(r["escaped"] * r["events"] for r in mine) / events
        total["gbps"] = sum(r["bytes"] for r in mine) / (total["consume"] * events)
        print_row(total)


def lengths_table(args: argparse.Namespace, lengths: List[int]) -> None:
    """consume + result() ÷ SSEParser per shape and stream length, and the 50-event column
    over the longest one (per event: how much more a short stream pays)."""
    print(f"reads: {args.reads}; thread CPU, best of {args.rounds}; CPython {sys.version.split()[0]}")
    print("consume + result() ÷ SSEParser framing the same body, by stream length in events\n")
    print("| shape | " + " | ".join(f"{n} events" for n in lengths) + " | short ÷ long, per event |")
    print("|---|" + "---:|" * (len(lengths) + 1))
    for name in _providers.SHAPES:
        if args.only and args.only not in name:
            continue
        cells = [row(name, args.rounds, args.reads, args.paragraphs, events=n) for n in lengths]
        short = next((c for c, n in zip(cells, lengths) if n == 50), cells[0])
        ratio = (short["consume"] / cells[-1]["consume"]) if cells[-1]["consume"] else float("nan")
        print(
            f"| {name} | "
            + " | ".join(f"{c['consume'] / c['sse']:.2f}x ({c['events']})" for c in cells)
            + f" | {ratio:.2f}x |",
            flush=True,
        )


def print_row(r: Dict[str, Any]) -> None:
    print(
        f"| {r['name']} | {r['events']} | {r['escaped']:.0%} | {r['consume']:.0f} ns | {r['gbps']:.2f} "
        f"| {r['sse']:.0f} ns | {r['msgspec']:.0f} ns | {r['consume'] / r['sse']:.2f}x "
        f"| {r['consume'] / r['msgspec']:.2f}x | {r['translate'] / r['consume']:.2f}x |",
        flush=True,
    )


if __name__ == "__main__":
    main()
