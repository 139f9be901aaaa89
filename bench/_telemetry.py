"""The server the telemetry benchmarks measure, written once for ``bench/telemetry_cost.py``
and ``bench/telemetry_http.sh``: one ``echo`` tool, in the OpenTelemetry configuration
a mode names.

    python bench/_telemetry.py SERVER MODE [PORT]     (no PORT: stdio)

SERVER:
- ``mcpgen``: ``Server("bench", "1.0.0", telemetry=...)`` with ``echo(text: str) -> str``
  (``threaded=False``); ``server.run()`` or ``server.run("http", port=PORT)``.
- ``official``: the official SDK's low-level ``Server`` as
  ``bench/servers/official_lowlevel.py`` builds it, listing ``echo`` only; its
  ``OpenTelemetryMiddleware`` as shipped.
- ``official-mcpserver``: its high-level ``MCPServer`` with the one tool
  ``echo(text: str) -> str`` (``structured_output=False``), likewise.

The official servers need the SDK: run them with the benchmark venv's python
(``bench/run.sh`` makes it).

MODE (``configure``):
- ``off``: mcpgen without ``telemetry=True``; the official server with its
  ``OpenTelemetryMiddleware`` taken out of ``Server.middleware``.
- ``api``: telemetry on, no SDK provider (the API's no-op proxies); the official
  servers' default.
- ``traces``: an SDK ``TracerProvider`` (AlwaysOn) with a ``SimpleSpanProcessor`` whose
  exporter drops every span; no meter provider.
- ``sdk``: ``traces`` plus an SDK ``MeterProvider`` with an in-memory reader.
- ``sampled``: ``sdk`` with ``ParentBased(TraceIdRatioBased(0.01))`` as the sampler;
  ``traces-sampled``: ``traces`` with that sampler.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# Imports wait for the server and mode that need them: an `off` or `api` run must not
# load the OpenTelemetry SDK, and mcpgen's runs must not load the official SDK.
# ruff: noqa: PLC0415

SERVERS = ("mcpgen", "official", "official-mcpserver")
MODES = ("off", "api", "traces", "traces-sampled", "sdk", "sampled")


def configure(mode: str) -> None:
    """Set the global providers ``mode`` asks for (nothing for ``off`` and ``api``)."""
    if mode in ("off", "api"):
        return
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, TraceIdRatioBased

    class Drop(SpanExporter):
        """Records arrive and are thrown away: the cost of recording, not of exporting."""

        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    sampler = ParentBased(TraceIdRatioBased(0.01)) if mode.endswith("sampled") else ALWAYS_ON
    provider = TracerProvider(sampler=sampler)
    provider.add_span_processor(SimpleSpanProcessor(Drop()))
    trace.set_tracer_provider(provider)
    if not mode.startswith("traces"):
        metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


def _mcpgen(mode: str, port: int | None) -> None:
    from mcpgen import Server

    server = Server("bench", "1.0.0", **({"telemetry": True} if mode != "off" else {}))

    @server.tool(threaded=False)
    def echo(text: str) -> str:
        return text

    if port is None:
        server.run()
    else:
        server.run("http", port=port)


def _official(kind: str, mode: str, port: int | None) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
    import _surface

    if kind == "official":
        import anyio
        import official_lowlevel

        # Only `echo`, like the mcpgen server: the tool count must not weigh on one side.
        def only_echo(*, modern: bool) -> Any:
            echo = [d for d in _surface.tool_definitions(modern=modern) if d["name"] == "echo"]
            return official_lowlevel.listing(echo)

        server = official_lowlevel.make_server(only_echo(modern=True), only_echo(modern=False))
        middleware = server.middleware

        def stdio() -> None:
            anyio.run(official_lowlevel.serve_stdio, server)

    else:
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("bench", version="1.0.0")

        @server.tool(structured_output=False)
        def echo(text: str) -> str:
            """Echo the text back."""
            return text

        middleware = server.middleware
        stdio = server.run
    if mode == "off":
        # The switch the SDK documents next to its default list: drop the entry.
        middleware[:] = [m for m in middleware if type(m).__name__ != "OpenTelemetryMiddleware"]
    if port is None:
        stdio()
    else:
        app = server.streamable_http_app(json_response=True, host="127.0.0.1")
        _surface.run_uvicorn(app, "127.0.0.1", port)


def main() -> None:
    server, mode = [*sys.argv[1:3], "", ""][:2]
    port = int(sys.argv[3]) if len(sys.argv) > 3 else None
    if server not in SERVERS or mode not in MODES:
        raise SystemExit(f"usage: _telemetry.py {'|'.join(SERVERS)} {'|'.join(MODES)} [PORT]")
    configure(mode)
    if server == "mcpgen":
        _mcpgen(mode, port)
    else:
        _official(server, mode, port)


if __name__ == "__main__":
    main()
