"""A loopback Cohere server for the SDK tests: ``POST /v2/chat`` with ``stream: true`` answers
the given SSE events, one write an event, as ``text/event-stream``; it refuses what Cohere
refuses (another path or method, no ``Authorization: Bearer`` key, a body that is no JSON object
with ``model`` and a ``messages`` list) with Cohere's ``{"id", "message"}`` error body, answers
``status`` with such a body when one is given, and records each request. Only 127.0.0.1 is
bound; every wait is bounded."""

from __future__ import annotations

import json
import uuid
from typing import Any, Dict, List, Optional

from aiohttp import web

from support.loop_thread import AiohttpServer


def error_body(message: str) -> Dict[str, str]:
    return {"id": str(uuid.uuid4()), "message": message}


class CohereServer(AiohttpServer):
    def __init__(self, events: bytes, status: Optional[int] = None) -> None:
        self.events = events
        self.status = status
        self.requests: List[Dict[str, Any]] = []
        self.headers: List[Dict[str, str]] = []
        self._run()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.method != "POST" or request.path != "/v2/chat":
            return web.json_response(error_body(f"{request.method} {request.path} not found"), status=404)
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer ") or len(auth) <= len("Bearer "):
            return web.json_response(error_body("no api key supplied"), status=401)
        try:
            body = json.loads(await request.read())
        except ValueError:
            return web.json_response(error_body("invalid request: body is not valid JSON"), status=400)
        if not isinstance(body, dict) or not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
            return web.json_response(error_body("invalid request: model and messages are required"), status=400)
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.status is not None:
            return web.json_response(error_body("You are using a Trial key, which is limited."), status=self.status)
        if body.get("stream") is not True:
            return web.json_response(error_body("this test server streams only"), status=400)
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        for frame in self.events.split(b"\n\n"):
            if frame.strip():
                await response.write(frame + b"\n\n")
        await response.write_eof()
        return response
