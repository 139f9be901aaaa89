"""The in-process authorization server of `oauth_world` with a revocation endpoint
(RFC 7009) that checks what a strict one checks (the client's authentication as at
the token endpoint, a `token_type_hint`) and can be told to fail."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl

import httpx

from tests.auth.oauth_world import World


@dataclass
class RevokingWorld(World):
    """`revocation`: how the endpoint answers: "ok" (revokes), "error" (400 with an
    OAuth error), "down" (503 without a body) or "absent" (not advertised)."""

    prm_location: str = "path"  # found by `login`, which has no challenge to follow
    revocation: str = "ok"
    revocations: list[dict[str, str]] = field(default_factory=list)

    @property
    def revocation_endpoint(self) -> str:
        return f"{self.issuer.rstrip('/')}/revoke"

    def metadata(self) -> httpx.Response:
        answer = super().metadata()
        body = answer.json()
        if self.revocation != "absent":
            body["revocation_endpoint"] = self.revocation_endpoint
        return httpx.Response(200, json=body)

    def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url.copy_with(query=None))
        if url == self.revocation_endpoint and request.method == "POST":
            self.log.append(f"POST {url}")
            return self.revoke(request)
        return super().handle(request)

    def revoke(self, request: httpx.Request) -> httpx.Response:
        form = dict(parse_qsl(request.content.decode()))
        client_id = self._client_id(request, form)
        self.revocations.append(
            {
                **form,
                "_client": client_id,
                "_authorization": request.headers.get("authorization", ""),
            }
        )
        assert client_id in self.clients, "revocation by an unknown client"
        assert form["token_type_hint"] in ("refresh_token", "access_token")
        if self.revocation == "error":
            failure = {"error": "invalid_request", "error_description": "try again later"}
            return httpx.Response(400, json=failure)
        if self.revocation == "down":
            return httpx.Response(503)
        self.tokens.pop(form["token"], None)
        self.refresh_tokens.pop(form["token"], None)
        return httpx.Response(200)
