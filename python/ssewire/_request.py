"""``translate_request``: a client's request in one dialect, mapped into another (API.md
section 10), the whole agent loop. The rules are Rust's (``src/request/``); this module encodes
the dict, decodes the result and names it.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

from ssewire import _core
from ssewire._errors import RequestError

__all__ = ["ErrorTranslation", "RequestTranslation", "translate_error", "translate_request"]


class RequestTranslation:
    """A request translated: ``body`` (dict, the target's request, streaming), ``path`` (the
    target's endpoint path), ``notes`` (list of str: what the target cannot take and was
    dropped, once per kind)."""

    __slots__ = ("body", "path", "notes")

    def __init__(self, body: dict[str, Any], path: str, notes: list[str]) -> None:
        self.body = body
        self.path = path
        self.notes = notes

    def __repr__(self) -> str:
        return f"RequestTranslation(path={self.path!r}, notes={self.notes!r})"


RequestTranslation.__module__ = "ssewire"


def translate_request(
    body: dict[str, Any],
    source: str,
    target: str,
    model: Optional[str] = None,
    framing: str = "sse",
    *,
    _stored: Optional[Dict[str, str]] = None,
) -> RequestTranslation:
    """``body``, a request of dialect ``source`` (``"chat"``, ``"messages"``, ``"responses"``,
    ``"gemini"``, ``"converse"``), as a request of ``target``. ``model`` names the model when
    the body does not (a Gemini client names it in the URL path, a Bedrock client in
    ``/model/{modelId}/...``). A Converse target's path is ``/model/{modelId}/converse-stream``;
    ``framing="eventstream"`` with a Messages target writes Bedrock's InvokeModel form (no
    ``model`` or ``stream`` in the body, ``anthropic_version: "bedrock-2023-05-31"``, path
    ``/model/{modelId}/invoke-with-response-stream``); a Messages source in that form is read as
    it is. Raises ``RequestError`` (a ``ValueError``) when the body is not a request of
    ``source``, saying where; ``ValueError`` for an unknown dialect or framing. ``_stored``
    (the gateway's ``carry = "store"``): the carriers the short call ids stand for, read at
    call and result ids only."""
    if not isinstance(body, dict):
        raise RequestError(f"expected a request object (a dict), not {type(body).__name__}", "$")
    try:
        text = json.dumps(body)
    except (TypeError, ValueError, RecursionError) as e:
        raise RequestError(f"the body is not JSON: {e}", "$") from None
    out, path, notes = _core._translate_request(text, source, target, model, framing, _stored)
    return RequestTranslation(json.loads(out), path, notes)


class ErrorTranslation:
    """An upstream's error response as the client's dialect spells it: ``status`` (int),
    ``body`` (bytes: the client dialect's error object), ``content_type`` (str)."""

    __slots__ = ("status", "body", "content_type")

    def __init__(self, status: int, body: bytes, content_type: str) -> None:
        self.status = status
        self.body = body
        self.content_type = content_type

    def __repr__(self) -> str:
        return f"ErrorTranslation(status={self.status!r}, body={self.body[:80]!r}...)"


ErrorTranslation.__module__ = "ssewire"


def translate_error(status: int, body: bytes, source: str, target: str) -> ErrorTranslation:
    """An upstream's error response (``status``, ``body`` bytes, in dialect ``source``) as a
    client of dialect ``target`` expects it (API.md section 10): the same status (Anthropic's
    529 kept only for Messages clients, 503 for the others; a status that is no error, 502),
    the target's error object with the upstream's message and its type and code mapped
    (Anthropic ``{"type": "error", "error": {"type", "message"}}``, OpenAI ``{"error":
    {"message", "type", "param", "code"}}``, Google ``{"error": {"code", "message",
    "status"}}``). A body that is no error object keeps its text as the message. ``ValueError``
    for an unknown dialect."""
    if isinstance(body, str):
        body = body.encode("utf-8", "replace")
    out_status, out_body, content_type = _core._translate_error(int(status), bytes(body), source, target)
    return ErrorTranslation(out_status, out_body, content_type)
