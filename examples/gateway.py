"""A small LLM gateway: relays an upstream OpenAI-compatible chat, Anthropic Messages or OpenAI
Responses stream to its client byte for byte, and logs each stream's usage and final text,
read off the relayed bytes by ``stream.atap()`` (no per-event objects are built).

    python examples/gateway.py --upstream https://api.openai.com --port 8080
    curl -N http://127.0.0.1:8080/v1/chat/completions -H "authorization: Bearer $KEY" \\
         -H "content-type: application/json" -d '{"model": "...", "stream": true, ...}'

The dialect comes from the request path (it ends in ``/v1/chat/completions``,
``/v1/messages`` or ``/v1/responses``); the request is forwarded to ``upstream + path`` with
the headers that authenticate it; the upstream's status, ``content-type`` and body are relayed
unchanged. One JSON log line per stream: dialect, model, usage, the final text's length and
start, and the stream's error (``None`` for a complete stream).

Why aiohttp: one package is both the server and the upstream client (a gateway already has
it, or httpx + an ASGI server: three packages for the same job); ``StreamResponse.write``
sends each chunk as soon as it is read and waits while the client's socket is full
(backpressure comes for free); and a client that disconnects makes that write raise, which
ends the relay — leaving the ``async for`` closes the upstream response, and the stream keeps
(and logs) what it had consumed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Dict, Optional

from aiohttp import ClientSession, ClientTimeout, web

import ssewire

#: Path suffix -> (dialect name, stream class).
DIALECTS: Dict[str, Any] = {
    "/v1/chat/completions": ("chat", ssewire.ChatCompletionStream),
    "/v1/messages": ("messages", ssewire.MessagesStream),
    "/v1/responses": ("responses", ssewire.ResponsesStream),
}
#: Request headers forwarded upstream (authentication and API versions).
FORWARDED = frozenset(("authorization", "x-api-key", "anthropic-version", "anthropic-beta",
                       "content-type", "openai-organization", "openai-project"))  # fmt: skip
SESSION = web.AppKey("session", ClientSession)

#: Response headers relayed to the client.
RELAYED = frozenset(("content-type", "cache-control", "request-id", "x-request-id"))


def final_text(dialect: str, result: Dict[str, Any]) -> str:
    """The assistant's text in a final object (the provider's non-streaming shape)."""
    if dialect == "chat":
        choices = result.get("choices") or [{}]
        content = (choices[0].get("message") or {}).get("content")
        return content if isinstance(content, str) else ""
    blocks = result.get("content") if dialect == "messages" else [
        part for item in result.get("output") or [] if isinstance(item, dict)
        for part in item.get("content") or []
    ]  # fmt: skip
    return "".join(
        b.get("text", "") for b in blocks or []
        if isinstance(b, dict) and isinstance(b.get("text"), str)
    )  # fmt: skip


def record(dialect: str, stream: Any) -> Dict[str, Any]:
    """The log record of one relayed stream."""
    result = stream.result()
    text = final_text(dialect, result)
    error = stream.error
    return {
        "dialect": dialect,
        "model": result.get("model"),
        "usage": result.get("usage"),
        "text_length": len(text),
        "text_start": text[:40],
        "error": None if error is None else {"message": error.message, "code": error.code},
    }


def make_app(upstream: str, log: Callable[[Dict[str, Any]], None],
             timeout: Optional[float] = 600.0,
             meters: Optional[Dict[str, Callable[[], Any]]] = None) -> web.Application:  # fmt: skip
    """The gateway as an aiohttp application relaying to ``upstream`` (a base URL).
    ``meters`` maps a dialect to the factory of what taps its bytes (default: the ssewire
    stream; anything with ``atap()``, ``result()`` and ``error`` will do)."""
    app = web.Application()

    async def start(app: web.Application) -> None:
        app[SESSION] = ClientSession(timeout=ClientTimeout(total=timeout))

    async def stop(app: web.Application) -> None:
        await app[SESSION].close()

    async def relay(request: web.Request) -> web.StreamResponse:
        match = next((v for k, v in DIALECTS.items() if request.path.endswith(k)), None)
        if match is None:
            raise web.HTTPNotFound(text="not an LLM streaming endpoint")
        dialect, stream_class = match
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() in FORWARDED}
        stream = (meters or {}).get(dialect, stream_class)()
        async with app[SESSION].post(upstream + request.path_qs, data=body,
                                       headers=headers) as up:  # fmt: skip
            response = web.StreamResponse(
                status=up.status,
                headers={k: v for k, v in up.headers.items() if k.lower() in RELAYED},
            )
            await response.prepare(request)
            try:
                async for chunk in stream.atap(up.content.iter_any()):
                    await response.write(chunk)
            finally:
                log(record(dialect, stream))
        await response.write_eof()
        return response

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    app.router.add_route("POST", "/{path:.*}", relay)
    return app


def main(argv: Optional[list] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True, help="upstream base URL")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args(argv)

    def log(entry: Dict[str, Any]) -> None:
        print(json.dumps(entry), file=sys.stdout, flush=True)

    web.run_app(make_app(args.upstream.rstrip("/"), log), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
