"""The server the telemetry tests talk to; run as a script it serves stdio (or HTTP)
with its spans and metrics exported to a file, one JSON object a line.

    python app.py SPANS_FILE [--http PORT]
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace

from mcpgen import Context, InputRequired, Server, elicit_form

FORM = {"type": "object", "properties": {"sure": {"type": "boolean"}}}


def build(**options: Any) -> Server:
    server = Server("otel-test", "1.0.0", **options)

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    def boom(secret: str) -> str:
        raise RuntimeError("kaboom")

    @server.tool
    def confirm(ctx: Context, action: str) -> Any:
        answer = ctx.input("ok")
        if answer is None:
            return InputRequired({"ok": elicit_form(f"Really {action}?", FORM)}, state=1)
        return f"{answer.action}:{action}"

    @server.tool
    async def nested(text: str) -> str:
        with trace.get_tracer("app").start_as_current_span("inner work"):
            await asyncio.sleep(0)
        return text

    @server.tool
    def nested_sync(text: str) -> str:  # in a worker thread (the default for sync tools)
        with trace.get_tracer("app").start_as_current_span("inner work"):
            return text

    @server.tool(task="optional")
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "done"

    @server.resource("mem://readme", mime_type="text/plain")
    def readme() -> str:
        return "read me"

    @server.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


def span_record(span: Any) -> dict[str, Any]:
    """What the tests read of a finished span (SDK `ReadableSpan`)."""
    ctx = span.get_span_context()
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": f"{ctx.trace_id:032x}",
        "span_id": f"{ctx.span_id:016x}",
        "parent_id": f"{span.parent.span_id:016x}" if span.parent is not None else None,
        "attributes": dict(span.attributes or {}),
        "status": span.status.status_code.name,
        "links": [
            {"span_id": f"{link.context.span_id:016x}", "attributes": dict(link.attributes or {})}
            for link in span.links
        ],
    }


def _file_exporter(path: Path) -> Any:
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class FileExporter(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            with path.open("a") as out:
                for span in spans:
                    out.write(json.dumps(span_record(span)) + "\n")
            return SpanExportResult.SUCCESS

    return FileExporter()


def main(argv: list[str]) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_file_exporter(Path(argv[0]))))
    trace.set_tracer_provider(provider)
    server = build(telemetry=True)
    if len(argv) > 2 and argv[1] == "--http":
        server.run("http", port=int(argv[2]))
    else:
        server.run()


if __name__ == "__main__":
    main(sys.argv[1:])
