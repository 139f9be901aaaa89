"""docs/guide/production.md's recipes, run as far as this machine allows: HTTPS from
uvicorn with a certificate made here, nginx terminating TLS in front of a server, the
systemd unit (verified by systemd-analyze, its ExecStart run and stopped), and the
container's CMD and HEALTHCHECK commands. Every ```python block of the page runs here."""

from __future__ import annotations

import asyncio
import configparser
import contextlib
import json
import os
import pwd
import re
import shlex
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpgen import Client
from tests.certs import self_signed
from tests.conftest import REPO, need
from tests.docs.blocks import Block, fenced_blocks
from tests.processes import free_port

PAGE = REPO / "docs" / "guide" / "production.md"
BIN = Path(sys.executable).parent


def _blocks(language: str) -> list[Block]:
    return [block for block in fenced_blocks(PAGE) if block.language == language]


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key."""
    return self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The page's `weather/app.py`, as written."""
    (tmp_path / "weather").mkdir()
    (tmp_path / "weather" / "app.py").write_text(_blocks("python")[0].code)
    return tmp_path


def _tls(cert: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert))  # the only trust anchor


class _Served:
    """A server process whose stderr lines are collected by a thread as they come."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            assert self.proc.poll() is None or self.reader.is_alive(), "".join(self.lines)
            assert time.monotonic() < deadline, f"no {text!r} in:\n{''.join(self.lines)}"
            time.sleep(0.05)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            status = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            status = self.proc.wait()
        self.reader.join(timeout=10)
        return status


@contextlib.contextmanager
def _serving(argv: list[str], cwd: Path, port: int) -> Iterator[_Served]:
    """Run a server until it says where it serves; stop it with SIGTERM afterwards."""
    served = _Served(argv, cwd)
    try:
        served.wait_for(f":{port}/mcp")
        yield served
    finally:
        served.stop()


def _stopped_cleanly(served: _Served) -> None:
    """SIGTERM: exits by that signal after its one line saying so."""
    assert served.stop() == -signal.SIGTERM
    assert [line for line in served.lines if "stopping" in line] == [
        "mcpgen: SIGTERM received, stopping\n"
    ]
    assert not any("Traceback" in line for line in served.lines), "".join(served.lines)


def _call(url: str, cert: Path | None = None) -> str:
    async def main() -> str:
        http = httpx.AsyncClient(verify=_tls(cert) if cert else True, timeout=30)
        async with Client.http(url, httpx_client=http) as client:
            result = await client.call_tool("forecast", {"city": "Paris"})
            return str(result.content[0].text)  # type: ignore[union-attr]

    return asyncio.run(main())


def _health(url: str, cert: Path | None = None) -> tuple[int, object]:
    reply = httpx.get(url, verify=_tls(cert) if cert else True, timeout=30)
    return reply.status_code, reply.json()


@pytest.mark.slow
def test_https_from_uvicorn(project: Path, cert: tuple[Path, Path]) -> None:
    """The page's three Python blocks: the app, the TLS serving module (run), the module
    behind nginx (imported); over https the client calls a tool and /healthz answers."""
    _, tls_block, nginx_block = _blocks("python")  # the first one is the project's app
    assert "ssl_certfile" in tls_block.code and "allowed_hosts" in nginx_block.code
    port = free_port()
    code = (
        tls_block.code.replace('host="0.0.0.0"', 'host="127.0.0.1"')
        .replace("port=8443", f"port={port}")
        .replace("/etc/weather/tls/fullchain.pem", str(cert[0]))
        .replace("/etc/weather/tls/privkey.pem", str(cert[1]))
        .replace("mcp.example.com", "127.0.0.1")
    )
    (project / "weather" / "serve.py").write_text(code)
    (project / "weather" / "behind_nginx.py").write_text(nginx_block.code)
    imported = subprocess.run(
        [sys.executable, "-c", "import weather.behind_nginx as m; print(type(m.app).__name__)"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert imported.stdout == "McpAsgiApp\n", imported.stderr
    with _serving([sys.executable, "-m", "weather.serve"], project, port) as served:
        url = f"https://127.0.0.1:{port}"
        assert _call(f"{url}/mcp", cert[0]) == "Paris: sunny"
        assert _health(f"{url}/healthz", cert[0]) == (200, {"status": "ok"})
        with pytest.raises(httpx.ConnectError):  # the certificate is checked
            httpx.get(f"{url}/healthz", timeout=30)
        _stopped_cleanly(served)


def _nginx_conf(where: Path, site: str) -> Path:
    user = "user root;\n" if os.getuid() == 0 else ""  # nginx drops root to nobody otherwise
    (where / "temp").mkdir(parents=True)
    conf = where / "nginx.conf"
    conf.write_text(
        f"{user}worker_processes 1;\npid {where}/nginx.pid;\n"
        f"error_log {where}/error.log warn;\nevents {{ worker_connections 64; }}\n"
        f"http {{\n    access_log {where}/access.log;\n"
        + "".join(
            f"    {kind}_temp_path {where}/temp/{kind};\n"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        + site
        + "\n}\n"
    )
    return conf


def _wait_port(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, f"{what} exited"
        with contextlib.suppress(httpx.TransportError), httpx.Client(verify=False) as http:
            http.get(f"https://127.0.0.1:{port}/", timeout=1)
            return
        assert time.monotonic() < deadline, f"{what} did not listen"
        time.sleep(0.1)


def test_https_from_nginx_in_front(project: Path, cert: tuple[Path, Path]) -> None:
    nginx = shutil.which("nginx") or (
        "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
    )
    need(nginx is not None, "nginx (apt-get install -y nginx)")
    assert nginx is not None
    (site,) = _blocks("nginx")
    app_port, tls_port = free_port(), free_port()
    site_conf = (
        site.code.replace("listen 443 ssl;", f"listen 127.0.0.1:{tls_port} ssl;")
        .replace("server_name mcp.example.com;", "server_name 127.0.0.1;")
        .replace("/etc/weather/tls/fullchain.pem", str(cert[0]))
        .replace("/etc/weather/tls/privkey.pem", str(cert[1]))
        .replace("127.0.0.1:8000", f"127.0.0.1:{app_port}")
    )
    module = _blocks("python")[2].code.replace("port=8000", f"port={app_port}")
    (project / "weather" / "behind_nginx.py").write_text(
        module.replace("mcp.example.com", "127.0.0.1")
    )
    conf = _nginx_conf(project / "nginx", site_conf)
    with _serving([sys.executable, "-m", "weather.behind_nginx"], project, app_port):
        where = ["-e", str(conf.parent / "error.log"), "-p", str(conf.parent), "-c", str(conf)]
        front = subprocess.Popen(
            [nginx, *where, "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_port(tls_port, front, "nginx")
            url = f"https://127.0.0.1:{tls_port}"
            assert _call(f"{url}/mcp", cert[0]) == "Paris: sunny"
            assert _health(f"{url}/healthz", cert[0]) == (200, {"status": "ok"})
        finally:
            front.send_signal(signal.SIGQUIT)
            front.wait(timeout=30)
        assert f"127.0.0.1:{tls_port}" not in (conf.parent / "error.log").read_text()


def _unit() -> configparser.ConfigParser:
    (block,) = _blocks("ini")
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read_string(block.code)
    return unit


def test_the_systemd_unit_verifies_and_its_command_serves_and_stops(project: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    need(analyze is not None, "systemd-analyze (the systemd package)")
    assert analyze is not None
    (block,) = _blocks("ini")
    port = free_port()
    text = (
        block.code.replace("/srv/weather/.venv/bin/mcpgen", str(BIN / "mcpgen"))
        .replace("/srv/weather", str(project))
        .replace("User=weather", f"User={pwd.getpwuid(os.getuid()).pw_name}")
        .replace("--port 8000", f"--port {port}")
    )
    (project / "weather.service").write_text(text)
    verified = subprocess.run(
        [analyze, "verify", str(project / "weather.service")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "weather.service" not in verified.stdout + verified.stderr  # no complaint about it
    service = _unit()["Service"]
    assert service["KillSignal"] == "SIGTERM" and service["Type"] == "exec"
    command = shlex.split(text.split("ExecStart=", 1)[1].splitlines()[0])
    with _serving(command, project, port) as served:
        assert _call(f"http://127.0.0.1:{port}/mcp") == "Paris: sunny"
        began = time.monotonic()
        _stopped_cleanly(served)  # exits by SIGTERM: systemd counts that as a clean stop
        assert time.monotonic() - began < float(service["TimeoutStopSec"])


@pytest.mark.slow
def test_the_container_cmd_and_healthcheck_run_as_written(project: Path) -> None:
    (block,) = _blocks("dockerfile")
    lines = block.code.splitlines()
    cmd = json.loads(next(line for line in lines if line.startswith("CMD "))[4:])
    health = next(line for line in lines if line.startswith("HEALTHCHECK "))
    check = json.loads(health[health.index("CMD ") + 4 :])
    assert "STOPSIGNAL SIGTERM" in lines
    port = free_port()

    def local(argv: list[str]) -> list[str]:
        """The image's python is this one; ports and the address for this machine."""
        words = [sys.executable if word == "python" else word for word in argv]
        words = ["127.0.0.1" if word == "0.0.0.0" else word for word in words]
        return [re.sub(r"\b8000\b", str(port), word) for word in words]

    with _serving(local(cmd), project, port) as served:
        healthy = subprocess.run(local(check), capture_output=True, timeout=30, check=False)
        assert healthy.returncode == 0, healthy.stderr
        assert _call(f"http://127.0.0.1:{port}/mcp") == "Paris: sunny"
        _stopped_cleanly(served)
    sick = subprocess.run(local(check), capture_output=True, timeout=30, check=False)
    assert sick.returncode != 0  # nothing serves: the check fails
