"""Deterministic, realistic LLM stream bodies for benchmarks, tests and ``ssewire bench``.

Each generator returns the raw ``text/event-stream`` body (``bytes``) a server would send, built
from a seeded ``random.Random``: the same arguments always give the same bytes, on every
platform and Python version (only ``Random.random()`` is drawn from, whose sequence CPython
keeps stable for an integer seed). JSON is written like real servers write it: compact
(``separators=(",", ":")``) and with non-ASCII text as raw UTF-8 (``ensure_ascii=False``), so
multi-byte characters appear in the body and socket-sized reads cut through them.

Token texts are drawn from a vocabulary of realistic pieces of 1-12 characters: word pieces
with their leading space, punctuation, newlines, Markdown and code fragments, quotes and
backslashes (which JSON escapes), and some non-ASCII text (accents, CJK, emoji).

* :func:`chat_stream` - OpenAI Chat Completions (``chat.completion.chunk`` frames).
* :func:`messages_stream` - Anthropic Messages (named events).
* :func:`responses_stream` - OpenAI Responses (typed ``response.*`` frames).
* :func:`large_event_stream` - one event with a multi-megabyte ``data:`` line (an image).
* :func:`chunked` - cut a body into socket-sized reads (fixed or irregular sizes).
* :func:`event_reads` - cut a body into one read per event (a live, token-paced stream).

Cost: linear in the size of the body produced.
"""

from __future__ import annotations

import base64
import json
import random
from bisect import bisect_right
from itertools import accumulate
from typing import Any, Dict, List, Optional, Tuple, Union

__all__ = [
    "chat_stream",
    "messages_stream",
    "responses_stream",
    "gemini_stream",
    "large_event_stream",
    "chunked",
    "event_reads",
    "tokens",
]

# (piece, weight). Sizes 1-12 characters; roughly the mix of a chat answer with a code sample.
_VOCAB: Tuple[Tuple[str, int], ...] = (
    (" the", 40), (" a", 25), (" of", 20), (" to", 20), (" and", 18), (" is", 15),
    (" in", 15), (" that", 10), (" it", 10), (" for", 9), (" you", 9), (" with", 8),
    (" model", 5), (" stream", 5), (" parser", 4), (" token", 4), (" event", 4),
    (" response", 3), (" server", 3), (" function", 3), (" example", 3), (" value", 3),
    (" performance", 2), (" implement", 1), (" understand", 1), ("ation", 2),
    ("ing", 8), ("ed", 6), ("ly", 4), ("er", 4), ("tion", 3), ("s", 6),
    (".", 20), (",", 18), (":", 5), (";", 2), ("!", 2), ("?", 2), (" (", 3), (")", 3),
    (" -", 3), ("'s", 3),
    ("\n", 8), ("\n\n", 6), ("\n- ", 4), ("**", 3), (" `", 3), ("`", 3), ("```", 2),
    ("python\n", 1), ("    ", 3), ("def", 1), (" return", 1), ("()", 2), (" =", 2),
    (" {", 1), ("}", 1), ("[", 1), ("]", 1), (" #", 1), ("1", 2), ("2", 2), ("0", 2),
    (" 42", 1), ("%", 1), (" +", 1),
    (' "', 3), ('"', 3), ('\\"', 1), ("\\", 1), ("\\n", 1), ("\t", 1), ("/", 1),
    (" café", 1), (" naïve", 1), (" résumé", 1), (" über", 1), (" año", 1),
    (" 東京", 1), ("は", 1), ("です", 1), (" 你好", 1), ("世界", 1), (" Привет", 1),
    (" 🙂", 1), ("🚀", 1), (" →", 1), ("…", 1), (" —", 1), (" ½", 1), (" €", 1),
)
_PIECES = [p for p, _ in _VOCAB]
_CUM = list(accumulate(w for _, w in _VOCAB))

# json.dumps(obj, separators=(",", ":"), ensure_ascii=False), with the encoder made once.
_DUMPS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
# Google's JSON spelling: a space after each colon, none after commas.
_GOOGLE_DUMPS = json.JSONEncoder(separators=(",", ": "), ensure_ascii=False).encode
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_HEX = "0123456789abcdef"


def _pick(rng: random.Random) -> str:
    # Weighted choice through the cumulative weights, drawing only random() (stable).
    return _PIECES[bisect_right(_CUM, rng.random() * _CUM[-1])]


def tokens(n: int, seed: int = 0) -> List[str]:
    """``n`` token texts (1-12 characters each) of a plausible model answer, deterministic
    for ``seed``."""
    rng = random.Random(seed)
    return [_pick(rng) for _ in range(n)]


def _rand_id(rng: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    return "".join(alphabet[int(rng.random() * len(alphabet))] for _ in range(n))


def _frame(obj: Any, event: Optional[str] = None) -> str:
    if event is None:
        return "data: " + _DUMPS(obj) + "\n\n"
    return "event: " + event + "\ndata: " + _DUMPS(obj) + "\n\n"


def _split_text(text: str, rng: random.Random, lo: int = 1, hi: int = 12) -> List[str]:
    """Cuts ``text`` into fragments of ``lo``-``hi`` characters (streamed JSON arguments)."""
    parts = []
    i = 0
    while i < len(text):
        k = lo + int(rng.random() * (hi - lo + 1))
        parts.append(text[i : i + k])
        i += k
    return parts


_TOOLS = (
    ("get_weather", {"location": "São Paulo, Brazil", "unit": "celsius", "days": 3}),
    ("search_docs", {"query": 'how to parse "text/event-stream"', "limit": 5,
                     "filters": {"lang": ["en", "ja"], "since": "2024-01-01"}}),
)


def chat_stream(
    n_chunks: int = 200,
    seed: int = 0,
    tool_calls: bool = False,
    usage: Union[bool, str] = True,
    reasoning: Union[bool, str] = False,
    model: str = "gpt-4o-mini-2024-07-18",
) -> bytes:
    """An OpenAI ``POST /v1/chat/completions`` stream body (``stream: true``).

    ``data: {json}\\n\\n`` frames of ``chat.completion.chunk`` objects (``id``, ``object``,
    ``created``, ``model``, ``service_tier``, ``system_fingerprint``, ``choices[{index, delta,
    logprobs: null, finish_reason}]``), then ``data: [DONE]\\n\\n``. The first chunk's delta
    carries ``role: "assistant"``; ``n_chunks`` content chunks follow, one token text each;
    then a chunk with an empty delta and the ``finish_reason``.

    ``usage``: ``True`` (default) is what api.openai.com sends with
    ``stream_options.include_usage``: ``"usage": null`` on every chunk and one last chunk with
    ``"choices": []`` and the usage object. ``"inline"`` puts the usage on the
    ``finish_reason`` chunk instead (as many compatible servers do); ``False`` sends none.

    ``reasoning``: emit about a third of the chunks as reasoning deltas before the content;
    ``True`` uses the ``reasoning_content`` delta field (DeepSeek, vLLM), a string names
    another field (``"reasoning"``).

    ``tool_calls``: after the content, two parallel tool calls stream their ``id``/``name``
    and then their JSON arguments in small fragments; ``finish_reason`` is ``"tool_calls"``.
    """
    rng = random.Random(seed)
    cid = "chatcmpl-" + _rand_id(rng, 29)
    created = 1_730_000_000 + seed
    fingerprint = "fp_" + _rand_id(rng, 10, _HEX)
    inline_usage = usage == "inline"
    null_usage = usage is True

    def chunk(delta: Dict[str, Any], finish: Optional[str] = None) -> Dict[str, Any]:
        obj: Dict[str, Any] = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "service_tier": "default",
            "system_fingerprint": fingerprint,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if null_usage:
            obj["usage"] = None
        return obj

    out = [_frame(chunk({"role": "assistant", "content": "", "refusal": None}))]
    field = None
    if reasoning:
        field = reasoning if isinstance(reasoning, str) else "reasoning_content"
    n_reason = n_chunks // 3 if field else 0
    texts = tokens(n_chunks, seed)
    for i, text in enumerate(texts):
        if i < n_reason:
            out.append(_frame(chunk({"content": None, field: text})))  # type: ignore[dict-item]
        else:
            out.append(_frame(chunk({"content": text})))
    finish = "stop"
    n_tool = 0
    if tool_calls:
        finish = "tool_calls"
        for index, (name, args) in enumerate(_TOOLS):
            call_id = "call_" + _rand_id(rng, 24)
            first = {"index": index, "id": call_id, "type": "function",
                     "function": {"name": name, "arguments": ""}}
            out.append(_frame(chunk({"tool_calls": [first]})))
            for part in _split_text(_DUMPS(args), rng):
                delta = {"tool_calls": [{"index": index, "function": {"arguments": part}}]}
                out.append(_frame(chunk(delta)))
                n_tool += 1
    last = chunk({}, finish)
    prompt = 20 + int(rng.random() * 2000)
    completion = n_chunks + n_tool
    usage_obj = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": n_reason,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    if inline_usage:
        last["usage"] = usage_obj
    out.append(_frame(last))
    if null_usage:
        tail = chunk({})
        tail["choices"] = []
        tail["usage"] = usage_obj
        out.append(_frame(tail))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode("utf-8")


def messages_stream(
    n_chunks: int = 200,
    seed: int = 0,
    tool_use: bool = False,
    thinking: bool = False,
    ping: bool = True,
    model: str = "claude-sonnet-4-5-20250929",
) -> bytes:
    """An Anthropic ``POST /v1/messages`` stream body (``stream: true``).

    Named events, each ``event: <type>\\ndata: {json}\\n\\n`` with the same ``type`` in the
    JSON: ``message_start`` (the message with empty content and input usage), a ``ping``
    after it (``ping=True``), for each content block ``content_block_start``,
    ``content_block_delta`` events and ``content_block_stop``, then ``message_delta`` (stop
    reason and output usage) and ``message_stop``.

    The text block streams ``n_chunks`` ``text_delta``s. ``thinking=True`` puts a thinking
    block first (about a third as many ``thinking_delta``s, then a ``signature_delta``).
    ``tool_use=True`` adds a ``tool_use`` block whose input streams as ``input_json_delta``
    fragments, and the stop reason becomes ``"tool_use"``.
    """
    rng = random.Random(seed)
    msg_id = "msg_01" + _rand_id(rng, 22)
    input_tokens = 20 + int(rng.random() * 2000)
    out = [
        _frame(
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": input_tokens,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": 1,
                        "service_tier": "standard",
                    },
                },
            },
            "message_start",
        )
    ]
    if ping:
        out.append(_frame({"type": "ping"}, "ping"))
    index = 0
    output_tokens = 0
    if thinking:
        out.append(_frame({"type": "content_block_start", "index": index,
                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                          "content_block_start"))
        for text in tokens(max(1, n_chunks // 3), seed + 1):
            out.append(_frame({"type": "content_block_delta", "index": index,
                               "delta": {"type": "thinking_delta", "thinking": text}},
                              "content_block_delta"))
            output_tokens += 1
        signature = _rand_id(rng, 344, _ALNUM + "+/")
        out.append(_frame({"type": "content_block_delta", "index": index,
                           "delta": {"type": "signature_delta", "signature": signature}},
                          "content_block_delta"))
        out.append(_frame({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    out.append(_frame({"type": "content_block_start", "index": index,
                       "content_block": {"type": "text", "text": ""}}, "content_block_start"))
    for text in tokens(n_chunks, seed):
        out.append(_frame({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": text}}, "content_block_delta"))
        output_tokens += 1
    out.append(_frame({"type": "content_block_stop", "index": index}, "content_block_stop"))
    stop_reason = "end_turn"
    if tool_use:
        index += 1
        name, args = _TOOLS[0]
        block = {"type": "tool_use", "id": "toolu_01" + _rand_id(rng, 22), "name": name,
                 "input": {}}
        out.append(_frame({"type": "content_block_start", "index": index,
                           "content_block": block}, "content_block_start"))
        out.append(_frame({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": ""}},
                          "content_block_delta"))
        for part in _split_text(_DUMPS(args), rng):
            out.append(_frame({"type": "content_block_delta", "index": index,
                               "delta": {"type": "input_json_delta", "partial_json": part}},
                              "content_block_delta"))
            output_tokens += 1
        out.append(_frame({"type": "content_block_stop", "index": index}, "content_block_stop"))
        stop_reason = "tool_use"
    out.append(_frame({"type": "message_delta",
                       "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                       "usage": {"output_tokens": output_tokens}}, "message_delta"))
    out.append(_frame({"type": "message_stop"}, "message_stop"))
    return "".join(out).encode("utf-8")


def responses_stream(
    n_chunks: int = 200,
    seed: int = 0,
    tool_calls: bool = False,
    event_lines: bool = False,
    done_marker: bool = False,
    model: str = "gpt-4.1-2025-04-14",
) -> bytes:
    """An OpenAI ``POST /v1/responses`` stream body (``stream: true``).

    Frames of typed events, each JSON carrying ``type`` and ``sequence_number``:
    ``response.created``, ``response.in_progress``, ``response.output_item.added`` (a
    ``message`` item), ``response.content_part.added``, ``n_chunks``
    ``response.output_text.delta``, ``response.output_text.done``,
    ``response.content_part.done``, ``response.output_item.done``, and finally
    ``response.completed`` with the full response object (``output`` and ``usage``).

    ``tool_calls=True`` adds a ``function_call`` output item whose arguments stream as
    ``response.function_call_arguments.delta`` fragments. By default frames are data-only (as
    many compatible servers send them); ``event_lines=True`` also writes the ``event: <type>``
    line that api.openai.com sends. ``done_marker=True`` ends with ``data: [DONE]``.
    """
    rng = random.Random(seed)
    resp_id = "resp_" + _rand_id(rng, 48, _HEX)
    msg_id = "msg_" + _rand_id(rng, 48, _HEX)
    created = 1_730_000_000 + seed
    seq = 0
    out: List[str] = []

    def emit(obj: Dict[str, Any]) -> None:
        nonlocal seq
        obj["sequence_number"] = seq
        seq += 1
        out.append(_frame(obj, obj["type"] if event_lines else None))

    def response(status: str, output: List[Any], usage: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        return {
            "id": resp_id,
            "object": "response",
            "created_at": created,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": None,
            "model": model,
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None},
            "service_tier": "default",
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "user": None,
            "metadata": {},
        }

    emit({"type": "response.created", "response": response("in_progress", [], None)})
    emit({"type": "response.in_progress", "response": response("in_progress", [], None)})
    emit({"type": "response.output_item.added", "output_index": 0,
          "item": {"id": msg_id, "type": "message", "status": "in_progress", "content": [],
                   "role": "assistant"}})
    emit({"type": "response.content_part.added", "item_id": msg_id, "output_index": 0,
          "content_index": 0,
          "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}})
    texts = tokens(n_chunks, seed)
    for text in texts:
        emit({"type": "response.output_text.delta", "item_id": msg_id, "output_index": 0,
              "content_index": 0, "delta": text, "logprobs": []})
    full = "".join(texts)
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": full}
    emit({"type": "response.output_text.done", "item_id": msg_id, "output_index": 0,
          "content_index": 0, "text": full, "logprobs": []})
    emit({"type": "response.content_part.done", "item_id": msg_id, "output_index": 0,
          "content_index": 0, "part": part})
    message = {"id": msg_id, "type": "message", "status": "completed", "content": [part],
               "role": "assistant"}
    emit({"type": "response.output_item.done", "output_index": 0, "item": message})
    output: List[Any] = [message]
    n_tool = 0
    if tool_calls:
        name, args = _TOOLS[0]
        fc_id = "fc_" + _rand_id(rng, 48, _HEX)
        call_id = "call_" + _rand_id(rng, 24)
        arguments = _DUMPS(args)
        item = {"id": fc_id, "type": "function_call", "status": "in_progress", "arguments": "",
                "call_id": call_id, "name": name}
        emit({"type": "response.output_item.added", "output_index": 1, "item": item})
        for frag in _split_text(arguments, rng):
            emit({"type": "response.function_call_arguments.delta", "item_id": fc_id,
                  "output_index": 1, "delta": frag})
            n_tool += 1
        emit({"type": "response.function_call_arguments.done", "item_id": fc_id,
              "output_index": 1, "arguments": arguments})
        done_item = dict(item, status="completed", arguments=arguments)
        emit({"type": "response.output_item.done", "output_index": 1, "item": done_item})
        output.append(done_item)
    input_tokens = 20 + int(rng.random() * 2000)
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": n_chunks + n_tool,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + n_chunks + n_tool,
    }
    emit({"type": "response.completed", "response": response("completed", output, usage)})
    if done_marker:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode("utf-8")


def gemini_stream(
    n_chunks: int = 200,
    seed: int = 0,
    thinking: bool = False,
    function_call: bool = False,
    model: str = "gemini-2.5-flash",
) -> bytes:
    """A Gemini ``POST .../models/M:streamGenerateContent?alt=sse`` stream body.

    ``data: {json}\\r\\n\\r\\n`` frames (the Gemini API's CRLF separators, and its JSON spelling:
    ``": "`` after keys, ``","`` alone between members) of
    ``GenerateContentResponse`` chunks: ``candidates[{content: {parts, role: "model"}, index:
    0}]``, a cumulative ``usageMetadata`` on every chunk (prompt, candidates, total and, with
    thinking, thoughts token counts), ``modelVersion`` and ``responseId``. ``n_chunks`` text
    chunks of one token each; ``thinking=True`` sends about a third of them first as thought
    parts (``"thought": true``). ``function_call=True`` ends with a chunk holding a whole
    ``functionCall`` part with a ``thoughtSignature``. The last chunk has ``finishReason:
    "STOP"``. No ``[DONE]``: the body just ends.
    """
    rng = random.Random(seed)
    response_id = _rand_id(rng, 23)
    prompt = 20 + int(rng.random() * 2000)
    texts = tokens(n_chunks, seed)
    n_thought = n_chunks // 3 if thinking else 0
    out = []
    thoughts = candidates = 0

    def usage() -> Dict[str, Any]:
        u: Dict[str, Any] = {"promptTokenCount": prompt}
        if candidates:
            u["candidatesTokenCount"] = candidates
        u["totalTokenCount"] = prompt + candidates + thoughts
        u["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
        if thoughts:
            u["thoughtsTokenCount"] = thoughts
        return u

    def chunk(parts: List[Dict[str, Any]], finish: Optional[str] = None) -> str:
        candidate: Dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
        if finish:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        obj = {"candidates": [candidate], "usageMetadata": usage(), "modelVersion": model,
               "responseId": response_id}  # fmt: skip
        return "data: " + _GOOGLE_DUMPS(obj) + "\r\n\r\n"

    for i, text in enumerate(texts):
        last = i == len(texts) - 1 and not function_call
        if i < n_thought:
            thoughts += 1
            out.append(chunk([{"text": text, "thought": True}]))
        else:
            candidates += 1
            out.append(chunk([{"text": text}], "STOP" if last else None))
    if function_call:
        name, args = _TOOLS[0]
        candidates += 12
        signature = base64.b64encode(bytes(int(rng.random() * 256) for _ in range(48))).decode()
        out.append(chunk([{"functionCall": {"name": name, "args": args}, "thoughtSignature": signature}], "STOP"))
    return "".join(out).encode("utf-8")


def large_event_stream(size: int = 4 << 20, seed: int = 0) -> bytes:
    """One event whose single ``data:`` line is about ``size`` bytes: a JSON object carrying
    a base64 image, like an image-generation result (``partial_image_b64``) sent in one
    frame, followed by ``data: [DONE]``. Deterministic for ``seed``; the data line is exactly
    ``size`` bytes long after ``data: `` when ``size`` is at least 100."""
    rng = random.Random(seed)
    head = '{"type":"response.image_generation_call.partial_image","partial_image_b64":"'
    foot = '","partial_image_index":0,"sequence_number":1}'
    n = max(0, size - len(head) - len(foot))
    raw = bytes(int(rng.random() * 256) for _ in range(min(n, 3 << 12)))  # 12 KiB of noise
    b64 = base64.b64encode(raw).decode("ascii")
    payload = (b64 * (n // max(1, len(b64)) + 1))[:n]  # repeated: cheap to build, same bytes
    return ("data: " + head + payload + foot + "\n\ndata: [DONE]\n\n").encode("ascii")


def chunked(body: bytes, size: int = 4096, *, seed: Optional[int] = None) -> List[bytes]:
    """Cuts ``body`` into reads the way a socket hands them out.

    With ``seed=None`` every read is ``size`` bytes (the last one shorter). With a seed the
    sizes are irregular, drawn uniformly from 1 to ``2 * size - 1`` (mean ``size``), so
    reads end at arbitrary points: inside a line, between CR and LF, inside a multi-byte
    character. Deterministic for a seed. The pieces join back to ``body``.
    """
    if size < 1:
        raise ValueError("size must be at least 1")
    if seed is None:
        return [body[i : i + size] for i in range(0, len(body), size)]
    rng = random.Random(seed)
    top = 2 * size - 1
    reads = []
    i = 0
    n = len(body)
    while i < n:
        k = 1 + int(rng.random() * top)
        reads.append(body[i : i + k])
        i += k
    return reads


def event_reads(body: bytes, per_read: int = 1) -> List[bytes]:
    """Cuts ``body`` after every ``per_read``-th blank line (``\\n\\n``, or ``\\r\\n\\r\\n`` in a
    CRLF body such as Gemini's): one read per event, as a live stream delivers them while the
    model produces tokens one by one."""
    sep = b"\r\n\r\n" if b"\n\n" not in body and b"\r\n\r\n" in body else b"\n\n"
    reads = []
    start = 0
    count = 0
    i = body.find(sep)
    while i >= 0:
        count += 1
        if count == per_read:
            reads.append(body[start : i + len(sep)])
            start = i + len(sep)
            count = 0
        i = body.find(sep, i + len(sep))
    if start < len(body):
        reads.append(body[start:])
    return reads

