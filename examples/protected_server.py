"""A protected MCP server: bearer tokens (JWTs) verified against an authorization
server's keys, with one tool open to every caller and one that needs a scope.

    python examples/protected_server.py --port 8000 \
        --issuer https://auth.example.com \
        --jwks-uri https://auth.example.com/jwks \
        --resource http://127.0.0.1:8000/mcp

Tools: `whoami` returns the caller's subject; `admin_only` needs the scope `admin`
(a token without it gets 403 insufficient_scope). The protected resource metadata is
served at /.well-known/oauth-protected-resource/mcp. Needs `pip install 'mcpgen[auth,http]'`.
"""

from __future__ import annotations

import argparse

from mcpgen import Context, Server
from mcpgen.auth import AuthSettings, JWTVerifier

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--issuer", required=True, help="the authorization server (iss)")
    parser.add_argument("--jwks-uri", required=True, help="where its signing keys are")
    parser.add_argument("--resource", required=True, help="this server's URL (the audience)")
    args = parser.parse_args()
    auth = AuthSettings(
        JWTVerifier(issuer=args.issuer, jwks_uri=args.jwks_uri),
        resource=args.resource,
        authorization_servers=[args.issuer],
        scopes_supported=["admin"],
    )
    server.run(transport="http", host=args.host, port=args.port, auth=auth)


if __name__ == "__main__":
    main()
