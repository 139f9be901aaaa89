"""DPoP end to end: mcpgen's own client (`OAuth(dpop=True)`) gets DPoP-bound tokens
from a real authorization server (npm oidc-provider, whose DPoP feature is on) and
calls a protected mcpgen server that checks every proof, in the 2026-07-28 era and
in a legacy 2025-11-25 session (POSTs, the GET stream and the closing DELETE each
carry their own proof). The server asks for nonces, so the client's `use_dpop_nonce`
round trip runs too. Then, by hand with the very headers the client sent: a replayed
proof, a proof sent to another URL or with another method, and the bound token sent as
a bearer token are refused. A second server checks opaque tokens by introspection,
whose answer carries the binding (`cnf.jkt`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from mcpgen import Client, Context, Server
from mcpgen.auth import (
    AuthSettings,
    DPoP,
    InMemoryTokenStorage,
    IntrospectionVerifier,
    JWTVerifier,
    OAuth,
)
from mcpgen.auth._dpop import bound_key
from tests.auth.oidc import INTROSPECTOR, ScriptedLogin, provider
from tests.processes import free_port
from tests.transports.httpharness import running

pytestmark = pytest.mark.needs_node


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 90))


def build() -> Server:
    server = Server("dpop-e2e")

    @server.tool
    def whoami(ctx: Context) -> str:
        """The caller, and the key its token is bound to."""
        assert ctx.auth is not None
        return f"{ctx.auth.subject} bound={bound_key(ctx.auth.claims) is not None}"

    return server


@contextmanager
def protected(port: int, settings: AuthSettings) -> Iterator[str]:
    app = build().asgi_app(auth=settings)
    config = uvicorn.Config(app, "127.0.0.1", port, log_level="warning", loop="asyncio")
    with running(uvicorn.Server(config)):
        yield f"http://127.0.0.1:{port}/mcp"


@dataclass
class World:
    issuer: str
    jwt_url: str  # JWTs, nonces required
    opaque_url: str  # opaque tokens by introspection


@contextmanager
def world() -> Iterator[World]:
    ports = free_port(), free_port()
    jwt_url, opaque_url = (f"http://127.0.0.1:{p}/mcp" for p in ports)
    with ExitStack() as stack:
        issuer = stack.enter_context(provider(jwt_url, opaque=opaque_url))
        config = httpx.get(f"{issuer}/.well-known/openid-configuration").json()
        assert "ES256" in config["dpop_signing_alg_values_supported"]
        jwts = AuthSettings(
            JWTVerifier(issuer=issuer, jwks_uri=config["jwks_uri"]),
            resource=jwt_url,
            authorization_servers=[issuer],
            scopes_supported=["mcp:tools"],
            dpop=DPoP(nonces=True, algorithms=["ES256"]),
        )
        opaque = AuthSettings(
            IntrospectionVerifier(
                config["introspection_endpoint"],
                client_id=INTROSPECTOR[0],
                client_secret=INTROSPECTOR[1],
            ),
            resource=opaque_url,
            authorization_servers=[issuer],
            scopes_supported=["mcp:tools"],
            dpop=DPoP(),
        )
        stack.enter_context(protected(ports[0], jwts))
        stack.enter_context(protected(ports[1], opaque))
        yield World(issuer, jwt_url, opaque_url)


class Recorder:
    """The requests the client sent and the statuses they got."""

    def __init__(self) -> None:
        self.seen: list[tuple[httpx.Request, int]] = []

    async def __call__(self, response: httpx.Response) -> None:
        self.seen.append((response.request, response.status_code))


def client_for(url: str, auth: OAuth, recorder: Recorder, era: str) -> Client:
    http = httpx.AsyncClient(auth=auth, timeout=30, event_hooks={"response": [recorder]})
    return Client.http(url, httpx_client=http, era=era, timeout=30)  # type: ignore[arg-type]


async def session(url: str, auth: OAuth, era: str) -> tuple[str, str, Recorder]:
    recorder = Recorder()
    async with client_for(url, auth, recorder, era) as client:
        result = await client.call_tool("whoami")
        text = str(result.content[0].text)  # type: ignore[union-attr]
        version = client.protocol_version
    return text, version, recorder


@pytest.mark.slow
def test_dpop_end_to_end_with_a_real_authorization_server(tmp_path: Path) -> None:
    with world() as w:
        auth = OAuth(redirect=ScriptedLogin("alice"), storage=InMemoryTokenStorage(), dpop=True)

        # 2026-07-28: the token is DPoP-bound, the first request learns the nonce.
        text, version, modern = run(session(w.jwt_url, auth, "modern"))
        assert (text, version) == ("alice bound=True", "2026-07-28")
        grant = auth.grant
        assert grant is not None and grant.token_type == "DPoP" and grant.dpop_key is not None
        statuses = [status for _, status in modern.seen]
        assert 401 in statuses and statuses[-1] in (200, 202, 204)
        nonce_refusals = [
            r
            for r, s in modern.seen
            if s == 401 and r.headers.get("authorization", "")[:5] == "DPoP "
        ]
        assert nonce_refusals, modern.seen  # the use_dpop_nonce round trip happened
        sent = [r for r, s in modern.seen if s == 200 and "dpop" in r.headers]
        assert sent and all(r.headers["authorization"].startswith("DPoP ") for r in sent)

        # A legacy 2025-11-25 session: initialize, the GET stream, the call, DELETE.
        text, version, legacy = run(session(w.jwt_url, auth, "legacy"))
        assert (text, version) == ("alice bound=True", "2025-11-25")
        methods = {r.method for r, s in legacy.seen if s < 300}
        assert "POST" in methods and "DELETE" in methods, legacy.seen
        proofs = [r.headers["dpop"] for r, _ in legacy.seen if "dpop" in r.headers]
        assert len(proofs) == len(set(proofs))  # a fresh proof for every request

        # By hand, with what the client sent: a replay, another URL, another method,
        # the bound token as a bearer token, and no proof at all.
        request = sent[-1]
        headers = {k: v for k, v in request.headers.items() if k not in ("content-length", "host")}
        content = request.content

        def post(url: str, changed: dict[str, str], method: str = "POST") -> httpx.Response:
            merged = {k: v for k, v in (headers | changed).items() if v}
            return httpx.request(method, url, headers=merged, content=content, timeout=10)

        replay = post(w.jwt_url, {})
        assert replay.status_code == 401 and "used before" in replay.headers["www-authenticate"]
        fresh = auth.dpop_key
        assert fresh is not None
        token = request.headers["authorization"][5:]
        elsewhere = fresh.proof("POST", w.jwt_url.replace("/mcp", "/other"), token)
        answer = post(w.jwt_url, {"dpop": elsewhere})
        assert answer.status_code == 401 and "another URL" in answer.headers["www-authenticate"]
        as_get = fresh.proof("GET", w.jwt_url, token)
        answer = post(w.jwt_url, {"dpop": as_get})
        assert "another HTTP method" in answer.headers["www-authenticate"]
        answer = post(w.jwt_url, {"authorization": f"Bearer {token}", "dpop": ""})
        assert answer.status_code == 401 and "DPoP scheme" in answer.headers["www-authenticate"]
        answer = post(w.jwt_url, {"dpop": ""})
        assert (
            answer.status_code == 401 and "proof is required" in answer.headers["www-authenticate"]
        )

        # Opaque tokens: the binding comes from the introspection answer.
        other = OAuth(redirect=ScriptedLogin("bob"), storage=InMemoryTokenStorage(), dpop=True)
        text, _, _ = run(session(w.opaque_url, other, "modern"))
        assert text == "bob bound=True"
        text, version, _ = run(session(w.opaque_url, other, "legacy"))
        assert (text, version) == ("bob bound=True", "2025-11-25")


@pytest.mark.slow
def test_without_dpop_the_same_server_takes_bearer_tokens(tmp_path: Path) -> None:
    """The server checks proofs only for bound tokens: a client without DPoP is served."""
    with world() as w:
        auth = OAuth(redirect=ScriptedLogin("carol"), storage=InMemoryTokenStorage())
        text, _, recorder = run(session(w.jwt_url, auth, "modern"))
        assert text == "carol bound=False"
        assert all("dpop" not in r.headers for r, _ in recorder.seen)
