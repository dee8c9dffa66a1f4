"""The provider-shape table (benches/provider_table.py) once, small: every shape builds, every
column runs. The figures come from running the script itself (README, "Performance")."""

from __future__ import annotations

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
    assert row["events"] > 3
    assert row["consume"] > 0 and row["sse"] > 0 and row["msgspec"] > 0 and row["translate"] > 0


def test_escape_table_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import escape_table

    monkeypatch.setattr(sys, "argv", ["escape_table.py", "--events", "20", "--rounds", "1"])
    escape_table.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and " ns |" in line]
    assert len(rows) == 8
