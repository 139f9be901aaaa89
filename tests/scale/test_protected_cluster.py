"""The documented scale-out path, protected: examples/cluster/run.sh with the
`mcpgen serve --auth-*` options (JWTs checked against a JWKS served here), two workers
behind nginx, plain round robin. Whatever worker a request lands on checks the token
the same way, and what one principal opened (a legacy session, a task) is refused to
another principal on the other worker. A DPoP proof used at one worker is refused as
a replay at the other (the jti cache lives in the cluster's Redis). Also
`mcpgen serve --workers 2` with the same options, on one shared socket."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from joserfc.jwk import ECKey, KeySet

from mcpgen import Client, McpError, ToolTask
from mcpgen.auth._oauth_dpop import DPoPKey
from tests.auth.keys import ISSUER, ec_key, sign
from tests.processes import free_port, stop
from tests.scale.cluster_run import REPO, Cluster, cluster
from tests.stores.redis_server import redis_url
from tests.transports.httpharness import rpc, running

pytestmark = pytest.mark.slow

LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


class Jwks:
    """An ASGI app serving one key set."""

    def __init__(self, key: ECKey) -> None:
        self.body = json.dumps(KeySet([key]).as_dict()).encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


@contextlib.contextmanager
def jwks(key: ECKey) -> Iterator[str]:
    config = uvicorn.Config(Jwks(key), "127.0.0.1", 0, log_level="warning", lifespan="off")
    with running(uvicorn.Server(config)) as base:
        yield f"{base}/jwks"


class Protected:
    def __init__(self, running: Cluster, key: ECKey, resource: str) -> None:
        self.running, self.key, self.resource = running, key, resource
        self.url = running.url

    def token(self, subject: str, **claims: Any) -> str:
        return sign(self.key, sub=subject, aud=self.resource, scope="mcp:tools", **claims)

    def bearer(self, subject: str) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token(subject)}"}


@pytest.fixture(scope="module")
def protected(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Protected]:
    key = ec_key("cluster-key")
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    log = tmp_path_factory.mktemp("protected-cluster") / "run.log"
    with jwks(key) as jwks_uri:
        options = ["--auth-issuer", ISSUER, "--auth-jwks-uri", jwks_uri]
        options += ["--auth-scope", "mcp:tools", "--auth-dpop", "advertise"]
        with cluster(2, log, extra=options, port=port) as running:
            yield Protected(running, key, resource)


def upstreams(running: Cluster, since: int, method: str | None = None) -> list[str]:
    return [h.upstream for h in running.hits()[since:] if method is None or h.method == method]


def test_every_worker_requires_a_valid_token(protected: Protected) -> None:
    url = protected.url
    for _ in range(4):  # both workers, twice
        refused = httpx.post(url, headers=LEGACY, content=rpc(1, "ping"), timeout=10)
        assert refused.status_code == 401
        challenge = ", ".join(refused.headers.get_list("www-authenticate"))
        assert "oauth-protected-resource/mcp" in challenge and 'algs="' in challenge
        forged = sign(ec_key("another"), aud=protected.resource)
        bad = httpx.post(
            url, headers=LEGACY | {"authorization": f"Bearer {forged}"}, content=rpc(1, "ping")
        )
        assert bad.status_code == 401
    metadata = httpx.get(
        url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"), timeout=10
    ).json()
    assert metadata["resource"] == protected.resource
    assert metadata["authorization_servers"] == [ISSUER]


def test_a_legacy_session_is_refused_to_another_principal_on_every_worker(
    protected: Protected,
) -> None:
    url, alice, bob = protected.url, protected.bearer("alice"), protected.bearer("bob")
    made = httpx.post(url, headers=LEGACY | alice, content=rpc(0, "initialize", INIT), timeout=10)
    assert made.status_code == 200, made.text
    session = {"mcp-session-id": made.headers["mcp-session-id"]}
    before = len(protected.running.hits())
    for n in range(4):  # round robin: two requests on each worker
        mine = httpx.post(url, headers=LEGACY | session | alice, content=rpc(n, "ping"))
        assert mine.status_code == 200, mine.text
        theirs = httpx.post(url, headers=LEGACY | session | bob, content=rpc(n, "ping"))
        assert theirs.status_code == 404, theirs.text
    assert len(set(upstreams(protected.running, before))) == 2
    gone = httpx.delete(url, headers=session | bob, timeout=10)
    assert gone.status_code == 404
    assert httpx.delete(url, headers=session | alice, timeout=10).status_code in (200, 202, 204)


def test_a_task_is_refused_to_another_principal_on_every_worker(protected: Protected) -> None:
    url = protected.url

    async def scenario() -> str:
        alice_headers, bob_headers = protected.bearer("alice"), protected.bearer("bob")
        async with (
            Client.http(url, era="modern", headers=alice_headers) as alice,
            Client.http(url, era="modern", headers=bob_headers) as bob,
        ):
            handle = await alice.call_tool("slow_compute", {"seconds": 1, "label": "t"}, task=True)
            assert isinstance(handle, ToolTask), handle
            for _ in range(4):  # both workers, twice
                with pytest.raises(McpError):
                    await bob.get_task(handle.id)
                await alice.get_task(handle.id)
            result = await alice.wait_task(handle, timeout=30, poll=0.2)
            return str(result.content[0].text)  # type: ignore[union-attr]

    before = len(protected.running.hits())
    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == "Computed t in 1 s"
    assert len(set(upstreams(protected.running, before, "POST"))) == 2


def test_a_dpop_proof_used_at_one_worker_is_a_replay_at_the_other(protected: Protected) -> None:
    client_key = DPoPKey()
    jkt = ECKey.import_key(client_key.public).thumbprint()
    token = protected.token("dora", cnf={"jkt": jkt})
    url = protected.url
    as_bearer = httpx.post(
        url, headers=LEGACY | {"authorization": f"Bearer {token}"}, content=rpc(1, "ping")
    )
    assert as_bearer.status_code == 401  # bound: the DPoP scheme only
    before = len(protected.running.hits())
    proof = client_key.proof("POST", url, token)
    headers = LEGACY | {"authorization": f"DPoP {token}", "dpop": proof}
    body = rpc(0, "initialize", INIT)
    first = httpx.post(url, headers=headers, content=body, timeout=10)
    assert first.status_code == 200, first.text
    # Replayed until one replay has reached the other worker (round robin alternates,
    # but nginx's worker processes keep a turn each): each one refused as used before.
    for _ in range(8):
        replayed = httpx.post(url, headers=headers, content=body, timeout=10)
        assert replayed.status_code == 401
        assert "used before" in replayed.headers["www-authenticate"]
        if len(set(upstreams(protected.running, before))) == 2:
            break
        time.sleep(0.2)  # (and the access log written)
    assert len(set(upstreams(protected.running, before))) == 2  # the other worker said no


def test_mcpgen_serve_workers_takes_the_auth_options(tmp_path: Path) -> None:
    key = ec_key("serve-key")
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with jwks(key) as jwks_uri, (tmp_path / "serve.log").open("wb") as sink:
        cmd = [sys.executable, "-m", "mcpgen", "serve", str(REPO / "examples/everything.py")]
        cmd += ["--transport", "http", "--port", str(port), "--workers", "2"]
        cmd += ["--redis", redis_url(), "--auth-issuer", ISSUER, "--auth-jwks-uri", jwks_uri]
        cmd += ["--auth-resource", url]
        process = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, cwd=REPO)
        try:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, (tmp_path / "serve.log").read_text()
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.post(url, headers=LEGACY, content=rpc(1, "ping")).status_code == 401:
                        break
                assert time.monotonic() < deadline, "the workers did not start"
                time.sleep(0.2)
            token = sign(key, sub="alice", aud=url)
            for n in range(6):  # the kernel spreads connections over both workers
                ok = httpx.post(
                    url,
                    headers=LEGACY | {"authorization": f"Bearer {token}"},
                    content=rpc(n, "initialize", INIT),
                    timeout=10,
                )
                assert ok.status_code == 200, ok.text
                assert httpx.post(url, headers=LEGACY, content=rpc(n, "ping")).status_code == 401
        finally:
            stop(process)
