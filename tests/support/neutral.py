"""The neutral content of a final object of any dialect (text, reasoning, tool calls, stop
class, usage), and what must cross a translation: the one reading the translation tests, the
gateway tests and the matrix property test compare by."""

from __future__ import annotations

import json
from typing import Any, Optional

import ssewire

from support import registry
from support.dialects import original_id


def _args(text: Any) -> Any:
    if isinstance(text, (dict, list)):
        return text
    try:
        return json.loads(text) if text else {}
    except (TypeError, ValueError):
        return ("unparsed", text)


def neutral(dialect: str, r: dict) -> dict:
    """Text, reasoning, tool calls, stop reason and usage of a final object, in neutral terms
    (usage: input counts cached tokens too, as OpenAI counts them)."""
    text, reasoning, calls = "", "", []
    stop: Optional[str] = None
    usage: dict = {}
    if dialect == "chat":
        choices = [c for c in r.get("choices") or [] if c.get("index") == 0]
        if choices:
            m = choices[0].get("message") or {}
            content = m.get("content")
            if isinstance(content, list):
                for part in content:
                    if part.get("type") == "text":
                        text += part.get("text") or ""
                    elif part.get("type") == "thinking":
                        reasoning += "".join(p.get("text") or "" for p in part.get("thinking") or [])
            else:
                text += content or ""
            text += m.get("refusal") or ""
            # OpenRouter's `reasoning_details` alone: its text entries are the reasoning.
            details = "".join(d.get("text") or d.get("summary") or "" for d in m.get("reasoning_details") or []
                              if isinstance(d, dict) and d.get("type") in ("reasoning.text", "reasoning.summary"))  # fmt: skip
            reasoning += m.get("reasoning_content") or m.get("reasoning") or details
            for t in m.get("tool_calls") or []:
                f = t.get("function") or {}
                calls.append((t.get("id"), f.get("name"), _args(f.get("arguments"))))
            legacy = m.get("function_call")  # the legacy form: one call, no id
            if isinstance(legacy, dict):
                calls.append(("", legacy.get("name"), _args(legacy.get("arguments"))))
            stop = {"stop": "end", "length": "max", "tool_calls": "tool", "function_call": "tool",
                    "content_filter": "filter"}.get(
                choices[0].get("finish_reason"), choices[0].get("finish_reason"))  # fmt: skip
        u = r.get("usage") or {}
        if u:
            usage = {"input": u.get("prompt_tokens"), "output": u.get("completion_tokens"),
                     "cached": (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0}  # fmt: skip
    elif dialect == "messages":
        for b in r.get("content") or []:
            if b.get("type") == "text":
                text += b.get("text") or ""
            elif b.get("type") == "thinking":
                reasoning += b.get("thinking") or ""
            elif b.get("type") == "tool_use":
                calls.append((b.get("id"), b.get("name"), _args(b.get("input"))))
        stop = {"end_turn": "end", "stop_sequence": "end", "max_tokens": "max", "tool_use": "tool",
                "refusal": "filter"}.get(r.get("stop_reason"), r.get("stop_reason"))  # fmt: skip
        u = r.get("usage") or {}
        if u:
            cached = u.get("cache_read_input_tokens") or 0
            usage = {"input": (u.get("input_tokens") or 0) + cached + (u.get("cache_creation_input_tokens") or 0),
                     "output": u.get("output_tokens"), "cached": cached}  # fmt: skip
    elif dialect == "gemini":
        candidates = r.get("candidates") or []
        first = next((c for i, c in enumerate(candidates) if c.get("index", i) == 0), {})
        for part in (first.get("content") or {}).get("parts") or []:
            if "functionCall" in part:
                f = part["functionCall"]
                # Gemini calls have no id: a translation makes one up (compared apart).
                calls.append((f.get("id"), f.get("name"), _args(f.get("args"))))
            elif part.get("thought"):
                reasoning += part.get("text") or ""
            else:
                text += part.get("text") or ""
        reason = first.get("finishReason")
        stop = None if reason is None else {"STOP": "tool" if calls else "end", "MAX_TOKENS": "max"}.get(
            reason, "filter" if reason in GEMINI_FILTERED else reason)  # fmt: skip
        u = r.get("usageMetadata") or {}
        if u:
            usage = {"input": (u.get("promptTokenCount") or 0) + (u.get("toolUsePromptTokenCount") or 0),
                     "output": (u.get("candidatesTokenCount") or 0) + (u.get("thoughtsTokenCount") or 0),
                     "cached": u.get("cachedContentTokenCount") or 0}  # fmt: skip
    elif dialect == "converse":
        # boto3's converse() response (ConverseStream's result(); a client's converse_stream
        # events joined by ``converse_view``).
        for b in ((r.get("output") or {}).get("message") or {}).get("content") or []:
            if "text" in b:
                text += b["text"] or ""
            elif "citationsContent" in b:
                text += "".join(c.get("text") or "" for c in b["citationsContent"].get("content") or [])
            elif "reasoningContent" in b:
                reasoning += ((b["reasoningContent"].get("reasoningText") or {}).get("text")) or ""
            elif "toolUse" in b and (b["toolUse"].get("type") or "tool_use") == "tool_use":
                t = b["toolUse"]
                calls.append((t.get("toolUseId"), t.get("name"), _args(t.get("input"))))
        reason = r.get("stopReason")
        stop = {"end_turn": "end", "stop_sequence": "end", "tool_use": "tool", "max_tokens": "max",
                "guardrail_intervened": "filter", "content_filtered": "filter"}.get(reason, reason)  # fmt: skip
        u = r.get("usage") or {}
        if u:
            cached = u.get("cacheReadInputTokens") or 0
            usage = {"input": (u.get("inputTokens") or 0) + cached + (u.get("cacheWriteInputTokens") or 0),
                     "output": u.get("outputTokens"), "cached": cached}  # fmt: skip
    elif dialect == "ollama":
        # /api/chat's non-streaming response (or /api/generate's `response`).
        m = r.get("message") or {}
        text += m.get("content") or r.get("response") or ""
        reasoning += m.get("thinking") or r.get("thinking") or ""
        for t in m.get("tool_calls") or []:
            f = t.get("function") or {}
            calls.append((t.get("id"), f.get("name"), _args(f.get("arguments"))))
        reason = r.get("done_reason") if r.get("done") else None
        stop = None if reason is None else {"stop": "tool" if calls else "end", "length": "max"}.get(reason, reason)
        if "prompt_eval_count" in r or "eval_count" in r:
            usage = {"input": r.get("prompt_eval_count"), "output": r.get("eval_count"), "cached": 0}
    elif dialect == "cohere":
        # v2 chat's non-streaming response; the tool plan is text before the calls.
        m = r.get("message") or {}
        text += m.get("tool_plan") or ""
        for part in m.get("content") or []:
            if part.get("type") == "thinking":
                reasoning += part.get("thinking") or ""
            else:
                text += part.get("text") or ""
        for t in m.get("tool_calls") or []:
            f = t.get("function") or {}
            calls.append((t.get("id"), f.get("name"), _args(f.get("arguments"))))
        reason = r.get("finish_reason")
        stop = {"COMPLETE": "tool" if calls else "end", "STOP_SEQUENCE": "end", "TOOL_CALL": "tool",
                "MAX_TOKENS": "max"}.get(reason, reason)  # fmt: skip
        u = r.get("usage") or {}
        if u.get("tokens"):
            tokens = u["tokens"]
            usage = {"input": tokens.get("input_tokens"), "output": tokens.get("output_tokens"),
                     "cached": u.get("cached_tokens") or 0}  # fmt: skip
    else:
        for item in r.get("output") or []:
            if item.get("type") == "message":
                for p in item.get("content") or []:
                    text += p.get("text") or p.get("refusal") or ""
            elif item.get("type") == "reasoning":
                reasoning += "\n\n".join(s.get("text") or "" for s in item.get("summary") or [])
                reasoning += "".join(c.get("text") or "" for c in item.get("content") or [])
            elif item.get("type") == "function_call":
                calls.append((item.get("call_id"), item.get("name"), _args(item.get("arguments"))))
        status = r.get("status")
        reason = (r.get("incomplete_details") or {}).get("reason")
        stop = {"completed": "tool" if calls else "end"}.get(status) or (
            "filter" if reason == "content_filter" else "max" if status == "incomplete" else None)  # fmt: skip
        u = r.get("usage") or {}
        if u:
            usage = {"input": u.get("input_tokens"), "output": u.get("output_tokens"),
                     "cached": (u.get("input_tokens_details") or {}).get("cached_tokens") or 0}  # fmt: skip
    # A call id may carry the reasoning the upstream signed (its own id inside).
    calls = [(original_id(i), *rest) for i, *rest in calls]
    return {"text": text, "reasoning": reasoning, "calls": calls, "stop": stop, "usage": usage}


GEMINI_FILTERED = {"SAFETY", "MODEL_ARMOR", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
                   "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"}  # fmt: skip


def comparable(source: dict, target: dict, lossy: tuple[bool, bool] = (False, False)) -> tuple[dict, dict]:
    """What must cross: everything but what a dialect cannot say (a stop reason the source
    never gave; usage the source never sent). ``lossy``: (the source stream has warnings: tool
    input that is not JSON crosses as sent while the source's result holds its start value;
    the source is a Responses stream whose terminal object differs from its deltas: no
    allowance since issue 27, the text the deltas never carried is written before the part
    closes, so the target's text is the terminal object's)."""
    source, target = dict(source), dict(target)
    # A call without an id (chat's legacy function_call) has none in Gemini either.
    target["calls"] = [("" if t[0] is None and s[0] == "" else t[0], *t[1:])
                       for t, s in zip(target["calls"], source["calls"])] + target["calls"][len(source["calls"]):]  # fmt: skip
    if not source["usage"]:
        target["usage"] = {}
    if source["stop"] is None:  # the source never said; the target must say something
        target["stop"] = None
    if any(c[0] is None for c in source["calls"]):  # made-up ids (Gemini): present and unique
        ids = [c[0] for c in target["calls"]]
        assert all(ids) and len(set(ids)) == len(ids), ids
        source["calls"] = [(None, *c[1:]) for c in source["calls"]]
        target["calls"] = [(None, *c[1:]) for c in target["calls"]]
    warned, _ = lossy
    if warned:
        source["calls"] = [c[:2] for c in source["calls"]]
        target["calls"] = [c[:2] for c in target["calls"]]
    return source, target


def lossy(dialect: str, body: bytes) -> tuple[bool, bool]:
    s = registry.STREAMS[dialect]()
    items = s.feed(body) + s.finish()
    if dialect != "responses":
        return bool(s.warnings), False
    acc = ssewire.ResponseAccumulator()
    acc.add_all(items)
    return bool(s.warnings), bool(acc.mismatches)
