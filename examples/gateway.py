"""Embedding the gateway (``ssewire.gateway``) in an aiohttp application of your own: a health
route beside the LLM paths, and the per-request log records sent where your service logs.

The gateway as a command needs none of this:

    pip install 'ssewire[gateway]'
    ssewire gateway --upstream https://api.openai.com --upstream-key-env OPENAI_API_KEY

Here, as a program: ``python examples/gateway.py UPSTREAM_URL [PORT]``; clients of every dialect
are relayed to the upstream in their own dialect, and each request is logged through
``logging``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any, Callable, Dict

from aiohttp import web

import ssewire.gateway


def build(upstream: str, log: Callable[[Dict[str, Any]], None]) -> web.Application:
    """The gateway in front of ``upstream``, with a ``GET /healthz`` route of the service's."""
    app = ssewire.gateway.make_app(upstream, log, timeout=600.0, write_timeout=30.0)

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app.router.add_get("/healthz", healthz)
    return app


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logger = logging.getLogger("gateway")
    app = build(sys.argv[1], lambda entry: logger.info("%s", entry))
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 8080
    asyncio.run(ssewire.gateway.serve(app, "127.0.0.1", port))


if __name__ == "__main__":
    main()
