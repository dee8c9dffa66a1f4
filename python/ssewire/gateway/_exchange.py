"""One try of a request at one upstream: the request written for the upstream's dialect
(relayed as the client sent it, or translated), the answer read and turned into what the
client gets, and an ``Outcome`` for the plan (``_failover``).

Nothing reaches the client before the try is sure to be the answer: an error status, a
connection refused, a timeout, or a stream that ends, fails or is cut before its first output
leaves the client untouched, so that the next try may serve it. A stream's first output
commits it (the response head is written); after that a failure is the stream's own
mid-stream error, in the client's dialect. A client that asked for no stream gets nothing
until the answer is whole."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from aiohttp import web

import ssewire
from ssewire import _core
from ssewire.gateway._auth import Refused, Signer, passed_headers, retry_after, upstream_headers
from ssewire.gateway._failover import Outcome, Try
from ssewire.gateway._paths import SPECS, STREAM_TYPES, STREAMS, UPSTREAMS, Route, upstream_path
from ssewire.gateway._record import LOGGED_MESSAGE, cut, record
from ssewire.gateway._upstream import Exchange, Failure, Pool

#: The most of an upstream's answer read whole, for a client that asked for no stream.
MAX_WHOLE_BODY = 64 * 1024 * 1024
#: The most of an upstream's error body read (the rest is not waited for).
MAX_ERROR_BODY = 1024 * 1024


@dataclass
class Client:
    """What the client asked: its route, request body (raw and read), query, headers, the
    model it named and whether it asked for a stream."""

    request: web.Request
    match: Route
    raw: bytes
    wanted: Dict[str, Any]
    query: Dict[str, str]
    model: Optional[str]
    streaming: bool
    meters: Optional[Dict[str, Callable[[], Any]]]
    write_timeout: float
    #: ``carry = "store"``: the carriers the request's short ids stand for, the store new
    #: ones are kept in (None: carriers ride in the ids) and for how long (seconds).
    carried: Dict[str, str] = field(default_factory=dict)
    carry_store: Any = None
    carry_ttl: int = 86400
    #: Whose carriers these are: the virtual key's name (``[keys]``; "" without): a key reads
    #: only what was kept under it.
    owner: str = ""


def error_response(client: str, status: int, message: str,
                   headers: Optional[List[Tuple[str, str]]] = None) -> web.Response:  # fmt: skip
    """An error the gateway makes, in the client dialect's own shape."""
    body = _core._error_body(status, message, client)
    response = web.Response(status=status, body=body, content_type="application/json")
    for k, v in headers or []:
        response.headers[k] = v
    # The connection is not kept: a body left unread (too large, too slow) is not waited for.
    response.force_close()
    return response


def failure_answer(client: str, failure: Failure) -> web.Response:
    status = 504 if failure.kind == "timeout" else 502
    return error_response(client, status, str(failure))


def stream_error(stream: Any, client: str) -> Optional[Tuple[int, bytes]]:
    """A stream's own error as the client dialect's status and error body (None: no error)."""
    error = getattr(stream, "error", None)
    if error is None:
        return None
    said = {"error": {"message": str(error.message), "type": error.type, "code": error.code}}
    e = ssewire.translate_error(0, json.dumps(said).encode(), "responses", client)
    return e.status, e.body


async def read_body(ex: Exchange, limit: int, error: bool) -> bytes:
    """An upstream's body, as far as it comes, at most ``limit`` bytes: past it an answer is
    stopped as a failure, an error body is cut there."""
    parts = list(ex.early)
    ex.early.clear()
    size = [sum(len(b) for b in parts)]

    def keep(body: bytes) -> None:
        parts.append(body)
        size[0] += len(body)
        if size[0] > limit:
            ex.stop(
                None if error else Failure("cut", "the upstream's answer is larger than the gateway takes")
            )

    ex.sink = keep
    try:
        await asyncio.shield(ex.end)
    except Exception:
        pass  # ex.end tells it
    return b"".join(parts)[:limit]


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


#: A blank line: the end of an event in SSE (any two line endings in a row).
BLANK_LINE = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)")


def event_ended(seen: bytes, first: bytes, size: int, framing: str) -> bool:
    """Whether a relayed body holds a whole event by now: ``seen``, its newest bytes (with the
    three before them); ``first``, its first piece; ``size``, its length."""
    if framing == "eventstream":  # a message's prelude starts with its total length
        return len(first) >= 4 and size >= int.from_bytes(first[:4], "big")
    if framing == "ndjson":  # a line
        return b"\n" in seen
    return BLANK_LINE.search(seen) is not None


class Attempt:
    """One try: ``run()`` returns its ``Outcome`` and fills ``entry`` (what the log line says
    of it when it is the answer)."""

    def __init__(
        self, client: Client, tried: Try, pool: Pool, signer: Callable[[], Optional[Signer]]
    ) -> None:
        self.c = client
        self.tried = tried
        self.pool = pool
        self.signer = signer
        self.entry: Dict[str, Any] = {}
        self.dialect = tried.upstream.cfg.dialect or client.match.dialect
        self.persona = client.match.persona
        self.translator: Any = None
        #: The usage chunk the gateway asked a chat upstream for, taken out of the client's
        #: stream (a client that did not ask for it does not get it; API.md section 15).
        self.drop: Any = None
        #: ``carry = "store"``: the keeping of carriers under way (a Redis store's), and the
        #: output held until it is done (the client must not see its stream end before the
        #: next turn can find them).
        self.keeping: Optional[asyncio.Task[None]] = None
        self.backlog: List[bytes] = []

    def request(self) -> Tuple[str, bytes, Callable[[bytes], bytes], Callable[[], Any]]:
        """The upstream path and body, what turns the answer's body into the client's, and
        the stream it was read into."""
        c, up = self.c, self.dialect
        model = self.tried.model or c.model
        if up == c.match.dialect and c.match.own_framing:
            body, changes = c.raw, {}
            if self.tried.model is not None and c.match.model is None:
                changes["model"] = self.tried.model
            ask = _core._ask_for_usage(c.raw, up) if c.streaming else None
            if ask is not None:  # usage is what keys are charged: asked for, then taken out
                changes[ask[0]] = json.loads(ask[1])
                self.drop = _core._DropUsage()
            if changes:  # the client's body with these keys set (its order kept)
                body = json.dumps({**c.wanted, **changes}).encode()
            stream = (c.meters or {}).get(up, STREAMS[up])()
            drop = self.drop

            def meter(chunk: bytes) -> bytes:
                stream.consume(chunk)
                return chunk if drop is None else drop.feed(chunk)  # relayed byte for byte

            return upstream_path(c.match, c.query, model), body, meter, lambda: stream
        # carry = "store": the short call ids read as the carriers they stand for.
        r = ssewire.translate_request(c.wanted, c.match.dialect, up, model=model, _stored=c.carried or None)
        self.entry.update({"request_notes": r.notes, "served_as": c.match.dialect})
        # A client of another framing than its dialect's own (InvokeModel) gets its own.
        framing = "sse" if c.match.own_framing else c.match.framing
        token = secrets.token_hex(12) if c.carry_store is not None else None
        t = ssewire.Translator(
            up,
            c.match.dialect,
            target_framing=framing,
            target_path=c.match.template or None,
            _carry_token=token,
        )
        self.translator = t
        drop = None
        if c.streaming and _core._ask_for_usage(c.raw, c.match.dialect) is not None:
            # The writer writes the usage it read (it charges keys); the client did not ask.
            drop = self.drop = _core._DropUsage()

        def convert(chunk: bytes) -> bytes:
            out = t.feed(chunk)
            if token is not None:
                self.keep_now()
            return out if drop is None else drop.feed(out)

        return c.match.prefix + r.path, json.dumps(r.body).encode(), convert, lambda: t.source

    def keep_now(self) -> None:
        """``carry = "store"``: the carriers of the calls written so far go to the store now
        (a memory store's at once; a Redis store's in a task, the output held behind it)."""
        t, store = self.translator, self.c.carry_store
        pairs = t._stored() if t is not None and store is not None else []
        if not pairs:
            return
        try:
            kept = store.keep_carried(pairs, self.c.carry_ttl, time.time(), self.c.owner)
        except Exception as e:  # the next turn goes without the reasoning
            self.entry["store_error"] = cut(str(e))
            return
        if not asyncio.iscoroutine(kept):
            return
        before = self.keeping

        async def run() -> None:
            if before is not None:
                await before
            try:
                await kept
            except Exception as e:
                self.entry["store_error"] = cut(str(e))

        self.keeping = asyncio.get_running_loop().create_task(run())

    async def keep_carried(self) -> None:
        """The carriers kept, every keeping done: before the client's answer ends (its next
        turn names their short ids)."""
        self.keep_now()
        while self.keeping is not None:
            keeping = self.keeping
            await keeping
            if self.keeping is keeping:
                self.keeping = None

    def end(self, source: Callable[[], Any]) -> bytes:
        """The upstream's body ended: its stream is read to the end; the bytes the client is
        still owed (a translation's closing events; what the usage filter held)."""
        tail = b""
        if self.translator is not None:
            tail = self.translator.finish()
        elif source() is not None:
            source().finish()
        if self.drop is not None:
            tail = self.drop.feed(tail) + self.drop.finish()
        return tail

    async def run(self) -> Outcome:
        c, up = self.c, self.dialect
        self.entry["dialect"] = up
        if up not in UPSTREAMS:
            message = (f"this gateway has no {up} upstream: its clients are served from an "
                       "upstream of another dialect (--upstream-dialect)")  # fmt: skip
            raise Refused(501, message)
        cfg = self.tried.upstream.cfg
        headers = upstream_headers(c.request.headers, c.query, self.persona, up, self.tried.key,
                                   cfg.pass_through_auth)  # fmt: skip
        path, body, convert, source = self.request()
        if SPECS[up]["sigv4"] and not any(k == "authorization" for k, _ in headers):
            signer = self.signer()
            if signer is None:
                raise Refused(502, "the Bedrock upstream has no credentials to sign with")
            headers = [*headers, *signer(path, body)]
        async with self.pool.slots:
            try:
                ex = await self.pool.open(path, body, headers)
            except Failure as f:
                return Outcome(failure=f.kind, answer=failure_answer(self.persona, f))
            try:
                outcome = await self.answer(ex, convert, source)
            finally:
                ex.stop()
                self.log(source(), ex)
            self.entry.setdefault("status", getattr(outcome.answer, "status", None))
            return outcome

    def log(self, stream: Any, ex: Exchange) -> None:
        if stream is not None and "error" not in self.entry:
            self.entry.update(record(self.dialect, stream, self.entry.get("client_disconnected", False)))
            self.entry["dialect"] = self.dialect
            if self.entry.get("model") is None:  # a result with no model (Converse's): the one asked
                model = self.tried.model or self.c.model
                self.entry["model"] = cut(model) if model is not None else None
        if ex.failed():
            self.entry["upstream_error"] = repr(ex.end.exception())[:LOGGED_MESSAGE]
        if self.translator is not None:
            self.entry["notes"] = self.translator.notes

    async def answer(
        self, ex: Exchange, convert: Callable[[bytes], bytes], source: Callable[[], Any]
    ) -> Outcome:
        status = ex.reader.status or 502
        up, persona = self.dialect, self.persona
        relayed = self.translator is None
        passed = passed_headers(up, persona, list(ex.reader.headers))
        after = retry_after(list(ex.reader.headers))
        if relayed:
            own = [(k, v) for k, v in ex.reader.headers if k.lower() in ("content-type", "cache-control")]
            passed = own + passed
        if status >= 400:
            body = await read_body(ex, MAX_WHOLE_BODY if relayed else MAX_ERROR_BODY, error=True)
            if relayed:  # the meter reads the error body: the log says its message
                convert(body)
                source().finish()
                answer = web.Response(status=status, body=body)
            else:
                self.entry["error"] = {"message": body[:LOGGED_MESSAGE].decode("utf-8", "replace")}
                said = ssewire.translate_error(status, body, up, persona)
                answer = web.Response(status=said.status, body=said.body, content_type=said.content_type)
            for k, v in passed:
                answer.headers[k] = v
            self.entry["status"] = answer.status
            return Outcome(status=status, retry_after=after, answer=answer)
        if not self.c.streaming:
            return await self.whole(ex, convert, source, status, passed)
        return await self.stream(ex, convert, source, status, passed)

    async def whole(self, ex: Exchange, convert: Callable[[bytes], bytes], source: Callable[[], Any],
                    status: int, passed: List[Tuple[str, str]]) -> Outcome:  # fmt: skip
        """A client that asked for no stream: the whole answer (relayed, or the translated
        stream's ``t.result()``), or an outcome that may fail over."""
        body = await read_body(ex, MAX_WHOLE_BODY, error=False)
        exc = ex.end.exception() if ex.end.done() else None
        if isinstance(exc, Failure):
            return Outcome(failure=exc.kind, answer=failure_answer(self.persona, exc))
        convert(body)
        t = self.translator
        if t is not None:
            t.finish()
        else:
            source().finish()
        if source() is None:
            f = Failure("cut", "the upstream sent no stream")
            return Outcome(failure="cut", answer=failure_answer(self.persona, f))
        error = getattr(source(), "error", None)
        # A relayed answer is the upstream's whole JSON object, which the meter calls a
        # "json_body": only a stream's own error fails the try.
        said = (
            None if error is not None and error.code == "json_body" else stream_error(source(), self.persona)
        )
        if said is not None:  # an answer that is an error event
            self.entry["status"] = said[0]
            answer = web.Response(status=said[0], body=said[1], content_type="application/json")
            for k, v in passed:
                answer.headers[k] = v
            return Outcome(status=said[0], answer=answer)
        if t is None:
            answer = web.Response(status=status, body=body)
        else:
            if not getattr(t.source, "done", False):
                f = Failure("cut", "the upstream's stream was cut off before its end")
                return Outcome(failure="cut", answer=failure_answer(self.persona, f))
            await self.keep_carried()
            answer = web.json_response(t.result())
        for k, v in passed:
            answer.headers[k] = v
        return Outcome(status=status, answer=answer)

    async def stream(self, ex: Exchange, convert: Callable[[bytes], bytes], source: Callable[[], Any],
                     status: int, passed: List[Tuple[str, str]]) -> Outcome:  # fmt: skip
        """A client that asked for a stream: held until its first output (an end, a cut or an
        error before it may still fail over), then streamed as it is read."""
        pending: List[bytes] = []
        # A relayed stream is the upstream's bytes: held until they hold a whole event.
        whole = [self.translator is not None]
        size = [0]

        def ready() -> bool:
            return whole[0] and bool(pending) and getattr(source(), "error", None) is None

        def held(body: bytes) -> None:
            out = convert(body)
            if out:
                if not whole[0]:
                    seen = (pending[-1][-3:] if pending else b"") + out
                    size[0] += len(out)
                    whole[0] = event_ended(
                        seen, pending[0] if pending else out, size[0], self.c.match.framing
                    )
                pending.append(out)
            if ready():
                ex.pause()  # wakes the handler, which commits

        for body in ex.early:
            held(body)
        ex.early.clear()
        ex.sink = held
        while not ready() and not ex.end.done():
            await ex.wait()
        if not ready():
            exc = ex.end.exception()
            if exc is None:
                # The body ended before any output: what its end says first (a last line with
                # no line feed, a stream cut before its end marker).
                tail = self.end(source)
                if tail:
                    pending.append(tail)
                if getattr(source(), "error", None) is None and not getattr(source(), "done", False):
                    f = Failure("cut", "the upstream's stream ended before any output")
                    return Outcome(failure="cut", answer=failure_answer(self.persona, f))
            said = stream_error(source(), self.persona)
            if said is not None:
                self.entry["status"] = said[0]
                answer = web.Response(status=said[0], body=said[1], content_type="application/json")
                return Outcome(status=said[0], answer=answer)
            if isinstance(exc, Failure):
                return Outcome(failure=exc.kind, answer=failure_answer(self.persona, exc))
            if exc is not None:
                raise exc
        return Outcome(status=status, answer=await self.commit(ex, convert, source, pending, status, passed))

    async def commit(self, ex: Exchange, convert: Callable[[bytes], bytes], source: Callable[[], Any],
                     pending: List[bytes], status: int,
                     passed: List[Tuple[str, str]]) -> web.StreamResponse:  # fmt: skip
        """Sends the response head and what was held, then the rest of the body through
        ``convert`` as it is read. Ends the client's response: cut off (the connection
        aborted, as the upstream's was) when the upstream's body did not end, so that the
        client cannot take it for whole."""
        c = self.c
        request = c.request
        response = web.StreamResponse(status=status)
        if self.translator is not None:
            response.headers["content-type"] = STREAM_TYPES[c.match.framing]
            if not c.match.own_framing:
                # InvokeModel's header naming its chunks' type (boto3's `contentType`).
                response.headers["x-amzn-bedrock-content-type"] = "application/json"
        for k, v in passed:
            response.headers[k] = v
        chunked = request.version >= (1, 1)
        if chunked:
            response.enable_chunked_encoding()
        await response.prepare(request)  # the head is sent now; the body goes straight on
        client = request.transport
        high = client.get_write_buffer_limits()[1] if client is not None else 0
        gone = False

        def write(out: bytes) -> None:
            if self.keeping is not None or self.backlog:  # behind the keeping of carriers
                if out:
                    self.backlog.append(out)
                if self.keeping is None or self.keeping.done():
                    held, self.backlog = self.backlog, []
                    self.keeping = None
                    for piece in held:
                        send(piece)
                else:
                    ex.pause()  # the handler waits for it, then resumes
                return
            send(out)

        def send(out: bytes) -> None:
            nonlocal gone
            if client is None or client.is_closing():
                gone = True
                ex.stop()
            elif out:
                client.write(b"%x\r\n%s\r\n" % (len(out), out) if chunked else out)
                if client.get_write_buffer_size() > high:
                    ex.pause()

        for out in pending:
            write(out)
        if self.keeping is not None:  # what was held waits for its carriers, not for more input
            await self.keep_carried()
            write(b"")
        ex.sink = lambda body: write(convert(body))
        ex.resume()
        while not ex.end.done():
            await ex.wait()
            if self.keeping is not None:
                await self.keep_carried()
                write(b"")  # what waited behind it
            if ex.end.done():
                break
            if not await drained(client, c.write_timeout):
                gone = True
                ex.stop()
            ex.resume()
        gone = gone or client is None or client.is_closing()
        self.entry["client_disconnected"] = gone
        self.entry["status"] = status
        if ex.failed():
            if request.transport is not None:
                request.transport.abort()
            return response
        if not gone:
            tail = self.end(source)
            await self.keep_carried()
            write(tail)  # the events that close the client's stream (after what waited)
        # The body's end (write_eof) is left to aiohttp, after the handler returns: the log
        # line is written before the client can see its answer end.
        return response
