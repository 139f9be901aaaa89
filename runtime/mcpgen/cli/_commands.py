"""The client commands: `mcpgen discover | tools | call | read | app | prompts | prompt |
resources | templates TARGET`.

TARGET, last, is an http(s) URL (which may come first as well), or a stdio server
command after `--`:

    mcpgen tools http://127.0.0.1:8000/mcp
    mcpgen call get-sum '{"a": 1, "b": 2}' http://127.0.0.1:8000/mcp
    mcpgen call echo '{"text": "hi"}' -- python server.py
    mcpgen prompt greet name=Ada -- python server.py
    mcpgen read test://static-text --era legacy -- python server.py

On a URL, `--auth oauth` uses the grant `mcpgen login` kept (and logs in when there is
none), `--auth bearer:TOKEN` sends a token, `--header 'Name: value'` any header.
A URL is tried as Streamable HTTP and, when its POSTs are refused, as the deprecated
HTTP+SSE transport (`--transport sse` goes there directly). Human-readable output by
default; `--json` prints the result as the negotiated revision puts it on the wire.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import typer

from mcpgen._errors import McpError
from mcpgen.cli._progress import Watcher
from mcpgen.cli._run import Common, client_command, decoded_size, show_content, split
from mcpgen.client._apps import App, tool_app
from mcpgen.client._client import Client
from mcpgen_types import latest as t

__all__ = ["COMMANDS"]

T = TypeVar("T")


def _first_line(text: str | msgspec.UnsetType) -> str:
    return "" if text is msgspec.UNSET or not text else f"  {text.splitlines()[0]}"


def _listed(
    words: list[str], opts: Common, work: Callable[[Client], Awaitable[Sequence[T]]]
) -> Sequence[T]:
    """The items `work` lists, to print one a line; none when --json printed them."""
    target, _ = split(words)
    found, version = opts.run(target, work)
    return () if opts.printed(found, version) else found


@client_command
def discover(words: list[str], opts: Common) -> None:
    """Which era and version the server speaks, who it is, what it offers."""
    target, _ = split(words)

    async def work(client: Client) -> dict[str, Any]:
        if client.era == "modern" and client.server_info is None:
            # A pinned modern era skips the probe: ask who the server is.
            await client.discover()
        return {
            "era": client.era,
            "protocolVersion": client.protocol_version,
            "serverInfo": client.server_info,
            "capabilities": client.server_capabilities,
            "instructions": client.core.instructions,
        }

    info, version = opts.run(target, work)
    if opts.printed(info, version):
        return
    server = info["serverInfo"] or {}
    typer.echo(f"{server.get('name', '?')} {server.get('version', '')}".strip())
    typer.echo(f"era: {info['era']}, protocol {info['protocolVersion']}")
    typer.echo("capabilities: " + (", ".join(sorted(info["capabilities"])) or "none"))
    if info["instructions"]:
        typer.echo(f"instructions: {info['instructions']}")


@client_command
def tools(words: list[str], opts: Common) -> None:
    """List the server's tools."""
    for tool in _listed(words, opts, lambda c: c.list_tools()):
        props = tool.input_schema.get("properties") or {}
        required = set(tool.input_schema.get("required") or ())
        args = ", ".join(f"{n}{'' if n in required else '?'}" for n in props)
        typer.echo(f"{tool.name}({args}){_app_mark(tool)}{_first_line(tool.description)}")


def _app_mark(tool: t.Tool) -> str:
    """` [app ui://...]` for a tool linked to an MCP App (`app-only` when the model is
    not to see it)."""
    link = tool_app(tool)
    if link is None:
        return ""
    only = (
        " app-only"
        if link.visibility is not msgspec.UNSET and "model" not in link.visibility
        else ""
    )
    return f" [app{only} {link.resource_uri}]"


@client_command
def app(words: list[str], opts: Common) -> None:
    """Print a tool's MCP App (or the app at a ui:// URI), or write it to FILE:
    app [URL] TOOL|UI-URI [FILE] [-- COMMAND]."""
    target, own = split(words)
    if not own:
        raise typer.BadParameter("name the tool (or the ui:// URI) whose app to show")
    wanted = own[0]

    async def work(client: Client) -> App:
        if wanted.startswith("ui://"):
            return await client.read_app(wanted)
        tools = {tool.name: tool for tool in await client.list_tools()}
        if wanted not in tools:
            raise typer.BadParameter(f"the server has no tool {wanted!r}")
        return await client.read_app(tools[wanted])

    found, version = opts.run(target, work)
    if opts.printed(found, version):
        return
    if len(own) > 1:
        Path(own[1]).write_text(found.html, encoding="utf-8")
        typer.echo(f"{found.uri} -> {own[1]} ({len(found.html.encode())} bytes)", err=True)
    else:
        typer.echo(found.html)


def _echoed_text(blocks: list[t.ContentBlock], structured: object) -> bool:
    """Whether `structured` is an object of one string field holding what the text blocks
    say (server-filesystem's `{"content": text}`): then the text alone is shown."""
    if not isinstance(structured, dict) or len(structured) != 1:
        return False
    (value,) = structured.values()
    said = [b.text for b in blocks if isinstance(b, t.TextContent)]
    return isinstance(value, str) and bool(said) and value in (said[0], "\n".join(said))


def _repeats(block: t.ContentBlock, structured: object) -> bool:
    """Whether `block` is a text block holding the JSON of `structured`."""
    if not isinstance(block, t.TextContent):
        return False
    if block.text == structured:
        return True
    try:
        return bool(json.loads(block.text) == structured)
    except ValueError:
        return False


@client_command
def call(words: list[str], opts: Common) -> None:
    """Call TOOL with a JSON object of arguments: call TOOL ['{...}'] URL | -- COMMAND.

    A server's question (elicitation) is asked on the terminal; without one it is declined."""
    target, own = split(words)
    if not own:
        raise typer.BadParameter("name the tool to call")
    try:
        arguments = json.loads(own[1]) if len(own) > 1 else {}
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"the arguments are not JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise typer.BadParameter("the arguments must be a JSON object")
    watcher = Watcher()

    async def work(client: Client) -> t.CallToolResult:
        if client.era == "legacy" and "logging" in client.server_capabilities:
            # A legacy session's level is session-wide; a server may not take it after all.
            with contextlib.suppress(McpError):
                await client.set_log_level("info")
        try:
            return await client.call_tool(own[0], arguments, progress=watcher.progress)
        finally:
            watcher.done()

    result, version = opts.run(target, work, on_log=watcher.log)
    if not opts.printed(result, version):
        structured = result.structured_content
        if structured is msgspec.UNSET or _echoed_text(result.content, structured):
            show_content(result.content)
        else:  # a text block repeating the structured content is not shown twice
            show_content([b for b in result.content if not _repeats(b, structured)])
            typer.echo(json.dumps(structured, indent=2))
    if result.is_error is True:
        raise typer.Exit(1)


@client_command
def read(words: list[str], opts: Common) -> None:
    """Read a resource: read URI URL | -- COMMAND."""
    target, own = split(words)
    if not own:
        raise typer.BadParameter("name the resource URI to read")
    result, version = opts.run(target, lambda c: c.read_resource(own[0]))
    if opts.printed(result, version):
        return
    for item in result.contents:
        if isinstance(item, t.TextResourceContents):
            typer.echo(item.text)
        else:
            typer.echo(
                f"[{item.uri}: {item.mime_type or 'binary'}, {decoded_size(item.blob)} bytes]"
            )


@client_command
def prompts(words: list[str], opts: Common) -> None:
    """List the server's prompts and their arguments."""
    for prompt in _listed(words, opts, lambda c: c.list_prompts()):
        args = prompt.arguments if prompt.arguments is not msgspec.UNSET else []
        shown = ", ".join(f"{a.name}{'' if a.required is True else '?'}" for a in args)
        typer.echo(f"{prompt.name}({shown}){_first_line(prompt.description)}")


def _prompt_arguments(given: list[str]) -> dict[str, str]:
    if len(given) == 1 and given[0].lstrip().startswith("{"):
        try:
            parsed = json.loads(given[0])
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"the arguments are not JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise typer.BadParameter("the arguments must be a JSON object")
        return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in parsed.items()}
    arguments = {}
    for word in given:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{word!r}: give key=value pairs or one JSON object")
        arguments[key] = value
    return arguments


@client_command
def prompt(words: list[str], opts: Common) -> None:
    """Get prompt NAME: prompt NAME ['{...}' | key=value ...] URL | -- COMMAND."""
    target, own = split(words)
    if not own:
        raise typer.BadParameter("name the prompt to get")
    arguments = _prompt_arguments(own[1:])
    result, version = opts.run(target, lambda c: c.get_prompt(own[0], arguments))
    if opts.printed(result, version):
        return
    if result.description is not msgspec.UNSET and result.description:
        typer.echo(f"# {result.description}")
    for message in result.messages:
        typer.echo(f"[{message.role}]")
        show_content([message.content])


@client_command
def resources(words: list[str], opts: Common) -> None:
    """List the server's resources."""
    for resource in _listed(words, opts, lambda c: c.list_resources()):
        mime = "" if resource.mime_type is msgspec.UNSET else f" ({resource.mime_type})"
        typer.echo(f"{resource.uri}  {resource.name}{mime}{_first_line(resource.description)}")


@client_command
def templates(words: list[str], opts: Common) -> None:
    """List the server's resource templates."""
    for template in _listed(words, opts, lambda c: c.list_resource_templates()):
        line = f"{template.uri_template}  {template.name}{_first_line(template.description)}"
        typer.echo(line)


COMMANDS: tuple[Callable[..., None], ...] = (
    discover,
    tools,
    call,
    read,
    app,
    prompts,
    prompt,
    resources,
    templates,
)
