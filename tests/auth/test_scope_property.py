"""A property over every transport (issue 22): for generated bodies (odd numbers,
duplicate keys, deep nesting, unknown members, escapes, huge strings, task
augmentation), a token lacking the `admin` scope never runs a handler that needs it,
and no body is answered with a 5xx. Bodies go to a 2026-07-28 request, a 2025-11-25
session, a 2025-03-26 batch and HTTP+SSE `/messages`, all on one real server."""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.auth.scoped_world import MODERN_META, RAN, world

# The scoped targets, and spellings of them a second parser might read differently.
NAMES = ["admin_only", "admin_task", "admin_prompt", "echo", "missing"]
SPELLINGS = {
    "admin_only": ['"admin_only"', '"admin\\u005fonly"', '"\\u0061dmin_only"'],
    "admin_task": ['"admin_task"', '"admin\\u005ftask"'],
    "admin_prompt": ['"admin_prompt"', '"admin\\u005fprompt"'],
}
URIS = ['"res://secret"', '"res://vault/7"', '"res:\\/\\/secret"', '"res://vault/%2e%2e"']
METHODS = [
    "tools/call",
    "prompts/get",
    "resources/read",
    "resources/subscribe",
    "subscriptions/listen",
    "completion/complete",
    "tasks/get",
]

odd_numbers = st.sampled_from(
    ["1e400", "-1e400", "1" * 5000, "-0", "1E+999", "0.0000000000000000000001e-400", "1.5"]
)
strings = st.one_of(
    st.text(max_size=20).map(json.dumps),
    st.integers(0, 200_000).map(lambda n: json.dumps("x" * n)),
    st.sampled_from(['"\\ud800"', '"\\u0000"', '"\\"}]"']),
)
nested = st.integers(1, 6000).map(lambda n: "[" * n + "]" * n) | st.integers(1, 3000).map(
    lambda n: '{"a":' * n + "1" + "}" * n
)
junk = st.one_of(
    odd_numbers, odd_numbers, nested, strings, st.sampled_from(["null", "true", "{}", "[]"])
)


@st.composite
def members(draw: st.DrawFn, method: str) -> list[tuple[str, str]]:
    """The members of `params` (raw JSON values), in order, duplicates allowed."""
    name = draw(st.sampled_from(NAMES))
    spelled = draw(st.sampled_from(SPELLINGS.get(name, [json.dumps(name)])))
    uri = draw(st.sampled_from(URIS))
    core: list[tuple[str, str]] = {
        "tools/call": [("name", spelled)],
        "prompts/get": [("name", spelled)],
        "resources/read": [("uri", uri)],
        "resources/subscribe": [("uri", uri)],
        "subscriptions/listen": [("notifications", '{"resourceSubscriptions":[' + uri + "]}")],
        "completion/complete": [
            ("ref", '{"type":"ref/prompt","name":' + spelled + "}"),
            ("argument", '{"name":"a","value":"b"}'),
        ],
        "tasks/get": [("taskId", draw(strings))],
    }[method]
    out = list(core)
    if method == "tools/call" and draw(st.booleans()):
        out.append(("task", '{"ttl":' + draw(odd_numbers | st.just("60000")) + "}"))
    if draw(st.integers(0, 3)) == 0:  # a duplicate name: the core judges the one it reads
        out.insert(
            draw(st.integers(0, len(out))), ("name", json.dumps(draw(st.sampled_from(NAMES))))
        )
    for _ in range(draw(st.integers(1, 3))):
        key = draw(
            st.sampled_from(["zz", "zz", "zz", "arguments", "_meta", "name", "\\u006eame", "task"])
        )
        value = draw(junk)
        if key == "arguments":
            value = '{"x":' + value + "}"
        out.insert(draw(st.integers(0, len(out))), (key, value))
    return out


@st.composite
def bodies(draw: st.DrawFn, modern: bool) -> bytes:
    method = draw(st.sampled_from(METHODS))
    params = draw(members(method))
    if modern:
        params.append(("_meta", json.dumps(MODERN_META)))
    rendered = "{" + ",".join(f'"{k}":{v}' for k, v in params) + "}"
    return f'{{"jsonrpc":"2.0","id":9,"method":"{method}","params":{rendered}}}'.encode()


def test_no_generated_body_runs_a_scoped_handler_or_yields_5xx() -> None:
    statuses: Counter[int] = Counter()
    with world() as attacked, attacked.sse_sender() as over_sse:
        senders = {
            "legacy": attacked.legacy_sender(),
            "batch": attacked.batch_sender(),
            "sse": over_sse,
        }

        @settings(
            max_examples=100,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(st.sampled_from(["modern", "legacy", "batch", "sse"]), st.data())
        def attack(transport: str, data: st.DataObject) -> None:
            body = data.draw(bodies(transport == "modern"))
            send = attacked.modern if transport == "modern" else senders[transport]
            response = send(body)
            statuses[response.status_code] += 1
            assert response.status_code < 500, (transport, body[:300], response.text[:300])
            assert RAN == [], (transport, body[:300], RAN)

        attack()
    assert not any("granted" in event or "secret" in event for event in attacked.sse_events)
    # The bodies reached the core's judgement, not only its parser: some were refused.
    assert statuses[403] > 0, statuses
