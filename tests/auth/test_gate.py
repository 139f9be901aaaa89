"""The auth gate in-process: any Authorization value gets an answer, never an exception."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen.auth import AccessToken, AuthSettings, StaticTokenVerifier
from mcpgen.auth._server import AuthGate

GATE = AuthGate(
    AuthSettings(
        StaticTokenVerifier({"good": AccessToken(subject="s")}), resource="https://a.example/mcp"
    ),
    "/mcp",
)


def scope(*values: bytes) -> dict[str, object]:
    headers = [(b"host", b"a.example")] + [(b"authorization", v) for v in values]
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=10_000), max_size=3))
def test_any_authorization_values_get_an_answer(values: list[bytes]) -> None:
    verdict = asyncio.run(GATE.admit(scope(*values)))
    if isinstance(verdict, AccessToken):
        assert len(values) == 1 and values[0].split() == [values[0].split()[0], b"good"]
    else:
        status, body, headers = verdict
        assert status in (400, 401)
        assert body.startswith(b"{")
        ((name, challenge),) = headers
        assert name == b"www-authenticate" and challenge.startswith(b"Bearer ")
        challenge.decode("ascii")  # nothing of the request leaks into the header raw


def test_the_known_fast_path_agrees_with_admit() -> None:
    assert GATE.known(scope(b"Bearer good")) is None  # not verified yet
    assert isinstance(asyncio.run(GATE.admit(scope(b"Bearer good"))), AccessToken)
    assert GATE.known(scope(b"Bearer good")) == AccessToken(subject="s")
    assert GATE.known(scope(b"Bearer good", b"Bearer good")) is None  # duplicates: admit
    assert asyncio.run(GATE.admit(scope(b"Bearer good", b"Bearer good")))[0] == 400  # type: ignore[index]
