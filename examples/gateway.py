"""A small LLM gateway: relays an upstream OpenAI-compatible chat, Anthropic Messages, OpenAI
Responses or Google Gemini stream to its client byte for byte, and logs each stream's usage and final text,
read off the relayed bytes by ``stream.consume()`` (no per-event objects are built). With
``--upstream-dialect`` it serves clients of the other dialects too: their requests mapped by
``ssewire.translate_request``, the upstream's stream translated live by ``ssewire.Translator``.

    python examples/gateway.py --upstream https://api.openai.com --port 8080
    curl -N http://127.0.0.1:8080/v1/chat/completions -H "authorization: Bearer $KEY" \\
         -H "content-type: application/json" -d '{"model": "...", "stream": true, ...}'

The dialect comes from the request path (it ends in ``/v1/chat/completions``,
``/v1/messages``, ``/v1/responses`` or Gemini's ``/v1beta/models/{model}:streamGenerateContent``
(``:generateContent`` for no stream)); the request is forwarded to ``upstream + path`` with
the headers that authenticate it; the upstream's status, ``content-type`` and body are relayed
unchanged. One JSON log line per stream: dialect, model, usage, the final text's length and
start, and the stream's error (``None`` for a complete stream).

Cost. A model sends one event per read, so a gateway's CPU goes to reads and writes, not to
bytes. The server is aiohttp (one package; a gateway already has it), on uvloop where it is
installed. The upstream is read by an asyncio Protocol (``Upstream``): ssewire's
``HTTPResponseReader`` de-frames the response, and in the same callback each piece of body goes
through the meter or the translator and onto the client's socket. No task wakes per event;
the handler wakes only when the stream ends or when the client's socket is full. Then the
upstream's reading pauses until the client drains, and a client that reads nothing for
``write_timeout`` is let go. ``benches/gateway_table.py`` measures it beside a plain aiohttp
proxy. One connection per upstream request (``connection: close``); a gateway that talks to
one provider over TLS may want to keep connections alive.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import ssl
import sys
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple
from urllib.parse import unquote, urlsplit

from aiohttp import web

import ssewire

#: Path suffix -> (dialect name, stream class).
DIALECTS: Dict[str, Any] = {
    "/v1/chat/completions": ("chat", ssewire.ChatCompletionStream),
    "/v1/messages": ("messages", ssewire.MessagesStream),
    "/v1/responses": ("responses", ssewire.ResponsesStream),
}
#: Gemini's paths: ``.../v1beta/models/{model}:streamGenerateContent`` (``?alt=sse``), or
#: ``:generateContent`` for a client that asked for no stream.
GEMINI_PATH = re.compile(r"^(?P<prefix>.*?)/(?P<version>v1(?:beta|alpha)?)/models/"
                         r"(?P<model>[^/:]+):(?P<method>streamGenerateContent|generateContent)$")  # fmt: skip


class Route(NamedTuple):
    """What a request path asks for: the client's dialect, its stream class, the path before
    the dialect's own part, and (Gemini) the model and whether a stream was asked for."""

    dialect: str
    stream_class: Any
    prefix: str
    model: Optional[str] = None
    streaming: Optional[bool] = None


def route(path: str) -> Optional[Route]:
    """The route of a request path, or None for a path that is no LLM endpoint."""
    for suffix, (dialect, stream_class) in DIALECTS.items():
        if path.endswith(suffix):
            return Route(dialect, stream_class, path[: -len(suffix)])
    m = GEMINI_PATH.match(path)
    if m is None:
        return None
    streaming = m["method"] == "streamGenerateContent"
    return Route("gemini", ssewire.GeminiStream, m["prefix"], unquote(m["model"]), streaming)
#: Request headers forwarded upstream (authentication and API versions).
FORWARDED = frozenset(("authorization", "x-api-key", "x-goog-api-key", "anthropic-version", "anthropic-beta",
                       "content-type", "openai-organization", "openai-project"))  # fmt: skip

#: Response headers relayed to the client.
RELAYED = frozenset(("content-type", "cache-control", "request-id", "x-request-id"))


def final_text(dialect: str, result: Dict[str, Any]) -> str:
    """The assistant's text in a final object (the provider's non-streaming shape)."""
    if dialect == "chat":
        choices = result.get("choices") or [{}]
        content = (choices[0].get("message") or {}).get("content")
        return content if isinstance(content, str) else ""
    if dialect == "gemini":
        candidates = result.get("candidates") or [{}]
        blocks = [p for p in (candidates[0].get("content") or {}).get("parts") or []
                  if isinstance(p, dict) and not p.get("thought")]  # fmt: skip
    elif dialect == "messages":
        blocks = result.get("content")
    else:
        blocks = [part for item in result.get("output") or [] if isinstance(item, dict)
                  for part in item.get("content") or []]  # fmt: skip
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
        "model": result.get("modelVersion" if dialect == "gemini" else "model"),
        "usage": result.get("usageMetadata" if dialect == "gemini" else "usage"),
        "text_length": len(text),
        "text_start": text[:40],
        "done": done,
        "client_disconnected": client_gone,
        "error": None if error is None else {"message": message, "code": error.code},
    }


def safe_path(raw_path: str) -> bool:
    """No dot segments (``..``, ``.``, also percent-encoded): the request path is appended to
    the upstream's, and must not climb out of it."""
    path = unquote(raw_path.split("?", 1)[0])  # %2e%2e and %2f are dots and slashes too
    return all(seg.strip() not in (".", "..") for seg in path.replace("\\", "/").split("/"))


# --- the upstream: one HTTP/1.1 request on a raw asyncio connection ----------------------------
#
# A gateway's cost is per read and per write, not per byte: a model sends one event per read.
# aiohttp's client wakes a task for every read (a future, an async generator or two), and its
# server's writer is a coroutine. Here an asyncio Protocol reads the upstream's bytes
# (ssewire.HTTPResponseReader de-frames the HTTP response in Rust), and in the same callback the
# body goes through the translator or the meter and onto the client's socket. No task wakes per
# event: the handler only wakes when the stream ends, or when the client's socket is full (the
# upstream's reading then pauses until it drains).


class Upstream(asyncio.Protocol):
    """One request to the upstream, on its own connection. ``head`` resolves once the
    response's status and header fields are read; every piece of body goes to ``sink`` as it
    is read (to ``early`` before a sink is set); ``end`` resolves when the body ended, or with
    the error that ended it: ``ssewire.HTTPProtocolError`` (bytes that are not an HTTP/1.1
    response, a connection closed inside the body), an ``OSError`` (the connection was lost),
    ``asyncio.TimeoutError`` (past ``timeout``) or the sink's own error."""

    def __init__(self, request: bytes, timeout: Optional[float]) -> None:
        loop = asyncio.get_running_loop()
        self.request = request
        self.reader = ssewire.HTTPResponseReader()
        self.head: "asyncio.Future[None]" = loop.create_future()
        self.end: "asyncio.Future[None]" = loop.create_future()
        self.sink: Optional[Callable[[bytes], None]] = None
        self.early: List[bytes] = []
        self.transport: Optional[asyncio.Transport] = None
        self._wake: Optional["asyncio.Future[None]"] = None
        self._timer = None if timeout is None else loop.call_later(
            timeout, self.stop, asyncio.TimeoutError("the upstream request took too long"))  # fmt: skip

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        if self.end.done():
            return
        try:
            body = self.reader.feed(data)
            if not self.head.done() and self.reader.head_complete:
                self.head.set_result(None)
            if body:
                if self.sink is None:
                    self.early.append(body)
                else:
                    self.sink(body)
            if self.reader.body_complete:
                self.stop()
        except Exception as error:  # the reader's, or the sink's
            self.stop(error)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if exc is None and not self.end.done():
            try:
                self.reader.finish()  # a close inside the head or a framed body: an error
            except ssewire.HTTPProtocolError as error:
                exc = error
        self.stop(exc or ConnectionResetError("the upstream closed the connection"))

    def stop(self, error: Optional[BaseException] = None) -> None:
        """Ends the request (``error``: why, when it did not end well) and closes the
        connection; nothing once it has ended."""
        if self.end.done():
            return
        if self._timer is not None:
            self._timer.cancel()
        for future in (self.head, self.end):
            if future.done():
                continue
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)
                future.exception()  # marked retrieved: the caller may not await both
        self._poke()
        if self.transport is not None:
            self.transport.close()

    def failed(self) -> bool:
        """The request ended, and not with the end of the body."""
        return self.end.done() and self.end.exception() is not None

    def pause(self) -> None:
        """The client's socket is full: stop reading the upstream, wake the handler."""
        if self.transport is not None and not self.end.done():
            self.transport.pause_reading()
            self._poke()

    def resume(self) -> None:
        if self.transport is not None and not self.end.done():
            self.transport.resume_reading()

    def _poke(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def wait(self) -> None:
        """Returns when the request has ended, or its reading is paused."""
        if self.end.done() or (self.transport is not None and not self.transport.is_reading()):
            return
        self._wake = asyncio.get_running_loop().create_future()
        await self._wake


async def drained(transport: Optional[asyncio.BaseTransport], seconds: float) -> bool:
    """Waits (up to ``seconds``) for a client's full socket to drain to its low-water mark;
    False when the client left, or read nothing for that long. Polled: it only runs while a
    client reads slower than the model writes."""
    deadline = time.monotonic() + seconds
    while transport is not None and not transport.is_closing():
        low, _ = transport.get_write_buffer_limits()  # type: ignore[attr-defined]
        if transport.get_write_buffer_size() <= low:  # type: ignore[attr-defined]
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.005)
    return False


def make_app(upstream: str, log: Callable[[Dict[str, Any]], None],
             timeout: Optional[float] = 600.0,
             meters: Optional[Dict[str, Callable[[], Any]]] = None,
             write_timeout: float = 30.0, connections: int = 100,
             upstream_dialect: Optional[str] = None,
             ssl_context: Optional[ssl.SSLContext] = None) -> web.Application:  # fmt: skip
    """The gateway as an aiohttp application relaying to ``upstream`` (a base URL, ``http://``
    or ``https://``). ``upstream_dialect`` ("chat", "messages", "responses" or "gemini"): the upstream
    speaks only that dialect; a client of another is served by translation (its request mapped
    by ``ssewire.translate_request``, the whole agent loop; the upstream's stream translated
    live by ``ssewire.Translator``, or whole into ``t.result()`` for a client that asked for no
    stream; usage metered from the upstream's own stream, ``t.source``). Without it every
    request is relayed as is. ``meters`` maps a dialect to the factory of what meters its
    bytes (default: the ssewire stream; anything with ``consume(bytes)``, ``finish()``,
    ``result()`` and ``error`` will do).

    ``ssl_context``: how an ``https://`` upstream is verified (default: the system's
    certificate authorities). ``timeout`` bounds a whole upstream request; ``write_timeout``, how long a client's socket
    may stay full: a client that stops reading is let go after it, so that it cannot hold one
    of the ``connections`` upstream connections (at most that many at once) for longer."""
    app = web.Application()
    target = urlsplit(upstream)
    if target.scheme not in ("http", "https") or not target.hostname:
        raise ValueError(f"the upstream must be an http:// or https:// URL, not {upstream!r}")
    tls = (ssl_context or ssl.create_default_context()) if target.scheme == "https" else None
    up_port = target.port or (443 if tls else 80)
    base = target.path.rstrip("/")
    slots: List[asyncio.Semaphore] = []  # made in the app's loop

    async def open_upstream(path: str, body: bytes, headers: Dict[str, str]) -> Upstream:
        """Sends the request; returns once the response's head is read (raises what ended the
        request otherwise). The caller must ``stop()`` it."""
        lines = [f"POST {base}{path} HTTP/1.1", f"host: {target.netloc}",
                 f"content-length: {len(body)}", "accept-encoding: identity", "connection: close"]
        lines += [f"{k}: {v}" for k, v in headers.items()
                  if k.lower() not in ("content-length", "host", "connection")]  # fmt: skip
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        loop = asyncio.get_running_loop()
        up = Upstream(request, timeout)
        try:
            connect = loop.create_connection(lambda: up, target.hostname, up_port, ssl=tls)
            await asyncio.wait_for(connect, timeout)
            await asyncio.shield(up.head)
        except BaseException:
            up.stop()
            raise
        return up

    async def serve(request: web.Request, up: Upstream,
                    convert: Callable[[bytes], bytes]) -> Tuple[web.StreamResponse, bool]:  # fmt: skip
        """Streams the upstream's body through ``convert`` to the client, as it is read.
        Returns the response and whether the client left (or read nothing for
        ``write_timeout``) first. The response is ended unless the client left."""
        response = web.StreamResponse(status=up.reader.status or 502)
        for k, v in up.reader.headers:
            if k.lower() in RELAYED:
                response.headers[k] = v
        chunked = request.version >= (1, 1)
        if chunked:
            response.enable_chunked_encoding()
        await response.prepare(request)  # the head is sent now; the body goes straight on
        client = request.transport
        high = client.get_write_buffer_limits()[1] if client is not None else 0  # type: ignore[attr-defined]
        gone = False

        def sink(body: bytes) -> None:
            nonlocal gone
            out = convert(body)
            if client is None or client.is_closing():
                gone = True
                up.stop()
            elif out:
                client.write(b"%x\r\n%s\r\n" % (len(out), out) if chunked else out)
                if client.get_write_buffer_size() > high:
                    up.pause()

        for body in up.early:
            sink(body)
        up.early.clear()
        up.sink = sink
        while not up.end.done():
            await up.wait()
            if up.end.done():
                break
            if not await drained(client, write_timeout):
                gone = True
                up.stop()
            up.resume()
        return response, gone or client is None or client.is_closing()

    async def end(request: web.Request, response: web.StreamResponse, client_gone: bool,
                  up: Upstream) -> web.StreamResponse:  # fmt: skip
        """Ends the client's response: cut off (the connection aborted, as the upstream's was)
        when the upstream's body did not end, so that the client cannot take it for whole."""
        if up.failed() and request.transport is not None:
            request.transport.abort()
        elif not client_gone:
            try:
                await response.write_eof()
            except ConnectionError:
                pass  # the client left after the last byte: nothing was lost
        return response

    def entry(dialect: str, stream: Any, client_gone: bool, up: Optional[Upstream]) -> Dict[str, Any]:
        logged = record(dialect, stream, client_gone)
        if up is not None and up.failed():
            logged["upstream_error"] = repr(up.end.exception())[:LOGGED_MESSAGE]
        return logged

    async def relay(request: web.Request) -> web.StreamResponse:
        if not safe_path(request.raw_path):
            raise web.HTTPBadRequest(text="dot segments are not allowed in the path")
        match = route(request.path)
        if match is None:
            raise web.HTTPNotFound(text="not an LLM streaming endpoint")
        dialect, stream_class = match.dialect, match.stream_class
        if upstream_dialect is not None and upstream_dialect != dialect:
            return await translated(request, match)
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() in FORWARDED}
        stream = (meters or {}).get(dialect, stream_class)()

        def meter(chunk: bytes) -> bytes:
            stream.consume(chunk)
            return chunk  # relayed byte for byte

        async with limit():
            up = None
            client_gone = True
            try:
                up = await open_upstream(request.path_qs, body, headers)
                response, client_gone = await serve(request, up, meter)
                if not client_gone and not up.failed():
                    stream.finish()
            finally:
                if up is not None:
                    up.stop()
                log(entry(dialect, stream, client_gone, up))
        return await end(request, response, client_gone, up)

    async def translated(request: web.Request, match: Route) -> web.StreamResponse:
        """Serves a request of the client's dialect (``match``) from the ``upstream_dialect``
        upstream."""
        assert upstream_dialect is not None
        client = match.dialect
        try:
            wanted = json.loads(await request.read() or b"{}")
        except ValueError:
            raise web.HTTPBadRequest(text="the request body is not JSON") from None
        if not isinstance(wanted, dict):
            raise web.HTTPBadRequest(text="the request body is not a JSON object")
        try:
            # The whole request is mapped: tool calls and results, images, settings; what
            # the upstream cannot take is in r.notes (logged with the stream's). A Gemini
            # client names its model in the path.
            r = ssewire.translate_request(wanted, client, upstream_dialect, model=match.model)
        except ssewire.RequestError as e:
            raise web.HTTPBadRequest(text=str(e)) from None
        up_path = match.prefix + r.path
        streaming = match.streaming if match.streaming is not None else bool(wanted.get("stream"))
        headers = {k: v for k, v in request.headers.items() if k.lower() in FORWARDED}
        headers["content-type"] = "application/json"
        t = ssewire.Translator(upstream_dialect, client)
        async with limit():
            up = None
            client_gone = False
            refusal: Optional[Dict[str, Any]] = None
            try:
                up = await open_upstream(up_path, json.dumps(r.body).encode(), headers)
                if (up.reader.status or 502) >= 400:
                    answer, refusal = await refused(up, client)
                    return answer
                if not streaming:
                    return await whole(up, t)
                response, client_gone = await serve(request, up, t.feed)
                if not client_gone and not up.failed():
                    tail = t.finish()  # the events that close the client's stream, if any
                    if tail:
                        await response.write(tail)
            finally:
                if up is not None:
                    up.stop()
                if refusal is not None:  # no stream came: the upstream's error is the record
                    log(refusal)
                else:
                    logged = entry(upstream_dialect, t.source, client_gone, up) if t.source is not None else {}
                    logged.update({"served_as": client, "notes": t.notes, "request_notes": r.notes})
                    log(logged)
        return await end(request, response, client_gone, up)

    async def refused(up: Upstream, client: str) -> Tuple[web.Response, Dict[str, Any]]:
        """An error before the stream: relayed as the upstream said it; and its log record."""
        up.sink = up.early.append
        try:
            await asyncio.shield(up.end)
        except (OSError, asyncio.TimeoutError, ssewire.HTTPProtocolError):
            pass  # relayed as far as it came
        text = b"".join(up.early)
        logged = {"dialect": upstream_dialect, "served_as": client, "status": up.reader.status,
                  "error": text[:LOGGED_MESSAGE].decode("utf-8", "replace")}  # fmt: skip
        kind = str(up.reader.header("content-type", "application/json")).split(";")[0].strip()
        return web.Response(status=up.reader.status or 502, body=text, content_type=kind), logged

    async def whole(up: Upstream, t: Any) -> web.Response:
        """A client that asked for no stream: the upstream's stream translated whole, answered
        with the target's non-streaming object (``t.result()``)."""
        for body in up.early:
            t.feed(body)
        up.early.clear()
        up.sink = t.feed
        try:
            await asyncio.shield(up.end)
            t.finish()
        except (OSError, asyncio.TimeoutError, ssewire.HTTPProtocolError):
            pass  # the result is what was read; t.source's error and done tell it did not end
        return web.json_response(t.result())

    def limit() -> asyncio.Semaphore:
        if not slots:
            slots.append(asyncio.Semaphore(connections))
        return slots[0]

    app.router.add_route("POST", "/{path:.*}", relay)
    return app


def main(argv: Optional[list] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True, help="upstream base URL")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--upstream-dialect", choices=("chat", "messages", "responses", "gemini"),
                        help="the one dialect the upstream speaks: clients of the others are "
                        "served by translation (default: relay every request as is)")  # fmt: skip
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto",
                        help="the event loop: uvloop (faster per read and write; auto: when "
                        "it is installed) or asyncio's own")  # fmt: skip
    args = parser.parse_args(argv)

    def log(entry: Dict[str, Any]) -> None:
        print(json.dumps(entry), file=sys.stdout, flush=True)

    app = make_app(args.upstream.rstrip("/"), log, upstream_dialect=args.upstream_dialect)
    web.run_app(app, host=args.host, port=args.port, loop=new_loop(args.loop))


def new_loop(name: str = "auto") -> asyncio.AbstractEventLoop:
    """An event loop: uvloop's where it is installed (``auto``) or asked for, else asyncio's."""
    if name != "asyncio":
        try:
            import uvloop
        except ImportError:
            if name == "uvloop":
                raise
        else:
            return uvloop.new_event_loop()  # type: ignore[no-any-return]
    return asyncio.new_event_loop()


if __name__ == "__main__":
    main()
