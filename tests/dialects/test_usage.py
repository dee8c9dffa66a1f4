"""``s.usage``: one usage shape for every dialect (API.md section 12), each provider's
convention resolved in the core by the rules the translation readers use. Tested on every
recorded stream of the suite: where the provider states a total, input + output equals it, and
each dialect's convention is checked on the captures that show it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional

import pytest
import ssewire
from support import paths, registry

DATA = paths.DATA
CAPTURES = sorted(p for d in registry.ALL if (DATA / d).is_dir() for p in (DATA / d).glob("*.sse"))
KEYS = {
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "total_tokens",
}


def _stated_total(dialect: str, result: Dict[str, Any]) -> Optional[int]:
    spec = next(s for s in ssewire._core.DIALECTS if s["name"] == dialect)
    usage = result.get(spec["usage_key"]) or {}
    for key in ("total_tokens", "totalTokenCount", "totalTokens"):
        if isinstance(usage.get(key), int):
            return int(usage[key])
    return None


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_input_plus_output_is_the_stated_total(capture: Path) -> None:
    dialect = capture.parent.name
    s = registry.STREAMS[dialect]()
    s.consume(capture.read_bytes())
    s.finish()
    usage = s.usage
    total = _stated_total(dialect, s.result())
    if usage is None:
        assert total is None
        return
    assert set(usage) == KEYS
    if total is not None and usage["input_tokens"] is not None and usage["output_tokens"] is not None:
        assert usage["input_tokens"] + usage["output_tokens"] == total == usage["total_tokens"]
    t = ssewire.Translator(dialect, "chat" if dialect != "chat" else "messages")
    t.feed(capture.read_bytes())
    t.finish()
    assert t.usage == usage


def _usage(dialect: str, body: bytes) -> Dict[str, Any]:
    s = registry.STREAMS[dialect]()
    s.consume(body)
    s.finish()
    assert s.usage is not None
    return dict(s.usage)


def test_each_providers_convention() -> None:
    # OpenAI: reasoning inside completion_tokens; cached inside prompt_tokens.
    chat = (
        b'data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":100,'
        b'"completion_tokens":40,"total_tokens":140,"prompt_tokens_details":{"cached_tokens":60},'
        b'"completion_tokens_details":{"reasoning_tokens":25}}}\n\ndata: [DONE]\n\n'
    )
    assert _usage("chat", chat) == {"input_tokens": 100, "output_tokens": 40, "cached_input_tokens": 60,
                                    "cache_write_tokens": None, "reasoning_tokens": 25, "total_tokens": 140}  # fmt: skip
    # xAI: reasoning outside completion_tokens, told by the total.
    xai = chat.replace(b'"total_tokens":140', b'"total_tokens":165')
    assert _usage("chat", xai)["output_tokens"] == 65 and _usage("chat", xai)["total_tokens"] == 165
    # Anthropic: input_tokens excludes cache reads and writes.
    messages = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant",'
        b'"model":"c","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":200,'
        b'"cache_creation_input_tokens":50,"output_tokens":1}}}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":30}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    assert _usage("messages", messages) == {"input_tokens": 260, "output_tokens": 30, "cached_input_tokens": 200,
                                            "cache_write_tokens": 50, "reasoning_tokens": None, "total_tokens": 290}  # fmt: skip
    # Gemini: thoughts and tool-use prompt tokens counted apart.
    gemini = (
        b'data: {"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"finishReason":"STOP"}],'
        b'"usageMetadata":{"promptTokenCount":20,"toolUsePromptTokenCount":5,"candidatesTokenCount":7,'
        b'"thoughtsTokenCount":11,"cachedContentTokenCount":8,"totalTokenCount":43}}\r\n\r\n'
    )
    assert _usage("gemini", gemini) == {"input_tokens": 25, "output_tokens": 18, "cached_input_tokens": 8,
                                        "cache_write_tokens": None, "reasoning_tokens": 11, "total_tokens": 43}  # fmt: skip


def test_a_stream_without_usage_has_none() -> None:
    s = ssewire.ChatCompletionStream()
    s.consume(
        b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
    )
    assert s.usage is None


def test_bedrock_converse_counts_the_cache_apart() -> None:
    def event(kind: str, payload: str) -> bytes:
        return ssewire.encode_eventstream_message(
            {":event-type": kind, ":message-type": "event"}, payload.encode()
        )

    body = (
        event("messageStart", '{"role":"assistant"}')
        + event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"ok"}}')
        + event("messageStop", '{"stopReason":"end_turn"}')
        + event("metadata", '{"usage":{"inputTokens":400,"outputTokens":60,"totalTokens":1460,'
                '"cacheReadInputTokens":800,"cacheWriteInputTokens":200},"metrics":{"latencyMs":1}}')
    )  # fmt: skip
    assert _usage("converse", body) == {"input_tokens": 1400, "output_tokens": 60, "cached_input_tokens": 800,
                                        "cache_write_tokens": 200, "reasoning_tokens": None, "total_tokens": 1460}  # fmt: skip
