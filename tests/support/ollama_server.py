"""A loopback Ollama server for the SDK tests: ``POST /api/chat`` answers NDJSON lines, one
write a line, chunked, as a local Ollama does (``application/x-ndjson``), or as Ollama Cloud
does (``application/json`` with a ``Content-Length``); it refuses what Ollama refuses (another
path or method, a body that is no JSON object with ``model`` and ``messages``) with Ollama's
``{"error"}`` body, and records each request. Only 127.0.0.1 is bound; every wait is bounded."""

from __future__ import annotations

import json
from typing import Any, Dict, List

from aiohttp import web

from support.loop_thread import AiohttpServer


class OllamaServer(AiohttpServer):
    def __init__(self, lines: bytes, cloud: bool = False) -> None:
        self.lines = lines
        self.cloud = cloud
        self.requests: List[Dict[str, Any]] = []
        self._run()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.method != "POST" or request.path != "/api/chat":
            return web.json_response({"error": "404 page not found"}, status=404)
        try:
            body = json.loads(await request.read())
        except ValueError:
            return web.json_response({"error": "invalid character in request body"}, status=400)
        if not isinstance(body, dict) or not isinstance(body.get("model"), str) or "messages" not in body:
            return web.json_response({"error": "model is required"}, status=400)
        self.requests.append(body)
        if self.cloud:
            return web.Response(body=self.lines, content_type="application/json")
        response = web.StreamResponse(headers={"content-type": "application/x-ndjson"})
        await response.prepare(request)
        for line in self.lines.splitlines(keepends=True):
            await response.write(line)
        await response.write_eof()
        return response
