"""What the gateway says of a request: the log record of a stream (``record``, from the core's
summary of its result: no Python reading per dialect), the final text of a result
(``final_text``), and how a long message is cut for the log."""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Optional

from ssewire import _core
from ssewire.gateway._paths import SPECS

#: Longest error message logged (an upstream may send megabytes in one).
LOGGED_MESSAGE = 500


def final_text(dialect: str, result: Dict[str, Any]) -> str:
    """The assistant's text in a final object (the provider's non-streaming shape): the
    core's reading (``fold::summary``), the one the log line uses. ``""`` for an object that
    is not a final object of ``dialect``; ``ValueError`` for an unknown dialect."""
    try:
        text = json.dumps(result, default=lambda _: None, allow_nan=False)
    except ValueError:  # a count out of any float's range (inf): what JSON cannot write, None
        text = json.dumps(_finite(result), default=lambda _: None)
    except (TypeError, RecursionError):  # keys that are not strings, a cycle: not a result
        return ""
    return _core._final_text(dialect, text)


def _finite(value: Any) -> Any:
    """``value`` with every float that JSON cannot write (inf, nan) as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


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


def _summary(dialect: str, stream: Any) -> Dict[str, Any]:
    """The core's summary of a stream's result (``_summary()``); for a meter of another make
    (``make_app(meters=...)``: anything with ``result()``), the same read from its result."""
    own = getattr(stream, "_summary", None)
    if own is not None:
        summary: Dict[str, Any] = own()
        return summary
    result = stream.result()
    spec = SPECS[dialect]
    text = final_text(dialect, result)
    return {
        "model": result.get(spec["model_key"]) if spec["model_key"] else None,
        "usage": result.get(spec["usage_key"]),
        "text_length": len(text),
        "text_start": text[:40],
    }


def record(dialect: str, stream: Any, client_gone: bool = False) -> Dict[str, Any]:
    """The log record of one stream. ``done`` tells a complete stream from one that ended
    early; ``client_disconnected``, that the client left before the upstream finished (its
    usage is what the upstream had sent by then)."""
    summary = _summary(dialect, stream)
    error = stream.error
    return {
        "dialect": dialect,
        "model": summary["model"],
        "usage": summary["usage"],
        # The same usage in one shape for every provider, and when the stream's output came.
        "tokens": getattr(stream, "usage", None),
        "timing": _timing(getattr(stream, "timing", None)),
        "text_length": summary["text_length"],
        "text_start": summary["text_start"],
        "done": bool(getattr(stream, "done", False)),
        "client_disconnected": client_gone,
        "error": None if error is None else {"message": cut(str(error.message)), "code": error.code},
    }
