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
import asyncio
import json
import sys
from typing import Any, Callable, Dict, Optional
from urllib.parse import unquote

from aiohttp import ClientSession, ClientTimeout, TCPConnector, web

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


#: Longest error message logged (an upstream may send megabytes in one).
LOGGED_MESSAGE = 500


def record(dialect: str, stream: Any, client_gone: bool = False) -> Dict[str, Any]:
    """The log record of one relayed stream. ``done`` tells a complete stream from one that
    ended early; ``client_disconnected``, that the client left before the upstream finished
    (its usage is what the upstream had sent by then)."""
    result = stream.result()
    text = final_text(dialect, result)
    error = stream.error
    done = bool(getattr(stream, "done", False))
    message = None if error is None else str(error.message)
    if message is not None and len(message) > LOGGED_MESSAGE:
        message = message[:LOGGED_MESSAGE] + f"... ({len(message)} characters)"
    return {
        "dialect": dialect,
        "model": result.get("model"),
        "usage": result.get("usage"),
        "text_length": len(text),
        "text_start": text[:40],
        "done": done,
        "client_disconnected": client_gone,
        "error": None if error is None else {"message": message, "code": error.code},
    }


# --- translation: serving a client in one dialect from an upstream in another -----------------
#
# The request mapping here is minimal (model, system prompt, text messages, max tokens, tools):
# the example's point is the response stream, which ssewire.Translator translates event by
# event. A production gateway maps requests fully (images, tool results, ...).


def safe_path(raw_path: str) -> bool:
    """No dot segments (``..``, ``.``, also percent-encoded): the request path is appended to
    the upstream's, and must not climb out of it."""
    path = unquote(raw_path.split("?", 1)[0])  # %2e%2e and %2f are dots and slashes too
    return all(seg.strip() not in (".", "..") for seg in path.replace("\\", "/").split("/"))


def make_app(upstream: str, log: Callable[[Dict[str, Any]], None],
             timeout: Optional[float] = 600.0,
             meters: Optional[Dict[str, Callable[[], Any]]] = None,
             write_timeout: float = 30.0, connections: int = 100,
             upstream_dialect: Optional[str] = None) -> web.Application:  # fmt: skip
    """The gateway as an aiohttp application relaying to ``upstream`` (a base URL).
    ``upstream_dialect`` ("chat", "messages" or "responses"): the upstream speaks only that
    dialect; a client of another is served by translation (its request mapped by
    ``ssewire.translate_request``, the whole agent loop; the upstream's stream translated live
    by ``ssewire.Translator``, or whole into ``t.result()`` for a client that asked for no
    stream; usage metered from the upstream's own stream, ``t.source``). Without it every request is relayed as is.
    ``meters`` maps a dialect to the factory of what taps its bytes (default: the ssewire
    stream; anything with ``atap()``, ``result()`` and ``error`` will do).

    ``timeout`` bounds a whole upstream request; ``write_timeout``, one write to the client: a
    client that stops reading is let go after it, so it cannot hold one of the
    ``connections`` pooled upstream connections for longer."""
    app = web.Application()

    async def start(app: web.Application) -> None:
        app[SESSION] = ClientSession(timeout=ClientTimeout(total=timeout),
                                     connector=TCPConnector(limit=connections))  # fmt: skip

    async def stop(app: web.Application) -> None:
        await app[SESSION].close()

    async def send(response: web.StreamResponse, data: bytes) -> bool:
        """Writes to the client; False when the client left or stopped reading for longer than
        ``write_timeout`` (leaving the relay loop then closes the upstream response, and the
        stream keeps what it consumed)."""
        try:
            await asyncio.wait_for(response.write(data), write_timeout)
            return True
        except (ConnectionError, asyncio.TimeoutError):
            return False

    async def end(response: web.StreamResponse, client_gone: bool) -> web.StreamResponse:
        if not client_gone:
            try:
                await response.write_eof()
            except ConnectionError:
                pass  # the client left after the last byte: nothing was lost
        return response

    async def relay(request: web.Request) -> web.StreamResponse:
        if not safe_path(request.raw_path):
            raise web.HTTPBadRequest(text="dot segments are not allowed in the path")
        match = next((v for k, v in DIALECTS.items() if request.path.endswith(k)), None)
        if match is None:
            raise web.HTTPNotFound(text="not an LLM streaming endpoint")
        dialect, stream_class = match
        if upstream_dialect is not None and upstream_dialect != dialect:
            return await translated(request, dialect)
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
            client_gone = False
            try:
                async for chunk in stream.atap(up.content.iter_any()):
                    if not await send(response, chunk):
                        client_gone = True
                        break
            finally:
                log(record(dialect, stream, client_gone))
        return await end(response, client_gone)

    async def translated(request: web.Request, client: str) -> web.StreamResponse:
        """Serves a ``client``-dialect request from the ``upstream_dialect`` upstream."""
        assert upstream_dialect is not None
        try:
            wanted = json.loads(await request.read() or b"{}")
        except ValueError:
            raise web.HTTPBadRequest(text="the request body is not JSON") from None
        prefix = request.path[: -len(next(k for k, (d, _) in DIALECTS.items() if d == client))]
        up_path = prefix + next(k for k, (d, _) in DIALECTS.items() if d == upstream_dialect)
        try:
            # The whole request is mapped: tool calls and results, images, settings; what
            # the upstream cannot take is in r.notes (logged with the stream's).
            r = ssewire.translate_request(wanted, client, upstream_dialect)
        except ssewire.RequestError as e:
            raise web.HTTPBadRequest(text=str(e)) from None
        headers = {k: v for k, v in request.headers.items() if k.lower() in FORWARDED}
        headers["content-type"] = "application/json"
        t = ssewire.Translator(upstream_dialect, client)
        if not wanted.get("stream"):
            return await whole(up_path, r, headers, t, client)
        async with app[SESSION].post(upstream + up_path, json=r.body,
                                       headers=headers) as up:  # fmt: skip
            if up.status >= 400:  # an error before the stream: relayed as the upstream said it
                text = await up.read()
                log({"dialect": upstream_dialect, "served_as": client, "status": up.status,
                     "error": text[:LOGGED_MESSAGE].decode("utf-8", "replace")})  # fmt: skip
                return web.Response(status=up.status, body=text,
                                    content_type=up.content_type or "application/json")  # fmt: skip
            response = web.StreamResponse(status=up.status,
                                          headers={"content-type": "text/event-stream"})  # fmt: skip
            await response.prepare(request)
            client_gone = False
            try:
                async for out in t.aiter(up.content.iter_any()):
                    if out and not await send(response, out):
                        client_gone = True
                        break
            finally:
                entry = record(upstream_dialect, t.source, client_gone) if t.source is not None else {}
                entry.update({"served_as": client, "notes": t.notes, "request_notes": r.notes})
                log(entry)
        return await end(response, client_gone)

    async def whole(up_path: str, r: Any, headers: Dict[str, str], t: Any, client: str) -> web.Response:
        """A client that asked for no stream: the upstream's stream translated whole, answered
        with the target's non-streaming object (``t.result()``)."""
        assert upstream_dialect is not None
        async with app[SESSION].post(upstream + up_path, json=r.body, headers=headers) as up:
            if up.status >= 400:
                return web.Response(status=up.status, body=await up.read(),
                                    content_type=up.content_type or "application/json")  # fmt: skip
            async for _ in t.aiter(up.content.iter_any()):
                pass
        entry = record(upstream_dialect, t.source, False) if t.source is not None else {}
        entry.update({"served_as": client, "notes": t.notes, "request_notes": r.notes})
        log(entry)
        return web.json_response(t.result())

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    app.router.add_route("POST", "/{path:.*}", relay)
    return app


def main(argv: Optional[list] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True, help="upstream base URL")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--upstream-dialect", choices=("chat", "messages", "responses"),
                        help="the one dialect the upstream speaks: clients of the others are "
                        "served by translation (default: relay every request as is)")  # fmt: skip
    args = parser.parse_args(argv)

    def log(entry: Dict[str, Any]) -> None:
        print(json.dumps(entry), file=sys.stdout, flush=True)

    app = make_app(args.upstream.rstrip("/"), log, upstream_dialect=args.upstream_dialect)
    web.run_app(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
