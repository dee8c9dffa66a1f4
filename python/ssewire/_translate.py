"""``Translator``: an upstream stream in one dialect re-served live in another (API.md
section 8). The work is Rust's (``ssewire._core.Translator``, ``src/translate/``); this module
adds the loops ``iter`` / ``aiter`` and the one-call ``translate()``, on the chunk sources the
stream classes take (``ssewire._reading.chunks_of``).
"""

from __future__ import annotations

from typing import Any, AsyncIterable, AsyncIterator, Iterable, Iterator, Union

from ssewire import _core
from ssewire._reading import _BytesLike, chunks_of

__all__ = ["Translator", "translate"]


class Translator(_core.Translator):
    __slots__ = ()
    __doc__ = _core.Translator.__doc__

    def iter(self, chunks: Union[Iterable[_BytesLike], _BytesLike]) -> Iterator[bytes]:
        """Yields the target's bytes for every chunk of ``chunks`` as it is read (``b""`` when
        nothing is owed yet), then those of ``finish()``. Early stops and source errors behave
        as for the streams' ``iter``: ``finish()`` is then not called."""
        feed = self.feed
        for chunk in chunks_of(chunks, "iter"):
            yield feed(chunk)
        yield self.finish()

    async def aiter(
        self, chunks: Union[AsyncIterable[_BytesLike], Iterable[_BytesLike], _BytesLike]
    ) -> AsyncIterator[bytes]:
        """The ``async`` form of :meth:`iter` (httpx ``aiter_bytes()``, aiohttp
        ``content.iter_any()``, or anything ``iter`` takes)."""
        feed = self.feed
        if hasattr(chunks, "__aiter__"):
            async for chunk in chunks:
                yield feed(chunk)
        else:
            for chunk in chunks_of(chunks, "aiter"):
                yield feed(chunk)
        yield self.finish()


Translator.__module__ = "ssewire"


def translate(
    data_or_chunks: Union[_BytesLike, Iterable[_BytesLike]],
    source: str = "auto",
    target: str = "chat",
    **kwargs: Any,
) -> bytes:
    """A whole upstream body (bytes, or an iterable of chunks) translated from ``source``
    (``"auto"``: told by its first events) into ``target``; the target's bytes, joined."""
    t = Translator(source, target, **kwargs)
    return b"".join(t.iter(data_or_chunks))
