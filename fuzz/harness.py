"""The fuzz target: one input through every public entry point, with two oracles.

1. *No undocumented exception*: only the exceptions the README's error model lists may escape
   (``EventTooLargeError`` from ``feed``/``consume`` with a small limit, ``AccumulateError``
   from ``accumulate()``, the CLI's exit codes 0/2/3). Anything else, a ``PanicException``
   included, propagates and is a crash for the fuzzer.
2. *Split-equivalence*: the same bytes fed whole, at cut points derived from the input, and
   through ``consume()`` give the same items, attributes, ``done``, ``error`` and ``errors``.

Every attribute of every item is read (the lazily decoded JSON parts included).
The parts that fold (``result()``, the accumulator classes, ``accumulate()``, the CLI) are
covered too; ``SSEWIRE_FUZZ_FOLDS=0`` leaves them out (framing and decoding only, a higher
execution rate).
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import tempfile
import zlib
from collections.abc import Sequence
from typing import Any, Callable

import ssewire
from ssewire import EventTooLargeError

#: A small limit so that the fuzzer reaches the too-large paths with small inputs.
LIMIT = 512
FOLDS = os.environ.get("SSEWIRE_FUZZ_FOLDS", "1") == "1"

STREAMS = (ssewire.ChatCompletionStream, ssewire.MessagesStream, ssewire.ResponsesStream)
DIALECTS = ("chat", "messages", "responses")


def _value(v: Any) -> str:
    if isinstance(v, BaseException):
        return repr((type(v).__name__, str(v), getattr(v, "type", None), getattr(v, "code", None),
                     getattr(v, "raw", None)))  # fmt: skip
    return repr(v)


def dump(item: Any) -> str:
    """Every public attribute of an item (reading each one), as text."""
    parts = [type(item).__name__]
    for name in dir(item):
        if name.startswith("_"):
            continue
        value = getattr(item, name)
        if callable(value):
            continue
        parts.append(f"{name}={_value(value)}")
    return "|".join(parts)


def cuts(data: bytes) -> list[list[bytes]]:
    """The ways to cut ``data``: whole, at a few points derived from it, and byte by byte
    for short inputs."""
    rng = random.Random(zlib.crc32(data))
    ways = [[data]]
    if len(data) > 1:
        points = sorted(rng.sample(range(1, len(data)), min(3, len(data) - 1)))
        ways.append([data[a:b] for a, b in zip([0] + points, points + [len(data)])])
    if len(data) <= 64:
        ways.append([data[i : i + 1] for i in range(len(data))])
    return ways


def run_parser(pieces: Sequence[bytes]) -> list[str]:
    p = ssewire.SSEParser(max_event_size=LIMIT)
    out: list[str] = []
    for piece in pieces:
        try:
            events = p.feed(piece)
        except EventTooLargeError as e:
            events = e.events
        out.extend(dump(e) for e in events)
    out.append(f"pending={p.pending} id={p.last_event_id!r} retry={p.retry!r}")
    out.extend(dump(e) for e in p.finish())
    return out


ACCUMULATORS: dict[str, Any] = {
    "ChatCompletionStream": ssewire.ChatCompletionAccumulator,
    "MessagesStream": ssewire.MessageAccumulator,
    "ResponsesStream": ssewire.ResponseAccumulator,
}


def run_stream(cls: Any, pieces: Sequence[bytes], consume: bool = False) -> list[str]:
    s = cls(max_event_size=LIMIT)
    acc = ACCUMULATORS[cls.__name__]() if FOLDS and not consume else None
    out: list[str] = []
    for i, piece in enumerate(pieces):
        # Mixed: bytearray / memoryview inputs too (copied, never borrowed).
        data: Any = piece if i % 3 else bytearray(piece) if i % 2 else memoryview(piece)
        try:
            items = [] if consume and s.consume(data) is None else s.feed(data)
        except EventTooLargeError as e:
            items = e.events
        if not consume:
            out.extend(dump(item) for item in items)
        if acc is not None:
            acc.add_all(items)
    last = s.finish()
    if not consume:
        out.extend(dump(item) for item in last)
    out.append(f"done={s.done} error={_value(s.error)}")
    out.extend(dump(e) for e in s.errors)
    if FOLDS:
        result = s.result()
        out.append(repr(result))
        if acc is not None:
            # The accumulator over the items is the same fold as the stream's own.
            acc.add_all(last)
            if acc.result() != result:
                raise AssertionError(f"{cls.__name__}: accumulator != stream result")
    return out


def check_same(name: str, runs: list[list[str]]) -> None:
    first = runs[0]
    for other in runs[1:]:
        if other != first:
            raise AssertionError(f"{name}: results depend on the split:\n{first}\n!=\n{other}")


def run_folds(data: bytes) -> None:
    """The accumulators, ``accumulate()`` and the CLI on the same input."""
    for cls, acc_cls in zip(STREAMS, (ssewire.ChatCompletionAccumulator,
                                      ssewire.MessageAccumulator, ssewire.ResponseAccumulator)):  # fmt: skip
        acc = acc_cls()
        s = cls()
        for item in s.feed(data) + s.finish():
            acc.add(item)
        if acc.result() != s.result():
            raise AssertionError(f"{cls.__name__}: accumulator != stream result")
    for dialect in ("auto", "sse") + DIALECTS:
        try:
            ssewire.accumulate(data, dialect)
        except ssewire.AccumulateError:
            pass
    from ssewire._cli import main

    with tempfile.NamedTemporaryFile(suffix=".sse") as f:
        f.write(data)
        f.flush()
        for args in ([f.name], [f.name, "--events"]):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                code = main(args)
            if code not in (0, 2, 3):
                raise AssertionError(f"CLI exit status {code}")


def one_input(data: bytes) -> None:
    ways = cuts(data)
    check_same("SSEParser", [run_parser(w) for w in ways])
    for cls in STREAMS:
        check_same(cls.__name__, [run_stream(cls, w) for w in ways])
        check_same(cls.__name__ + " consume", [run_stream(cls, w, True) for w in ways])
    if FOLDS:
        run_folds(data)


def seeds() -> list[bytes]:
    """The captures in tests/data and the package samples."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = []
    for base in (os.path.join(root, "tests", "data"), os.path.join(root, "python", "ssewire", "_samples")):
        for dirpath, _, files in os.walk(base):
            for name in sorted(files):
                if name.endswith(".sse"):
                    with open(os.path.join(dirpath, name), "rb") as f:
                        out.append(f.read())
    return out


def main_once(cb: Callable[[bytes], None] = one_input) -> int:
    """Runs ``cb`` over the seeds (a quick self-check, no fuzzing); returns how many."""
    n = 0
    for data in seeds():
        cb(data)
        n += 1
    return n


def one_input_fast(data: bytes) -> None:
    """The same oracles at a fraction of the cost per execution, for long campaigns: the first
    byte picks the entry point and the cut point; the rest is the body, fed whole and cut."""
    if not data:
        return
    pick, body = data[0], data[1:]
    cut = (pick * 7) % (len(body) + 1)
    ways = [[body], [body[:cut], body[cut:]]]
    which = pick % 4
    if which == 0:
        check_same("SSEParser", [run_parser(w) for w in ways])
    else:
        cls = STREAMS[which - 1]
        runs = [run_stream(cls, w, consume=(pick >> 2) & 1 == 1) for w in ways]
        check_same(cls.__name__, runs)
