"""Where the suite's files are: the checkout's examples and benches, the recorded streams."""

from __future__ import annotations

from pathlib import Path

#: tests/
TESTS = Path(__file__).resolve().parent.parent
#: The checkout (or the suite's folder in CI: tests/, benches/, examples/, conftest.py).
ROOT = TESTS.parent
#: The recorded streams, by dialect (tests/data).
DATA = TESTS / "data"
#: The checkout's examples/ and benches/ (absent from an installed suite without them).
EXAMPLES = ROOT / "examples"
BENCHES = ROOT / "benches"
