"""The official Python SDK's client (PyPI `mcp`) with the OpenTelemetry SDK configured
in its own process, calling a stdio server inside a span of its own:

    python official_traced_client.py MODE -- SERVER COMMAND...

Runs under the interpreter of a venv holding `mcp` and `opentelemetry-sdk` (not
mcpgen). Prints one JSON list on stdout: every span this process finished.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def main() -> None:
    mode, command = sys.argv[1], sys.argv[3:]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    params = StdioServerParameters(command=command[0], args=command[1:])

    async def run() -> None:
        with trace.get_tracer("agent").start_as_current_span("agent turn"):
            async with Client(stdio_client(params, errlog=sys.stderr), mode=mode) as client:
                result = await client.call_tool("echo", {"text": "hi"})
                assert result.content[0].text == "hi", result

    anyio.run(run)
    spans: list[dict[str, Any]] = []
    for span in exporter.get_finished_spans():
        ctx = span.get_span_context()
        spans.append(
            {
                "name": span.name,
                "kind": span.kind.name,
                "trace_id": f"{ctx.trace_id:032x}",
                "span_id": f"{ctx.span_id:016x}",
                "parent_id": f"{span.parent.span_id:016x}" if span.parent else None,
                "attributes": dict(span.attributes or {}),
            }
        )
    print(json.dumps(spans))


if __name__ == "__main__":
    main()
