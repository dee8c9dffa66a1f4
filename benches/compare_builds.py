"""Two builds of the extension side by side in one process, interleaved round by round (the
machine's load then falls on both alike): ``consume()`` + ``result()`` per provider shape at
50 and 1,000 events, as the time of this checkout's build ÷ the other's, and this build's ÷
``SSEParser``.

    pip install --no-deps --target /tmp/old dist/ssewire-<old>.whl
    python benches/compare_builds.py /tmp/old [--rounds N] [--only SUBSTRING]

The other build's ``_core`` module is loaded from its file under another name (its stream
classes are used directly; the Python layer adds nothing to ``consume``). Thread CPU time,
best of ``--rounds``.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any, Callable, List, Tuple

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

import _providers  # noqa: E402
from ssewire import _core as new  # noqa: E402
from support import registry as _registry  # noqa: E402


def load(site: str) -> Any:
    """The ``_core`` module of the build installed under ``site`` (or the file itself)."""
    path = site if site.endswith(".so") or site.endswith(".pyd") else glob.glob(f"{site}/ssewire/_core*")[0]
    spec = importlib.util.spec_from_file_location("_core", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu(f: Callable[[], Any], reps: int) -> float:
    start = time.thread_time_ns()
    for _ in range(reps):
        f()
    return (time.thread_time_ns() - start) / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "old", help="a --target directory the other build was installed into, or its _core file"
    )
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    old = load(args.old)
    print(
        "| shape | 50 events: this ÷ other | 1,000 events: this ÷ other | 50 events, this ÷ SSEParser | 1,000 events, this ÷ SSEParser |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, (dialect, _) in _providers.SHAPES.items():
        if args.only not in name:
            continue
        cls = _registry.STREAMS[dialect].__name__
        cells: List[Tuple[float, float]] = []
        for n in (50, 1000):
            body = _providers.corpus(name, events=n)

            def run(module: Any, body: bytes = body) -> None:
                s = getattr(module, cls)()
                s.consume(body)
                s.result()

            reps = max(3, 20_000 // n)
            best = {"old": float("inf"), "new": float("inf"), "sse": float("inf")}
            for _ in range(args.rounds):
                best["old"] = min(best["old"], cpu(lambda: run(old), reps))
                best["new"] = min(best["new"], cpu(lambda: run(new), reps))
                best["sse"] = min(best["sse"], cpu(lambda: new.SSEParser().feed(body), reps))
            cells.append((best["new"] / best["old"], best["new"] / best["sse"]))
        (a50, s50), (a1k, s1k) = cells
        print(f"| {name} | {a50:.2f} | {a1k:.2f} | {s50:.2f}x | {s1k:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
