"""What a gateway adds to the first byte of a streamed answer (issue 46): ssewire's gateway
(one upstream, and a three-upstream config with failover on) beside LiteLLM's proxy, against
one upstream on 127.0.0.1, at concurrency 1 and 50, in one run.

    python benches/first_byte_table.py [--requests N] [--litellm PATH-TO-litellm]

LiteLLM is a large install with its own pins; give the path of a ``litellm`` command from its
own virtualenv (``python -m venv L && L/bin/pip install 'litellm[proxy]'``), or the row is left
out. ``_first_byte.py`` says what is timed. Not a test: ``bench_gateway.py``'s
``test_first_byte`` runs a small load of the two ssewire rows under pytest-benchmark.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _first_byte  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000, help="per target and concurrency")
    parser.add_argument("--litellm", default=shutil.which("litellm"), help="a litellm command")
    parser.add_argument("--events", type=int, default=20, help="events per streamed answer")
    args = parser.parse_args()
    loop = _first_byte.new_loop()
    figures = loop.run_until_complete(_first_byte.run(requests=args.requests, events=args.events,
                                                      litellm=args.litellm))  # fmt: skip
    direct = figures["direct"]
    print(f"first byte of a streamed answer, {args.requests} requests per cell; "
          "ms, and what the target adds to direct")  # fmt: skip
    print("| target | concurrency | p50 | p99 | adds p50 | adds p99 |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, by_conc in figures.items():
        for conc, f in by_conc.items():
            d = direct[conc]
            print(f"| {name} | {conc} | {f['p50_ms']:.3f} | {f['p99_ms']:.3f} | "
                  f"{f['p50_ms'] - d['p50_ms']:+.3f} | {f['p99_ms'] - d['p99_ms']:+.3f} |")  # fmt: skip
    lite = figures.get("LiteLLM proxy")
    if lite:
        for name in ("ssewire gateway, one upstream", "ssewire gateway, 3-upstream config"):
            for conc in direct:
                ours = [figures[name][conc][k] - direct[conc][k] for k in ("p50_ms", "p99_ms")]
                theirs = [lite[conc][k] - direct[conc][k] for k in ("p50_ms", "p99_ms")]
                ratio = ", ".join(f"{o / t:.3f}" if t > 0 else "n/a" for o, t in zip(ours, theirs))
                print(f"{name}, concurrency {conc}: added time ÷ LiteLLM's (p50, p99) = {ratio}")


if __name__ == "__main__":
    main()
