"""Decoded items made comparable (their attributes as plain values), and what a stream class reads
from a list of reads."""

from __future__ import annotations

from typing import Any

import ssewire


def _attrs(item: Any) -> Any:
    if isinstance(item, ssewire.ErrorItem):
        return ("error", item.kind, item.error.message, item.data)
    names = [n for n in dir(item) if not n.startswith("_")]
    values = []
    for n in names:
        v = getattr(item, n)
        if n == "to_dict":  # the item's dict form, compared too
            v = v()
        if isinstance(v, list):
            v = [_attrs(x) if hasattr(x, "arguments") else x for x in v]
        elif isinstance(v, ssewire.ToolCallDelta):
            v = _attrs(v)
        values.append((n, v))
    return (type(item).__name__, tuple(values))


def _seen(cls: Any, reads: list[bytes], consume: bool) -> Any:
    stream = cls()
    items: list[Any] = []
    for r in reads:
        if consume:
            stream.consume(r)
        else:
            items.extend(_attrs(i) for i in stream.feed(r))
    items.extend(_attrs(i) for i in stream.finish())
    error = stream.error and (stream.error.message, stream.error.code)
    return items, stream.result(), error, list(stream.warnings), stream.done
