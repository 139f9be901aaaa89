"""The `Server` constructor's checked options (mcpgen.server._setup) reach the core it
builds as given, in the core's units, and a wrong one is refused at construction, in
the order the options are checked."""

from __future__ import annotations

import pytest
from msgspec import UNSET

from mcpgen import CacheHint, ConfigurationError, Server


def test_the_options_reach_the_core_in_its_units() -> None:
    server = Server(
        "opts",
        page_size=3,
        cache={"tools/list": CacheHint(ttl_ms=5000)},
        mask_errors=False,
        logging=False,
        task_ttl_seconds=1.5,
        task_poll_seconds=0.25,
        max_tasks_per_client=7,
        sync_workers=0,
    )
    core = server.core
    assert (core.page_size, core.mask_errors, core.logging) == (3, False, False)
    assert core.cache["tools/list"].ttl_ms == 5000
    assert (core.tasks.ttl_ms, core.tasks.poll_ms, core.tasks.max_running) == (1500, 250, 7)
    unbounded = Server("forever", task_ttl_seconds=None, max_tasks_per_client=None).core
    assert (unbounded.tasks.ttl_ms, unbounded.tasks.max_running) == (None, None)


def test_the_implementation_leaves_out_what_was_not_given() -> None:
    plain = Server("plain", "2.0").info
    assert (plain.name, plain.version, plain.title, plain.website_url) == (
        "plain",
        "2.0",
        UNSET,
        UNSET,
    )
    told = Server("told", title="Told", description="d", website_url="https://x.test").info
    assert (told.title, told.description, told.website_url) == ("Told", "d", "https://x.test")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"page_size": 0, "task_poll_seconds": 0}, "page_size must be at least 1"),
        ({"task_ttl_seconds": 0, "task_poll_seconds": 0}, "task_ttl_seconds must be positive"),
        ({"task_poll_seconds": -1, "max_tasks_per_client": 0}, "task_poll_seconds must be"),
        ({"max_tasks_per_client": 0, "keys": object(), "state_keys": ["k"]}, "max_tasks_per"),
    ],
)
def test_a_wrong_option_is_refused_first_come_first_named(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Server("wrong", **options)  # type: ignore[arg-type]
