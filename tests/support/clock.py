"""The per-minute windows of ``[keys]`` are UTC minutes: a test whose requests straddled a
minute's end would see them counted in two windows. ``minute_ahead`` starts it early enough."""

from __future__ import annotations

import time


def minute_ahead(need: float) -> None:
    """Waits for the next minute when fewer than ``need`` seconds are left in this one."""
    left = 60 - time.time() % 60
    if left < need:
        time.sleep(left + 0.5)
