"""What a stream costs before its deltas (issue 47): per provider shape, the stream with one
delta only (its opening frames, one delta, its closing frames: constructor + those frames +
``finish()`` + ``result()``), in µs, beside ``SSEParser`` framing the same bytes; with another
build given, that build's figure and this one's ÷ it, interleaved in one run.

    python benches/fixed_cost_table.py [--rounds N] [--only SUBSTRING] [--old DIR] [--stages]

``--old``: a ``--target`` directory another build was installed into (as ``compare_builds.py``
takes). ``--stages``: each stage alone instead (constructor, ``consume``, ``finish()``,
``result()``), of this build, or of the ``--old`` one when given. Thread CPU time, best of ``--rounds`` rounds of many repetitions each. Not a test;
``bench_providers.py``'s ``test_fixed_cost_table_runs`` runs it once, small.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

import _providers  # noqa: E402
import compare_builds  # noqa: E402
import ssewire  # noqa: E402
from ssewire import _core as this  # noqa: E402


def one_delta(name: str) -> bytes:
    """The body of shape ``name`` with a single delta of text (its tool calls, results and
    closing events as the shape has them)."""
    rng = random.Random(f"{name}:fixed")
    pieces = _providers.deltas(_providers.model_text(rng, 1), rng)
    return _providers.SHAPES[name][1](rng, pieces[:1]).encode()


def runner(core: Any, dialect: str, body: bytes) -> Callable[[], Any]:
    cls = getattr(core, _CLASSES[dialect])

    def run() -> Any:
        s = cls()
        s.consume(body)
        s.finish()
        return s.result()

    return run


_CLASSES = {spec["name"]: spec["stream_class"] for spec in this.DIALECTS}


def framing(body: bytes, dialect: str) -> Callable[[], Any]:
    """The framer alone: ``SSEParser``, or for an NDJSON dialect Python's line framer."""
    if dialect in _providers.NDJSON:
        return lambda: body.split(b"\n")

    def run() -> Any:
        p = ssewire.SSEParser()
        return p.feed(body)

    return run


def table(rounds: int, only: str, old: Optional[Any], reps: int = 400) -> List[Dict[str, Any]]:
    rows = []
    for name, (dialect, _) in _providers.SHAPES.items():
        if only and only not in name:
            continue
        body = one_delta(name)
        cases = {"this": runner(this, dialect, body), "sse": framing(body, dialect)}
        if old is not None and hasattr(old, _CLASSES[dialect]):
            cases["old"] = runner(old, dialect, body)
            assert cases["old"]() == cases["this"](), name
        best = {k: float("inf") for k in cases}
        for _ in range(rounds):
            for k, f in cases.items():
                best[k] = min(best[k], compare_builds.cpu(f, reps) / 1e3)
        rows.append({"name": name, "events": _providers.records(name, body), **best})
    return rows


def stages(rounds: int, only: str, reps: int = 400, core: Any = this) -> List[Dict[str, Any]]:
    """Per shape, each stage of a one-delta stream alone, in µs: the constructor, ``consume``,
    ``finish()`` and ``result()`` (each timed over ``reps`` streams made beforehand), of the
    build ``core`` (this one unless told)."""
    import time

    def timed(make: Callable[[], List[Any]], act: Callable[[Any], Any]) -> float:
        best = float("inf")
        for _ in range(rounds):
            subjects = make()
            start = time.thread_time()
            for subject in subjects:
                act(subject)
            best = min(best, time.thread_time() - start)
        return best / reps * 1e6

    rows = []
    for name, (dialect, _) in _providers.SHAPES.items():
        if only and only not in name:
            continue
        body = one_delta(name)
        cls = getattr(core, _CLASSES[dialect])

        def fed(finished: bool) -> List[Any]:
            streams = [cls() for _ in range(reps)]
            for s in streams:
                s.consume(body)
                if finished:
                    s.finish()
            return streams

        rows.append({
            "name": name,
            "new": timed(lambda: list(range(reps)), lambda _: cls()),
            "consume": timed(lambda: [cls() for _ in range(reps)], lambda s: s.consume(body)),
            "finish": timed(lambda: fed(False), lambda s: s.finish()),
            "result": timed(lambda: fed(True), lambda s: s.result()),
        })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="")
    parser.add_argument("--old", help="a --target directory another build was installed into")
    parser.add_argument("--stages", action="store_true", help="each stage alone (of --old if given)")
    args = parser.parse_args()
    if args.stages:
        core = compare_builds.load(args.old) if args.old else this
        print(f"thread CPU, best of {args.rounds}; CPython {sys.version.split()[0]}; {core.__file__}\n")
        print("| shape | constructor, µs | consume, µs | finish(), µs | result(), µs |")
        print("|---|---:|---:|---:|---:|")
        for r in stages(args.rounds, args.only, core=core):
            print(f"| {r['name']} | {r['new']:.2f} | {r['consume']:.2f} | {r['finish']:.2f} "
                  f"| {r['result']:.2f} |", flush=True)  # fmt: skip
        return
    old = compare_builds.load(args.old) if args.old else None
    rows = table(args.rounds, args.only, old)
    print(f"thread CPU, best of {args.rounds}; CPython {sys.version.split()[0]}\n")
    head = "| shape | events | this build, µs | SSEParser, µs | this ÷ SSEParser |"
    if old is not None:
        head += " other build, µs | this ÷ other |"
    print(head)
    print("|---|---:|---:|---:|---:|" + ("---:|---:|" if old is not None else ""))
    for r in rows:
        line = (f"| {r['name']} | {r['events']} | {r['this']:.2f} | {r['sse']:.2f} "
                f"| {r['this'] / r['sse']:.2f}x |")  # fmt: skip
        if old is not None and "old" in r:
            line += f" {r['old']:.2f} | {r['this'] / r['old']:.2f}x |"
        elif old is not None:
            line += " — | — |"
        print(line, flush=True)


if __name__ == "__main__":
    main()
