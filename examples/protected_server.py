"""A protected MCP server: bearer tokens (JWTs) verified against an authorization
server's keys, with one tool open to every caller and one that needs a scope.

    python examples/protected_server.py --port 8000 \
        --issuer https://auth.example.com \
        --jwks-uri https://auth.example.com/jwks \
        --resource http://127.0.0.1:8000/mcp

With `--required-scope S` every request needs the scope S (and the 401 asks for it);
`--introspection-endpoint URL --client-id ID --client-secret SECRET` checks opaque tokens
by introspection (RFC 7662) at the authorization server instead of JWTs by its keys.

Tools: `whoami` returns the caller's subject; `admin_only` needs the scope `admin`
(a token without it gets 403 insufficient_scope). The protected resource metadata is
served at /.well-known/oauth-protected-resource/mcp. Needs `pip install 'mcpgen[auth,http]'`.
"""

from __future__ import annotations

import argparse

from mcpgen import Context, Server
from mcpgen.auth import AuthSettings, IntrospectionVerifier, JWTVerifier, TokenVerifier

server = Server("protected-example", "1.0.0")


@server.tool
def whoami(ctx: Context) -> str:
    """The subject (`sub`) of the caller's access token."""
    token = ctx.auth
    if token is None:  # only over stdio, which has no HTTP authorization
        return "anonymous"
    return token.subject or token.client_id or "unknown"


@server.tool(scopes=["admin"])
def admin_only() -> str:
    """Something only administrators may do."""
    return "admin access granted"


def settings(argv: list[str] | None = None) -> tuple[argparse.Namespace, AuthSettings]:
    """The command line, and the authorization settings it asks for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--issuer", required=True, help="the authorization server (iss)")
    parser.add_argument("--jwks-uri", help="where its signing keys are (JWT access tokens)")
    parser.add_argument("--resource", required=True, help="this server's URL (the audience)")
    parser.add_argument(
        "--required-scope",
        action="append",
        default=[],
        help="a scope every request needs (repeatable); named in the 401's challenge",
    )
    parser.add_argument("--leeway", type=float, default=30.0, help="clock skew allowed (s)")
    parser.add_argument(
        "--introspection-endpoint", help="check opaque tokens there instead (RFC 7662)"
    )
    parser.add_argument("--client-id", help="this server's client id for introspection")
    parser.add_argument("--client-secret", help="its secret (HTTP Basic authentication)")
    args = parser.parse_args(argv)
    verifier: TokenVerifier
    if args.introspection_endpoint:
        verifier = IntrospectionVerifier(
            args.introspection_endpoint,
            client_id=args.client_id,
            client_secret=args.client_secret,
            audience=args.resource,
            issuer=args.issuer,
        )
    elif args.jwks_uri:
        verifier = JWTVerifier(issuer=args.issuer, jwks_uri=args.jwks_uri, leeway=args.leeway)
    else:
        parser.error("give --jwks-uri (JWTs) or --introspection-endpoint (opaque tokens)")
    required = list(args.required_scope)
    auth = AuthSettings(
        verifier,
        resource=args.resource,
        authorization_servers=[args.issuer],
        required_scopes=required,
        scopes_supported=[*required, "admin"],
    )
    return args, auth


def main() -> None:
    args, auth = settings()
    server.run(transport="http", host=args.host, port=args.port, auth=auth)


if __name__ == "__main__":
    main()
