"""Writes the benchmark corpora (``_peers.DIALECTS``, the full-size streams) as raw SSE bodies
into ``target/bench-corpora/<dialect>.sse`` (or the directory given), for the Rust stage
benchmark: ``python benches/write_corpora.py && cargo bench --bench stages``."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import _peers  # noqa: E402


def main() -> None:
    root = pathlib.Path(__file__).resolve().parent.parent
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "target" / "bench-corpora"
    out.mkdir(parents=True, exist_ok=True)
    for dialect, make in _peers.DIALECTS.items():
        body = make(_peers.N_CHUNKS)
        (out / f"{dialect}.sse").write_bytes(body)
        print(f"{out / (dialect + '.sse')}: {len(body)} bytes")


if __name__ == "__main__":
    main()
