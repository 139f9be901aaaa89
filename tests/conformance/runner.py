"""Run the official MCP conformance suite against an HTTP server and judge the result.

    python -m tests.conformance.runner --spec 2026-07-28 --url http://127.0.0.1:8000/mcp
    python -m tests.conformance.runner --spec all --start    # starts examples/everything.py
    python -m tests.conformance.runner --spec both --client  # tests examples/conformance_client.py

Server legs: one per spec version (`--suite all --spec-version S`: every scenario that
applies to S, on S's wire), and `default` (`--suite all` alone: each scenario on the
wire it was written for, extension scenarios included: Tasks `tasks-*`, skills).

A scenario passes when none of its checks is FAILURE or WARNING (stricter than the
suite's own exit code without a baseline). Scenarios listed in expected-failures.yml
may fail; an entry that passes is reported as stale. The suite and Node 22 come
from tests/tooling.py (installed into a cache on first use).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests import tooling
from tests.processes import everything_http

REPO = Path(__file__).resolve().parents[2]
EXPECTED_FAILURES = Path(__file__).with_name("expected-failures.yml")
EXPECTED_CLIENT_FAILURES = Path(__file__).with_name("expected-failures-client.yml")
CLIENT = REPO / "examples" / "conformance_client.py"
LEGS = ("2025-11-25", "2026-07-28")
SERVER_LEGS = (*LEGS, "default")
BAD = ("FAILURE", "WARNING")


@dataclass
class Leg:
    spec: str
    exit_code: int
    scenarios: dict[str, list[dict[str, object]]] = field(default_factory=dict)
    log: str = ""

    def failing(self) -> dict[str, list[str]]:
        out = {}
        for name, checks in self.scenarios.items():
            bad = [
                f"{c.get('id')}: {c.get('status')} {c.get('errorMessage') or ''}".strip()
                for c in checks
                if c.get("status") in BAD
            ]
            if bad:
                out[name] = bad
        return out


def expected_failures(path: Path = EXPECTED_FAILURES) -> set[str]:
    names = set()
    for raw in path.read_text().splitlines():
        entry = raw.split("#", 1)[0].strip()
        if entry.startswith("- "):
            names.add(entry[2:].strip())
    return names


def suite_cli() -> Path:
    modules = tooling.npm_package(tooling.CONFORMANCE)
    return modules / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def run_leg(url: str, spec: str, out: Path, timeout: int = 900) -> Leg:
    """The suite against a server at `url` (`spec`: a version, or "default")."""
    cmd = ["server", "--url", url, "--suite", "all", "-o", str(out)]
    if spec != "default":
        cmd += ["--spec-version", spec]
    return _run_suite(cmd, spec, out, timeout)


def run_client_leg(spec: str, out: Path, timeout: int = 900) -> Leg:
    """The suite's mock servers against examples/conformance_client.py."""
    command = f"exec {shlex.quote(sys.executable)} {shlex.quote(str(CLIENT))}"
    # The suite starts every scenario at once (some forty clients and their mock servers
    # on a two-core machine): a scenario gets two minutes rather than the suite's 30 s, so
    # that a slow start under that load is not judged a failure of the client.
    cmd = ["client", "--command", command, "--suite", "all", "--spec-version", spec,
           "--timeout", "120000", "-o", str(out)]  # fmt: skip
    return _run_suite(cmd, spec, out, timeout)


def run_client_scenario(name: str, out: Path, timeout: int = 300) -> Leg:
    """One client scenario on the wire it was written for (the default leg: how the
    extension scenarios, such as client credentials, are run)."""
    command = f"exec {shlex.quote(sys.executable)} {shlex.quote(str(CLIENT))}"
    cmd = ["client", "--command", command, "--scenario", name, "-o", str(out)]
    return _run_suite(cmd, "default", out, timeout)


def _run_suite(args: list[str], spec: str, out: Path, timeout: int) -> Leg:
    node, cli = tooling.node22(), suite_cli()
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [node, str(cli), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    leg = Leg(spec, proc.returncode, log=proc.stdout + proc.stderr)
    for checks_file in sorted(out.glob("**/checks.json")):
        relative = checks_file.parent.relative_to(out)
        leg.scenarios[scenario_name(str(relative))] = json.loads(checks_file.read_text())
    return leg


# The suite names each result folder `<scenario>-<ISO time with ':' and '.' as '-'>`.
_STAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:-\d+)?Z?$")


def scenario_name(folder: str) -> str:
    """The scenario a result folder belongs to (its time stamp may hold `-20` anywhere)."""
    return _STAMP.sub("", folder.removeprefix("server-"))


@contextlib.contextmanager
def everything_server() -> Iterator[str]:
    """examples/everything.py over HTTP on a free loopback port (its log in a temp dir)."""
    with tempfile.TemporaryDirectory() as tmp, everything_http(Path(tmp) / "server.log") as url:
        yield url


def judge(legs: list[Leg], allowed: set[str] | None = None) -> tuple[int, int, list[str]]:
    """(scenarios passed, failed, problems) over all legs, with expected failures."""
    allowed = expected_failures() if allowed is None else allowed
    passed = failed = 0
    problems: list[str] = []
    for leg in legs:
        if not leg.scenarios:
            problems.append(
                f"{leg.spec}: no scenario results (exit {leg.exit_code}):\n{leg.log[-2000:]}"
            )
            continue
        failing = leg.failing()
        for name in leg.scenarios:
            if name in failing and name not in allowed:
                failed += 1
                problems.append(f"{name} @{leg.spec}: " + "; ".join(failing[name]))
            else:
                passed += 1
        for name in sorted(allowed & set(leg.scenarios) - set(failing)):
            problems.append(f"{name} @{leg.spec}: passes now; remove it from expected-failures.yml")
    return passed, failed, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", choices=[*SERVER_LEGS, "both", "all"], default="both")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url")
    where.add_argument(
        "--start", action="store_true", help="serve examples/everything.py on a free port"
    )
    where.add_argument(
        "--client", action="store_true", help="test examples/conformance_client.py instead"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    specs = {"both": LEGS, "all": SERVER_LEGS}.get(args.spec, (args.spec,))
    out = args.out or Path(tempfile.mkdtemp(prefix="conformance-"))
    allowed = None
    if args.client:
        legs = [run_client_leg(spec, out / spec) for spec in specs if spec != "default"]
        allowed = expected_failures(EXPECTED_CLIENT_FAILURES)
    else:
        with contextlib.ExitStack() as stack:
            url = args.url or stack.enter_context(everything_server())
            legs = [run_leg(url, spec, out / spec) for spec in specs]
    for leg in legs:
        for name, checks in leg.scenarios.items():
            mark = "FAIL" if name in leg.failing() else "ok  "
            print(f"{mark} {name} @{leg.spec} ({len(checks)} checks)")
    passed, failed, problems = judge(legs, allowed)
    for problem in problems:
        print("PROBLEM", problem)
    print(f"{passed} passed, {failed} failed")
    return 0 if not problems else 1


if __name__ == "__main__":
    os.chdir(REPO)
    sys.exit(main())
