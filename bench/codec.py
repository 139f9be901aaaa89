"""Codec benchmark: mcpgen's msgspec structs against the official MCP Python SDK's models.

What it measures: one full round trip per operation -- wire bytes are decoded into a
typed object and that object is encoded back to JSON -- for three MCP 2026-07-28
messages, with both libraries in the same process and the same run:

1. ``tools/call``: a complete JSON-RPC request whose ``params._meta`` carries the
   2026-07-28 reserved keys (protocol version, client capabilities, client info).
2. ``tools/list``: the bare ``ListToolsResult`` object (no JSON-RPC envelope) with
   100 tools, each with a name, a description and an ``inputSchema`` of two
   properties plus ``required``.  Bare, because both libraries model the result
   object as a type of its own while the envelope's ``result`` is a plain dict in
   both (``JSONRPCResultResponse`` here, ``JSONRPCResponse`` in the SDK).
3. ``CallToolResult``: the bare result with 10 content blocks (text, image,
   resource_link, and embedded text and blob resources).

Ours: ``msgspec.json.Decoder(T).decode(b)`` then ``msgspec.json.Encoder().encode(obj)``
with ``T`` from ``mcpgen_types.v2026_07_28`` (decoder and encoder built once).

Official: ``mcp`` (the official SDK) and its pydantic models in ``mcp.types``, called
with the options the SDK itself uses on the wire (``by_name=False`` when parsing,
``by_alias=True`` and ``exclude_none=True`` when dumping a request or a result,
``exclude_unset=True`` when dumping the JSON-RPC envelope).  The SDK's request model
has no ``jsonrpc``/``id`` (its session layer adds them), so for ``tools/call`` the
official round trip is the SDK's two stages: envelope ``JSONRPCRequest``, then the
typed ``CallToolRequest``.  A fourth, informational row times the typed
``CallToolRequest`` alone on the same bytes (the envelope is dropped, so it does
less work than ours: a lower bound for the official cost).

Before timing, every round trip is checked to give back the input JSON unchanged
(compared strictly: ``1``, ``1.0`` and ``true`` differ); the script stops if one
does not.

Method: per row, both functions are warmed up, then timed ``--repeats`` times,
timeit-style (``time.perf_counter_ns`` around a loop of N calls, N calibrated to a
fixed time per sample, garbage collector off while timing).  Within each repeat the
two libraries run back to back, alternating which goes first, so that machine noise
hits both.  Reported: the median ns per operation of each library, the ratio of
those medians (official / ours), and the median and quartiles of the per-repeat
ratios (each repeat pairs two samples taken a fraction of a second apart, so these
resist the machine getting faster or slower during the run).  A payload meets the
target when both the ratio of medians and the median paired ratio reach it.

Usage (the official SDK must not enter the project's environment, so use the
wrapper, which makes a separate venv)::

    bench/run-codec.sh                # ~45 s
    bench/run-codec.sh --quick        # ~9 s
    bench/run-codec.sh --write-doc    # also rewrite the codec section of docs/performance.md
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import gc
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from mcpgen_types import v2026_07_28 as ours

try:
    import pydantic
    import pydantic_core
    from mcp import types as official
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise SystemExit(
        f"bench/codec.py needs the official MCP SDK ({exc}); run it through "
        "bench/run-codec.sh, which installs it into a separate venv."
    ) from exc

import _common
from _common import Compare, Settings, collector, compact

SECTION_START, SECTION_END = _common.markers("codec")
TARGET_RATIO: Final = 3.0
PROTOCOL_VERSION: Final = "2026-07-28"
OFFICIAL_SDK: Final = "mcp"

RoundTrip = Callable[[bytes], bytes | str]


# --------------------------------------------------------------------------- payloads


def tools_call_request() -> bytes:
    """A 2026-07-28 ``tools/call`` request, exactly as a client puts it on the wire."""
    return compact(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": "hello"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                },
            },
        }
    )


def list_tools_result(n_tools: int = 100) -> bytes:
    """A ``ListToolsResult`` with ``n_tools`` tools (2026-07-28 requires the cache hints)."""
    tools = [
        {
            "name": f"tool_{i:03d}",
            "description": f"Tool {i}: looks something up and returns at most `limit` matches.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look up"},
                    "limit": {"type": "integer", "description": "Maximum number of matches"},
                },
                "required": ["query"],
            },
        }
        for i in range(n_tools)
    ]
    return compact(
        {"tools": tools, "ttlMs": 60000, "cacheScope": "private", "resultType": "complete"}
    )


def call_tool_result() -> bytes:
    """A ``CallToolResult`` with 10 content blocks of every common kind."""
    image = base64.b64encode(bytes(range(256)) * 2).decode()
    blob = base64.b64encode(b"%PDF-1.7 not really a pdf " * 8).decode()
    content: list[dict[str, Any]] = [
        {"type": "text", "text": "Found 3 matching documents."},
        {
            "type": "text",
            "text": "The first one is the most relevant.",
            "annotations": {"audience": ["user", "assistant"], "priority": 0.5},
        },
        {"type": "image", "data": image, "mimeType": "image/png"},
        {
            "type": "resource_link",
            "uri": "file:///srv/docs/report-2026.md",
            "name": "report-2026.md",
            "mimeType": "text/markdown",
            "description": "Annual report",
        },
        {
            "type": "resource",
            "resource": {
                "uri": "file:///srv/docs/summary.txt",
                "mimeType": "text/plain",
                "text": "Revenue grew 12% year over year; costs were flat.",
            },
        },
        {"type": "text", "text": "Second match: a scanned invoice."},
        {"type": "image", "data": image, "mimeType": "image/png"},
        {
            "type": "resource_link",
            "uri": "file:///srv/docs/invoice-0042.pdf",
            "name": "invoice-0042.pdf",
            "mimeType": "application/pdf",
        },
        {
            "type": "resource",
            "resource": {
                "uri": "file:///srv/docs/invoice-0042.pdf",
                "mimeType": "application/pdf",
                "blob": blob,
            },
        },
        {"type": "text", "text": "Third match: nothing new."},
    ]
    return compact({"content": content, "isError": False, "resultType": "complete"})


# ------------------------------------------------------------------------ round trips


def msgspec_round_trip(target: type[msgspec.Struct]) -> RoundTrip:
    """Ours: decode into ``target`` and encode it back."""
    decode = msgspec.json.Decoder(target).decode
    encode = msgspec.json.Encoder().encode

    def round_trip(data: bytes) -> bytes:
        return encode(decode(data))

    return round_trip


def pydantic_round_trip(model: type[pydantic.BaseModel]) -> RoundTrip:
    """Official, one model: parse the bytes into ``model`` and dump it as the SDK does."""
    validate = model.model_validate_json

    def round_trip(data: bytes) -> str:
        return validate(data, by_name=False).model_dump_json(by_alias=True, exclude_none=True)

    return round_trip


def official_request_round_trip(data: bytes) -> str:
    """Official ``tools/call``: the SDK's envelope stage plus its typed-request stage.

    Parsing: the transport validates the ``JSONRPCRequest`` envelope (params stay a
    dict), then the typed request is validated from it.  Dumping: the session dumps the
    typed request (``by_alias``, ``mode="json"``, ``exclude_none``), the dispatcher
    wraps ``method`` and ``params`` in a ``JSONRPCRequest`` and the transport writes it
    with ``model_dump_json(by_alias=True, exclude_unset=True)``.
    """
    envelope = official.JSONRPCRequest.model_validate_json(data, by_name=False)
    request = official.CallToolRequest.model_validate(
        {"method": envelope.method, "params": envelope.params}, by_name=False
    )
    body = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    wire = official.JSONRPCRequest(
        jsonrpc="2.0", id=envelope.id, method=body["method"], params=body["params"]
    )
    return wire.model_dump_json(by_alias=True, exclude_unset=True)


@dataclass(frozen=True)
class Case:
    """One table row: a payload and the two round trips timed on it."""

    label: str
    payload: bytes
    ours: RoundTrip
    ours_api: str
    official: RoundTrip
    official_api: str
    informational: bool = False
    # Top-level keys the official round trip is expected to drop (the envelope).
    official_drops: tuple[str, ...] = ()


def _model_case(label: str, payload: bytes, model: str) -> Case:
    """The round trip of the type named ``model`` on both sides: mcpgen's Struct and the
    SDK's pydantic model."""
    return Case(
        label=label,
        payload=payload,
        ours=msgspec_round_trip(getattr(ours, model)),
        ours_api=f"`{model}`",
        official=pydantic_round_trip(getattr(official, model)),
        official_api=f"`{model}.model_validate_json` / `.model_dump_json`",
    )


def build_cases() -> list[Case]:
    request = tools_call_request()
    return [
        Case(
            label="tools/call request",
            payload=request,
            ours=msgspec_round_trip(ours.CallToolRequest),
            ours_api="`CallToolRequest` (envelope included)",
            official=official_request_round_trip,
            official_api=(
                "`JSONRPCRequest.model_validate_json` + `CallToolRequest.model_validate`; "
                "`model_dump` + `JSONRPCRequest(...).model_dump_json`"
            ),
        ),
        _model_case("tools/list result, 100 tools", list_tools_result(), "ListToolsResult"),
        _model_case("CallToolResult, 10 blocks", call_tool_result(), "CallToolResult"),
        Case(
            label="tools/call request, official body only (lower bound)",
            payload=request,
            ours=msgspec_round_trip(ours.CallToolRequest),
            ours_api="`CallToolRequest` (envelope included)",
            official=pydantic_round_trip(official.CallToolRequest),
            official_api=(
                "`CallToolRequest.model_validate_json` / `.model_dump_json` "
                "(drops `jsonrpc` and `id`)"
            ),
            informational=True,
            official_drops=("jsonrpc", "id"),
        ),
    ]


def _canonical(value: Any) -> str:
    """A strict canonical form: ``1``, ``1.0`` and ``true`` stay distinct."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def check_round_trips(cases: list[Case]) -> None:
    """Stop unless every round trip gives back the input JSON (less expected drops)."""
    failures: list[str] = []
    for case in cases:
        expected = json.loads(case.payload)
        for name, round_trip, drops in (
            ("ours", case.ours, ()),
            ("official", case.official, case.official_drops),
        ):
            want = {k: v for k, v in expected.items() if k not in drops}
            got = json.loads(round_trip(case.payload))
            if _canonical(got) != _canonical(want):
                failures.append(f"{case.label} / {name}:\n  in:  {_canonical(want)[:400]}")
                failures[-1] += f"\n  out: {_canonical(got)[:400]}"
    if failures:
        raise SystemExit("round trip changed the message:\n" + "\n".join(failures))


# ---------------------------------------------------------------------------- timing


FULL: Final = Settings(repeats=25, sample_ns=150_000_000, warmup_ns=200_000_000)
QUICK: Final = Settings(repeats=9, sample_ns=60_000_000, warmup_ns=50_000_000)


def _loop_ns(round_trip: RoundTrip, payload: bytes, n: int) -> int:
    """Total nanoseconds for ``n`` calls, with the garbage collector off (as timeit does)."""
    with collector():
        calls = range(n)
        start = time.perf_counter_ns()
        for _ in calls:
            round_trip(payload)
        return time.perf_counter_ns() - start


def warm_up_and_calibrate(round_trip: RoundTrip, payload: bytes, settings: Settings) -> int:
    """Run for ``warmup_ns``, then return the loop count that fills one sample."""
    deadline = time.perf_counter_ns() + settings.warmup_ns
    while time.perf_counter_ns() < deadline:
        round_trip(payload)
    n = 1
    while True:
        elapsed = _loop_ns(round_trip, payload, n)
        if elapsed * 10 >= settings.sample_ns:
            return max(1, round(n * settings.sample_ns / elapsed))
        n *= 2


@dataclass(frozen=True)
class Row(Compare):
    """The measured numbers of one case (nanoseconds per operation, per repeat)."""

    case: Case


def measure(case: Case, settings: Settings) -> Row:
    """Time both round trips of ``case``, interleaved, ``settings.repeats`` times."""
    n_ours = warm_up_and_calibrate(case.ours, case.payload, settings)
    n_official = warm_up_and_calibrate(case.official, case.payload, settings)
    ours_ns: list[float] = []
    official_ns: list[float] = []
    for repeat in range(settings.repeats):
        gc.collect()
        if repeat % 2 == 0:
            ours_ns.append(_loop_ns(case.ours, case.payload, n_ours) / n_ours)
            official_ns.append(_loop_ns(case.official, case.payload, n_official) / n_official)
        else:
            official_ns.append(_loop_ns(case.official, case.payload, n_official) / n_official)
            ours_ns.append(_loop_ns(case.ours, case.payload, n_ours) / n_ours)
    return Row(ours=ours_ns, official=official_ns, target=TARGET_RATIO, case=case)


# --------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class Environment(_common.Environment):
    """Where and with what the numbers were measured."""

    msgspec: str
    pydantic: str
    pydantic_core: str
    mcp: str
    mcp_types: str

    @classmethod
    def current(cls, argv: list[str]) -> Environment:
        env = cls.collect(
            argv,
            "bench/codec.py",
            msgspec=msgspec.__version__,
            pydantic=pydantic.VERSION,
            pydantic_core=pydantic_core.__version__,
            mcp=_common.version(OFFICIAL_SDK),
            mcp_types=_common.version("mcp-types"),
        )
        launcher = os.environ.get("MCPGEN_BENCH_LAUNCHER")
        words = [launcher, *argv] if launcher else ["python", "bench/codec.py", *argv]
        return dataclasses.replace(env, command=shlex.join(words))


def _verdict(row: Row) -> str:
    return row.verdict("informational" if row.case.informational else "")


def _cells(row: Row, size: str) -> tuple[str, ...]:
    """A row's cells, its payload's ``size`` as given."""
    return (
        row.case.label,
        size,
        f"{row.ours_median:,.0f}",
        f"{row.official_median:,.0f}",
        f"{row.ratio:.2f}x",
        row.paired(2),
        _verdict(row),
    )


def format_console(rows: list[Row], env: Environment, settings: Settings) -> str:
    header = ("payload", "bytes", "ours ns/op", "official ns/op", "ratio", "paired", "3x")
    cells = [_cells(row, str(len(row.case.payload))) for row in rows]
    text = _common.columns(header, cells, 1)
    text.append("")
    text.append(
        f"{env.machine}, {env.cpu}, {env.cores} cores; Python {env.python}; "
        f"msgspec {env.msgspec}; pydantic {env.pydantic}; mcp {env.mcp}"
    )
    text.append(
        f"{settings.repeats} repeats, ~{settings.sample_ns / 1e9:.2f} s per sample; "
        "ratio = official median / ours median; paired = median (IQR) of per-repeat ratios"
    )
    return "\n".join(text)


def format_section(rows: list[Row], env: Environment, settings: Settings) -> str:
    verdicts = []
    for row in rows:
        q1, q2, _ = row.paired_quartiles
        if not row.meets_target:
            said = f"does **not** meet the {TARGET_RATIO:g}x target"
        elif q1 < TARGET_RATIO:
            said = (
                f"meets the {TARGET_RATIO:g}x target narrowly: at least a quarter of the "
                f"repeats alone came out below {TARGET_RATIO:g}x"
            )
        else:
            said = f"meets the {TARGET_RATIO:g}x target"
        note = " (informational, not a target row)" if row.case.informational else ""
        verdicts.append(f"- {row.case.label}{note}: {row.ratio:.2f}x (paired {q2:.2f}x), {said}.")
    out = [
        SECTION_START,
        "## Codec round trip: mcpgen vs the official SDK",
        "",
        "Generated by `bench/codec.py`; do not edit by hand, re-run the command below.",
        "",
        f"- Date: {env.date} (UTC)",
        f"- Command: `{env.command}`",
        f"- Machine: `{env.machine}`, {env.cpu}, {env.cores} cores",
        f"- Python {env.python}, msgspec {env.msgspec}, pydantic {env.pydantic} "
        f"(pydantic-core {env.pydantic_core}), mcp {env.mcp} (mcp-types {env.mcp_types})",
        f"- {settings.repeats} repeats per row, ~{settings.sample_ns / 1e9:.2f} s per sample "
        "per library, the two libraries back to back within each repeat (alternating which "
        "goes first); medians reported",
        "",
        "One operation = decode the payload bytes into the typed object, then encode that "
        "object back to JSON. Ratio = official median / ours median; higher is better for "
        "mcpgen. Paired = median, and in brackets the lower and upper quartile, of the "
        "official/ours ratios of the single repeats: each pairs two samples taken a moment "
        "apart, so it resists the machine's speed drifting during the run (the first and "
        "last rows time the same `ours` function: their gap shows the drift). A row meets "
        "the target when both the ratio and the paired median do.",
        "",
        *_common.md_table(
            (
                "payload",
                "bytes",
                "ours ns/op",
                "official ns/op",
                "ratio",
                "paired (IQR)",
                f"meets {TARGET_RATIO:g}x",
            ),
            [_cells(row, f"{len(row.case.payload):,}") for row in rows],
            1,
            last_left=True,
        ),
        "",
        f"Project target: official / ours >= {TARGET_RATIO:g} on each payload.",
        "",
        *verdicts,
        "",
        "What each row runs:",
        "",
    ]
    for row in rows:
        out.append(
            f"- {row.case.label}: ours `msgspec.json.Decoder(T).decode` + "
            f"`msgspec.json.Encoder().encode`, `T` = {row.case.ours_api}; "
            f"official {row.case.official_api}."
        )
    out += [
        "",
        "Notes:",
        "",
        "- The official calls use the options the SDK uses on the wire: `by_name=False` "
        "when parsing (its transports and sessions), `by_alias=True, exclude_none=True` when "
        "dumping a request or result (`mcp/client/session.py`, `mcp/server/runner.py`), "
        "`exclude_unset=True` when writing the envelope (its stdio/HTTP transports).",
        "- The SDK's typed request has no `jsonrpc`/`id` (its session layer adds them), so "
        "the `tools/call` row runs its two stages. The last row times the typed request "
        "alone on the same bytes; it drops the envelope, so it is a lower bound for the "
        "official cost, not a like-for-like figure.",
        "- `tools/list` and `CallToolResult` are bare results, not JSON-RPC responses: in "
        "both libraries the response envelope's `result` is a plain dict, and the typed "
        "object is the result.",
        "- The official dump returns `str` (what the SDK writes to its transports); no "
        "`.encode()` is charged to it. Ours returns `bytes`.",
        "- The SDK's own pipeline does more per message than these calls: the union "
        "envelope adapter, a per-version surface validation (`mcp_types.methods`) before "
        "the typed parse, and a second validate-and-dump of each result before the "
        "envelope is written. The official numbers are therefore a lower bound for what "
        "the SDK spends.",
        "- Every round trip is checked to give back the input JSON unchanged before timing.",
        "- Absolute ns depend on the machine; compare ratios.",
        SECTION_END,
    ]
    return "\n".join(out) + "\n"


DOC_NOTE: Final = (
    " The numbers are ratios measured in one run on this 2-core machine: compare the ratios, "
    "not the absolute nanoseconds, across machines."
)


# ------------------------------------------------------------------------------ main


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = _common.arg_parser(
        "Time decode+encode of MCP messages: mcpgen (msgspec) vs mcp (pydantic).",
        quick="short run (~9 s instead of ~45 s)",
    )
    _common.add_doc_options(parser, "codec")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    args = parse_args(args_list)
    settings = QUICK if args.quick else FULL
    env = Environment.current(args_list)
    cases = build_cases()
    check_round_trips(cases)
    rows: list[Row] = []
    for case in cases:
        print(f"timing: {case.label} ...", file=sys.stderr, flush=True)
        rows.append(measure(case, settings))
    print(format_console(rows, env, settings))
    if args.write_doc:
        section = format_section(rows, env, settings)
        _common.write_section(args.doc, "codec", section, _common.doc_header(env, DOC_NOTE))
    return 0


if __name__ == "__main__":
    sys.exit(main())
