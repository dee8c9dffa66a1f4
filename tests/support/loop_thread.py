"""A server of the tests that runs on its own asyncio loop in a daemon thread: the loop is
started with the object, the server's ``_start()`` coroutine binds it on 127.0.0.1 and returns
its port, and ``close()`` runs ``_stop()`` on the loop, then stops and closes it. Every wait is
bounded by ``TIMEOUT``."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

TIMEOUT = 30.0


class LoopThreadServer:
    """The base of a loopback server on a loop of its own (``FailingUpstream``,
    ``StrictUpstream``): a subclass sets its state, then calls ``_run()``."""

    port: int

    def _run(self) -> None:
        """Starts the loop in its thread and the server on it (its port in ``self.port``)."""
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.port = asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(TIMEOUT)

    async def _start(self) -> int:
        raise NotImplementedError

    async def _stop(self) -> None:
        raise NotImplementedError

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(TIMEOUT)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(TIMEOUT)
        self.loop.close()


class AiohttpServer(LoopThreadServer):
    """A loopback aiohttp server whose every request goes to ``_handle`` (the loopback fakes
    of a provider: ``OllamaServer``, ``CohereServer``)."""

    async def _handle(self, request: Any) -> Any:
        raise NotImplementedError

    async def _start(self) -> int:
        from aiohttp import web

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        return int(self.runner.addresses[0][1])

    async def _stop(self) -> None:
        await self.runner.cleanup()
