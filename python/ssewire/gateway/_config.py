"""The gateway's configuration (API.md section 14): a TOML file read and checked whole before
the gateway listens, or the one upstream of the command line (section 13).

Every error names the file, the line, the key and what is wrong with its value
(``FILE:LINE: table.key: what is wrong (value)``); an unknown key is an error, never ignored.
Environment variables named by the file are read here, so a gateway never starts with a key
missing."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Tuple, Union
from urllib.parse import urlsplit

from ssewire import _core
from ssewire.gateway import _keys
from ssewire.gateway._auth import HEADER_VALUE
from ssewire.gateway._paths import RAW_PATH, SPECS, UPSTREAMS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CPython < 3.11
    import tomli as tomllib

#: The default body limit: a real multimodal request (several base64 images or a PDF).
MAX_BODY = 32 * 1024 * 1024
#: The failures ``retry.on`` may name beside HTTP statuses.
FAILURES = ("connect", "timeout", "cut")
NAME = re.compile(r"[a-z0-9_-]+\Z")


class ConfigError(ValueError):
    """A configuration that does not validate; its message is ``FILE:LINE: key: what``."""


@dataclass(frozen=True)
class Server:
    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 1
    drain_timeout: float = 30.0
    max_body_size: int = MAX_BODY
    #: The keys the gateway accepts from its clients (empty: any client).
    client_keys: Tuple[str, ...] = ()
    metrics: bool = False
    #: Where the reasoning of a translated tool call is carried (API.md sections 10 and 15):
    #: ``"ids"`` in the call's id itself (stateless), ``"store"`` in the key store under a
    #: short id, for clients that cut long ids short or rewrite them.
    carry: str = "ids"
    #: How long a carried reasoning is kept in the store, in seconds.
    carry_ttl: int = 86400


@dataclass(frozen=True)
class Upstream:
    name: str
    url: str
    #: None: the client's own dialect (``--upstream`` without ``--upstream-dialect``: relay).
    dialect: Optional[str]
    #: The gateway's keys for this upstream, used in turn (empty: none, or SigV4 for Bedrock).
    keys: Tuple[str, ...] = ()
    region: Optional[str] = None
    connect_timeout: float = 5.0
    first_byte_timeout: float = 60.0
    idle_timeout: float = 120.0
    max_connections: int = 100
    #: The client's own credential goes to an upstream of its dialect (``--pass-through-auth``).
    pass_through_auth: bool = False
    #: A key answered 429 rests (a config's upstreams; not the command line's one upstream).
    rest_keys: bool = True


@dataclass(frozen=True)
class Target:
    upstream: str
    #: The model the upstream gets (None: the client's).
    model: Optional[str] = None


@dataclass(frozen=True)
class Route:
    model: str
    targets: Tuple[Target, ...]


@dataclass(frozen=True)
class Retry:
    attempts: int = 2
    backoff: float = 0.25
    max_backoff: float = 8.0
    retry_after_max: float = 20.0
    on: FrozenSet[Union[int, str]] = frozenset((429, 500, 502, 503, 504, 529, *FAILURES))


@dataclass(frozen=True)
class Breaker:
    #: Consecutive failed tries that open it (0: no breaker).
    failures: int = 5
    cooldown: float = 30.0


@dataclass(frozen=True)
class KeysConfig:
    """``[keys]`` (API.md section 15): the virtual keys and where their counts live."""

    #: ``"memory"``, or a ``redis://`` / ``rediss://`` / ``valkey://`` URL.
    store: str = "memory"
    #: The store cannot be reached: ``"closed"`` answers 503, ``"open"`` serves.
    on_store_error: str = "closed"
    keys: Tuple[_keys.Key, ...] = ()


@dataclass(frozen=True)
class Config:
    server: Server = field(default_factory=Server)
    upstreams: Tuple[Upstream, ...] = ()
    routes: Tuple[Route, ...] = ()
    retry: Retry = field(default_factory=Retry)
    breaker: Breaker = field(default_factory=Breaker)
    #: The file it was read from (None: the command line's).
    path: Optional[str] = None
    #: ``[keys]``: virtual keys, limits and budgets (None: none).
    keys: Optional[KeysConfig] = None

    def upstream(self, name: str) -> Upstream:
        return next(u for u in self.upstreams if u.name == name)


def single(url: str, dialect: Optional[str] = None, key: Optional[str] = None,
           client_keys: Tuple[str, ...] = (), pass_through_auth: bool = False,
           timeout: float = 600.0, max_connections: int = 100, **server: Any) -> Config:  # fmt: skip
    """The command line's gateway (section 13): one upstream, one route ``*``, no retry, no
    breaker. ``ValueError`` for a bad URL, dialect or key."""
    _check_url(url)
    if dialect is not None and dialect not in UPSTREAMS:
        raise ValueError(f"unknown upstream dialect {dialect!r}")
    if key is not None and not (key and HEADER_VALUE.match(key)):
        raise ValueError("the upstream key must be visible ASCII")
    up = Upstream("upstream", url.rstrip("/"), dialect, (key,) if key is not None else (),
                  connect_timeout=timeout, first_byte_timeout=timeout, idle_timeout=timeout,
                  max_connections=max_connections, pass_through_auth=pass_through_auth,
                  rest_keys=False)  # fmt: skip
    return Config(Server(client_keys=tuple(client_keys), **server), (up,),
                  (Route("*", (Target("upstream"),)),), Retry(attempts=1), Breaker(failures=0))  # fmt: skip


def _check_url(url: str) -> None:
    target = urlsplit(url)
    if target.scheme not in ("http", "https") or not target.hostname:
        raise ValueError("the upstream must be an http:// or https:// URL")
    if target.query or target.fragment or "@" in target.netloc:
        raise ValueError("the upstream URL may hold no query, fragment or user")
    if not RAW_PATH.match(target.path):
        raise ValueError("the upstream URL's path has characters a path cannot hold")
    target.port  # noqa: B018 - raises ValueError for a port out of range


class _Lines:
    """Where each key of a TOML file is written: (table, index of an array table, key) ->
    line. tomllib keeps no positions; this reads the lines the way the file's author wrote
    them (a table header, then ``key =`` lines)."""

    KEY = re.compile(r"""^\s*([A-Za-z0-9_.-]+|"[^"]*"|'[^']*')\s*=""")
    HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.-]+)\s*\]\]?")

    def __init__(self, text: str) -> None:
        self.where: Dict[Tuple[str, int, str], int] = {}
        counts: Dict[str, int] = {}
        table, index = "", 0
        for n, line in enumerate(text.splitlines(), 1):
            m = self.HEADER.match(line)
            if m:
                table = m[2]
                if m[1] == "[[":
                    counts[table] = counts.get(table, 0) + 1
                index = counts.get(table, 1) - 1
                self.where.setdefault((table, index, ""), n)
                continue
            m = self.KEY.match(line)
            if m:
                self.where.setdefault((table, index, m[1].strip("\"'")), n)

    def line(self, table: str, index: int, key: str) -> int:
        return self.where.get((table, index, key)) or self.where.get((table, index, "")) or 1


class _Reader:
    """Reads one table of the file, checking each value; ``ConfigError`` names where."""

    def __init__(self, path: str, lines: _Lines, table: str, index: int, data: Any) -> None:
        self.path, self.lines, self.table, self.index = path, lines, table, index
        if not isinstance(data, dict):
            self.fail("", "must be a table", data)
        self.data: Dict[str, Any] = data

    def fail(self, key: str, what: str, value: Any = None) -> None:
        line = self.lines.line(self.table, self.index, key)
        name = f"{self.table}.{key}" if key else self.table
        shown = "" if value is None else f" ({_shown(value)})"
        raise ConfigError(f"{self.path}:{line}: {name}: {what}{shown}")

    def only(self, *keys: str) -> None:
        for key in self.data:
            if key not in keys:
                self.fail(key, "unknown key", key)

    def get(self, key: str, kind: Any, default: Any, check: Any = None, what: str = "") -> Any:
        if key not in self.data:
            if default is _REQUIRED:
                self.fail(key, "is required")
            return default
        value = self.data[key]
        ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
        if not ok:
            self.fail(key, f"must be {_KINDS.get(kind, 'a value of another type')}", value)
        if check is not None and not check(value):
            self.fail(key, what, value)
        return value

    def env(self, key: str, var: Any) -> str:
        if not isinstance(var, str) or not var:
            self.fail(key, "must name an environment variable", var)
        value = os.environ.get(var)
        if not value:
            self.fail(key, "the environment variable is not set", var)
        assert value is not None
        if not HEADER_VALUE.match(value):
            self.fail(key, "the environment variable holds characters no header can carry", var)
        return value


_REQUIRED = object()
_KINDS = {str: "a string", int: "an integer", (int, float): "a number", bool: "true or false",
          list: "a list", dict: "a table"}  # fmt: skip


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _positive(value: Any) -> bool:
    return bool(value > 0)


def _not_negative(value: Any) -> bool:
    return bool(value >= 0)


def _model_ok(value: str) -> bool:
    try:
        _core._model_segment(value)
    except ValueError:
        return False
    return True


def load(path: str) -> Config:
    """The configuration in the TOML file at ``path``; ``ConfigError`` when it does not
    validate (``OSError`` when it cannot be read)."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}:1: the file is not UTF-8 ({e})") from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        raise ConfigError(f"{path}:{m[1] if m else 1}: not TOML: {e}") from None
    return parse(data, path, _Lines(text))


def parse(data: Dict[str, Any], path: str = "<config>", lines: Optional[_Lines] = None) -> Config:
    """A configuration from TOML already read (``load`` reads the file); ``ConfigError`` when
    it does not validate."""
    lines = lines or _Lines("")
    _Reader(path, lines, "", 0, data)  # a table at the top
    for key in data:
        if key not in ("server", "upstream", "route", "retry", "breaker", "keys"):
            _Reader(path, lines, key, 0, {}).fail("", "unknown table", key)
    server = _server(_Reader(path, lines, "server", 0, data.get("server", {})))
    ups = data.get("upstream")
    if not isinstance(ups, list) or not ups:
        raise ConfigError(f"{path}:1: upstream: at least one [[upstream]] is required")
    upstreams: List[Upstream] = []
    for i, table in enumerate(ups):
        up = _upstream(_Reader(path, lines, "upstream", i, table))
        if any(u.name == up.name for u in upstreams):
            _Reader(path, lines, "upstream", i, table).fail("name", "names another upstream too", up.name)
        upstreams.append(up)
    routes_data = data.get("route")
    if not isinstance(routes_data, list) or not routes_data:
        raise ConfigError(f"{path}:1: route: at least one [[route]] is required")
    names = {u.name for u in upstreams}
    routes = [_route(_Reader(path, lines, "route", i, t), names) for i, t in enumerate(routes_data)]
    retry = _retry(_Reader(path, lines, "retry", 0, data.get("retry", {})))
    breaker = _breaker(_Reader(path, lines, "breaker", 0, data.get("breaker", {})))
    keys = _keys_table(path, lines, data["keys"]) if "keys" in data else None
    if server.carry == "store" and server.workers != 1 and (keys is None or keys.store == "memory"):
        _Reader(path, lines, "server", 0, data.get("server", {})).fail(
            "carry",
            '"store" with workers other than 1 needs a [keys] store = "redis://..." that every worker reads',
        )
    if keys is not None:
        if keys.store == "memory" and server.workers != 1:
            _Reader(path, lines, "keys", 0, data["keys"]).fail(
                "store",
                '"memory" is one process\'s counts: with workers other than 1 each would admit the limit '
                "(use a redis:// store)",
            )
        if server.client_keys:
            _Reader(path, lines, "server", 0, data.get("server", {})).fail(
                "client_keys_env", "and [keys] both name the clients' keys: keep one"
            )
        for i, up in enumerate(upstreams):
            if up.pass_through_auth:  # a client's key is the gateway's, never a provider's
                _Reader(path, lines, "upstream", i, ups[i]).fail(
                    "pass_through_auth", "would send a client's virtual key ([keys]) to the provider"
                )
    return Config(server, tuple(upstreams), tuple(routes), retry, breaker, path, keys)


def _keys_table(path: str, lines: _Lines, data: Any) -> KeysConfig:
    r = _Reader(path, lines, "keys", 0, data)
    r.only("store", "on_store_error", "key")
    store = r.get(
        "store", str, "memory",
        lambda v: v == "memory" or re.match(r"^(redis|rediss|valkey|valkeys)://", v) is not None,
        "must be \"memory\" or a redis:// URL",
    )  # fmt: skip
    if store != "memory":
        try:
            import redis.asyncio  # noqa: F401
        except ImportError:
            r.fail("store", "needs the redis package: pip install 'ssewire[redis]'", store)
    on_error = r.get(
        "on_store_error", str, "closed", lambda v: v in ("closed", "open"), "must be closed or open"
    )
    tables = r.data.get("key", [])
    if not isinstance(tables, list) or not tables:
        r.fail("key", "at least one [[keys.key]] is required")
    keys: List[_keys.Key] = []
    for i, table in enumerate(tables):
        k = _key(_Reader(path, lines, "keys.key", i, table))
        for other in keys:
            if other.name == k.name:
                _Reader(path, lines, "keys.key", i, table).fail("name", "names another key too", k.name)
            if other.digest == k.digest:
                _Reader(path, lines, "keys.key", i, table).fail("", "is the same key as another", k.name)
        keys.append(k)
    return KeysConfig(store, on_error, tuple(keys))


def _key(r: _Reader) -> _keys.Key:
    r.only("name", "key_env", "key_sha256", "models", "requests_per_minute", "tokens_per_minute",
           "budget_tokens", "budget_period")  # fmt: skip
    name = r.get("name", str, _REQUIRED, NAME.match, "must be [a-z0-9_-]+")
    if ("key_env" in r.data) == ("key_sha256" in r.data):
        r.fail("", "needs one of key_env and key_sha256")
    if "key_env" in r.data:
        digest = _keys.digest_of(r.env("key_env", r.data["key_env"]))
    else:
        hexed = r.get(
            "key_sha256", str, _REQUIRED, lambda v: re.match(r"^[0-9a-fA-F]{64}$", v), "must be 64 hex digits"
        )
        digest = bytes.fromhex(hexed)
    models = r.get("models", list, [])
    if not all(isinstance(m, str) and m for m in models):
        r.fail("models", "must be a list of model globs", models)
    limits = {k: r.get(k, int, None, _positive, "must be a positive integer")
              for k in ("requests_per_minute", "tokens_per_minute", "budget_tokens")}  # fmt: skip
    period = r.get("budget_period", str, "30d", lambda v: v in _keys.PERIODS, "must be 1h, 1d or 30d")
    return _keys.Key(name, digest, tuple(models), budget_period=_keys.PERIODS[period], **limits)


def _server(r: _Reader) -> Server:
    r.only("host", "port", "workers", "drain_timeout", "max_body_size", "client_keys_env", "metrics", "carry",
           "carry_ttl")  # fmt: skip
    keys: Tuple[str, ...] = ()
    if "client_keys_env" in r.data:
        value = r.env("client_keys_env", r.data["client_keys_env"])
        keys = tuple(k.strip() for k in value.split(",") if k.strip())
    return Server(
        host=r.get("host", str, "127.0.0.1", bool, "must not be empty"),
        port=r.get("port", int, 8080, lambda p: 0 <= p <= 65535, "must be a port (0-65535)"),
        workers=r.get("workers", int, 1, lambda w: 0 <= w <= 256, "must be 0 (one per CPU) to 256"),
        drain_timeout=float(
            r.get("drain_timeout", (int, float), 30.0, _not_negative, "must not be negative")
        ),
        max_body_size=r.get("max_body_size", int, MAX_BODY, _positive, "must be positive"),
        client_keys=keys,
        metrics=r.get("metrics", bool, False),
        carry=r.get("carry", str, "ids", lambda v: v in ("ids", "store"), 'must be "ids" or "store"'),
        carry_ttl=r.get("carry_ttl", int, 86400, _positive, "must be a positive number of seconds"),
    )


def _upstream(r: _Reader) -> Upstream:
    r.only("name", "url", "dialect", "keys_env", "region", "connect_timeout", "first_byte_timeout",
           "idle_timeout", "max_connections")  # fmt: skip
    name = r.get("name", str, _REQUIRED, NAME.match, "must be [a-z0-9_-]+")
    url = r.get("url", str, _REQUIRED)
    try:
        _check_url(url)
    except ValueError as e:
        r.fail("url", str(e), url)
    dialect = r.get(
        "dialect", str, _REQUIRED, lambda d: d in UPSTREAMS, f"must be one of {', '.join(UPSTREAMS)}"
    )
    keys_env = r.data.get("keys_env", [])
    if isinstance(keys_env, str):
        keys_env = [keys_env]
    if not isinstance(keys_env, list):
        r.fail("keys_env", "must be a list of environment variable names", keys_env)
    keys = tuple(r.env("keys_env", var) for var in keys_env)
    region = r.get("region", str, None, lambda v: re.match(r"^[a-z0-9-]+$", v), "must be an AWS region name")
    if region is not None and dialect in SPECS and not SPECS[dialect]["sigv4"]:
        r.fail("region", "is for an upstream whose requests are signed with SigV4 (converse) only", region)
    timeouts = {
        key: float(r.get(key, (int, float), default, _positive, "must be a positive number of seconds"))
        for key, default in (("connect_timeout", 5.0), ("first_byte_timeout", 60.0), ("idle_timeout", 120.0))
    }
    return Upstream(name, url.rstrip("/"), dialect, keys, region,
                    connect_timeout=timeouts["connect_timeout"],
                    first_byte_timeout=timeouts["first_byte_timeout"],
                    idle_timeout=timeouts["idle_timeout"],
                    max_connections=r.get("max_connections", int, 100, _positive, "must be positive"))  # fmt: skip


def _route(r: _Reader, names: set[str]) -> Route:
    r.only("model", "targets")
    model = r.get("model", str, _REQUIRED, lambda m: m.strip() != "", "must not be empty")
    targets_data = r.get("targets", list, _REQUIRED, bool, "must name at least one upstream")
    targets: List[Target] = []
    for t in targets_data:
        if isinstance(t, str):
            t = {"upstream": t}
        if not isinstance(t, dict):
            r.fail("targets", "each target is an upstream's name or {upstream, model}", t)
        unknown = [k for k in t if k not in ("upstream", "model")]
        if unknown:
            r.fail("targets", "unknown key in a target", unknown[0])
        name, model_for = t.get("upstream"), t.get("model")
        if name not in names:
            r.fail("targets", "names no upstream", name)
        if model_for is not None and not (isinstance(model_for, str) and _model_ok(model_for)):
            r.fail("targets", "a target's model must be a model name", model_for)
        targets.append(Target(name, model_for))
    return Route(model, tuple(targets))


def _retry(r: _Reader) -> Retry:
    r.only("attempts", "backoff", "max_backoff", "retry_after_max", "on")
    on = r.get("on", list, None)
    if on is not None:
        for item in on:
            ok = item in FAILURES if isinstance(item, str) else (
                isinstance(item, int) and not isinstance(item, bool) and 400 <= item <= 599)  # fmt: skip
            if not ok:
                r.fail(
                    "on",
                    f"each entry is an HTTP error status (400-599) or one of {', '.join(FAILURES)}",
                    item,
                )
    number = (int, float)
    return Retry(
        attempts=r.get("attempts", int, 2, lambda a: 1 <= a <= 100, "must be 1 to 100"),
        backoff=float(r.get("backoff", number, 0.25, _not_negative, "must not be negative")),
        max_backoff=float(r.get("max_backoff", number, 8.0, _not_negative, "must not be negative")),
        retry_after_max=float(r.get("retry_after_max", number, 20.0, _not_negative, "must not be negative")),
        **({"on": frozenset(on)} if on is not None else {}),
    )


def _breaker(r: _Reader) -> Breaker:
    r.only("failures", "cooldown")
    return Breaker(
        failures=r.get("failures", int, 5, _not_negative, "must not be negative"),
        cooldown=float(r.get("cooldown", (int, float), 30.0, _not_negative, "must not be negative")),
    )


def describe(config: Config) -> str:
    """What a configuration serves, for ``--check``."""
    s = config.server
    out = [f"listen http://{s.host}:{s.port}, workers {s.workers or os.cpu_count()}, "
           f"client keys {len(s.client_keys) or 'none (any client)'}, metrics {'on' if s.metrics else 'off'}"]  # fmt: skip
    for u in config.upstreams:
        signed = u.dialect is not None and SPECS[u.dialect]["sigv4"]
        auth = f"{len(u.keys)} key(s)" if u.keys else ("SigV4" if signed else "no key")
        out.append(f"upstream {u.name}: {u.dialect} at {u.url}, {auth}")
    for route in config.routes:
        targets = ", ".join(t.upstream + (f" as {t.model}" if t.model else "") for t in route.targets)
        out.append(f"route {route.model} -> {targets}")
    r, b = config.retry, config.breaker
    out.append(f"retry {r.attempts} attempt(s) per target on {sorted(map(str, r.on))}; "
               f"breaker {'off' if not b.failures else f'{b.failures} failures, {b.cooldown:g} s'}")  # fmt: skip
    return "\n".join(out)
