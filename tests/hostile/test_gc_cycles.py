"""Issue 15 (found by the fuzz campaign): objects that hold errors let the garbage collector
see them. ``raise stream.error`` (the README's pattern) gives the error a traceback whose
frames hold the stream: a reference cycle through the Rust object, which the collector can only
break if the object shows it what it holds. Before, every such stream (with all its state)
leaked; so did every ``PartialJSON`` whose text stopped being JSON."""

from __future__ import annotations

import gc
import json
from typing import Any, Callable

import pytest
import ssewire

ERROR_FRAME = b'data: {"error": {"message": "boom"}}\n\n'


def survivors(make: Callable[[], None], kind: type) -> int:
    gc.collect()
    before = sum(1 for o in gc.get_objects() if type(o) is kind)
    for _ in range(300):
        make()
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is kind) - before


@pytest.mark.parametrize("cls", [ssewire.ChatCompletionStream, ssewire.MessagesStream, ssewire.ResponsesStream, ssewire.GeminiStream])
def test_raising_a_streams_error_does_not_leak_the_stream(cls: Any) -> None:
    def once() -> None:
        s = cls()
        s.feed(ERROR_FRAME if cls is ssewire.ChatCompletionStream else b"event: error\ndata: {}\n\n")
        s.finish()
        try:
            raise s.error
        except ssewire.StreamError:
            pass

    assert survivors(once, cls) == 0


def test_raising_an_accumulators_error_does_not_leak() -> None:
    def once() -> None:
        s = ssewire.ChatCompletionStream()
        acc = ssewire.ChatCompletionAccumulator()
        acc.add_all(s.feed(ERROR_FRAME))
        try:
            raise acc.error
        except ssewire.StreamError:
            pass

    assert survivors(once, ssewire.ChatCompletionAccumulator) == 0


def test_a_failed_partial_json_does_not_leak() -> None:
    def once() -> None:
        p = ssewire.PartialJSON()
        try:
            p.feed("[1,,")
        except json.JSONDecodeError:
            pass

    assert survivors(once, ssewire.PartialJSON) == 0


def test_a_translator_of_a_failed_stream_does_not_leak() -> None:
    def once() -> None:
        t = ssewire.Translator("chat", "messages")
        t.feed(ERROR_FRAME)
        t.finish()
        try:
            raise t.source.error
        except ssewire.StreamError:
            pass

    assert survivors(once, ssewire.Translator) == 0
