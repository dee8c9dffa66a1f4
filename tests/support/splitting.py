"""Feed one input to a push parser in many different pieces, and check the pieces don't matter.

A push parser must give the same results however its input is cut into reads: whole, one byte
at a time, at arbitrary points, with empty reads in between. Every test in the project goes
through this helper, so each one also checks that splitting never changes the results.

The helper knows nothing of SSE. A *parser* here is any object with ``feed(data) -> list`` and
``finish() -> list``; a *factory* makes a fresh one (a class works: ``ssewire.SSEParser``).

Entry points, from simplest to most detailed:

- ``assert_same_all_ways(factory, data, key=...) -> list``: feeds ``data`` every way, asserts
  all ways give the same items, returns the items (as given by the whole-input way).
- ``check_all_ways(...) -> Outcome``: the same, returning the whole-input ``Outcome`` (items,
  caught errors, observed parser state).
- ``feed_all_ways(...) -> list[Outcome]``: one ``Outcome`` per way, nothing asserted.
- ``feed_pieces(factory, pieces) -> Outcome``: feeds given pieces to one fresh parser.

Errors: exceptions of the types in ``catch`` (default: ``ssewire.EventTooLargeError``) raised by
``feed()`` or ``finish()`` are caught and recorded in ``Outcome.errors``, and the items in their
``events`` attribute (what the failing call produced besides the offending event) count as
returned items, so the item sequence can be compared across ways. The number of errors is *not*
compared: one call raises at most once, so fewer, bigger reads may report fewer errors.
"""

from __future__ import annotations

import random
from typing import Any, Callable, NamedTuple, Optional, Sequence

import ssewire

__all__ = [
    "Outcome",
    "Way",
    "assert_same_all_ways",
    "check_all_ways",
    "feed_all_ways",
    "feed_pieces",
    "split_ways",
]

#: Seed of the random split points. Fixed so that a failure is reproducible; the data's length
#: is mixed in so that inputs of different sizes get different cuts.
SEED = 20240601

#: How many random splittings each input gets (besides the fixed ways).
RANDOM_SPLITS = 4

DEFAULT_CATCH: tuple[type[BaseException], ...] = (ssewire.EventTooLargeError,)


class Way(NamedTuple):
    """One way to cut the input: a name for messages, and the pieces in feeding order."""

    name: str
    pieces: list[bytes]


class Outcome(NamedTuple):
    """What one parser returned for one way of feeding."""

    way: Way
    #: Every item returned by ``feed()``/``finish()`` (plus ``exc.events`` of caught errors).
    items: list[Any]
    #: The caught exceptions, in order.
    errors: list[BaseException]
    #: ``observe(parser)`` after ``finish()``, or None without ``observe``.
    observed: Any


def _cut(data: bytes, points: Sequence[int]) -> list[bytes]:
    bounds = [0, *sorted(points), len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:])]


def consume_cut(stream: Any, body: bytes, cuts: Sequence[int] = ()) -> Any:
    """``stream`` (a dialect stream) after consuming ``body`` cut at ``cuts``, then
    ``finish()``."""
    for piece in _cut(body, cuts):
        stream.consume(piece)
    stream.finish()
    return stream


def split_ways(data: bytes, *, seed: int = SEED, random_splits: int = RANDOM_SPLITS) -> list[Way]:
    """The ways ``data`` is fed; the first one is always the whole input in one piece.

    (a) whole; (b) one byte at a time; (c) ``random_splits`` sets of seeded random cut points,
    and one walk in random small reads of 1-16 bytes with an empty read among them; (d) whole
    followed by an empty feed.
    """
    data = bytes(data)
    rng = random.Random(f"{seed}:{len(data)}")
    ways = [
        Way("whole", [data]),
        Way("byte by byte", [data[i : i + 1] for i in range(len(data))]),
    ]
    for n in range(random_splits):
        if len(data) < 2:
            break
        count = rng.randint(1, min(len(data) - 1, 12))
        points = sorted(rng.sample(range(1, len(data)), count))
        ways.append(Way(f"random cuts #{n} at {points}", _cut(data, points)))
    if data:
        pieces: list[bytes] = []
        pos = 0
        while pos < len(data):
            size = rng.randint(1, 16)
            pieces.append(data[pos : pos + size])
            pos += size
        pieces.insert(rng.randint(0, len(pieces)), b"")
        ways.append(Way("random small reads", pieces))
    ways.append(Way("whole, then an empty feed", [data, b""]))
    return ways


def feed_pieces(
    factory: Callable[[], Any],
    pieces: Sequence[bytes],
    *,
    wrap: Optional[Callable[[bytes], Any]] = None,
    catch: tuple[type[BaseException], ...] = DEFAULT_CATCH,
    observe: Optional[Callable[[Any], Any]] = None,
    way_name: str = "given pieces",
) -> Outcome:
    """Feeds ``pieces`` to a fresh ``factory()`` parser, then calls ``finish()``.

    ``wrap`` converts each piece before it is fed (e.g. ``bytearray``, to test input types).
    """
    parser = factory()
    items: list[Any] = []
    errors: list[BaseException] = []

    def call(method: Callable[..., list[Any]], *args: Any) -> None:
        try:
            items.extend(method(*args))
        except catch as exc:
            errors.append(exc)
            items.extend(getattr(exc, "events", None) or [])

    for piece in pieces:
        call(parser.feed, wrap(piece) if wrap is not None else piece)
    call(parser.finish)
    observed = observe(parser) if observe is not None else None
    return Outcome(Way(way_name, list(pieces)), items, errors, observed)


def feed_all_ways(
    factory: Callable[[], Any],
    data: bytes,
    *,
    wrap: Optional[Callable[[bytes], Any]] = None,
    catch: tuple[type[BaseException], ...] = DEFAULT_CATCH,
    observe: Optional[Callable[[Any], Any]] = None,
    seed: int = SEED,
    random_splits: int = RANDOM_SPLITS,
) -> list[Outcome]:
    """Feeds ``data`` every way of ``split_ways``, each to a fresh parser; one ``Outcome`` each
    (the first is the whole input)."""
    outcomes = []
    for way in split_ways(data, seed=seed, random_splits=random_splits):
        outcome = feed_pieces(
            factory, way.pieces, wrap=wrap, catch=catch, observe=observe, way_name=way.name
        )
        outcomes.append(outcome._replace(way=way))
    return outcomes


def _identity(item: Any) -> Any:
    return item


def check_all_ways(
    factory: Callable[[], Any],
    data: bytes,
    *,
    key: Callable[[Any], Any] = _identity,
    wrap: Optional[Callable[[bytes], Any]] = None,
    catch: tuple[type[BaseException], ...] = DEFAULT_CATCH,
    observe: Optional[Callable[[Any], Any]] = None,
    seed: int = SEED,
    random_splits: int = RANDOM_SPLITS,
) -> Outcome:
    """Asserts every way gives the same items (compared through ``key``) and the same observed
    state, and whether errors were raised at all; returns the whole-input ``Outcome``."""
    outcomes = feed_all_ways(
        factory,
        data,
        wrap=wrap,
        catch=catch,
        observe=observe,
        seed=seed,
        random_splits=random_splits,
    )
    whole = outcomes[0]
    expected = [key(item) for item in whole.items]
    for outcome in outcomes[1:]:
        got = [key(item) for item in outcome.items]
        assert got == expected, (
            f"fed {outcome.way.name!r}, the items differ from feeding it whole:\n"
            f"  whole: {expected!r}\n  {outcome.way.name}: {got!r}\n  input: {bytes(data)!r}"
        )
        assert outcome.observed == whole.observed, (
            f"fed {outcome.way.name!r}, observe() gives {outcome.observed!r}, "
            f"fed whole it gives {whole.observed!r}; input: {bytes(data)!r}"
        )
        assert bool(outcome.errors) == bool(whole.errors), (
            f"fed {outcome.way.name!r}, errors {outcome.errors!r}; fed whole, errors "
            f"{whole.errors!r}; input: {bytes(data)!r}"
        )
    return whole


def assert_same_all_ways(
    factory: Callable[[], Any],
    data: bytes,
    *,
    key: Callable[[Any], Any] = _identity,
    wrap: Optional[Callable[[bytes], Any]] = None,
    catch: tuple[type[BaseException], ...] = DEFAULT_CATCH,
    observe: Optional[Callable[[Any], Any]] = None,
    seed: int = SEED,
    random_splits: int = RANDOM_SPLITS,
) -> list[Any]:
    """Asserts every way of feeding ``data`` gives the same items; returns them.

    ``key`` maps each item to the value compared (default: the item itself). See
    ``check_all_ways`` for the other arguments.
    """
    return check_all_ways(
        factory,
        data,
        key=key,
        wrap=wrap,
        catch=catch,
        observe=observe,
        seed=seed,
        random_splits=random_splits,
    ).items
