"""The core's dialect registry (``ssewire._core.DIALECTS``) as the tests and benches use it:
they keep no list of dialects of their own, so a dialect added to the registry is tested and
benchmarked everywhere a dialect is."""

from __future__ import annotations

from typing import Any, Dict, Tuple

import ssewire
from ssewire import _core

#: Every dialect's name, in the registry's order.
ALL: Tuple[str, ...] = tuple(spec["name"] for spec in _core.DIALECTS)
#: The dialects translations and the gateway serve (the registry's ``translates``).
NAMES: Tuple[str, ...] = tuple(spec["name"] for spec in _core.DIALECTS if spec["translates"])
#: Each dialect's public stream class.
STREAMS: Dict[str, Any] = {spec["name"]: getattr(ssewire, spec["stream_class"]) for spec in _core.DIALECTS}
#: Every ordered pair of two different dialects (a translation's source and target).
PAIRS = [(s, t) for s in NAMES for t in NAMES if s != t]
