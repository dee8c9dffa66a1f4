"""The gateway's OpenTelemetry GenAI metrics and spans (``ssewire.otel``): a scripted load
(every client dialect against strict upstreams of three dialects, some requests failing) is read
back through the SDK's in-memory reader and span exporter, and scraped from ``/metrics`` over
loopback with Prometheus's own text parser. Nothing but 127.0.0.1 is contacted; every loop is
bounded."""

from __future__ import annotations

import inspect
from typing import Any, Dict, List, Tuple

import pytest

pytest.importorskip("opentelemetry.sdk")
prometheus_client = pytest.importorskip("prometheus_client")

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from ssewire.otel import GatewayMetrics  # noqa: E402
from support.dialects import read_converse  # noqa: E402
from support.gateway_app import Gateway  # noqa: E402
from support.sdk_loops import _first_turn, _post  # noqa: E402
from support.strict_upstream import KEY, StrictUpstream  # noqa: E402

CLIENTS = ("chat", "messages", "responses", "gemini")
PROVIDER = {"chat": "openai", "messages": "anthropic", "responses": "openai", "gemini": "gcp.gemini"}
#: Requests per client dialect per upstream in the scripted load: 4 upstreams x (4 clients x 12
#: + 2 malformed bodies) = 200 requests.
REPEATS = 12


def _points(reader: InMemoryMetricReader) -> Dict[str, List[Any]]:
    out: Dict[str, List[Any]] = {}
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                out.setdefault(m.name, []).extend(m.data.data_points)
    return out


class _Collector:
    """An OTLP/HTTP collector on loopback: keeps each request body by path."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        received: Dict[str, List[bytes]] = {}
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                received.setdefault(self.path, []).append(body)
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.thread.join(5)

    def histograms(self) -> Dict[str, List[Tuple[Dict[str, str], int, float]]]:
        """The last export's histogram points (cumulative): name -> (attributes, count, sum)."""
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceRequest,
        )

        out: Dict[str, List[Tuple[Dict[str, str], int, float]]] = {}
        last = ExportMetricsServiceRequest.FromString(self.received["/v1/metrics"][-1])
        for rm in last.resource_metrics:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    for p in m.histogram.data_points:
                        attrs = {a.key: a.value.string_value for a in p.attributes}
                        out.setdefault(m.name, []).append((attrs, p.count, p.sum))
        return out


def test_a_scripted_load_is_metered_by_the_genai_conventions() -> None:
    """200 streams: every client dialect against strict upstreams of the four dialects, the
    Messages upstream refusing its first request with 429 and two malformed bodies per upstream; the same meter
    provider exports to the SDK's in-memory reader, over OTLP/HTTP to a loopback collector and
    to Prometheus (scraped from the gateway's ``/metrics``), and all three agree with the
    gateway's own log records."""
    import asyncio

    import aiohttp
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
        OTLPMetricExporter,
    )
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from prometheus_client.parser import text_string_to_metric_families

    collector = _Collector()
    reader = InMemoryMetricReader()
    otlp = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=collector.url + "/v1/metrics", timeout=10),
        export_interval_millis=3_600_000,
    )
    registry = prometheus_client.CollectorRegistry()
    # An exporter older than its registry= parameter (what Python 3.9 installs) would register
    # in the process's global registry: then this load is read in memory and over OTLP only.
    own_registry = "registry" in inspect.signature(PrometheusMetricReader).parameters
    prometheus = [PrometheusMetricReader(registry=registry)] if own_registry else []
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    meter_provider = MeterProvider(metric_readers=[reader, otlp, *prometheus])
    metrics = GatewayMetrics(meter_provider, tracer_provider)
    records: List[Dict[str, Any]] = []
    scraped = ""
    try:
        for upstream in PROVIDER:
            fail = ("status", 429) if upstream == "messages" else None
            with StrictUpstream(upstream, fail=fail) as up:
                gw = Gateway(up.url(), upstream_dialect=upstream, upstream_key=KEY, metrics=metrics,
                             prometheus_registry=registry if own_registry else None)  # fmt: skip
                try:
                    for client in CLIENTS:
                        for _ in range(REPEATS):
                            status, _, _ = _post(gw, client, _first_turn(client))
                            assert status in ((200, 429) if fail else (200,)), (upstream, client)
                    for _ in range(2):
                        assert _post(gw, "chat", b"{not json")[0] == 400
                    if upstream == "gemini" and own_registry:  # the last: every request is in

                        async def scrape() -> str:
                            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as s:
                                async with s.get(gw.url("/metrics")) as r:
                                    assert r.status == 200
                                    return await r.text()

                        scraped = asyncio.run(scrape())
                finally:
                    gw.close()
                records += gw.records
        assert meter_provider.force_flush(10_000)
    finally:
        meter_provider.shutdown()
        collector.close()
    assert len(records) == 200
    failed = [r for r in records if r.get("status", 200) >= 400]
    # The Messages upstream's first answer (a 429) and the malformed bodies (400s).
    assert len(failed) == 1 + 2 * len(PROVIDER)
    streamed = [r for r in records if (r.get("timing") or {}).get("time_to_first_output") is not None]
    want_tokens = {
        kind: sum((r.get("tokens") or {}).get(key) or 0 for r in records)
        for kind, key in (("input", "input_tokens"), ("output", "output_tokens"))
    }
    assert all(want_tokens.values())
    # In memory: one duration per request, by provider and error type.
    points = _points(reader)
    durations = points["gen_ai.client.operation.duration"]
    assert sum(p.count for p in durations) == len(records)
    assert sum(p.count for p in durations if "error.type" in p.attributes) == len(failed)
    assert {p.attributes["gen_ai.provider.name"] for p in durations} == set(PROVIDER.values())
    assert all(p.attributes["gen_ai.operation.name"] == "chat" for p in durations)
    # Token sums equal the normalized usage of the streams, by token type.
    tokens = points["gen_ai.client.token.usage"]
    for kind, want in want_tokens.items():
        assert sum(p.sum for p in tokens if p.attributes["gen_ai.token.type"] == kind) == want
    assert all(p.attributes.get("gen_ai.request.model") == "m" for p in tokens)
    assert all("gen_ai.response.model" in p.attributes for p in tokens)
    assert sum(p.count for p in points["gen_ai.server.time_to_first_token"]) == len(streamed) > 0
    assert "gen_ai.server.time_per_output_token" in points
    # Over OTLP: the same counts and sums.
    exported = collector.histograms()
    assert sum(count for _, count, _ in exported["gen_ai.client.operation.duration"]) == len(records)
    assert sum(c for a, c, _ in exported["gen_ai.client.operation.duration"] if "error.type" in a) == len(
        failed
    )
    for kind, want in want_tokens.items():
        assert (
            sum(s for a, _, s in exported["gen_ai.client.token.usage"] if a["gen_ai.token.type"] == kind)
            == want
        )
    assert sum(count for _, count, _ in exported["gen_ai.server.time_to_first_token"]) == len(streamed)
    # One client span per request, the failed ones marked.
    finished = spans.get_finished_spans()
    assert len(finished) == len(records)
    assert sum(1 for x in finished if not x.status.is_ok) == len(failed)
    # Through /metrics: the same, in Prometheus's names.
    if own_registry:
        families = {f.name: f for f in text_string_to_metric_families(scraped)}
        duration = families["gen_ai_client_operation_duration_seconds"]
        assert sum(x.value for x in duration.samples if x.name.endswith("_count")) == len(records)
        usage = families["gen_ai_client_token_usage"]
        for kind, want in want_tokens.items():
            assert (
                sum(
                    x.value
                    for x in usage.samples
                    if x.name.endswith("_sum") and x.labels["gen_ai_token_type"] == kind
                )
                == want
            )


def test_metrics_are_scraped_from_the_gateway_over_loopback() -> None:
    import asyncio

    import aiohttp
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client.parser import text_string_to_metric_families

    registry = prometheus_client.REGISTRY  # where the reader registers itself
    provider = MeterProvider(metric_readers=[PrometheusMetricReader()])
    metrics = GatewayMetrics(provider)
    with StrictUpstream("chat") as up:
        gw = Gateway(up.url(), upstream_dialect="chat", upstream_key=KEY, metrics=metrics,
                     prometheus_registry=registry)  # fmt: skip
        try:
            for client in CLIENTS:
                assert _post(gw, client, _first_turn(client))[0] == 200

            async def scrape() -> str:
                async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as s:
                    async with s.get(gw.url("/metrics")) as r:
                        assert r.status == 200
                        return await r.text()

            text = asyncio.run(scrape())
        finally:
            gw.close()
            provider.shutdown()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    usage = families["gen_ai_client_token_usage"]
    counts = [s for s in usage.samples if s.name.endswith("_count")]
    assert sum(s.value for s in counts) == 2 * len(CLIENTS)  # input and output per stream
    assert {s.labels["gen_ai_provider_name"] for s in counts} == {"openai"}
    duration = families["gen_ai_client_operation_duration_seconds"]
    assert sum(s.value for s in duration.samples if s.name.endswith("_count")) == len(CLIENTS)


def test_otlp_export_follows_the_otel_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """``configure()`` with ``OTEL_EXPORTER_OTLP_ENDPOINT`` naming a loopback collector: the
    metrics and spans of real requests arrive there over OTLP/HTTP, and decode."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    collector = _Collector()
    received = collector.received
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
    from ssewire.otel import configure

    try:
        metrics, registry = configure(prometheus=False)
        assert registry is None
        with StrictUpstream("messages") as up:
            gw = Gateway(up.url(), upstream_dialect="messages", upstream_key=KEY, metrics=metrics)
            try:
                for client in ("chat", "messages"):
                    assert _post(gw, client, _first_turn(client))[0] == 200
            finally:
                gw.close()
        assert metrics.meter_provider.force_flush(10_000) and metrics.tracer_provider.force_flush(10_000)
    finally:
        metrics.meter_provider.shutdown()
        metrics.tracer_provider.shutdown()
        collector.close()
    names = set()
    for body in received["/v1/metrics"]:
        request = ExportMetricsServiceRequest.FromString(body)
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                names.update(m.name for m in sm.metrics)
    assert {"gen_ai.client.operation.duration", "gen_ai.client.token.usage"} <= names
    spans = [s for body in received["/v1/traces"] for rs in ExportTraceServiceRequest.FromString(body).resource_spans
             for ss in rs.scope_spans for s in ss.spans]  # fmt: skip
    assert len(spans) == 2 and all(s.name == "chat m" for s in spans)


def test_the_log_records_summary_is_the_results_for_every_capture() -> None:
    """The gateway's log record reads a stream through the core's summary (model, the
    provider's usage, the answer's text), one reading for every dialect: for every capture of
    every dialect it says what the final object holds, read here apart (``support.neutral``)."""
    import json

    import ssewire
    from ssewire.gateway import final_text, record
    from support import registry
    from support.neutral import neutral
    from support.paths import DATA

    checked: dict = {}
    for dialect in registry.NAMES:
        model_key, usage_key = next((s["model_key"], s["usage_key"]) for s in ssewire._core.DIALECTS
                                    if s["name"] == dialect)  # fmt: skip
        for path in sorted((DATA / dialect).glob("*.sse")):
            s = registry.STREAMS[dialect]()
            s.consume(path.read_bytes())
            s.finish()
            result = s.result()
            dumped = json.dumps(result, default=str)
            if '"refusal": "' in dumped or '"type": "refusal"' in dumped:
                continue  # neutral() counts a refusal as text; the log's text is the answer's
            text = neutral(dialect, result)["text"]
            got = record(dialect, s)
            assert (got["text_length"], got["text_start"]) == (len(text), text[:40]), path
            assert got["model"] == (result.get(model_key) if model_key else None), path
            assert got["usage"] == result.get(usage_key), path
            assert final_text(dialect, result) == text, path
            checked[dialect] = checked.get(dialect, 0) + 1
    # Converse (binary: no captures of its own): each capture translated, and cited text.
    cited = [("messageStart", {"role": "assistant"}),
             ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Paris is "}}),
             ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"citation": {
                 "title": "Paris", "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 9}},
                 "sourceContent": [{"text": "Paris is the capital"}]}}}),
             ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "the capital."}}),
             ("contentBlockStop", {"contentBlockIndex": 0}),
             ("messageStop", {"stopReason": "end_turn"}),
             ("metadata", {"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}, "metrics": {"latencyMs": 1}})]  # fmt: skip
    bodies = [b"".join(ssewire.encode_eventstream_message(
        {":event-type": kind, ":content-type": "application/json", ":message-type": "event"},
        json.dumps(payload).encode()) for kind, payload in cited)]  # fmt: skip
    for dialect in registry.NAMES:
        for path in sorted((DATA / dialect).glob("*.sse"))[::4]:
            bodies.append(ssewire.translate(path.read_bytes(), dialect, "converse"))
    for body in bodies:
        s = ssewire.ConverseStream()
        s.consume(body)
        s.finish()
        result = s.result()
        text = neutral("converse", result)["text"]
        got = record("converse", s)
        assert (got["text_length"], got["text_start"]) == (len(text), text[:40]), result
        assert got["usage"] == result.get("usage") and got["model"] is None
        assert final_text("converse", result) == text
        checked["converse"] = checked.get("converse", 0) + 1
    assert "citationsContent" in json.dumps(bodies and ssewire.accumulate(bodies[0], "converse"))
    assert record("converse", read_converse(bodies[0]))["text_start"] == "Paris is the capital."
    assert set(checked) == {*registry.NAMES, "converse"} and sum(checked.values()) >= 100, checked

