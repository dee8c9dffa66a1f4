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
import json
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

STREAMS = (ssewire.ChatCompletionStream, ssewire.MessagesStream, ssewire.ResponsesStream, ssewire.GeminiStream,
           ssewire.OllamaStream, ssewire.CohereStream)  # fmt: skip
DIALECTS = ("chat", "messages", "responses", "gemini", "ollama", "cohere")
#: The dialects a translation writes.
TARGETS = ("chat", "messages", "responses", "gemini", "ollama", "cohere")


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
    acc_cls = ACCUMULATORS.get(cls.__name__)  # Gemini has no accumulator class
    acc = acc_cls() if acc_cls is not None and FOLDS and not consume else None
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


def run_encoder(data: bytes) -> None:
    """Encoder round trip: ``encode_event`` then ``SSEParser`` gives the same event back (data
    lines joined with LF, lone surrogates as U+FFFD), or the documented ValueError for a type
    or id that cannot be written; ``Event(...).encode()`` gives the same bytes."""
    text = data.decode("utf-8", "surrogateescape")
    data_part, _, rest = text.partition("\x1f")
    event, _, ident = rest.partition("\x1f")
    event_arg = event or None
    id_arg = ident if "\x1f" in rest else None
    retry = data[0] * 1009 if data and data[0] & 1 else None
    try:
        out = ssewire.encode_event(data_part, event=event_arg, id=id_arg, retry=retry)
    except ValueError:
        bad = any(c in (event_arg or "") for c in "\r\n") or any(c in (id_arg or "") for c in "\r\n\0")
        if not bad:
            raise
        return
    if ssewire.Event(data_part, event_arg, id_arg, retry).encode() != out:
        raise AssertionError("Event.encode() != encode_event()")
    events = ssewire.SSEParser().feed(out)
    if len(events) != 1:
        raise AssertionError(f"{len(events)} events from one encoded event")
    [ev] = events

    def fix(s: str) -> str:  # lone surrogates are written as U+FFFD
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)

    want = fix(data_part).replace("\r\n", "\n").replace("\r", "\n")
    expected = (want, fix(event_arg) if event_arg else "message", None if id_arg is None else fix(id_arg), retry)
    got = (ev.data, ev.event, ev.id, ev.retry)
    if got != expected:
        raise AssertionError(f"round trip: {got!r} != {expected!r}")


def apply_changes(root: Any, changes: Sequence[Any]) -> Any:
    """PartialJSON's changes applied to ``root`` (RFC 6901 pointers; an add at an array's end)."""
    for op, path, value in changes:
        if path == "":
            root = root + value if op == "append" else value
            continue
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]
        parent = root
        for t in tokens[:-1]:
            parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        last: Any = int(tokens[-1]) if isinstance(parent, list) else tokens[-1]
        if op == "append":
            parent[last] += value
        elif isinstance(parent, list) and op == "add":
            assert last == len(parent), "an add that is not at the array's end"
            parent.append(value)
        else:
            parent[last] = value
    return root


def run_partial(pieces: Sequence[bytes]) -> list[str]:
    """PartialJSON over ``pieces``: the value after the last piece, complete, the outcome; the
    changes it returned, applied in order, rebuild the value after every piece."""
    p = ssewire.PartialJSON()
    out: list[str] = []
    error = None
    mirror: Any = None
    for piece in pieces:
        try:
            mirror = apply_changes(mirror, p.feed(piece))
        except ValueError as e:
            error = error or repr((type(e).__name__, getattr(e, "pos", None)))
            mirror = apply_changes(mirror, p.changes())
        if "JSON Pointers" not in (error or ""):
            assert repr(mirror) == repr(p.value), "the changes do not rebuild the value"
    out.append(repr(p.value))
    out.append(f"complete={p.complete} error={error}")
    try:
        out.append(repr(p.finish()))
    except ValueError as e:
        out.append(repr((type(e).__name__, getattr(e, "pos", None))))
    return out


PAIRS = [(s, t) for s in ("auto",) + DIALECTS for t in TARGETS]


def run_translator(pair: int, pieces: Sequence[bytes]) -> list[str]:
    """A Translator over ``pieces``: the bytes written, notes, the source's and target's state."""
    source, target = PAIRS[pair % len(PAIRS)]
    t = ssewire.Translator(source, target, max_event_size=LIMIT)
    out = b"".join(t.feed(p) for p in pieces) + t.finish()
    src = t.source
    state = None if src is None else (src.done, _value(src.error))
    return [repr(out), repr(t.notes), repr(state), repr(t.result()) if FOLDS else ""]


#: The fuzzer's bytes also go after this head, so that they are chunk framing from the start.
CHUNKED_HEAD = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


def run_http(pieces: Sequence[bytes]) -> list[str]:
    """The HTTP/1.1 response reader (a small head limit, to reach it) over ``pieces``: the body,
    the head, the trailers and the outcome. Only the documented ``HTTPProtocolError`` may
    escape, and the body is never longer than the input."""
    r = ssewire.HTTPResponseReader(max_head_size=LIMIT)
    body: list[bytes] = []
    error = None
    try:
        for piece in pieces:
            body.append(r.feed(piece))
        r.finish()
    except ssewire.HTTPProtocolError as e:
        body.append(e.body)  # what the failing call read before the error
        error = (e.kind, str(e))
    out = b"".join(body)
    if len(out) > sum(len(p) for p in pieces):
        raise AssertionError("HTTPResponseReader: more body than input")
    head = (r.status, r.reason, r.http_version, r.headers, r.framing, r.interim, r.head_complete)
    return [repr(out), repr(head), repr((r.trailers, r.body_complete, r.body_size)), repr(error)]


def run_relay(pieces: Sequence[bytes]) -> list[str]:
    """The gateway's usage-chunk filter (``_core._DropUsage``, a small bound to reach it) over
    ``pieces``: what it passes, never more than it was given; and the usage ask on the whole
    input as a request body (``None`` or a key and JSON text, never an exception)."""
    from ssewire import _core

    f = _core._DropUsage(LIMIT)
    out = b"".join(f.feed(p) for p in pieces) + f.finish()
    data = b"".join(pieces)
    if len(out) > len(data):
        raise AssertionError("_DropUsage: more out than in")
    ask = _core._ask_for_usage(data, "chat")
    if ask is not None:
        json.loads(ask[1])
    return [repr(out), repr(ask), repr(_core._stored_ids(data))]


def check_same(name: str, runs: list[list[str]]) -> None:
    first = runs[0]
    for other in runs[1:]:
        if other != first:
            raise AssertionError(f"{name}: results depend on the split:\n{first}\n!=\n{other}")


def run_folds(data: bytes) -> None:
    """The accumulators, ``accumulate()`` and the CLI on the same input."""
    for cls in STREAMS:
        acc_cls = ACCUMULATORS.get(cls.__name__)
        if acc_cls is None:
            continue
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
    check_same("PartialJSON", [run_partial(w) for w in ways])
    check_same("HTTPResponseReader", [run_http(w) for w in ways])
    check_same("HTTPResponseReader chunked", [run_http([CHUNKED_HEAD, *w]) for w in ways])
    check_same("_DropUsage", [run_relay(w) for w in ways])
    run_encoder(data)
    pair = data[0] if data else 0
    check_same("Translator", [run_translator(pair, w) for w in ways[:2]])
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
    which = pick % 9
    if which == 0:
        check_same("SSEParser", [run_parser(w) for w in ways])
    elif which == 4:
        run_encoder(body)
    elif which == 5:
        check_same("PartialJSON", [run_partial(w) for w in ways])
    elif which == 6:
        check_same("Translator", [run_translator(pick >> 3, w) for w in ways])
    elif which == 7:
        head = [CHUNKED_HEAD] if pick & 8 else []
        check_same("HTTPResponseReader", [run_http(head + w) for w in ways])
    else:
        cls = STREAMS[(which - 1 if which < 4 else 3 + (pick >> 4) % 3) % len(STREAMS)]
        runs = [run_stream(cls, w, consume=(pick >> 2) & 1 == 1) for w in ways]
        check_same(cls.__name__, runs)
