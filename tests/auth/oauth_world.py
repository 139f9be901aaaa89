"""A protected MCP endpoint and its authorization server, in process, for testing the
OAuth client: an `httpx.MockTransport` that records every request and checks what
a strict authorization server checks (PKCE S256, redirect URI, client
authentication, resource indicator)."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import httpx
from joserfc import jws, jwt
from joserfc.jwk import ECKey


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass
class World:
    """One resource server and its authorization server. Options say where the
    metadata is published and how the authorization server behaves."""

    server_url: str = "https://mcp.example.com/mcp"
    prm_resource: str | None = None  # default: server_url
    issuer: str = "https://as.example.com"
    prm_location: str = "linked"  # linked | path | root | none
    metadata_kind: str = "oauth"  # oauth | openid-inserted | openid-appended
    metadata_issuer: str | None = None  # what the metadata claims (default: issuer)
    iss_supported: bool | None = True
    iss_mode: str = "correct"  # correct | omit | wrong | slash
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code", "refresh_token"])
    registration: bool = True
    cimd: bool = False
    as_scopes: list[str] | None = None
    prm_scopes: list[str] | None = None
    challenge_scope: str | None = None
    required: set[str] = field(default_factory=set)  # scopes /mcp needs
    authorization_endpoint: str | None = None  # default: issuer + /authorize
    expires_in: int | None = 3600
    state_override: str | None = None  # the authorization server answers this state
    dpop: bool = False  # offer DPoP (ES256) and bind tokens to proofs' keys
    dpop_nonce: str | None = None  # a nonce both servers require in proofs
    next_nonce: str | None = None  # sent by /mcp with each 200 (the nonce's successor)
    dpop_bound: dict[str, str] = field(default_factory=dict)  # token -> key thumbprint
    proofs: list[dict[str, Any]] = field(default_factory=list)  # claims of every proof

    log: list[str] = field(default_factory=list)
    authorizations: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    registrations: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, set[str]] = field(default_factory=dict)
    refresh_tokens: dict[str, set[str]] = field(default_factory=dict)
    clients: dict[str, str | None] = field(default_factory=dict)  # client_id -> secret
    accepted: list[str] = field(default_factory=list)  # tokens /mcp accepted
    _codes: dict[str, dict[str, str]] = field(default_factory=dict)
    _serial: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # -- addresses ---------------------------------------------------------------------------------
    @property
    def origin(self) -> str:
        parts = urlsplit(self.server_url)
        return f"{parts.scheme}://{parts.netloc}"

    def prm_url(self) -> str:
        path = urlsplit(self.server_url).path
        if self.prm_location == "root":
            return f"{self.origin}/.well-known/oauth-protected-resource"
        if self.prm_location == "linked":
            return f"{self.origin}/custom/prm.json"
        return f"{self.origin}/.well-known/oauth-protected-resource{path}"

    def metadata_url(self) -> str:
        parts = urlsplit(self.issuer)
        origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
        if self.metadata_kind == "oauth":
            return f"{origin}/.well-known/oauth-authorization-server{path}"
        if self.metadata_kind == "openid-inserted":
            return f"{origin}/.well-known/openid-configuration{path}"
        return f"{origin}{path}/.well-known/openid-configuration"

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def client(self, auth: httpx.Auth) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=self.transport(), auth=auth)

    # -- dispatch ----------------------------------------------------------------------------------
    def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url.copy_with(query=None))
        self.log.append(f"{request.method} {url}")
        issuer = self.issuer.rstrip("/")
        if url == self.server_url:
            return self.mcp(request)
        if url == self.prm_url() and self.prm_location != "none":
            return self.prm()
        if url == self.metadata_url():
            return self.metadata()
        if url == f"{issuer}/authorize":
            return self.authorize(request)
        if url == f"{issuer}/token" and request.method == "POST":
            return self.token(request)
        if url == f"{issuer}/register" and request.method == "POST" and self.registration:
            return self.register(request)
        return httpx.Response(404)

    def mcp(self, request: httpx.Request) -> httpx.Response:
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ") if header.startswith("Bearer ") else None
        if header.startswith("DPoP "):
            token = header[5:]
            found = self.proof(request, self.server_url)
            if found is None:
                challenge = 'DPoP error="use_dpop_nonce"'
                nonce = {"dpop-nonce": self.dpop_nonce or ""}
                return httpx.Response(401, headers={"www-authenticate": challenge, **nonce})
            claims, thumbprint = found
            assert claims["ath"] == s256(token) and self.dpop_bound[token] == thumbprint
        else:
            assert token not in self.dpop_bound, "a DPoP-bound token presented as Bearer"
        if token is None or token not in self.tokens:
            challenge = 'Bearer error="invalid_token"'
            if self.prm_location == "linked":
                challenge += f', resource_metadata="{self.prm_url()}"'
            if self.challenge_scope:
                challenge += f', scope="{self.challenge_scope}"'
            return httpx.Response(401, headers={"www-authenticate": challenge})
        if not self.required <= self.tokens[token]:
            needed = " ".join(sorted(self.required))
            challenge = f'Bearer error="insufficient_scope", scope="{needed}"'
            return httpx.Response(403, headers={"www-authenticate": challenge})
        self.accepted.append(token)
        fresh = {"dpop-nonce": self.next_nonce} if self.next_nonce else {}
        return httpx.Response(200, json={"ok": True}, headers=fresh)

    def prm(self) -> httpx.Response:
        body: dict[str, Any] = {
            "resource": self.prm_resource or self.server_url,
            "authorization_servers": [self.issuer],
        }
        if self.prm_scopes is not None:
            body["scopes_supported"] = self.prm_scopes
        return httpx.Response(200, json=body)

    def metadata(self) -> httpx.Response:
        issuer = self.issuer.rstrip("/")
        body: dict[str, Any] = {
            "issuer": self.metadata_issuer or self.issuer,
            "authorization_endpoint": self.authorization_endpoint or f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": self.grant_types,
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": self.auth_methods,
        }
        if self.registration:
            body["registration_endpoint"] = f"{issuer}/register"
        if self.iss_supported is not None:
            body["authorization_response_iss_parameter_supported"] = self.iss_supported
        if self.cimd:
            body["client_id_metadata_document_supported"] = True
        if self.as_scopes is not None:
            body["scopes_supported"] = self.as_scopes
        if self.dpop:
            body["dpop_signing_alg_values_supported"] = ["ES256"]
        return httpx.Response(200, json=body)

    def proof(self, request: httpx.Request, url: str) -> tuple[dict[str, Any], str] | None:
        """The claims and key thumbprint of the request's DPoP proof (None: a nonce
        is missing); asserts it is well formed and signed by the key it names."""
        raw = request.headers["dpop"]
        header = jws.extract_compact(raw.encode()).protected
        assert header["typ"] == "dpop+jwt" and "d" not in header["jwk"]
        key = ECKey.import_key(header["jwk"])
        claims = jwt.decode(raw, key, algorithms=["ES256"]).claims
        assert claims["htm"] == request.method and claims["htu"] == url
        self.proofs.append(claims)
        if self.dpop_nonce is not None and claims.get("nonce") != self.dpop_nonce:
            return None
        return claims, key.thumbprint()

    def authorize(self, request: httpx.Request) -> httpx.Response:
        query = dict(request.url.params)
        self.authorizations.append(query)
        code = f"code-{next(self._serial)}"
        self._codes[code] = query
        answer = {"code": code, "state": self.state_override or query["state"]}
        iss = {
            "correct": self.issuer,
            "wrong": "https://evil.example.com",
            "slash": self.issuer + "/",
        }
        if self.iss_mode in iss:
            answer["iss"] = iss[self.iss_mode]
        location = f"{query['redirect_uri']}?{urlencode(answer)}"
        return httpx.Response(302, headers={"location": location})

    def _client_id(self, request: httpx.Request, form: dict[str, str]) -> str:
        header = request.headers.get("authorization", "")
        if header.startswith("Basic "):
            client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
            client_id, secret = unquote(client_id), unquote(secret)
            assert self.clients.get(client_id) == secret, "wrong client secret"
            return client_id
        if "client_secret" in form:
            assert self.clients.get(form["client_id"]) == form["client_secret"]
        return form.get("client_id", "")

    def token(self, request: httpx.Request) -> httpx.Response:
        form = dict(parse_qsl(request.content.decode()))
        self.token_requests.append(
            {**form, "_authorization": request.headers.get("authorization", "")}
        )
        client_id = self._client_id(request, form)
        thumbprint = None
        if self.dpop and "dpop" in request.headers:
            found = self.proof(request, f"{self.issuer.rstrip('/')}/token")
            if found is None:
                nonce = {"dpop-nonce": self.dpop_nonce or ""}
                return httpx.Response(400, json={"error": "use_dpop_nonce"}, headers=nonce)
            thumbprint = found[1]
        if form["grant_type"] == "authorization_code":
            asked = self._codes.pop(form["code"])
            assert asked["client_id"] == client_id
            assert asked["redirect_uri"] == form["redirect_uri"]
            assert s256(form["code_verifier"]) == asked["code_challenge"]
            assert asked["resource"] == form["resource"]
            scopes = set(asked.get("scope", "").split())
        elif form["grant_type"] == "refresh_token":
            if form["refresh_token"] not in self.refresh_tokens:
                return httpx.Response(400, json={"error": "invalid_grant"})
            scopes = self.refresh_tokens[form["refresh_token"]]
        else:
            scopes = set(form.get("scope", "").split())
        serial = next(self._serial)
        access, refresh = f"access-{serial}", f"refresh-{serial}"
        self.tokens[access] = scopes
        body: dict[str, Any] = {"access_token": access, "token_type": "Bearer"}
        if thumbprint is not None:
            self.dpop_bound[access] = thumbprint
            body["token_type"] = "DPoP"
        if self.expires_in is not None:
            body["expires_in"] = self.expires_in
        if "refresh_token" in self.grant_types and form["grant_type"] != "client_credentials":
            self.refresh_tokens[refresh] = scopes
            body["refresh_token"] = refresh
        if scopes:
            body["scope"] = " ".join(sorted(scopes))
        return httpx.Response(200, json=body)

    def register(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.registrations.append(body)
        client_id = f"{self.issuer}#client-{next(self._serial)}"
        method = body.get("token_endpoint_auth_method", "client_secret_basic")
        secret = None if method == "none" else f"secret-{client_id}"
        self.clients[client_id] = secret
        answer = {"client_id": client_id, "token_endpoint_auth_method": method}
        if secret is not None:
            answer["client_secret"] = secret
        return httpx.Response(201, json=answer)
