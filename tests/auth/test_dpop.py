"""DPoP on the resource server (RFC 9449), rule by rule, against a protected mcpgen app
driven in memory (httpx's ASGI transport). Tokens come from a `StaticTokenVerifier`
whose access tokens carry `cnf.jkt`, the way a JWT or an introspection answer would;
proofs are made by mcpgen's own client key (`DPoPKey`) or, for the broken ones, by
hand. Each test names the rule it holds the server to."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

from mcpgen import Context, Server
from mcpgen.auth import AccessToken, AuthSettings, DPoP, StaticTokenVerifier
from mcpgen.auth._dpop import DPoPNonces, normalise, token_hash
from mcpgen.auth._oauth_dpop import DPoPKey
from mcpgen.stores import StoreUnavailableError
from tests.transports.httpharness import body, modern_headers

BASE = "http://127.0.0.1:8000"
URL = f"{BASE}/mcp"
KEY = ECKey.generate_key("P-256")
OTHER = ECKey.generate_key("P-256")
BOUND, UNBOUND, ELSEWHERE = "bound-token", "plain-token", "other-key-token"


def tokens() -> StaticTokenVerifier:
    return StaticTokenVerifier(
        {
            BOUND: AccessToken(subject="alice", claims={"cnf": {"jkt": KEY.thumbprint()}}),
            UNBOUND: AccessToken(subject="bob"),
            ELSEWHERE: AccessToken(subject="carol", claims={"cnf": {"jkt": OTHER.thumbprint()}}),
        }
    )


def app(dpop: DPoP | None = None, resource: str | None = None, **options: Any) -> Any:
    server = Server("dpop")

    @server.tool
    def whoami(ctx: Context) -> str:
        return ctx.auth.subject if ctx.auth and ctx.auth.subject else "nobody"

    return server.asgi_app(auth=AuthSettings(tokens(), dpop=dpop, resource=resource), **options)


def b64(data: bytes | dict[str, Any]) -> str:
    raw = json.dumps(data).encode() if isinstance(data, dict) else data
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def proof(
    method: str = "POST",
    url: str = URL,
    token: str = BOUND,
    *,
    key: Any = KEY,
    header: dict[str, Any] | None = None,
    **claims: Any,
) -> str:
    """A proof signed by `key` (its public half in the header unless `header` says
    otherwise); any claim may be replaced, or left out with None."""
    head: dict[str, Any] = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.as_dict(private=False)}
    head.update(header or {})
    payload: dict[str, Any] = {
        "jti": base64.urlsafe_b64encode(time.time_ns().to_bytes(12, "big")).decode(),
        "htm": method,
        "htu": url,
        "iat": int(time.time()),
        "ath": token_hash(token),
    }
    payload.update(claims)
    payload = {k: v for k, v in payload.items() if v is not None}
    return jwt.encode(head, payload, key, algorithms=[head["alg"]])


def call(
    asgi: Any,
    authorization: str | None,
    proofs: list[str] | None = None,
    url: str = URL,
    method: str = "POST",
    **transport: Any,
) -> httpx.Response:
    headers = modern_headers("tools/call", "whoami")
    if authorization is not None:
        headers["authorization"] = authorization

    async def go() -> httpx.Response:
        asgi_transport = httpx.ASGITransport(app=asgi, **transport)
        async with httpx.AsyncClient(transport=asgi_transport) as http:
            request = http.build_request(
                method, url, headers=headers, content=body(1, "tools/call", {"name": "whoami"})
            )
            pairs = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "dpop"]
            pairs += [("DPoP", p) for p in proofs or []]
            request.headers = httpx.Headers(pairs)
            return await http.send(request)

    return asyncio.run(go())


def text_of(response: httpx.Response) -> str:
    assert response.status_code == 200, (response.status_code, response.headers, response.text)
    return str(response.json()["result"]["content"][0]["text"])


def refusal(response: httpx.Response) -> str:
    """The `WWW-Authenticate` values of a refusal, joined."""
    assert response.status_code in (400, 401), (response.status_code, response.text)
    return ", ".join(response.headers.get_list("www-authenticate"))


# -- the happy path, and the two scheme rules --------------------------------------------------
def test_a_bound_token_with_a_valid_proof_passes() -> None:
    assert text_of(call(app(), f"DPoP {BOUND}", [proof()])) == "alice"
    private = {k: str(v) for k, v in KEY.as_dict(private=True).items()}
    client_key = DPoPKey(private)  # mcpgen's client makes proofs the same way
    made = client_key.proof("POST", URL, BOUND)
    assert text_of(call(app(), f"DPoP {BOUND}", [made])) == "alice"


def test_a_bound_token_sent_as_bearer_is_refused() -> None:
    """RFC 9449 7.2: no downgrade to a bearer token, proof or not."""
    for proofs in ([], [proof()]):
        challenge = refusal(call(app(), f"Bearer {BOUND}", proofs))
        assert 'error="invalid_token"' in challenge and "DPoP scheme" in challenge


def test_an_unbound_token_with_the_dpop_scheme_is_refused() -> None:
    """RFC 9449 4.3 (12): the proof's key must be the one the token is bound to; an
    unbound token is bound to none."""
    response = call(app(), f"DPoP {UNBOUND}", [proof(token=UNBOUND)])
    assert response.status_code == 401
    assert refusal(response).startswith('DPoP error="invalid_token"')
    assert "not bound to a DPoP key" in refusal(response)
    assert text_of(call(app(), f"Bearer {UNBOUND}")) == "bob"  # as a bearer token it is fine


def test_a_bound_token_without_a_proof_is_refused() -> None:
    challenge = refusal(call(app(), f"DPoP {BOUND}", []))
    assert challenge.startswith('DPoP error="invalid_dpop_proof"')
    assert 'algs="ES256' in challenge and "resource_metadata=" in challenge


def test_two_proofs_are_a_bad_request() -> None:
    response = call(app(), f"DPoP {BOUND}", [proof(), proof()])
    assert response.status_code == 400
    assert 'error="invalid_request"' in refusal(response)


def test_the_token_cache_never_stands_in_for_a_proof() -> None:
    asgi = app()
    assert text_of(call(asgi, f"DPoP {BOUND}", [proof()])) == "alice"
    assert call(asgi, f"DPoP {BOUND}", []).status_code == 401  # same header, no proof
    assert call(asgi, f"Bearer {BOUND}", []).status_code == 401


# -- the proof's header -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"typ": "JWT"}, "typ"),
        ({"typ": None}, "typ"),
        ({"jwk": None}, "public key"),
        ({"jwk": KEY.as_dict(private=True)}, "public key"),  # a private key in the header
        ({"jwk": {"kty": "oct", "k": "c2VjcmV0"}}, "public key"),
        ({"jwk": OTHER.as_dict(private=False)}, "signature"),  # signed by KEY, names OTHER
    ],
)
def test_the_proof_header_is_checked(change: dict[str, Any], why: str) -> None:
    head = {k: v for k, v in change.items() if v is not None}
    made = proof(header=head)
    if None in change.values():  # leave the member out altogether
        parts = made.split(".")
        decoded = json.loads(base64.urlsafe_b64decode(parts[0] + "=="))
        for name, value in change.items():
            if value is None:
                decoded.pop(name)
        made = ".".join([b64(decoded), *parts[1:]])
    challenge = refusal(call(app(), f"DPoP {BOUND}", [made]))
    assert 'error="invalid_dpop_proof"' in challenge and why in challenge


def test_only_allowed_asymmetric_algorithms_pass() -> None:
    rsa = RSAKey.generate_key(2048)
    token = "rsa-bound"
    verifier = StaticTokenVerifier(
        {token: AccessToken(subject="dave", claims={"cnf": {"jkt": rsa.thumbprint()}})}
    )
    server = Server("dpop-algs")

    @server.tool
    def whoami() -> str:
        return "dave"

    made = proof(token=token, key=rsa, header={"alg": "PS256"})
    es_only = server.asgi_app(auth=AuthSettings(verifier, dpop=DPoP(algorithms=["ES256"])))
    assert "algorithm is not allowed" in refusal(call(es_only, f"DPoP {token}", [made]))
    ok = server.asgi_app(auth=AuthSettings(verifier, dpop=DPoP()))
    assert text_of(call(ok, f"DPoP {token}", [made])) == "dave"
    # alg none and HS256 are never accepted (and cannot be configured).
    for alg in ("none", "HS256"):
        forged = ".".join(
            [b64({"typ": "dpop+jwt", "alg": alg, "jwk": KEY.as_dict()}), made.split(".")[1], ""]
        )
        assert "algorithm is not allowed" in refusal(call(app(), f"DPoP {BOUND}", [forged]))
    with pytest.raises(Exception, match="asymmetric"):
        DPoP(algorithms=["HS256"])


def test_garbage_proofs_are_refused_without_a_crash() -> None:
    for junk in ["", "x", "a.b", "a.b.c", "!!!.???.###", "e30.e30.", "x" * 9000, proof() + "x"]:
        response = call(app(), f"DPoP {BOUND}", [junk] if junk else [""])
        assert response.status_code == 401, (junk[:20], response.text)
        assert "invalid_dpop_proof" in refusal(response)


# -- the proof's claims -----------------------------------------------------------------------
def test_a_proof_for_another_method_is_refused() -> None:
    assert "another HTTP method" in refusal(call(app(), f"DPoP {BOUND}", [proof("GET")]))


@pytest.mark.parametrize(
    "htu",
    [
        "http://127.0.0.1:8000/other",
        "http://127.0.0.1:8001/mcp",
        "https://127.0.0.1:8000/mcp",
        "http://evil.example:8000/mcp",
        "http://127.0.0.1:8000/mcp/",
        "/mcp",
        "not a url",
    ],
)
def test_a_proof_for_another_url_is_refused(htu: str) -> None:
    assert "another URL" in refusal(call(app(), f"DPoP {BOUND}", [proof(htu=htu)]))


@pytest.mark.parametrize(
    "htu",
    [
        "http://127.0.0.1:8000/mcp?x=1#frag",  # query and fragment are ignored
        "HTTP://127.0.0.1:8000/mcp",  # scheme and host compare without case
        "http://127.0.0.1:8000/./a/../mcp",  # dot segments
        "http://127.0.0.1:8000/%6Dcp",  # percent-encoding of unreserved characters
    ],
)
def test_equivalent_urls_are_accepted(htu: str) -> None:
    assert text_of(call(app(), f"DPoP {BOUND}", [proof(htu=htu)])) == "alice"


def test_url_normalisation() -> None:
    assert normalise("HTTPS://Api.Example:443") == "https://api.example/"
    assert normalise("http://api.example:80/a/./b/../c?q#f") == "http://api.example/a/c"
    assert normalise("http://[::1]:8000/mcp") == "http://[::1]:8000/mcp"
    for bad in ("ftp://x/", "http://user@x/", "http://x:99999/", "//x/mcp", "mcp"):
        assert normalise(bad) is None


def test_behind_a_mount_the_prefix_is_part_of_the_url() -> None:
    mounted = "http://127.0.0.1:8000/weather/mcp"
    asgi = app()
    ok = call(asgi, f"DPoP {BOUND}", [proof(url=mounted)], url=mounted, root_path="/weather")
    assert text_of(ok) == "alice"
    bare = call(asgi, f"DPoP {BOUND}", [proof(url=URL)], url=mounted, root_path="/weather")
    assert "another URL" in refusal(bare)


def test_behind_a_proxy_the_configured_resource_gives_the_url() -> None:
    """The worker sees http://127.0.0.1:8000/mcp; clients use the public URL."""
    public = "https://api.example/tools/mcp"
    asgi = app(resource=public)
    assert text_of(call(asgi, f"DPoP {BOUND}", [proof(url=public)])) == "alice"
    assert "another URL" in refusal(call(asgi, f"DPoP {BOUND}", [proof(url=URL)]))


def test_iat_must_be_recent() -> None:
    now = int(time.time())
    for iat in (now - 120, now + 60, "soon", True, None):
        challenge = refusal(call(app(), f"DPoP {BOUND}", [proof(iat=iat)]))
        assert "iat" in challenge or "too old" in challenge, iat
    assert text_of(call(app(), f"DPoP {BOUND}", [proof(iat=now - 50)])) == "alice"
    assert "too old" in refusal(call(app(DPoP(max_age=10)), f"DPoP {BOUND}", [proof(iat=now - 50)]))


def test_ath_must_be_the_hash_of_the_token_presented() -> None:
    for ath in (token_hash(UNBOUND), None, "", 5):
        challenge = refusal(call(app(), f"DPoP {BOUND}", [proof(ath=ath)]))
        assert "(ath)" in challenge


def test_the_key_must_be_the_one_the_token_is_bound_to() -> None:
    made = proof(token=ELSEWHERE)  # signed by KEY; the token is bound to OTHER
    challenge = refusal(call(app(), f"DPoP {ELSEWHERE}", [made]))
    assert challenge.startswith('DPoP error="invalid_token"') and "another DPoP key" in challenge
    mine = proof(token=ELSEWHERE, key=OTHER)
    assert text_of(call(app(), f"DPoP {ELSEWHERE}", [mine])) == "carol"


def test_a_malformed_cnf_is_never_a_bearer_token() -> None:
    verifier = StaticTokenVerifier({"odd": AccessToken(subject="eve", claims={"cnf": "x"})})
    server = Server("odd")

    @server.tool
    def whoami() -> str:
        return "eve"

    asgi = server.asgi_app(auth=AuthSettings(verifier))
    assert call(asgi, "Bearer odd").status_code == 401
    assert call(asgi, "DPoP odd", [proof(token="odd")]).status_code == 401


def test_jti_is_required() -> None:
    for jti in (None, "", 7, "j" * 257):
        assert "jti" in refusal(call(app(), f"DPoP {BOUND}", [proof(jti=jti)]))


# -- replay, nonces ---------------------------------------------------------------------------
def test_a_replayed_proof_is_refused() -> None:
    asgi, made = app(), proof()
    assert text_of(call(asgi, f"DPoP {BOUND}", [made])) == "alice"
    assert "used before" in refusal(call(asgi, f"DPoP {BOUND}", [made]))
    assert text_of(call(asgi, f"DPoP {BOUND}", [proof()])) == "alice"  # a fresh one passes


def test_a_replay_cache_that_is_away_answers_503_without_detail() -> None:
    class Away:
        async def first_use(self, key: str, ttl: float) -> bool:
            raise StoreUnavailableError("redis at redis://secret-host:6379/0 is unavailable")

    response = call(app(DPoP(replay=Away())), f"DPoP {BOUND}", [proof()])
    assert response.status_code == 503
    assert "secret-host" not in response.text and "redis" not in response.text


def test_server_nonces() -> None:
    now = [time.time()]
    dpop = DPoP(nonces=True, nonce_secret="s" * 32, nonce_period=60, clock=lambda: now[0])
    asgi = app(dpop)
    first = call(asgi, f"DPoP {BOUND}", [proof(iat=int(now[0]))])
    assert first.status_code == 401
    assert refusal(first).startswith('DPoP error="use_dpop_nonce"')
    nonce = first.headers["dpop-nonce"]
    assert first.headers["cache-control"] == "no-store"
    ok = call(asgi, f"DPoP {BOUND}", [proof(iat=int(now[0]), nonce=nonce)])
    assert text_of(ok) == "alice"
    assert "use_dpop_nonce" in refusal(call(asgi, f"DPoP {BOUND}", [proof(nonce="1.forged")]))
    stranger = DPoPNonces(b"another secret", 60, lambda: now[0]).current()
    assert "use_dpop_nonce" in refusal(call(asgi, f"DPoP {BOUND}", [proof(nonce=stranger)]))
    assert "dpop-nonce" not in ok.headers  # the current nonce: nothing new to hand out
    now[0] += 60  # the next period: the nonce is still good, and its successor comes along
    rotated = call(asgi, f"DPoP {BOUND}", [proof(iat=int(now[0]), nonce=nonce)])
    assert text_of(rotated) == "alice"
    successor = rotated.headers["dpop-nonce"]
    assert successor != nonce and rotated.headers["cache-control"] == "no-store"
    fresh = call(asgi, f"DPoP {BOUND}", [proof(iat=int(now[0]), nonce=successor)])
    assert text_of(fresh) == "alice" and "dpop-nonce" not in fresh.headers
    now[0] += 60  # ... one more, and it has rotated out
    late = call(asgi, f"DPoP {BOUND}", [proof(iat=int(now[0]), nonce=nonce)])
    assert "use_dpop_nonce" in refusal(late) and late.headers["dpop-nonce"] != nonce


def test_workers_with_one_secret_accept_each_others_nonces() -> None:
    a, b = DPoPNonces(b"shared", 300), DPoPNonces(b"shared", 300)
    assert b.accepts(a.current()) and not DPoPNonces(b"other", 300).accepts(a.current())
    for junk in (None, 5, "", ".", "x.y", "99999999999999999999.x", "1." + "a" * 100):
        assert not a.accepts(junk)
    # digits to str.isdigit, but no decimal number: refused, not a ValueError (a 500)
    slot, _, mac = a.current().partition(".")
    for digits in ("\u00b2", "\u00b9" + slot, slot[:-1] + "\u00b3"):
        assert not a.accepts(f"{digits}.{mac}")


# -- what the server advertises ---------------------------------------------------------------
def test_dpop_is_advertised_only_when_configured() -> None:
    quiet = call(app(), None)
    assert quiet.headers.get_list("www-authenticate") == [
        'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"'
    ]
    loud = call(app(DPoP(algorithms=["ES256", "EdDSA"])), None)
    values = loud.headers.get_list("www-authenticate")
    assert values[0].startswith("Bearer ") and "error=" not in values[0]
    assert values[1].startswith("DPoP ") and 'algs="ES256 EdDSA"' in values[1]

    async def metadata(asgi: Any) -> dict[str, Any]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi)) as http:
            got = await http.get(f"{BASE}/.well-known/oauth-protected-resource/mcp")
            return dict(got.json())

    assert "dpop_signing_alg_values_supported" not in asyncio.run(metadata(app()))
    strict = asyncio.run(metadata(app(DPoP(required=True, algorithms=["ES256"]))))
    assert strict["dpop_signing_alg_values_supported"] == ["ES256"]
    assert strict["dpop_bound_access_tokens_required"] is True


def test_required_refuses_bearer_tokens_and_challenges_with_dpop_only() -> None:
    asgi = app(DPoP(required=True))
    response = call(asgi, f"Bearer {UNBOUND}")
    values = response.headers.get_list("www-authenticate")
    assert response.status_code == 401 and len(values) == 1
    assert values[0].startswith('DPoP error="invalid_token"')
    assert text_of(call(asgi, f"DPoP {BOUND}", [proof()])) == "alice"


def test_a_browser_may_send_proofs_and_read_nonces() -> None:
    """CORS: the preflight allows the DPoP header; DPoP-Nonce is exposed to the page."""
    web = "https://app.example"
    asgi = app(DPoP(nonces=True), allowed_origins=[web])
    asked = {"origin": web, "access-control-request-method": "POST"}
    asked["access-control-request-headers"] = "authorization, dpop, content-type"

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi)) as http:
            preflight = await http.options(URL, headers=asked)
            headers = modern_headers("tools/call", "whoami") | {"origin": web}
            headers |= {"authorization": f"DPoP {BOUND}", "dpop": proof()}
            content = body(1, "tools/call", {"name": "whoami"})
            return preflight, await http.post(URL, headers=headers, content=content)

    preflight, refused = asyncio.run(go())
    allowed = {h.strip() for h in preflight.headers["access-control-allow-headers"].split(",")}
    assert "dpop" in allowed
    assert refused.status_code == 401 and "dpop-nonce" in refused.headers
    exposed = {h.strip() for h in refused.headers["access-control-expose-headers"].split(",")}
    assert {"dpop-nonce", "www-authenticate"} <= exposed


def test_a_missing_scope_is_told_in_the_dpop_challenge() -> None:
    server = Server("scoped")

    @server.tool(scopes=["admin"])
    def whoami() -> str:
        return "never"

    asgi = server.asgi_app(auth=AuthSettings(tokens(), required_scopes=["read"]))
    refused = call(asgi, f"DPoP {BOUND}", [proof()])
    assert refused.status_code == 403
    assert refused.headers["www-authenticate"].startswith('DPoP error="insufficient_scope"')
    assert 'scope="read"' in refused.headers["www-authenticate"]
    assert "algs=" in refused.headers["www-authenticate"]
    # Without a valid proof the token's scopes are not discussed.
    unproven = call(asgi, f"DPoP {BOUND}", [proof(htm="GET")])
    assert unproven.status_code == 401 and "insufficient_scope" not in unproven.text


# -- anything at all in a proof ---------------------------------------------------------------
_ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False)
    | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_CLAIMS = ("jti", "htm", "htu", "iat", "ath", "nonce", "cnf")


def _acceptable(changes: dict[str, Any]) -> bool:
    """Whether a proof with these claims replaced still satisfies every rule."""
    jti, htm, htu = changes.get("jti", "j"), changes.get("htm", "POST"), changes.get("htu", URL)
    iat, ath = changes.get("iat", int(time.time())), changes.get("ath", token_hash(BOUND))
    return (
        isinstance(jti, str)
        and 0 < len(jti) <= 256
        and htm == "POST"
        and isinstance(htu, str)
        and normalise(htu) == normalise(URL)
        and isinstance(iat, int | float)
        and not isinstance(iat, bool)
        and time.time() - 65 <= iat <= time.time() + 5
        and ath == token_hash(BOUND)
    )


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.dictionaries(st.sampled_from(_CLAIMS), _ANY, max_size=3))
def test_a_signed_proof_with_odd_claims_is_refused_never_a_crash(changes: dict[str, Any]) -> None:
    """Properly signed proofs whose claims are replaced by anything: 200 exactly when
    every rule still holds, else 401; never a 500."""
    response = call(app(), f"DPoP {BOUND}", [proof(**changes)])
    expected = 200 if _acceptable(changes) else 401
    assert response.status_code == expected, (changes, response.status_code, response.text)
