"""The ``ssewire`` command: assemble a captured LLM stream into its final object.

::

    ssewire [FILE|-] [--dialect auto|<a dialect of the registry>|sse] [--events] [--json]
    ssewire translate FILE --to DIALECT
    ssewire gateway --upstream URL [--upstream-dialect D] ...

Strategy: the input is read in 64 KiB reads (from a pipe, as soon as they arrive) and pushed
through the same driver as ``ssewire.accumulate()`` (``_api._Assembly``), so memory stays at
one read plus what the accumulator keeps, and ``--events`` prints each event as it is decoded
(``curl -N ... | ssewire --events -`` follows a live stream).

Exit status: 0 complete stream; 3 a stream that carried an error or ended before its terminal
marker (the partial result is still printed; the error goes to stderr in one line); 2 unusable
arguments, an unreadable file, or input that is not an event stream (empty, no SSE line at
all, or a JSON document that is not an error); 1 output closed early (broken pipe); 130 on
Ctrl-C. No traceback for any of these.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from typing import IO, Any, Dict, Iterator, List, Optional, Sequence, Tuple

from ssewire import _core
from ssewire._api import DIALECTS, SNIFF_LIMIT, _Assembly, _first_significant

__all__ = ["main", "item_to_json"]

EXIT_OK = 0
EXIT_BROKEN_PIPE = 1
EXIT_USAGE = 2
EXIT_STREAM_ERROR = 3

_READ_SIZE = 1 << 16

#: The sample captures shipped in ``ssewire/_samples``, in the order they are shown, with the
#: dialect each is a capture of.
SAMPLES = (
    ("chat.sse", "chat"),
    ("messages.sse", "messages"),
    ("responses.sse", "responses"),
    ("gemini.sse", "gemini"),
    ("ollama.ndjson", "ollama"),
    ("cohere.sse", "cohere"),
    ("events.sse", "sse"),
)

# --- JSON forms of the decoded items ---------------------------------------------------------


def item_to_json(item: Any) -> Dict[str, Any]:
    """The JSON form of one decoded item, as ``ssewire --events`` prints it: the item's own
    ``to_dict()`` (built in the core, which knows each dialect's shape)."""
    return item.to_dict()  # type: ignore[no-any-return]


def _json_default(value: Any) -> Any:
    """What ``json.dumps`` cannot write: bytes (a Converse redacted reasoning block) as
    base64, anything else as its ``repr``."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return repr(value)


# --- output ----------------------------------------------------------------------------------


class _Out:
    """stdout with the JSON settings of this run."""

    def __init__(self, stream: IO[str], compact: bool) -> None:
        self.stream = stream
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        self.ascii = encoding not in ("utf8", "utf8sig")
        self.compact = compact

    def dumps(self, obj: Any, compact: Optional[bool] = None) -> str:
        if compact if compact is not None else self.compact:
            return json.dumps(obj, ensure_ascii=self.ascii, separators=(",", ":"), default=_json_default)
        return json.dumps(obj, ensure_ascii=self.ascii, indent=2, default=_json_default)

    def write(self, text: str) -> None:
        self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


def _err(message: str) -> None:
    sys.stderr.write("ssewire: " + message + "\n")
    sys.stderr.flush()


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def error_line(err: Any) -> str:
    """One readable line for a stream's ``StreamError``."""
    code = err.code
    kind = "stream ended early" if code == "incomplete_stream" else "stream error"
    parts = []
    if err.type is not None and err.type != code:
        parts.append(f"type={_one_line(err.type)}")
    if code is not None:
        parts.append(f"code={_one_line(code)}")
    suffix = f" ({', '.join(parts)})" if parts else ""
    return f"{kind}: {_one_line(err.message) or 'unknown error'}{suffix}"


# --- input -----------------------------------------------------------------------------------


def _reads(f: Any) -> Iterator[bytes]:
    # read1 returns what is available (a pipe's data as it arrives) instead of waiting for a
    # full buffer, so a live stream is followed as it comes.
    read = getattr(f, "read1", None) or f.read
    while True:
        chunk = read(_READ_SIZE)
        if not chunk:
            return
        if isinstance(chunk, str):  # a text-mode stdin replacement
            chunk = chunk.encode("utf-8")
        yield chunk


def _describe_start(head: bytes) -> str:
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:60].decode("utf-8", "replace")
    first = first.splitlines()[0] if first else ""
    return repr(first[:40] + ("..." if len(first) > 40 else ""))


def _not_a_stream(asm: _Assembly, n_items: int) -> Optional[str]:
    """Why the input is not an event stream (for exit status 2), or ``None`` if it is one."""
    head = bytes(asm.head)
    if not _first_significant(head):
        return "the input is empty" if not asm.size else "the input is only white space"
    err = asm.error
    if err is not None and err.code == "json_body":
        return "the input is a JSON document, not an event stream (and not an error body)"
    not_sse = err is not None and err.code == "not_event_stream"
    if not_sse or (n_items == 0 and not _core._is_event_stream(head)):
        return (
            "the input is not an event stream: no data:, event:, id:, retry: or comment line "
            f"in its first {min(asm.size, SNIFF_LIMIT):,} bytes (it starts with {_describe_start(head)})"
        )
    return None


def _is_rejected_json_item(item: Any, asm: _Assembly) -> bool:
    """The error item of a body that is not an event stream (a JSON document that is no
    error, an HTML page...): exit status 2, not an event."""
    return isinstance(item, _core.ErrorItem) and item.error.code in ("not_event_stream", "json_body")


# --- running ---------------------------------------------------------------------------------


def _process(reads: Iterator[bytes], dialect: str, events: bool, out: _Out) -> Tuple[int, Optional[str]]:
    """Read one body; print its events or its result. Returns (exit status, dialect used)."""
    asm = _Assembly(dialect, record_too_large=True)
    n_items = 0
    malformed: List[Any] = []  # the first malformed frame's item, then a count
    n_malformed = 0

    def emit(items: List[Any]) -> None:
        nonlocal n_items, n_malformed
        if not items:
            return
        n_items += len(items)
        lines = []
        for item in items:
            if isinstance(item, _core.ErrorItem) and item.kind == "malformed_json":
                n_malformed += 1
                if not malformed:
                    malformed.append(item)
            if events and not _is_rejected_json_item(item, asm):
                lines.append(out.dumps(item_to_json(item), compact=True) + "\n")
        if lines:
            out.write("".join(lines))
            out.flush()

    for read in reads:
        emit(asm.feed(read))
    emit(asm.finish())

    reason = _not_a_stream(asm, n_items)
    if reason is not None:
        _err(reason)
        return EXIT_USAGE, asm.dialect
    if not events:
        out.write(out.dumps(asm.result()) + "\n")
        out.flush()
    status = EXIT_OK
    if malformed:
        first = malformed[0].error.message
        _err(
            f"warning: skipped {n_malformed} frame{'s' if n_malformed > 1 else ''} whose "
            f"JSON did not decode (first: {_one_line(first)})"
        )
    for e in asm.too_large:
        _err(f"event too large: {_one_line(e)}")
        status = EXIT_STREAM_ERROR
    err = asm.error
    if err is not None:
        _err(error_line(err))
        status = EXIT_STREAM_ERROR
    return status, asm.dialect


def _open_input(name: str) -> Any:
    if name == "-":
        stdin = sys.stdin
        return getattr(stdin, "buffer", stdin)
    return open(name, "rb")


def _run_file(args: argparse.Namespace, out: _Out) -> int:
    try:
        f = _open_input(args.file)
    except OSError as e:
        hint = (
            " (the benchmark: python benches/side_by_side.py, from a clone)" if args.file == "bench" else ""
        )
        _err(f"cannot read {args.file}: {e.strerror or e}{hint}")
        return EXIT_USAGE
    try:
        status, _ = _process(_reads(f), args.dialect, args.events, out)
    except BrokenPipeError:  # stdout closed: handled in main()
        raise
    except OSError as e:  # a directory, an I/O error while reading
        _err(f"cannot read {args.file}: {e.strerror or e}")
        return EXIT_USAGE
    finally:
        if f is not getattr(sys.stdin, "buffer", sys.stdin):
            f.close()
    return status


def _sample_bytes(name: str) -> bytes:
    from importlib import resources

    return (resources.files("ssewire") / "_samples" / name).read_bytes()


def _run_samples(args: argparse.Namespace, out: _Out) -> int:
    chosen = [(n, d) for n, d in SAMPLES if args.dialect in ("auto", d)]
    status = EXIT_OK
    for i, (name, _) in enumerate(chosen):
        body = _sample_bytes(name)
        # The header names the dialect ssewire detects (or was told) on this capture.
        if args.dialect == "auto":
            from ssewire._api import detect_dialect

            dialect = detect_dialect(body[:SNIFF_LIMIT])
        else:
            dialect = args.dialect
        what = "events, one per line" if args.events else "assembled"
        out.write(("\n" if i else "") + f"== sample {name} ({len(body):,} bytes, {dialect}): {what} ==\n")
        out.flush()
        code, _ = _process(iter((body,)), args.dialect, args.events, out)
        status = max(status, code)
    if not args.events and not args.json:
        _err("(these are the sample captures shipped with ssewire; give a FILE or - for stdin)")
    return status


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ssewire",
        usage=f"%(prog)s [FILE|-] [--dialect {'|'.join(('auto', *DIALECTS))}] [--events] [--json]\n"
        "       %(prog)s translate FILE --to DIALECT\n"
        "       %(prog)s gateway --upstream URL [--upstream-dialect DIALECT] ...",
        description=(
            "Read a captured raw LLM streaming response body (text/event-stream) and print the "
            "final object it assembles, as JSON: a chat.completion (OpenAI Chat Completions), a "
            "message (Anthropic Messages), a response (OpenAI Responses), a GenerateContentResponse "
            "(Google Gemini), or the list of events "
            "of any other event stream. With no FILE, runs on the sample captures shipped "
            "with ssewire."
        ),
        epilog=(
            "exit status: 0 complete stream; 3 the stream carried an error or ended before its "
            "terminal marker (the partial result is still printed, the error goes to stderr); "
            "2 unusable arguments or input that is not an event stream.  "
            "'ssewire gateway --help' describes the gateway. The side-by-side benchmark lives in "
            "the repository: python benches/side_by_side.py (a file named bench: ./bench)."
        ),
    )
    parser.add_argument(
        "file",
        nargs="?",
        metavar="FILE|-",
        help="the captured response body; - reads standard input (e.g. curl -N ... | ssewire -)",
    )
    parser.add_argument(
        "--dialect",
        choices=("auto", *DIALECTS),
        default="auto",
        help="how to read the stream (default: auto, detected from its first bytes)",
    )
    parser.add_argument(
        "--events",
        action="store_true",
        help="print one JSON line per decoded event instead of the assembled object",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="compact JSON on one line (default: indented by 2)",
    )
    parser.add_argument("--version", action="version", version=f"ssewire {_core.__version__}")
    return parser


def _translate_main(argv: Sequence[str]) -> int:
    """``ssewire translate FILE|- --to DIALECT [--from DIALECT]``: the stream translated into
    another dialect (API.md section 8), written to stdout as it is read. Exit status as for the
    main job: 3 when the upstream carried an error or ended before its terminal marker."""
    parser = argparse.ArgumentParser(
        prog="ssewire translate",
        description="Translate a captured LLM stream into another dialect, event by event, to stdout.",
    )
    parser.add_argument("file", metavar="FILE", help="a captured response body, or - for stdin")
    names = [spec["name"] for spec in _core.DIALECTS if spec["translates"]]
    parser.add_argument("--to", required=True, choices=names, help="the target dialect")
    parser.add_argument("--from", dest="source", default="auto", choices=("auto", *names),
                        help="the source dialect (default: told by its first events)")  # fmt: skip
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    from ssewire._translate import Translator

    try:
        f = _open_input(args.file)
    except OSError as e:
        _err(f"cannot read {args.file}: {e.strerror or e}")
        return EXIT_USAGE
    t = Translator(args.source, args.to)
    out = getattr(sys.stdout, "buffer", None)
    try:
        for piece in t.iter(_reads(f)):
            if piece:
                if out is not None:
                    out.write(piece)
                    out.flush()
                else:  # a text-only stdout replacement
                    sys.stdout.write(piece.decode("utf-8"))
    except OSError as e:
        _err(f"cannot read {args.file}: {e.strerror or e}")
        return EXIT_USAGE
    finally:
        if f is not getattr(sys.stdin, "buffer", sys.stdin):
            f.close()
    for note in t.notes:
        _err(f"note: dropped {note}")
    source = t.source
    if source is None or not source.done or source.error is not None:
        err = None if source is None else source.error
        _err(error_line(err) if err is not None else "the upstream ended before its terminal marker")
        return EXIT_STREAM_ERROR
    return EXIT_OK


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``ssewire`` command with ``argv`` (default ``sys.argv[1:]``); returns the exit
    status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] == "translate" and not os.path.exists("translate"):
        return _translate_main(args_list[1:])
    if args_list and args_list[0] == "accumulate" and not os.path.exists("accumulate"):
        _err(
            "there is no 'accumulate' subcommand: the main job assembles the final object; run "
            f"'ssewire FILE' (add --dialect {'|'.join(DIALECTS[:-1])} to name the dialect), or "
            "'ssewire translate FILE --to DIALECT' to translate a stream"
        )
        return EXIT_USAGE
    if args_list and args_list[0] == "gateway" and not os.path.exists("gateway"):
        try:
            from ssewire import gateway
        except ImportError as e:
            _err(str(e))
            return EXIT_USAGE
        try:
            return gateway.main(args_list[1:])
        except KeyboardInterrupt:
            return 130
    if args_list and args_list[0] == "bench" and not os.path.exists("bench"):
        _err(
            "the side-by-side benchmark is not part of the installed package (it imports the "
            "SDKs' private modules): from a clone, run 'python benches/side_by_side.py --quick'"
        )
        return EXIT_USAGE
    try:
        args = make_parser().parse_args(args_list)
    except SystemExit as e:  # --help, --version, or a usage error already reported
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    out = _Out(sys.stdout, compact=args.json)
    try:
        if args.file is None:
            return _run_samples(args, out)
        return _run_file(args, out)
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return 130
    except BrokenPipeError:
        # The reader went away (`ssewire --events big.sse | head`): stop quietly. Point stdout
        # at /dev/null so the interpreter's final flush does not complain again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
