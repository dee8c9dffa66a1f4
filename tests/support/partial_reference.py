"""A reference reading of partial JSON (the value a prefix of a document holds), and values tagged
with their types."""

from __future__ import annotations

from typing import Any, Optional


class _Missing:
    """An unfinished number, literal or key: left out of the partial value."""


MISSING = _Missing()


WS = " \t\r\n"


NUMBER_CHARS = "0123456789+-.eE"


ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in WS:
        i += 1
    return i


def _string(text: str, i: int) -> tuple[str, int, bool]:
    """The string whose opening quote is at ``i``: (its complete characters, end, closed)."""
    out: list[str] = []
    high: Optional[int] = None  # a high surrogate waiting for its pair
    i += 1
    while i < len(text):
        c = text[i]
        if c == '"':
            if high is not None:
                out.append("\ufffd")
            return "".join(out), i + 1, True
        if c != "\\":
            if high is not None:
                out.append("\ufffd")
                high = None
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(text):
            break  # the escape is cut: held back
        if text[i + 1] != "u":
            if high is not None:
                out.append("\ufffd")
                high = None
            out.append(ESCAPES[text[i + 1]])
            i += 2
            continue
        if i + 6 > len(text):
            break  # \uXX cut: held back
        unit = int(text[i + 2 : i + 6], 16)
        i += 6
        if high is not None and 0xDC00 <= unit <= 0xDFFF:
            out.append(chr(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)))
            high = None
            continue
        if high is not None:
            out.append("\ufffd")
            high = None
        if 0xD800 <= unit <= 0xDBFF:
            high = unit
        elif 0xDC00 <= unit <= 0xDFFF:
            out.append("\ufffd")
        else:
            out.append(chr(unit))
    # Unfinished: a pending high surrogate is held back too (its pair may still come).
    return "".join(out), len(text), False


def _value(text: str, i: int) -> tuple[Any, int, bool]:
    """The value starting at ``i`` (no whitespace before it): (value or MISSING, end, done)."""
    c = text[i]
    if c == '"':
        return _string(text, i)
    if c in "-0123456789":
        j = i
        while j < len(text) and text[j] in NUMBER_CHARS:
            j += 1
        if j == len(text):
            return MISSING, j, False  # the next character may still continue it
        token = text[i:j]
        return (float(token) if any(x in token for x in ".eE") else int(token)), j, True
    for word, result in (("true", True), ("false", False), ("null", None)):
        if c == word[0]:
            if text.startswith(word, i):
                return result, i + len(word), True
            return MISSING, len(text), False
    if c == "[":
        items: list[Any] = []
        i = _ws(text, i + 1)
        if i < len(text) and text[i] == "]":
            return items, i + 1, True
        while i < len(text):
            item, i, done = _value(text, i)
            if item is not MISSING:
                items.append(item)
            if not done:
                break
            i = _ws(text, i)
            if i < len(text) and text[i] == "]":
                return items, i + 1, True
            i = _ws(text, i + 1)  # past the comma
        return items, len(text), False
    assert c == "{", f"not a value at {i}: {text!r}"
    obj: dict[str, Any] = {}
    i = _ws(text, i + 1)
    if i < len(text) and text[i] == "}":
        return obj, i + 1, True
    while i < len(text):
        key, i, closed = _string(text, i)
        i = _ws(text, i)
        if not closed or i >= len(text):
            break
        i = _ws(text, i + 1)  # past the colon
        if i >= len(text):
            break
        item, i, done = _value(text, i)
        if item is not MISSING:
            obj[key] = item
        if not done:
            break
        i = _ws(text, i)
        if i < len(text) and text[i] == "}":
            return obj, i + 1, True
        i = _ws(text, i + 1)  # past the comma
    return obj, len(text), False


def reference_partial(prefix: str) -> tuple[Any, bool]:
    """The partial value of ``prefix`` (a prefix of a valid JSON text), and whether it is a
    whole document."""
    i = _ws(prefix, 0)
    if i == len(prefix):
        return None, False
    value, _, done = _value(prefix, i)
    return (None if value is MISSING else value), done


def tagged(value: Any) -> Any:
    """A strict comparison key: ``1 != 1.0``, ``0.0 != -0.0``, and dict order counts."""
    if isinstance(value, dict):
        return ("dict", [(k, tagged(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [tagged(v) for v in value])
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)
