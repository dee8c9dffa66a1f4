"""Linear-cost checks that a loaded machine cannot fail.

A cost test compares two input sizes far apart (8x): linear work costs 8x, quadratic 64x, so a
bound of 24x leaves 3x for noise. Both sizes are timed in every round (load falls on both
alike), CPU time only, with the garbage collector off (a collection's cost depends on what
the rest of the suite left alive), and the best round of each counts: noise only adds time.
"""

from __future__ import annotations

import gc
import time
from typing import Callable

FACTOR = 8
SLACK = 3


def best_times(run: Callable[[int], object], small: int, rounds: int = 5) -> tuple[float, float]:
    """Best CPU time of ``run(small)`` and of ``run(FACTOR * small)``, interleaved."""
    run(max(1, small // 10))  # warm up
    best = [float("inf"), float("inf")]
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            for at, n in enumerate((small, FACTOR * small)):
                start = time.process_time()
                run(n)
                best[at] = min(best[at], time.process_time() - start)
    finally:
        if enabled:
            gc.enable()
    return best[0], best[1]


def assert_linear(run: Callable[[int], object], small: int, rounds: int = 5) -> None:
    """``run(n)`` costs O(n): 8x the input within 8x the time times 3."""
    low, high = best_times(run, small, rounds)
    assert high < FACTOR * SLACK * max(low, 1e-6), (low, high)
