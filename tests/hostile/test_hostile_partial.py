"""Issue 15, hostile input second round: the partial-JSON surfaces (``PartialJSON`` and every
``partial_arguments``). One test per finding; each failed on the release before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import ssewire
from support.cost import assert_linear
from support.gemini_chunks import _streamed
from support.splitting import split_ways


def ev(kind: str, obj: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(obj)}\n\n".encode()


def messages_tool(index: int, tool_id: str, fragments: list[str]) -> bytes:
    body = ev("content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": {"type": "tool_use", "id": tool_id, "name": "f", "input": {}}})  # fmt: skip
    for f in fragments:
        body += ev("content_block_delta", {"type": "content_block_delta", "index": index,
                                           "delta": {"type": "input_json_delta", "partial_json": f}})  # fmt: skip
    return body


def chat_tool(arguments: str) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
        "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}]}}]}  # fmt: skip
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def responses_call(output_index: int, call_id: str, deltas: list[str]) -> bytes:
    body = ev("response.output_item.added", {"type": "response.output_item.added", "output_index": output_index,
                                             "item": {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id,
                                                      "name": "f", "arguments": "", "status": "in_progress"}})  # fmt: skip
    for d in deltas:
        body += ev("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                                                              "output_index": output_index, "item_id": f"fc_{call_id}", "delta": d})  # fmt: skip
    return body


def depth(value: Any) -> int:
    n = 0
    while isinstance(value, (list, dict)) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        n += 1
    return n + (1 if isinstance(value, (list, dict)) else 0)


# --- 1. nesting past the limit: bounded, and handled the documented way -----------------------

DEEP = "[" * 100_000


def test_partial_json_nesting_stops_at_the_limit() -> None:
    p = ssewire.PartialJSON()
    with pytest.raises(json.JSONDecodeError, match="nested deeper than 128 levels") as info:
        p.feed(DEEP)
    assert info.value.pos == 128
    assert depth(p.value) == 128
    json.dumps(p.value)  # printable by recursive code
    repr(p.value)


@pytest.mark.parametrize("dialect", ["chat", "messages", "responses"])
def test_partial_arguments_nesting_stops_at_the_limit(dialect: str) -> None:
    if dialect == "chat":
        s, body, key = ssewire.ChatCompletionStream(), chat_tool(DEEP), 0
    elif dialect == "messages":
        s, body, key = ssewire.MessagesStream(), messages_tool(0, "t", [DEEP]), 0
    else:
        s, body, key = ssewire.ResponsesStream(), responses_call(0, "c", [DEEP]), 0
    s.feed(body)
    value = s.partial_arguments(key)
    assert depth(value) == 128
    json.dumps(value)


MEMORY_SCRIPT = r"""
import json, sys, ssewire
n = int(sys.argv[1])
deep = "[" * n
body = (b"event: content_block_start\ndata: " + json.dumps({"type": "content_block_start", "index": 0,
        "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}).encode() + b"\n\n"
        + b"event: content_block_delta\ndata: " + json.dumps({"type": "content_block_delta", "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": deep}}).encode() + b"\n\n")
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096
s = ssewire.MessagesStream()
before = rss()
s.feed(body)
s.partial_arguments(0)
p = ssewire.PartialJSON()
try:
    p.feed(deep)
except ValueError:
    pass
p.value
print(len(body), rss() - before)
"""


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc")
def test_deep_tool_input_memory_is_a_small_constant_times_the_input() -> None:
    """Before: +1,123 MiB for a 7.6 MiB event (147 bytes per wire byte)."""
    out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, "4000000"], capture_output=True,
                         text=True, timeout=300, check=True)  # fmt: skip
    size, grown = map(int, out.stdout.split())
    assert grown < 8 * size, f"{grown / size:.1f} bytes per wire byte"


# --- 2. integers past CPython's digit limit --------------------------------------------------------

BIG = "9" * 5000


def test_partial_json_big_integer_reads_as_json_loads_would() -> None:
    p = ssewire.PartialJSON()
    p.feed('{"a": ' + BIG + ', "b": [1, 2]}')  # no exception
    assert p.value["b"] == [1, 2]
    assert isinstance(p.value, dict) and p.value["a"] == float("inf")
    assert p.finish()["b"] == [1, 2]
    small = ssewire.PartialJSON()
    small.feed('{"a": ' + "9" * 40 + "}")
    assert small.value["a"] == int("9" * 40)  # exact below the limit


@pytest.mark.parametrize("dialect", ["chat", "messages"])
def test_partial_arguments_big_integer_keeps_the_rest(dialect: str) -> None:
    args = '{"n": ' + BIG + ', "city": "Oslo"}'
    s: Any
    if dialect == "chat":
        s, body = ssewire.ChatCompletionStream(), chat_tool(args)
    else:
        s, body = ssewire.MessagesStream(), messages_tool(0, "t", [args])
    s.feed(body)
    value = s.partial_arguments(0)
    assert value["city"] == "Oslo"
    assert s.partial_arguments(0)["city"] == "Oslo"  # later reads are not corrupted


# --- 3. a second start for the same index ---------------------------------------------------------


def test_messages_second_block_start_replaces_the_arguments() -> None:
    s = ssewire.MessagesStream()
    s.feed(messages_tool(0, "old", ['{"old": 1}']))
    assert s.partial_arguments(0) == {"old": 1}
    s.feed(messages_tool(0, "new", ['{"new": ', "2}"]))
    assert s.partial_arguments(0) == {"new": 2}
    assert s.result()["content"][0]["input"] == {"new": 2}


def test_responses_second_item_added_replaces_the_arguments() -> None:
    s = ssewire.ResponsesStream()
    s.feed(responses_call(0, "old", ['{"old": 1}']))
    assert s.partial_arguments(0) == {"old": 1}
    s.feed(responses_call(0, "new", ['{"new": 2}']))
    assert s.partial_arguments(0) == {"new": 2}


# --- 4. reading value while a structure grows costs what changed ------------------------------------


def _read_after_every_delta(n_items: int) -> None:
    """Feed an array of ``n_items`` short strings 30 bytes at a time and read ``value`` after
    each fragment."""
    text = "[" + ",".join(f'"item {i:06d}"' for i in range(n_items)) + "]"
    p = ssewire.PartialJSON()
    for i in range(0, len(text), 30):
        p.feed(text[i : i + 30])
        p.value
    assert len(p.value) == n_items


def test_value_reads_cost_what_changed() -> None:
    """Many values, read after every fragment: linear (the containers are updated in place, a
    read builds at most the open string). Rebuilding the value on each read would be
    quadratic."""
    assert_linear(_read_after_every_delta, 5_000)


# --- 5. after an error, each feed is O(1) --------------------------------------------------------------


def test_feeds_after_an_error_raise_the_same_error() -> None:
    p = ssewire.PartialJSON()
    p.feed('{"a": ' + "1" * 100_000)
    with pytest.raises(json.JSONDecodeError) as first:
        p.feed(" x")
    for _ in range(1_000):  # each raise used to copy the 100 kB text into a new exception
        with pytest.raises(json.JSONDecodeError) as again:
            p.feed("y" * 10)
        assert again.value is first.value
    with pytest.raises(json.JSONDecodeError) as at_finish:
        p.finish()
    assert at_finish.value is first.value


# --- 6. a raw surrogate pair split between two str fragments ------------------------------------------


def test_surrogate_pair_split_between_fragments_is_one_character() -> None:
    text = '["a\ud83d\ude00b"]'  # a str holding the two halves of a pair, as UTF-16 code points
    whole = ssewire.PartialJSON()
    whole.feed(text)
    assert whole.finish() == ["a\U0001f600b"]
    for cut in range(len(text) + 1):
        p = ssewire.PartialJSON()
        p.feed(text[:cut])
        p.feed(text[cut:])
        assert p.finish() == ["a\U0001f600b"], cut
    lone = ssewire.PartialJSON()
    lone.feed('["x\ud83d')
    lone.feed(b'"]')  # a bytes fragment after a held half: the half was alone
    assert lone.finish() == ["x\ufffd"]


# --- 7. concurrent use ----------------------------------------------------------------------------------


def test_partial_json_concurrent_use_raises_concurrent_use_error() -> None:
    """A call on a PartialJSON that another call is using raises ConcurrentUseError (as the
    streams do), not RuntimeError('Already borrowed'). The overlap is made deterministic: a str
    subclass whose ``encode`` (called while ``feed`` holds the parser, to read surrogates)
    calls back into the same parser."""
    p = ssewire.PartialJSON()
    p.feed('["a", ')
    caught: list[BaseException] = []

    class Reentrant(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:  # type: ignore[override]
            for call in (lambda: p.value, lambda: p.feed("1"), lambda: p.complete, lambda: p.finish()):
                try:
                    call()
                except Exception as e:  # noqa: BLE001 - the type is what is checked
                    caught.append(e)
            return str.encode(self, *args, **kwargs)

    p.feed(Reentrant('"\ud800"]'))
    assert len(caught) == 4 and all(type(e) is ssewire.ConcurrentUseError for e in caught), caught
    assert p.finish() == ["a", "\ufffd"]  # the parser was not disturbed


def test_split_equivalence_of_partial_json() -> None:
    doc = json.dumps({"a": [1, 2.5, "x\u00e9\U0001f600", {"b": None, "c": True}], "d": "\\u00e9"}).encode()
    values = set()
    for way in split_ways(doc):
        p = ssewire.PartialJSON()
        seen = []
        for piece in way.pieces:
            p.feed(piece)
            seen.append(json.dumps(p.value))
        values.add(json.dumps(p.finish()))
    assert len(values) == 1


# --- found by the cargo-fuzz campaign ---------------------------------------------------------------


def test_tool_input_with_a_number_out_of_float_range_is_valid_json() -> None:
    """`1e400` is JSON (json.loads reads inf); the Messages fold used to call such tool input
    "never formed valid JSON", leave `input` as `{}` and warn (serde_json refuses the number).
    The fold now checks tool input with the crate's own JSON reader."""
    body = messages_tool(0, "t", ['{"x": 1e400, ', '"y": 2}'])
    body += ev("content_block_stop", {"type": "content_block_stop", "index": 0})
    s = ssewire.MessagesStream()
    s.feed(body)
    assert s.result()["content"][0]["input"] == {"x": float("inf"), "y": 2}
    assert s.warnings == []


def test_gemini_streamed_arguments_nesting_stops_at_the_limit() -> None:

    """Issue 28: a Vertex ``jsonPath`` nested past the limit is a piece skipped (and noted),
    never arguments deeper than 128 levels; the pieces around it are kept."""
    deep = "$" + ".a" * 300
    s = ssewire.GeminiStream()
    s.feed(_streamed({"jsonPath": "$.x", "numberValue": 1}, {"jsonPath": deep, "numberValue": 2},
                        {"jsonPath": "$.y", "stringValue": "ok"}))  # fmt: skip
    s.finish()
    value = s.partial_arguments(0)
    assert value == {"x": 1, "y": "ok"} and depth(value) <= 128
    assert any("jsonPath" in w for w in s.warnings)
    json.dumps(s.result())


def test_gemini_streamed_index_gaps_cost_what_was_read() -> None:

    """Issue 28: indexes far ahead are filled with nulls only as far as the pieces read pay for
    (linear output), whatever the index says."""
    pieces = [{"jsonPath": f"$.l[{i * 1000}]", "numberValue": i} for i in range(200)]
    s = ssewire.GeminiStream()
    body = _streamed(*pieces)
    s.feed(body)
    s.finish()
    value = s.partial_arguments(0)
    assert len(json.dumps(value)) < 8 * len(body)
    assert any("far past" in w for w in s.warnings)
