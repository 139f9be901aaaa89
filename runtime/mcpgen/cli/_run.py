"""What the client commands share: reading TARGET, opening the client, running one piece
of work against it, mapping failures to exit codes, and printing results.

Exit codes: 0 done, 1 the server answered with an error (a JSON-RPC error, a tool error),
2 the command could not run (bad arguments, no server, the connection broke).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, NamedTuple, TypeVar

import msgspec
import typer

from mcpgen import _protocol as proto
from mcpgen._errors import ClientError, ConfigurationError, McpError
from mcpgen.cli._auth import AuthOpt, HeaderOpt, http_options
from mcpgen.cli._elicit import answerer
from mcpgen.client._callbacks import ElicitationCallback, LogCallback
from mcpgen.client._client import Client, ClientOptions
from mcpgen.client._connection import Era as ClientEra
from mcpgen_types import latest as t

__all__ = [
    "AsJson",
    "Capabilities",
    "Common",
    "Era",
    "Transport",
    "Words",
    "client_command",
    "decoded_size",
    "emit_json",
    "run",
    "show_content",
    "split",
    "wire",
]

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
AsJson = Annotated[
    bool, typer.Option("--json", help="Print the result as the negotiated revision encodes it.")
]
Words = Annotated[
    list[str] | None, typer.Argument(help="URL ..., ... URL, or ... -- COMMAND ARGS...")
]
Capabilities = Annotated[
    list[str] | None,
    typer.Option(
        "--capability",
        help="A client capability to declare (repeatable): elicitation (the default: questions "
        "are asked on the terminal), sampling (declared, every request refused), roots (an "
        "empty list), or none. A server may list some tools only to capable clients.",
    ),
]
_CAPABILITIES = ("elicitation", "sampling", "roots", "none")

_SCHEMES = ("http://", "https://")
_STDIO_PROBE_SECONDS = 20.0
_ERAS: dict[str, ClientEra] = {"auto": "auto", "modern": "modern", "legacy": "legacy"}
# What the newest revision adds to every result; dropped when an older revision's type
# cannot take a result (never the case for the methods the commands call).
_MODERN_ONLY = ("resultType", "ttlMs", "cacheScope")
# A 2025-11-25 server's "open this URL first" error; its data lists the URLs.
_URL_ELICITATION_REQUIRED = -32042


def split(words: list[str]) -> tuple[str | list[str], list[str]]:
    """(URL or stdio command, the command's own arguments)."""
    argv = sys.argv
    if "--" in argv:
        command = argv[argv.index("--") + 1 :]
        if not command:
            raise typer.BadParameter("nothing after `--`: give the server command")
        own = words[: len(words) - len(command)] if words[-len(command) :] == command else words
        return command, own
    urls = [index for index, word in enumerate(words) if word.startswith(_SCHEMES)]
    if urls:
        # The server's URL comes first or last; with a URL at both ends (`read URI URL`
        # where the resource URI is an http one too), the first names the server.
        at = urls[0] if urls[0] == 0 or urls[-1] != len(words) - 1 else urls[-1]
        if at in (0, len(words) - 1):
            return words[at], [*words[:at], *words[at + 1 :]]
    raise typer.BadParameter(
        "give the server's http(s) URL first or last, or its command after `--`"
    )


def _cannot_sample(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
    raise McpError(t.INVALID_REQUEST, "the mcpgen command line has no model to sample")


def _no_roots() -> list[str]:
    return []


def callbacks(
    names: list[str] | None,
    on_elicitation: ElicitationCallback | None = None,
    on_log: LogCallback | None = None,
) -> ClientOptions:
    """The client callbacks declaring the `--capability` names (default: elicitation)."""
    chosen = set(names or ["elicitation"])
    unknown = sorted(chosen - set(_CAPABILITIES))
    if unknown:
        raise typer.BadParameter(
            f"--capability takes {', '.join(_CAPABILITIES)}, not {unknown[0]!r}"
        )
    if "none" in chosen and len(chosen) > 1:
        raise typer.BadParameter("--capability none declares nothing: give it alone")
    options: ClientOptions = {} if on_log is None else {"on_log": on_log, "log_level": "info"}
    if "elicitation" in chosen:
        options["on_elicitation"] = on_elicitation or answerer()
        options["elicitation_modes"] = ("form", "url")
    if "sampling" in chosen:
        options["on_sampling"] = _cannot_sample
    if "roots" in chosen:
        options["on_roots"] = _no_roots
    return options


def _client(
    target: str | list[str],
    era_name: str,
    transport: str,
    options: ClientOptions,
    auth: str | None,
    headers: list[str] | None,
) -> Client:
    era = _ERAS.get(era_name)
    if era is None:
        raise typer.BadParameter(f"--era must be auto, modern or legacy, not {era_name!r}")
    if transport not in ("http", "sse"):
        raise typer.BadParameter(f"--transport must be http or sse, not {transport!r}")
    pinned: ClientOptions = {**options, "era": era}
    if not isinstance(target, str):
        if auth is not None or headers:
            raise typer.BadParameter("--auth and --header need a URL (stdio has no HTTP)")
        if transport == "sse":
            raise typer.BadParameter("--transport sse needs a URL")
        # The server's start-up counts against the era probe: Python servers with heavy
        # imports take seconds, and a probe given up too soon sends `initialize` to a
        # server that has already answered `server/discover` (and then refuses it).
        stdio: ClientOptions = {**pinned, "probe_timeout": _STDIO_PROBE_SECONDS}
        return Client.stdio(target, **stdio)
    flow, extra = http_options(auth, headers)
    if transport == "sse":
        if era == "modern":
            raise typer.BadParameter("the HTTP+SSE transport speaks the legacy era only")
        return Client.sse(target, headers=extra, auth=flow, **options)
    return Client.http(target, headers=extra, auth=flow, **pinned)


def run(
    target: str | list[str],
    era: str,
    work: Callable[[Client], Awaitable[T]],
    transport: str = "http",
    on_elicitation: ElicitationCallback | None = None,
    *,
    auth: str | None = None,
    headers: list[str] | None = None,
    capabilities: list[str] | None = None,
    on_log: LogCallback | None = None,
) -> tuple[T, str]:
    """Run `work` on a connected client: (its value, the negotiated protocol version).
    `auth` and `headers`: the `--auth` and `--header` options (see `_auth`);
    `capabilities`: the `--capability` names (see `callbacks`)."""
    options = callbacks(capabilities, on_elicitation, on_log)
    client = _client(target, era, transport, options, auth, headers)

    async def main() -> tuple[T, str]:
        async with client:
            return await work(client), client.protocol_version

    try:
        return asyncio.run(main())
    except McpError as exc:
        typer.echo(f"error {exc.code}: {exc.message}", err=True)
        if exc.code == _URL_ELICITATION_REQUIRED:
            _show_urls(exc.data)
        raise typer.Exit(1) from None
    except (ClientError, OSError, TimeoutError) as exc:
        typer.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None
    except ConfigurationError as exc:  # e.g. the HTTP client without httpx
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _show_urls(data: object) -> None:
    """The URLs a -32042 error asks the user to open, then to run the command again."""
    listed = data.get("elicitations") if isinstance(data, dict) else None
    for item in listed if isinstance(listed, list) else ():
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            message = item.get("message")
            said = f"  ({message})" if isinstance(message, str) and message else ""
            typer.echo(f"open {item['url']}{said}", err=True)
    if listed:
        typer.echo("then run the command again", err=True)


def decoded_size(data: str) -> int:
    """How many bytes the base64 text `data` holds (padded or not)."""
    data = "".join(data.split())
    return len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))


def _one(value: object, module: object) -> object:
    if not isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    data = msgspec.to_builtins(value)
    older = getattr(module, type(value).__name__, None)
    if older is not None:
        try:
            return msgspec.to_builtins(msgspec.convert(data, older))
        except msgspec.ValidationError:
            pass
    if isinstance(data, dict):
        for key in _MODERN_ONLY:
            data.pop(key, None)
    return data


def wire(value: object, version: str) -> object:
    """`value` (a result typed by the newest revision, or a list of its items) as
    `version` puts it on the wire: a legacy session's result goes through that
    revision's own type, so fields it does not have (`resultType`, ...) disappear."""
    if version not in proto.LEGACY:
        return msgspec.to_builtins(value)
    module = proto.legacy_module(version)
    if isinstance(value, list):
        return [_one(item, module) for item in value]
    return _one(value, module)


def emit_json(value: object, version: str) -> None:
    typer.echo(msgspec.json.encode(wire(value, version)).decode())


def show_content(blocks: list[t.ContentBlock]) -> None:
    """Content blocks for a human: text as is, the rest as one bracketed line each."""
    for block in blocks:
        if isinstance(block, t.TextContent):
            typer.echo(block.text)
        elif isinstance(block, t.ImageContent | t.AudioContent):
            typer.echo(f"[{block.type} {block.mime_type}, {decoded_size(block.data)} bytes]")
        elif isinstance(block, t.ResourceLink):
            typer.echo(f"[link {block.name} <{block.uri}>]")
        else:
            resource = block.resource
            blob = "" if resource.blob is msgspec.UNSET else resource.blob
            shown = (
                resource.text
                if resource.text is not msgspec.UNSET
                else f"{decoded_size(blob)} bytes"
            )
            typer.echo(f"[resource {resource.uri}] {shown}")


class Common(NamedTuple):
    """The options every client command takes (`client_command`), as given."""

    era: str
    transport: str
    as_json: bool
    auth: str | None
    header: list[str] | None
    capability: list[str] | None

    def run(
        self,
        target: str | list[str],
        work: Callable[[Client], Awaitable[T]],
        on_elicitation: ElicitationCallback | None = None,
        on_log: LogCallback | None = None,
    ) -> tuple[T, str]:
        """`run` with these options (`on_log`: the server's log messages, at info)."""
        return run(
            target,
            self.era,
            work,
            self.transport,
            on_elicitation,
            auth=self.auth,
            headers=self.header,
            capabilities=self.capability,
            on_log=on_log,
        )

    def printed(self, value: object, version: str) -> bool:
        """With `--json`, print `value` as `version` puts it on the wire (True: done)."""
        if self.as_json:
            emit_json(value, version)
        return self.as_json


def client_command(body: Callable[[list[str], Common], None]) -> Callable[..., None]:
    """The typer command running `body(words, options)`: the client commands' shared
    signature (TARGET words, --era, --transport, --json, --auth, --header, --capability) under
    `body`'s name and docstring (its help)."""

    def command(
        words: Words = None,
        era: Era = "auto",
        transport: Transport = "http",
        as_json: AsJson = False,
        auth: AuthOpt = None,
        header: HeaderOpt = None,
        capability: Capabilities = None,
    ) -> None:
        body(words or [], Common(era, transport, as_json, auth, header, capability))

    # Not functools.wraps: its __wrapped__ would make typer read `body`'s signature.
    command.__name__ = command.__qualname__ = body.__name__
    command.__doc__ = body.__doc__
    command.__module__ = body.__module__
    return command
