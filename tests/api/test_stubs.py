"""The hand-written stub ``python/ssewire/_core.pyi`` matches the compiled module.

``python -m mypy.stubtest ssewire._core`` imports the extension and compares every name,
signature and property with the stub. Known, unavoidable noise (if any) is listed in
``tests/stubtest_allowlist.txt``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support import paths

ROOT = paths.ROOT
ALLOWLIST = ROOT / "tests" / "stubtest_allowlist.txt"


def test_stub_matches_the_extension_module(tmp_path: Path) -> None:
    """stubtest finds no difference between ``_core.pyi`` and ``ssewire._core``."""
    command = [sys.executable, "-m", "mypy.stubtest", "ssewire._core"]
    if ALLOWLIST.exists():
        command += ["--allowlist", str(ALLOWLIST)]
    # Run in an empty directory: the installed package is checked, and mypy's cache directory
    # lands there, not in the working tree.
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"stubtest failed:\n{result.stdout}\n{result.stderr}"
    assert "Success" in result.stdout
