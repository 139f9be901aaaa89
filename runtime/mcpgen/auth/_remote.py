"""What the verifiers that ask a server over HTTP share (`JWTVerifier` for its JWKS,
`IntrospectionVerifier` for its endpoint): the audience a protected resource hands
them, an httpx client (the caller's, or one of their own closed by `aclose`), and
`verify` answered from `check`."""

from __future__ import annotations

import abc

import httpx

from mcpgen.auth._tokens import AccessToken

__all__ = ["HttpVerifier"]


class HttpVerifier(abc.ABC):
    audience: tuple[str, ...] | None
    _client: httpx.AsyncClient | None
    _own_client: httpx.AsyncClient | None

    def bind_resource(self, resource: str) -> None:
        """Adopt the protected resource's URL as the audience unless one was given."""
        if self.audience is None:
            self.audience = (resource,)

    def _http(self) -> httpx.AsyncClient:
        if self._client is not None:
            return self._client
        if self._own_client is None:
            self._own_client = httpx.AsyncClient(timeout=5.0, follow_redirects=False)
        return self._own_client

    async def aclose(self) -> None:
        """Close the httpx client this verifier made for itself (never the caller's)."""
        if self._own_client is not None:
            await self._own_client.aclose()
            self._own_client = None

    async def verify(self, token: str) -> AccessToken | None:
        found = await self.check(token)
        return found if isinstance(found, AccessToken) else None

    @abc.abstractmethod
    async def check(self, token: str) -> AccessToken | str:
        """The token, or why it is refused."""
