"""Gemini stream bodies from chunk objects."""

from __future__ import annotations

import json
from typing import Any, Optional


def chunk(*parts: dict, index: Optional[int] = 0, finish: Optional[str] = None, **top: Any) -> dict:
    candidate: dict = {"content": {"parts": list(parts), "role": "model"}}
    if finish:
        candidate["finishReason"] = finish
    if index is not None:
        candidate["index"] = index
    return {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r", **top}


def sse(*chunks: dict, crlf: bool = True) -> bytes:
    end = "\r\n\r\n" if crlf else "\n\n"
    return "".join("data: " + json.dumps(c, ensure_ascii=False) + end for c in chunks).encode()


def _streamed(*pieces: dict) -> bytes:
    return sse(chunk({"functionCall": {"name": "f", "willContinue": True, "partialArgs": list(pieces)}}),
               chunk({"functionCall": {}}, finish="STOP"))  # fmt: skip
