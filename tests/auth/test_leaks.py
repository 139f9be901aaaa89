"""What a client learns when token verification goes wrong (issue 22): a generic reason,
never an address or an exception; the detail goes to the log, one line per request
(a traceback only the first time a verifier fails in a new way)."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest

from mcpgen import Server
from mcpgen.auth import AccessToken, AuthSettings, IntrospectionVerifier
from mcpgen.auth._server import AuthGate
from tests.auth.keys import JWKS_URI, RESOURCE, Jwks, ec_key, sign
from tests.auth.test_jwt import check, verifier

HUGE = 10**400


def admit(gate: AuthGate, token: str) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    headers = [(b"host", b"api.example"), (b"authorization", b"Bearer " + token.encode())]
    verdict = asyncio.run(
        gate.admit({"type": "http", "method": "POST", "path": "/mcp", "headers": headers})
    )
    assert not isinstance(verdict, AccessToken)
    return verdict


@pytest.mark.parametrize("claim", ["exp", "iat", "nbf"])
def test_a_jwt_time_claim_out_of_range_is_an_invalid_claim(claim: str) -> None:
    key = ec_key("k1")
    v = verifier(Jwks(key))
    assert check(v, sign(key, **{claim: HUGE})) == f"the token has an invalid claim ({claim})"
    assert check(v, sign(key, **{claim: -HUGE})) == f"the token has an invalid claim ({claim})"


def test_an_exp_of_10_to_the_400_costs_one_log_line_per_request_and_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = ec_key("k1")
    gate = AuthGate(AuthSettings(verifier(Jwks(key)), resource=RESOURCE), "/mcp")
    token = sign(key, exp=HUGE)
    with caplog.at_level(logging.INFO, logger="mcpgen.auth"):
        for _ in range(3):
            status, _, headers = admit(gate, token)
            assert status == 401 and b"invalid claim (exp)" in headers[0][1]
    mine = [r for r in caplog.records if r.name == "mcpgen.auth"]
    assert len(mine) == 3 and all(r.exc_info is None for r in mine)


def test_introspection_with_an_exp_out_of_range_is_refused_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def endpoint(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"active": True, "sub": "a", "exp": HUGE})

    http = httpx.AsyncClient(transport=httpx.MockTransport(endpoint))
    v = IntrospectionVerifier("https://issuer.example/introspect", http=http, check_audience=False)
    with caplog.at_level(logging.INFO, logger="mcpgen.auth"):
        assert asyncio.run(v.check("t")) == "the token has an invalid expiry"
    assert all(r.exc_info is None for r in caplog.records)


def served(gate_settings: AuthSettings, token: str) -> httpx.Response:
    """One MCP request, with `token`, to a protected app (in-process ASGI)."""
    app = Server("leaks").asgi_app(auth=gate_settings)

    async def main() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
            return await http.post("/mcp", headers=headers, content=b"{}")

    return asyncio.run(main())


def test_an_unreachable_introspection_endpoint_is_named_in_the_log_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def endpoint(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused by 10.1.2.3:8443")

    http = httpx.AsyncClient(transport=httpx.MockTransport(endpoint))
    where = "https://idp.internal.example/introspect"
    settings = AuthSettings(IntrospectionVerifier(where, http=http), resource=RESOURCE)
    with caplog.at_level(logging.WARNING):
        response = served(settings, "opaque")
    assert response.status_code in (401, 503)  # 503: no token can be judged now
    told = response.content + str(response.headers).encode()
    for leak in (b"idp.internal", b"10.1.2.3", b"refused", b"ConnectError"):
        assert leak not in told
    assert "idp.internal.example" in caplog.text and "10.1.2.3" in caplog.text


def test_jwks_down_is_named_in_the_log_only(caplog: pytest.LogCaptureFixture) -> None:
    key = ec_key("k1")
    jwks = Jwks(key)
    jwks.down = True
    gate = AuthGate(AuthSettings(verifier(jwks), resource=RESOURCE), "/mcp")
    with caplog.at_level(logging.WARNING, logger="mcpgen.auth"):
        status, body, headers = admit(gate, sign(key))
    told = body + headers[0][1]
    assert status == 401 and b"signing keys are unavailable" in told
    assert JWKS_URI.encode() not in told and b"503" not in told
    assert JWKS_URI in caplog.text


def test_a_failing_verifier_logs_a_traceback_once_then_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken:
        async def verify(self, token: str) -> AccessToken | None:
            raise OverflowError("int too large to convert to float")

    gate = AuthGate(AuthSettings(Broken(), resource=RESOURCE), "/mcp")
    with caplog.at_level(logging.ERROR, logger="mcpgen.auth"):
        for _ in range(4):
            status, body, _ = admit(gate, "tok")
            assert status == 401 and b"could not be verified" in body
            assert b"overflow" not in body.lower()
    records = [r for r in caplog.records if r.name == "mcpgen.auth"]
    assert len(records) == 4
    assert records[0].exc_info is not None
    assert all(r.exc_info is None for r in records[1:])
