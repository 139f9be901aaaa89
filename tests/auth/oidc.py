"""The real OpenID provider of the end-to-end tests (npm oidc-provider, pinned, run
with the Node 22 and the npm package the test cache provides) and a scripted user
for its login and consent pages."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx

from mcpgen.auth import AuthorizationError
from tests import tooling
from tests.processes import free_port

__all__ = ["INTROSPECTOR", "PROVIDER", "NoLogin", "ScriptedLogin", "provider"]

PROVIDER = "oidc-provider@9.13.3"
SCRIPT = Path(__file__).with_name("oidc_provider.mjs")
INTROSPECTOR = ("mcp-introspector", "introspector-secret")  # a client of the provider


@contextmanager
def provider(
    resource: str, *, ttl: int = 600, opaque: str | None = None, port: int | None = None
) -> Iterator[str]:
    """The provider on 127.0.0.1 (at `port`, else a free one), issuing JWT access
    tokens for `resource` and opaque ones for `opaque`, living `ttl` seconds; yields
    its issuer URL."""
    modules = tooling.npm_package(PROVIDER)
    port = port or free_port()
    extra = [str(ttl), *([opaque] if opaque else [])]
    process = subprocess.Popen(
        [tooling.node22(), str(SCRIPT), str(modules), str(port), resource, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready = process.stdout.readline()
        assert ready.strip() == "ready", process.stderr.read() if process.stderr else ""
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)


class ScriptedLogin:
    """Plays the user: follows the provider's redirects, signs in as `user` on the
    login page and approves on the consent page, then reads the redirect back."""

    redirect_uri = "http://127.0.0.1:8976/callback"

    def __init__(self, user: str = "alice") -> None:
        self.user = user
        self.logins = 0
        self.scopes: list[str] = []  # the scope asked for, per login

    async def authorize(self, url: str, state: str) -> dict[str, str]:
        self.logins += 1
        self.scopes.append(dict(parse_qsl(urlsplit(url).query)).get("scope", ""))
        async with httpx.AsyncClient(follow_redirects=False) as browser:
            response = await browser.get(url)
            for _ in range(12):
                if response.is_redirect:
                    target = urljoin(str(response.url), response.headers["location"])
                    if target.startswith(self.redirect_uri):
                        return dict(parse_qsl(urlsplit(target).query))
                    response = await browser.get(target)
                    continue
                page = response.text
                prompt = re.search(r'name="prompt" value="(\w+)"', page)
                assert response.status_code == 200 and prompt, page[:500]
                form = {"prompt": prompt.group(1), "login": self.user, "password": "x"}
                response = await browser.post(str(response.url), data=form)
        raise AssertionError("the provider never redirected back")


class NoLogin:
    redirect_uri = ScriptedLogin.redirect_uri

    async def authorize(self, url: str, state: str) -> dict[str, str]:
        raise AuthorizationError("a stored grant should have been enough")
