"""``ssewire gateway``: an LLM gateway in front of one upstream (API.md section 13).

Clients of every dialect are served on their own paths (``/v1/chat/completions``,
``/v1/messages``, ``/v1/responses``, ``/v1beta/models/{model}:streamGenerateContent`` and
``:generateContent``), streamed or not. A request of the upstream's dialect is relayed byte for
byte (metered by ``stream.consume()``); with ``--upstream-dialect``, a client of another
dialect is served by translation: its request mapped by ``ssewire.translate_request`` (the whole
agent loop, with the reasoning a thinking model signed restored from the tool call ids it was
carried in), the upstream's stream translated live by ``ssewire.Translator``, or whole into
``t.result()`` for a client that asked for no stream.

    pip install 'ssewire[gateway]'
    ssewire gateway --upstream https://api.anthropic.com --upstream-dialect messages \\
        --upstream-key-env ANTHROPIC_API_KEY

What reaches the upstream is built by the gateway, never copied from the client:

- the request line: the upstream's base path, the client's path prefix as the client sent it
  (raw, never decoded; dot segments refused), the dialect's own path with the model as one
  percent-encoded segment, and only the query parameters the dialect defines (``alt``,
  ``beta``, ``api-version``);
- one header of each name, from a fixed list: the credential (the gateway's own, from
  ``--upstream-key-env``, written in the upstream dialect's form; or, with
  ``--pass-through-auth``, the client's, and only to an upstream of the client's dialect),
  ``anthropic-version`` / ``anthropic-beta`` for a Messages upstream, the body's type and
  length; header values with anything but visible ASCII are refused;
- the body: as the client sent it (relay), or the translated request.

Every error the gateway answers (400, 401, 404, 408, 413, 502, 504) and every upstream error
it translates is in the client dialect's own error shape, with ``retry-after`` and the rate
limit headers passed on; a client that asked for no stream never gets 200 for a stream that
failed or was cut. One JSON log line per request, whatever the outcome.

Cost. A model sends one event per read, so a gateway's CPU goes to reads and writes. The
upstream is read by an asyncio Protocol (``Upstream``): ``ssewire.HTTPResponseReader``
de-frames the response in Rust, and in the same callback each piece of body goes through the
meter or the translator and onto the client's socket. No task wakes per event. When the
client's socket is full, the upstream's reading pauses until it drains; a client that reads
nothing for ``write_timeout`` is let go.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import os
import re
import ssl
import sys
import time
from typing import Any, Callable, Collection, Dict, List, NamedTuple, Optional, Tuple
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

try:
    from aiohttp import web
except ImportError as e:  # pragma: no cover - the extra is not installed
    raise ImportError("ssewire.gateway needs aiohttp: pip install 'ssewire[gateway]'") from e

import ssewire
from ssewire import _core

__all__ = ["HEAD_TIMEOUT", "Route", "final_text", "main", "make_app", "record", "route", "runner", "serve"]

#: The dialect registry of the core, by name: the dialects whose clients the gateway serves.
SPECS: Dict[str, Dict[str, Any]] = {spec["name"]: spec for spec in _core.DIALECTS if spec["serves"]}
STREAMS: Dict[str, Any] = {name: getattr(ssewire, spec["stream_class"]) for name, spec in SPECS.items()}
#: The dialects an upstream may speak.
UPSTREAMS: Tuple[str, ...] = tuple(spec["name"] for spec in _core.DIALECTS if spec["upstream"])
#: The content type of a stream in each dialect's framing.
STREAM_TYPES = {"sse": "text/event-stream", "eventstream": "application/vnd.amazon.eventstream"}
#: The parts of the registry's path templates, as patterns.
_TEMPLATE_PARTS = {"{model}": r"(?P<model>[^/:]+)", "{version}": r"(?P<version>v1(?:beta|alpha)?)"}


def _path_pattern(template: str) -> re.Pattern[str]:
    pattern = ""
    for piece in re.split(r"(\{model\}|\{version\})", template):
        pattern += _TEMPLATE_PARTS.get(piece) or re.escape(piece)
    return re.compile(r"^(?P<prefix>.*?)" + pattern + "$")


#: (pattern, dialect, whether the path asks for a stream: None when the body tells, the
#: framing the client reads: Bedrock's InvokeModel paths answer a Messages request in the
#: event stream framing).
ROUTES: List[Tuple[re.Pattern[str], str, Optional[bool], str]] = [
    (_path_pattern(template), name, streaming, framing)
    for name, spec in SPECS.items()
    for template, streaming, framing in (
        (spec["stream_path"], None if spec["whole_path"] is None else True, spec["framing"]),
        (spec["whole_path"], False, spec["framing"]),
        *(((p, s, "eventstream") for p, s in zip(spec["invoke_paths"], (True, False)))
          if spec["invoke_paths"] else ()),
    )
    if template is not None
]  # fmt: skip
#: The dialect whose client a Bedrock path's caller is (its credential, its errors, its
#: headers): Converse's.
BEDROCK = next(spec["name"] for spec in _core.DIALECTS if spec["framing"] == "eventstream")
#: What a raw path prefix may hold: RFC 3986 path characters and percent escapes.
RAW_PATH = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$")
#: The query parameters each dialect defines, the only ones passed on (Gemini's ``key`` is a
#: credential: never in an upstream URL).
QUERY: Dict[str, Tuple[str, ...]] = {name: spec["query"] for name, spec in SPECS.items()}
#: The default body limit: a real multimodal request (several base64 images or a PDF).
MAX_BODY = 32 * 1024 * 1024
#: The most of an upstream's answer read whole, for a client that asked for no stream.
MAX_WHOLE_BODY = 64 * 1024 * 1024
#: The most of an upstream's error body read (the rest is not waited for).
MAX_ERROR_BODY = 1024 * 1024
#: Longest error message logged (an upstream may send megabytes in one).
LOGGED_MESSAGE = 500
#: The Anthropic API version sent to a Messages upstream when the client named none.
ANTHROPIC_VERSION = "2023-06-01"
#: Where an app keeps its ``head_timeout`` (for ``runner`` and ``web.run_app``'s
#: ``keepalive_timeout``).
HEAD_TIMEOUT = web.AppKey("ssewire.head_timeout", float)
#: A header value that may be passed on: visible ASCII, spaces and tabs.
HEADER_VALUE = re.compile(r"^[\x20-\x7e\t]*$")


class Route(NamedTuple):
    """What a request path asks for: the client's dialect, the raw path before the dialect's
    own part, and (Gemini) the model, its API version and whether a stream was asked for."""

    dialect: str
    prefix: str
    model: Optional[str] = None
    streaming: Optional[bool] = None
    version: str = "v1beta"
    #: The framing the client reads ("eventstream": a Bedrock client).
    framing: str = "sse"

    @property
    def persona(self) -> str:
        """The dialect whose client this is to its credential, errors and headers: a Bedrock
        client's (Converse's) on a Bedrock path, else the request's dialect."""
        return BEDROCK if self.framing == "eventstream" else self.dialect


def route(raw_path: str) -> Optional[Route]:
    """The route of a raw request path (its query removed), or None for a path that is no
    LLM endpoint."""
    for pattern, dialect, streaming, framing in ROUTES:
        m = pattern.match(raw_path)
        if m is None:
            continue
        found = m.groupdict()
        model = found.get("model")
        version = found.get("version") or "v1beta"
        return Route(
            dialect, m["prefix"], None if model is None else unquote(model), streaming, version, framing
        )
    return None


def final_text(dialect: str, result: Dict[str, Any]) -> str:
    """The assistant's text in a final object (the provider's non-streaming shape)."""
    if dialect == "chat":
        choices = result.get("choices") or [{}]
        content = (choices[0].get("message") or {}).get("content")
        return content if isinstance(content, str) else ""
    if dialect == "gemini":
        candidates = result.get("candidates") or [{}]
        parts = (candidates[0].get("content") or {}).get("parts") or []
        blocks = [p for p in parts if isinstance(p, dict) and not p.get("thought")]
    elif dialect == "messages":
        blocks = result.get("content") or []
    else:
        blocks = [
            part
            for item in result.get("output") or []
            if isinstance(item, dict)
            for part in item.get("content") or []
        ]
    return "".join(
        b.get("text", "") for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
    )


def _cut(message: str) -> str:
    if len(message) > LOGGED_MESSAGE:
        return message[:LOGGED_MESSAGE] + f"... ({len(message)} characters)"
    return message


def _timing(timing: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The durations of a stream's ``timing`` (seconds), for the log line."""
    if timing is None:
        return None
    keys = ("time_to_first_output", "time_per_output_chunk", "duration", "output_chunks")
    return {k: timing.get(k) for k in keys}


def record(dialect: str, stream: Any, client_gone: bool = False) -> Dict[str, Any]:
    """The log record of one stream. ``done`` tells a complete stream from one that ended
    early; ``client_disconnected``, that the client left before the upstream finished (its
    usage is what the upstream had sent by then)."""
    result = stream.result()
    text = final_text(dialect, result)
    error = stream.error
    return {
        "dialect": dialect,
        "model": result.get(SPECS[dialect]["model_key"]),
        "usage": result.get(SPECS[dialect]["usage_key"]),
        # The same usage in one shape for every provider, and when the stream's output came.
        "tokens": getattr(stream, "usage", None),
        "timing": _timing(getattr(stream, "timing", None)),
        "text_length": len(text),
        "text_start": text[:40],
        "done": bool(getattr(stream, "done", False)),
        "client_disconnected": client_gone,
        "error": None if error is None else {"message": _cut(str(error.message)), "code": error.code},
    }


def safe_prefix(prefix: str) -> bool:
    """A raw path prefix the upstream path may carry: RFC 3986 path characters only, and no
    dot segment (``..``, ``.``, percent-encoded too): it must not climb out of the upstream's
    base path."""
    if prefix and (not prefix.startswith("/") or prefix.startswith("//")):
        return False  # absolute form (http://host/...) or //host would name another host
    if not RAW_PATH.match(prefix) or ";" in prefix:
        return False  # ..;/ reads as ../ to some servers
    return all(seg not in (".", "..") for seg in unquote(prefix).replace("\\", "/").split("/"))


# --- credentials -----------------------------------------------------------------------------


def client_credential(dialect: str, headers: Any, query: Dict[str, str]) -> Optional[str]:
    """The credential a client of ``dialect`` sent, in its dialect's own places (the
    registry's ``client_key_headers``, then its ``client_key_query``)."""
    spec = SPECS[dialect]
    for name in spec["client_key_headers"]:
        value = headers.get(name)
        if not value:
            continue
        if name != "authorization":
            return str(value)
        if value[:7].lower() == "bearer ":
            return str(value[7:].strip())
    if spec["client_key_query"] is not None:
        return query.get(spec["client_key_query"])
    return None


#: A Bedrock Runtime host and the region it names.
BEDROCK_HOST = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")


def bedrock_signer(url: str) -> Callable[[str, bytes], List[Tuple[str, str]]]:
    """What signs requests to the Bedrock upstream at ``url`` with SigV4, by botocore: the
    credentials from the standard AWS chain (environment, shared files, SSO, container and
    instance roles; refreshed by botocore when they expire), the region the host names, else
    the chain's, else ``us-east-1``. ``ValueError`` without botocore or credentials."""
    try:
        import botocore.session  # type: ignore[import-untyped]
        from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
        from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
    except ImportError:
        raise ValueError("a Bedrock upstream signs its requests with botocore: pip install boto3") from None
    target = urlsplit(url)
    session = botocore.session.get_session()
    credentials = session.get_credentials()
    if credentials is None:
        raise ValueError("the AWS credential chain found no credentials for the Bedrock upstream")
    named = BEDROCK_HOST.match(target.hostname or "")
    region = (named[1] if named else None) or session.get_config_variable("region") or "us-east-1"
    base = target.path.rstrip("/")

    def sign(path: str, body: bytes) -> List[Tuple[str, str]]:
        """The headers that sign ``POST path`` with ``body`` (the host and content type the
        gateway sends are signed with them)."""
        request = AWSRequest(method="POST", url=f"{target.scheme}://{target.netloc}{base}{path}", data=body,
                             headers={"content-type": "application/json"})  # fmt: skip
        SigV4Auth(credentials.get_frozen_credentials(), "bedrock", region).add_auth(request)
        wanted = ("authorization", "x-amz-date", "x-amz-security-token")
        return [(k.lower(), str(v)) for k, v in request.headers.items() if k.lower() in wanted]

    return sign


def credential_headers(dialect: str, key: str) -> List[Tuple[str, str]]:
    """``key`` as an upstream of ``dialect`` takes it."""
    name, prefix = SPECS[dialect]["key_header"]
    return [(name, prefix + key)]


# --- response headers passed back ------------------------------------------------------------

#: Each dialect's name for the upstream's request id.
REQUEST_ID = {name: spec["request_id"] for name, spec in SPECS.items()}
RATE_OPENAI = re.compile(r"^x-ratelimit-(limit|remaining|reset)-(requests|tokens)$")
RATE_ANTHROPIC = re.compile(r"^anthropic-ratelimit-(requests|tokens)-(limit|remaining|reset)$")


def passed_headers(upstream: str, client: str, headers: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """The upstream's response headers a client should see, in the client dialect's names:
    ``retry-after`` (and ``retry-after-ms``), the rate limits (OpenAI's ``x-ratelimit-*`` and
    Anthropic's ``anthropic-ratelimit-*`` both ways; their reset times are in different forms
    and cross only within a family) and the request id."""
    out: List[Tuple[str, str]] = []
    family, client_family = SPECS[upstream]["family"], SPECS[client]["family"]
    for name, value in headers:
        k = name.lower()
        if not HEADER_VALUE.match(value):
            continue
        if k in ("retry-after", "retry-after-ms"):
            out.append((k, value))
        elif k in ("x-request-id", "request-id", "x-goog-request-id", "x-amzn-requestid"):
            out.append((REQUEST_ID[client], value))
        elif RATE_OPENAI.match(k) or RATE_ANTHROPIC.match(k):
            if family == client_family and family != "google":
                out.append((k, value))
                continue
            m = RATE_OPENAI.match(k)
            if m and client_family == "anthropic" and m[1] != "reset":
                out.append((f"anthropic-ratelimit-{m[2]}-{m[1]}", value))
            m = RATE_ANTHROPIC.match(k)
            if m and client_family == "openai" and m[2] != "reset":
                out.append((f"x-ratelimit-{m[2]}-{m[1]}", value))
    seen = set()
    unique = []
    for k, v in out:
        if k not in seen:
            seen.add(k)
            unique.append((k, v))
    return unique


# --- the upstream: one HTTP/1.1 request on a raw asyncio connection --------------------------


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
        self.head: asyncio.Future[None] = loop.create_future()
        self.end: asyncio.Future[None] = loop.create_future()
        self.sink: Optional[Callable[[bytes], None]] = None
        self.early: List[bytes] = []
        self.transport: Optional[asyncio.Transport] = None
        self._wake: Optional[asyncio.Future[None]] = None
        #: Reading paused by ``pause()`` (the client's socket is full).
        self.paused = False
        self._timer = None
        if timeout is not None:
            error = asyncio.TimeoutError("the upstream request took too long")
            self._timer = loop.call_later(timeout, self.stop, error)

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
            else:
                if self.reader.body_complete:  # a body delimited by the close: it ended well
                    self.stop()
                    return
        self.stop(exc or ConnectionResetError("the upstream closed the connection"))

    def eof_received(self) -> Optional[bool]:
        self._poke()
        return None

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
            self.paused = True
            self._poke()

    def resume(self) -> None:
        if self.transport is not None and not self.end.done():
            self.paused = False
            self.transport.resume_reading()

    def _poke(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def wait(self) -> None:
        """Returns when the request has ended, or its reading was paused by ``pause()`` (its
        own flag: a transport that the upstream closed reads nothing either, and is not
        waited on as if paused, or the loop would spin before ``connection_lost`` runs)."""
        if self.end.done() or self.paused:
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


class Refused(Exception):
    """A request the gateway answers itself with an error: ``status``, ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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


def make_app(upstream: str, log: Callable[[Dict[str, Any]], None], *,
             upstream_dialect: Optional[str] = None,
             upstream_key: Optional[str] = None,
             client_keys: Optional[Collection[str]] = None,
             pass_through_auth: bool = False,
             max_body_size: int = MAX_BODY,
             timeout: Optional[float] = 600.0,
             head_timeout: float = 30.0,
             body_timeout: float = 60.0,
             write_timeout: float = 30.0,
             connections: int = 100,
             meters: Optional[Dict[str, Callable[[], Any]]] = None,
             ssl_context: Optional[ssl.SSLContext] = None,
             metrics: Any = None,
             prometheus_registry: Any = None) -> web.Application:  # fmt: skip
    """The gateway as an aiohttp application in front of ``upstream`` (a base URL,
    ``http://`` or ``https://``); serve it with ``runner(app)`` (which applies
    ``head_timeout``) or ``main()``.

    ``upstream_dialect`` ("chat", "messages", "responses" or "gemini"): the upstream speaks only
    that dialect, and a client of another is served by translation; without it every request
    is relayed to the upstream in its own dialect. ``upstream_key``: the gateway's credential
    for the upstream, sent in the upstream dialect's form. ``client_keys``: the keys the
    gateway accepts from its clients (in whatever header the client dialect uses; default:
    any client). ``pass_through_auth``: the client's own credential is forwarded, only to an
    upstream of the client's dialect (never when ``upstream_key`` is set).

    ``max_body_size`` bounds a request body (413 past it); ``head_timeout`` and
    ``body_timeout``, how long a client may take to send its request's head and body;
    ``timeout``, a whole upstream request; ``write_timeout``, how long a client's socket may
    stay full; at most ``connections`` upstream connections at once. ``meters`` maps a
    dialect to the factory of what meters a relayed stream (default: the ssewire stream;
    anything with ``consume(bytes)``, ``finish()``, ``result()`` and ``error`` will do).
    ``log`` receives one record (a dict) per request. ``metrics``: a
    ``ssewire.otel.GatewayMetrics`` records each request's OpenTelemetry GenAI metrics and
    span; ``prometheus_registry``: the gateway also serves ``GET /metrics`` from it."""
    app = web.Application(client_max_size=max_body_size)
    app[HEAD_TIMEOUT] = head_timeout
    target = urlsplit(upstream)
    if target.scheme not in ("http", "https") or not target.hostname:
        raise ValueError(f"the upstream must be an http:// or https:// URL, not {upstream!r}")
    if upstream_dialect is not None and upstream_dialect not in UPSTREAMS:
        raise ValueError(f"unknown upstream dialect {upstream_dialect!r}")
    if upstream_key is not None and not (upstream_key and HEADER_VALUE.match(upstream_key)):
        raise ValueError("the upstream key must be visible ASCII")
    tls = (ssl_context or ssl.create_default_context()) if target.scheme == "https" else None
    up_host = target.hostname
    up_port = target.port or (443 if tls else 80)
    base = target.path.rstrip("/")
    if not RAW_PATH.match(base):
        raise ValueError("the upstream URL's path has characters a path cannot hold")
    keys = [k.encode() for k in client_keys or ()]
    slots: List[asyncio.Semaphore] = []  # made in the app's loop

    def limit() -> asyncio.Semaphore:
        if not slots:
            slots.append(asyncio.Semaphore(connections))
        return slots[0]

    def upstream_headers(request: web.Request, client: str, up: str,
                         query: Dict[str, str]) -> List[Tuple[str, str]]:  # fmt: skip
        """The headers the upstream gets beside the fixed ones: its credential and its API
        version, from the allow-list, one of each name."""
        out: List[Tuple[str, str]] = []
        if upstream_key is not None:
            out += credential_headers(up, upstream_key)
        elif pass_through_auth and client == up:
            own = client_credential(client, request.headers, query)
            if own is not None:
                if not HEADER_VALUE.match(own):
                    raise Refused(400, "the credential has characters no header can carry")
                out += credential_headers(up, own)
        family, client_family = SPECS[up]["family"], SPECS[client]["family"]
        if family == "anthropic":
            same = client_family == "anthropic"
            version = request.headers.get("anthropic-version") if same else None
            out.append(("anthropic-version", version or ANTHROPIC_VERSION))
            beta = request.headers.get("anthropic-beta") if same else None
            if beta:
                out.append(("anthropic-beta", beta))
        if family == client_family == "openai":
            for name in ("openai-organization", "openai-project"):
                value = request.headers.get(name)
                if value and pass_through_auth and client == up:
                    out.append((name, value))
        for name, value in out:
            if not HEADER_VALUE.match(value):
                raise Refused(400, f"the {name} header has characters no header can carry")
        return out

    def request_bytes(path: str, body: bytes, headers: List[Tuple[str, str]]) -> bytes:
        lines = [f"POST {base}{path} HTTP/1.1", f"host: {target.netloc}",
                 "content-type: application/json", f"content-length: {len(body)}",
                 "accept-encoding: identity", "connection: close"]  # fmt: skip
        lines += [f"{k}: {v}" for k, v in headers]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body

    signer: List[Callable[[str, bytes], List[Tuple[str, str]]]] = []  # made on first use

    def signed(dialect: str, path: str, body: bytes, headers: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
        """A Bedrock upstream's request without a key of its own signed with SigV4."""
        if dialect != BEDROCK or any(k == "authorization" for k, _ in headers):
            return headers
        if not signer:
            try:
                signer.append(bedrock_signer(upstream))
            except ValueError as e:
                raise Refused(502, str(e)) from None
        return [*headers, *signer[0](path, body)]

    async def open_upstream(path: str, body: bytes, headers: List[Tuple[str, str]], dialect: str) -> Upstream:
        """Sends the request to the upstream of ``dialect``; returns once the response's head
        is read (raises what ended the request otherwise). The caller must ``stop()`` it."""
        headers = signed(dialect, path, body, headers)
        loop = asyncio.get_running_loop()
        up = Upstream(request_bytes(path, body, headers), timeout)
        try:
            connect = loop.create_connection(lambda: up, up_host, up_port, ssl=tls)
            await asyncio.wait_for(connect, timeout)
            await asyncio.shield(up.head)
        except BaseException:
            up.stop()
            raise
        return up

    async def serve(request: web.Request, up: Upstream, convert: Callable[[bytes], bytes],
                    headers: List[Tuple[str, str]]) -> Tuple[web.StreamResponse, bool]:  # fmt: skip
        """Streams the upstream's body through ``convert`` to the client, as it is read.
        Returns the response and whether the client left (or read nothing for
        ``write_timeout``) first. The response is ended unless the client left."""
        response = web.StreamResponse(status=up.reader.status or 502)
        for k, v in headers:
            response.headers[k] = v
        chunked = request.version >= (1, 1)
        if chunked:
            response.enable_chunked_encoding()
        await response.prepare(request)  # the head is sent now; the body goes straight on
        client = request.transport
        high = client.get_write_buffer_limits()[1] if client is not None else 0
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

    async def whole_body(up: Upstream) -> bytes:
        """An upstream's whole body, for a client that asked for no stream (at most
        ``MAX_WHOLE_BODY``: past it the request is stopped, a failure)."""
        parts = list(up.early)
        up.early.clear()
        size = [sum(len(b) for b in parts)]

        def keep(body: bytes) -> None:
            parts.append(body)
            size[0] += len(body)
            if size[0] > MAX_WHOLE_BODY:
                up.stop(ValueError("the upstream's answer is larger than the gateway takes"))

        up.sink = keep
        try:
            await asyncio.shield(up.end)
        except (OSError, asyncio.TimeoutError, ValueError, ssewire.HTTPProtocolError):
            pass  # up.end tells it
        return b"".join(parts)

    async def error_body(up: Upstream) -> bytes:
        """An upstream's error body, as far as it comes (at most ``MAX_ERROR_BODY``)."""
        size = [sum(len(b) for b in up.early)]

        def keep(body: bytes) -> None:
            up.early.append(body)
            size[0] += len(body)
            if size[0] > MAX_ERROR_BODY:
                up.stop()

        up.sink = keep
        try:
            await asyncio.shield(up.end)
        except (OSError, asyncio.TimeoutError, ssewire.HTTPProtocolError):
            pass  # what came is what there is
        return b"".join(up.early)[:MAX_ERROR_BODY]

    def stream_outcome(stream: Any, up: Upstream, client: str) -> Optional[Tuple[int, bytes]]:
        """For a client that asked for no stream: the error status and the client dialect's
        error body when the stream failed (the upstream's error, its type mapped), was cut or
        timed out; None when it ended well."""
        exc = up.end.exception() if up.end.done() else None
        error = getattr(stream, "error", None)
        if error is not None:
            said = {"error": {"message": str(error.message), "type": error.type, "code": error.code}}
            e = ssewire.translate_error(0, json.dumps(said).encode(), "responses", client)
            return e.status, e.body
        if isinstance(exc, asyncio.TimeoutError):
            return 504, _core._error_body(504, "the upstream took too long to answer", client)
        if exc is not None or not getattr(stream, "done", False):
            return 502, _core._error_body(502, "the upstream's stream was cut off before its end", client)
        return None

    async def read_request(request: web.Request, client: str) -> Tuple[bytes, Dict[str, Any]]:
        """The client's body and its JSON object; ``Refused`` for one too large, too slow,
        not JSON, too deep, or not an object."""
        if request.content_length is not None and request.content_length > max_body_size:
            raise Refused(413, f"the request body is larger than {max_body_size} bytes")
        try:
            raw = await asyncio.wait_for(request.read(), body_timeout)
        except web.HTTPRequestEntityTooLarge:
            raise Refused(413, f"the request body is larger than {max_body_size} bytes") from None
        except asyncio.TimeoutError:
            raise Refused(408, f"the request body took longer than {body_timeout:g} s") from None
        try:
            wanted = json.loads(raw or b"{}")
        except RecursionError:
            raise Refused(400, "the request body is nested too deep") from None
        except ValueError:
            raise Refused(400, "the request body is not JSON") from None
        if not isinstance(wanted, dict):
            raise Refused(400, "the request body is not a JSON object")
        return raw, wanted

    user_log = log

    def metered(entry: Dict[str, Any]) -> None:
        """The user's log, then the request's metrics."""
        started = entry.pop("_started", None)
        user_log(entry)
        if metrics is not None:
            metrics.record(entry, None if started is None else time.monotonic() - started)

    log = metered

    async def handle(request: web.Request) -> web.StreamResponse:
        raw_path, _, raw_query = request.raw_path.partition("?")
        match = route(raw_path)
        entry: Dict[str, Any] = {"path": _cut(raw_path), "_started": time.monotonic()}
        client = match.dialect if match is not None else "chat"
        persona = match.persona if match is not None else client
        try:
            if not safe_prefix(raw_path):
                raise Refused(400, "the path has a dot segment or characters a path cannot hold")
            if match is None:
                raise Refused(404, "not an LLM endpoint of this gateway")
            entry["client_dialect"] = client
            query = dict(parse_qsl(raw_query, keep_blank_values=True))
            if keys:
                given = client_credential(persona, request.headers, query) or ""
                raw = given.encode("utf-8", "surrogateescape")  # undecodable bytes compare too
                if not any(hmac.compare_digest(raw, k) for k in keys):
                    raise Refused(401, "no valid key for this gateway")
            raw, wanted = await read_request(request, client)
            model = match.model if match.model is not None else wanted.get("model")
            entry["request_model"] = _cut(model) if isinstance(model, str) else None
            up = upstream_dialect or client
            if up not in UPSTREAMS:
                raise Refused(501, f"this gateway has no {up} upstream: its clients are served "
                                   "from an upstream of another dialect (--upstream-dialect)")  # fmt: skip
            # A Bedrock client's credential is Bedrock's: never passed to another provider.
            headers = upstream_headers(request, persona, up, query)
            if up != client or match.framing != SPECS[client]["framing"]:
                # Another dialect, or the same one in another framing (a Bedrock client of a
                # Messages upstream): mapped and translated, never relayed as it is.
                return await translated(request, match, up, wanted, headers, entry)
            return await relay(request, match, raw, wanted, query, headers, entry)
        except Refused as refusal:
            entry.update({"status": refusal.status, "error": {"message": _cut(refusal.message)}})
            log(entry)
            return error_response(persona, refusal.status, refusal.message)
        except ssewire.RequestError as e:
            entry.update({"status": 400, "error": {"message": _cut(str(e))}})
            log(entry)
            return error_response(persona, 400, str(e))

    def upstream_path(match: Route, query: Dict[str, str], wanted: Dict[str, Any]) -> str:
        """A relayed request's upstream path: the raw prefix, the dialect's path (a model in
        it re-encoded as one segment), the dialect's own query parameters."""
        spec = SPECS[match.dialect]
        template: str = spec["whole_path"] if match.streaming is False else spec["stream_path"]
        path = match.prefix + template.replace("{version}", match.version)
        if match.model is not None:
            path = path.replace("{model}", _core._model_segment(match.model))
        allowed = [(k, v) for k, v in query.items() if k in QUERY[match.dialect]]
        return path + ("?" + urlencode(allowed) if allowed else "")

    async def relay(request: web.Request, match: Route, raw: bytes, wanted: Dict[str, Any],
                    query: Dict[str, str], headers: List[Tuple[str, str]],
                    entry: Dict[str, Any]) -> web.StreamResponse:  # fmt: skip
        dialect = match.dialect
        path = upstream_path(match, query, wanted)
        stream = (meters or {}).get(dialect, STREAMS[dialect])()

        def meter(chunk: bytes) -> bytes:
            stream.consume(chunk)
            return chunk  # relayed byte for byte

        async with limit():
            up: Optional[Upstream] = None
            client_gone = True
            status = 502
            refused = False
            try:
                try:
                    up = await open_upstream(path, raw, headers, dialect)
                except (OSError, ssewire.HTTPProtocolError) as e:
                    raise Refused(502, f"the upstream could not be reached: {e}") from None
                except asyncio.TimeoutError:
                    raise Refused(504, "the upstream did not answer in time") from None
                status = up.reader.status or 502
                passed = [
                    (k, v) for k, v in up.reader.headers if k.lower() in ("content-type", "cache-control")
                ]
                passed += passed_headers(dialect, dialect, list(up.reader.headers))
                streaming = match.streaming if match.streaming is not None else wanted.get("stream") is True
                if not streaming:
                    # A client that asked for no stream gets the whole answer or an error, never
                    # 200 and a body cut short: read it all first (bounded), then answer.
                    body = await whole_body(up)
                    exc = up.end.exception() if up.end.done() else None
                    if exc is not None:
                        status = 504 if isinstance(exc, asyncio.TimeoutError) else 502
                        raise Refused(status, "the upstream's answer was cut off before its end")
                    client_gone = False
                    stream.consume(body)
                    stream.finish()
                    answer = web.Response(status=status, body=body)
                    for k, v in passed:
                        answer.headers[k] = v
                    return answer
                response, client_gone = await serve(request, up, meter, passed)
                if not client_gone and not up.failed():
                    stream.finish()
            except Refused:
                refused = True  # handle() answers and logs it
                raise
            finally:
                if up is not None:
                    up.stop()
                    if not refused:
                        entry.update(entry_of(dialect, stream, client_gone, up))
                        entry["status"] = status
                        log(entry)
        return await end(request, response, client_gone, up)

    def entry_of(dialect: str, stream: Any, client_gone: bool, up: Optional[Upstream]) -> Dict[str, Any]:
        logged = record(dialect, stream, client_gone)
        if up is not None and up.failed():
            logged["upstream_error"] = repr(up.end.exception())[:LOGGED_MESSAGE]
        return logged

    async def translated(request: web.Request, match: Route, upstream_dialect: str, wanted: Dict[str, Any],
                         headers: List[Tuple[str, str]],
                         entry: Dict[str, Any]) -> web.StreamResponse:  # fmt: skip
        """Serves a request of the client's dialect (in the route's framing) from an upstream
        of ``upstream_dialect``."""
        client, persona = match.dialect, match.persona
        # The whole request is mapped (tool calls and results, images, settings, the reasoning
        # carried in tool call ids); what the upstream cannot take is in r.notes. A Gemini
        # client names its model in the path.
        r = ssewire.translate_request(wanted, client, upstream_dialect, model=match.model)
        entry["request_notes"] = r.notes
        entry["served_as"] = client
        entry["dialect"] = upstream_dialect
        path = match.prefix + r.path
        streaming = match.streaming if match.streaming is not None else bool(wanted.get("stream"))
        # A client of another framing than its dialect's own (InvokeModel) gets its own.
        target_framing = "sse" if match.framing == SPECS[client]["framing"] else match.framing
        t = ssewire.Translator(upstream_dialect, client, target_framing=target_framing)
        async with limit():
            up: Optional[Upstream] = None
            client_gone = False
            logged = False
            try:
                try:
                    up = await open_upstream(path, json.dumps(r.body).encode(), headers, upstream_dialect)
                except (OSError, ssewire.HTTPProtocolError) as e:
                    raise Refused(502, f"the upstream could not be reached: {e}") from None
                except asyncio.TimeoutError:
                    raise Refused(504, "the upstream did not answer in time") from None
                status = up.reader.status or 502
                passed = passed_headers(upstream_dialect, persona, list(up.reader.headers))
                if status >= 400:
                    body = await error_body(up)
                    said = ssewire.translate_error(status, body, upstream_dialect, persona)
                    entry.update({"status": said.status,
                                  "error": {"message": body[:LOGGED_MESSAGE].decode("utf-8", "replace")}})  # fmt: skip
                    answer = web.Response(status=said.status, body=said.body, content_type=said.content_type)
                    for k, v in passed:
                        answer.headers[k] = v
                    return answer
                if not streaming:
                    return await whole(up, t, persona, passed, entry)
                content_type = [("content-type", STREAM_TYPES[match.framing])]
                if match.framing != SPECS[client]["framing"]:
                    # InvokeModel's header naming its chunks' type (boto3's `contentType`).
                    content_type.append(("x-amzn-bedrock-content-type", "application/json"))
                response, client_gone = await serve(request, up, t.feed, [*content_type, *passed])
                entry["status"] = status
                if not client_gone and not up.failed():
                    tail = t.finish()  # the events that close the client's stream, if any
                    if tail:
                        await response.write(tail)
            except Refused:
                logged = True  # handle() logs it, with what is known so far
                entry["notes"] = t.notes
                raise
            finally:
                if up is not None:
                    up.stop()
                if not logged:
                    if t.source is not None and "error" not in entry:
                        entry.update(entry_of(upstream_dialect, t.source, client_gone, up))
                        entry["dialect"] = upstream_dialect
                    entry["notes"] = t.notes
                    log(entry)
        return await end(request, response, client_gone, up)

    async def whole(up: Upstream, t: Any, client: str, passed: List[Tuple[str, str]],
                    entry: Dict[str, Any]) -> web.Response:  # fmt: skip
        """A client that asked for no stream: the upstream's stream translated whole, answered
        with the target's non-streaming object (``t.result()``), or, when the stream failed,
        was cut or timed out, with the error status and the client dialect's error object."""
        for body in up.early:
            t.feed(body)
        up.early.clear()
        up.sink = t.feed
        try:
            await asyncio.shield(up.end)
            t.finish()
        except (OSError, asyncio.TimeoutError, ssewire.HTTPProtocolError):
            pass  # the stream's error, or its missing end, tells it below
        if t.source is None:  # nothing came that could tell the dialect
            outcome: Optional[Tuple[int, bytes]] = (
                502,
                _core._error_body(502, "the upstream sent no stream", client),
            )
        else:
            outcome = stream_outcome(t.source, up, client)
        if outcome is not None:
            entry["status"] = outcome[0]
            answer = web.Response(status=outcome[0], body=outcome[1], content_type="application/json")
        else:
            entry["status"] = 200
            answer = web.json_response(t.result())
        for k, v in passed:
            answer.headers[k] = v
        return answer

    if prometheus_registry is not None:
        import prometheus_client

        async def scrape(request: web.Request) -> web.Response:
            body = prometheus_client.generate_latest(prometheus_registry)
            return web.Response(body=body, headers={"content-type": prometheus_client.CONTENT_TYPE_LATEST})

        app.router.add_route("GET", "/metrics", scrape)
    app.router.add_route("POST", r"/{path:[\s\S]*}", handle)  # every path: the handler routes
    return app


#: How long the rest of a body the gateway refused (too large, too slow) is read and dropped
#: before the connection closes (aiohttp's default is 10 s).
LINGER = 1.0


class _HeadWatch(asyncio.Protocol):
    """A connection's protocol with a deadline for its first request head: closed when no
    blank line ending a head has arrived within ``timeout`` (a client trickling its head byte
    by byte). Everything else goes to aiohttp's own protocol as it is (later heads on a kept
    connection: aiohttp's keep-alive timeout, set to the same value, where it has one)."""

    def __init__(self, inner: Any, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self.tail = b""
        self.done = False
        self.timer: Optional[asyncio.TimerHandle] = None
        self.transport: Optional[asyncio.BaseTransport] = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.timer = asyncio.get_running_loop().call_later(self.timeout, self._expire)
        self.inner.connection_made(transport)

    def _expire(self) -> None:
        if not self.done and self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if not self.done:
            seen = self.tail + data[:65536]
            if b"\r\n\r\n" in seen or b"\n\n" in seen:
                self.done = True
                if self.timer is not None:
                    self.timer.cancel()
            self.tail = seen[-3:]
        self.inner.data_received(data)

    def eof_received(self) -> Optional[bool]:
        return self.inner.eof_received()  # type: ignore[no-any-return]

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class _Runner(web.AppRunner):
    """``web.AppRunner`` whose connections get a deadline for their first request head."""

    @property
    def server(self) -> Any:
        inner = super().server
        if inner is None:
            return None
        timeout = self.app[HEAD_TIMEOUT]
        return lambda: _HeadWatch(inner(), timeout)


def runner(app: web.Application) -> web.AppRunner:
    """An ``aiohttp.web.AppRunner`` for a gateway app, with its ``head_timeout``: a connection
    that has not sent a whole request head by then (a client trickling it byte by byte) is
    closed; the unread body of a refused request is not waited for past ``LINGER``."""
    return _Runner(app, keepalive_timeout=app[HEAD_TIMEOUT], lingering_time=LINGER)


async def serve(app: web.Application, host: str, port: int) -> None:
    """Serves a gateway app on ``host:port`` until cancelled."""
    run = runner(app)
    await run.setup()
    try:
        await web.TCPSite(run, host, port).start()
        print(f"ssewire gateway: serving on http://{host}:{port}", file=sys.stderr, flush=True)
        await asyncio.Event().wait()
    finally:
        await run.cleanup()


def new_loop(name: str = "auto") -> asyncio.AbstractEventLoop:
    """An event loop: uvloop's where it is installed (``auto``) or asked for, else asyncio's."""
    if name != "asyncio":
        try:
            import uvloop
        except ImportError:
            if name == "uvloop":
                raise
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ssewire gateway",
        description="An LLM gateway: serves clients of every dialect from one upstream.",
    )
    parser.add_argument("--upstream", required=True, help="the upstream's base URL (http:// or https://)")
    parser.add_argument("--upstream-dialect", choices=sorted(UPSTREAMS),
                        help="the one dialect the upstream speaks: clients of the others are "
                        "served by translation (default: relay every request in its own dialect)")  # fmt: skip
    parser.add_argument("--upstream-key-env", metavar="VAR",
                        help="the environment variable holding the gateway's upstream credential, "
                        "sent in the upstream dialect's form")  # fmt: skip
    parser.add_argument("--client-keys-env", metavar="VAR",
                        help="the environment variable holding the comma-separated keys the gateway "
                        "accepts from its clients (default: any client)")  # fmt: skip
    parser.add_argument("--pass-through-auth", action="store_true",
                        help="forward the client's own credential, only to an upstream of the "
                        "client's dialect")  # fmt: skip
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--max-body-size", type=int, default=MAX_BODY, metavar="BYTES")
    parser.add_argument("--metrics", action="store_true",
                        help="record OpenTelemetry GenAI metrics and serve them on GET /metrics "
                        "(Prometheus); OTLP export follows the OTEL_* environment variables "
                        "(pip install 'ssewire[otel]')")  # fmt: skip
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto",
                        help="the event loop (auto: uvloop where it is installed)")  # fmt: skip
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """``ssewire gateway``: serves until interrupted; one JSON log line per request on
    stdout. Returns the exit status."""
    args = make_parser().parse_args(argv)

    def env(var: Optional[str]) -> Optional[str]:
        if var is None:
            return None
        value = os.environ.get(var)
        if not value:
            raise SystemExit(f"ssewire gateway: the environment variable {var} is not set")
        return value

    def log(entry: Dict[str, Any]) -> None:
        print(json.dumps(entry), file=sys.stdout, flush=True)

    keys = env(args.client_keys_env)
    metrics, registry = None, None
    if args.metrics or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        try:
            from ssewire.otel import configure

            metrics, registry = configure(prometheus=args.metrics)
        except ImportError as e:
            print(f"ssewire gateway: metrics need pip install 'ssewire[otel]' ({e})", file=sys.stderr)
            return 2
    try:
        app = make_app(args.upstream.rstrip("/"), log, upstream_dialect=args.upstream_dialect,
                       upstream_key=env(args.upstream_key_env),
                       client_keys=[k.strip() for k in keys.split(",") if k.strip()] if keys else None,
                       pass_through_auth=args.pass_through_auth,
                       max_body_size=args.max_body_size, metrics=metrics,
                       prometheus_registry=registry)  # fmt: skip
    except ValueError as e:
        print(f"ssewire gateway: {e}", file=sys.stderr)
        return 2
    loop = new_loop(args.loop)
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(serve(app, args.host, args.port))
    except KeyboardInterrupt:
        pass
    finally:
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
