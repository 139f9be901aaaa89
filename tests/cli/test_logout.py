"""`mcpgen logout URL` revokes the kept tokens (RFC 7009) before deleting them, against
the in-process authorization server of tests/auth/revoking_world.py served over
loopback HTTP: revoked when it can, deleted all the same when it cannot, and said so
on stderr without a secret."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from tests.auth.revoking_world import RevokingWorld
from tests.cli.test_login import mcpgen, protected
from tests.processes import free_port
from tests.transports.httpharness import running


@contextlib.contextmanager
def serving(revocation: str) -> Iterator[RevokingWorld]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    world = RevokingWorld(server_url=f"{base}/mcp", issuer=base, revocation=revocation)
    config = uvicorn.Config(
        protected(world), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    with running(uvicorn.Server(config)):
        yield world


def _logged_in(world: RevokingWorld, home: Path) -> tuple[str, str]:
    logged = mcpgen(home, "login", world.server_url)
    assert logged.returncode == 0, logged.stderr
    (access,) = world.tokens
    (refresh,) = world.refresh_tokens
    return access, refresh


def test_logout_revokes_both_tokens(tmp_path: Path) -> None:
    with serving("ok") as world:
        home = tmp_path / "oauth"
        access, refresh = _logged_in(world, home)
        out = mcpgen(home, "logout", world.server_url)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == f"logged out of {world.server_url} ({world.issuer})"
        assert out.stderr == ""
        assert [(r["token"], r["token_type_hint"]) for r in world.revocations] == [
            (refresh, "refresh_token"),
            (access, "access_token"),
        ]
        assert world.tokens == {} and world.refresh_tokens == {}
        assert list(home.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "reason"),
    [("down", "HTTP 503"), ("error", "HTTP 400 invalid_request: try again later")],
)
def test_a_failed_revocation_still_deletes_and_says_so(
    mode: str, reason: str, tmp_path: Path
) -> None:
    with serving(mode) as world:
        home = tmp_path / "oauth"
        access, refresh = _logged_in(world, home)
        out = mcpgen(home, "logout", world.server_url)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == f"logged out of {world.server_url} ({world.issuer})"
        assert list(home.iterdir()) == []  # deleted here all the same
        endpoint = world.revocation_endpoint
        assert out.stderr.splitlines() == [
            f"warning: could not revoke the {kind} at {world.issuer} (revocation at"
            f" {endpoint}: {reason}); deleted here, it stays valid until it expires"
            for kind in ("refresh token", "access token")
        ]
        for secret in (access, refresh, *filter(None, world.clients.values())):
            assert secret not in out.stderr and secret not in out.stdout
        assert access in world.tokens  # indeed still valid at the server


@pytest.mark.slow
def test_without_revocation_at_the_server_it_says_the_tokens_stay_valid(
    tmp_path: Path,
) -> None:
    with serving("absent") as world:
        home = tmp_path / "oauth"
        _logged_in(world, home)
        out = mcpgen(home, "logout", world.server_url)
        assert out.returncode == 0, out.stderr
        assert out.stderr.strip() == (
            f"note: {world.issuer} offers no token revocation; the tokens were only"
            " deleted here and stay valid until they expire"
        )
        assert world.revocations == [] and list(home.iterdir()) == []
