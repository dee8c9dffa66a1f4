"""ssewire side by side with every pure-Python SSE parser and SDK decoder that is installed, on
the same streams, as a table of ratios (what ``ssewire bench`` ran before the harness left the
installed package: it imports the SDKs' private modules).

    python benches/side_by_side.py [--quick] [--json FILE] [--dialect ...] [--chunks N] [--read-size BYTES]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import support  # noqa: E402

if __name__ == "__main__":
    try:
        sys.exit(support.main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        sys.exit(130)
