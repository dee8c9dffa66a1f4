"""OpenTelemetry metering of ``ssewire.gateway`` by the GenAI semantic conventions
(``pip install 'ssewire[otel]'``).

Per request the gateway records:

- ``gen_ai.client.operation.duration`` (s): the whole request, with ``error.type`` when it
  failed (the upstream's error code, or the HTTP status the client got);
- ``gen_ai.client.token.usage`` ({token}): input and output tokens (``gen_ai.token.type``),
  in the one usage shape of every provider (``s.usage``: input with cached tokens, output
  with reasoning);
- ``gen_ai.server.time_to_first_token`` and ``gen_ai.server.time_per_output_token`` (s): from
  the stream's ``timing``;

with ``gen_ai.operation.name`` (``chat``), ``gen_ai.provider.name`` (the upstream's:
``openai``, ``anthropic``, ``gcp.gemini``, ``aws.bedrock``), ``gen_ai.request.model`` and
``gen_ai.response.model``, and ``ssewire.key.name`` (the name of the virtual key the request
was made with, API.md section 15: never the key); and a client span per request with the same attributes and the
token counts. :func:`configure` builds the providers the command line uses: a Prometheus
reader for ``/metrics`` when asked, and OTLP exporters when the standard ``OTEL_*`` variables
name an endpoint.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, List, Optional, Tuple

from ssewire import _core

__all__ = ["GatewayMetrics", "configure"]

#: ``gen_ai.provider.name`` by dialect (the registry's column).
PROVIDERS = {spec["name"]: spec["otel_provider"] for spec in _core.DIALECTS}


class GatewayMetrics:
    """Records one request's metrics and span (``record``), from the gateway's log record."""

    def __init__(self, meter_provider: Any = None, tracer_provider: Any = None) -> None:
        from opentelemetry import metrics, trace

        version = _core.__version__
        #: The providers in use (``force_flush()`` them to export now).
        self.meter_provider = meter_provider or metrics.get_meter_provider()
        self.tracer_provider = tracer_provider or trace.get_tracer_provider()
        meter = self.meter_provider.get_meter("ssewire.gateway", version)
        self._tracer = self.tracer_provider.get_tracer("ssewire.gateway", version)
        self._duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration."
        )
        self._tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Number of input and output tokens used."
        )
        self._ttft = meter.create_histogram(
            "gen_ai.server.time_to_first_token", unit="s", description="Time to generate first token."
        )
        self._tpot = meter.create_histogram(
            "gen_ai.server.time_per_output_token",
            unit="s",
            description="Time per output token after the first.",
        )

    @staticmethod
    def attributes(entry: Dict[str, Any]) -> Tuple[Dict[str, Any], Optional[str]]:
        """A record's GenAI attributes, and its ``error.type`` (None when it succeeded)."""
        dialect = entry.get("dialect") or entry.get("client_dialect") or "chat"
        attrs: Dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": PROVIDERS.get(dialect, dialect),
        }
        if isinstance(entry.get("request_model"), str):
            attrs["gen_ai.request.model"] = entry["request_model"]
        if isinstance(entry.get("model"), str):
            attrs["gen_ai.response.model"] = entry["model"]
        if isinstance(entry.get("key"), str):  # the virtual key's name (``[keys]``), never the key
            attrs["ssewire.key.name"] = entry["key"]
        error = entry.get("error")
        status = entry.get("status")
        if isinstance(error, dict):
            kind = error.get("code")
            return attrs, str(kind) if kind else (str(status) if status and status >= 400 else "stream_error")
        if isinstance(status, int) and status >= 400:
            return attrs, str(status)
        return attrs, None

    def record(self, entry: Dict[str, Any], elapsed: Optional[float]) -> None:
        """One request: its log record, and how long it took (seconds)."""
        attrs, error = self.attributes(entry)
        timed = dict(attrs, **({"error.type": error} if error else {}))
        if elapsed is not None:
            self._duration.record(elapsed, timed)
        tokens = entry.get("tokens") or {}
        for kind, key in (("input", "input_tokens"), ("output", "output_tokens")):
            if isinstance(tokens.get(key), int):
                self._tokens.record(tokens[key], dict(attrs, **{"gen_ai.token.type": kind}))
        timing = entry.get("timing") or {}
        if isinstance(timing.get("time_to_first_output"), float):
            self._ttft.record(timing["time_to_first_output"], attrs)
        if isinstance(timing.get("time_per_output_chunk"), float):
            self._tpot.record(timing["time_per_output_chunk"], attrs)
        end = time.time_ns()
        start = end - int((elapsed or 0.0) * 1e9)
        from opentelemetry.trace import SpanKind, Status, StatusCode

        name = f"chat {attrs.get('gen_ai.request.model', '')}".strip()
        span = self._tracer.start_span(name, kind=SpanKind.CLIENT, start_time=start, attributes=timed)
        for kind, key in (("input", "input_tokens"), ("output", "output_tokens")):
            if isinstance(tokens.get(key), int):
                span.set_attribute(f"gen_ai.usage.{kind}_tokens", tokens[key])
        if error:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end(end_time=end)


def configure(prometheus: bool = False, instance: Optional[str] = None) -> Tuple[GatewayMetrics, Any]:
    """The metrics of the command line: a ``MeterProvider`` with a Prometheus reader (when
    ``prometheus``: the gateway serves ``/metrics``) and an OTLP exporter when
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``) is set, its
    other settings from the standard ``OTEL_*`` variables. Returns the metrics and the
    Prometheus registry to scrape (None without one). ``instance``: the process's
    ``service.instance.id`` (a gateway's workers each have their own)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.resources import Resource

    readers: List[Any] = []
    registry = None
    if prometheus:
        import prometheus_client
        from opentelemetry.exporter.prometheus import PrometheusMetricReader

        registry = prometheus_client.REGISTRY
        readers.append(PrometheusMetricReader())
    tracer_provider = None
    resource = Resource.create({"service.instance.id": instance} if instance else {})
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    if endpoint:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    provider = MeterProvider(metric_readers=readers, resource=resource)
    return GatewayMetrics(provider, tracer_provider), registry
