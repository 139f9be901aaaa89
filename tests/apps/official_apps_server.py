"""An MCP App served by the official Python SDK (its in-core `mcp.server.apps`), for
tests/apps/test_official_apps.py. Runs under `tests.tooling.official_python()` over stdio:

    python official_apps_server.py

`clock` is linked to `ui://clock/app.html` and says whether the client negotiated MCP
Apps (the SDK's own `client_supports_apps`); `tick` is app-only.
"""

from __future__ import annotations

from mcp.server.apps import Apps, ResourceCsp, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer

apps = Apps()
apps.add_html_resource(
    "ui://clock/app.html",
    "<!doctype html><p id='time'></p>",
    title="Clock",
    csp=ResourceCsp(connect_domains=["https://time.example"]),
    prefers_border=False,
)


@apps.tool(resource_uri="ui://clock/app.html", description="The time, as an app")
def clock(ctx: Context) -> str:
    return "apps" if client_supports_apps(ctx) else "text only"


@apps.tool(resource_uri="ui://clock/app.html", visibility=["app"])
def tick() -> str:
    return "tick"


server = MCPServer("official-apps", extensions=[apps])

if __name__ == "__main__":
    server.run()
