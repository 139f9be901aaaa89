"""JWTVerifier: the verification matrix, against a JWKS served through httpx's mock
transport (a real HTTP JWKS is used end to end in test_http_auth)."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey

from mcpgen import ConfigurationError
from mcpgen.auth import AccessToken, AuthSettings, JWTVerifier
from tests.auth.keys import ISSUER, JWKS_URI, RESOURCE, Jwks, ec_key, sign


def verifier(jwks: Jwks, **options: object) -> JWTVerifier:
    v = JWTVerifier(issuer=ISSUER, jwks_uri=JWKS_URI, http=jwks.client(), **options)  # type: ignore[arg-type]
    AuthSettings(v, resource=RESOURCE)  # adopts the resource as the audience
    return v


def check(v: JWTVerifier, token: str) -> AccessToken | str:
    return asyncio.run(v.check(token))


def b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def test_a_good_token_gives_its_identity_scopes_and_expiry() -> None:
    key = ec_key("k1")
    v = verifier(Jwks(key))
    token = sign(key, exp=2_000_000_000)
    found = check(v, token)
    assert isinstance(found, AccessToken)
    assert found.subject == "alice" and found.client_id == "app"
    assert found.principal == f'["{ISSUER}","sub","alice"]'
    assert found.scopes == {"read", "write"}
    assert found.expires_at == 2_000_000_000 and found.audience == (RESOURCE,)
    assert found.issuer == ISSUER and found.claims["sub"] == "alice"
    assert asyncio.run(v.verify(token)) == found


def test_alg_none_is_refused_and_never_allowed() -> None:
    key = ec_key("k1")
    v = verifier(Jwks(key))
    claims = {"iss": ISSUER, "aud": RESOURCE, "sub": "x", "exp": int(time.time()) + 60}
    unsigned = f"{b64({'alg': 'none', 'kid': 'k1'})}.{b64(claims)}."
    assert check(v, unsigned) == "the token's signing algorithm is not allowed"
    assert asyncio.run(v.verify(unsigned)) is None
    with pytest.raises(ConfigurationError, match="never 'none'"):
        JWTVerifier(issuer=ISSUER, jwks_uri=JWKS_URI, algorithms=["ES256", "none"])


def test_hs256_needs_an_explicit_secret() -> None:
    with pytest.raises(ConfigurationError, match="needs an explicit shared_secret"):
        JWTVerifier(issuer=ISSUER, jwks_uri=JWKS_URI, algorithms=["HS256"])
    # A token signed with HS256 is refused by a verifier of asymmetric keys (no key
    # confusion), and accepted by one given the secret.
    secret = b"s" * 32
    token = jwt.encode(
        {"alg": "HS256"},
        {"iss": ISSUER, "aud": RESOURCE, "sub": "bob", "exp": int(time.time()) + 60},
        OctKey.import_key(secret),
    )
    key = ec_key("k1")
    assert check(verifier(Jwks(key)), token) == "the token's signing algorithm is not allowed"
    hs = JWTVerifier(issuer=ISSUER, audience=RESOURCE, shared_secret=secret)
    found = check(hs, token)
    assert isinstance(found, AccessToken) and found.subject == "bob"
    assert (
        check(JWTVerifier(issuer=ISSUER, audience=RESOURCE, shared_secret=b"t" * 32), token)
        == "the token's signature is invalid"
    )


def test_an_unknown_kid_refetches_once_then_is_rate_limited() -> None:
    old, new = ec_key("old"), ec_key("new")
    jwks = Jwks(old)
    v = verifier(jwks, jwks_min_refresh=30.0)

    async def scenario() -> None:
        assert isinstance(await v.check(sign(old)), AccessToken)
        assert jwks.hits == 1
        jwks.keys = [old, new]  # the authorization server rotates its keys
        assert isinstance(await v.check(sign(new)), AccessToken)
        assert jwks.hits == 2  # one re-fetch for the unknown kid
        stranger = ec_key("stranger")
        for _ in range(5):
            assert await v.check(sign(stranger)) == "the token's signing key is unknown"
        assert jwks.hits == 2  # made-up key ids do not hammer the endpoint

    asyncio.run(scenario())


def test_a_forged_signature_is_refused() -> None:
    real, forger = ec_key("k1"), ec_key("k1")  # same kid, another key
    assert check(verifier(Jwks(real)), sign(forger)) == "the token's signature is invalid"


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"iss": "https://evil.example"}, "the token was issued by another authorization server"),
        ({"aud": "https://api.example/mcp/"}, "the token was issued for another resource"),
        ({"aud": ["https://other.example"]}, "the token was issued for another resource"),
        ({"aud": None}, "the token was issued for another resource"),
        ({"exp": None}, "the token lacks a required claim (exp)"),
    ],
)
def test_wrong_issuer_or_audience_or_missing_claims(claims: dict[str, object], reason: str) -> None:
    key = ec_key("k1")
    assert check(verifier(Jwks(key)), sign(key, **claims)) == reason


def test_expiry_with_clock_skew_leeway() -> None:
    key = ec_key("k1")
    now = int(time.time())
    v = verifier(Jwks(key), leeway=30)
    assert isinstance(check(v, sign(key, exp=now - 10)), AccessToken)  # within the skew
    assert check(v, sign(key, exp=now - 120)) == "the token has expired"
    assert isinstance(check(v, sign(key, nbf=now + 10)), AccessToken)
    assert check(v, sign(key, nbf=now + 600)).startswith("the token has an invalid claim")
    strict = verifier(Jwks(key), leeway=0)
    assert check(strict, sign(key, exp=now - 10)) == "the token has expired"


def test_required_claims_are_configurable() -> None:
    key = ec_key("k1")
    v = verifier(Jwks(key), required_claims=("exp", "sub", "jti"))
    assert check(v, sign(key)).startswith("the token lacks a required claim")
    assert isinstance(check(v, sign(key, jti="1")), AccessToken)


def test_an_oversized_token_is_refused_before_parsing() -> None:
    jwks = Jwks(ec_key("k1"))
    v = verifier(jwks)
    huge = "e" * (8 * 1024 + 1)
    assert check(v, huge) == "the token is too large"
    assert jwks.hits == 0  # not even the keys were fetched
    assert check(v, "not-a-jwt") == "the token is not a signed JWT"
    assert check(v, "a.b.c.d.e") == "the token is not a signed JWT"  # JWE: not supported


def test_a_jwks_endpoint_that_is_down_refuses_with_a_description(
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = ec_key("k1")
    jwks = Jwks(key)
    jwks.down = True
    v = verifier(jwks)
    with caplog.at_level(logging.WARNING, logger="mcpgen.auth"):
        assert check(v, sign(key)) == "the authorization server's signing keys are unavailable"
        assert asyncio.run(v.verify(sign(key))) is None
    assert "fetching the JWKS" in caplog.text
    assert jwks.hits == 1  # the second try waited for the refresh interval


def test_keys_held_survive_an_outage_and_cache_control_is_honoured() -> None:
    key = ec_key("k1")
    jwks = Jwks(key, cache_control="public, max-age=0")
    v = verifier(jwks, jwks_min_refresh=0.0)

    async def scenario() -> None:
        assert isinstance(await v.check(sign(key)), AccessToken)
        jwks.down = True  # max-age=0: the next check fetches again, fails, keeps the keys
        assert isinstance(await v.check(sign(key)), AccessToken)
        assert jwks.hits == 2

    asyncio.run(scenario())
    cached = Jwks(key, cache_control="max-age=600")
    v2 = verifier(cached)

    async def reuse() -> None:
        for _ in range(3):
            assert isinstance(await v2.check(sign(key)), AccessToken)

    asyncio.run(reuse())
    assert cached.hits == 1


def test_concurrent_checks_share_one_fetch() -> None:
    key = ec_key("k1")
    jwks = Jwks(key)
    v = verifier(jwks)

    async def scenario() -> list[AccessToken | str]:
        return await asyncio.gather(*(v.check(sign(key)) for _ in range(10)))

    assert all(isinstance(r, AccessToken) for r in asyncio.run(scenario()))
    assert jwks.hits == 1


def test_a_verifier_without_audience_refuses_everything() -> None:
    key = ec_key("k1")
    v = JWTVerifier(issuer=ISSUER, jwks_uri=JWKS_URI, http=Jwks(key).client())
    assert check(v, sign(key)) == "the server has no audience configured"


def test_a_fixed_public_key() -> None:
    key = ec_key("k1")
    v = JWTVerifier(issuer=ISSUER, audience=RESOURCE, public_key=key.as_dict(private=False))
    assert isinstance(check(v, sign(key)), AccessToken)
    pem = key.as_pem(private=False)
    assert isinstance(
        check(JWTVerifier(issuer=ISSUER, audience=RESOURCE, public_key=pem), sign(key)), AccessToken
    )
    with pytest.raises(ConfigurationError, match="exactly one"):
        JWTVerifier(issuer=ISSUER, audience=RESOURCE)


def test_encryption_keys_and_unknown_key_types_do_not_spoil_the_set() -> None:
    key = ec_key("k1")
    jwks = Jwks(key)
    original = jwks.__call__

    def mixed(request: httpx.Request) -> httpx.Response:
        document = original(request).json()
        document["keys"] = [
            {"kty": "AKP", "alg": "ML-DSA-44", "kid": "pq", "pub": "AAAA"},
            {**document["keys"][0], "use": "enc", "kid": "k1"},  # same kid, for encryption
            *document["keys"],
        ]
        return httpx.Response(200, json=document)

    v = JWTVerifier(
        issuer=ISSUER,
        audience=RESOURCE,
        jwks_uri=JWKS_URI,
        http=httpx.AsyncClient(transport=httpx.MockTransport(mixed)),
    )
    assert isinstance(check(v, sign(key)), AccessToken)


def typed(key: ECKey, typ: str | None) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "iat": now, "exp": now + 300}
    header: dict[str, object] = {"alg": "ES256", "kid": key.kid}
    if typ is not None:
        header["typ"] = typ
    return jwt.encode(header, claims, key)


def test_the_token_type_is_checked() -> None:
    """RFC 9068's `at+jwt` and plain `JWT` (also absent, or with the media type prefix)
    pass by default; another type (an ID token's JWT is `JWT` too, but a logout token or
    a DPoP proof is not) is refused; the list is configurable and the check can go."""
    key = ec_key("k1")
    v = verifier(Jwks(key))
    for ok in ("at+jwt", "AT+JWT", "application/at+jwt", "JWT", "jwt", None):
        assert isinstance(check(v, typed(key, ok)), AccessToken), ok
    refused = "the token is not an access token (its typ is not accepted)"
    assert check(v, typed(key, "logout+jwt")) == refused
    assert check(v, typed(key, "dpop+jwt")) == refused
    strict = verifier(Jwks(key), token_types=["at+jwt"])
    assert isinstance(check(strict, typed(key, "application/at+jwt")), AccessToken)
    assert check(strict, typed(key, "JWT")) == refused
    assert check(strict, typed(key, None)) == refused
    lax = verifier(Jwks(key), token_types=None)
    assert isinstance(check(lax, typed(key, "logout+jwt")), AccessToken)
