"""The two repros of issue 25, as a table: ``consume`` + ``result()`` per event on 1,000 frames
that are plain, that hold an escape in every delta, or that carry a vendor key ssewire does
not know, beside ``SSEParser`` framing the same body. Each row's ratio is to its dialect's plain
row: the fast path should take all of them (within 1.5x of plain).

    python benches/escape_table.py [--rounds N] [--events N]

Thread CPU time, best of N rounds, all rows in one run. Not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

sys.path.insert(0, str(Path(__file__).parent))

import ssewire  # noqa: E402
from consume_table import best  # noqa: E402


def messages_body(texts: List[str]) -> bytes:
    out = [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
        '"role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,'
        '"usage":{"input_tokens":10,"output_tokens":1}}}\n\n',
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        '"content_block":{"type":"text","text":""}}\n\n',
    ]
    for t in texts:
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
        out.append("event: content_block_delta\ndata: " + json.dumps(delta, separators=(",", ":")) + "\n\n")
    out.append('event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n')
    out.append(
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn",'
        '"stop_sequence":null},"usage":{"output_tokens":50}}\n\n'
    )
    out.append('event: message_stop\ndata: {"type":"message_stop"}\n\n')
    return "".join(out).encode()


def chat_body(n: int, choice: Callable[[int], str] = lambda i: "", delta: Callable[[int], str] = lambda i: "") -> bytes:
    out = []
    for i in range(n):
        out.append(
            'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'
            f'"choices":[{{"index":0,"delta":{{"content":" word{i}"{delta(i)}}},"logprobs":null,'
            f'"finish_reason":null{choice(i)}}}]}}\n\n'
        )
    out.append(
        'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'
        '"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    return "".join(out).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--events", type=int, default=1000)
    args = parser.parse_args()
    n = args.events
    rows: Dict[str, Any] = {
        "messages: plain": (ssewire.MessagesStream, messages_body([f" word{i}" for i in range(n)])),
        "messages: a newline in each delta": (ssewire.MessagesStream, messages_body([f" word{i}\n" for i in range(n)])),
        'messages: a quote and a backtick': (ssewire.MessagesStream, messages_body([f' "w{i}" `x`' for i in range(n)])),
        "messages: \\u escapes (é, an emoji)": (ssewire.MessagesStream, messages_body([f" caf\u00e9 \U0001F600 {i}" for i in range(n)])),
        "chat: plain": (ssewire.ChatCompletionStream, chat_body(n)),
        'chat: choice "text" (Together)': (ssewire.ChatCompletionStream, chat_body(n, choice=lambda i: ',"text":""')),
        'chat: delta "token_id" (Together)': (ssewire.ChatCompletionStream, chat_body(n, delta=lambda i: ',"token_id":123')),
        "chat: both, changing every chunk": (
            ssewire.ChatCompletionStream,
            chat_body(n, choice=lambda i: f',"text":" word{i}"', delta=lambda i: f',"token_id":{1000 + i}'),
        ),
    }
    print(f"{n} events; thread CPU, best of {args.rounds}; CPython {sys.version.split()[0]}\n")
    print("| stream | consume + result() | SSEParser | ÷ plain |")
    print("|---|---:|---:|---:|")
    plain: Dict[str, float] = {}
    for name, (cls, body) in rows.items():
        events = len(ssewire.SSEParser().feed(body))

        def run() -> None:
            s = cls()
            s.consume(body)
            s.result()

        t = best(run, args.rounds) / events * 1e9
        sse = best(lambda: ssewire.SSEParser().feed(body), args.rounds) / events * 1e9
        dialect = name.split(":")[0]
        plain.setdefault(dialect, t)
        print(f"| {name} | {t:.0f} ns | {sse:.0f} ns | {t / plain[dialect]:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
