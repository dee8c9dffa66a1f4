"""The consume table of the README (issue 18): per dialect, µs per event and GB/s of ssewire's
``consume`` + ``result()`` and ``feed`` + ``result()``, beside ``SSEParser`` framing the same
body and msgspec decoding the pre-cut payloads into Structs (the peers of
``bench_<dialect>.py``), for the whole body in one read, 4 KiB reads and one read per event.

    python benches/consume_table.py [--rounds N]

CPU time of this thread (``time.thread_time``), the best of N rounds per cell, every cell in one
run: read the ratios, not the absolute numbers (the machine is shared). Not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

sys.path.insert(0, str(Path(__file__).parent))

import _peers  # noqa: E402
import bench_chat  # noqa: E402
import bench_messages  # noqa: E402
import bench_responses  # noqa: E402
import ssewire  # noqa: E402
from bench_translate import STREAMS  # noqa: E402

#: The msgspec decoders the dialect benchmarks use (Structs mirroring each dialect).
DECODERS = {
    "chat": bench_chat._DECODE,
    "messages": bench_messages._DECODE,
    "responses": bench_responses._DECODE,
}


def best(f: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.thread_time()
        f()
        times.append(time.thread_time() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    print("| dialect | reads | consume + result() | feed + result() | SSEParser | msgspec (pre-cut) |"
          " msgspec ÷ consume | SSEParser ÷ consume |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    # The three dialects of issue 18 (Gemini has its own table: benches/bench_gemini.py).
    for dialect, decode in DECODERS.items():
        cls = STREAMS[dialect]
        corpus = _peers.corpus(dialect, False)
        n, size = corpus.events, len(corpus.body)
        payloads = corpus.payloads
        cuts: Dict[str, List[bytes]] = {"whole": [corpus.body], **corpus.reads}
        for name, reads in cuts.items():

            def stream(method: str) -> Callable[[], None]:
                def run() -> None:
                    s = cls()
                    step = getattr(s, method)
                    for r in reads:
                        step(r)
                    s.finish()
                    s.result()

                return run

            def frame() -> None:
                p = ssewire.SSEParser()
                for r in reads:
                    p.feed(r)
                p.finish()

            def msgspec_decode() -> None:
                for p in payloads:
                    decode(p)

            t = {k: best(f, args.rounds) for k, f in
                 [("consume", stream("consume")), ("feed", stream("feed")), ("frame", frame), ("msgspec", msgspec_decode)]}  # fmt: skip

            def cell(k: str) -> str:
                return f"{t[k] / n * 1e6:.3f} µs · {size / t[k] / 1e9:.2f} GB/s"

            print(f"| {dialect} | {name} | {cell('consume')} | {cell('feed')} | {cell('frame')} | {cell('msgspec')} |"
                  f" {t['msgspec'] / t['consume']:.2f}x | {t['frame'] / t['consume']:.2f}x |")  # fmt: skip


if __name__ == "__main__":
    main()
