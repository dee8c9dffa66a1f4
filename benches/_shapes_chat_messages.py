"""The chat completions and Anthropic Messages stream shapes of ``_providers``: each provider's
chunks as its API writes them."""

from __future__ import annotations

import json
import random
from typing import Callable, Dict, List, Optional

from _model_text import _dump, _id, _sse, deltas

#: The delta of the first chunk of the chat providers that send one before the text.
OPENING: Dict[str, Dict[str, object]] = {
    "openai": {"role": "assistant", "content": "", "refusal": None},
    "groq": {"role": "assistant", "content": ""},
    "mistral": {"role": "assistant", "content": ""},
    "mistral reasoning": {"role": "assistant", "content": ""},
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
        "mistral reasoning": "magistral-medium-2507",
        "xai": "grok-3",
    }[provider]
    fp = "fp_" + _id(rng, 10)
    ascii_only = provider in ("openai", "azure", "groq", "together")
    out: List[str] = []
    reasoning = provider in ("deepseek", "openrouter reasoning", "mistral reasoning")
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
        elif provider == "mistral reasoning":
            # Magistral's thinking comes as content parts: a thinking part holding text parts.
            content: object = (
                [{"type": "thinking", "thinking": [{"type": "text", "text": piece}]}]
                if n < split
                else piece
            )
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}],
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
    if kind in ("thinking", "tool", "code execution"):
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
    text = pieces if kind not in ("tool", "server tools", "code execution") else pieces[: len(pieces) // 2]
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
    if kind == "code execution":
        index = _code_and_mcp(rng, ev, pieces, index + 1)
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


def _code_and_mcp(
    rng: random.Random, ev: Callable[[str, Dict[str, object]], None], pieces: List[str], index: int
) -> int:
    """Code execution and an MCP tool as Anthropic streams them (issue 47): a bash command as a
    server tool call (its input as JSON deltas), its result block whole (the command's output:
    lines, quotes and tabs escaped), a text block, an MCP tool call (input as JSON deltas) and
    its result block whole (text that holds JSON), then the answer's text."""

    def block(content_block: Dict[str, object], fragments: List[str]) -> None:
        nonlocal index
        ev("content_block_start", {"type": "content_block_start", "index": index, "content_block": content_block})
        for piece in fragments:
            ev(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}},
            )
        ev("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1

    def text(run: List[str]) -> None:
        nonlocal index
        ev("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
        for piece in run:
            ev("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})
        ev("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1

    rest = pieces[len(pieces) // 2 :]
    sid = "srvtoolu_01" + _id(rng, 22)
    command = 'python3 stats.py | tee "log 1.txt"'
    block({"type": "server_tool_use", "id": sid, "name": "bash_code_execution", "input": {}},
          deltas(json.dumps({"command": command}), rng))  # fmt: skip
    cycled = (rest * 8)[:32] or ["x"]
    stdout = "\n".join(f"{n}\t{''.join(cycled[n : n + 4]).strip()}\t\"{_id(rng, 8)}\"" for n in range(0, 24, 3))
    block({"type": "bash_code_execution_tool_result", "tool_use_id": sid,
           "content": {"type": "bash_code_execution_result", "stdout": stdout + "\n", "stderr": "", "return_code": 0,
                       "content": []}}, [])  # fmt: skip
    text(rest[: len(rest) // 3])
    mid = "mcptoolu_01" + _id(rng, 22)
    block({"type": "mcp_tool_use", "id": mid, "name": "search_issues", "server_name": "github", "input": {}},
          deltas(json.dumps({"query": "".join(rest[:2]).strip(), "limit": 5}), rng))  # fmt: skip
    found = [{"number": 100 + n, "title": "".join(cycled[n : n + 5]).strip(), "labels": ["bug", "parser"]} for n in range(5)]
    block({"type": "mcp_tool_result", "tool_use_id": mid, "is_error": False,
           "content": [{"type": "text", "text": json.dumps({"total_count": 5, "items": found})}]}, [])  # fmt: skip
    text(rest[len(rest) // 3 :])
    return index - 1


# -- OpenAI Responses --------------------------------------------------------------------------
