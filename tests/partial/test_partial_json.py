"""``ssewire.PartialJSON`` (API.md section 7): partial JSON read incrementally.

The core of this file is a differential test. ``reference_partial`` below is a plain
recursive-descent reading of a *prefix* of a valid JSON text by the rules of the partial value,
written from the rules and nothing else; for many generated documents, fed in every way
(whole, one character or byte at a time, random cuts, small random reads), ``value`` after each
fragment must equal the reference reading of everything fed so far, and ``finish()`` must equal
``json.loads``. Invalid texts must fail at the position ``json.loads`` reports.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator, Union

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ssewire import PartialJSON
from support.partial_reference import (
    reference_partial,
    tagged,
)
from support.splitting import split_ways

# --- the reference: a prefix read by the rules -------------------------------------------------


# --- helpers -------------------------------------------------------------------------------------


def no_lone_surrogates(value: Any) -> Any:
    """``json.loads``'s result with lone surrogates replaced by U+FFFD (ssewire's documented
    difference: a Rust string cannot hold them)."""
    if isinstance(value, str):
        return re.sub("[\ud800-\udfff]", "\ufffd", value)
    if isinstance(value, list):
        return [no_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {no_lone_surrogates(k): no_lone_surrogates(v) for k, v in value.items()}
    return value


def str_ways(text: str) -> Iterator[list[str]]:
    """``text`` cut into str pieces the ways ``splitting.split_ways`` cuts bytes (the same
    piece lengths, counted in characters)."""
    for way in split_ways(bytes(len(text))):
        pieces, pos = [], 0
        for piece in way.pieces:
            pieces.append(text[pos : pos + len(piece)])
            pos += len(piece)
        yield pieces


def check_document(text: str) -> None:
    """Feeds ``text`` every way, as str and as bytes; compares ``value`` after each fragment
    with the reference, and ``finish()`` with ``json.loads``."""
    expected_final = tagged(no_lone_surrogates(json.loads(text)))
    data = text.encode("utf-8")
    ways: list[list[Union[str, bytes]]] = [list(p) for p in str_ways(text)]
    ways += [list(way.pieces) for way in split_ways(data)]
    for pieces in ways:
        p = PartialJSON()
        fed = pieces[0][:0]
        for piece in pieces:
            p.feed(piece)
            fed += piece  # type: ignore[operator]
            prefix = fed if isinstance(fed, str) else fed.decode("utf-8", errors="ignore")
            value, complete = reference_partial(prefix)
            assert tagged(p.value) == tagged(value), (pieces, prefix)
            assert p.complete == complete, (pieces, prefix)
        assert tagged(p.finish()) == expected_final, pieces
        assert tagged(p.value) == expected_final
        assert p.complete


# --- generated documents -------------------------------------------------------------------------

ws = st.sampled_from(["", "", " ", "\n  ", "\t", "\r\n"])


@st.composite
def string_literals(draw: st.DrawFn) -> str:
    """A JSON string literal with every kind of character and escape."""
    piece = st.one_of(
        st.text(min_size=1, max_size=4).map(
            lambda s: s.replace("\\", "\\\\").replace('"', '\\"')
        ).map(lambda s: "".join(c if ord(c) >= 0x20 else f"\\u{ord(c):04x}" for c in s)),
        st.sampled_from(['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]),
        st.integers(0, 0xFFFF).map(lambda u: f"\\u{u:04x}"),  # also lone surrogates
        st.integers(0, 0xFFFF).map(lambda u: f"\\u{u:04X}"),
        st.sampled_from(["\\ud83d\\ude00", "\\uD834\\uDD1E", "😀", "é", "中", "\U0010ffff"]),
    )
    return '"' + "".join(draw(st.lists(piece, max_size=6))) + '"'


numbers = st.from_regex(r"-?(0|[1-9][0-9]{0,22})(\.[0-9]{1,8})?([eE][+-]?[0-9]{1,3})?", fullmatch=True)
scalars = st.one_of(st.sampled_from(["true", "false", "null"]), numbers, string_literals())


@st.composite
def _array(draw: st.DrawFn, children: st.SearchStrategy[str]) -> str:
    items = draw(st.lists(children, max_size=5))
    return "[" + draw(ws) + ("," + draw(ws)).join(items) + draw(ws) + "]"


@st.composite
def _object(draw: st.DrawFn, children: st.SearchStrategy[str]) -> str:
    members = draw(st.lists(st.tuples(string_literals(), children), max_size=5))
    sep = draw(ws) + ":" + draw(ws)
    body = ("," + draw(ws)).join(k + sep + v for k, v in members)
    return "{" + draw(ws) + body + draw(ws) + "}"


documents = st.recursive(
    scalars, lambda children: st.one_of(_array(children), _object(children)), max_leaves=12
).flatmap(lambda doc: st.tuples(ws, ws).map(lambda pad: pad[0] + doc + pad[1]))

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(documents)
def test_value_after_every_fragment_matches_the_reference(text: str) -> None:
    check_document(text)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(documents, min_size=10, max_size=20))
def test_large_documents_at_random_cuts(docs: list[str]) -> None:
    text = "[" + ",".join(docs) + "]"
    expected = tagged(no_lone_surrogates(json.loads(text)))
    # The random cuts only: byte by byte is covered above, on smaller documents.
    for way in split_ways(text.encode()):
        if not way.name.startswith("random cuts"):
            continue
        p = PartialJSON()
        fed = b""
        for piece in way.pieces:
            p.feed(piece)
            fed += piece
            value, _ = reference_partial(fed.decode("utf-8", errors="ignore"))
            assert tagged(p.value) == tagged(value), way.name
        assert tagged(p.finish()) == expected


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, -0, -0.0, 0.5e-3, 1E+2, 12345678901234567890123, 1e400], "b": {"c": null}}',
        '"\\ud83d\\ude00 \\u00e9 \\\\ \\" \\/ \\b\\f\\n\\r\\t"',
        '["\\ud83d", "\\udc00", "\\ud83d\\u0041", "\\ud83dx", "\\ud83d\\n"]',
        "  [ ]  ",
        '{"dup": 1, "x": 2, "dup": [3]}',
        "-12.5e+07 ",
        "true",
    ],
)
def test_fixed_documents(text: str) -> None:
    check_document(text)


# --- the rules, one by one -----------------------------------------------------------------------


def values_after(*pieces: Union[str, bytes]) -> list[Any]:
    p = PartialJSON()
    out = []
    for piece in pieces:
        p.feed(piece)
        out.append(json.loads(json.dumps(p.value)))  # a snapshot
    return out


def test_the_rules_by_example() -> None:
    assert values_after("", " ", '{"name": "Par', 'is", "days": 1', "2, ", '"tags": [tr') == [
        None,
        None,
        {"name": "Par"},
        {"name": "Paris"},  # 1 may still grow
        {"name": "Paris", "days": 12},
        {"name": "Paris", "days": 12, "tags": []},  # `tr` is not a value yet
    ]
    # An object key is left out until its value starts.
    assert values_after('{"k', 'ey"', ": ", '"') == [{}, {}, {}, {"key": ""}]


def test_a_cut_escape_is_never_shown_broken() -> None:
    text = '["a\\u00e9\\ud83d\\ude00b"]'
    shown = [v[0] for v in values_after(*text) if v]
    assert set(shown) == {"", "a", "aé", "aé😀", "aé😀b"}
    assert shown.count("aé") == len("\\ud83d\\ude00")  # the pair is held back until whole


def test_a_utf8_character_cut_between_feeds_is_held_back() -> None:
    data = '["é中😀"]'.encode()
    seen = [v for v in values_after(*[data[i : i + 1] for i in range(len(data))])]
    assert [v[0] for v in seen if v] == [""] * 2 + ["é"] * 3 + ["é中"] * 4 + ["é中😀"] * 3


def test_containers_are_the_same_objects_from_read_to_read() -> None:
    text = '{"calls": [{"name": "a", "args": {"x": [1, 2]}}, {"name": "b", "args": {}}], "n": 1}'
    p = PartialJSON()
    seen: dict[tuple[Any, ...], Any] = {}

    def walk(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
        if isinstance(value, (list, dict)):
            yield path, value
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in items:
                yield from walk(v, (*path, k))

    for c in text:
        p.feed(c)
        for path, obj in walk(p.value, ()):
            assert seen.setdefault(path, obj) is obj, path
    assert p.finish() is seen[()]
    assert len(seen) == 7


def test_an_unfinished_string_is_replaced_and_then_kept() -> None:
    p = PartialJSON()
    p.feed('["ab')
    lst = p.value
    first = lst[0]
    p.feed("c")
    assert p.value is lst and lst == ["abc"] and first == "ab"
    p.feed('", "d')
    done = lst[0]
    p.feed('e"]')
    assert lst == ["abc", "de"] and lst[0] is done


def test_after_the_document_only_whitespace() -> None:
    p = PartialJSON()
    p.feed('{"a": 1} \n\t')
    assert p.complete and p.value == {"a": 1}
    with pytest.raises(json.JSONDecodeError) as info:
        p.feed(' {"b": 2}')
    assert info.value.pos == _loads_pos('{"a": 1} \n\t {"b": 2}') == 12
    assert p.value == {"a": 1}
    p2 = PartialJSON()
    p2.feed("12")
    assert not p2.complete and p2.value is None  # 12 may still grow
    p2.feed(" ")
    assert p2.complete and p2.value == 12


# --- invalid documents ---------------------------------------------------------------------------

INVALID = [
    "",
    "   ",
    "[1,]",
    "[1 2]",
    "{,}",
    "{1: 2}",
    '{"a" 1}',
    '{"a": 1,}',
    '{"a": 1 "b": 2}',
    '{"a"',
    '{"a":',
    "[",
    "]",
    '"abc',
    '"ab\\',
    '"a\\x"',
    '"a\\u12x4"',
    '"a\\u12',
    '"ab\x01"',
    '["é", "\x1f"]',
    "tru",
    "[trux]",
    "nul",
    "-",
    "[-]",
    "-x",
    "1.",
    "1.x",
    "[1.]",
    "1e",
    "1e+",
    "[1e+]",
    "01",
    "[01]",
    "-01",
    "1 2",
    '{"a": 1} x',
    "[1, 2x]",
    "[1, 2",
    "[é, 1]",
]


def _loads_pos(text: str) -> int:
    """Where ``json.loads`` says ``text`` breaks. PartialJSON reports the position of the
    CPython 3.9-3.12 decoder; 3.13's reports a trailing comma at the comma itself ("Illegal
    trailing comma"), one character earlier than the older "Expecting ..." errors: for those
    the older position is used."""
    with pytest.raises(json.JSONDecodeError) as info:
        json.loads(text)
    if info.value.msg.startswith("Illegal trailing comma"):
        return info.value.pos + 1
    return info.value.pos


def valid_before(text: str, pos: int) -> Any:
    """The reference value of what was valid before an error at ``pos``. A number is ended by
    any character that cannot continue it, the offending one included."""
    prefix = text[:pos]
    if prefix[-1:].isdigit() and text[pos : pos + 1] not in tuple(".eE0123456789"):
        prefix += " "
    return reference_partial(prefix)[0]


@pytest.mark.parametrize("text", INVALID)
def test_invalid_text_fails_where_json_loads_says(text: str) -> None:
    pos = _loads_pos(text)
    for pieces in [*str_ways(text), *[w.pieces for w in split_ways(text.encode())]]:
        p = PartialJSON()
        try:
            for piece in pieces:
                p.feed(piece)
        except json.JSONDecodeError as exc:
            assert exc.pos == pos, pieces
            assert tagged(p.value) == tagged(valid_before(text, pos)), pieces
            with pytest.raises(json.JSONDecodeError):  # the error is sticky
                p.feed("")
        else:
            before = tagged(p.value)
            with pytest.raises(json.JSONDecodeError) as info:
                p.finish()
            assert info.value.pos == pos, pieces
            assert tagged(p.value) == before  # a failing finish() changes nothing


@pytest.mark.parametrize(("text", "pos"), [("NaN", 0), ("[Infinity]", 1), ('{"a": -Infinity}', 6)])
def test_nan_and_infinity_are_refused(text: str, pos: int) -> None:
    # json.loads accepts these (a Python extension); they are not JSON (RFC 8259), and an LLM
    # that writes them wrote invalid arguments, so ssewire fails where the word starts.
    json.loads(text)
    p = PartialJSON()
    with pytest.raises(json.JSONDecodeError) as info:
        p.feed(text)
    assert info.value.pos == pos


def test_invalid_utf8_fails_at_its_character() -> None:
    p = PartialJSON()
    p.feed('["é'.encode())
    with pytest.raises(ValueError) as info:
        p.feed(b"\xff\"]")
    assert info.value.pos == 3  # type: ignore[attr-defined]
    assert p.value == ["é"]
    p = PartialJSON()
    p.feed(b'"\xe4\xb8')  # a cut character, never completed
    with pytest.raises(ValueError):
        p.finish()


def test_input_types() -> None:
    for make in (bytes, bytearray, memoryview):
        p = PartialJSON()
        p.feed(make(b'{"a": [1, "'))
        p.feed(make('é"]}'.encode()))
        assert p.finish() == {"a": [1, "é"]}
    p = PartialJSON()
    with pytest.raises(TypeError):
        p.feed(12)  # type: ignore[arg-type]
    p.feed('"\ud800"')  # a lone surrogate in a str is replaced
    assert p.finish() == "\ufffd"


def test_deep_nesting_needs_no_recursion() -> None:
    """The parser has no native recursion, so nesting to the limit (128, as everywhere in
    ssewire) reads at every split; one level more is an error, not a deeper value (issue 15:
    8 million levels used to build a value no recursive code could print)."""
    depth = 128
    p = PartialJSON()
    p.feed("[" * depth)
    value = p.value
    for _ in range(depth - 1):
        value = value[0]
    assert value == []
    p.feed("]" * depth)
    assert p.complete
    q = PartialJSON()
    with pytest.raises(json.JSONDecodeError, match="deeper than 128"):
        q.feed("[" * 100_000)


# --- issue 28: what changed, feed by feed ----------------------------------------------------


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def apply_changes(root: Any, changes: list) -> Any:
    """Applies ``(op, path, value)`` changes (RFC 6901 pointers) to ``root``: the reader a UI
    writes. ``add`` of an array item comes at its end; ``append`` extends a string."""
    for op, path, value in changes:
        assert op in ("add", "append", "replace"), op
        if path == "":
            root = root + value if op == "append" else value
            continue
        assert path.startswith("/"), path
        tokens = [_unescape(t) for t in path[1:].split("/")]
        parent = root
        for t in tokens[:-1]:
            parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        last = tokens[-1]
        if isinstance(parent, list):
            i = int(last)
            if op == "add":
                assert i == len(parent), (path, len(parent))
                parent.append(value)
            elif op == "append":
                parent[i] += value
            else:
                parent[i] = value
        else:
            if op == "append":
                parent[last] += value
            else:
                assert (op == "replace") == (last in parent), (op, path)
                parent[last] = value
    return root


def follow(pieces: list, check_every: bool = True) -> tuple[Any, int]:
    """Feeds ``pieces``, applying each feed's changes to a mirror; after every feed the
    mirror is the value. Returns the final mirror and the characters the changes carried."""
    p = PartialJSON()
    mirror: Any = None
    carried = 0
    for piece in pieces:
        changes = p.feed(piece)
        carried += sum(len(v) for op, _, v in changes if isinstance(v, str))
        mirror = apply_changes(mirror, changes)
        if check_every:
            assert tagged(mirror) == tagged(p.value)
    p.finish()
    mirror = apply_changes(mirror, p.changes())
    assert p.changes() == []
    assert tagged(mirror) == tagged(p.value)
    return mirror, carried


@SETTINGS
@given(documents, st.data())
def test_changes_rebuild_the_value_after_every_feed(text: str, data: st.DataObject) -> None:
    """Random documents (escapes, non-ASCII, surrogate pairs, nesting, numbers, literals) cut
    at random points, as str and as UTF-8 bytes."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12)))
    pieces = [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
    final, carried = follow(pieces)
    assert tagged(final) == tagged(no_lone_surrogates(json.loads(text)))
    assert carried <= len(text)
    raw = text.encode()
    bcuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=12)))
    follow([raw[a:b] for a, b in zip([0] + bcuts, bcuts + [len(raw)])])


def test_changes_byte_by_byte_and_by_example() -> None:
    text = '{"a/b~c": ["x\\u00e9y", 12, {"k": true}], "s": "😀z", "a/b~c": null}'
    follow([text[i : i + 1] for i in range(len(text))])
    p = PartialJSON()
    assert p.feed('{"a/b~c": ["x') == [("add", "", {}), ("add", "/a~1b~0c", []), ("add", "/a~1b~0c/0", "x")]
    assert p.feed('\\u00e9y", 1') == [("append", "/a~1b~0c/0", "éy")]
    assert p.feed("2, {") == [("add", "/a~1b~0c/1", 12), ("add", "/a~1b~0c/2", {})]
    p.feed('"k": true}], "a/b~c": null}')
    assert p.finish() == {"a/b~c": None}
    # A top-level number completes at finish(): its change waits in changes().
    q = PartialJSON()
    assert q.feed("-12.5") == [] and q.finish() == -12.5 and q.changes() == [("add", "", -12.5)]


def test_a_duplicate_key_is_a_replace() -> None:
    p = PartialJSON()
    changes = p.feed('{"k": [1], "k": "v"}')
    assert changes[-2:] == [("replace", "/k", ""), ("append", "/k", "v")] or changes[-1] == ("replace", "/k", "v")
    assert apply_changes(None, changes) == p.value == {"k": "v"}


def test_a_failed_feed_leaves_its_changes_in_changes() -> None:
    p = PartialJSON()
    with pytest.raises(ValueError):
        p.feed('{"a": "bc", "d": x')
    assert apply_changes(None, p.changes()) == p.value == {"a": "bc"}


def test_following_a_long_string_is_linear() -> None:
    """Following a growing string by its changes costs the text that arrived: 4x the text,
    well under 8x the time (re-reading ``value`` after every feed is quadratic)."""
    import time

    def render(pieces: list) -> str:
        """A renderer: each string's pieces kept in a list (a Python ``s += t`` on a dict item
        copies the whole string each time), joined once."""
        p = PartialJSON()
        shown: dict = {}
        for piece in pieces:
            for op, path, value in p.feed(piece):
                if op == "append":
                    shown[path].append(value)
                elif isinstance(value, str):
                    shown[path] = [value]
        p.finish()
        return "".join(shown["/body"])

    def pieces(size: int) -> list:
        text = '{"title": "t", "body": "' + "ab\\n" * (size // 4) + '"}'
        assert render([text]) == json.loads(text)["body"]
        return [text[i : i + 40] for i in range(0, len(text), 40)]

    small, large = pieces(500_000), pieces(2_000_000)
    render(pieces(50_000))
    # Both sizes timed in each round (the machine's load falls on both alike), best of 5:
    # linear is 4x, quadratic 16x; 10x leaves room for a noisy machine.
    best = [float("inf"), float("inf")]
    for _ in range(5):
        for at, which in enumerate((small, large)):
            start = time.perf_counter()
            render(which)
            best[at] = min(best[at], time.perf_counter() - start)
    assert best[1] < 10 * best[0], best


def test_pointers_past_their_budget_fail_and_the_value_goes_on() -> None:
    p = PartialJSON()
    p.feed('{"' + "k" * 70_000 + '": [')
    with pytest.raises(ValueError, match="JSON Pointers"):
        for _ in range(10_000):
            p.feed("1," * 10)
    before = len(p.value["k" * 70_000])
    for _ in range(100):  # every later feed says it again; the value still follows
        with pytest.raises(ValueError, match="JSON Pointers"):
            p.feed("2," * 10)
    assert len(p.value["k" * 70_000]) == before + 1000
