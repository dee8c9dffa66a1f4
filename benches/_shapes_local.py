"""Ollama and Cohere streams in the shapes their servers write (issue 50), with text that looks
like model output (``_model_text``).

Ollama (``/api/chat``): one compact JSON object a line, ``model`` and ``created_at`` first, a
new nanosecond ``created_at`` on every line, ``message`` with ``role`` and ``content`` (and
``thinking`` for a thinking model, beside an empty ``content``), ``"done": false``; a tool call
whole in one line with object arguments; the terminal line with ``done_reason``, the counts and
the durations in nanoseconds. Generate (``/api/generate``) lines carry ``response`` instead.

Cohere (``/v2/chat``): ``event:`` lines and the same ``type`` in compact JSON, ``message-start``
with the empty lists, a thinking part and a text part by index (one piece a ``content-delta``),
for a tool turn the plan pieces, a call whose arguments stream in pieces, ``message-end`` with
the usage, then ``data: [DONE]``.
"""

from __future__ import annotations

import json
import random
from typing import Any, Dict, List

from _model_text import _dump, _id, _sse


def _line(obj: Dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n"


def _ollama(rng: random.Random, pieces: List[str], kind: str) -> str:
    out: List[str] = []
    model = "qwen3:8b" if kind != "generate" else "llama3.2:3b"
    ns = rng.randrange(10**8, 9 * 10**8)

    def line(**fields: Any) -> None:
        nonlocal ns
        ns += rng.randrange(15_000_000, 40_000_000)
        at = f"2025-08-06T10:{21 + ns // 60_000_000_000 % 30:02}:{ns // 1_000_000_000 % 60:02}.{ns % 1_000_000_000:09}Z"
        out.append(_line({"model": model, "created_at": at, **fields}))

    if kind == "generate":
        for p in pieces:
            line(response=p, done=False)
        line(response="", done=True, done_reason="stop", context=[rng.randrange(128_000) for _ in range(64)],
             total_duration=2198432958, load_duration=41853666, prompt_eval_count=183,
             prompt_eval_duration=312004125, eval_count=len(pieces), eval_duration=1843014209)  # fmt: skip
        return "".join(out)
    thinking = pieces[: len(pieces) // 3] if kind in ("thinking", "tools") else []
    for p in thinking:
        line(message={"role": "assistant", "content": "", "thinking": p}, done=False)
    for p in pieces[len(thinking) :]:
        line(message={"role": "assistant", "content": p}, done=False)
    if kind == "tools":
        call = {"function": {"name": "search_docs", "arguments": {"query": " ".join(pieces[:6]), "limit": 5}}}
        line(message={"role": "assistant", "content": "", "tool_calls": [call]}, done=False)
    line(message={"role": "assistant", "content": ""}, done=True, done_reason="stop",
         total_duration=2198432958, load_duration=41853666, prompt_eval_count=183,
         prompt_eval_duration=312004125, eval_count=len(pieces), eval_duration=1843014209)  # fmt: skip
    return "".join(out)


def _cohere(rng: random.Random, pieces: List[str], kind: str) -> str:
    out: List[str] = []

    def ev(name: str, obj: Dict[str, Any]) -> None:
        out.append(_sse(_dump({"type": name, **obj} if "id" not in obj else {"id": obj.pop("id"), "type": name, **obj},
                              False), name))  # fmt: skip

    uid = f"{_id(rng, 8)}-{_id(rng, 4)}-{_id(rng, 4)}-{_id(rng, 4)}-{_id(rng, 12)}".lower()
    ev("message-start", {"id": uid, "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "",
                                                          "tool_calls": [], "citations": []}}})  # fmt: skip
    index = 0
    if kind in ("thinking", "tools"):
        ev("content-start", {"index": 0, "delta": {"message": {"content": {"type": "thinking", "thinking": ""}}}})
        for p in pieces[: len(pieces) // 3]:
            ev("content-delta", {"index": 0, "delta": {"message": {"content": {"thinking": p}}}})
        ev("content-end", {"index": 0})
        index = 1
        pieces = pieces[len(pieces) // 3 :]
    if kind == "tools":
        for p in pieces[: max(1, len(pieces) // 4)]:
            ev("tool-plan-delta", {"delta": {"message": {"tool_plan": p}}})
        ev("tool-call-start", {"index": 0, "delta": {"message": {"tool_calls": {"id": "search_docs_" + _id(rng, 12).lower(),
           "type": "function", "function": {"name": "search_docs", "arguments": ""}}}}})  # fmt: skip
        args = json.dumps({"query": " ".join(pieces[:6]), "limit": 5}, indent=4)
        for i in range(0, len(args), 6):
            ev("tool-call-delta", {"index": 0, "delta": {"message": {"tool_calls": {"function": {"arguments": args[i : i + 6]}}}}})
        ev("tool-call-end", {"index": 0})
        reason = "TOOL_CALL"
    else:
        ev("content-start", {"index": index, "delta": {"message": {"content": {"type": "text", "text": ""}}}})
        for p in pieces:
            ev("content-delta", {"index": index, "delta": {"message": {"content": {"text": p}}}})
        ev("content-end", {"index": index})
        reason = "COMPLETE"
    ev("message-end", {"delta": {"finish_reason": reason, "usage": {
        "billed_units": {"input_tokens": 29, "output_tokens": len(pieces)},
        "tokens": {"input_tokens": 1212, "output_tokens": len(pieces) + 2}, "cached_tokens": 0}}})  # fmt: skip
    out.append("data: [DONE]\n\n")
    return "".join(out)
