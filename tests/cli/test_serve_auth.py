"""`mcpgen serve --auth-*`: the options (or their environment variables) become the
`AuthSettings` every worker builds alike; what does not add up is a usage error, not a
traceback. (A protected cluster runs in tests/scale/test_protected_cluster.py.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer

from mcpgen.auth import DPoP, IntrospectionVerifier, JWTVerifier
from mcpgen.cli._serve_auth import _ENV, AuthOptions, auth_settings
from tests.processes import EVERYTHING

ISSUER, RESOURCE = "https://auth.example.com", "https://api.example.com/mcp"


def introspecting(scopes: list[str] | None = None, dpop: str = "check") -> AuthOptions:
    """Options for opaque tokens checked at the issuer's introspection endpoint."""
    endpoint = f"{ISSUER}/introspect"
    return AuthOptions(ISSUER, None, endpoint, "rs", "s3cret", RESOURCE, scopes, dpop)


def test_no_option_no_authorization() -> None:
    assert auth_settings(AuthOptions()) is None


def test_jwts_checked_with_the_issuers_keys() -> None:
    options = AuthOptions(ISSUER, jwks_uri=f"{ISSUER}/jwks", resource=RESOURCE, scopes=["a b", "c"])
    settings = auth_settings(options)
    assert settings is not None
    verifier = settings.verifier
    assert isinstance(verifier, JWTVerifier)
    assert verifier.issuer == ISSUER and verifier.audience == (RESOURCE,)
    assert settings.required_scopes == {"a", "b", "c"}
    assert settings.authorization_servers == (ISSUER,)
    assert settings.dpop is None  # proofs checked, DPoP not advertised


def test_opaque_tokens_by_introspection() -> None:
    settings = auth_settings(introspecting(dpop="required"))
    assert settings is not None
    verifier = settings.verifier
    assert isinstance(verifier, IntrospectionVerifier)
    assert (verifier.endpoint, verifier.client_id, verifier.client_secret) == (
        f"{ISSUER}/introspect",
        "rs",
        "s3cret",
    )
    assert verifier.audience == (RESOURCE,) and verifier.issuer == ISSUER
    assert isinstance(settings.dpop, DPoP) and settings.dpop.required


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (AuthOptions(jwks_uri="https://x/jwks", resource=RESOURCE), "--auth-issuer"),
        (AuthOptions(ISSUER, jwks_uri="https://x/jwks"), "--auth-resource"),
        (AuthOptions(ISSUER, resource=RESOURCE), "one of --auth-jwks-uri"),
        (
            AuthOptions(ISSUER, "https://x/jwks", "https://x/introspect", resource=RESOURCE),
            "one of --auth-jwks-uri",
        ),
        (AuthOptions(ISSUER, "https://x/jwks", resource=RESOURCE, dpop="maybe"), "--auth-dpop"),
        (AuthOptions(ISSUER, "https://x/jwks", resource="api.example.com/mcp"), "absolute"),
    ],
)
def test_what_does_not_add_up_is_a_usage_error(options: AuthOptions, message: str) -> None:
    with pytest.raises(typer.BadParameter, match=message):
        auth_settings(options)


def test_export_hands_the_options_to_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV.values():  # each restored to what it was (absent, mostly) afterwards
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    introspecting(scopes=["a", "b"], dpop="nonces").export()
    exported = {name: os.environ.get(name) for name in _ENV.values()}
    assert exported == {
        "MCPGEN_AUTH_ISSUER": ISSUER,
        "MCPGEN_AUTH_JWKS_URI": None,
        "MCPGEN_AUTH_INTROSPECTION": f"{ISSUER}/introspect",
        "MCPGEN_AUTH_CLIENT_ID": "rs",
        "MCPGEN_AUTH_CLIENT_SECRET": "s3cret",
        "MCPGEN_AUTH_RESOURCE": RESOURCE,
        "MCPGEN_AUTH_SCOPES": "a b",
        "MCPGEN_AUTH_DPOP": "nonces",
    }


def test_auth_over_stdio_is_refused_plainly() -> None:
    given = ["--auth-issuer", ISSUER, "--auth-jwks-uri", f"{ISSUER}/jwks"]
    given += ["--auth-resource", RESOURCE]
    proc = subprocess.run(
        [sys.executable, "-m", "mcpgen", "serve", str(EVERYTHING), *given],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "300"},
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "need --transport http" in proc.stderr
