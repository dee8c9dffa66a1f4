"""Runs the fuzz suite: ``python fuzz/run.py --seconds N`` (one command, bounded in time and
memory). atheris (libFuzzer) drives ``fuzz/harness.py`` over the Python API, seeded with the
captures in tests/data and the package samples; a crash (an undocumented exception, a panic,
a split-dependent result, RSS over the limit) stops the run with its input saved under
``fuzz/artifacts/``, and the exit status is non-zero. Prints the number of executions.

Long runs: ``nice -n 19 python fuzz/run.py --seconds 3600 --chunk 600`` runs in chunks (a fresh
process each, the corpus kept in ``fuzz/corpus/`` between them) and sums the executions.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def child(argv: list) -> None:
    import atheris

    fast = os.environ.get("SSEWIRE_FUZZ_FAST") == "1"
    if fast:
        import harness as h  # no coverage instrumentation: random mutation, ~20x the rate
    else:
        with atheris.instrument_imports():
            import harness as h
            import ssewire  # noqa: F401

    atheris.Setup(argv, h.one_input_fast if fast else h.one_input)
    atheris.Fuzz()


def chunk(seconds: int, rss_mb: int, max_len: int) -> int:
    """One fuzzing process; returns its execution count (raises SystemExit on a failure)."""
    corpus = os.path.join(HERE, "corpus")
    artifacts = os.path.join(HERE, "artifacts") + os.sep
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    if not os.listdir(corpus):
        import harness

        for i, data in enumerate(harness.seeds()):
            with open(os.path.join(corpus, f"seed-{i:03d}"), "wb") as f:
                f.write(data[:max_len])
    cmd = [sys.executable, os.path.abspath(__file__), "--child", corpus,
           f"-max_total_time={seconds}", f"-rss_limit_mb={rss_mb}", f"-max_len={max_len}",
           "-timeout=20", f"-artifact_prefix={artifacts}", "-print_final_stats=1"]  # fmt: skip
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True, timeout=seconds + 300, check=False)
    log = proc.stderr
    done = re.search(r"Done (\d+) runs", log)
    stats = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    runs = int(done.group(1)) if done else int(stats.group(1)) if stats else 0
    if proc.returncode != 0:
        sys.stderr.write(log[-6000:])
        raise SystemExit(f"fuzzing failed after {runs} executions (exit {proc.returncode})")
    return runs


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child([sys.argv[0]] + sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=60, help="total fuzzing time")
    ap.add_argument("--chunk", type=int, default=0, help="seconds per process (0: one process)")
    ap.add_argument("--rss-mb", type=int, default=1024, help="RSS limit per process")
    ap.add_argument("--max-len", type=int, default=4096, help="largest input")
    ap.add_argument("--fast", action="store_true",
                    help="one entry point and one cut per execution, no Python coverage "
                    "instrumentation (for long campaigns)")  # fmt: skip
    args = ap.parse_args()
    if args.fast:
        os.environ["SSEWIRE_FUZZ_FAST"] = "1"
    step = args.chunk or args.seconds
    total = 0
    start = time.monotonic()
    left = args.seconds
    while left > 0:
        runs = chunk(min(step, left), args.rss_mb, args.max_len)
        total += runs
        left = args.seconds - int(time.monotonic() - start)
        print(f"executions: {total} ({total / max(1e-9, time.monotonic() - start):.0f}/s), 0 failures",
              flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
