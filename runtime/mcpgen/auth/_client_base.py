"""`OAuthBase`: the `httpx.Auth` machinery shared by the interactive and the machine
OAuth clients: bearer tokens on every request, discovery on a 401, step-up on a 403
`insufficient_scope`, proactive refresh, storage, revocation (`revoke`, `logout`), and
the limits that keep it safe.

No lock is held while a request or a stream is in flight: the lock only guards
obtaining a token, so a long SSE stream never stalls other requests, and concurrent
requests that find the token expired wait for the one refresh the first of them runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Generator, Sequence
from urllib.parse import urlsplit

import httpx
import msgspec

from mcpgen.auth._discovery import (
    AuthorizationError,
    Challenge,
    ResourceMetadata,
    ServerMetadata,
    fetch_resource_metadata,
    fetch_server_metadata,
    parse_challenge,
    require_secure,
    resource_covers,
)
from mcpgen.auth._oauth_dpop import ALGORITHM, DPoPKey
from mcpgen.auth._oauth_grants import Signer, TokenRefusedError, request_tokens, revoke_token
from mcpgen.auth._storage import Grant, InMemoryTokenStorage, TokenStorage

__all__ = ["MAX_ATTEMPTS", "OAuthBase", "Revocation"]

# Authorizations in a row that did not lead to an accepted request before the client
# gives up (a server that keeps answering 403 must not cause endless logins).
MAX_ATTEMPTS = 3


def _union(first: Sequence[str], second: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


class Revocation(msgspec.Struct, frozen=True, kw_only=True):
    """What `OAuthBase.revoke` did with one grant's tokens at its authorization server.

    `offered`: the server advertises a revocation endpoint (False: nothing was sent,
    the tokens stay valid until they expire). `revoked`: the kinds of token it
    confirmed (`refresh_token`, `access_token`). `failed`: kind -> why it was not
    revoked (the server's error, never the token)."""

    issuer: str
    resource: str
    offered: bool = True
    revoked: tuple[str, ...] = ()
    failed: dict[str, str] = msgspec.field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Every token the grant held is revoked."""
        return self.offered and not self.failed


class OAuthBase(httpx.Auth):
    """Bearer authorization with tokens an OAuth flow obtains (subclasses say how)."""

    def __init__(
        self,
        *,
        scopes: Sequence[str] | None = None,
        storage: TokenStorage | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        dpop: bool = False,
    ) -> None:
        self.storage: TokenStorage = storage or InMemoryTokenStorage()
        self.use_dpop = dpop
        self.dpop_key: DPoPKey | None = None
        self.scopes = list(scopes or [])
        self.transport = transport
        self.timeout = timeout
        self.server_url: str | None = None
        self.resource: str | None = None
        self.linked: str | None = None  # the PRM URL a challenge named
        self.resource_metadata: ResourceMetadata | None = None
        self.metadata: ServerMetadata | None = None
        self.grant: Grant | None = None
        self.requested: list[str] = []  # every scope asked for so far (their union)
        self.failures = 0  # authorizations since a request was last accepted
        self._lock = asyncio.Lock()
        self._loaded = False

    # -- what subclasses provide ---------------------------------------------------------------
    async def obtain(self, http: httpx.AsyncClient, scopes: list[str]) -> Grant:
        """A grant with an access token for `self.resource` from `self.metadata`."""
        raise AuthorizationError(f"{type(self).__name__} cannot obtain tokens")

    def signer(self) -> Signer | None:
        """The private_key_jwt signer, for clients that authenticate with a key."""
        return None

    def dpop_for(self, metadata: ServerMetadata) -> DPoPKey | None:
        """The DPoP key to bind new tokens to: only when asked for and offered."""
        if not self.use_dpop or ALGORITHM not in (metadata.dpop_signing_alg_values_supported or []):
            return None
        if self.dpop_key is None:
            self.dpop_key = DPoPKey()
        return self.dpop_key

    # -- httpx.Auth ------------------------------------------------------------------------------
    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        raise AuthorizationError("OAuth needs an httpx.AsyncClient")
        yield request  # pragma: no cover (makes this a generator)

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        url = str(request.url.copy_with(query=None, fragment=None))
        sent = self._authorize(request, await self._current(url))
        response = yield request
        nonce_retried = False
        while response.status_code in (401, 403):
            challenge = parse_challenge(response.headers)
            nonce = response.headers.get("dpop-nonce")
            if challenge.error == "use_dpop_nonce" and nonce and not nonce_retried:
                # Not a refusal of the token: the same request, with a proof naming
                # the server's nonce.
                nonce_retried = True
                if self.dpop_key is not None:
                    self.dpop_key.remember_nonce(url, nonce)
                sent = self._authorize(request, self.grant)
                response = yield request
                continue
            if response.status_code == 403 and challenge.error != "insufficient_scope":
                return  # forbidden for another reason: more scopes would not help
            if self.failures >= MAX_ATTEMPTS:
                return
            grant = await self._reauthorize(url, challenge, sent)
            sent = self._authorize(request, grant)
            response = yield request
        if sent is not None:
            self.failures = 0
        if self.dpop_key is not None:  # a server may hand out its next nonce with any answer
            self.dpop_key.remember_nonce(url, response.headers.get("dpop-nonce"))

    def _authorize(self, request: httpx.Request, grant: Grant | None) -> str | None:
        if grant is None or grant.access_token is None:
            return None
        token = grant.access_token
        if grant.token_type == "DPoP" and self.dpop_key is not None:
            request.headers["authorization"] = f"DPoP {token}"
            request.headers["dpop"] = self.dpop_key.proof(request.method, str(request.url), token)
        else:
            request.headers["authorization"] = f"Bearer {token}"
        return token

    # -- obtaining tokens ------------------------------------------------------------------------
    def http(self) -> httpx.AsyncClient:
        """A client for the authorization server's endpoints (never the MCP server's
        auth flow: these requests carry no bearer token)."""
        return httpx.AsyncClient(
            transport=self.transport, timeout=self.timeout, follow_redirects=False
        )

    async def _current(self, url: str) -> Grant | None:
        """The grant to send; loads storage once and refreshes an expired token (one
        refresh, whichever request finds it expired first)."""
        grant = self.grant
        if self._loaded and (grant is None or grant.usable() or grant.refresh_token is None):
            return grant
        async with self._lock:
            if not self._loaded:
                await self._load(url)
            grant = self.grant
            if grant is not None and not grant.usable() and grant.refresh_token is not None:
                grant = await self._refresh(grant)
            return grant

    async def _load(self, url: str) -> None:
        self.server_url = self.server_url or url
        stored = [g for g in await self.storage.grants() if resource_covers(g.resource, url)]
        if stored:
            self.grant = max(stored, key=lambda g: g.saved_at)
            if self.grant.dpop_key is not None:
                self.dpop_key = DPoPKey(self.grant.dpop_key)
            self.resource = self.grant.resource
            self.requested = self.grant.scope.split() if self.grant.scope else []
        self._loaded = True

    async def _refresh(self, grant: Grant) -> Grant | None:
        try:
            async with self.http() as http:
                if self.metadata is None or self.metadata.issuer != grant.issuer:
                    self.metadata = await fetch_server_metadata(http, grant.issuer)
                form = {"grant_type": "refresh_token", "refresh_token": grant.refresh_token or ""}
                dpop = self.dpop_key if grant.dpop_key is not None else None
                fresh = await request_tokens(http, self.metadata, grant, form, self.signer(), dpop)
        except TokenRefusedError:
            # The refresh token is no good: authorize afresh on the next 401, keeping
            # the client registration. (An unreachable server keeps it: the request
            # fails now, and a later one refreshes.)
            fresh = Grant(
                issuer=grant.issuer,
                resource=grant.resource,
                client_id=grant.client_id,
                client_secret=grant.client_secret,
                auth_method=grant.auth_method,
            )
        self.grant = fresh
        await self.storage.save(fresh)
        return fresh if fresh.access_token is not None else None

    async def _reauthorize(self, url: str, challenge: Challenge, sent: str | None) -> Grant:
        async with self._lock:
            current = self.grant
            wanted = set(challenge.scopes)
            if (
                current is not None
                and current.access_token is not None
                and current.access_token != sent
                and current.usable()
                and wanted <= set((current.scope or "").split() + self.requested)
            ):
                return current  # another request authorized while this one waited
            self.failures += 1
            async with self.http() as http:
                await self.discover(http, url, challenge)
                kept = self.grant  # None when the authorization server changed
                if (
                    challenge.error != "insufficient_scope"
                    and kept is not None
                    and kept.refresh_token is not None
                    and kept.access_token == sent
                ):
                    # The token was refused (revoked, or expired early): a refresh
                    # spares the user a new login.
                    refreshed = await self._refresh(kept)
                    if refreshed is not None:
                        return refreshed
                scopes = self._scopes(challenge)
                grant = await self.obtain(http, scopes)
            self.requested = scopes
            self.grant = grant
            await self.storage.save(grant)
            return grant

    async def discover(self, http: httpx.AsyncClient, url: str, challenge: Challenge) -> None:
        """The resource and authorization server for `url` (fetched again on every
        authorization: a server may move to another authorization server)."""
        self.server_url = url
        # A challenge without the link (a 403, say) uses the one an earlier one gave.
        self.linked = challenge.resource_metadata or self.linked
        prm = await fetch_resource_metadata(http, url, self.linked)
        self.resource_metadata = prm
        if prm is None:
            # No PRM (servers of the 2025-03-26 revision): the server's origin is its
            # own authorization server and the resource is its URL.
            parts = urlsplit(url)
            issuers, self.resource = [f"{parts.scheme}://{parts.netloc}"], url
        else:
            issuers, self.resource = prm.authorization_servers, prm.resource
        if not issuers:
            raise AuthorizationError(f"{url}: the resource names no authorization server")
        known = self.grant.issuer if self.grant is not None else None
        issuer = known if known in issuers else issuers[0]
        if self.metadata is None or self.metadata.issuer != issuer:
            self.metadata = await fetch_server_metadata(http, issuer)
        if self.grant is not None and (
            self.grant.issuer != issuer or self.grant.resource != self.resource
        ):
            # Another authorization server (or resource): nothing obtained from the
            # previous one may be presented to this one.
            self.grant = None
            self.requested = []

    def _scopes(self, challenge: Challenge) -> list[str]:
        """The scopes to ask for: those already asked for, with the challenge's, or
        failing both the resource's `scopes_supported`; `offline_access` added when
        the authorization server lists it (for a refresh token)."""
        new = list(challenge.scopes)
        if not new and not self.requested and self.resource_metadata is not None:
            new = list(self.resource_metadata.scopes_supported or [])
        # The caller's own scopes come on top of either, never instead of them.
        scopes = _union(self.requested, _union(self.scopes, new))
        supported = self.metadata.scopes_supported if self.metadata is not None else None
        if scopes and "offline_access" in (supported or []) and "offline_access" not in scopes:
            scopes.append("offline_access")
        return scopes

    # -- for callers -----------------------------------------------------------------------------
    async def login(self, server_url: str) -> Grant:
        """Authorize now, before any MCP request (what a `login` command does): the
        resource metadata is looked up at the well-known URLs."""
        async with self._lock:
            self._loaded = True
            self.failures = 0
            async with self.http() as http:
                await self.discover(http, server_url, Challenge())
                scopes = self._scopes(Challenge())
                grant = await self.obtain(http, scopes)
            self.requested, self.grant = scopes, grant
            await self.storage.save(grant)
            return grant

    async def stored(self, issuer: str, resource: str) -> Grant | None:
        """A grant kept for this issuer and resource (its client registration may be
        reused with the same authorization server, and only with it)."""
        if self.grant is not None and (self.grant.issuer, self.grant.resource) == (
            issuer,
            resource,
        ):
            return self.grant
        return await self.storage.load(issuer, resource)

    async def revoke(self, grant: Grant | None = None) -> Revocation:
        """Revoke `grant`'s tokens (default: this client's current grant) at its
        authorization server's `revocation_endpoint` (RFC 7009), authenticated as at
        the token endpoint: the refresh token first (servers commonly end the whole
        grant with it), then the access token unless it has expired. Failures are
        reported in the result, not raised. The grant is then kept without its tokens
        (storage and this client), so the client registration serves the next login."""
        grant = grant or self.grant
        if grant is None:
            raise AuthorizationError("nothing to revoke: no grant")
        live = grant.expires_at is None or grant.expires_at > time.time()
        tokens = [
            (hint, token)
            for hint, token in (
                ("refresh_token", grant.refresh_token),
                ("access_token", grant.access_token if live else None),
            )
            if token is not None
        ]
        revoked: list[str] = []
        failed: dict[str, str] = {}
        offered = True
        try:
            async with self.http() as http:
                metadata = self.metadata
                if metadata is None or metadata.issuer != grant.issuer:
                    metadata = await fetch_server_metadata(http, grant.issuer)
                endpoint = metadata.revocation_endpoint
                offered = endpoint is not None
                if endpoint is not None:
                    require_secure(endpoint, "revocation endpoint")
                    for hint, token in tokens:
                        try:
                            await revoke_token(
                                http, endpoint, metadata, grant, token, hint, self.signer()
                            )
                            revoked.append(hint)
                        except AuthorizationError as exc:
                            failed[hint] = str(exc)
        except AuthorizationError as exc:  # no metadata, or an endpoint refused as unsafe
            failed = {hint: str(exc) for hint, _ in tokens if hint not in revoked}
        if revoked:
            await self._drop_tokens(grant)
        return Revocation(
            issuer=grant.issuer,
            resource=grant.resource,
            offered=offered,
            revoked=tuple(revoked),
            failed=failed,
        )

    async def _drop_tokens(self, grant: Grant) -> None:
        bare = msgspec.structs.replace(
            grant, access_token=None, refresh_token=None, expires_at=None, issued_at=None
        )
        if self.grant is not None and (self.grant.issuer, self.grant.resource) == (
            grant.issuer,
            grant.resource,
        ):
            self.grant = bare
        if await self.storage.load(grant.issuer, grant.resource) is not None:
            await self.storage.save(bare)

    async def logout(self, server_url: str) -> list[Revocation]:
        """Revoke (see `revoke`) and forget every grant kept for `server_url`, each
        removed from storage even when its revocation failed; one result per grant
        (none: there was nothing kept)."""
        results = []
        for grant in await self.storage.grants():
            if resource_covers(grant.resource, server_url):
                results.append(await self.revoke(grant))
                await self.storage.remove(grant.issuer, grant.resource)
        if self.grant is not None and resource_covers(self.grant.resource, server_url):
            self.grant = None
        return results
