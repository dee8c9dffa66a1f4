"""Helpers shared by the dialect test files (test_chat, test_messages, test_responses): a
comparable snapshot of each decoded item, and feeding / accumulating a whole body."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

import ssewire


def error_fields(error: Optional[ssewire.StreamError]) -> Any:
    """The fields of a ``StreamError`` as a comparable tuple (None for no error)."""
    if error is None:
        return None
    return (type(error).__name__, error.message, error.type, error.code, error.raw)


class DialectKit:
    """The helpers of one dialect: its stream and accumulator classes, its item class, the item
    attributes compared, and how an item is named in ``item_kinds`` lists."""

    def __init__(
        self,
        stream_class: Any,
        accumulator_class: Any,
        item_class: Any,
        fields: tuple[str, ...],
        kind: Callable[[Any], str],
    ) -> None:
        self.stream_class = stream_class
        self.accumulator_class = accumulator_class
        self.item_class = item_class
        self.fields = fields
        self.kind = kind

    def item_key(self, item: Any) -> Any:
        """A comparable snapshot of one decoded item (all its attributes)."""
        if type(item) is self.item_class:
            values = []
            for name in self.fields:
                value = getattr(item, name)
                if name == "tool_calls" and value is not None:
                    value = [(t.index, t.id, t.type, t.name, t.arguments) for t in value]
                values.append(value)
            return (self.kind(item), *values)
        if type(item) is ssewire.ErrorItem:
            return ("error", item.kind, item.event, item.data, error_fields(item.error))
        if type(item) is ssewire.Event:
            return ("event", item.event, item.data, item.id, item.retry)
        raise AssertionError(f"unexpected item type {type(item)!r}: {item!r}")

    def kind_of(self, item: Any) -> str:
        """How an item is named in the captures' ``item_kinds`` lists."""
        if type(item) is self.item_class:
            return self.kind(item)
        if type(item) is ssewire.ErrorItem:
            return str(item.kind)
        if type(item) is ssewire.Event:
            return "event:" + item.event
        raise AssertionError(f"unexpected item type {type(item)!r}")

    @staticmethod
    def stream_state(stream: Any) -> Any:
        return (stream.done, error_fields(stream.error))

    def decode(self, data: bytes) -> tuple[list[Any], Any]:
        """Feeds ``data`` whole to a fresh stream, then finishes it."""
        stream = self.stream_class()
        items = list(stream.feed(data))
        items += stream.finish()
        return items, stream

    def accumulate(self, items: Iterable[Any]) -> Any:
        acc = self.accumulator_class()
        acc.add_all(items)
        return acc
