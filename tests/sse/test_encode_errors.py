"""Issue 15: the encoder's errors are the documented ones, the same for ``Event(...)`` and
``encode_event(...)``, and small whatever the input."""

from __future__ import annotations

import pickle

import pytest
import ssewire


@pytest.mark.parametrize("make", [
    lambda **kw: ssewire.encode_event("x", **kw),
    lambda **kw: ssewire.Event("x", **kw).encode(),
], ids=["encode_event", "Event"])  # fmt: skip
class TestRetry:
    def test_bool_is_a_type_error(self, make) -> None:  # type: ignore[no-untyped-def]
        with pytest.raises(TypeError, match="retry must be an int"):
            make(retry=True)

    def test_other_types_are_type_errors(self, make) -> None:  # type: ignore[no-untyped-def]
        for bad in (1.5, "10", b"1"):
            with pytest.raises(TypeError):
                make(retry=bad)

    def test_out_of_range_is_a_value_error_in_short(self, make) -> None:  # type: ignore[no-untyped-def]
        for bad in (-1, 2**64, 10**5000):
            with pytest.raises(ValueError, match="retry must be from 0 to 2\\*\\*64-1") as info:
                make(retry=bad)
            assert len(str(info.value)) < 200

    def test_valid_retry(self, make) -> None:  # type: ignore[no-untyped-def]
        assert make(retry=0).startswith(b"retry: 0\n")
        assert make(retry=2**64 - 1).startswith(b"retry: 18446744073709551615\n")


def test_lone_surrogates_are_replaced_not_raised() -> None:
    for data in ("a\ud800b", "\udfff", "x\ud83d"):
        out = ssewire.encode_event(data, event="e\ud800", id="i\udc00")
        [ev] = ssewire.SSEParser().feed(out)
        assert "\ufffd" in ev.data and ev.event == "e\ufffd" and ev.id == "i\ufffd"
        assert ssewire.Event(data).encode() == ssewire.encode_event(data)
    pair = "\ud83d\ude00"  # a pair kept as two code points (surrogatepass) is its character
    assert ssewire.encode_event(pair) == "data: \U0001f600\n\n".encode()


def test_bad_id_error_message_is_small() -> None:
    bad = "x" * 10_000_000 + "\n"
    with pytest.raises(ValueError) as info:
        ssewire.encode_event("d", id=bad)
    assert len(str(info.value)) < 300 and "10000001 characters" in str(info.value)
    with pytest.raises(ValueError) as info:
        ssewire.Event("d", id=bad).encode()
    assert len(str(info.value)) < 300


def test_event_still_pickles_with_retry() -> None:
    ev = ssewire.Event("d", event="e", id="1", retry=5)
    assert pickle.loads(pickle.dumps(ev)) == ev
