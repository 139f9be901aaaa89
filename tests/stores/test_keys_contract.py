"""The contract every `KeyRing` keeps (mcpgen.stores), and the Sealer on top of it.

`IMPLEMENTATIONS` lists factories that build a ring from secrets, newest first (how
a deployment rotates: it hands every worker the new list); a ring that reads a
secret store appends its own and passes the same tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from mcpgen import ConfigurationError, McpError, Server
from mcpgen._server._state import Sealer
from mcpgen.stores import InMemoryKeyRing, KeyRing
from mcpgen.stores._keys import ENV_VAR, key_id

Factory = Callable[[Sequence[bytes]], KeyRing]
IMPLEMENTATIONS: list[Factory] = [InMemoryKeyRing]

OLD, NEW, OTHER = b"o" * 32, b"n" * 32, b"x" * 32
SEAL = {"method": "tools/call", "digest": "d1", "principal": "alice"}
NOW = [1_700_000_000.0]


@pytest.fixture(params=IMPLEMENTATIONS, ids=lambda f: f.__name__)
def ring(request: pytest.FixtureRequest) -> Factory:
    factory: Factory = request.param
    return factory


def sealer(keys: KeyRing) -> Sealer:
    return Sealer(keys, ttl_seconds=60, clock=lambda: NOW[0])


class Counting:
    """A ring that counts the keys asked for: opening must need exactly one."""

    def __init__(self, inner: KeyRing) -> None:
        self.inner = inner
        self.asked: list[str] = []

    def sealing_key(self) -> tuple[str, bytes]:
        return self.inner.sealing_key()

    def opening_key(self, key_id: str) -> bytes | None:
        self.asked.append(key_id)
        return self.inner.opening_key(key_id)


def test_the_newest_key_seals_and_every_key_opens(ring: Factory) -> None:
    keys = ring([NEW, OLD])
    kid, secret = keys.sealing_key()
    assert secret == NEW
    assert keys.opening_key(kid) == NEW
    assert keys.opening_key(key_id(OLD)) == OLD
    assert keys.opening_key(key_id(OTHER)) is None
    assert keys.opening_key("") is None


def test_workers_with_the_same_secrets_agree_on_key_ids(ring: Factory) -> None:
    one, two = ring([NEW, OLD]), ring([NEW, OLD])
    assert one.sealing_key() == two.sealing_key()
    token = sealer(one).seal({"n": 1}, **SEAL)
    assert sealer(two).open(token, **SEAL) == {"n": 1}


def test_rotation_old_tokens_open_new_tokens_use_the_new_key(ring: Factory) -> None:
    before = sealer(ring([OLD]))
    old_token = before.seal({"step": 1}, **SEAL)
    old_cursor = before.cursor("tools/list", 200)
    rotated = sealer(ring([NEW, OLD]))
    assert rotated.open(old_token, **SEAL) == {"step": 1}
    assert rotated.open_cursor("tools/list", old_cursor) == 200
    new_token = rotated.seal({"step": 2}, **SEAL)
    assert new_token.split(".")[1] == key_id(NEW)
    assert rotated.cursor("tools/list", 200).split(".")[0] == key_id(NEW)
    retired = sealer(ring([NEW]))
    assert retired.open(new_token, **SEAL) == {"step": 2}
    with pytest.raises(McpError) as raised:
        retired.open(old_token, **SEAL)
    assert raised.value.code == -32602 and "not issued by this server" in raised.value.message
    with pytest.raises(McpError, match="invalid cursor"):
        retired.open_cursor("tools/list", old_cursor)


def test_opening_asks_for_one_key_only(ring: Factory) -> None:
    counting = Counting(ring([NEW, OLD, OTHER]))
    seal = sealer(counting)
    old = sealer(ring([OTHER]))
    token, cursor = old.seal(None, **SEAL), old.cursor("prompts/list", 5)
    assert seal.open(token, **SEAL) is None
    assert seal.open_cursor("prompts/list", cursor) == 5
    assert counting.asked == [key_id(OTHER), key_id(OTHER)]


def test_cursors_carry_their_key_id_and_refuse_tampering(ring: Factory) -> None:
    seal = sealer(ring([NEW]))
    cursor = seal.cursor("tools/list", 400)
    kid, body, tag = cursor.split(".")
    assert kid == key_id(NEW)
    assert seal.open_cursor("tools/list", cursor) == 400
    forged = sealer(ring([OTHER])).cursor("tools/list", 400)
    for bad in (
        f"{key_id(OTHER)}.{body}.{tag}",  # another known-format id
        forged,  # sealed by a key we do not hold
        f"{kid}.{forged.split('.')[1]}.{forged.split('.')[2]}",  # our id, their tag
        f"{kid}.{body}",  # the pre-key-id format
        "garbage",
    ):
        with pytest.raises(McpError, match="invalid cursor"):
            seal.open_cursor("tools/list", bad)
    with pytest.raises(McpError, match="invalid cursor"):
        seal.open_cursor("prompts/list", cursor)  # another list's cursor


def test_tokens_are_bound_to_request_principal_and_expiry(ring: Factory) -> None:
    seal = sealer(ring([NEW]))
    token = seal.seal([1, 2], **SEAL)
    for change, reason in (
        ({"digest": "d2"}, "different request"),
        ({"principal": "bob"}, "different principal"),
    ):
        with pytest.raises(McpError, match=reason):
            seal.open(token, **{**SEAL, **change})
    NOW[0] += 61
    try:
        with pytest.raises(McpError, match="expired"):
            seal.open(token, **SEAL)
    finally:
        NOW[0] -= 61


# -- the in-memory ring's own operations ---------------------------------------------------------
def test_rotate_and_retire_in_place() -> None:
    keys = InMemoryKeyRing([OLD])
    seal = sealer(keys)
    old_token = seal.seal("s", **SEAL)
    assert keys.rotate(NEW) == key_id(NEW)
    assert keys.ids() == [key_id(NEW), key_id(OLD)]
    assert seal.open(old_token, **SEAL) == "s"
    assert seal.seal("t", **SEAL).split(".")[1] == key_id(NEW)
    with pytest.raises(ConfigurationError):
        keys.retire(key_id(NEW))  # the sealing key
    keys.retire(key_id(OLD))
    with pytest.raises(McpError, match="not issued"):
        seal.open(old_token, **SEAL)
    keys.rotate(OLD)  # back again: newest once more, nothing duplicated
    assert keys.ids() == [key_id(OLD), key_id(NEW)]


def test_keys_from_the_environment() -> None:
    env = {ENV_VAR: f"{NEW.decode()},{OLD.decode()},"}
    keys = InMemoryKeyRing.from_env(env)
    assert keys.sealing_key() == (key_id(NEW), NEW)
    assert keys.opening_key(key_id(OLD)) == OLD
    one, two = InMemoryKeyRing.from_env({}), InMemoryKeyRing.from_env({ENV_VAR: ""})
    assert one.sealing_key() != two.sealing_key()  # random: fine for one process only
    assert len(one.sealing_key()[1]) == 32
    with pytest.raises(ConfigurationError, match="16 bytes"):
        InMemoryKeyRing.from_env({ENV_VAR: "short"})
    with pytest.raises(ConfigurationError):
        InMemoryKeyRing([])


def test_the_sealer_takes_a_ring_a_list_or_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = InMemoryKeyRing([NEW])
    assert Sealer(keys).keys is keys
    assert Sealer([NEW, OLD]).keys.sealing_key() == (key_id(NEW), NEW)
    monkeypatch.setenv(ENV_VAR, OLD.decode())
    assert Sealer().keys.sealing_key() == (key_id(OLD), OLD)
    assert Sealer([]).keys.sealing_key() == (key_id(OLD), OLD)


def test_a_server_seals_with_the_ring_it_is_given() -> None:
    keys = InMemoryKeyRing([NEW])
    server = Server("keys", keys=keys)
    assert server.core.sealer.keys is keys
    assert server.core.sealer.cursor("tools/list", 1).startswith(key_id(NEW) + ".")
    with pytest.raises(ConfigurationError, match="not both"):
        Server("keys", keys=keys, state_keys=[OLD])
