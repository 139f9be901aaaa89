"""Authorization on the command line: `mcpgen login URL`, `mcpgen logout URL`, and the
`--auth` and `--header` options of the client commands.

`logout` revokes the kept refresh and access tokens at the authorization server
(RFC 7009, when its metadata names a revocation endpoint), then deletes the grants;
what could not be revoked is named on stderr, and deleted all the same.

`login` runs the OAuth flow (the browser, a loopback redirect) and keeps the grant in
a file store, by default `~/.config/mcpgen/oauth` (`$XDG_CONFIG_HOME` honoured;
`MCPGEN_OAUTH_DIR` overrides it). `--auth oauth` on a client command uses that grant,
refreshing it when it expired and logging in when there is none; `--auth bearer:TOKEN`
sends a token obtained elsewhere. `MCPGEN_OAUTH_REDIRECT=headless` replaces the
browser with `HeadlessRedirect`, for authorization servers that approve without a user
(tests, automation).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import httpx

    from mcpgen.auth._client import OAuth
    from mcpgen.auth._client_base import Revocation
    from mcpgen.auth._client_redirect import RedirectHandler
    from mcpgen.auth._storage import FileTokenStorage, Grant

__all__ = ["AuthOpt", "HeaderOpt", "http_options", "login", "logout", "token_dir"]

DIR_ENV = "MCPGEN_OAUTH_DIR"
REDIRECT_ENV = "MCPGEN_OAUTH_REDIRECT"

AuthOpt = Annotated[
    str | None,
    typer.Option(
        "--auth",
        help="For a URL: oauth (the grant `mcpgen login` kept; logs in when there is none)"
        " or bearer:TOKEN.",
    ),
]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option("--header", "-H", help="For a URL: an HTTP header 'Name: value' (repeatable)."),
]


def token_dir() -> Path:
    """Where `login` keeps grants."""
    given = os.environ.get(DIR_ENV)
    if given:
        return Path(given).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config) / "mcpgen" / "oauth"


def _storage() -> FileTokenStorage:
    from mcpgen.auth._storage import FileTokenStorage  # noqa: PLC0415 (only with --auth)

    return FileTokenStorage(token_dir())


def _redirect() -> RedirectHandler:
    from mcpgen.auth._client_redirect import (  # noqa: PLC0415 (only with --auth)
        HeadlessRedirect,
        LoopbackRedirect,
    )

    mode = os.environ.get(REDIRECT_ENV, "browser")
    if mode == "headless":
        return HeadlessRedirect()
    if mode != "browser":
        raise typer.BadParameter(f"{REDIRECT_ENV} is browser or headless, not {mode!r}")
    return LoopbackRedirect(open_url=_open_url)


def _open_url(url: str) -> None:
    import webbrowser  # noqa: PLC0415 (only for an interactive login)

    typer.echo(f"Opening the authorization page; if no browser opens, visit:\n  {url}", err=True)
    webbrowser.open(url)


def _oauth(
    client_id: str | None = None, client_secret: str | None = None, scopes: list[str] | None = None
) -> OAuth:
    from mcpgen.auth._client import OAuth  # noqa: PLC0415 (only with --auth)

    return OAuth(
        redirect=_redirect(),
        storage=_storage(),
        client_name="mcpgen",
        client_id=client_id,
        client_secret=client_secret,
        scopes=scopes or None,
    )


def http_options(
    auth: str | None, headers: list[str] | None
) -> tuple[httpx.Auth | None, dict[str, str]]:
    """What `--auth` and `--header` ask for: an httpx.Auth and extra headers."""
    extra: dict[str, str] = {}
    for header in headers or []:
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            raise typer.BadParameter(f"--header {header!r}: give 'Name: value'")
        extra[name.strip()] = value.strip()
    if auth is None:
        return None, extra
    if auth == "oauth":
        return _oauth(), extra
    scheme, sep, token = auth.partition(":")
    if scheme == "bearer" and sep and token:
        extra["Authorization"] = f"Bearer {token}"
        return None, extra
    raise typer.BadParameter(f"--auth is oauth or bearer:TOKEN, not {auth!r}")


def _describe(grant: Grant) -> str:
    parts = [f"issuer {grant.issuer}", f"resource {grant.resource}"]
    if grant.scope:
        parts.append(f"scopes {grant.scope}")
    if grant.expires_at is not None:
        parts.append(f"token valid for {max(0, round(grant.expires_at - time.time()))} s")
    if grant.refresh_token:
        parts.append("refreshable")
    return ", ".join(parts)


def login(
    url: Annotated[str, typer.Argument(help="The MCP server's URL.")],
    client_id: Annotated[
        str | None, typer.Option("--client-id", help="A pre-registered client id.")
    ] = None,
    client_secret: Annotated[
        str | None, typer.Option("--client-secret", help="Its secret, if it has one.")
    ] = None,
    scope: Annotated[
        list[str] | None, typer.Option("--scope", help="A scope to ask for (repeatable).")
    ] = None,
) -> None:
    """Sign in to a protected server (OAuth in the browser); later commands use the grant
    with --auth oauth."""
    from mcpgen.auth._discovery import AuthorizationError  # noqa: PLC0415 (as above)

    words = [s for given in scope or [] for s in given.split()]
    auth = _oauth(client_id, client_secret, words)
    try:
        grant = asyncio.run(auth.login(url))
    except (AuthorizationError, OSError, TimeoutError) as exc:
        typer.echo(f"error: login failed: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"logged in to {url}: {_describe(grant)}")


def logout(url: Annotated[str, typer.Argument(help="The MCP server's URL.")]) -> None:
    """Sign out of a server: revoke the kept tokens at the authorization server (where
    it offers revocation) and forget the grants."""
    ended = asyncio.run(_oauth().logout(url))
    if not ended:
        typer.echo(f"not logged in to {url}", err=True)
        raise typer.Exit(1)
    for revocation in ended:
        _report(revocation)
    issuers = ", ".join(r.issuer for r in ended)
    typer.echo(f"logged out of {url} ({issuers})")


def _report(revocation: Revocation) -> None:
    """Say on stderr what was not revoked: those tokens stay valid until they expire."""
    issuer = revocation.issuer
    if not revocation.offered:
        typer.echo(
            f"note: {issuer} offers no token revocation; the tokens were only deleted here"
            " and stay valid until they expire",
            err=True,
        )
    for kind, why in revocation.failed.items():
        typer.echo(
            f"warning: could not revoke the {kind.replace('_', ' ')} at {issuer} ({why});"
            " deleted here, it stays valid until it expires",
            err=True,
        )
