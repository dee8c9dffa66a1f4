"""The provider-shape table (benches/provider_table.py) once, small: every shape builds, every
column runs. The figures come from running the script itself (README, "Performance")."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import _providers  # noqa: E402

pytest.importorskip("msgspec")
import provider_table  # noqa: E402


@pytest.mark.parametrize("name", sorted(_providers.SHAPES))
def test_provider_table_runs(name: str) -> None:
    row = provider_table.row(name, rounds=1, reads="event", paragraphs=2)
    assert row["events"] >= 2  # a short Gemini answer is two chunks
    assert row["consume"] > 0 and row["sse"] > 0 and row["msgspec"] > 0 and row["translate"] > 0


def test_fixed_cost_table_runs() -> None:
    """Issue 47: the per-stream fixed cost table, once, small (no other build)."""
    import fixed_cost_table

    rows = fixed_cost_table.table(rounds=1, only="", old=None, reps=3)
    assert {r["name"] for r in rows} == set(fixed_cost_table._providers.SHAPES)
    assert all(r["events"] >= 1 and r["this"] > 0 and r["sse"] > 0 for r in rows)
    stages = fixed_cost_table.stages(rounds=1, only="messages text", reps=3)
    assert [r["name"] for r in stages] == ["messages text", "messages text, padded"]
    assert all(r[k] > 0 for r in stages for k in ("new", "consume", "finish", "result"))


def test_floor_table_runs() -> None:
    """Issue 47: the result-objects floor, once, small, for a long and a one-delta stream."""
    import floor_table

    for events in (10, None):
        r = floor_table.row("gemini two chunks", rounds=1, events=events, reps=2)
        assert r["events"] == 2
        assert all(r[k] > 0 for k in ("sse", "ours", "msgspec", "floor"))
    assert floor_table.row("chat openai tools", rounds=1, events=10, reps=2)["events"] >= 10


def test_escape_table_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import escape_table

    monkeypatch.setattr(sys, "argv", ["escape_table.py", "--events", "20", "--rounds", "1"])
    escape_table.main()
    rows = [
        line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and " ns |" in line
    ]
    assert len(rows) == 8


@pytest.mark.parametrize("name", list(_providers.SHAPES))
def test_corpus_of_a_given_length_keeps_its_shape(name: str) -> None:
    """``corpus(events=N)``: about N events (within 5%, or the shape's fixed events when N is
    smaller), the same opening and closing as the long stream, and the stream ends whole."""
    import ssewire

    def frames(body: bytes) -> list:
        if _providers.SHAPES[name][0] in _providers.NDJSON:  # one record a line
            return [ssewire.Event(data=line.decode()) for line in body.splitlines()]
        return ssewire.SSEParser().feed(body)

    long_body = _providers.corpus(name, paragraphs=4)
    long_events = frames(long_body)
    for n in (50, 200):
        body = _providers.corpus(name, events=n)
        events = frames(body)
        assert abs(len(events) - n) <= max(3, n // 20) or len(events) < n, (n, len(events))
        last, long_last = json.loads(events[-1].data) if events[-1].data != "[DONE]" else {}, long_events[-1]
        same = events[-1].data == long_last.data or events[-1].event == long_last.event
        assert same or last.get("done") is True
        stream = provider_table.CLASSES[_providers.SHAPES[name][0]]()
        stream.consume(body)
        stream.finish()
        assert stream.error is None


def test_provider_table_lengths_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        sys, "argv", ["provider_table.py", "--lengths", "10,50", "--rounds", "1", "--only", "chat openai tools"]
    )
    provider_table.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| chat openai tools")]
    assert len(rows) == 1 and rows[0].count("x (") == 2
