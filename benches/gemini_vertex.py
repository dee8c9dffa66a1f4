"""A short Gemini answer spelled as Vertex AI writes it (issue 47): six chunks of 250-700
bytes, `": "` after each key and `,` alone between members, `usageMetadata` holding only
`trafficType` until the last chunk, `createTime` and `responseId` on every chunk, CRLF line
ends. ssewire's ``consume()`` + ``result()`` beside ``SSEParser`` framing the same body and
msgspec decoding its payloads, in µs and as ratios.

    python benches/gemini_vertex.py [--rounds N]

Thread CPU time, best of N rounds of many repetitions. Not a test; ``bench_gemini.py``'s
``test_gemini_vertex_runs`` runs it once, small.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

import _providers
import msgspec
import ssewire
from consume_table import best


def body(seed: int = 3) -> bytes:
    """The answer: its text cut into chunks that grow, the last with the finish and usage."""
    rng = random.Random(seed)
    text = "".join(_providers.deltas(_providers.model_text(rng, 5), rng)[:120])
    cuts = [0, 20, 70, 160, 300, 480, len(text)]
    out: List[str] = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        last = i == len(cuts) - 2
        candidate: Dict[str, object] = {"content": {"role": "model", "parts": [{"text": text[a:b]}]}}
        usage: Dict[str, object] = {"trafficType": "ON_DEMAND"}
        if last:
            candidate["finishReason"] = "STOP"
            usage = {"promptTokenCount": 9, "candidatesTokenCount": 90, "totalTokenCount": 99,
                     "trafficType": "ON_DEMAND", "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 9}],
                     "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 90}]}  # fmt: skip
        chunk = {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash",
                 "createTime": "2026-03-10T14:54:45.066123Z", "responseId": "tTCwacuEBMvnitYP06qsgQY"}  # fmt: skip
        out.append("data: " + json.dumps(chunk, ensure_ascii=False, separators=(",", ": ")) + "\r\n\r\n")
    return "".join(out).encode()


def row(rounds: int, reps: int = 300) -> Dict[str, float]:
    """µs per stream: ssewire, SSEParser, msgspec."""
    data = body()
    payloads = [e.data.encode() for e in ssewire.SSEParser().feed(data)]
    decoder = msgspec.json.Decoder()

    def ours() -> None:
        s = ssewire.GeminiStream()
        s.consume(data)
        s.result()

    def sse() -> None:
        ssewire.SSEParser().feed(data)

    def generic() -> None:
        for p in payloads:
            decoder.decode(p)

    return {
        k: best(lambda f=f: [f() for _ in range(reps)], rounds) / reps * 1e6  # type: ignore[misc]
        for k, f in [("ssewire", ours), ("SSEParser", sse), ("msgspec", generic)]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    t = row(args.rounds)
    print(f"thread CPU, best of {args.rounds}; CPython {sys.version.split()[0]}\n")
    print("| ssewire, µs | SSEParser, µs | msgspec, µs | ssewire ÷ SSEParser | msgspec ÷ ssewire |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {t['ssewire']:.2f} | {t['SSEParser']:.2f} | {t['msgspec']:.2f} "
          f"| {t['ssewire'] / t['SSEParser']:.2f}x | {t['msgspec'] / t['ssewire']:.2f}x |")  # fmt: skip


if __name__ == "__main__":
    main()
