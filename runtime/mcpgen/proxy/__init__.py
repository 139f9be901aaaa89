"""The era bridge: serve one upstream MCP server to clients of both eras over every
transport (`Proxy`; the `mcpgen proxy` command). See docs/guide/proxy.md."""

from __future__ import annotations

from mcpgen.proxy._proxy import Proxy, UpstreamEra

__all__ = ["Proxy", "UpstreamEra"]
