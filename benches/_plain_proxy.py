"""The baseline of the gateway benchmark: a plain aiohttp proxy that relays a POST's response
byte for byte and parses nothing (what a gateway costs before it reads a single event).

    python benches/_plain_proxy.py --upstream http://127.0.0.1:9000 --port 8081 [--loop uvloop]

It is written the way aiohttp's docs show a streaming proxy: a pooled ``ClientSession``,
``StreamResponse.write`` of every chunk ``iter_any()`` gives.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Optional

from aiohttp import ClientSession, TCPConnector, web

SESSION = web.AppKey("session", ClientSession)


def make_app(upstream: str) -> web.Application:
    app = web.Application()

    async def start(app: web.Application) -> None:
        app[SESSION] = ClientSession(connector=TCPConnector(limit=1000))

    async def stop(app: web.Application) -> None:
        await app[SESSION].close()

    async def relay(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {"content-type": request.headers.get("content-type", "application/json")}
        async with app[SESSION].post(upstream + request.path_qs, data=body, headers=headers) as up:
            response = web.StreamResponse(status=up.status,
                                          headers={"content-type": up.content_type})  # fmt: skip
            await response.prepare(request)
            async for chunk in up.content.iter_any():
                await response.write(chunk)
        await response.write_eof()
        return response

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    app.router.add_route("POST", "/{path:.*}", relay)
    return app


def new_loop(name: str) -> Optional[asyncio.AbstractEventLoop]:
    if name == "asyncio":
        return asyncio.new_event_loop()
    try:
        import uvloop
    except ImportError:
        if name == "uvloop":
            raise
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto")
    args = parser.parse_args()
    web.run_app(make_app(args.upstream.rstrip("/")), host=args.host, port=args.port,
                loop=new_loop(args.loop), print=None, access_log=None)  # fmt: skip


if __name__ == "__main__":
    main()
