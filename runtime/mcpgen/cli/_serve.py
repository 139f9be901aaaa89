"""`mcpgen serve SPEC`: run a `Server` found by an import path.

SPEC is `module:attr` (`weather.app:server`), a file with an attribute
(`examples/everything.py:server`), or either without `:attr`, in which case the
module's `server`, then `mcp`, is taken. A file's own directory is importable while it
loads (as `python file.py` would have it); a module is found from the current
directory or the `--path` given (what `mcpgen install` writes, so that the server
starts whatever directory the MCP client launches it from).
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer

from mcpgen._errors import ConfigurationError
from mcpgen.cli._load import load_server, split_spec
from mcpgen.cli._serve_auth import (
    AuthOptions,
    ClientIdOpt,
    ClientSecretOpt,
    DPoPOpt,
    IntrospectionOpt,
    IssuerOpt,
    JwksOpt,
    ResourceOpt,
    ScopeOpt,
    auth_settings,
)
from mcpgen.cli._workers import REDIS_ENV, Supervisor, bind, serve_socket, share_state_keys
from mcpgen.stores import InMemoryKeyRing

__all__ = ["load_server", "serve", "split_spec"]


def serve(
    spec: Annotated[str, typer.Argument(help="module:server, or path/to/file.py:server")],
    transport: Annotated[str, typer.Option("--transport", help="stdio or http.")] = "stdio",
    host: Annotated[str, typer.Option("--host", help="HTTP: the address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP: the port.")] = 8000,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="A directory to import from (repeatable)."),
    ] = None,
    workers: Annotated[
        int, typer.Option("--workers", help="HTTP: worker processes sharing the port.")
    ] = 1,
    redis: Annotated[
        str | None,
        typer.Option("--redis", help=f"Redis URL for the shared state (or {REDIS_ENV})."),
    ] = None,
    allow_memory: Annotated[
        bool,
        typer.Option(
            "--allow-memory",
            help="Run several workers without Redis: only stateless modern requests work.",
        ),
    ] = False,
    drain_seconds: Annotated[
        float | None,
        typer.Option(
            "--drain-seconds",
            help="HTTP: on SIGTERM, how long in-flight requests and tasks may finish (default 5).",
        ),
    ] = None,
    fd: Annotated[int | None, typer.Option("--fd", hidden=True)] = None,
    ready_fd: Annotated[int | None, typer.Option("--ready-fd", hidden=True)] = None,
    auth_issuer: IssuerOpt = None,
    auth_jwks_uri: JwksOpt = None,
    auth_introspection: IntrospectionOpt = None,
    auth_client_id: ClientIdOpt = None,
    auth_client_secret: ClientSecretOpt = None,
    auth_resource: ResourceOpt = None,
    auth_scope: ScopeOpt = None,
    auth_dpop: DPoPOpt = "check",
) -> None:
    """Run the mcpgen Server SPEC names, on stdio (default) or Streamable HTTP.

    With `--workers N` (HTTP), N processes serve one port; they share legacy sessions,
    listen streams, tasks and SSE replay through Redis (`--redis URL` or MCPGEN_REDIS_URL),
    which several workers need unless `--allow-memory` is given. SIGHUP to this process
    rolls the workers one at a time (a new one starts and serves, then an old one
    drains and exits): `kill -HUP PID` after a deploy (docs/guide/deployment.md).

    SIGTERM drains: no new connections, listen and SSE streams end (clients reconnect
    elsewhere and resume), in-flight requests and tasks get `--drain-seconds` to
    finish, tasks still running then are cancelled with a status message saying why.

    With `--auth-issuer`, `--auth-resource` and `--auth-jwks-uri` (JWTs) or
    `--auth-introspection` (opaque tokens) every HTTP request needs an access token;
    every worker checks it the same way (see `mcpgen.cli._serve_auth`)."""
    if transport not in ("stdio", "http"):
        raise typer.BadParameter(f"--transport must be stdio or http, not {transport!r}")
    if workers < 1:
        raise typer.BadParameter("--workers must be at least 1")
    if drain_seconds is not None and not drain_seconds >= 0:
        raise typer.BadParameter("--drain-seconds must be 0 or more")
    if workers > 1 and transport != "http":
        raise typer.BadParameter("--workers needs --transport http")
    protection = AuthOptions(
        auth_issuer,
        auth_jwks_uri,
        auth_introspection,
        auth_client_id,
        auth_client_secret,
        auth_resource,
        auth_scope,
        auth_dpop,
    )
    auth = auth_settings(protection)
    if auth is not None and transport != "http":
        raise typer.BadParameter("the --auth-* options need --transport http")
    redis = redis or os.environ.get(REDIS_ENV) or None
    if workers > 1 and not redis and not allow_memory:
        typer.echo(
            f"error: --workers {workers} needs shared state: give --redis URL (or set "
            f"{REDIS_ENV}). Without it each worker keeps its own legacy sessions, listen "
            "streams and tasks, and a request routed to another worker fails. "
            "--allow-memory runs them anyway (fine for stateless modern requests only).",
            err=True,
        )
        raise typer.Exit(2)
    if redis:
        os.environ[REDIS_ENV] = redis  # read by the Server, in this process and its workers
    try:
        if fd is None and (redis or workers > 1):
            share_state_keys(sys.stderr)
            _say_key_id()
        server = load_server(spec, path)
    except (LookupError, ConfigurationError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    drain: dict[str, Any] = {}
    if drain_seconds is not None:
        drain["shutdown_grace_seconds"] = drain_seconds
    if fd is not None:
        serve_socket(server, fd, auth=auth, ready_fd=ready_fd, drain_seconds=drain_seconds)
    elif transport == "stdio":
        server.run()
    elif workers == 1:
        server.run(transport="http", host=host, port=port, auth=auth, **drain)
    else:
        protection.export()  # each worker builds the same settings
        _serve_workers(spec, path or [], host, port, workers, redis, drain_seconds)


def _say_key_id() -> None:
    """One line with the id of the key that seals state (a digest prefix, not the
    secret): hosts of one deployment print the same id, or their tokens do not open
    on each other (docs/guide/deployment.md, several hosts)."""
    kid = InMemoryKeyRing.from_env().ids()[0]
    sys.stderr.write(f"mcpgen: state key id {kid} (the same on every host of a deployment)\n")


def _serve_workers(
    spec: str,
    paths: list[str],
    host: str,
    port: int,
    workers: int,
    redis: str | None,
    drain_seconds: float | None,
) -> None:
    from mcpgen.transports import HttpOptions  # noqa: PLC0415 (the http extra)
    from mcpgen.transports._asgi import served_urls  # noqa: PLC0415

    try:
        sock = bind(host, port)
    except OSError as exc:
        typer.echo(f"error: cannot listen on {host}:{port}: {exc}", err=True)
        raise typer.Exit(2) from None
    argv = [sys.executable, "-m", "mcpgen.cli._worker", spec]  # without typer: lean workers
    for extra in paths:
        argv += ["--path", os.path.abspath(extra)]
    if drain_seconds is not None:
        argv += ["--drain-seconds", repr(drain_seconds)]
    drain = HttpOptions().shutdown_grace_seconds if drain_seconds is None else drain_seconds
    supervisor = Supervisor(argv, sock, workers, drain)
    sys.stderr.write(served_urls(HttpOptions(), host, sock.getsockname()[1]))
    sys.stderr.write(f"mcpgen: {workers} workers{'' if redis else ' (no shared state)'}\n")
    sys.stderr.flush()
    status = supervisor.run()
    if status:
        raise typer.Exit(status)
