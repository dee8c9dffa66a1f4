"""What the gateway says of a request: the log record of a stream (``record``), the final text
of a result (``final_text``), and how a long message is cut for the log."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ssewire.gateway._paths import SPECS

#: Longest error message logged (an upstream may send megabytes in one).
LOGGED_MESSAGE = 500


def final_text(dialect: str, result: Dict[str, Any]) -> str:
    """The assistant's text in a final object (the provider's non-streaming shape)."""
    blocks: List[Any]
    if dialect == "chat":
        choices = result.get("choices") or [{}]
        content = (choices[0].get("message") or {}).get("content")
        return content if isinstance(content, str) else ""
    if dialect == "gemini":
        candidates = result.get("candidates") or [{}]
        parts = (candidates[0].get("content") or {}).get("parts") or []
        blocks = [p for p in parts if isinstance(p, dict) and not p.get("thought")]
    elif dialect == "messages":
        blocks = result.get("content") or []
    elif isinstance(result.get("output"), dict):  # Converse: {"output": {"message": {...}}}
        blocks = (result["output"].get("message") or {}).get("content") or []
    else:
        blocks = [
            part
            for item in result.get("output") or []
            if isinstance(item, dict)
            for part in item.get("content") or []
        ]
    return "".join(
        b.get("text", "") for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
    )


def cut(message: str) -> str:
    """``message`` as the log keeps it: at most ``LOGGED_MESSAGE`` characters."""
    if len(message) > LOGGED_MESSAGE:
        return message[:LOGGED_MESSAGE] + f"... ({len(message)} characters)"
    return message


def _timing(timing: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The durations of a stream's ``timing`` (seconds), for the log line."""
    if timing is None:
        return None
    keys = ("time_to_first_output", "time_per_output_chunk", "duration", "output_chunks")
    return {k: timing.get(k) for k in keys}


def record(dialect: str, stream: Any, client_gone: bool = False) -> Dict[str, Any]:
    """The log record of one stream. ``done`` tells a complete stream from one that ended
    early; ``client_disconnected``, that the client left before the upstream finished (its
    usage is what the upstream had sent by then)."""
    result = stream.result()
    text = final_text(dialect, result)
    error = stream.error
    model_key = SPECS[dialect]["model_key"]
    return {
        "dialect": dialect,
        "model": result.get(model_key) if model_key else None,
        "usage": result.get(SPECS[dialect]["usage_key"]),
        # The same usage in one shape for every provider, and when the stream's output came.
        "tokens": getattr(stream, "usage", None),
        "timing": _timing(getattr(stream, "timing", None)),
        "text_length": len(text),
        "text_start": text[:40],
        "done": bool(getattr(stream, "done", False)),
        "client_disconnected": client_gone,
        "error": None if error is None else {"message": cut(str(error.message)), "code": error.code},
    }
