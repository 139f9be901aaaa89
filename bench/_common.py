"""What the benchmark scripts of ``bench/`` share (stdlib only at import time, so that
``bench/suite.py``'s own process stays free of the SDKs it measures).

- ``Environment``: the machine, Python, date and command a run records;
  ``SdkEnvironment`` adds mcpgen's and the official SDK's versions.
- ``Settings`` and ``collector``: how long to time, and the garbage collector off while
  timing.
- ``Compare``: per-repeat figures of mcpgen and of the official SDK timed back to back:
  the medians, their ratio, the quartiles of the per-repeat ratios, the verdict on a
  target.
- ``columns`` and ``md_table``: the console's and the Markdown tables.
- ``write_section``: a script's own section of ``docs/performance.md``, between
  ``<!-- name:start -->`` and ``<!-- name:end -->``.
- ``arg_parser``, ``add_gc_option`` and ``add_doc_options``: the options the scripts
  share.
- ``compact``, the MCP messages the scripts send and the checks of the replies.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import json
import math
import os
import platform
import shlex
import statistics
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Final, Self

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
DEFAULT_DOC: Final = REPO_ROOT / "docs" / "performance.md"


# ----------------------------------------------------------------------------- messages

MODERN_VERSION: Final = "2026-07-28"
LEGACY_VERSION: Final = "2025-11-25"
MODERN_META: Final = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}
INITIALIZED: Final = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def initialize(version: str, client: str) -> dict[str, Any]:
    """A legacy ``initialize`` request (id 0) from a client named ``client``."""
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    }


def era_label(version: str) -> str:
    return version if version == MODERN_VERSION else f"legacy {version}"


# ------------------------------------------------------------------------------- checks


def result_of(
    raw: bytes | str, who: str, want_id: int, error: type[SystemExit] = SystemExit
) -> dict[str, Any]:
    """The ``result`` of a JSON-RPC reply to request ``want_id``; ``error`` otherwise."""
    try:
        reply = json.loads(raw)
    except ValueError:
        raise error(f"{who}: not JSON: {str(raw)[:300]}") from None
    if reply.get("jsonrpc") != "2.0" or reply.get("id") != want_id or "result" not in reply:
        raise error(f"{who}: not a result for id {want_id}: {str(raw)[:400]}")
    result: dict[str, Any] = reply["result"]
    return result


def check_initialize(raw: bytes | str, who: str, error: type[SystemExit] = SystemExit) -> None:
    result = result_of(raw, f"{who} initialize", 0, error)
    if result.get("protocolVersion") != LEGACY_VERSION:
        raise error(f"{who}: initialize negotiated {result.get('protocolVersion')!r}")


def check_echo(
    raw: bytes | str, who: str, text: str, want_id: int = 1, error: type[SystemExit] = SystemExit
) -> None:
    """The reply to ``tools/call`` of ``echo`` carries ``text`` back, and no error."""
    result = result_of(raw, who, want_id, error)
    if result.get("isError") or result.get("content") != [{"type": "text", "text": text}]:
        raise error(f"{who}: tools/call did not echo {text!r}: {str(raw)[:400]}")


def tool_projection(tools: list[dict[str, Any]]) -> list[str]:
    """What two listings must agree on, tool by tool."""
    keys = ("name", "description", "inputSchema", "outputSchema")
    return [json.dumps({k: t.get(k) for k in keys}, sort_keys=True) for t in tools]


# -------------------------------------------------------------------------- environment


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for row in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = row.partition(":")
            if key.strip() in {"model name", "Model", "cpu model"}:
                return value.strip()
    return platform.processor() or "unknown"


def version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def command_line(argv: list[str], script: str) -> str:
    """The command as typed: the launcher ``bench/run.sh`` (or ``bench/run-codec.sh``)
    names in ``MCPGEN_BENCH_LAUNCHER``, else ``python <script>``, then ``argv``."""
    launcher = os.environ.get("MCPGEN_BENCH_LAUNCHER")
    prefix = shlex.split(launcher) if launcher else ["python", script]
    return shlex.join([*prefix, *argv])


@dataclass(frozen=True)
class Environment:
    """Where and with what the numbers were measured (subclasses add the versions)."""

    machine: str
    cpu: str
    cores: int
    python: str
    date: str
    command: str

    @classmethod
    def collect(cls, argv: list[str], script: str, **fields: Any) -> Self:
        """This machine and run; ``script``: ``bench/X.py``; ``fields``: the subclass's."""
        return cls(
            machine=platform.machine(),
            cpu=cpu_model(),
            cores=os.cpu_count() or 0,
            python=f"{platform.python_version()} ({platform.python_implementation()})",
            date=dt.datetime.now(dt.UTC).date().isoformat(),
            command=command_line(argv, script),
            **fields,
        )


@dataclass(frozen=True)
class SdkEnvironment(Environment):
    """The run's machine, with mcpgen's and the official SDK's versions."""

    mcpgen: str
    msgspec: str
    mcp: str
    mcp_types: str
    pydantic: str
    pydantic_core: str
    anyio: str
    otel_api: str
    tracer_provider: str

    @classmethod
    def collect(cls, argv: list[str], script: str, **fields: Any) -> Self:
        # Imported here: only the scripts that run both SDKs in process get this far.
        import msgspec  # noqa: PLC0415
        import opentelemetry.trace  # noqa: PLC0415
        import pydantic  # noqa: PLC0415
        import pydantic_core  # noqa: PLC0415

        import mcpgen  # noqa: PLC0415

        return super().collect(
            argv,
            script,
            mcpgen=mcpgen.__version__,
            msgspec=msgspec.__version__,
            mcp=version("mcp"),
            mcp_types=version("mcp-types"),
            pydantic=pydantic.VERSION,
            pydantic_core=pydantic_core.__version__,
            anyio=version("anyio"),
            otel_api=version("opentelemetry-api"),
            tracer_provider=type(opentelemetry.trace.get_tracer_provider()).__name__,
            **fields,
        )


# ------------------------------------------------------------------------------- timing


@dataclass(frozen=True)
class Settings:
    """How long to time: repeats, nanoseconds per sample, warm-up per side; ``gc_on``:
    the garbage collector stays on while timing (``--gc``)."""

    repeats: int
    sample_ns: int
    warmup_ns: int
    gc_on: bool = False


@contextlib.contextmanager
def collector(gc_on: bool = False) -> Iterator[None]:
    """The garbage collector off while timing (as timeit does), unless ``gc_on``."""
    was_enabled = gc.isenabled()
    if not gc_on:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class Compare:
    """Per-repeat figures (e.g. nanoseconds per call) of mcpgen and of the official SDK,
    each repeat timing the two back to back, and the ratio official / mcpgen to reach."""

    ours: list[float]
    official: list[float]
    target: float

    @property
    def ours_median(self) -> float:
        return statistics.median(self.ours)

    @property
    def official_median(self) -> float:
        return statistics.median(self.official)

    @property
    def ratio(self) -> float:
        """Ratio of the medians: official / ours."""
        ours = self.ours_median
        return self.official_median / ours if ours > 0 else math.nan

    @property
    def paired_ratios(self) -> list[float]:
        """official / ours of each repeat (a repeat whose mcpgen figure is not positive,
        possible for a difference, is left out)."""
        return [o / m for o, m in zip(self.official, self.ours, strict=True) if m > 0]

    @property
    def paired_quartiles(self) -> tuple[float, float, float]:
        """Lower quartile, median and upper quartile of the per-repeat ratios."""
        ratios = self.paired_ratios
        if len(ratios) < 2:
            return math.nan, math.nan, math.nan
        q1, q2, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
        return q1, q2, q3

    @property
    def meets_target(self) -> bool:
        """Both the ratio of the medians and the median paired ratio reach the target."""
        return min(self.ratio, self.paired_quartiles[1]) >= self.target

    def paired(self, digits: int) -> str:
        """``median (lower-upper quartile)`` of the per-repeat ratios."""
        q1, q2, q3 = self.paired_quartiles
        return f"{q2:.{digits}f}x ({q1:.{digits}f}-{q3:.{digits}f})"

    def verdict(self, info: str = "") -> str:
        """yes / yes, narrowly (a quarter of the repeats alone fall short) / no; a miss
        in bold, unless ``info`` names the row as not a target row."""
        if not self.meets_target:
            said = "no"
        elif self.paired_quartiles[0] < self.target:
            said = "yes, narrowly"
        else:
            said = "yes"
        if info:
            return f"{said} ({info})"
        return said if self.meets_target else f"**{said}**"


# ------------------------------------------------------------------------------ reports


def columns(header: Sequence[str], rows: Sequence[Sequence[str]], left: int) -> list[str]:
    """A plain-text table: the first ``left`` columns left-aligned, the others right."""
    lines = [header, *rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = [
        "  ".join(
            cell.ljust(w) if i < left else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    ]
    text.insert(1, "  ".join("-" * w for w in widths))
    return text


def md_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], left: int, *, last_left: bool = False
) -> list[str]:
    """A Markdown table: the first ``left`` columns (and the last, if ``last_left``)
    left-aligned, the others right."""
    align = ["---" if i < left else "---:" for i in range(len(header))]
    if last_left:
        align[-1] = "---"
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(align) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def markers(name: str) -> tuple[str, str]:
    """The comments that open and close the ``name`` section of docs/performance.md."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def doc_header(env: Environment, note: str = "") -> str:
    """The head of a new docs/performance.md (``note``: one more sentence)."""
    return (
        "# Performance\n"
        "\n"
        "Benchmarks of mcpgen against the official MCP Python SDK. Each section is written "
        f"by its benchmark script and records its own date, machine, versions and command.{note}\n"
        "\n"
        f"File created on {env.date} by `{env.command}`.\n"
        "\n"
    )


def write_section(path: Path, name: str, section: str, header: str) -> None:
    """Replace the ``name`` section of ``path`` (append it, or create the file starting
    with ``header``, if missing); nothing else in the file changes."""
    start_marker, end_marker = markers(name)
    text = path.read_text() if path.exists() else header
    start = text.find(start_marker)
    end = text.find(end_marker)
    if start != -1 and end > start:
        end += len(end_marker)
        if text[end : end + 1] == "\n":
            end += 1
        text = text[:start] + section + text[end:]
    elif start != -1 or end != -1:
        raise SystemExit(f"{path}: unbalanced {start_marker} / {end_marker} markers")
    else:
        text = text.rstrip("\n") + "\n\n" + section if text.strip() else section
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote the {name} section of {path}", file=sys.stderr)
    import charts  # noqa: PLC0415 (bench/ is this script's directory: sys.path[0])

    if path.resolve() == charts.DOC:  # the published figures: their JSON and charts follow
        charts.refresh(path)


# ---------------------------------------------------------------------------- arguments


def arg_parser(description: str, quick: str) -> argparse.ArgumentParser:
    """A parser with ``--quick`` (``quick``: its help, the run times)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=quick)
    return parser


def add_gc_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gc", action="store_true", help="keep the garbage collector on while timing"
    )


def add_doc_options(
    parser: argparse.ArgumentParser, name: str, doc_help: str = "the file --write-doc rewrites"
) -> None:
    """``--write-doc`` (rewrite the ``name`` section of the doc) and ``--doc PATH``."""
    parser.add_argument(
        "--write-doc",
        action="store_true",
        help=f"rewrite the {name} section of docs/performance.md with the results",
    )
    parser.add_argument("--doc", type=Path, default=DEFAULT_DOC, help=doc_help)
