"""A server whose tools report what `ctx` tells them (run as a subprocess for stdio,
under uvicorn for HTTP and HTTP+SSE, in memory elsewhere)."""

from __future__ import annotations

import asyncio
import json

import msgspec

from mcpgen import Context, Server


def build() -> Server:
    server = Server("context-test", "1.0")

    @server.resource("memo://greeting", mime_type="text/plain")
    def greeting() -> str:
        return "hello from a resource"

    @server.resource_template("memo://user/{name}")
    async def user(name: str, ctx: Context) -> str:
        return f"user {name} (read during {ctx.method})"

    @server.tool
    def who(ctx: Context) -> str:
        info = ctx.client_info
        return json.dumps(
            {
                "request": None if ctx.request is None else msgspec.to_builtins(ctx.request),
                "session_id": ctx.session_id,
                "era": ctx.era,
                "client": None if info is None else info.name,
                "auth": None if ctx.auth is None else ctx.auth.subject,
            }
        )

    @server.tool
    async def read_own(ctx: Context, uri: str) -> str:
        contents = await ctx.read_resource(uri)
        return " | ".join(getattr(c, "text", "") for c in contents)

    @server.tool(task="optional")
    async def who_later(ctx: Context) -> str:
        await asyncio.sleep(0)
        request = ctx.request
        return json.dumps(
            {"task": ctx.task_id is not None, "path": None if request is None else request.path}
        )

    return server


server = build()

if __name__ == "__main__":
    server.run()
