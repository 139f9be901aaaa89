"""One OpenTelemetry SDK provider for the whole test process (a global provider can be
set once): spans go to an in-memory exporter, metrics to an in-memory reader, and each
test starts with both empty."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.telemetry.app import span_record


class Telemetry:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.reader = InMemoryMetricReader()

    def spans(self) -> list[dict[str, Any]]:
        return [span_record(s) for s in self.exporter.get_finished_spans()]

    def metrics(self) -> dict[str, list[Any]]:
        """Histogram data points by metric name (collected now)."""
        found: dict[str, list[Any]] = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data is not None else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found.setdefault(metric.name, []).extend(metric.data.data_points)
        return found


_TELEMETRY = Telemetry()
_installed = False


@pytest.fixture
def otel() -> Telemetry:
    global _installed
    if not _installed:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_TELEMETRY.exporter))
        trace.set_tracer_provider(provider)
        metrics.set_meter_provider(MeterProvider(metric_readers=[_TELEMETRY.reader]))
        _installed = True
    _TELEMETRY.exporter.clear()
    return _TELEMETRY
