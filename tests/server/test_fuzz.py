"""Any input line yields zero or one reply line and never raises."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpgen._server import DEFERRED, Pending
from tests.server.conftest import build_server
from tests.server.harness import Recorder

SERVER = build_server()
METHODS = [
    "tools/call",
    "tools/list",
    "server/discover",
    "initialize",
    "ping",
    "prompts/get",
    "resources/read",
    "completion/complete",
    "subscriptions/listen",
    "logging/setLevel",
    "notifications/cancelled",
    "x",
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]),
        "id": st.one_of(
            st.integers(), st.text(max_size=5), st.none(), st.booleans(), st.floats(allow_nan=False)
        ),
        "method": st.one_of(st.sampled_from(METHODS), json_values),
        "params": st.one_of(
            json_values,
            st.fixed_dictionaries(
                {
                    "_meta": st.fixed_dictionaries(
                        {
                            "io.modelcontextprotocol/protocolVersion": st.sampled_from(
                                ["2026-07-28", "x", 1]
                            ),
                            "io.modelcontextprotocol/clientCapabilities": json_values,
                        }
                    ),
                    "name": st.sampled_from(["echo", "add", "confirm", "nope"]),
                    "arguments": json_values,
                }
            ),
        ),
        "result": json_values,
        "error": json_values,
    },
)


def check(line: bytes) -> None:
    session = SERVER.session(Recorder())
    out = session.receive(line, Recorder())
    if isinstance(out, Pending):
        out = asyncio.run(asyncio.wait_for(out.coro, 5))
    assert out is None or out is DEFERRED or isinstance(out, bytes)
    if isinstance(out, bytes):
        assert b"\n" not in out
        json.loads(out)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_bytes(line: bytes) -> None:
    check(line)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages | st.lists(messages, max_size=3))
def test_any_json_rpc_shape(message: object) -> None:
    check(json.dumps(message).encode())
