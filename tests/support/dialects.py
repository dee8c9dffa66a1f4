"""Helpers shared by the dialect test files (test_chat, test_messages, test_responses): a
comparable snapshot of each decoded item, and feeding / accumulating a whole body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional

import ssewire

from support.splitting import check_all_ways, consume_cut, split_ways


def read_converse(body: bytes, cuts: Iterable[int] = ()) -> ssewire.ConverseStream:
    """A Bedrock Converse body read by ``ConverseStream``, cut at ``cuts`` (offsets, in order),
    then finished."""
    return consume_cut(ssewire.ConverseStream(), body, list(cuts))


def carried(call_id: Any) -> Optional[dict[str, Any]]:
    """What a tool call id written by a translation carries (API.md section 10: reasoning a
    thinking model signed, carried through a client of another dialect): ``{"id": original,
    "dialect": letter, "reasoning": [...]}``, or None for an id that carries nothing."""
    if not isinstance(call_id, str) or not call_id.startswith("sswc1_"):
        return None
    import base64

    letter, coded = call_id[len("sswc1_")], call_id[len("sswc1_") + 2 :]
    payload = json.loads(base64.urlsafe_b64decode(coded + "=" * (-len(coded) % 4)))
    return {"id": payload["i"], "dialect": letter, "reasoning": payload["r"]}


def original_id(call_id: Any) -> Any:
    """The upstream's own id of a tool call id a translation wrote."""
    found = carried(call_id)
    return call_id if found is None else found["id"]


def error_fields(error: Optional[ssewire.StreamError]) -> Any:
    """The fields of a ``StreamError`` as a comparable tuple (None for no error)."""
    if error is None:
        return None
    return (type(error).__name__, error.message, error.type, error.code, error.raw)


def snap(value: Any) -> Any:
    """A comparable copy of any decoded item (or list of them): every public attribute,
    recursively; a ``StreamError`` as ``error_fields``."""
    if isinstance(value, ssewire.StreamError):
        return error_fields(value)
    if isinstance(value, list):
        return [snap(v) for v in value]
    if type(value).__module__ == "ssewire" and not isinstance(value, BaseException):
        attrs = {n: getattr(value, n) for n in dir(value) if not n.startswith("_")}
        return (type(value).__name__, {n: snap(v) for n, v in attrs.items() if not callable(v)})
    return value


def assert_notes(got: list[str], expected: list[list[str]]) -> None:
    """``got`` has one note per entry of ``expected``, each containing all its substrings."""
    assert len(got) == len(expected), got
    for note, parts in zip(got, expected):
        for part in parts:
            assert part in note, (part, note)


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

    def check_capture(self, data: Path, name: str, raw_has_error_key: bool = True) -> tuple[Any, Any]:
        """Checks the capture ``data/name.sse`` against ``data/name.json``: every way of splitting
        the body gives the same items and final state; the accumulated result, the item kinds
        (when listed), ``done`` and ``error`` are as expected; a server-reported error reaches
        the accumulator too. Returns the accumulator and the expected document, for the
        dialect's own further checks. ``raw_has_error_key``: the error's ``raw`` document holds
        an ``error`` key (not so for Responses, whose error events are flat)."""
        body = (data / f"{name}.sse").read_bytes()
        expected = json.loads((data / f"{name}.json").read_text(encoding="utf-8"))

        outcome = check_all_ways(
            self.stream_class, body, key=self.item_key, observe=self.stream_state
        )
        items = outcome.items
        assert not outcome.errors

        acc = self.accumulate(items)
        assert acc.result() == expected["result"]
        if "item_kinds" in expected:
            assert [self.kind_of(i) for i in items] == expected["item_kinds"]

        # `done` and `error` as the stream reports them (re-run whole to hold the stream).
        items2, stream = self.decode(body)
        assert [self.item_key(i) for i in items2] == [self.item_key(i) for i in items]
        assert stream.done is expected["done"]
        want = expected["error"]
        if want is None:
            assert stream.error is None, f"unexpected error {error_fields(stream.error)}"
            assert acc.error is None
        else:
            assert isinstance(stream.error, ssewire.StreamError)
            assert {k: getattr(stream.error, k) for k in want} == want
            if want.get("code") != "incomplete_stream":
                # A server-reported error: its document is kept, and the accumulator saw the
                # same error as an ErrorItem.
                assert isinstance(stream.error.raw, dict)
                if raw_has_error_key:
                    assert "error" in stream.error.raw
                assert acc.error is not None
                assert {k: getattr(acc.error, k) for k in want} == want
            else:
                assert acc.error is None
        assert acc.errors == [i for i in items if type(i) is ssewire.ErrorItem]
        # The stream's own warnings are the accumulator's (issue 15: a loss the fold notes is
        # visible on the stream, not only on an accumulator).
        assert stream.warnings == acc.warnings
        return acc, expected

    def accumulated_while_feeding(self, data: Path, name: str) -> Iterator[tuple[Any, Any]]:
        """For every way of splitting the capture ``data/name.sse``: adds each feed()'s items as
        they come, calling result() after every feed, and checks the final result is the
        expected one and stable. Yields (accumulator, expected) per way for further checks."""
        body = (data / f"{name}.sse").read_bytes()
        expected = json.loads((data / f"{name}.json").read_text(encoding="utf-8"))
        for way in split_ways(body):
            stream = self.stream_class()
            acc = self.accumulator_class()
            for piece in way.pieces:
                acc.add_all(stream.feed(piece))
                acc.result()
            acc.add_all(stream.finish())
            assert acc.result() == expected["result"], way.name
            assert acc.result() == acc.result()
            yield acc, expected

    def check_result_paths(self, data: Path, name: str) -> None:
        """The stream's own fold (API.md section 5) gives the capture's expected result by every
        path: ``s.result()`` after ``feed()``, after ``consume()``, and after a mix of both
        (alternating pieces), each for every way of splitting the body; ``s.errors`` lists the
        same ErrorItems whichever path; the accumulator fed the items gives the same dict."""
        body = (data / f"{name}.sse").read_bytes()
        expected = json.loads((data / f"{name}.json").read_text(encoding="utf-8"))["result"]
        for way in split_ways(body):
            errors_by_mode = []
            for mode in ("feed", "consume", "mix"):
                stream = self.stream_class()
                items: list[Any] = []
                for n, piece in enumerate(way.pieces):
                    if mode == "feed" or (mode == "mix" and n % 2 == 0):
                        items += stream.feed(piece)
                    else:
                        assert stream.consume(piece) is None
                    stream.result()  # a partial result never disturbs the fold
                items += stream.finish()
                assert stream.result() == expected, (way.name, mode)
                assert stream.result() is not stream.result()
                errors = [self.item_key(e) for e in stream.errors]
                errors_by_mode.append(errors)
                if mode == "feed":
                    assert errors == [self.item_key(i) for i in items if type(i) is ssewire.ErrorItem]
                    assert self.accumulate(items).result() == expected, way.name
            assert errors_by_mode[0] == errors_by_mode[1] == errors_by_mode[2], way.name
