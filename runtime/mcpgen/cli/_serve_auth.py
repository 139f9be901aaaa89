"""`mcpgen serve --auth-*`: a protected server from the command line, with one worker
or several (`--workers N`, or one `mcpgen serve` per port behind a balancer, as
`examples/cluster/run.sh` runs it).

Every option has an environment variable (`MCPGEN_AUTH_ISSUER`, ...). The supervisor
of `--workers N` exports the options it was given, so each worker builds the same
`AuthSettings`; the introspection secret travels that way too, never on a command
line (give it as `MCPGEN_AUTH_CLIENT_SECRET` rather than `--auth-client-secret`,
which other users of the host can read in the process list).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from mcpgen.auth._metadata import AuthSettings

__all__ = ["AuthOptions", "auth_settings"]

_PANEL = "Authorization (HTTP)"

_ENV = {
    "issuer": "MCPGEN_AUTH_ISSUER",
    "jwks_uri": "MCPGEN_AUTH_JWKS_URI",
    "introspection": "MCPGEN_AUTH_INTROSPECTION",
    "client_id": "MCPGEN_AUTH_CLIENT_ID",
    "client_secret": "MCPGEN_AUTH_CLIENT_SECRET",
    "resource": "MCPGEN_AUTH_RESOURCE",
    "scopes": "MCPGEN_AUTH_SCOPES",
    "dpop": "MCPGEN_AUTH_DPOP",
}


def _option(name: str, text: str) -> Any:
    """The option `--auth-<name>` (underscores as dashes), read from its variable too."""
    flag = "--auth-" + ("scope" if name == "scopes" else name.replace("_", "-"))
    return typer.Option(flag, envvar=_ENV[name], help=text, rich_help_panel=_PANEL)


Text = str | None
IssuerOpt = Annotated[
    Text, _option("issuer", "The authorization server (its issuer URL): tokens are required.")
]
JwksOpt = Annotated[
    Text, _option("jwks_uri", "Its signing keys: JWT access tokens are verified locally.")
]
IntrospectionOpt = Annotated[
    Text, _option("introspection", "Its introspection endpoint (RFC 7662), for opaque tokens.")
]
ClientIdOpt = Annotated[
    Text, _option("client_id", "This server's client id at the introspection endpoint.")
]
ClientSecretOpt = Annotated[
    Text, _option("client_secret", "Its secret (prefer the environment variable).")
]
ResourceOpt = Annotated[
    Text,
    _option("resource", "This server's public URL, as clients use it (the tokens' audience)."),
]
ScopeOpt = Annotated[
    list[str] | None, _option("scopes", "A scope every request needs (repeatable).")
]
DPoPOpt = Annotated[
    str,
    _option(
        "dpop",
        "DPoP (RFC 9449): check (proofs of bound tokens checked), advertise, nonces"
        " (advertise and require server nonces) or required (bound tokens only).",
    ),
]
_DPOP_MODES = ("check", "advertise", "nonces", "required")


class AuthOptions:
    """What the `--auth-*` options said (all None: no authorization)."""

    def __init__(
        self,
        issuer: str | None = None,
        jwks_uri: str | None = None,
        introspection: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        resource: str | None = None,
        scopes: list[str] | None = None,
        dpop: str = "check",
    ) -> None:
        self.issuer, self.jwks_uri, self.introspection = issuer, jwks_uri, introspection
        self.client_id, self.client_secret = client_id, client_secret
        self.resource = resource
        self.scopes = [s for given in scopes or [] for s in given.split()]
        self.dpop = dpop

    @property
    def given(self) -> bool:
        return any((self.issuer, self.jwks_uri, self.introspection, self.resource, self.scopes))

    def export(self) -> None:
        """Into the environment, for the workers this process starts."""
        values = {
            **vars(self),
            "scopes": " ".join(self.scopes) or None,
            "dpop": None if self.dpop == "check" else self.dpop,
        }
        for name, variable in _ENV.items():
            value = values[name]
            if value:
                os.environ[variable] = value


def auth_settings(options: AuthOptions) -> AuthSettings | None:
    """The settings the options ask for; `typer.BadParameter` when they do not add up."""
    if not options.given:
        return None
    if options.dpop not in _DPOP_MODES:
        raise typer.BadParameter(f"--auth-dpop is one of {', '.join(_DPOP_MODES)}")
    if not options.issuer or not options.resource:
        raise typer.BadParameter("authorization needs --auth-issuer and --auth-resource")
    if bool(options.jwks_uri) == bool(options.introspection):
        raise typer.BadParameter("give one of --auth-jwks-uri and --auth-introspection")
    from mcpgen._errors import ConfigurationError  # noqa: PLC0415

    try:
        from mcpgen.auth import (  # noqa: PLC0415 (the auth extra, only when asked for)
            AuthSettings,
            DPoP,
            IntrospectionVerifier,
            JWTVerifier,
            TokenVerifier,
        )

        verifier: TokenVerifier
        if options.jwks_uri:
            verifier = JWTVerifier(issuer=options.issuer, jwks_uri=options.jwks_uri)
        else:
            assert options.introspection is not None
            verifier = IntrospectionVerifier(
                options.introspection,
                client_id=options.client_id,
                client_secret=options.client_secret,
                audience=options.resource,
                issuer=options.issuer,
            )
        mode = options.dpop
        dpop = None
        if mode != "check":
            dpop = DPoP(required=mode == "required", nonces=mode == "nonces")
        return AuthSettings(
            verifier,
            resource=options.resource,
            authorization_servers=[options.issuer],
            required_scopes=options.scopes,
            dpop=dpop,
        )
    except ImportError as exc:
        message = f"authorization needs: pip install 'mcpgen[auth]' ({exc})"
        raise typer.BadParameter(message) from None
    except ConfigurationError as exc:
        raise typer.BadParameter(str(exc)) from None
