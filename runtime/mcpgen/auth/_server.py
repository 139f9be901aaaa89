"""The HTTP app's door: bearer tokens checked before any MCP endpoint is served, and
the protected resource metadata served next to it.

Everything here answers with `(status, body, headers)` for the app to write; the app
(`mcpgen.transports._http`) calls `metadata` for `/.well-known/...` paths and `admit`
for every MCP request. Verified tokens are cached (`TokenCache`), so a client reusing
its token costs a dict lookup per request.

Per-feature scopes are not judged here: the gate reads no body. The core decides them
on the params it decoded for the handler (`mcpgen._server._authorize`), so the check
and the call cannot disagree; a refused request comes back as a `Refusal`, which
`insufficient` turns into `403 insufficient_scope` (naming every scope the call needs,
the held ones included, so a client can ask for the union) whatever the revision.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import msgspec

from mcpgen.auth._dpop import DPoP, ProofCheck, Refusal, bound_key
from mcpgen.auth._metadata import WELL_KNOWN, AuthSettings, challenge, metadata_url
from mcpgen.auth._tokens import MAX_TOKEN_BYTES, AccessToken, CheckingVerifier, TokenCache
from mcpgen.stores import StoreUnavailableError

__all__ = ["Answer", "AuthGate"]

log = logging.getLogger("mcpgen.auth")
Scope = dict[str, Any]
Headers = list[tuple[bytes, bytes]]
Answer = tuple[int, bytes, Headers]  # a response the app writes as JSON instead of serving
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def _error_body(error: str, description: str | None) -> bytes:
    body = (
        {"error": error}
        if description is None
        else {"error": error, "error_description": description}
    )
    return msgspec.json.encode(body)


class AuthGate:
    """Bearer authentication and scope checks for one HTTP app (`McpAsgiApp`), whose MCP
    endpoint is at `path` (without any mount prefix)."""

    def __init__(self, settings: AuthSettings, path: str) -> None:
        self.settings = settings
        self.path = path
        self.cache = TokenCache(settings.cache_seconds, settings.cache_size)
        self._failures: set[str] = set()  # the kinds of verifier failure logged in full
        verifier = settings.verifier
        self._check = verifier.check if isinstance(verifier, CheckingVerifier) else None
        resource = settings.resource
        # DPoP (RFC 9449): proofs are checked whenever a token is bound to a key;
        # advertised only when configured.
        self.dpop = settings.dpop or DPoP.quiet()
        self._proofs = ProofCheck(self.dpop, resource, path)
        self._fixed_metadata = None if resource is None else metadata_url(resource)
        self._own_suffix = None if resource is None else urlsplit(resource).path.rstrip("/")

    # -- where this resource and its metadata are ----------------------------------------
    def resource(self, scope: Scope, suffix: str | None = None) -> str:
        """This resource's URL: the configured one, else derived from the request (its
        scheme and Host, the mount point, the endpoint path)."""
        if self.settings.resource is not None:
            return self.settings.resource
        host = "localhost"
        for name, value in scope["headers"]:
            if name == b"host":
                host = value.decode("latin-1")
                break
        path = suffix if suffix else scope.get("root_path", "") + self.path
        return f"{scope.get('scheme', 'http')}://{host}{path}"

    def metadata_location(self, scope: Scope) -> str:
        fixed = self._fixed_metadata
        return fixed if fixed is not None else metadata_url(self.resource(scope))

    def metadata(self, scope: Scope, path: str) -> Answer | None:
        """The metadata document if `path` (the request's, mount prefix included) asks
        for it: at the well-known prefix plus the resource's path, or at the bare
        prefix (root); None for any other path."""
        rest = path[len(WELL_KNOWN) :]
        if not path.startswith(WELL_KNOWN) or rest[:1] not in ("", "/"):
            return None
        suffix = rest.rstrip("/")
        if self._own_suffix is not None:
            if suffix and suffix != self._own_suffix:
                return None
        elif suffix and not suffix.endswith(self.path):
            return None
        if scope["method"] not in ("GET", "HEAD"):
            return 405, _error_body("invalid_request", "GET only"), [(b"allow", b"GET")]
        body = self.settings.document(self.resource(scope, suffix or None))
        return 200, body, [(b"cache-control", b"public, max-age=3600")]

    # -- authentication ----------------------------------------------------------------------
    def known(self, scope: Scope) -> AccessToken | None:
        """The token of a request whose one `Authorization` value was verified before
        (one lookup, no parsing, no await); None: ask `admit` (always for the DPoP
        scheme, whose every request brings a new proof)."""
        raw: bytes | None = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                if raw is not None:
                    return None
                raw = value
        if raw is None or raw[:5].lower() == b"dpop ":
            return None
        return self.cache.get(raw)

    async def admit(self, scope: Scope) -> AccessToken | Answer:
        """The request's verified token, or the 401/400/403 answer to send instead."""
        raw: bytes | None = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                if raw is not None:
                    return self._refuse(
                        scope, 400, "invalid_request", "several Authorization headers"
                    )
                raw = value
        if raw is None:
            return self._refuse(scope, 401, None, None)  # no credentials at all
        if raw[:5].lower() == b"dpop ":
            dpop, token = True, raw[5:].strip().decode("latin-1")
        elif raw[:7].lower() == b"bearer ":
            dpop, token = False, raw[7:].strip().decode("latin-1")
        else:
            return self._refuse(scope, 401, None, None)  # no credentials we know
        # Cached by the header's raw value (`known`), the scheme included: a reused
        # token costs one lookup (and, with DPoP, the check of its fresh proof).
        access = self.cache.get(raw)
        fresh = access is None
        if access is None:
            verdict = await self._admit_token(scope, token, dpop)
            if isinstance(verdict, tuple):
                return verdict
            access = verdict
        if dpop:  # the proof first: nothing more is said to whoever cannot make one
            jkt = bound_key(access.claims)
            refused = await self._proofs.check(scope, token, jkt or "")
            if refused is not None:
                return self._refuse_dpop(scope, refused)
        if fresh:
            if not self.settings.required_scopes <= access.scopes:
                return self.insufficient(scope, self.settings.required_scopes | access.scopes)
            self.cache.put(raw, access)  # only tokens that may pass
        return access

    async def _admit_token(self, scope: Scope, token: str, dpop: bool) -> AccessToken | Answer:
        mechanism = "dpop" if dpop else "bearer"
        if len(token) > MAX_TOKEN_BYTES:
            return self._refuse(scope, 401, "invalid_token", "the token is too large", mechanism)
        if _TOKEN68.fullmatch(token) is None:
            return self._refuse(scope, 400, "invalid_request", "malformed access token", mechanism)
        verdict = await self._verify(token)
        if isinstance(verdict, str):
            return self._refuse(scope, 401, "invalid_token", verdict, mechanism)
        if verdict.principal is None:  # nothing to bind sessions and tasks to
            return self._refuse(
                scope, 401, "invalid_token", "the token names no subject or client", mechanism
            )
        bound = bound_key(verdict.claims) is not None
        if dpop and not bound:  # RFC 9449 4.3 (12): no key the proof's could match
            return self._refuse(
                scope, 401, "invalid_token", "the token is not bound to a DPoP key", mechanism
            )
        if not dpop and bound:  # RFC 9449 7.2: no downgrade of a bound token
            return self._refuse(
                scope, 401, "invalid_token", "a DPoP-bound token needs the DPoP scheme", mechanism
            )
        if not dpop and self.dpop.required:
            return self._refuse(scope, 401, "invalid_token", "only DPoP-bound tokens are accepted")
        return verdict

    async def _verify(self, token: str) -> AccessToken | str:
        try:
            if self._check is not None:
                return await self._check(token)
            found = await self.settings.verifier.verify(token)
        except StoreUnavailableError:  # no token can be judged now: the app answers 503
            raise
        except Exception as exc:  # a verifier's bug must not take the endpoint down
            # A traceback once per kind of failure; a token that keeps failing the same
            # way (sent on every request) is one line each time.
            kind = f"{type(exc).__module__}.{type(exc).__qualname__}"
            if kind in self._failures:
                log.error("the token verifier failed: %s", kind)
            else:
                self._failures.add(kind)
                log.exception("the token verifier failed")
            return "the token could not be verified"
        return found if found is not None else "the token is invalid or expired"

    # -- answers -----------------------------------------------------------------------------
    def _refuse(
        self,
        scope: Scope,
        status: int,
        error: str | None,
        description: str | None,
        mechanism: str | None = None,
    ) -> Answer:
        """A refusal whose challenges follow RFC 9449 section 7.2: the error goes in
        the challenge of the scheme the request used; a `DPoP` challenge (naming the
        proof algorithms) is added when DPoP is advertised or was used, and the
        `Bearer` one is left out when only DPoP-bound tokens are accepted."""
        where, needed = self.metadata_location(scope), self.settings.required_scopes
        algs = self.dpop.algorithms
        dpop_error = mechanism == "dpop" or (self.dpop.required and error is not None)
        bearer = challenge(where, needed, None if dpop_error else error, description)
        dpop = challenge(where, needed, error if dpop_error else None, description, algs=algs)
        headers: Headers = []
        if dpop_error:
            headers.append((b"www-authenticate", dpop))
        if not self.dpop.required:
            headers.append((b"www-authenticate", bearer))
        if not dpop_error and (self.dpop.advertised or self.dpop.required):
            headers.append((b"www-authenticate", dpop))
        body = _error_body(error or "invalid_token", description or "an access token is required")
        return status, body, headers

    def _refuse_dpop(self, scope: Scope, refused: Refusal) -> Answer:
        if refused.status == 503:  # the replay cache is away: say nothing more
            body = _error_body(refused.error, refused.description)
            return 503, body, [(b"retry-after", b"1")]
        status, body, headers = self._refuse(
            scope, refused.status, refused.error, refused.description, "dpop"
        )
        if refused.nonce is not None:
            headers += [(b"dpop-nonce", refused.nonce.encode()), (b"cache-control", b"no-store")]
        return status, body, headers

    def insufficient(self, scope: Scope, scopes: frozenset[str] | Sequence[str]) -> Answer:
        """403, in the challenge of the scheme the token came with (RFC 9449 7.2)."""
        description = "the token lacks a scope this request needs"
        dpop = any(n == b"authorization" and v[:5].lower() == b"dpop " for n, v in scope["headers"])
        header = challenge(
            self.metadata_location(scope),
            frozenset(scopes),
            "insufficient_scope",
            description,
            algs=self.dpop.algorithms if dpop else None,
        )
        return 403, _error_body("insufficient_scope", description), [(b"www-authenticate", header)]
