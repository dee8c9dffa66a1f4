"""Issue 17: Google Gemini as the fourth dialect (API.md section 9): ``ssewire.GeminiStream``.

1. Captures: every ``tests/data/gemini/NAME.sse`` (a raw ``streamGenerateContent`` body, exact
   bytes: ``?alt=sse`` with CRLF or LF separators, and the JSON-array body) is fed whole, byte
   by byte and at random points, by ``feed()``, ``consume()`` and a mix; every way gives the
   same items, and ``result()``, ``done`` and ``error`` equal ``NAME.json``. The expected files
   were derived by hand from the wire bytes and the rules (``tests/data/gemini/README.md``),
   by someone who had not seen the fold.
2. Items: text runs, thoughts and their signatures, calls, usage, parts, raw.
3. Vertex's streamed call arguments read while they stream (``partial_arguments``).
4. The JSON-array body is read live, element by element, and bounded per element.
5. Errors: an ``error`` object, an ``event: error`` frame, a JSON error body, a blocked
   prompt, a cut stream, another dialect's body, malformed chunks.
6. ``accumulate`` / ``detect_dialect`` / ``aaccumulate`` know Gemini.
7. Hostile input: generated chunks never raise and read the same however they are cut.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import ssewire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ssewire import GeminiStream
from support import paths
from support.dialects import error_fields
from support.gemini_chunks import _streamed, chunk, sse
from support.splitting import check_all_ways, split_ways

DATA = paths.DATA / "gemini"
CAPTURES = sorted(p.stem for p in DATA.glob("*.sse"))
FIELDS = (
    "index", "text", "thought", "thought_signature", "finish_reason", "model_version",
    "response_id", "function_call", "usage", "parts", "raw",
)  # fmt: skip


def key(item: Any) -> Any:
    if isinstance(item, ssewire.GeminiChunk):
        return ("chunk",) + tuple(json.dumps(getattr(item, f), sort_keys=True) for f in FIELDS)
    if isinstance(item, ssewire.ErrorItem):
        return ("error", item.kind, item.event, item.data, error_fields(item.error))
    raise AssertionError(f"unexpected item {item!r}")


def state(stream: Any) -> Any:
    return (stream.done, error_fields(stream.error))


def body_of(name: str) -> bytes:
    return (DATA / f"{name}.sse").read_bytes()


def expected(name: str) -> Any:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def read(body: bytes, **kwargs: Any) -> tuple[list[Any], GeminiStream]:
    s = GeminiStream(**kwargs)
    items = s.feed(body) + s.finish()
    return items, s


# --- 1. captures ----------------------------------------------------------------------------


def test_every_capture_has_its_expected_result() -> None:
    assert len(CAPTURES) >= 15
    assert sorted(p.stem for p in DATA.glob("*.json")) == CAPTURES


@pytest.mark.parametrize("name", CAPTURES)
def test_capture(name: str) -> None:
    body, want = body_of(name), expected(name)
    outcome = check_all_ways(GeminiStream, body, key=key, observe=state)
    assert not outcome.errors
    items, stream = read(body)
    assert [key(i) for i in items] == [key(i) for i in outcome.items]
    assert stream.result() == want["result"]
    assert stream.done is want["done"]
    if want["error"] is None:
        assert stream.error is None, error_fields(stream.error)
    else:
        assert {k: getattr(stream.error, k) for k in want["error"]} == want["error"]
        if want["error"].get("code") != "incomplete_stream":
            assert isinstance(stream.error.raw, dict)  # the document that carried it
    assert stream.errors == [i for i in items if isinstance(i, ssewire.ErrorItem)]
    assert stream.warnings == []


@pytest.mark.parametrize("name", CAPTURES)
def test_capture_result_by_every_path(name: str) -> None:
    """result() after feed(), consume() or a mix of both, for every way of cutting the body."""
    body, want = body_of(name), expected(name)["result"]
    for way in split_ways(body):
        errors = []
        for mode in ("feed", "consume", "mix"):
            s = GeminiStream()
            for n, piece in enumerate(way.pieces):
                if mode == "feed" or (mode == "mix" and n % 2 == 0):
                    s.feed(piece)
                else:
                    assert s.consume(piece) is None
                s.result()  # a partial result never disturbs the fold
            s.finish()
            assert s.result() == want, (way.name, mode)
            errors.append([key(e) for e in s.errors])
        assert errors[0] == errors[1] == errors[2], way.name


# --- 2. items ---------------------------------------------------------------------------------


def test_items_flatten_a_candidate() -> None:
    body = sse(
        chunk({"text": "plan ", "thought": True}, {"text": "more", "thought": True}, {"text": "Hi"},
              usageMetadata={"promptTokenCount": 3}),  # fmt: skip
        chunk({"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "c2ln"},
              {"executableCode": {"code": "1"}}, finish="STOP"),  # fmt: skip
        {"usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 5}, "modelVersion": "gemini-2.5-flash"},
    )
    items, s = read(body)
    assert [(i.index, i.text, i.thought) for i in items] == [
        (0, "plan more", True), (0, "Hi", False), (0, None, False), (None, None, False)
    ]  # fmt: skip
    first, second, third, last = items
    assert first.usage == {"promptTokenCount": 3} and first.function_call is None
    assert first.parts == second.parts == [
        {"text": "plan ", "thought": True}, {"text": "more", "thought": True}, {"text": "Hi"}
    ]  # fmt: skip
    assert first.model_version == "gemini-2.5-flash" and first.response_id == "r"
    assert third.function_call == {"name": "f", "args": {"a": 1}}
    assert third.thought_signature == "c2ln" and third.finish_reason == "STOP"
    assert third.parts[1] == {"executableCode": {"code": "1"}}
    assert last.usage == {"promptTokenCount": 3, "candidatesTokenCount": 5} and last.parts is None
    assert last.raw["modelVersion"] == "gemini-2.5-flash"
    assert "GeminiChunk(index=0, text='Hi')" == repr(second)
    assert s.done and s.result()["usageMetadata"]["candidatesTokenCount"] == 5


def test_a_signature_stays_with_its_text() -> None:
    """Parts merge as the non-streaming response holds them: a signature closes nothing but
    does not merge into text that already has one."""
    body = sse(
        chunk({"text": "a", "thought": True, "thoughtSignature": "s1"}),
        chunk({"text": "b", "thought": True, "thoughtSignature": "s2"}),
        chunk({"text": "c", "thought": True}),
        chunk({"text": "d"}, {"text": "", "thoughtSignature": "s3"}, finish="STOP"),
    )
    _, s = read(body)
    assert s.result()["candidates"][0]["content"]["parts"] == [
        {"text": "a", "thought": True, "thoughtSignature": "s1"},
        {"text": "bc", "thought": True, "thoughtSignature": "s2"},
        {"text": "d", "thoughtSignature": "s3"},
    ]


def test_the_template_path_gives_the_same_items_as_a_fresh_decode() -> None:
    """A long run of chunks of one shape (the fast path reads them off the wire) gives exactly
    the items, usage and result that decoding each chunk alone gives."""
    from support import streams

    body = streams.gemini_stream(200, seed=9, thinking=True, function_call=True)
    items, s = read(body)
    frames = [f + b"\r\n\r\n" for f in body.split(b"\r\n\r\n") if f]
    fresh = [key(i) for f in frames for i in GeminiStream().feed(f)]
    assert [key(i) for i in items] == fresh
    usage = json.loads(frames[-1][6:])["usageMetadata"]
    assert s.result()["usageMetadata"] == usage
    assert s.done and s.error is None


# --- 3. streamed call arguments -----------------------------------------------------------------


def test_vertex_arguments_are_readable_while_they_stream() -> None:
    body = body_of("vertex_partial_args")
    want = expected("vertex_partial_args")["result"]["candidates"][0]["content"]["parts"]
    args = next(p["functionCall"]["args"] for p in want if "functionCall" in p)
    s = GeminiStream()
    seen = []
    for frame in body.split(b"\r\n\r\n"):
        s.feed(frame + b"\r\n\r\n")
        try:
            seen.append(json.loads(json.dumps(s.partial_arguments(0))))
        except KeyError:
            continue
    s.finish()
    assert seen[-1] == args
    # Each value seen is a prefix of the final arguments: strings grow, keys only come (None
    # before the first piece).
    assert seen[0] is None
    for value in seen[1:]:
        for k, v in value.items():
            assert k in args
            if isinstance(v, str):
                assert args[k].startswith(v)
    assert len({json.dumps(v) for v in seen}) > 2  # it did change while streaming
    with pytest.raises(KeyError):
        s.partial_arguments(1)


def test_whole_and_parallel_calls_by_position() -> None:
    _, s = read(body_of("parallel_calls"))
    parts = [p for p in s.result()["candidates"][0]["content"]["parts"] if "functionCall" in p]
    for i, part in enumerate(parts):
        assert s.partial_arguments(i) == part["functionCall"]["args"]


def test_streamed_pieces_that_do_not_fit_are_noted_not_raised() -> None:
    call = {"functionCall": {"name": "f", "willContinue": True,
                             "partialArgs": [{"jsonPath": "$.a[0]", "numberValue": 1},
                                             {"jsonPath": "$.a.b", "stringValue": "x"},
                                             {"jsonPath": "$..*", "boolValue": True}]}}  # fmt: skip
    body = sse(chunk(call), chunk({"functionCall": {}}, finish="STOP"))
    items, s = read(body)
    part = s.result()["candidates"][0]["content"]["parts"][0]
    assert part == {"functionCall": {"name": "f", "args": {"a": [1]}}}
    assert len(s.warnings) == 2 and all("skipped" in w for w in s.warnings)


def test_a_streamed_call_may_open_with_empty_args() -> None:
    """proto3 JSON writes an empty `Struct` that is set: a Vertex opener can carry `"args": {}`
    beside `willContinue`. That is a streamed call with no argument yet, not a whole call (it
    was read as one, and the pieces after it as a second call without a name)."""
    body = sse(chunk({"functionCall": {"name": "f", "args": {}, "willContinue": True}}, index=None),
               chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.x", "numberValue": 1}],
                                       "willContinue": True}}, index=None),
               chunk({"functionCall": {}}, index=None, finish="STOP"))  # fmt: skip
    _, s = read(body)
    assert s.result()["candidates"][0]["content"]["parts"] == [{"functionCall": {"name": "f", "args": {"x": 1}}}]
    assert s.warnings == []
    chat = ssewire.ChatCompletionStream()
    chat.feed(ssewire.translate(body, "gemini", "chat"))
    calls = chat.result()["choices"][0]["message"]["tool_calls"]
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [("f", {"x": 1})]


def test_an_empty_call_alone_is_not_a_call() -> None:
    _, s = read(sse(chunk({"functionCall": {}}), chunk({"text": "x"}, finish="STOP")))
    assert s.result()["candidates"][0]["content"]["parts"] == [{"text": "x"}]


# --- 4. the JSON-array body ---------------------------------------------------------------------


def test_the_array_body_is_read_live_element_by_element() -> None:
    elements = [chunk({"text": "a"}), chunk({"text": "b"}), chunk({"text": "c"}, finish="STOP")]
    texts = [json.dumps(e, indent=2) for e in elements]
    s = GeminiStream()
    assert s.feed(b"[" + texts[0][:-1].encode()) == []
    assert [i.text for i in s.feed(b"}\r\n,")] == ["a"]
    assert [i.text for i in s.feed(("\r\n" + texts[1] + "\r\n," + texts[2] + "\r\n]").encode())] == ["b", "c"]
    assert s.finish() == [] and s.done and s.error is None
    # Cut before the closing bracket: the body was cut.
    body = ("[" + ",".join(texts[:2])).encode()
    _, s = read(body)
    assert not s.done and s.error.code == "incomplete_stream" and "cut off" in s.error.message


def test_an_array_element_too_large_is_dropped_and_the_rest_read() -> None:
    big = chunk({"text": "x" * 5000})
    body = ("[" + json.dumps(chunk({"text": "a"})) + "," + json.dumps(big) + ","
            + json.dumps(chunk({"text": "b"}, finish="STOP")) + "]").encode()  # fmt: skip
    for way in split_ways(body):
        s = GeminiStream(max_event_size=1000)
        items = []
        for piece in way.pieces:
            try:
                items += s.feed(piece)
            except ssewire.EventTooLargeError as e:
                items += e.events
                assert e.limit == 1000
        s.finish()
        assert [i.text for i in items] == ["a", "b"], way.name
        assert s.done


def test_an_array_error_body() -> None:
    body = b'[{\n  "error": {\n    "code": 400,\n    "message": "API key not valid.",\n    "status": "INVALID_ARGUMENT"\n  }\n}\n]'
    items, s = read(body)
    assert (s.error.message, s.error.type, s.error.code) == ("API key not valid.", "INVALID_ARGUMENT", 400)
    assert [i.kind for i in items] == ["stream_error"]


# --- 5. errors ----------------------------------------------------------------------------------


def test_error_forms() -> None:
    error = {"error": {"code": 429, "message": "Resource exhausted.", "status": "RESOURCE_EXHAUSTED"}}
    for body in (sse(error), b"event: error\ndata: " + json.dumps(error).encode() + b"\n\n", json.dumps(error).encode()):
        items, s = read(body)
        assert (s.error.message, s.error.type, s.error.code) == ("Resource exhausted.", "RESOURCE_EXHAUSTED", 429)
        assert not s.done and len(s.errors) == 1


def test_a_blocked_prompt_is_an_error_with_its_own_code() -> None:
    body = body_of("blocked_prompt")
    items, s = read(body)
    assert s.error.code == "prompt_blocked" and "blocked" in s.error.message
    assert s.result()["promptFeedback"]["blockReason"] == s.error.type
    assert [i.kind if isinstance(i, ssewire.ErrorItem) else "chunk" for i in items] == ["chunk", "stream_error"]
    with pytest.raises(ssewire.AccumulateError) as raised:
        ssewire.accumulate(body)
    assert raised.value.code == "prompt_blocked" and raised.value.dialect == "gemini"
    assert raised.value.result["promptFeedback"] == s.result()["promptFeedback"]


def test_done_is_candidate_zero_finishing() -> None:
    other = chunk({"text": "b"}, index=1, finish="STOP")
    _, s = read(sse(chunk({"text": "a"}), other))
    assert not s.done and s.error.code == "incomplete_stream"
    _, s = read(sse(other, chunk({"text": "a"}, finish="MAX_TOKENS")))
    assert s.done and s.error is None
    assert [c["finishReason"] for c in s.result()["candidates"]] == ["MAX_TOKENS", "STOP"]


def test_malformed_chunks_are_reported_and_the_stream_goes_on() -> None:
    body = sse(chunk({"text": "a"})) + b'data: {"candidates": [\r\n\r\n' + sse(chunk({"text": "b"}, finish="STOP"))
    items, s = read(body)
    assert [getattr(i, "text", None) or i.kind for i in items] == ["a", "malformed_json", "b"]
    assert s.done and s.error is None


def test_another_dialects_body_is_named() -> None:
    chat = b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x"}}]}\n\ndata: [DONE]\n\n'
    _, s = read(chat)
    assert s.error.code == "wrong_dialect"
    c = ssewire.ChatCompletionStream()
    c.feed(body_of("text_basic"))
    c.finish()
    assert c.error.code in ("wrong_dialect", "incomplete_stream")


# --- 6. accumulate / detect_dialect ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["text_basic", "text_lf", "json_array_body", "vertex_partial_args"])
def test_accumulate_and_detect(name: str) -> None:
    body = body_of(name)
    assert ssewire.detect_dialect(body[:2048]) == "gemini"
    want = expected(name)["result"]
    assert ssewire.accumulate(body) == want
    assert ssewire.accumulate(body, dialect="gemini") == want
    assert ssewire.accumulate([body[i : i + 7] for i in range(0, len(body), 7)]) == want

    async def chunks() -> Any:
        for i in range(0, len(body), 100):
            yield body[i : i + 100]

    assert asyncio.run(ssewire.aaccumulate(chunks())) == want


# --- 7. hostile input ---------------------------------------------------------------------------

_text = st.text(max_size=8)
_value = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), _text)
_piece = st.fixed_dictionaries(
    {"jsonPath": st.sampled_from(["$.a", "$.a.b", "$.l[0]", "$.l[1]", "$['x y']", "$", "bad", "$.a[0]"])},
    optional={"stringValue": _text, "numberValue": st.integers(-9, 9), "boolValue": st.booleans(),
              "nullValue": st.none(), "willContinue": st.booleans()},
)  # fmt: skip
_call = st.fixed_dictionaries(
    {}, optional={"name": st.sampled_from(["f", "g"]), "args": st.dictionaries(_text, _value, max_size=2),
                  "willContinue": st.booleans(), "partialArgs": st.lists(_piece, max_size=3), "id": _text},
)  # fmt: skip
_part = st.one_of(
    st.fixed_dictionaries({"text": _text}, optional={"thought": st.booleans(), "thoughtSignature": _text}),
    st.fixed_dictionaries({"functionCall": _call}, optional={"thoughtSignature": _text}),
    st.fixed_dictionaries({"executableCode": st.fixed_dictionaries({"code": _text})}),
    st.just({"text": 5}),
    st.just({}),
)
_candidate = st.fixed_dictionaries(
    {},
    optional={"content": st.fixed_dictionaries({}, optional={"parts": st.lists(_part, max_size=3),
                                                              "role": st.just("model")}),
              "index": st.integers(-1, 2), "finishReason": st.sampled_from(["STOP", "SAFETY", "MAX_TOKENS"]),
              "safetyRatings": st.lists(st.just({"category": "X", "probability": "LOW"}), max_size=1)},
)  # fmt: skip
_chunk = st.one_of(
    st.fixed_dictionaries(
        {"candidates": st.lists(_candidate, max_size=2)},
        optional={"usageMetadata": st.fixed_dictionaries({"promptTokenCount": st.integers(0, 99)}),
                  "modelVersion": st.just("g"), "responseId": _text,
                  "promptFeedback": st.just({"blockReason": "SAFETY"})},
    ),
    st.just({"error": {"code": 500, "message": "m", "status": "INTERNAL"}}),
    st.just({"promptFeedback": {"blockReason": "OTHER"}}),
    st.just({"candidates": None, "usageMetadata": None}),
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_chunk, max_size=8), st.booleans(), st.binary(max_size=12), st.randoms(use_true_random=False))
def test_generated_streams_never_raise_and_read_the_same_however_cut(
    chunks: list[dict], array: bool, tail: bytes, rng: Any
) -> None:
    if array:
        body = ("[" + ",\r\n".join(json.dumps(c) for c in chunks) + "]").encode() + tail
    else:
        body = sse(*chunks, crlf=rng.random() < 0.5) + tail
    whole, s = read(body)
    result, state_ = s.result(), state(s)
    for item in whole:
        for f in FIELDS if isinstance(item, ssewire.GeminiChunk) else ():
            getattr(item, f)
    cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, 5))) if len(body) > 1 else []
    pieces = [body[a:b] for a, b in zip([0] + cuts, cuts + [len(body)])]
    s2 = GeminiStream()
    items = []
    for p in pieces:
        items += s2.feed(p)
    items += s2.finish()
    assert [key(i) for i in items] == [key(i) for i in whole]
    assert s2.result() == result and state(s2) == state_
    for target in ("chat", "messages", "responses"):
        t = ssewire.Translator("gemini", target)
        out = b"".join(t.feed(p) for p in pieces) + t.finish()
        assert out == ssewire.translate(body, "gemini", target)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_chunk, min_size=1, max_size=6))
def test_a_result_written_to_python_is_the_tree_converted(chunks: list[dict]) -> None:
    """Issue 47: ``GeminiStream.result()`` writes its dict straight from the fold; a
    ``Translator``'s target fold converts the fold's tree. Fed the same Gemini chunks (what the
    translator wrote), both are the same object, keys in the same order (``json.dumps``
    equal): thoughts, signatures, calls, usage, a candidate's keys."""
    t = ssewire.Translator("gemini", "gemini")
    body = sse(*chunks)
    written = b"".join(t.feed(body[i : i + 64]) for i in range(0, len(body), 64)) + t.finish()
    s = GeminiStream()
    s.feed(written)
    s.finish()
    assert json.dumps(s.result()) == json.dumps(t.result())


def test_a_rich_result_written_to_python_is_the_tree_converted() -> None:
    """The same, for one stream with every kind of part the translator writes."""
    call = {"functionCall": {"name": "f", "args": {"a": [1, {"b": None}], "c": "\u00e9"}}, "thoughtSignature": "s2"}
    chunks = [
        chunk({"text": "plan", "thought": True, "thoughtSignature": "s1"}, {"text": "Hi "}, modelVersion="g-1"),
        {**chunk({"text": "there"}, call, finish="STOP"), "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 9},
         "responseId": "r"},
    ]  # fmt: skip
    t = ssewire.Translator("gemini", "gemini")
    written = t.feed(sse(*chunks)) + t.finish()
    s = GeminiStream()
    s.feed(written)
    s.finish()
    result = s.result()
    assert json.dumps(result) == json.dumps(t.result())
    parts = result["candidates"][0]["content"]["parts"]
    assert parts[0] == {"text": "plan", "thought": True, "thoughtSignature": "s1"}
    assert any("functionCall" in p for p in parts)


def test_a_key_a_part_repeats_reads_as_json_loads_reads_it() -> None:
    """A part's repeated key takes its last value in its first place, as ``json.loads`` reads
    the part (kept as sent, or a text part's vendor key); a key of a part joined to the one
    before keeps the first part's value."""
    parts = [
        '{"inlineData": {"a": 1}, "k": 2, "inlineData": {"b": 2}}',
        '{"text": "a", "x": 1, "x": [2]}',
    ]
    body = sse(chunk()).replace(b'"parts": []', ('"parts": [' + ", ".join(parts) + "]").encode())
    body += sse(chunk({"text": "b", "x": 3}, finish="STOP"))
    for pieces in ([body], [body[i : i + 1] for i in range(len(body))]):
        s = GeminiStream()
        for piece in pieces:
            s.feed(piece)
        s.finish()
        got = s.result()["candidates"][0]["content"]["parts"]
        assert json.dumps(got) == json.dumps([json.loads(parts[0]), {"text": "ab", "x": [2]}])


# --- issue 28: loose ends ------------------------------------------------------------------------


def test_every_function_call_of_a_chunk_is_given() -> None:
    """A model that calls tools in parallel sends the calls in one chunk: ``function_calls``
    has them all, in order; ``function_call`` stays the first."""
    a = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}
    b = {"functionCall": {"name": "get_time", "args": {"tz": "CET"}}}
    items, _ = read(sse(chunk(a, b, finish="STOP")))
    [item] = [i for i in items if i.function_call is not None]
    assert item.function_call == a["functionCall"]
    assert item.function_calls == [a["functionCall"], b["functionCall"]]
    plain, _ = read(sse(chunk({"text": "hi"}, finish="STOP")))
    assert all(i.function_calls == [] for i in plain)


def test_a_streamed_argument_index_is_its_place() -> None:
    """``$.l[0]`` then ``$.l[2]``: item 1 was never sent, so it is null (the index is the
    place, as in the non-streaming call), not packed into ``[1, 3]``."""
    _, s = read(_streamed({"jsonPath": "$.l[0]", "numberValue": 1}, {"jsonPath": "$.l[2]", "numberValue": 3}))
    assert s.result()["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == {"l": [1, None, 3]}
    assert s.partial_arguments(0) == {"l": [1, None, 3]}
    # Nested: a new array whose first index is 1.
    _, s = read(_streamed({"jsonPath": "$.m[1].k", "stringValue": "v"}))
    assert s.result()["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == {"m": [None, {"k": "v"}]}


def test_an_index_far_ahead_is_refused_not_filled() -> None:
    """The gap is filled with nulls only as far as the pieces read pay for it (a hostile index
    of 10**12 must not write terabytes): such a piece is skipped and noted."""
    _, s = read(_streamed({"jsonPath": "$.l[0]", "numberValue": 1},
                          {"jsonPath": "$.l[1000000000000]", "numberValue": 2}))  # fmt: skip
    assert s.result()["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == {"l": [1]}
    assert any("far past" in w for w in s.warnings)


def test_infinite_number_values_are_numbers() -> None:
    """protobuf's JSON writes the numbers JSON has no literal for as strings: they are floats
    (``inf``), and a NaN is null; a numeric string is its number."""
    _, s = read(_streamed({"jsonPath": "$.a", "numberValue": "Infinity"}, {"jsonPath": "$.b", "numberValue": "-Infinity"},
                          {"jsonPath": "$.c", "numberValue": "NaN"}, {"jsonPath": "$.d", "numberValue": "12"},
                          {"jsonPath": "$.e", "numberValue": 0.5}))  # fmt: skip
    args = s.result()["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]
    assert args == {"a": float("inf"), "b": float("-inf"), "c": None, "d": 12, "e": 0.5}


@pytest.mark.parametrize("reason", ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "OTHER"])
def test_a_turn_gemini_ended_badly_is_a_failed_response(reason: str) -> None:
    """Into Responses, a finish reason that means the turn gave no valid answer is
    ``response.failed`` naming it, not ``completed``."""
    body = sse(chunk({"text": "I will call"}), chunk(finish=reason, usageMetadata={"promptTokenCount": 3,
                                                                               "candidatesTokenCount": 2}))  # fmt: skip
    out = ssewire.translate(body, "gemini", "responses")
    back = ssewire.ResponsesStream()
    back.feed(out)
    back.finish()
    assert b"response.failed" in out and b"response.completed" not in out
    assert back.error is not None and reason in back.error.message
