"""``ssewire.gateway`` served on 127.0.0.1 from its own event loop thread, for the tests."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Dict, List

import ssewire.gateway as gateway_module
from aiohttp import web

TIMEOUT = 60.0
#: Each client dialect's path on the gateway.
PATHS = {"chat": "/v1/chat/completions", "messages": "/v1/messages", "responses": "/v1/responses"}


class Gateway:
    """``ssewire.gateway`` served on 127.0.0.1 (a free port) from its own event loop thread;
    its log records are collected in ``records``."""

    def __init__(self, upstream: str, meters: Any = None, **options: Any) -> None:
        self.records: List[Dict[str, Any]] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        app = gateway_module.make_app(upstream, self.records.append, timeout=TIMEOUT,
                                      meters=meters, **options)  # fmt: skip
        self.runner = gateway_module.runner(app)
        self.port = asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(TIMEOUT)

    async def _start(self) -> int:
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        return int(self.runner.addresses[0][1])

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(TIMEOUT)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(TIMEOUT)
        self.loop.close()
