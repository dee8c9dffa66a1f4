"""``s.partial_arguments(index, choice=0)`` on the dialect streams (API.md section 7).

For every capture with tool calls, fed every way (whole, byte by byte, random cuts), once with
``feed()`` and once with ``consume()``: after each read, each call's ``partial_arguments`` must
equal the reference partial value (``test_partial_json.reference_partial``) of the argument
fragments the items carried so far, and at the end ``json.loads`` of the joined arguments.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_partial_json import reference_partial, tagged

import ssewire
from ssewire import _streams
from splitting import split_ways

DATA = Path(__file__).parent / "data"


def chat_bodies() -> list[Any]:
    bodies = [
        pytest.param(p.read_bytes(), id=p.stem)
        for p in sorted((DATA / "chat").glob("*.sse"))
        if re.search(rb'"tool_calls":\s*\[\s*\{', p.read_bytes())
    ]
    bodies.append(
        pytest.param(_streams.chat_stream(40, seed=5, tool_calls=True), id="generated")
    )
    return bodies


def chat_fragments(items: list[Any], joined: dict[tuple[int, int], str]) -> None:
    """Adds the argument fragments of chat ``items`` to ``joined[(choice, index)]``."""
    for item in items:
        for position, call in enumerate(getattr(item, "tool_calls", None) or ()):
            index = call.index if call.index is not None else position
            key = (item.index, index)
            joined[key] = joined.get(key, "") + (call.arguments or "")


def check_calls(stream: Any, joined: dict[tuple[int, int], str], where: str) -> None:
    for (choice, index), text in joined.items():
        got = stream.partial_arguments(index, choice=choice)
        assert tagged(got) == tagged(reference_partial(text)[0]), (where, choice, index, text)


@pytest.mark.parametrize("body", chat_bodies())
def test_chat_partial_arguments_follow_the_fragments(body: bytes) -> None:
    ways = split_ways(body)
    assert len(ways) > 2
    for way in ways:
        fed = ssewire.ChatCompletionStream()
        consumed = ssewire.ChatCompletionStream()
        joined: dict[tuple[int, int], str] = {}
        for piece in way.pieces:
            chat_fragments(fed.feed(piece), joined)
            consumed.consume(piece)
            check_calls(fed, joined, way.name)
            check_calls(consumed, joined, way.name)
        chat_fragments(fed.finish(), joined)
        consumed.finish()
        assert joined, "the capture has tool calls"
        calls = fed.result()["choices"][0]["message"]["tool_calls"]
        for (choice, index), text in joined.items():
            for stream in (fed, consumed):
                value = stream.partial_arguments(index, choice=choice)
                try:
                    expected = json.loads(text)
                except ValueError:
                    continue  # arguments that are not JSON keep their valid part (checked above)
                assert tagged(value) == tagged(expected)
        # The raw text stays in the result beside the value.
        assert [c["function"]["arguments"] for c in calls] == [
            joined[key] for key in sorted(joined) if key[0] == 0
        ]


def test_chat_partial_arguments_keep_their_containers_and_raise_key_error() -> None:
    body = _streams.chat_stream(40, seed=5, tool_calls=True)
    s = ssewire.ChatCompletionStream()
    with pytest.raises(KeyError):
        s.partial_arguments(0)
    seen: dict[int, Any] = {}
    for k in range(0, len(body), 97):
        s.consume(body[k : k + 97])
        for index in (0, 1):
            try:
                value = s.partial_arguments(index)
            except KeyError:
                continue
            if value is not None:
                assert seen.setdefault(index, value) is value  # updated in place
    s.finish()
    assert set(seen) == {0, 1}
    with pytest.raises(KeyError):
        s.partial_arguments(2)
    with pytest.raises(KeyError):
        s.partial_arguments(0, choice=1)
