"""The benchmark server: the surface every server under test exposes.

    python examples/bench_server.py stdio
    python examples/bench_server.py http --host 127.0.0.1 --port 8000

Tools: echo(text) -> str, add(a, b) -> float, and tool_002 ... tool_099
(query: str, limit: int = 10): 100 tools, listed in one page. Over HTTP it runs
one uvicorn worker.

The tools never block, so they run on the event loop (`threaded=False`), as they did
before sync handlers moved to worker threads by default: the figures stay comparable
across versions, and docs/performance.md gives the worker-thread cost on its own.
"""

from __future__ import annotations

import argparse

from mcpgen import Server

server = Server("bench", "1.0.0", page_size=100)


@server.tool(threaded=False)
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool(threaded=False)
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def _make(n: int) -> None:
    def tool(query: str, limit: int = 10) -> str:
        return f"{query}:{limit}"

    tool.__doc__ = f"Benchmark tool number {n}."
    server.add_tool(tool, name=f"tool_{n:03d}", threaded=False)


for _n in range(2, 100):
    _make(_n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run()
    else:
        server.run(transport="http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
