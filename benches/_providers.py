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
delta ``token_id``, Mistral's (Magistral's thinking as content parts), xAI's), Anthropic text, thinking and tool-input deltas, Responses
text / reasoning-summary / function-argument deltas with their ``.done`` events, Gemini chunks
with cumulative usage. Values that change per chunk (ids of tokens, padding) change here too.
No shape is tuned to ssewire: they are the providers' documented and captured forms.
"""

from __future__ import annotations

import random
from typing import Callable, Dict, List, Optional, Tuple

from _model_text import deltas, escape_rate, model_text  # noqa: F401 (the corpus' text, re-exported)
from _shapes_chat_messages import _chat, _chat_tools, _messages
from _shapes_local import _cohere, _ollama
from _shapes_responses_gemini import (
    _gemini,
    _gemini_seven,
    _gemini_two,
    _padded,
    _responses,
)

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
            "mistral reasoning",
            "xai",
        )
    },
    "chat openai tools": ("chat", lambda rng, pieces: _chat_tools(rng, pieces)),
    "messages text": ("messages", lambda rng, pieces: _messages(rng, pieces, "text")),
    "messages thinking": ("messages", lambda rng, pieces: _messages(rng, pieces, "thinking")),
    "messages tool input": ("messages", lambda rng, pieces: _messages(rng, pieces, "tool")),
    "messages server tools": ("messages", lambda rng, pieces: _messages(rng, pieces, "server tools")),
    # Issue 47: an agent turn's other server tools, code execution and an MCP server's.
    "messages code execution, mcp": ("messages", lambda rng, pieces: _messages(rng, pieces, "code execution")),
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
    # A short answer in two chunks, spelled as Google writes its JSON (every length: the same).
    "gemini two chunks": ("gemini", _gemini_two),
    # Issue 50: the sixth and seventh dialects.
    "ollama chat": ("ollama", lambda rng, pieces: _ollama(rng, pieces, "chat")),
    "ollama thinking": ("ollama", lambda rng, pieces: _ollama(rng, pieces, "thinking")),
    "ollama tools": ("ollama", lambda rng, pieces: _ollama(rng, pieces, "tools")),
    "ollama generate": ("ollama", lambda rng, pieces: _ollama(rng, pieces, "generate")),
    "cohere text": ("cohere", lambda rng, pieces: _cohere(rng, pieces, "text")),
    "cohere thinking": ("cohere", lambda rng, pieces: _cohere(rng, pieces, "thinking")),
    "cohere tools": ("cohere", lambda rng, pieces: _cohere(rng, pieces, "tools")),
}

#: The dialects whose bodies are NDJSON (one record a line), by the core's registry.
NDJSON = {spec["name"] for spec in __import__("ssewire")._core.DIALECTS if spec["framing"] == "ndjson"}


def records(name: str, body: bytes) -> int:
    """How many events (SSE) or lines (NDJSON) ``body`` of shape ``name`` holds."""
    if SHAPES[name][0] in NDJSON:
        return body.count(b"\n")
    return body.count(b"\n\n") + body.count(b"\r\n\r\n")


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
        got = records(name, body)
        if abs(got - events) <= max(1, events // 20) or k >= len(pieces):
            break
        k = max(1, min(len(pieces), round(k * events / max(got, 1))))
    return body
