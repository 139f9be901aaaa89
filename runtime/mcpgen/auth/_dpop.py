"""DPoP on the resource server (RFC 9449): a token bound to a client's key (`cnf.jkt`)
is honoured only with a fresh proof that the caller holds that key.

`DPoP` is the setting (`AuthSettings(dpop=DPoP(...))`); `ProofCheck` checks one
request's proof for the gate (`mcpgen.auth._server`). What a proof must satisfy
(section 4.3 of the RFC): one `DPoP` header holding a compact JWS with `typ`
`dpop+jwt`, an allowed asymmetric `alg` and a public `jwk` (never private members)
whose signature verifies; `htm` equal to the request's method; `htu` equal to this
request's URL (both normalised, query and fragment ignored; see `expected_url`); `iat`
within `max_age` (plus `leeway` of clock skew); `ath` the hash of the token presented;
the key's thumbprint (RFC 7638) equal to the token's `cnf.jkt`; with nonces on, a
`nonce` this server issued lately; and a `jti` not seen before in the window (the
`ReplayCache`, shared by workers on Redis).

Nothing here imports joserfc: the signature is checked by `_dpop_proof`, loaded on
the first DPoP request.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import msgspec

from mcpgen._errors import ConfigurationError
from mcpgen.auth._jose import compact_header
from mcpgen.stores import InMemoryKeyRing, InMemoryReplayCache, ReplayCache, StoreUnavailableError

if TYPE_CHECKING:
    from mcpgen.stores.redis import Connection

__all__ = [
    "DEFAULT_ALGORITHMS",
    "NEXT_NONCE",
    "DPoP",
    "DPoPNonces",
    "ProofCheck",
    "Refusal",
    "bound_key",
]

log = logging.getLogger("mcpgen.auth")

DEFAULT_ALGORITHMS = (
    "ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512", "EdDSA",
)  # fmt: skip
MAX_PROOF_BYTES = 8 * 1024
_PRIVATE = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
NEXT_NONCE = "mcpgen.dpop_nonce"  # ASGI scope key: a DPoP-Nonce for the response
_decode_object = msgspec.json.Decoder(dict[str, Any]).decode


class Refusal(msgspec.Struct, frozen=True):
    """Why a proof is not accepted: the status, the `error` of the DPoP challenge, a
    description, and for `use_dpop_nonce` the nonce to send back."""

    status: int
    error: str
    description: str
    nonce: str | None = None


def bound_key(claims: object) -> str | None:
    """The `cnf.jkt` of a token's claims (or introspection answer): the thumbprint of
    the key the token is bound to; None for an unbound token. A malformed `cnf`
    counts as bound to no key anyone holds, so it can never pass as a bearer token."""
    if not isinstance(claims, dict) or "cnf" not in claims:
        return None
    cnf = claims["cnf"]
    jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
    if jkt is None and isinstance(cnf, dict) and "jkt" not in cnf:
        return None  # bound another way (e.g. a certificate): not ours to judge
    return jkt if isinstance(jkt, str) and jkt else "\x00malformed"


class DPoPNonces:
    """Server nonces that need no shared state: `<slot>.<mac>`, the slot being the
    current period of `period` seconds and the MAC keyed by `secret`. A nonce of the
    current or the previous period is accepted, so each lives one to two periods;
    workers holding the same secret accept each other's nonces."""

    def __init__(
        self, secret: bytes, period: float = 300.0, clock: Callable[[], float] = time.time
    ) -> None:
        if period <= 0:
            raise ConfigurationError("the nonce period must be positive")
        self._secret = secret
        self.period = period
        self.clock = clock

    def _mac(self, slot: int) -> str:
        digest = hmac.new(self._secret, f"dpop-nonce:{slot}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:18]).decode("ascii")

    def current(self) -> str:
        slot = int(self.clock() // self.period)
        return f"{slot}.{self._mac(slot)}"

    def accepts(self, nonce: object) -> bool:
        if not isinstance(nonce, str) or len(nonce) > 64:
            return False
        slot_text, _, mac = nonce.partition(".")
        if not (slot_text.isascii() and slot_text.isdigit()) or len(slot_text) > 15:
            return False
        slot = int(slot_text)
        now = int(self.clock() // self.period)
        return slot in (now, now - 1) and hmac.compare_digest(mac, self._mac(slot))


class DPoP:
    """How a protected server checks DPoP proofs (`AuthSettings(dpop=DPoP(...))`).

    Without this setting the server still verifies the proof of every token sent with
    the `DPoP` scheme and refuses a bound token sent as a bearer token; giving it also
    advertises DPoP (a `DPoP algs=...` challenge on 401s, the algorithms in the
    protected resource metadata). `required` refuses bearer tokens altogether (only
    DPoP-bound tokens with proofs pass). `algorithms`: the proof algorithms accepted
    (asymmetric only). `max_age`: how old a proof's `iat` may be; `leeway`: clock
    skew tolerated either way. `replay`: where used `jti`s are kept (in memory by
    default; a server with Redis shares `RedisReplayCache` between its workers).
    `nonces=True` makes clients include a server nonce (`use_dpop_nonce`), rotated
    every `nonce_period` seconds and keyed by `nonce_secret` (default: derived from
    `MCPGEN_STATE_KEYS`, which workers share, else random for this process)."""

    def __init__(
        self,
        *,
        required: bool = False,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        max_age: float = 60.0,
        leeway: float = 5.0,
        replay: ReplayCache | None = None,
        nonces: bool = False,
        nonce_secret: bytes | str | None = None,
        nonce_period: float = 300.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        allowed = tuple(algorithms)
        if not allowed or any(a.lower() == "none" or a.upper().startswith("HS") for a in allowed):
            raise ConfigurationError("DPoP algorithms are asymmetric ones, never 'none' or HS*")
        if max_age <= 0 or leeway < 0:
            raise ConfigurationError("max_age must be positive and leeway not negative")
        self.required = required
        self.advertised = True  # named in challenges and the resource metadata
        self.algorithms = allowed
        self.max_age = max_age
        self.leeway = leeway
        self.clock = clock
        self._replay_given = replay is not None
        self.replay: ReplayCache = replay if replay is not None else InMemoryReplayCache()
        self.nonces: DPoPNonces | None = None
        if nonces:
            secret = nonce_secret.encode() if isinstance(nonce_secret, str) else nonce_secret
            if secret is None:
                base = InMemoryKeyRing.from_env().sealing_key()[1]
                secret = hmac.new(base, b"mcpgen dpop nonces", hashlib.sha256).digest()
            self.nonces = DPoPNonces(secret, nonce_period, clock)

    @classmethod
    def quiet(cls) -> DPoP:
        """The defaults a server without a DPoP setting checks proofs with, without
        advertising DPoP."""
        dpop = cls()
        dpop.advertised = False
        return dpop

    @property
    def window(self) -> float:
        """How long a `jti` must be remembered: as long as its proof could pass."""
        return self.max_age + 2 * self.leeway

    def share_replay(self, connection: Connection) -> None:
        """Keep used `jti`s on Redis (`connection`) unless a cache was given: what a
        server with Redis does, so that a proof replayed at another worker fails."""
        if not self._replay_given:
            from mcpgen.stores.redis import RedisReplayCache  # noqa: PLC0415 (redis extra)

            self.replay = RedisReplayCache(connection)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def token_hash(token: str) -> str:
    """The `ath` of a token: base64url(SHA-256(its ASCII bytes))."""
    return _b64(hashlib.sha256(token.encode("ascii", "replace")).digest())


def _remove_dots(path: str) -> str:
    """RFC 3986 section 5.2.4: `.` and `..` segments resolved."""
    out: list[str] = []
    for segment in path.split("/")[1:] if path.startswith("/") else path.split("/"):
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    tail = "/" if path.endswith(("/.", "/..")) else ""
    return "/" + "/".join(out) + tail


def normalise(url: str) -> str | None:
    """A URL as `htu` values are compared: scheme and host lowercased, the default
    port dropped, the path percent-decoded with dot segments removed (empty: `/`),
    query and fragment gone. None when it is no absolute http(s) URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in _DEFAULT_PORTS or not host or parts.username is not None:
        return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    path = _remove_dots(unquote(parts.path)) if parts.path else "/"
    return f"{scheme}://{netloc}{path}"


_normal: dict[str, str | None] = {}  # a client names the same URL on every request


def normalised(url: str) -> str | None:
    """`normalise`, remembered for the last 1,024 URLs."""
    try:
        return _normal[url]
    except KeyError:
        found = _normal[url] = normalise(url)
        if len(_normal) > 1024:
            del _normal[next(iter(_normal))]
        return found


def _route_path(scope: dict[str, Any]) -> str:
    """The request's path inside the app (the mount prefix, if `path` has it, taken off)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("", "/"):
        return path[len(root) :]
    return path


def expected_url(scope: dict[str, Any], resource: str | None, endpoint: str) -> str | None:
    """The URL a proof for this request must name (normalised).

    With a configured `resource` (the public URL of the endpoint at `endpoint` inside
    the app) the origin and the mount prefix come from it, whatever the Host header or
    the scheme the server sees behind a proxy: `https://api.example/weather/mcp` makes
    a request for the app's `/messages` `https://api.example/weather/messages`. Without
    one, the URL is the request's own (scheme, Host, `root_path` and path)."""
    route = _route_path(scope)
    if resource is not None:
        parts = urlsplit(resource)
        base = parts.path.rstrip("/")
        if base.endswith(endpoint):
            prefix = base[: len(base) - len(endpoint)]
        else:
            prefix = scope.get("root_path", "")
        return normalised(f"{parts.scheme}://{parts.netloc}{prefix}{route}")
    host = "localhost"
    for name, value in scope["headers"]:
        if name == b"host":
            host = value.decode("latin-1")
            break
    full = scope.get("root_path", "") + route
    return normalised(f"{scope.get('scheme', 'http')}://{host}{full}")


def _proof_header(scope: dict[str, Any]) -> str | Refusal:
    found: bytes | None = None
    for name, value in scope["headers"]:
        if name == b"dpop":
            if found is not None:
                return Refusal(400, "invalid_request", "several DPoP headers")
            found = value
    if found is None:
        return Refusal(401, "invalid_dpop_proof", "a DPoP proof is required with this token")
    if len(found) > MAX_PROOF_BYTES:
        return Refusal(401, "invalid_dpop_proof", "the DPoP proof is too large")
    return found.decode("latin-1").strip()


def _bad(description: str) -> Refusal:
    return Refusal(401, "invalid_dpop_proof", description)


class ProofCheck:
    """Checks the proof of one request for the gate (see the module docstring)."""

    def __init__(self, dpop: DPoP, resource: str | None, endpoint: str) -> None:
        self.dpop = dpop
        self.resource = resource
        self.endpoint = endpoint
        self._allowed = frozenset(dpop.algorithms)

    async def check(self, scope: dict[str, Any], token: str, jkt: str) -> Refusal | None:
        """None when the request's proof holds for `token`, bound to key `jkt`."""
        proof = _proof_header(scope)
        if isinstance(proof, Refusal):
            return proof
        header = compact_header(proof)
        if header is None:
            return _bad("the DPoP proof is not a signed JWT")
        if header.get("typ") != "dpop+jwt":
            return _bad("the DPoP proof's typ is not dpop+jwt")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self._allowed:
            return _bad("the DPoP proof's algorithm is not allowed")
        jwk = header.get("jwk")
        if not isinstance(jwk, dict) or _PRIVATE & jwk.keys() or jwk.get("kty") == "oct":
            return _bad("the DPoP proof carries no public key")
        from mcpgen.auth._dpop_proof import open_proof  # noqa: PLC0415 (joserfc, on first use)

        opened = open_proof(proof, jwk, alg)
        if isinstance(opened, str):
            return _bad(opened)
        claims, thumbprint = opened
        wrong = self._claims(scope, claims, token)
        if wrong is not None:
            return wrong
        if not hmac.compare_digest(thumbprint, jkt):
            return Refusal(401, "invalid_token", "the token is bound to another DPoP key")
        nonces = self.dpop.nonces
        if nonces is not None and not nonces.accepts(claims.get("nonce")):
            return Refusal(
                401, "use_dpop_nonce", "a fresh server nonce is required", nonce=nonces.current()
            )
        try:
            first = await self.dpop.replay.first_use(
                f"{thumbprint}:{claims['jti']}", self.dpop.window
            )
        except StoreUnavailableError as exc:
            log.warning("cannot check a DPoP proof for replay: %s", exc)
            return Refusal(503, "temporarily_unavailable", "the proof cannot be checked now")
        if not first:
            return _bad("the DPoP proof was used before")
        if nonces is not None and claims.get("nonce") != (current := nonces.current()):
            # Still accepted, but from the last period: hand the next one out with this
            # answer (the app adds the header), sparing the client a refusal later.
            scope[NEXT_NONCE] = current
        return None

    def _claims(self, scope: dict[str, Any], claims: dict[str, Any], token: str) -> Refusal | None:
        jti = claims.get("jti")
        if not isinstance(jti, str) or not 0 < len(jti) <= 256:
            return _bad("the DPoP proof has no valid jti")
        if claims.get("htm") != scope["method"]:
            return _bad("the DPoP proof was made for another HTTP method")
        htu = claims.get("htu")
        wanted = expected_url(scope, self.resource, self.endpoint)
        if not isinstance(htu, str) or wanted is None or normalised(htu) != wanted:
            return _bad("the DPoP proof was made for another URL")
        iat = claims.get("iat")
        if not isinstance(iat, int | float) or isinstance(iat, bool):
            return _bad("the DPoP proof has no valid iat")
        now, dpop = self.dpop.clock(), self.dpop
        if not now - dpop.max_age - dpop.leeway <= iat <= now + dpop.leeway:
            return _bad("the DPoP proof is too old or from the future")
        ath = claims.get("ath")
        if not isinstance(ath, str) or not hmac.compare_digest(ath, token_hash(token)):
            return _bad("the DPoP proof does not match the access token (ath)")
        return None
