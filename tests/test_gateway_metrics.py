"""The gateway's OpenTelemetry GenAI metrics and spans (``ssewire.otel``): a scripted load
(every client dialect against strict upstreams of three dialects, some requests failing) is read
back through the SDK's in-memory reader and span exporter, and scraped from ``/metrics`` over
loopback with Prometheus's own text parser. Nothing but 127.0.0.1 is contacted; every loop is
bounded."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

pytest.importorskip("opentelemetry.sdk")
prometheus_client = pytest.importorskip("prometheus_client")

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from ssewire.otel import GatewayMetrics  # noqa: E402
from strict_upstream import KEY, StrictUpstream  # noqa: E402
from test_examples import Gateway  # noqa: E402
from test_gateway_strict import _first_turn, _post  # noqa: E402

CLIENTS = ("chat", "messages", "responses", "gemini")
PROVIDER = {"chat": "openai", "messages": "anthropic", "gemini": "gcp.gemini"}


def _points(reader: InMemoryMetricReader) -> Dict[str, List[Any]]:
    out: Dict[str, List[Any]] = {}
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                out.setdefault(m.name, []).extend(m.data.data_points)
    return out


def test_a_scripted_load_is_metered_by_the_genai_conventions() -> None:
    reader = InMemoryMetricReader()
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    metrics = GatewayMetrics(MeterProvider(metric_readers=[reader]), tracer_provider)
    records: List[Dict[str, Any]] = []
    for upstream in PROVIDER:
        fail = ("status", 429) if upstream == "messages" else None
        with StrictUpstream(upstream, fail=fail) as up:
            gw = Gateway(up.url(), upstream_dialect=upstream, upstream_key=KEY, metrics=metrics)
            try:
                for client in CLIENTS:
                    for _ in range(2):
                        status, _, _ = _post(gw, client, _first_turn(client))
                        assert status in (200, 429)
                status, _, _ = _post(gw, "chat", b"{not json")
                assert status == 400
            finally:
                gw.close()
            records += gw.records
    assert len(records) == 3 * (len(CLIENTS) * 2 + 1)
    points = _points(reader)
    # One duration per request, by provider and error type.
    durations = points["gen_ai.client.operation.duration"]
    assert sum(p.count for p in durations) == len(records)
    failed = [r for r in records if r.get("status", 200) >= 400]
    assert sum(p.count for p in durations if "error.type" in p.attributes) == len(failed) == 4
    assert {p.attributes["gen_ai.provider.name"] for p in durations} == set(PROVIDER.values())
    assert all(p.attributes["gen_ai.operation.name"] == "chat" for p in durations)
    # Token sums equal the normalized usage of the streams, by token type.
    tokens = points["gen_ai.client.token.usage"]
    for kind, key in (("input", "input_tokens"), ("output", "output_tokens")):
        want = sum((r.get("tokens") or {}).get(key) or 0 for r in records)
        assert want > 0
        assert sum(p.sum for p in tokens if p.attributes["gen_ai.token.type"] == kind) == want
    assert all(p.attributes.get("gen_ai.request.model") == "m" for p in tokens)
    assert all("gen_ai.response.model" in p.attributes for p in tokens)
    streamed = [r for r in records if (r.get("timing") or {}).get("time_to_first_output") is not None]
    assert sum(p.count for p in points["gen_ai.server.time_to_first_token"]) == len(streamed) > 0
    assert "gen_ai.server.time_per_output_token" in points
    # One client span per request, the failed ones marked.
    finished = spans.get_finished_spans()
    assert len(finished) == len(records)
    assert sum(1 for s in finished if not s.status.is_ok) == 4


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
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    received: Dict[str, List[bytes]] = {}

    class Collector(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            received.setdefault(self.path, []).append(body)
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
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
        server.shutdown()
        thread.join(5)
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
