"""`IntrospectionVerifier`: opaque tokens checked by asking the authorization server
(RFC 7662 token introspection) with httpx.

The resource server authenticates to the introspection endpoint with its own client
credentials (`client_secret_basic`, the default, or `client_secret_post`). An answer
with `active: false` refuses the token. Active answers are cached until the token's
`exp` and at most `cache_seconds` (revocation shows after that long at worst), bounded
in size; refusals for `negative_cache_seconds`, bounded too (`_backoff.Refusals`), so a
token replayed after its refusal costs the endpoint nothing meanwhile. Concurrent
checks of one token share a single request to the endpoint.

An endpoint that cannot be asked (down, slow past the timeout, a 5xx, a 401 or 403 to
our credentials, an answer that is no JSON object) judges no token: `check` raises
`VerifierUnavailableError`, which the HTTP app answers with 503, never as a refused
token (the client's token may be fine). After `failure_threshold` such failures in a
row the verifier stops asking for a while (`_backoff.Circuit`: `backoff_seconds`,
doubling up to `max_backoff_seconds`), so new tokens fail at once instead of each
waiting out the timeout.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import httpx

from mcpgen._errors import ConfigurationError
from mcpgen.auth._backoff import Circuit, Refusals, VerifierUnavailableError
from mcpgen.auth._remote import HttpVerifier
from mcpgen.auth._tokens import (
    MAX_TOKEN_BYTES,
    AccessToken,
    TokenCache,
    audience_of,
    scopes_of,
    usable_time,
)

__all__ = ["IntrospectionVerifier"]

log = logging.getLogger("mcpgen.auth")


class IntrospectionVerifier(HttpVerifier):
    """Verifies tokens at `endpoint` (RFC 7662).

    `client_id`/`client_secret` authenticate this resource server (`auth_method`
    `"basic"` or `"post"`). `audience`, when set (or adopted from
    `AuthSettings(resource=...)` with `check_audience=True`), must appear in the
    answer's `aud`; many servers do not return one, so the check is opt-in. `issuer`,
    when set, must equal the answer's `iss` if it has one.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        auth_method: Literal["basic", "post"] = "basic",
        audience: str | Sequence[str] | None = None,
        check_audience: bool = False,
        issuer: str | None = None,
        cache_seconds: float = 60.0,
        cache_size: int = 10_000,
        negative_cache_seconds: float = 30.0,
        negative_cache_size: int = 10_000,
        failure_threshold: int = 3,
        backoff_seconds: float = 2.0,
        max_backoff_seconds: float = 30.0,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if auth_method not in ("basic", "post"):
            raise ConfigurationError("auth_method is 'basic' or 'post'")
        if (client_id is None) != (client_secret is None):
            raise ConfigurationError("give both client_id and client_secret, or neither")
        self.endpoint = endpoint
        self.client_id, self.client_secret, self.auth_method = client_id, client_secret, auth_method
        self.audience: tuple[str, ...] | None = (
            None
            if audience is None
            else (audience,)
            if isinstance(audience, str)
            else tuple(audience)
        )
        self.check_audience = check_audience or audience is not None
        self.issuer = issuer
        self._clock = clock
        self.cache = TokenCache(cache_seconds, cache_size, clock)
        self.refusals = Refusals(negative_cache_seconds, negative_cache_size)
        self.circuit = Circuit(failure_threshold, backoff_seconds, max_backoff_seconds)
        self._client = http
        self._own_client: httpx.AsyncClient | None = None
        self.requests = 0  # how many times the endpoint was asked (tests, metrics)
        self._pending: dict[str, asyncio.Future[AccessToken | str]] = {}

    async def check(self, token: str) -> AccessToken | str:
        if len(token) > MAX_TOKEN_BYTES:
            return "the token is too large"
        cached = self.cache.get(token)
        if cached is not None:
            return cached
        refused = self.refusals.get(token)
        if refused is not None:
            return refused
        # Requests arriving together with a new token share one question.
        pending = self._pending.get(token)
        if pending is None:
            pending = self._pending[token] = asyncio.ensure_future(self._settle(token))
            pending.add_done_callback(lambda _: self._pending.pop(token, None))
        return await asyncio.shield(pending)

    async def _settle(self, token: str) -> AccessToken | str:
        found = self._judge(await self._ask(token))
        if isinstance(found, AccessToken):
            self.cache.put(token, found)
        else:
            self.refusals.put(token, found)
        return found

    async def _ask(self, token: str) -> dict[str, Any]:
        """The endpoint's answer about `token`; `VerifierUnavailableError` when there is
        none (or the circuit says not to ask)."""
        circuit = self.circuit
        circuit.admit()
        answer: dict[str, Any] | None = None
        try:
            answer = await self._post(token)
        finally:  # (a cancelled question counts as failed: the probe is not left pending)
            if answer is not None:
                circuit.succeeded()
            else:
                circuit.failed()
        if answer is None:
            raise VerifierUnavailableError("the authorization server could not be asked")
        return answer

    async def _post(self, token: str) -> dict[str, Any] | None:
        form = {"token": token, "token_type_hint": "access_token"}
        auth: httpx.BasicAuth | None = None
        if self.client_id is not None and self.client_secret is not None:
            if self.auth_method == "basic":
                auth = httpx.BasicAuth(self.client_id, self.client_secret)
            else:
                form |= {"client_id": self.client_id, "client_secret": self.client_secret}
        self.requests += 1
        try:
            response = await self._http().post(
                self.endpoint, data=form, auth=auth or httpx.USE_CLIENT_DEFAULT
            )
            if 400 <= response.status_code < 500 and response.status_code not in (401, 403):
                # The server refused the question about this token (a token it cannot
                # introspect): an answer, and a refusal. 401/403 are about our own
                # credentials: no token can be judged, as for a 5xx.
                log.info("token introspection refused a token: %d", response.status_code)
                return {"active": False}
            response.raise_for_status()
            answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("token introspection at %s failed: %s", self.endpoint, exc)
            return None
        if not isinstance(answer, dict):
            log.warning("token introspection at %s answered no JSON object", self.endpoint)
            return None
        return answer

    def _judge(self, answer: dict[str, Any]) -> AccessToken | str:
        if answer.get("active") is not True:
            return "the token is not active"
        exp = answer.get("exp")
        if exp is not None and not usable_time(exp):
            log.info("token introspection answered an exp that is no usable time")
            return "the token has an invalid expiry"
        expires_at = float(exp) if isinstance(exp, int | float) else None
        if expires_at is not None and expires_at <= self._clock():
            return "the token has expired"
        issuer = answer.get("iss")
        if self.issuer is not None and issuer is not None and issuer != self.issuer:
            return "the token was issued by another authorization server"
        aud = answer.get("aud")
        audience = audience_of(aud)
        if (
            self.check_audience
            and self.audience is not None
            and not any(a in self.audience for a in audience)
        ):
            return "the token was issued for another resource"
        sub, client = answer.get("sub"), answer.get("client_id")
        return AccessToken(
            subject=sub if isinstance(sub, str) else None,
            client_id=client if isinstance(client, str) else None,
            scopes=scopes_of(answer.get("scope")),
            expires_at=expires_at,
            audience=audience,
            issuer=issuer if isinstance(issuer, str) else None,
            claims=answer,
        )
