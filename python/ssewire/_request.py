"""``translate_request``: a client's request in one dialect, mapped into another (API.md
section 10), the whole agent loop. The rules are Rust's (``src/request/``); this module encodes
the dict, decodes the result and names it.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ssewire import _core
from ssewire._errors import RequestError

__all__ = ["RequestTranslation", "translate_request"]


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
    body: dict[str, Any], source: str, target: str, model: Optional[str] = None
) -> RequestTranslation:
    """``body``, a request of dialect ``source`` (``"chat"``, ``"messages"``, ``"responses"``,
    ``"gemini"``), as a request of ``target``. ``model`` names the model when the body does not
    (a Gemini client names it in the URL path). Raises ``RequestError`` (a ``ValueError``) when
    the body is not a request of ``source``, saying where; ``ValueError`` for an unknown
    dialect."""
    if not isinstance(body, dict):
        raise RequestError(f"expected a request object (a dict), not {type(body).__name__}", "$")
    try:
        text = json.dumps(body)
    except (TypeError, ValueError, RecursionError) as e:
        raise RequestError(f"the body is not JSON: {e}", "$") from None
    out, path, notes = _core._translate_request(text, source, target, model)
    return RequestTranslation(json.loads(out), path, notes)
