"""Streams in the shapes providers send (issue 25): one corpus per provider shape, with text
that looks like model output.

The text. Real model output is markdown and code: most deltas of a few tokens hold a newline,
a quote, a backtick or a non-ASCII character, which the JSON encoders of the providers write
as escapes (newlines and quotes always; non-ASCII as ``\\uXXXX`` by some, raw UTF-8 by others).
``model_text`` draws documents from a small grammar of paragraphs, bulleted and numbered
lists, headings, inline code, quoted phrases and fenced code blocks with string literals, and
``deltas`` cuts them into pieces of 1-4 word-ish tokens (3-20 characters, as the tokenizers
of the providers cut them). On the default seed ~45% of the deltas hold a character that JSON
escapes (``escape_rate``) — where the third release's generator had ~7%.

The shapes. Each provider's chunk is written as its API writes it: the key order, the vendor
keys (OpenAI's ``obfuscation`` padding and ``service_tier``, Azure's ``content_filter_results``,
Groq's ``x_groq``, DeepSeek's ``reasoning_content``, OpenRouter's ``provider`` /
``native_finish_reason`` / ``reasoning_details: []``, Together's choice ``text``, ``seed`` and
delta ``token_id``, Mistral's, xAI's), Anthropic text, thinking and tool-input deltas, Responses
text / reasoning-summary / function-argument deltas with their ``.done`` events, Gemini chunks
with cumulative usage. Values that change per chunk (ids of tokens, padding) change here too.
No shape is tuned to ssewire: they are the providers' documented and captured forms.
"""

from __future__ import annotations

import json
import random
import string
from typing import Callable, Dict, List, Optional, Tuple

_WORDS = (
    "the model stream parser token event reads bytes each frame data field line server client "
    "response request message content delta choice usage gateway proxy latency buffer socket "
    "a an of to in and or for with on by from at as is are was be can will this that these it "
    "we you they function value result error retry timeout header body json python rust fast "
    "first next then when while because however therefore example output input item index"
).split()
_NON_ASCII = ["café", "naïve", "→", "—", "“quoted”", "€", "日本語", "😀", "é"]


def model_text(rng: random.Random, paragraphs: int = 40) -> str:
    """A markdown document as models write them."""
    out: List[str] = []

    def sentence() -> str:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 18))]
        roll = rng.random()
        if roll < 0.18:
            i = rng.randrange(len(words))
            words[i] = f"`{words[i]}()`"
        elif roll < 0.30:
            i = rng.randrange(len(words))
            words[i] = f'"{words[i]}"'
        elif roll < 0.36:
            words[rng.randrange(len(words))] = rng.choice(_NON_ASCII)
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice([".", ".", ".", ":", "?", "!"])

    for _ in range(paragraphs):
        kind = rng.random()
        if kind < 0.15:
            out.append("## " + " ".join(rng.choice(_WORDS) for _ in range(3)).title())
        elif kind < 0.35:
            bullet = rng.choice(["- ", "* ", "1. "])
            out.append("\n".join(bullet + sentence() for _ in range(rng.randint(2, 5))))
        elif kind < 0.47:
            lines = []
            for _ in range(rng.randint(2, 7)):
                name = rng.choice(_WORDS)
                lines.append(
                    rng.choice(
                        [
                            f'    {name} = parse("{rng.choice(_WORDS)}\\n")',
                            f'    if {name} is None:\n        return {{"{name}": {rng.randint(0, 99)}}}',
                            f"    print(f'{{{name}!r}}')  # {rng.choice(_WORDS)}",
                        ]
                    )
                )
            out.append("```python\ndef " + rng.choice(_WORDS) + "(data):\n" + "\n".join(lines) + "\n```")
        else:
            out.append(" ".join(sentence() for _ in range(rng.randint(2, 5))))
    return "\n\n".join(out)


def deltas(text: str, rng: random.Random) -> List[str]:
    """``text`` cut into pieces of 1-4 tokens (a token: a word with its leading space, a run of
    punctuation, a newline, a short run of spaces)."""
    tokens: List[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        j = i + 1
        if c == " " and j < len(text) and text[j].isalnum():
            while j < len(text) and text[j].isalnum():
                j += 1
        elif c.isalnum():
            while j < len(text) and text[j].isalnum() and j - i < 8:
                j += 1
        elif c == " ":
            while j < len(text) and text[j] == " " and j - i < 4:
                j += 1
        tokens.append(text[i:j])
        i = j
    out: List[str] = []
    i = 0
    while i < len(tokens):
        n = rng.choice([1, 1, 1, 2, 2, 3, 4])
        out.append("".join(tokens[i : i + n]))
        i += n
    return out


def escape_rate(pieces: List[str]) -> float:
    """The share of pieces whose JSON string holds an escape."""
    return sum("\\" in json.dumps(p) for p in pieces) / max(1, len(pieces))


def _id(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def _dump(obj: object, ascii_only: bool) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii_only)


def _sse(data: str, event: str = "") -> str:
    return (f"event: {event}\n" if event else "") + f"data: {data}\n\n"


# -- chat completions ------------------------------------------------------------------------


#: The delta of the first chunk of the chat providers that send one before the text.
OPENING: Dict[str, Dict[str, object]] = {
    "openai": {"role": "assistant", "content": "", "refusal": None},
    "groq": {"role": "assistant", "content": ""},
    "mistral": {"role": "assistant", "content": ""},
}


def _chat(rng: random.Random, pieces: List[str], provider: str) -> str:
    cid = {
        "together": "",
        "openrouter": "gen-" + _id(rng, 20),
        "openrouter reasoning": "gen-" + _id(rng, 20),
    }.get(provider, "chatcmpl-" + _id(rng, 29))
    created = 1753190400 + rng.randrange(10_000)
    model = {
        "openai": "gpt-4o-2024-08-06",
        "azure": "gpt-4o-2024-11-20",
        "groq": "llama-3.3-70b-versatile",
        "deepseek": "deepseek-reasoner",
        "openrouter": "openai/gpt-4o",
        "openrouter reasoning": "anthropic/claude-sonnet-4.5",
        "together": "meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "mistral": "mistral-large-latest",
        "xai": "grok-3",
    }[provider]
    fp = "fp_" + _id(rng, 10)
    ascii_only = provider in ("openai", "azure", "groq", "together")
    out: List[str] = []
    reasoning = provider in ("deepseek", "openrouter reasoning")
    split = len(pieces) // 3 if reasoning else 0

    for n, piece in enumerate(pieces):
        if provider == "openai":
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "service_tier": "default",
                "system_fingerprint": fp,
                "choices": [
                    {"index": 0, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}
                ],
                "usage": None,
                "obfuscation": _id(rng, rng.randint(1, 12)),
            }
        elif provider == "azure":
            chunk = {
                "choices": [
                    {
                        "content_filter_results": {
                            "hate": {"filtered": False, "severity": "safe"},
                            "self_harm": {"filtered": False, "severity": "safe"},
                            "sexual": {"filtered": False, "severity": "safe"},
                            "violence": {"filtered": False, "severity": "safe"},
                        },
                        "delta": {"content": piece},
                        "finish_reason": None,
                        "index": 0,
                        "logprobs": None,
                    }
                ],
                "created": created,
                "id": cid,
                "model": model,
                "obfuscation": _id(rng, rng.randint(1, 12)),
                "object": "chat.completion.chunk",
                "system_fingerprint": fp,
            }
        elif provider == "groq":
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": fp,
                "choices": [
                    {"index": 0, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}
                ],
                "x_groq": {"id": "req_" + _id(rng, 26)} if n == 0 else None,
            }
            if n:
                del chunk["x_groq"]
        elif provider == "deepseek":
            delta = (
                {"content": None, "reasoning_content": piece}
                if n < split
                else {"content": piece, "reasoning_content": None}
            )
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": fp,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
            }
        elif provider == "openrouter":
            chunk = {
                "id": cid,
                "provider": "OpenAI",
                "model": model,
                "object": "chat.completion.chunk",
                "created": created,
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "role": "assistant",
                            "content": piece,
                            "reasoning": None,
                            "reasoning_details": [],
                        },
                        "finish_reason": None,
                        "native_finish_reason": None,
                        "logprobs": None,
                    }
                ],
            }
        elif provider == "openrouter reasoning":
            # Reasoning repeated in `reasoning_details` (its text entries), `"content": ""`
            # beside it; then the answer with `"reasoning": null, "reasoning_details": []`.
            if n < split:
                delta = {
                    "role": "assistant",
                    "content": "",
                    "reasoning": piece,
                    "reasoning_details": [
                        {"type": "reasoning.text", "text": piece, "format": "anthropic-claude-v1", "index": 0}
                    ],
                }
            else:
                delta = {"role": "assistant", "content": piece, "reasoning": None, "reasoning_details": []}
            chunk = {
                "id": cid,
                "provider": "Anthropic",
                "model": model,
                "object": "chat.completion.chunk",
                "created": created,
                "choices": [
                    {
                        "index": 0,
                        "delta": delta,
                        "finish_reason": None,
                        "native_finish_reason": None,
                        "logprobs": None,
                    }
                ],
            }
        elif provider == "together":
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "text": piece,
                        "logprobs": None,
                        "finish_reason": None,
                        "seed": None,
                        "delta": {
                            "token_id": rng.randrange(128_000),
                            "role": "assistant",
                            "content": piece,
                            "tool_calls": None,
                        },
                    }
                ],
                "usage": None,
            }
        elif provider == "mistral":
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }
        else:  # xai
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": {"content": piece, "role": "assistant"}}],
                "system_fingerprint": fp,
            }
        if n == 0 and provider in OPENING:
            # The provider's first chunk names the role, with empty content (OpenAI's with
            # `"refusal": null` too); Groq's `x_groq` id comes with it.
            opening = json.loads(json.dumps(chunk))
            opening["choices"][0]["delta"] = dict(OPENING[provider])
            if "obfuscation" in opening:
                opening["obfuscation"] = _id(rng, rng.randint(1, 12))
            out.append(_sse(_dump(opening, ascii_only)))
            chunk.pop("x_groq", None)
        out.append(_sse(_dump(chunk, ascii_only)))
    usage = {"prompt_tokens": 211, "completion_tokens": len(pieces), "total_tokens": 211 + len(pieces)}
    last = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": usage,
    }
    out.append(_sse(_dump(last, ascii_only)))
    out.append("data: [DONE]\n\n")
    return "".join(out)


def _chat_tools(rng: random.Random, pieces: List[str]) -> str:
    """A tool-call turn as OpenAI streams it: a sentence of text, then one call whose
    ``arguments`` (JSON text, so every quote is escaped) come as deltas, each chunk with
    OpenAI's keys and ``obfuscation`` padding; ``finish_reason: "tool_calls"``."""
    cid = "chatcmpl-" + _id(rng, 29)
    created = 1753190400 + rng.randrange(10_000)
    fp = "fp_" + _id(rng, 10)
    text, rest = pieces[: max(1, len(pieces) // 5)], pieces[max(1, len(pieces) // 5) :]

    def chunk(delta: Dict[str, object], finish: Optional[str] = None) -> str:
        body = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": "gpt-4.1-2025-04-14",
            "service_tier": "default",
            "system_fingerprint": fp,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            "usage": None,
            "obfuscation": _id(rng, rng.randint(1, 12)),
        }
        return _sse(_dump(body, True))

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    out += [chunk({"content": piece}) for piece in text]
    call = {
        "index": 0,
        "id": "call_" + _id(rng, 24),
        "type": "function",
        "function": {"name": "write_file", "arguments": ""},
    }
    out.append(chunk({"tool_calls": [call]}))
    args = json.dumps({"path": "src/app.py", "content": "".join(rest)})
    out += [
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in deltas(args, rng)
    ]
    out.append(chunk({}, "tool_calls"))
    out.append("data: [DONE]\n\n")
    return "".join(out)


# -- Anthropic Messages ------------------------------------------------------------------------


def _messages(rng: random.Random, pieces: List[str], kind: str) -> str:
    out: List[str] = []
    mid = "msg_01" + _id(rng, 22)

    def ev(name: str, obj: Dict[str, object]) -> None:
        out.append(_sse(_dump(obj, False), name))

    ev(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 412,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 1,
                    "service_tier": "standard",
                },
            },
        },
    )
    index = 0
    if kind in ("thinking", "tool"):
        ev(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
        )
        for piece in pieces[: len(pieces) // 3]:
            ev(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": piece},
                },
            )
        ev(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": _id(rng, 340)},
            },
        )
        ev("content_block_stop", {"type": "content_block_stop", "index": 0})
        index = 1
        pieces = pieces[len(pieces) // 3 :]
    ev(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
    )
    text = pieces if kind not in ("tool", "server tools") else pieces[: len(pieces) // 2]
    for piece in text:
        ev(
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
        )
    ev("content_block_stop", {"type": "content_block_stop", "index": index})
    if kind == "tool":
        index += 1
        ev(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_01" + _id(rng, 22),
                    "name": "write_file",
                    "input": {},
                },
            },
        )
        args = json.dumps({"path": "src/app.py", "content": "".join(pieces[len(pieces) // 2 :])})
        cut = deltas(args, rng)
        for piece in cut:
            ev(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                },
            )
        ev("content_block_stop", {"type": "content_block_stop", "index": index})
    if kind == "server tools":
        index = _server_tools(rng, ev, pieces, index + 1)
    ev(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn" if kind != "tool" else "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": len(pieces)},
        },
    )
    ev("message_stop", {"type": "message_stop"})
    return "".join(out)


def _server_tools(
    rng: random.Random, ev: Callable[[str, Dict[str, object]], None], pieces: List[str], index: int
) -> int:
    """A web search as Anthropic streams it: the server tool call's input as JSON deltas, its
    result block whole (encrypted contents), then text blocks with citations deltas."""
    sid = "srvtoolu_01" + _id(rng, 22)
    ev(
        "content_block_start",
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "server_tool_use", "id": sid, "name": "web_search", "input": {}},
        },
    )
    for piece in deltas(json.dumps({"query": "".join(pieces[:6])}), rng):
        ev(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece},
            },
        )
    ev("content_block_stop", {"type": "content_block_stop", "index": index})
    index += 1
    results = [
        {
            "type": "web_search_result",
            "title": "".join(pieces[i : i + 5]).strip(),
            "url": f"https://example.com/{_id(rng, 12)}",
            "encrypted_content": _id(rng, 600),
            "page_age": "April 3, 2025",
        }
        for i in range(0, 25, 5)
    ]
    ev(
        "content_block_start",
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "web_search_tool_result", "tool_use_id": sid, "content": results},
        },
    )
    ev("content_block_stop", {"type": "content_block_stop", "index": index})
    rest = pieces[len(pieces) // 2 :]
    step = max(1, len(rest) // 6)
    for at in range(0, len(rest), step):
        index += 1
        ev(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        )
        if at % (2 * step) == 0:
            source = results[(at // step) % len(results)]
            ev(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {
                        "type": "citations_delta",
                        "citation": {
                            "type": "web_search_result_location",
                            "cited_text": "".join(rest[at : at + 8]),
                            "url": source["url"],
                            "title": source["title"],
                            "encrypted_index": _id(rng, 120),
                        },
                    },
                },
            )
        for piece in rest[at : at + step]:
            ev(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
        ev("content_block_stop", {"type": "content_block_stop", "index": index})
    return index


# -- OpenAI Responses --------------------------------------------------------------------------


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


#: name: (dialect, builder of a body from (rng, pieces))
SHAPES: Dict[str, Tuple[str, Callable[[random.Random, List[str]], str]]] = {
    **{
        f"chat {p}": ("chat", (lambda p: lambda rng, pieces: _chat(rng, pieces, p))(p))
        for p in (
            "openai",
            "azure",
            "groq",
            "deepseek",
            "openrouter",
            "openrouter reasoning",
            "together",
            "mistral",
            "xai",
        )
    },
    "chat openai tools": ("chat", lambda rng, pieces: _chat_tools(rng, pieces)),
    "messages text": ("messages", lambda rng, pieces: _messages(rng, pieces, "text")),
    "messages thinking": ("messages", lambda rng, pieces: _messages(rng, pieces, "thinking")),
    "messages tool input": ("messages", lambda rng, pieces: _messages(rng, pieces, "tool")),
    "messages server tools": ("messages", lambda rng, pieces: _messages(rng, pieces, "server tools")),
    # Issue 47: what the API sends today, the same streams padded.
    "messages text, padded": (
        "messages",
        lambda rng, pieces: _padded(_messages(rng, pieces, "text"), f"pad:{len(pieces)}"),
    ),
    "messages server tools, padded": (
        "messages",
        lambda rng, pieces: _padded(_messages(rng, pieces, "server tools"), f"pad:{len(pieces)}"),
    ),
    "responses text": ("responses", lambda rng, pieces: _responses(rng, pieces, "text")),
    "responses reasoning": ("responses", lambda rng, pieces: _responses(rng, pieces, "reasoning")),
    "responses function": ("responses", lambda rng, pieces: _responses(rng, pieces, "function")),
    "responses code interpreter": (
        "responses",
        lambda rng, pieces: _responses(rng, pieces, "code interpreter"),
    ),
    "responses shell": ("responses", lambda rng, pieces: _responses(rng, pieces, "shell")),
    "gemini text": ("gemini", lambda rng, pieces: _gemini(rng, pieces)),
    # Issue 47: Gemini's answers are about seven chunks (every length: the same stream).
    "gemini seven chunks": ("gemini", lambda rng, pieces: _gemini_seven(rng, pieces, False)),
    "gemini seven chunks, call": ("gemini", lambda rng, pieces: _gemini_seven(rng, pieces, True)),
}


def corpus(name: str, seed: int = 0, paragraphs: int = 40, events: Optional[int] = None) -> bytes:
    """The body of provider shape ``name`` (see ``SHAPES``), deterministic for a seed. With
    ``events``, a stream of about that many events: the same shape (its opening, tool calls
    and closing events), with only as many deltas as fit, as a short agent turn is."""
    rng = random.Random(f"{name}:{seed}")
    pieces = deltas(model_text(rng, paragraphs), rng)
    if events is None:
        return SHAPES[name][1](rng, pieces).encode()

    def made(k: int) -> bytes:
        return SHAPES[name][1](random.Random(f"{name}:{seed}:{k}"), pieces[: max(1, k)]).encode()

    k = events
    for _ in range(6):  # the event count grows about linearly with the deltas
        body = made(k)
        got = body.count(b"\n\n") + body.count(b"\r\n\r\n")
        if abs(got - events) <= max(1, events // 20) or k >= len(pieces):
            break
        k = max(1, min(len(pieces), round(k * events / max(got, 1))))
    return body
