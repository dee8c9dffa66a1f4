"""An upstream on 127.0.0.1 that fails on command, for the gateway's failover tests.

HTTP is parsed by h11 (strict: one request at a time, RFC 9110's rules), connections are kept
alive between requests as a provider's are, and every request is recorded (target, headers,
body, which connection it came on). Each request takes the next entry of ``script``; when the
script is empty, the dialect's good answer (a stream, or the non-streaming object when the
request asked for none). An entry is:

- ``("status", code, headers)``: that error status with the dialect's error body;
- ``"hang"``: no answer at all (the connection stays open until the test ends);
- ``"close"``: the connection closed before any response byte;
- ``"cut"``: the head and part of the stream's first event, then the connection closed;
- ``"late_cut"``: the head and the stream's first whole events, a pause, then closed;
- ``"slow"``: the stream's first events, a pause of a second, then the rest;
- ``"error_event"``: a stream that holds only an overloaded error event (HTTP 200);
- ``"empty"``: a 200 stream head, then the body ends with no byte in it.

``refused_port()`` names a port nothing listens on. Every wait is bounded; only 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any, Dict, List, Optional, Tuple

import h11
import ssewire

from support.loop_thread import TIMEOUT, LoopThreadServer
from support.strict_upstream import answer_stream, error_body


def refused_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    sock.close()
    return port


def whole_answer(dialect: str) -> bytes:
    """The dialect's non-streaming answer: its stream's result."""
    s = getattr(ssewire, {"chat": "ChatCompletionStream", "messages": "MessagesStream",
                          "responses": "ResponsesStream", "gemini": "GeminiStream"}[dialect])()  # fmt: skip
    s.feed(answer_stream(dialect))
    s.finish()
    return json.dumps(s.result()).encode()


ERROR_EVENT = {
    "messages": b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    "chat": b'data: {"error":{"message":"Overloaded","type":"server_error","code":"overloaded"}}\n\n',
}


class FailingUpstream(LoopThreadServer):
    def __init__(self, dialect: str, script: Optional[List[Any]] = None) -> None:
        self.dialect = dialect
        self.script = list(script or [])
        self.requests: List[Dict[str, Any]] = []
        self.connections = 0
        self.hung: List[asyncio.StreamWriter] = []
        #: Every open connection: closed on close() (from 3.12, wait_closed waits for them, and
        #: a gateway's pool keeps them alive).
        self.writers: "set[asyncio.StreamWriter]" = set()
        self._run()

    async def _stop(self) -> None:
        self.server.close()
        for w in [*self.hung, *self.writers]:
            w.close()
        await self.server.wait_closed()

    async def _start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        self.writers.add(writer)
        conn = h11.Connection(h11.SERVER)
        try:
            for _ in range(1000):  # requests on this connection
                request = await self._read(conn, reader)
                if request is None:
                    break
                head, body = request
                headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in head.headers.raw_items()]
                self.requests.append({"target": head.target.decode("ascii"), "headers": headers,
                                      "body": json.loads(body or b"{}"), "connection": number})  # fmt: skip
                entry = self.script.pop(0) if self.script else None
                if not await self._answer(conn, writer, entry, self.requests[-1]):
                    break
                conn.start_next_cycle()
        except (h11.RemoteProtocolError, ConnectionError, asyncio.TimeoutError):
            pass
        writer.close()

    async def _read(self, conn: h11.Connection, reader: asyncio.StreamReader) -> Optional[Tuple[Any, bytes]]:
        head = None
        body = b""
        for _ in range(100_000):
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await asyncio.wait_for(reader.read(65536), TIMEOUT)
                conn.receive_data(data)
                continue
            if isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return head, body
            elif isinstance(event, h11.ConnectionClosed):
                return None
        return None

    async def _answer(self, conn: h11.Connection, writer: asyncio.StreamWriter, entry: Any,
                      request: Dict[str, Any]) -> bool:  # fmt: skip
        """Answers one request; False when the connection is to end."""
        body = request["body"]
        streaming = body.get("stream") is True or "stream" in request["target"].lower()
        if entry == "hang":
            self.hung.append(writer)
            await asyncio.sleep(TIMEOUT)
            return False
        if entry == "close":
            return False
        if isinstance(entry, tuple) and entry[0] == "status":
            extra = list(entry[2]) if len(entry) > 2 else []
            payload = error_body(self.dialect, entry[1], f"scripted {entry[1]}")
            writer.write(conn.send(h11.Response(status_code=entry[1], headers=[
                ("content-type", "application/json"), ("content-length", str(len(payload))), *extra])) or b"")  # fmt: skip
            writer.write(conn.send(h11.Data(data=payload)) or b"")
            writer.write(conn.send(h11.EndOfMessage()) or b"")
            await writer.drain()
            return True
        if not streaming and entry is None:
            payload = whole_answer(self.dialect)
            writer.write(conn.send(h11.Response(status_code=200, headers=[
                ("content-type", "application/json"), ("content-length", str(len(payload)))])) or b"")  # fmt: skip
            writer.write(conn.send(h11.Data(data=payload)) or b"")
            writer.write(conn.send(h11.EndOfMessage()) or b"")
            await writer.drain()
            return True
        stream = answer_stream(self.dialect)
        if entry == "error_event":
            stream = ERROR_EVENT[self.dialect]
        writer.write(conn.send(h11.Response(status_code=200, headers=[
            ("content-type", "text/event-stream"), ("transfer-encoding", "chunked")])) or b"")  # fmt: skip
        if entry == "empty":
            writer.write(conn.send(h11.EndOfMessage()) or b"")
            await writer.drain()
            return True
        if entry == "cut":
            writer.write(conn.send(h11.Data(data=stream[:20])) or b"")
            await writer.drain()
            return False
        if entry == "slow":  # the first events, a pause of a second, then the rest
            events = stream.split(b"\n\n")
            first = b"\n\n".join(events[:2]) + b"\n\n"
            writer.write(conn.send(h11.Data(data=first)) or b"")
            await writer.drain()
            await asyncio.sleep(1.0)
            writer.write(conn.send(h11.Data(data=stream[len(first):])) or b"")
            writer.write(conn.send(h11.EndOfMessage()) or b"")
            await writer.drain()
            return True
        if entry == "late_cut":
            events = stream.split(b"\n\n")
            writer.write(conn.send(h11.Data(data=b"\n\n".join(events[:2]) + b"\n\n")) or b"")
            await writer.drain()
            await asyncio.sleep(0.2)
            return False
        writer.write(conn.send(h11.Data(data=stream)) or b"")
        writer.write(conn.send(h11.EndOfMessage()) or b"")
        await writer.drain()
        return True
