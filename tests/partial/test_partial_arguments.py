"""``s.partial_arguments(index, choice=0)`` on the dialect streams (API.md section 7).

For every capture with tool calls, fed every way (whole, byte by byte, random cuts), once with
``feed()`` and once with ``consume()``: after each read, each call's ``partial_arguments`` must
equal the reference partial value (``test_partial_json.reference_partial``) of the argument
fragments the items carried so far, and at the end ``json.loads`` of the joined arguments.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import ssewire
from support import paths
from support import streams as _streams
from support.partial_reference import reference_partial, tagged
from support.splitting import split_ways

DATA = paths.DATA


def chat_fragments(items: list[Any], joined: dict[tuple[int, int], str]) -> None:
    """Adds the argument fragments of chat ``items`` to ``joined[(choice, index)]``."""
    for item in items:
        for position, call in enumerate(getattr(item, "tool_calls", None) or ()):
            index = call.index if call.index is not None else position
            key = (item.index, index)
            joined[key] = joined.get(key, "") + (call.arguments or "")


def messages_fragments(items: list[Any], joined: dict[tuple[int, int], str]) -> None:
    """Adds the ``input_json_delta`` fragments of Messages ``items`` to ``joined[(0, index)]``."""
    for item in items:
        if getattr(item, "delta_type", None) == "input_json_delta":
            key = (0, item.index)
            joined[key] = joined.get(key, "") + (item.partial_json or "")


def responses_fragments(items: list[Any], joined: dict[tuple[int, int], str]) -> None:
    """Adds the arguments deltas of Responses ``items`` to ``joined[(0, output_index)]``."""
    for item in items:
        if getattr(item, "type", None) in ARGUMENT_DELTAS:
            key = (0, item.output_index)
            joined[key] = joined.get(key, "") + (item.delta or "")


ARGUMENT_DELTAS = ("response.function_call_arguments.delta", "response.mcp_call_arguments.delta")

DIALECTS = {
    "chat": (ssewire.ChatCompletionStream, chat_fragments, rb'"tool_calls":\s*\[\s*\{'),
    "messages": (ssewire.MessagesStream, messages_fragments, rb"input_json_delta"),
    "responses": (ssewire.ResponsesStream, responses_fragments, rb"_call_arguments\.delta"),
}


def bodies() -> list[Any]:
    out = []
    for dialect, (_, _, pattern) in DIALECTS.items():
        out += [
            pytest.param(dialect, p.read_bytes(), id=f"{dialect}-{p.stem}")
            for p in sorted((DATA / dialect).glob("*.sse"))
            if re.search(pattern, p.read_bytes())
        ]
    out.append(
        pytest.param(
            "chat", _streams.chat_stream(40, seed=5, tool_calls=True), id="chat-generated"
        )
    )
    out.append(
        pytest.param(
            "responses",
            _streams.responses_stream(40, seed=7, tool_calls=True),
            id="responses-generated",
        )
    )
    out.append(
        pytest.param(
            "messages",
            _streams.messages_stream(40, seed=6, tool_use=True),
            id="messages-generated",
        )
    )
    return out


def check_calls(stream: Any, joined: dict[tuple[int, int], str], where: str) -> None:
    for (choice, index), text in joined.items():
        got = stream.partial_arguments(index, choice=choice)
        assert tagged(got) == tagged(reference_partial(text)[0]), (where, choice, index, text)


@pytest.mark.parametrize(("dialect", "body"), bodies())
def test_partial_arguments_follow_the_fragments(dialect: str, body: bytes) -> None:
    factory, fragments, _ = DIALECTS[dialect]
    ways = split_ways(body)
    assert len(ways) > 2
    for way in ways:
        fed = factory()
        consumed = factory()
        joined: dict[tuple[int, int], str] = {}
        for piece in way.pieces:
            fragments(fed.feed(piece), joined)
            consumed.consume(piece)
            check_calls(fed, joined, way.name)
            check_calls(consumed, joined, way.name)
        fragments(fed.finish(), joined)
        consumed.finish()
        assert joined, "the capture has tool calls"
        for (choice, index), text in joined.items():
            for stream in (fed, consumed):
                value = stream.partial_arguments(index, choice=choice)
                try:
                    expected = json.loads(text)
                except ValueError:
                    continue  # arguments that are not JSON keep their valid part (checked above)
                assert tagged(value) == tagged(expected)
        check_result(dialect, fed.result(), joined)


def check_result(dialect: str, result: dict[str, Any], joined: dict[tuple[int, int], str]) -> None:
    """The raw text stays in the result beside the value."""
    if dialect == "responses":
        for (_, index), text in joined.items():
            assert result["output"][index]["arguments"] == text
        return
    if dialect == "chat":
        calls = result["choices"][0]["message"]["tool_calls"]
        assert [c["function"]["arguments"] for c in calls] == [
            joined[key] for key in sorted(joined) if key[0] == 0
        ]
        return
    for (_, index), text in joined.items():
        block = result["content"][index]
        try:
            expected = json.loads(text)
        except json.JSONDecodeError:
            assert block["partial_json"] == text
        else:
            assert tagged(block["input"]) == tagged(expected)
            assert "partial_json" not in block


def test_messages_tool_input_cut_off_ends_as_its_partial_value() -> None:
    # max_tokens in the middle of a tool input: the input is the partial value read so far,
    # as the anthropic SDK's final message holds it, and the raw text stays beside it.
    body = _streams.messages_stream(40, seed=6, tool_use=True)
    cut = body.index(b"input_json_delta")
    cut = body.index(b"\n\n", body.index(b"input_json_delta", cut + 200)) + 2
    s = ssewire.MessagesStream()
    joined: dict[tuple[int, int], str] = {}
    messages_fragments(s.feed(body[:cut]), joined)
    s.finish()
    ((_, index), text), *_ = joined.items()
    value, complete = reference_partial(text)
    assert not complete and value
    block = s.result()["content"][index]
    assert tagged(block["input"]) == tagged(value)
    assert block["partial_json"] == text
    assert tagged(s.partial_arguments(index)) == tagged(value)


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
