"""`mcpgen install CLIENT SPEC`: add a server to an MCP client's JSON configuration.

The entry runs this Python (its absolute path, so the right virtualenv) as
`python -m mcpgen serve SPEC` with SPEC made independent of the directory the client
starts it from: a file becomes its absolute path, a module gets `--path` with the
directory it was found from. The configuration file is read, only its `mcpServers`
entry of that name is set, and every other key is kept as it was; `--dry-run` prints
the file that would be written instead.

- claude-desktop: `claude_desktop_config.json` in `~/Library/Application Support/Claude`
  (macOS), `%APPDATA%\\Claude` (Windows), else `$XDG_CONFIG_HOME/Claude` (`~/.config`);
- claude-code: `~/.claude.json`, or `.mcp.json` with `--scope project`;
- cursor: `~/.cursor/mcp.json`, or `.cursor/mcp.json` with `--scope project`.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from mcpgen.cli._serve import load_server, split_spec

__all__ = ["config_path", "entry", "install", "merged"]

CLIENTS = ("claude-desktop", "claude-code", "cursor")


def config_path(client: str, scope: str, home: Path, cwd: Path) -> Path:
    """Where `client` keeps its MCP servers for `scope` (user or project)."""
    if client == "claude-desktop":
        if scope != "user":
            raise typer.BadParameter("Claude Desktop has one configuration: --scope user")
        if sys.platform == "darwin":
            base = home / "Library" / "Application Support"
        elif sys.platform == "win32":
            base = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
        else:
            base = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
        return base / "Claude" / "claude_desktop_config.json"
    if client == "claude-code":
        return home / ".claude.json" if scope == "user" else cwd / ".mcp.json"
    return (home if scope == "user" else cwd) / ".cursor" / "mcp.json"


def entry(client: str, spec: str, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """The `mcpServers` value that starts SPEC with this Python, from any directory."""
    where, attr = split_spec(spec)
    args = ["-m", "mcpgen", "serve"]
    if where.endswith(".py") or "/" in where or os.sep in where:
        args.append(str((cwd / where).resolve()) + (f":{attr}" if attr else ""))
    else:
        args += [spec, "--path", str(cwd.resolve())]
    value: dict[str, Any] = {"command": os.path.abspath(sys.executable), "args": args}
    if client == "claude-code":
        value = {"type": "stdio", **value}
    if env:
        value["env"] = env
    return value


def merged(current: str | None, name: str, value: dict[str, Any]) -> dict[str, Any]:
    """The configuration `current` (a file's text, or None) with server `name` set."""
    data = json.loads(current) if current and current.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("the file does not hold a JSON object")
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ValueError("its mcpServers is not a JSON object")
    servers[name] = value
    return data


def _write(path: Path, text: str) -> None:
    """Replace `path` whole or not at all (a client may read it at any moment)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def install(
    client: Annotated[str, typer.Argument(help="claude-desktop, claude-code or cursor")],
    spec: Annotated[str, typer.Argument(help="module:server, or path/to/file.py:server")],
    name: Annotated[
        str | None, typer.Option("--name", help="The entry's name (default: the server's).")
    ] = None,
    env: Annotated[
        list[str] | None, typer.Option("--env", help="KEY=VALUE for the server (repeatable).")
    ] = None,
    scope: Annotated[
        str, typer.Option("--scope", help="user, or project (claude-code, cursor).")
    ] = "user",
    config: Annotated[
        Path | None, typer.Option("--config", help="The configuration file to edit instead.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the resulting file; write nothing.")
    ] = False,
) -> None:
    """Add SPEC's server to an MCP client's configuration (run with this Python)."""
    if client not in CLIENTS:
        raise typer.BadParameter(f"the client must be one of {', '.join(CLIENTS)}, not {client!r}")
    if scope not in ("user", "project"):
        raise typer.BadParameter(f"--scope must be user or project, not {scope!r}")
    variables = {}
    for pair in env or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--env {pair!r}: give KEY=VALUE")
        variables[key] = value
    cwd = Path.cwd()
    try:  # the server must load here, or the client would only show it failing
        server = load_server(spec)
    except LookupError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    path = config or config_path(client, scope, Path.home(), cwd)
    key = name or server.info.name
    try:
        current = path.read_text(encoding="utf-8") if path.exists() else None
        data = merged(current, key, entry(client, spec, variables, cwd))
    except (OSError, ValueError) as exc:
        typer.echo(f"error: cannot update {path}: {exc}", err=True)
        raise typer.Exit(2) from None
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if dry_run:
        typer.echo(text, nl=False)
        typer.echo(f"(dry run: {path} not written)", err=True)
        return
    _write(path, text)
    typer.echo(f"{key}: added to {path}; restart {client} to load it", err=True)
