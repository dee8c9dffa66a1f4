"""The OpenAI Responses and Gemini stream shapes of ``_providers``: each API's events as it
writes them (and Gemini's answers of about seven chunks)."""

from __future__ import annotations

import json
import random
import string
from typing import Callable, Dict, List

from _model_text import _dump, _id, _sse, deltas


def _responses(rng: random.Random, pieces: List[str], kind: str) -> str:
    out: List[str] = []
    seq = 0
    rid = "resp_" + _id(rng, 48)

    def ev(obj: Dict[str, object]) -> None:
        # OpenAI writes the sequence number second, right after the type (captured streams:
        # `{"type":"response.output_text.delta","sequence_number":5,"item_id":...}`).
        nonlocal seq
        obj = {"type": obj["type"], "sequence_number": seq, **{k: v for k, v in obj.items() if k != "type"}}
        seq += 1
        out.append(_sse(_dump(obj, False), str(obj["type"])))

    base = {
        "id": rid,
        "object": "response",
        "created_at": 1753190400,
        "status": "in_progress",
        "model": "gpt-5-2025-08-07",
        "output": [],
        "usage": None,
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "temperature": 1.0,
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
    }
    ev({"type": "response.created", "response": dict(base)})
    ev({"type": "response.in_progress", "response": dict(base)})
    output = []
    index = 0
    if kind == "reasoning":
        rs = "rs_" + _id(rng, 48)
        summary = pieces[: len(pieces) // 3]
        pieces = pieces[len(pieces) // 3 :]
        ev(
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"id": rs, "type": "reasoning", "summary": []},
            }
        )
        ev(
            {
                "type": "response.reasoning_summary_part.added",
                "item_id": rs,
                "output_index": 0,
                "summary_index": 0,
                "part": {"type": "summary_text", "text": ""},
            }
        )
        for piece in summary:
            ev(
                {
                    "type": "response.reasoning_summary_text.delta",
                    "item_id": rs,
                    "output_index": 0,
                    "summary_index": 0,
                    "delta": piece,
                    "obfuscation": _id(rng, rng.randint(1, 12)),
                }
            )
        whole = "".join(summary)
        ev(
            {
                "type": "response.reasoning_summary_text.done",
                "item_id": rs,
                "output_index": 0,
                "summary_index": 0,
                "text": whole,
            }
        )
        ev(
            {
                "type": "response.reasoning_summary_part.done",
                "item_id": rs,
                "output_index": 0,
                "summary_index": 0,
                "part": {"type": "summary_text", "text": whole},
            }
        )
        item = {"id": rs, "type": "reasoning", "summary": [{"type": "summary_text", "text": whole}]}
        ev({"type": "response.output_item.done", "output_index": 0, "item": item})
        output.append(item)
        index = 1
    if kind in ("code interpreter", "shell"):
        tool_pieces = pieces[: len(pieces) // 2]
        pieces = pieces[len(pieces) // 2 :]
        item = (_code_interpreter if kind == "code interpreter" else _shell)(rng, ev, tool_pieces, index)
        output.append(item)
        index += 1
    if kind == "function":
        fc = "fc_" + _id(rng, 48)
        args = json.dumps({"query": "".join(pieces)})
        ev(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {
                    "id": fc,
                    "type": "function_call",
                    "status": "in_progress",
                    "arguments": "",
                    "call_id": "call_" + _id(rng, 24),
                    "name": "search",
                },
            }
        )
        for piece in deltas(args, rng):
            ev(
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": fc,
                    "output_index": index,
                    "delta": piece,
                    "obfuscation": _id(rng, rng.randint(1, 12)),
                }
            )
        ev(
            {
                "type": "response.function_call_arguments.done",
                "item_id": fc,
                "output_index": index,
                "arguments": args,
            }
        )
        item = {
            "id": fc,
            "type": "function_call",
            "status": "completed",
            "arguments": args,
            "call_id": "call_x",
            "name": "search",
        }
        ev({"type": "response.output_item.done", "output_index": index, "item": item})
        output.append(item)
    else:
        mid = "msg_" + _id(rng, 48)
        ev(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {
                    "id": mid,
                    "type": "message",
                    "status": "in_progress",
                    "content": [],
                    "role": "assistant",
                },
            }
        )
        ev(
            {
                "type": "response.content_part.added",
                "item_id": mid,
                "output_index": index,
                "content_index": 0,
                "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
            }
        )
        for piece in pieces:
            ev(
                {
                    "type": "response.output_text.delta",
                    "item_id": mid,
                    "output_index": index,
                    "content_index": 0,
                    "delta": piece,
                    "logprobs": [],
                    "obfuscation": _id(rng, rng.randint(1, 12)),
                }
            )
        whole = "".join(pieces)
        ev(
            {
                "type": "response.output_text.done",
                "item_id": mid,
                "output_index": index,
                "content_index": 0,
                "text": whole,
                "logprobs": [],
            }
        )
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": whole}
        ev(
            {
                "type": "response.content_part.done",
                "item_id": mid,
                "output_index": index,
                "content_index": 0,
                "part": part,
            }
        )
        item = {"id": mid, "type": "message", "status": "completed", "content": [part], "role": "assistant"}
        ev({"type": "response.output_item.done", "output_index": index, "item": item})
        output.append(item)
    done = dict(
        base,
        status="completed",
        output=output,
        usage={
            "input_tokens": 300,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": len(pieces),
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 300 + len(pieces),
        },
    )
    ev({"type": "response.completed", "response": done})
    return "".join(out)


def _code_interpreter(
    rng: random.Random, ev: Callable[[Dict[str, object]], None], pieces: List[str], index: int
) -> Dict[str, object]:
    """A code interpreter call as OpenAI streams it: its code as deltas, then its status events."""
    ci = "ci_" + _id(rng, 48)
    container = "cntr_" + _id(rng, 48)
    code = "import pandas as pd\n" + "".join(f"print({p!r})\n" for p in pieces[:: max(1, len(pieces) // 40)])
    ev(
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {
                "id": ci,
                "type": "code_interpreter_call",
                "status": "in_progress",
                "code": "",
                "container_id": container,
                "outputs": None,
            },
        }
    )
    ev({"type": "response.code_interpreter_call.in_progress", "output_index": index, "item_id": ci})
    for piece in deltas(code, rng):
        ev(
            {
                "type": "response.code_interpreter_call_code.delta",
                "output_index": index,
                "item_id": ci,
                "delta": piece,
                "obfuscation": _id(rng, rng.randint(1, 12)),
            }
        )
    ev(
        {
            "type": "response.code_interpreter_call_code.done",
            "output_index": index,
            "item_id": ci,
            "code": code,
        }
    )
    ev({"type": "response.code_interpreter_call.interpreting", "output_index": index, "item_id": ci})
    ev({"type": "response.code_interpreter_call.completed", "output_index": index, "item_id": ci})
    item = {
        "id": ci,
        "type": "code_interpreter_call",
        "status": "completed",
        "code": code,
        "container_id": container,
        "outputs": None,
    }
    ev({"type": "response.output_item.done", "output_index": index, "item": item})
    return item


def _shell(
    rng: random.Random, ev: Callable[[Dict[str, object]], None], pieces: List[str], index: int
) -> Dict[str, object]:
    """A shell call as OpenAI streams it: each command's text as deltas that carry its
    `command_index`."""
    sh = "sh_" + _id(rng, 48)
    commands = [
        "grep -rn " + json.dumps("".join(pieces[i : i + 3]).strip()) + " src/ | head -n 20"
        for i in range(0, min(len(pieces), 30), 3)
    ]
    ev(
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {
                "id": sh,
                "type": "shell_call",
                "status": "in_progress",
                "call_id": "call_" + _id(rng, 24),
                "action": {"commands": [], "timeout_ms": None, "max_output_length": None},
            },
        }
    )
    for n, command in enumerate(commands):
        ev(
            {
                "type": "response.shell_call_command.added",
                "output_index": index,
                "command_index": n,
                "command": "",
            }
        )
        for piece in deltas(command, rng):
            ev(
                {
                    "type": "response.shell_call_command.delta",
                    "output_index": index,
                    "command_index": n,
                    "delta": piece,
                    "obfuscation": _id(rng, rng.randint(1, 12)),
                }
            )
        ev(
            {
                "type": "response.shell_call_command.done",
                "output_index": index,
                "command_index": n,
                "command": command,
            }
        )
    item = {
        "id": sh,
        "type": "shell_call",
        "status": "completed",
        "call_id": "call_x",
        "action": {"commands": commands, "timeout_ms": None, "max_output_length": None},
    }
    ev({"type": "response.output_item.done", "output_index": index, "item": item})
    return item


# -- Gemini ------------------------------------------------------------------------------------


def _gemini(rng: random.Random, pieces: List[str]) -> str:
    out: List[str] = []
    rid = _id(rng, 22)
    total = 0
    for n, piece in enumerate(pieces):
        total += 1
        chunk: Dict[str, object] = {
            "candidates": [{"content": {"parts": [{"text": piece}], "role": "model"}, "index": 0}],
            "usageMetadata": {
                "promptTokenCount": 87,
                "candidatesTokenCount": total,
                "totalTokenCount": 87 + total,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 87}],
            },
            "modelVersion": "gemini-2.5-flash",
            "responseId": rid,
        }
        if n == len(pieces) - 1:
            chunk["candidates"][0]["finishReason"] = "STOP"  # type: ignore[index]
        # Google's JSON spelling: ": " after a key, ", " between members.
        out.append("data: " + json.dumps(chunk, ensure_ascii=False) + "\r\n\r\n")
    return "".join(out)


#: The text of a seven-chunk Gemini answer: this many pieces (about 400 tokens), whatever the
#: corpus' length (the stream is seven chunks, not one per piece).
SEVEN_PIECES = 140


def _gemini_seven(rng: random.Random, pieces: List[str], call: bool) -> str:
    """A Gemini answer as the API streams it today (issue 47): about seven chunks, each a whole
    ``GenerateContentResponse``. The first holds the thought summary (``thought: true``); the
    answer's text follows in growing chunks, its first part with a ``thoughtSignature``;
    ``usageMetadata`` (with its ``promptTokensDetails`` list and the thought count) on every
    chunk, ``modelVersion`` and ``responseId`` on every chunk; the last chunk has the finish
    reason and the grounding of a search (sources, the supports that cite them, the queries).
    With ``call``: the last text chunk is followed by a chunk of one whole function call."""
    text = pieces[:SEVEN_PIECES]
    rid = _id(rng, 22)
    prompt, thoughts = 1200 + rng.randint(0, 800), 300 + rng.randint(0, 900)
    # Chunk sizes grow as Gemini's do: a short first answer chunk, then longer ones.
    cuts = [0, 4, 14, 32, 58, 92, len(text)]
    segments = ["".join(text[a:b]) for a, b in zip(cuts, cuts[1:]) if a < len(text)]
    summary = "**Planning the answer**\n\nI'm considering " + "".join(text[:12]).strip() + "."
    out: List[str] = []
    sent = 0

    def usage(final: bool) -> Dict[str, object]:
        u: Dict[str, object] = {
            "promptTokenCount": prompt,
            "totalTokenCount": prompt + thoughts + sent,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
            "thoughtsTokenCount": thoughts,
        }
        if sent:
            u = {"promptTokenCount": prompt, "candidatesTokenCount": sent, **u}
        if final:
            u["candidatesTokensDetails"] = [{"modality": "TEXT", "tokenCount": sent}]
        return u

    def chunk(parts: List[Dict[str, object]], extra: Dict[str, object], final: bool) -> None:
        candidate: Dict[str, object] = {"content": {"parts": parts, "role": "model"}, **extra, "index": 0}
        body = {"candidates": [candidate], "usageMetadata": usage(final), "modelVersion": "gemini-2.5-flash",
                "responseId": rid}
        out.append("data: " + json.dumps(body, ensure_ascii=False) + "\r\n\r\n")

    chunk([{"text": summary, "thought": True}], {}, False)
    for n, segment in enumerate(segments):
        sent += max(1, len(segment) // 4)
        part: Dict[str, object] = {"text": segment}
        if n == 0:
            part["thoughtSignature"] = _b64(rng, 180)
        last = n == len(segments) - 1 and not call
        chunk([part], _grounding(rng) if last else {}, last)
    if call:
        sent += 24
        args = {"query": "".join(text[:6]).strip(), "max_results": 5, "filters": {"recent": True}}
        chunk([{"functionCall": {"name": "web_search", "args": args}}], {"finishReason": "STOP"}, True)
    return "".join(out)


def _gemini_two(rng: random.Random, pieces: List[str]) -> str:
    """A short Gemini answer as the API streams it today (issue 47): two chunks, spelled as
    Google writes its JSON (``": "`` after a key, no space after a comma). The first holds the
    whole text; the last an empty text with the ``thoughtSignature`` and the finish reason.
    ``usageMetadata`` (with ``serviceTier``), ``modelVersion`` and ``responseId`` on both."""
    text = "".join(pieces[:24])
    rid = _id(rng, 23)
    prompt, thoughts = 5 + rng.randint(0, 400), 60 + rng.randint(0, 400)
    sent = max(1, len(text) // 4)
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": sent,
        "totalTokenCount": prompt + sent + thoughts,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        "thoughtsTokenCount": thoughts,
        "serviceTier": "standard",
    }
    out = []
    for part, extra in (
        ({"text": text}, {}),
        ({"text": "", "thoughtSignature": _b64(rng, 740)}, {"finishReason": "STOP"}),
    ):
        candidate = {"content": {"parts": [part], "role": "model"}, **extra, "index": 0}
        body = {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-3.7-flash",
                "responseId": rid}  # fmt: skip
        out.append("data: " + json.dumps(body, ensure_ascii=False, separators=(",", ": ")) + "\r\n\r\n")
    return "".join(out)


def _b64(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(n))


def _grounding(rng: random.Random) -> Dict[str, object]:
    """The last chunk's finish reason and a search's grounding metadata."""
    sources = [{"web": {"uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/" + _id(rng, 120),
                        "title": t, "domain": t}} for t in ("python.org", "docs.rs", "wikipedia.org")]  # fmt: skip
    supports = [{"segment": {"startIndex": 40 * i, "endIndex": 40 * i + 38, "text": "a cited sentence " * 2},
                 "groundingChunkIndices": [i % 3], "confidenceScores": [0.9]} for i in range(4)]  # fmt: skip
    return {
        "finishReason": "STOP",
        "groundingMetadata": {
            "searchEntryPoint": {"renderedContent": "<style>.container{}</style><div>" + _id(rng, 200) + "</div>"},
            "groundingChunks": sources,
            "groundingSupports": supports,
            "webSearchQueries": ["streaming parser speed", "server-sent events python"],
        },
    }


def _padded(body: str, seed: str) -> str:
    """``body`` as Anthropic's API sends it today: about nine data lines of ten (``message_start``
    included) with a run of spaces before the payload's closing brace, of another length on
    each (padding against token-length side channels)."""
    rng = random.Random(seed)
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("data: {") and line.endswith("}") and rng.random() < 0.9:
            lines[i] = line[:-1] + " " * rng.randint(1, 40) + "}"
    return "\n".join(lines)
