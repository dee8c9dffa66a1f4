"""``ssewire gateway``, the command: the configuration read and checked (``--config FILE``, or
``--upstream ...`` for one upstream), then served by one process or by ``workers`` processes
on one port, each its own event loop and listening socket (``SO_REUSEPORT``: the kernel spreads
connections over them).

Signals: SIGHUP re-reads the file in every worker (requests in flight finish as they began; a
file that does not validate is refused with a log line, and the running configuration stays);
SIGTERM (and SIGINT) stops listening at once and lets the requests in flight end, for at most
``drain_timeout`` seconds; the parent passes both to every worker and exits 0 once all have.
``GET /metrics`` answers with the sum over every worker: each worker also serves its own on a
Unix socket of the fleet's, which the one that is scraped reads."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import signal
import socket
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from aiohttp import web

from ssewire.gateway import _config as config
from ssewire.gateway._paths import UPSTREAMS
from ssewire.gateway._runner import new_loop, runner
from ssewire.gateway._server import make_app, reload

#: Workers restarted after dying on their own, at most this many a minute.
RESTARTS_PER_MINUTE = 10


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ssewire gateway",
        description="An LLM gateway: serves clients of every dialect from one upstream (--upstream) "
        "or from the upstreams and routes of a configuration file (--config).",
    )
    parser.add_argument("--config", metavar="FILE", help="the TOML configuration (API.md section 14)")
    parser.add_argument("--check", action="store_true",
                        help="with --config: validate the file, print what it would serve, exit 0 (2: invalid)")  # fmt: skip
    parser.add_argument("--upstream", help="the one upstream's base URL (http:// or https://)")
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
    parser.add_argument("--host", default=None, help="default 127.0.0.1 (or the file's)")
    parser.add_argument("--port", type=int, default=None, help="default 8080 (or the file's)")
    parser.add_argument("--max-body-size", type=int, default=None, metavar="BYTES")
    parser.add_argument("--metrics", action="store_true",
                        help="record OpenTelemetry GenAI metrics and serve them on GET /metrics "
                        "(Prometheus); OTLP export follows the OTEL_* environment variables "
                        "(pip install 'ssewire[otel]')")  # fmt: skip
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto",
                        help="the event loop (auto: uvloop where it is installed)")  # fmt: skip
    return parser


def _fail(message: str) -> int:
    print(f"ssewire gateway: {message}", file=sys.stderr, flush=True)
    return 2


def _config_of(args: argparse.Namespace) -> config.Config:
    """The configuration the arguments name; ``ConfigError`` / ``ValueError`` otherwise."""
    overrides: Dict[str, Any] = {k: v for k, v in (("host", args.host), ("port", args.port),
                                   ("max_body_size", args.max_body_size)) if v is not None}  # fmt: skip
    if args.config is not None:
        cfg = config.load(args.config)
    else:

        def env(var: Optional[str]) -> Optional[str]:
            if var is None:
                return None
            value = os.environ.get(var)
            if not value:
                raise ValueError(f"the environment variable {var} is not set")
            return value

        keys = env(args.client_keys_env)
        cfg = config.single(args.upstream, args.upstream_dialect, env(args.upstream_key_env),
                            tuple(k.strip() for k in keys.split(",") if k.strip()) if keys else (),
                            args.pass_through_auth)  # fmt: skip
    if overrides or args.metrics:
        server = dataclasses.replace(cfg.server, **overrides)
        if args.metrics:
            server = dataclasses.replace(server, metrics=True)
        cfg = dataclasses.replace(cfg, server=server)
    return cfg


def log(entry: Dict[str, Any]) -> None:
    """One JSON line on stdout, in one write: the workers share the stream, and a pipe keeps
    a write of up to 4 KiB whole."""
    entry["pid"] = os.getpid()  # which worker served it
    line = (json.dumps(entry) + "\n").encode()
    sys.stdout.flush()
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # a stdout with no file (captured)
        print(line.decode().rstrip("\n"), flush=True)
        return
    while line:
        line = line[os.write(fd, line) :]


def main(argv: Optional[List[str]] = None) -> int:
    """``ssewire gateway``: serves until SIGTERM or SIGINT; one JSON log line per request on
    stdout. Returns the exit status (2: the configuration does not validate)."""
    args = make_parser().parse_args(argv)
    if (args.config is None) == (args.upstream is None):
        return _fail("give either --config FILE or --upstream URL")
    if args.check and args.config is None:
        return _fail("--check checks a --config file")
    if args.config is not None and (args.upstream_dialect or args.upstream_key_env or args.client_keys_env
                                    or args.pass_through_auth):  # fmt: skip
        return _fail("--config excludes the --upstream options: the file says it all")
    try:
        cfg = _config_of(args)
    except (ValueError, OSError) as e:
        return _fail(str(e))
    if args.check:
        print(config.describe(cfg))
        return 0
    if cfg.server.metrics or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        try:
            import prometheus_client  # noqa: F401

            import ssewire.otel  # noqa: F401
        except ImportError as e:
            return _fail(f"metrics need pip install 'ssewire[otel]' ({e})")
    workers = cfg.server.workers or os.cpu_count() or 1
    try:
        probe = _listener(cfg.server.host, cfg.server.port, listen=workers == 1)
    except OSError as e:
        return _fail(f"cannot listen on {cfg.server.host}:{cfg.server.port}: {e}")
    port = probe.getsockname()[1]
    if workers == 1:
        return _worker(cfg, args, probe, 0, None)
    return _supervise(cfg, args, probe, port, workers)


def _listener(host: str, port: int, listen: bool) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if hasattr(socket, "SO_REUSEPORT"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    if listen:
        sock.listen(1024)
        sock.setblocking(False)
    return sock


def _supervise(cfg: config.Config, args: argparse.Namespace, probe: socket.socket, port: int, n: int) -> int:
    """The parent of ``n`` workers: starts them, passes SIGHUP and SIGTERM on, restarts one
    that died on its own, exits 0 once all have ended after SIGTERM."""
    fleet = tempfile.mkdtemp(prefix="ssewire-gateway-")
    ready_r, ready_w = os.pipe()
    pids: Dict[int, int] = {}
    stopping = [False]
    restarts: List[float] = []

    def spawn(index: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(ready_r)
            for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, signal.SIG_DFL)
            code = 1
            try:
                sock = _listener(cfg.server.host, port, listen=True)
                code = _worker(cfg, args, sock, index, (fleet, n, ready_w))
            finally:
                os._exit(code)
        pids[pid] = index

    def forward(sig: int, _frame: Any) -> None:
        if sig != signal.SIGHUP:
            stopping[0] = True
        for pid in list(pids):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    for index in range(n):
        spawn(index)
    # Every worker writes one byte once it listens; then the fleet is announced.
    got = 0
    deadline = time.monotonic() + 60
    while got < n and time.monotonic() < deadline and not stopping[0]:
        try:
            got += len(os.read(ready_r, n - got))
        except InterruptedError:
            continue
    os.set_blocking(ready_r, False)
    probe.close()
    print(
        f"ssewire gateway: serving on http://{cfg.server.host}:{port} ({n} workers)",
        file=sys.stderr,
        flush=True,
    )
    status = 0
    while pids:
        try:
            pid, code = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        index = pids.pop(pid, -1)
        if index < 0 or stopping[0]:
            continue
        now = time.monotonic()
        restarts[:] = [t for t in restarts if now - t < 60] + [now]
        print(f"ssewire gateway: worker {index} ended ({code}); restarting", file=sys.stderr, flush=True)
        if len(restarts) > RESTARTS_PER_MINUTE:
            print("ssewire gateway: workers keep dying; stopping", file=sys.stderr, flush=True)
            forward(signal.SIGTERM, None)
            status = 1
            continue
        spawn(index)
    for name in os.listdir(fleet):
        os.unlink(os.path.join(fleet, name))
    os.rmdir(fleet)
    return status


def _worker(cfg: config.Config, args: argparse.Namespace, sock: socket.socket, index: int,
            fleet: Optional[Tuple[str, int, int]]) -> int:  # fmt: skip
    loop = new_loop(args.loop)
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(_serve(cfg, args, sock, index, fleet))
    finally:
        loop.close()


async def _serve(cfg: config.Config, args: argparse.Namespace, sock: socket.socket, index: int,
                 fleet: Optional[Tuple[str, int, int]]) -> int:  # fmt: skip
    metrics, registry, text = None, None, None
    if cfg.server.metrics or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from ssewire.otel import configure

        metrics, registry = configure(
            prometheus=cfg.server.metrics, instance=f"{socket.gethostname()}-{os.getpid()}"
        )
        if registry is not None and fleet is not None:
            text = _fleet_metrics(registry, fleet[0], fleet[1], index)
    app = make_app(cfg, log, metrics=metrics, prometheus_registry=registry, metrics_text=text)
    run = runner(app, shutdown_timeout=cfg.server.drain_timeout)
    await run.setup()
    await web.SockSite(run, sock).start()
    own = None
    if text is not None and fleet is not None:
        own = _own_metrics(registry, os.path.join(fleet[0], f"w{index}.sock"))
        await own.setup()
        await web.UnixSite(own, os.path.join(fleet[0], f"w{index}.sock")).start()
    loop = asyncio.get_running_loop()
    done = asyncio.Event()

    def hangup() -> None:
        path = cfg.path
        if path is None:
            log({"event": "reload", "error": "the gateway was started with --upstream: no file to re-read"})
            return
        try:
            new = _config_of(args)
        except (ValueError, OSError) as e:
            log({"event": "reload", "worker": index, "error": str(e)})
            print(f"ssewire gateway: reload refused: {e}", file=sys.stderr, flush=True)
            return
        reload(app, new)
        log({"event": "reload", "worker": index, "ok": True})

    loop.add_signal_handler(signal.SIGHUP, hangup)
    loop.add_signal_handler(signal.SIGTERM, done.set)
    loop.add_signal_handler(signal.SIGINT, done.set)
    if fleet is not None:
        os.write(fleet[2], b"1")
        os.close(fleet[2])
    else:
        print(f"ssewire gateway: serving on http://{cfg.server.host}:{sock.getsockname()[1]}",
              file=sys.stderr, flush=True)  # fmt: skip
    await done.wait()
    # Draining: the listening socket closes now; requests in flight end (drain_timeout at most).
    await run.cleanup()
    if own is not None:
        await own.cleanup()
    return 0


def _own_metrics(registry: Any, path: str) -> web.AppRunner:
    import prometheus_client

    async def scrape(request: web.Request) -> web.Response:
        return web.Response(body=prometheus_client.generate_latest(registry))

    app = web.Application()
    app.router.add_route("GET", "/metrics", scrape)
    return web.AppRunner(app, access_log=None)


def _fleet_metrics(registry: Any, fleet: str, n: int, index: int) -> Callable[[], Any]:
    """What ``/metrics`` serves in a worker of a fleet: every worker's samples summed (a gauge
    is the largest)."""
    import aiohttp
    import prometheus_client
    from prometheus_client.parser import text_string_to_metric_families

    async def text() -> bytes:
        texts = [prometheus_client.generate_latest(registry).decode()]
        for other in range(n):
            path = os.path.join(fleet, f"w{other}.sock")
            if other == index or not os.path.exists(path):
                continue
            try:
                async with (
                    aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=path)) as s,
                    s.get("http://worker/metrics", timeout=aiohttp.ClientTimeout(total=5)) as r,
                ):
                    texts.append(await r.text())
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                continue  # a worker restarting: the sum is of those that answered
        return merge(texts, text_string_to_metric_families).encode()

    return text


def merge(texts: List[str], parse: Callable[[str], Any]) -> str:
    """Prometheus text expositions summed sample by sample (gauges: the largest)."""
    families: Dict[str, Tuple[str, str, Dict[Tuple[str, Tuple[Tuple[str, str], ...]], float]]] = {}
    for text in texts:
        for family in parse(text):
            doc, kind, samples = families.setdefault(family.name, (family.documentation, family.type, {}))
            for s in family.samples:
                key = (s.name, tuple(sorted(s.labels.items())))
                if kind == "gauge":
                    samples[key] = max(samples.get(key, s.value), s.value)
                else:
                    samples[key] = samples.get(key, 0.0) + s.value
    out: List[str] = []
    for name, (doc, kind, samples) in families.items():
        escaped = doc.replace("\\", "\\\\").replace("\n", "\\n")
        out += [f"# HELP {name} {escaped}", f"# TYPE {name} {kind}"]
        for (sample, labels), value in samples.items():
            shown = ",".join(
                '{}="{}"'.format(k, v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"'))
                for k, v in labels
            )
            out.append(f"{sample}{{{shown}}} {value!r}" if shown else f"{sample} {value!r}")
    return "\n".join(out) + "\n"
