"""`mcpgen discover | tools | call | read TARGET`: a client on the command line.

TARGET is an http(s) URL, or a stdio server command after `--`:

    mcpgen tools http://127.0.0.1:8000/mcp
    mcpgen call echo '{"text": "hi"}' -- python server.py
    mcpgen read test://static-text --era legacy -- python server.py

A URL is tried as Streamable HTTP and, when its POSTs are refused, as the deprecated
HTTP+SSE transport (`--transport sse` goes there directly). Human-readable output
by default; `--json` prints the typed result as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import msgspec
import typer

from mcpgen._api_client import Client
from mcpgen._connection import Era as ClientEra
from mcpgen._errors import ClientError, McpError
from mcpgen_types import latest as t

__all__ = ["register"]

T = TypeVar("T")

Era = Annotated[
    str, typer.Option("--era", help="auto (probe), modern (2026-07-28) or legacy (initialize).")
]
Transport = Annotated[
    str,
    typer.Option(
        "--transport",
        help="For a URL: http (Streamable HTTP, then HTTP+SSE if refused) or sse (HTTP+SSE).",
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
Words = Annotated[list[str] | None, typer.Argument(help="[URL] ... or ... -- COMMAND ARGS...")]


def _split(words: list[str]) -> tuple[str | list[str], list[str]]:
    """(URL or stdio command, the command's own arguments)."""
    argv = sys.argv
    if "--" in argv:
        command = argv[argv.index("--") + 1 :]
        if not command:
            raise typer.BadParameter("nothing after `--`: give the server command")
        own = words[: len(words) - len(command)] if words[-len(command) :] == command else words
        return command, own
    if words and words[0].startswith(("http://", "https://")):
        return words[0], words[1:]
    raise typer.BadParameter("give an http(s) URL, or a server command after `--`")


_ERAS: dict[str, ClientEra] = {"auto": "auto", "modern": "modern", "legacy": "legacy"}


def _client(target: str | list[str], era_name: str, transport: str) -> Client:
    era = _ERAS.get(era_name)
    if era is None:
        raise typer.BadParameter(f"--era must be auto, modern or legacy, not {era_name!r}")
    if transport not in ("http", "sse"):
        raise typer.BadParameter(f"--transport must be http or sse, not {transport!r}")
    if transport == "sse":
        if not isinstance(target, str):
            raise typer.BadParameter("--transport sse needs a URL")
        if era == "modern":
            raise typer.BadParameter("the HTTP+SSE transport speaks the legacy era only")
        return Client.sse(target)
    if isinstance(target, str):
        return Client.http(target, era=era)
    return Client.stdio(target, era=era)


def _run(
    target: str | list[str],
    era: str,
    work: Callable[[Client], Awaitable[T]],
    transport: str = "http",
) -> T:
    client = _client(target, era, transport)

    async def main() -> T:
        async with client:
            return await work(client)

    try:
        return asyncio.run(main())
    except McpError as exc:
        typer.echo(f"error {exc.code}: {exc.message}", err=True)
        raise typer.Exit(1) from None
    except (ClientError, OSError, TimeoutError) as exc:
        typer.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None


def _json(value: Any) -> None:
    typer.echo(msgspec.json.encode(value).decode())


def _show_content(blocks: list[Any]) -> None:
    for block in blocks:
        kind = type(block).__struct_config__.tag
        if isinstance(block, t.TextContent):
            typer.echo(block.text)
        elif isinstance(block, t.ImageContent | t.AudioContent):
            typer.echo(f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes]")
        elif isinstance(block, t.ResourceLink):
            typer.echo(f"[link {block.name} <{block.uri}>]")
        else:
            resource = block.resource
            shown = (
                resource.text
                if resource.text is not msgspec.UNSET
                else f"{len(resource.blob) * 3 // 4} bytes"
            )
            typer.echo(f"[resource {resource.uri}] {shown}")


def discover(
    words: Words = None, era: Era = "auto", transport: Transport = "http", as_json: AsJson = False
) -> None:
    """Which era and version the server speaks, who it is, what it offers."""
    target, _ = _split(words or [])

    async def work(client: Client) -> dict[str, Any]:
        return {
            "era": client.era,
            "protocolVersion": client.protocol_version,
            "serverInfo": client.server_info,
            "capabilities": client.server_capabilities,
            "instructions": client.core.instructions,
        }

    info = _run(target, era, work, transport)
    if as_json:
        _json(info)
        return
    server = info["serverInfo"] or {}
    typer.echo(f"{server.get('name', '?')} {server.get('version', '')}".strip())
    typer.echo(f"era: {info['era']}, protocol {info['protocolVersion']}")
    typer.echo("capabilities: " + (", ".join(sorted(info["capabilities"])) or "none"))
    if info["instructions"]:
        typer.echo(f"instructions: {info['instructions']}")


def tools(
    words: Words = None, era: Era = "auto", transport: Transport = "http", as_json: AsJson = False
) -> None:
    """List the server's tools."""
    target, _ = _split(words or [])
    found = _run(target, era, lambda c: c.list_tools(), transport)
    if as_json:
        _json(found)
        return
    for tool in found:
        props = tool.input_schema.get("properties") or {}
        required = set(tool.input_schema.get("required") or ())
        args = ", ".join(f"{n}{'' if n in required else '?'}" for n in props)
        description = (
            "" if tool.description is msgspec.UNSET else f"  {tool.description.splitlines()[0]}"
        )
        typer.echo(f"{tool.name}({args}){description}")


def call(
    words: Words = None, era: Era = "auto", transport: Transport = "http", as_json: AsJson = False
) -> None:
    """Call TOOL with a JSON object of arguments: call [URL] TOOL ['{...}'] [-- COMMAND]."""
    target, own = _split(words or [])
    if not own:
        raise typer.BadParameter("name the tool to call")
    try:
        arguments = json.loads(own[1]) if len(own) > 1 else {}
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"the arguments are not JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise typer.BadParameter("the arguments must be a JSON object")
    result = _run(target, era, lambda c: c.call_tool(own[0], arguments), transport)
    if as_json:
        _json(result)
    else:
        _show_content(result.content)
        if result.structured_content is not msgspec.UNSET:
            typer.echo(json.dumps(result.structured_content, indent=2))
    if result.is_error is True:
        raise typer.Exit(1)


def read(
    words: Words = None, era: Era = "auto", transport: Transport = "http", as_json: AsJson = False
) -> None:
    """Read a resource: read [URL] URI [-- COMMAND]."""
    target, own = _split(words or [])
    if not own:
        raise typer.BadParameter("name the resource URI to read")
    result = _run(target, era, lambda c: c.read_resource(own[0]), transport)
    if as_json:
        _json(result)
        return
    for item in result.contents:
        if item.text is not msgspec.UNSET:
            typer.echo(item.text)
        else:
            typer.echo(
                f"[{item.uri}: {item.mime_type or 'binary'}, {len(item.blob or '') * 3 // 4} bytes]"
            )


def register(app: typer.Typer) -> None:
    """Add the client commands to a typer app (the `mcpgen` command line)."""
    for command in (discover, tools, call, read):
        app.command(context_settings={"allow_extra_args": False, "ignore_unknown_options": True})(
            command
        )
