"""Suite-wide pytest hooks (tests/ and benches/).

A test module whose third-party peer (an SDK, an HTTP client, a JSON library the benchmarks
compare with) has no build for the running Python is skipped, naming the peer, instead of
failing to collect. That happens on a CPython newer than the peer's last release: CI installs
the test extras one by one there, binary wheels only, and the suite runs with what installed.
A missing import of anything else (ssewire itself, a module of the suite) still fails.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

# The suite's shared support code (stream generators, the pure-Python peer, the side-by-side
# benchmark harness) is the package `support` in tests/, for tests/ and benches/ alike: it is
# not part of the installed wheel.
sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))

# Import names of the test extras in pyproject.toml (and of the packages they pull in).
PEERS = frozenset(
    {
        "aiohttp",
        "anthropic",
        "google",
        "httpx",
        "httpx_sse",
        "hypothesis",
        "jiter",
        "msgspec",
        "mypy",
        "openai",
        "orjson",
        "pydantic",
        "pydantic_core",
        "requests",
        "sseclient",
        "trustme",
    }
)

_MISSING = re.compile(r"No module named '([\w.]+)'|import of ([\w.]+) halted")


def missing_peer(text: str) -> str | None:
    """The peer a collection error says is missing, or None if it names no peer."""
    for match in _MISSING.finditer(text):
        name = (match.group(1) or match.group(2)).split(".")[0]
        if name in PEERS:
            return name
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if not report.failed or not isinstance(collector, pytest.Module):
        return
    peer = missing_peer(str(report.longrepr))
    if peer is None:
        return
    version = "%d.%d" % sys.version_info[:2]
    report.outcome = "skipped"
    report.longrepr = (str(collector.path), 0, f"Skipped: peer {peer!r} is not installed (no build for CPython {version})")
