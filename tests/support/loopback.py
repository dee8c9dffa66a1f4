"""A real HTTP/1.1 server on 127.0.0.1 that serves event streams the way networks deliver them.

Tests of HTTP things run real clients (httpx, aiohttp, requests, the openai and anthropic SDKs,
raw asyncio sockets) against this server; nothing is mocked, and no address other than
127.0.0.1 is ever bound or contacted.

Usage::

    with LoopbackServer() as server:
        prefix = server.add(body)                       # any method, any path under prefix
        url = server.url(prefix) + "/v1/chat/completions"
        r = httpx.post(url, json={...})                 # body arrives in random-sized writes

``add(body, ...)`` registers one response and returns a unique path prefix (``/s/1``,
``/s/2``, ...). A request whose path is the prefix or starts with ``prefix + "/"`` gets that
response, so an SDK can be pointed at it: ``base_url=server.url(prefix) + "/v1"`` for openai
(it then requests ``/s/1/v1/chat/completions``), ``base_url=server.url(prefix)`` for anthropic
(``/s/1/v1/messages``). Any other path gets 404. The same route serves every request made to
it (so concurrent clients may share one).

How a body is written (per route, see ``add``):

- ``framing="chunked"`` (default): ``Transfer-Encoding: chunked``, one HTTP chunk per write;
  ``"close"``: no length, the body ends when the server closes the connection;
  ``"length"``: ``Content-Length``; ``"raw"``: no HTTP response head at all, only the body
  bytes, then close (for raw-socket readers that see the event stream itself).
- The body is cut into ``writes`` pieces (default: random, 1 to 64 pieces per KiB, at most
  ``MAX_WRITES``) at seeded random points, *and* deliberately inside multi-byte UTF-8
  characters and between the CR and LF of CRLF line ends (a sample of each, when the body has
  any). ``split_points(body, seed)`` returns the cut points, so a test can check they happen.
- Each write is sent on its own (``TCP_NODELAY``) after a random pause of up to ``delay``
  seconds (default 0.002; the total pause per response is capped at ``MAX_TOTAL_DELAY``).
  The client may still receive several writes in one read: TCP does not keep boundaries.

Requests are parsed minimally (request line, headers, a body with ``Content-Length`` or
chunked) and recorded in ``server.requests`` (method, path, headers, body) for tests that
check what a client sent. The server runs in a daemon thread, one thread per connection, each
socket with a ``timeout`` (default 10 s); ``close()`` (or leaving the ``with`` block) stops it.
Every loop here is bounded by the body size or by ``MAX_*`` constants.
"""

from __future__ import annotations

import random
import socket
import socketserver
import threading
import time
from typing import Any, Callable, NamedTuple, Optional

__all__ = ["LoopbackServer", "Request", "Route", "split_points"]

HOST = "127.0.0.1"
#: Upper bound on the number of writes one response body is cut into.
MAX_WRITES = 2000
#: Upper bound on the total pause while writing one response, in seconds.
MAX_TOTAL_DELAY = 0.25
#: Upper bound on a request head and on a request body, in bytes.
MAX_HEAD = 64 * 1024
MAX_REQUEST_BODY = 4 * 1024 * 1024
#: How many deliberate cuts of each kind (inside UTF-8, between CR and LF) a body gets.
TRICKY_CUTS = 16


class Request(NamedTuple):
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes


class Route(NamedTuple):
    """One registered response."""

    body: bytes
    framing: str
    status: int
    content_type: str
    writes: Optional[int]
    delay: float
    seed: int
    truncate: Optional[int]


def split_points(body: bytes, seed: int = 0, writes: Optional[int] = None) -> list[int]:
    """The sorted cut points (0 < p < len(body)) at which ``body`` is written.

    Random points, plus up to ``TRICKY_CUTS`` points inside multi-byte UTF-8 characters (a
    continuation byte starts the next write) and up to ``TRICKY_CUTS`` between a CR and its LF.
    ``writes`` fixes the number of random pieces (default: random, about 1-64 per KiB).
    """
    n = len(body)
    if n < 2:
        return []
    rng = random.Random(f"loopback:{seed}:{n}")
    if writes is None:
        writes = rng.randint(1, max(1, min(MAX_WRITES // 2, 1 + n * 64 // 1024)))
    count = max(0, min(writes - 1, n - 1, MAX_WRITES // 2))
    points = set(rng.sample(range(1, n), count))
    inside_utf8 = [i for i in range(1, n) if 0x80 <= body[i] <= 0xBF]
    crlf = [i for i in range(1, n) if body[i - 1] == 0x0D and body[i] == 0x0A]
    for tricky in (inside_utf8, crlf):
        points.update(rng.sample(tricky, min(TRICKY_CUTS, len(tricky))))
    return sorted(points)


def _pieces(body: bytes, points: list[int]) -> list[bytes]:
    bounds = [0, *points, len(body)]
    return [body[a:b] for a, b in zip(bounds, bounds[1:])]


class _Handler(socketserver.BaseRequestHandler):
    server: _TCPServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(self.server.owner.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            request = _read_request(sock)
        except (OSError, ValueError):
            return
        if request is None:
            return
        owner = self.server.owner
        with owner.lock:
            owner.requests.append(request)
        route = owner.route_for(request.path)
        if route is not None and owner.script is not None:
            # A scripted upstream picks the body from the request it got.
            body = owner.script(request)
            route = route._replace(body=body) if body is not None else None
        try:
            if route is None:
                _send_plain(sock, 404, b"no route for " + request.path.encode())
            else:
                _send(sock, route)
        except OSError:  # the client went away: nothing to do
            pass


def _read_request(sock: socket.socket) -> Optional[Request]:
    buf = b""
    while b"\r\n\r\n" not in buf:
        if len(buf) > MAX_HEAD:
            raise ValueError("request head too large")
        data = sock.recv(65536)
        if not data:
            return None
        buf += data
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = (lines[0].split(" ") + ["", "", ""])[:3]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _read_chunked(sock, rest)
    else:
        length = int(headers.get("content-length", "0") or "0")
        if length > MAX_REQUEST_BODY:
            raise ValueError("request body too large")
        body = _fill(sock, rest, length)[:length]
    return Request(method, path, headers, body)


def _fill(sock: socket.socket, have: bytes, length: int) -> bytes:
    """``have`` plus what the socket sends until it is at least ``length`` bytes long."""
    while len(have) < length:
        data = sock.recv(65536)
        if not data:
            raise ValueError("request body cut short")
        have += data
    return have


def _read_chunked(sock: socket.socket, have: bytes) -> bytes:
    body = b""
    while True:  # bounded: every round consumes a chunk, and the body size is capped
        while b"\r\n" not in have:
            if len(have) > MAX_HEAD:
                raise ValueError("chunk size line too long")
            data = sock.recv(65536)
            if not data:
                raise ValueError("chunked body cut short")
            have += data
        size_line, _, have = have.partition(b"\r\n")
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return body  # trailers, if any, are not read: the response does not wait for them
        if len(body) + size > MAX_REQUEST_BODY:
            raise ValueError("request body too large")
        have = _fill(sock, have, size + 2)
        body += have[:size]
        have = have[size + 2 :]


def _send_plain(sock: socket.socket, status: int, body: bytes) -> None:
    sock.sendall(
        f"HTTP/1.1 {status} X\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
        f"Connection: close\r\n\r\n".encode()
        + body
    )


def _send(sock: socket.socket, route: Route) -> None:
    framing = route.framing
    if framing != "raw":
        head = [f"HTTP/1.1 {route.status} X", f"Content-Type: {route.content_type}"]
        head.append("Cache-Control: no-cache")
        head.append("Connection: close")
        if framing == "chunked":
            head.append("Transfer-Encoding: chunked")
        elif framing == "length":
            head.append(f"Content-Length: {len(route.body)}")
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
    body = route.body if route.truncate is None else route.body[: route.truncate]
    pieces = _pieces(body, split_points(body, route.seed, route.writes))
    rng = random.Random(f"delay:{route.seed}")
    budget = MAX_TOTAL_DELAY
    for piece in pieces:
        if route.delay > 0 and budget > 0:
            pause = min(budget, rng.uniform(0, route.delay))
            budget -= pause
            time.sleep(pause)
        if framing == "chunked":
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        else:
            sock.sendall(piece)
    if framing == "chunked" and route.truncate is None:
        sock.sendall(b"0\r\n\r\n")
    sock.shutdown(socket.SHUT_WR)


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512
    owner: LoopbackServer


class LoopbackServer:
    """An HTTP/1.1 server on 127.0.0.1 (a free port) serving registered bodies; see the module
    docstring. Use as a context manager, or call ``close()``."""

    def __init__(self, *, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self.lock = threading.Lock()
        self.requests: list[Request] = []
        self._routes: dict[str, Route] = {}
        #: When set, the body served for a request (``None``: a 404), in place of the route's.
        self.script: Optional[Callable[[Request], Optional[bytes]]] = None
        self._server = _TCPServer((HOST, 0), _Handler)
        self._server.owner = self
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
        )
        self._thread.start()

    def add(
        self,
        body: bytes,
        *,
        framing: str = "chunked",
        status: int = 200,
        content_type: str = "text/event-stream; charset=utf-8",
        writes: Optional[int] = None,
        delay: float = 0.002,
        seed: int = 0,
        truncate: Optional[int] = None,
    ) -> str:
        """Registers ``body`` and returns its path prefix (see the module docstring).

        ``truncate=n`` simulates a dropped connection: only the first ``n`` bytes of the body
        are written, then the connection is closed without ending the body (with
        ``"chunked"`` or ``"length"`` framing the client's read fails; with ``"close"`` or
        ``"raw"`` the body just looks shorter)."""
        if framing not in ("chunked", "close", "length", "raw"):
            raise ValueError(f"unknown framing {framing!r}")
        with self.lock:
            prefix = f"/s/{len(self._routes) + 1}"
            self._routes[prefix] = Route(
                bytes(body),
                framing,
                status,
                content_type,
                writes,
                delay,
                seed,
                truncate,
            )
        return prefix

    def route_for(self, path: str) -> Optional[Route]:
        """The route that serves ``path`` (the query string is ignored), or None."""
        path = path.split("?", 1)[0]
        parts = path.split("/")
        prefix = "/".join(parts[:3])  # "", "s", "<n>"
        with self.lock:
            return self._routes.get(prefix)

    def url(self, prefix: str = "") -> str:
        """``http://127.0.0.1:PORT`` followed by ``prefix``."""
        return f"http://{HOST}:{self.port}{prefix}"

    def close(self) -> None:
        """Stops serving and closes the listening socket (bounded: waits at most 5 s)."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
