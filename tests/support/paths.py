"""Where the suite's files are: the checkout's examples and benches, the recorded streams."""

from __future__ import annotations

from pathlib import Path

#: tests/
TESTS = Path(__file__).resolve().parent.parent
#: The recorded streams, by dialect (tests/data).
DATA = TESTS / "data"
#: The checkout's examples/ and benches/ (absent from an installed suite without them).
EXAMPLES = TESTS.parent / "examples"
BENCHES = TESTS.parent / "benches"
