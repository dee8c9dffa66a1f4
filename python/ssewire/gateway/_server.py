"""The gateway's aiohttp application: every LLM path routed by the client's model to the
route's targets in turn (``_failover.Plan``, each try an ``_exchange.Attempt``), ``GET
/v1/models``, ``GET /health`` and ``GET /metrics``; and the runner that serves it.

The configuration in force is a ``State``; ``reload(app, config)`` puts a new one in place:
requests in flight finish with the state they began with, new ones take the new one. An
upstream left as it was keeps its connections, keys and breaker."""

from __future__ import annotations

import asyncio
import functools
import hmac
import json
import ssl
import time
from typing import Any, Callable, Dict, List, Optional, Union
from urllib.parse import parse_qsl

from aiohttp import web

import ssewire
from ssewire import _core
from ssewire.gateway import _config as config
from ssewire.gateway import _keys
from ssewire.gateway._auth import Refused, Signer, bedrock_signer, client_credential
from ssewire.gateway._exchange import Attempt, Client, error_response
from ssewire.gateway._failover import Outcome, Plan, Router, Try, Upstream, Wait
from ssewire.gateway._paths import SPECS, route, safe_prefix
from ssewire.gateway._record import cut
from ssewire.gateway._upstream import Pool

#: Where an app keeps its ``head_timeout`` (for ``runner`` and ``web.run_app``'s
#: ``keepalive_timeout``).
HEAD_TIMEOUT = web.AppKey("ssewire.head_timeout", float)
#: Where an app keeps the configuration in force.
STATE = web.AppKey("ssewire.state", object)


class State:
    """A configuration in force in one worker: its router, and per upstream its state
    (keys, breaker), pool and signer."""

    def __init__(self, cfg: config.Config, before: Optional[State] = None,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:  # fmt: skip
        self.config = cfg
        self.router = Router(cfg.routes)
        self.keys = [k.encode() for k in cfg.server.client_keys]
        #: ``[keys]``: the virtual keys and the store of their counts (None: none).
        self.vkeys = None if cfg.keys is None else _keys.Keys(list(cfg.keys.keys))
        #: Where the counts live: kept over a reload that names the same store (its counts
        #: and its connections stay); a store no longer named is closed.
        self.store: Any = None
        #: The end charges under way (a Redis store's run beside the answer).
        self.charges: set[asyncio.Task[None]] = before.charges if before is not None else set()
        if cfg.keys is not None:
            if (
                before is not None
                and before.config.keys is not None
                and before.config.keys.store == cfg.keys.store
            ):
                self.store = before.store
            elif cfg.keys.store == "memory":
                self.store = _keys.MemoryStore()
            else:
                from ssewire.gateway._redis_store import RedisStore

                self.store = RedisStore(cfg.keys.store)
        if before is not None and before.store is not None and before.store is not self.store:
            self.retire(before.store)
        #: ``carry = "store"``: where carried reasoning waits (the key store, else this
        #: process's memory, kept over a reload).
        self.carry_store: Any = None
        if cfg.server.carry == "store":
            if self.store is not None:
                self.carry_store = self.store
            elif before is not None and before.store is None and before.carry_store is not None:
                self.carry_store = before.carry_store
            else:
                self.carry_store = _keys.MemoryStore()
        self.upstreams: Dict[str, Upstream] = {}
        self.pools: Dict[str, Pool] = {}
        self.signers: Dict[str, Signer] = {}
        old = before.upstreams if before is not None else {}
        for up in cfg.upstreams:
            kept = old.get(up.name)
            if (
                before is not None
                and kept is not None
                and kept.cfg == up
                and before.config.breaker == cfg.breaker
            ):
                self.upstreams[up.name] = kept
                self.pools[up.name] = before.pools[up.name]
                if up.name in before.signers:
                    self.signers[up.name] = before.signers[up.name]
            else:
                self.upstreams[up.name] = Upstream(up, cfg.breaker)
                self.pools[up.name] = Pool(up, ssl_context)
        if before is not None:
            for name, pool in before.pools.items():
                if self.pools.get(name) is not pool:
                    pool.close()  # its idle connections; those in use end with their request

    def retire(self, store: Any) -> None:
        """Closes a store no longer in force once the charges under way have run."""
        closing = getattr(store, "close", None)
        if closing is None:
            return

        async def later() -> None:
            await asyncio.gather(*list(self.charges), return_exceptions=True)
            await closing()

        try:
            asyncio.get_running_loop().create_task(later())
        except RuntimeError:  # no loop (a State made outside the server): nothing was opened
            pass

    async def close(self) -> None:
        """The worker stops: the charges under way run, and the store is closed."""
        await asyncio.gather(*list(self.charges), return_exceptions=True)
        closing = getattr(self.store, "close", None)
        if closing is not None:
            await closing()

    def signer(self, name: str) -> Optional[Signer]:
        """The SigV4 signer of a Bedrock upstream (made on first use; None without
        credentials)."""
        if name not in self.signers:
            up = self.upstreams[name].cfg
            try:
                self.signers[name] = bedrock_signer(up.url, up.region)
            except ValueError:
                return None
        return self.signers[name]

    def health(self) -> Dict[str, Any]:
        now = time.monotonic()
        return {"status": "ok", "upstreams": {n: u.breaker.state(now) for n, u in self.upstreams.items()}}


def reload(app: web.Application, cfg: config.Config) -> None:
    """Puts ``cfg`` in force for new requests."""
    app[STATE] = State(cfg, app[STATE])  # type: ignore[arg-type]


#: ``asyncio.timeout`` (CPython 3.11+).
_timeout: Any = getattr(asyncio, "timeout", None)


async def read_request(request: web.Request, client: str, max_body_size: int, body_timeout: float) -> Any:
    """The client's body and its JSON object; ``Refused`` for one too large, too slow, not
    JSON, too deep, or not an object."""
    if request.content_length is not None and request.content_length > max_body_size:
        raise Refused(413, f"the request body is larger than {max_body_size} bytes")
    try:
        if _timeout is not None:  # in this task: no task of its own, as wait_for makes before 3.12
            async with _timeout(body_timeout):
                raw = await request.read()
        else:
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
    # Some upstreams read keys ignoring case (Go's encoding/json: Ollama), and a relay passes
    # the body on as sent: a key spelled so that the upstream would read it as another one
    # ("MODEL", "\u017ftream") would choose what the gateway did not route.
    seen: Dict[str, str] = {}
    for key in wanted:
        folded = key.casefold()
        if folded in seen or (folded != key and folded in ("model", "stream")):
            raise Refused(
                400, f"the request body has a key {cut(key)!r} that reads as another one ignoring case"
            )
        seen[folded] = key
    stream = wanted.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise Refused(400, "the request body's stream is not a boolean")
    return raw, wanted


def make_app(upstream: Union[str, config.Config], log: Callable[[Dict[str, Any]], None], *,
             upstream_dialect: Optional[str] = None,
             upstream_key: Optional[str] = None,
             client_keys: Optional[List[str]] = None,
             pass_through_auth: bool = False,
             max_body_size: int = config.MAX_BODY,
             timeout: float = 600.0,
             head_timeout: float = 30.0,
             body_timeout: float = 60.0,
             write_timeout: float = 30.0,
             connections: int = 100,
             meters: Optional[Dict[str, Callable[[], Any]]] = None,
             ssl_context: Optional[ssl.SSLContext] = None,
             metrics: Any = None,
             prometheus_registry: Any = None,
             metrics_text: Optional[Callable[[], Any]] = None,
             sleep: Callable[[float], Any] = asyncio.sleep) -> web.Application:  # fmt: skip
    """The gateway as an aiohttp application; serve it with ``runner(app)`` (which applies
    ``head_timeout``) or ``main()``.

    ``upstream``: a ``Config`` (API.md section 14: upstreams, routes by model, retries,
    failover, keys, breakers), or the base URL of one upstream (``http://`` or ``https://``,
    section 13) with ``upstream_dialect`` (it speaks only that dialect, and a client of
    another is served by translation; without it every request is relayed to it in the
    client's dialect), ``upstream_key`` (the gateway's credential for it, sent in its
    dialect's form), ``client_keys`` (the keys the gateway accepts from its clients, in
    whatever header the client dialect uses; default: any client), ``pass_through_auth`` (the
    client's own credential is forwarded, only to an upstream of the client's dialect, never
    when ``upstream_key`` is set), ``max_body_size``, ``timeout`` (connect, first byte and
    idle) and ``connections`` (at most that many upstream connections at once).

    ``head_timeout`` and ``body_timeout``: how long a client may take to send its request's
    head and body; ``write_timeout``, how long a client's socket may stay full. ``meters``
    maps a dialect to the factory of what meters a relayed stream (default: the ssewire
    stream). ``log`` receives one record (a dict) per request. ``metrics``: a
    ``ssewire.otel.GatewayMetrics`` records each request's OpenTelemetry metrics and span;
    ``prometheus_registry``: the gateway serves ``GET /metrics`` from it (``metrics_text``:
    an awaitable of the body to serve instead, the sum over a fleet's workers)."""
    if isinstance(upstream, str):
        cfg = config.single(upstream, upstream_dialect, upstream_key, tuple(client_keys or ()),
                            pass_through_auth, timeout, connections, max_body_size=max_body_size)  # fmt: skip
    else:
        cfg = upstream
    app = web.Application(client_max_size=cfg.server.max_body_size)
    app[HEAD_TIMEOUT] = head_timeout
    app[STATE] = State(cfg, ssl_context=ssl_context)

    def metered(entry: Dict[str, Any]) -> None:
        """The user's log, then the request's metrics."""
        started = entry.pop("_started", None)
        log(entry)
        if metrics is not None:
            metrics.record(entry, None if started is None else time.monotonic() - started)

    def identify(state: State, persona: str, request: web.Request, query: Dict[str, str],
                 entry: Dict[str, Any]) -> Optional[_keys.Key]:  # fmt: skip
        """``[keys]`` (API.md section 15): the key the client holds, before its body is read
        (401 for none, or an unknown one). The log names the key, never its text."""
        if state.vkeys is None:
            return None
        held = state.vkeys.identify(client_credential(persona, request.headers, query))
        if held is None:
            raise Refused(401, "no valid key for this gateway")
        entry["key"] = held.name
        return held

    async def admit(state: State, held: Optional[_keys.Key], model: Optional[str], raw: bytes,
                    entry: Dict[str, Any]) -> Optional[_keys.Ticket]:  # fmt: skip
        """The key's models (403) and limits (429 with ``retry-after``); the ticket its end
        is charged on. A store that cannot answer: 503, or served (``on_store_error``)."""
        if held is None:
            return None
        if model is None or not held.allows(model):
            raise Refused(403, f"the key {held.name!r} may not use the model {cut(model or '')!r}")
        try:
            decision = state.store.admit(held, _keys.clock(), _keys.estimate_tokens(raw))
            if asyncio.iscoroutine(decision):
                decision = await decision
        except Exception as e:  # the store cannot be reached
            entry["store_error"] = cut(str(e))
            if state.config.keys is not None and state.config.keys.on_store_error == "open":
                return None
            raise Refused(503, "the gateway's key store cannot be reached") from None
        if decision.ticket is None:
            window = {"rpm": "requests per minute", "tpm": "tokens per minute", "budget": "token budget"}
            raise Refused(429, f"the key {held.name!r} has used its {window.get(decision.full or '', 'limit')}",
                          [("retry-after", str(decision.retry_after))])  # fmt: skip
        ticket: _keys.Ticket = decision.ticket
        return ticket

    async def find_carried(state: State, raw: bytes, entry: Dict[str, Any]) -> Dict[str, str]:
        """``carry = "store"``: the carriers the request's short ids stand for (one store
        round trip, only when it has any). An id the store does not hold stays as it is."""
        if state.carry_store is None:
            return {}
        ids = _core._stored_ids(raw)
        if not ids:
            return {}
        try:
            found = state.carry_store.carried(ids, time.time(), entry.get("key") or "")
            if asyncio.iscoroutine(found):
                found = await found
        except Exception as e:  # the reasoning is not found: the turn goes on without it
            entry["store_error"] = cut(str(e))
            return {}
        if len(found) < len(ids):
            entry["carried_missing"] = len(ids) - len(found)
        return dict(found)

    def charge(state: State, ticket: _keys.Ticket, entry: Dict[str, Any]) -> None:
        """The answer ended: its tokens (the normalized usage, section 12) replace the
        estimate. A memory store's charge is done now; a Redis store's runs beside the end of
        the answer (the client does not wait for it), and a failure is logged on its own."""
        tokens = entry.get("tokens") or {}
        spent = tokens.get("total_tokens")
        if (
            spent is None
            and tokens.get("input_tokens") is not None
            and tokens.get("output_tokens") is not None
        ):
            spent = tokens["input_tokens"] + tokens["output_tokens"]
        result = state.store.charge(ticket, spent, _keys.clock())
        if not asyncio.iscoroutine(result):
            return

        async def run() -> None:
            try:
                await result
            except Exception as e:  # the charge is lost with the store; the answer was served
                log({"event": "store_error", "key": ticket.key, "error": cut(str(e))})

        task = asyncio.get_running_loop().create_task(run())
        state.charges.add(task)
        task.add_done_callback(state.charges.discard)

    async def handle(request: web.Request) -> web.StreamResponse:
        state: State = app[STATE]  # type: ignore[assignment]
        raw_path, _, raw_query = request.raw_path.partition("?")
        match = route(raw_path)
        entry: Dict[str, Any] = {"path": cut(raw_path), "_started": time.monotonic()}
        persona = match.persona if match is not None else "chat"
        try:
            if not safe_prefix(raw_path):
                raise Refused(400, "the path has a dot segment or characters a path cannot hold")
            if match is None:
                raise Refused(404, "not an LLM endpoint of this gateway")
            entry["client_dialect"] = match.dialect
            query = dict(parse_qsl(raw_query, keep_blank_values=True))
            held = identify(state, persona, request, query, entry)
            if state.keys:
                given = client_credential(persona, request.headers, query) or ""
                raw = given.encode("utf-8", "surrogateescape")  # undecodable bytes compare too
                if not any(hmac.compare_digest(raw, k) for k in state.keys):
                    raise Refused(401, "no valid key for this gateway")
            raw, wanted = await read_request(
                request, match.dialect, state.config.server.max_body_size, body_timeout
            )
            model = match.model if match.model is not None else wanted.get("model")
            model = model if isinstance(model, str) else None
            entry["request_model"] = cut(model) if model is not None else None
            chosen = state.router.match(model or "")
            if chosen is None:
                raise Refused(404, f"no route of this gateway serves the model {cut(model or '')!r}")
            if len(state.config.routes) > 1 or chosen.model != "*":
                entry["route"] = chosen.model
            asked = wanted.get("stream")
            if asked is None:  # absent or null: the dialect's default (Ollama's streams)
                asked = SPECS[match.dialect]["streams_by_default"]
            streaming = match.streaming if match.streaming is not None else asked is True
            ticket = await admit(state, held, model, raw, entry)
            client = Client(request, match, raw, wanted, query, model, streaming, meters, write_timeout,
                            await find_carried(state, raw, entry), state.carry_store,
                            state.config.server.carry_ttl, entry.get("key") or "")  # fmt: skip
            try:
                return await serve(state, client, Plan(chosen, state.upstreams, state.config.retry), entry)
            finally:
                if ticket is not None:
                    charge(state, ticket, entry)
        except Refused as refusal:
            entry.update({"status": refusal.status, "error": {"message": cut(refusal.message)}})
            metered(entry)
            return error_response(persona, refusal.status, refusal.message, refusal.headers)
        except ssewire.RequestError as e:
            entry.update({"status": 400, "error": {"message": cut(str(e))}})
            metered(entry)
            return error_response(persona, 400, str(e))

    async def serve(state: State, client: Client, plan: Plan, entry: Dict[str, Any]) -> web.StreamResponse:
        """The plan's tries, until one answers the client or none is left."""
        attempts: List[Dict[str, Any]] = []
        answer: Optional[Outcome] = None
        last: Optional[Attempt] = None
        try:
            while True:
                step = plan.next(time.monotonic())
                if step is None:
                    break
                if isinstance(step, Wait):
                    await sleep(step.seconds)
                    continue
                assert isinstance(step, Try)
                name = step.upstream.cfg.name
                attempt = Attempt(client, step, state.pools[name], functools.partial(state.signer, name))
                started = time.monotonic()
                try:
                    outcome = await attempt.run()
                except BaseException:
                    if step.trial:
                        step.upstream.breaker.ended()
                    raise
                ms = round((time.monotonic() - started) * 1000, 1)
                kind: Dict[str, Any] = (
                    {"failure": outcome.failure} if outcome.failure else {"status": outcome.status}
                )
                attempts.append({"upstream": name, **kind, "ms": ms})
                last = attempt
                if plan.record(step, outcome, time.monotonic()):
                    answer = outcome
                    break
        finally:
            if attempts:
                entry["attempts"] = attempts
                entry["upstream"] = attempts[-1]["upstream"]
            if last is not None:
                entry.update(last.entry)
        if answer is None:
            answer = plan.last
        if answer is None or answer.answer is None:
            status = 429 if answer is not None and answer.status == 429 else 503
            message = ("every key of this route's upstreams is resting after a 429" if status == 429
                       else "no upstream of this route is available (their breakers are open)")  # fmt: skip
            headers = [("retry-after", "1")] if status == 429 else []
            entry.update({"status": status, "error": {"message": message}})
            metered(entry)
            return error_response(client.match.persona, status, message, headers)
        response = answer.answer
        assert isinstance(response, web.StreamResponse)
        entry.setdefault("status", response.status)
        metered(entry)
        return response

    async def models(request: web.Request) -> web.Response:
        state: State = app[STATE]  # type: ignore[assignment]
        names = state.router.models()
        if request.headers.get("anthropic-version"):
            data = [
                {"type": "model", "id": n, "display_name": n, "created_at": "1970-01-01T00:00:00Z"}
                for n in names
            ]
            return web.json_response({"data": data, "has_more": False,
                                      "first_id": names[0] if names else None,
                                      "last_id": names[-1] if names else None})  # fmt: skip
        return web.json_response({"object": "list", "data": [
            {"id": n, "object": "model", "created": 0, "owned_by": "ssewire"} for n in names]})  # fmt: skip

    async def health(request: web.Request) -> web.Response:
        state: State = app[STATE]  # type: ignore[assignment]
        return web.json_response(state.health())

    if prometheus_registry is not None or metrics_text is not None:
        import prometheus_client

        async def scrape(request: web.Request) -> web.Response:
            if metrics_text is not None:
                body = await metrics_text()
            else:
                body = prometheus_client.generate_latest(prometheus_registry)
            return web.Response(body=body, headers={"content-type": prometheus_client.CONTENT_TYPE_LATEST})

        app.router.add_route("GET", "/metrics", scrape)
    app.router.add_route("GET", "/v1/models", models)
    app.router.add_route("GET", "/health", health)
    app.router.add_route("POST", r"/{path:[\s\S]*}", handle)  # every path: the handler routes

    async def close_store(app: web.Application) -> None:
        await app[STATE].close()  # type: ignore[attr-defined]

    app.on_cleanup.append(close_store)
    return app
