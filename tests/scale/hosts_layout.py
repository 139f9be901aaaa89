"""The several-host layout of docs/guide/deployment.md, on one machine: loopback
addresses stand in for hosts (on Linux the whole of 127.0.0.0/8 is on `lo`).

- Redis: a primary, a replica and three sentinels (`tests/stores/redis_ha.py`).
- Hosts 127.0.0.2, .3 and .4: the page's bash block run as written but for the
  addresses, the port, the secret file and the server (`tests/scale/hosts_app.py`):
  `mcpgen serve --workers 2 --host 127.0.0.X`, every host on the same port.
- A fourth host, 127.0.0.5, started the same way with other state keys and left out of
  the balancer: the misconfigured host the page warns about.
- nginx: the page's nginx block with a certificate made here, TLS on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import httpx

from tests.certs import self_signed
from tests.conftest import REPO, need
from tests.docs.blocks import fenced_blocks
from tests.processes import free_port
from tests.scale.cluster_run import Hit, read_hits
from tests.stores.redis_ha import SentinelLayout, binary

PAGE = REPO / "docs" / "guide" / "deployment.md"
ADDRESSES = ("127.0.0.2", "127.0.0.3", "127.0.0.4")
ODD = "127.0.0.5"  # a host with other state keys
PAGE_HOSTS = ("10.0.1.11", "10.0.1.12", "10.0.1.13")
BIN = Path(sys.executable).parent
SPEC = "tests/scale/hosts_app.py:server"
LOG_FORMAT = (
    'log_format hosts \'$remote_addr "$request" $status upstream=$upstream_addr '
    "session=$http_mcp_session_id';\n"
)


def several_host_blocks() -> tuple[str, str]:
    """The page's several-host bash block and its balancer's nginx block."""
    bash = [
        b.code for b in fenced_blocks(PAGE) if b.language == "bash" and "--host 10.0.1.11" in b.code
    ]
    nginx = [
        b.code for b in fenced_blocks(PAGE) if b.language == "nginx" and "mcpgen_hosts" in b.code
    ]
    assert len(bash) == 1 and len(nginx) == 1, (bash, nginx)
    return bash[0], nginx[0]


def common_port() -> int:
    """A port free on every simulated host's address."""
    for address in (*ADDRESSES, ODD):
        with socket.socket() as sock:
            try:
                sock.bind((address, 0))
            except OSError:
                need(False, f"the loopback address {address} (Linux has all of 127.0.0.0/8 on lo)")
    while True:
        port = free_port()
        with contextlib.ExitStack() as stack:
            try:
                for address in (*ADDRESSES, ODD):
                    sock = stack.enter_context(socket.socket())
                    sock.bind((address, port))
            except OSError:
                continue
            return port


@dataclass
class Host:
    """One simulated host: the page's command under bash, its stderr collected."""

    address: str
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def key_id(self) -> str:
        for line in self.lines:
            found = re.match(r"mcpgen: state key id (\w+) ", line)
            if found:
                return found[1]
        raise AssertionError("".join(self.lines))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=10)


def start_host(script: str, address: str, port: int, keys: Path, redis_url: str) -> Host:
    """The page's command for the host at `address`, changed only where this machine
    differs from the page's network."""
    code = (
        script.replace("/run/secrets/mcpgen-state-keys", str(keys))
        .replace("10.0.0.10", "127.0.0.1")  # the balancer's address, as the hosts see it
        .replace("--host 10.0.1.11 ", f"--host {address} ")
        .replace("--port 8000", f"--port {port}")
        .replace("--workers 4", "--workers 2")
        .replace("weather.app:server", SPEC)
    )
    code = re.sub(r'"redis\+sentinel://[^"]+"', f'"{redis_url}"', code)
    assert address in code and str(keys) in code and redis_url in code, code
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "HOSTS_TEST_LABEL": address,
    }
    for name in ("MCPGEN_STATE_KEYS", "MCPGEN_REDIS_URL", "FORWARDED_ALLOW_IPS"):
        env.pop(name, None)
    proc = subprocess.Popen(
        ["bash", "-c", code],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return Host(address, proc)


def tls_context(cert: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert))  # the only trust anchor


def healthy(address: str, port: int) -> bool:
    with contextlib.suppress(httpx.TransportError):
        return httpx.get(f"http://{address}:{port}/healthz", timeout=2).status_code == 200
    return False


def wait_for(check: Host, port: int, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not healthy(check.address, port):
        assert check.proc.poll() is None, "".join(check.lines)
        assert time.monotonic() < deadline, "".join(check.lines)
        time.sleep(0.2)


def nginx_conf(where: Path, site: str) -> Path:
    """The balancer's site inside a configuration of its own files (pid, logs, temp)."""
    user = "user root;\n" if os.getuid() == 0 else ""  # nginx drops root to nobody otherwise
    (where / "temp").mkdir(parents=True)
    temp = "".join(
        f"    {kind}_temp_path {where}/temp/{kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = where / "nginx.conf"
    conf.write_text(
        f"{user}worker_processes 1;\npid {where}/nginx.pid;\n"
        f"error_log {where}/error.log warn;\nevents {{ worker_connections 256; }}\n"
        f"http {{\n    {LOG_FORMAT}    access_log {where}/access.log hosts;\n{temp}"
        f"{site}\n}}\n"
    )
    return conf


@dataclass
class Layout:
    url: str  # https://localhost:PORT/mcp
    port: int  # the hosts' port
    cert: Path
    dir: Path
    hosts: list[Host]
    odd: Host

    def hits(self) -> list[Hit]:
        """The requests nginx finished so far; `upstream` is the host's address."""
        found = read_hits(self.dir / "access.log")
        return [replace(hit, upstream=hit.upstream.rsplit(":", 1)[0]) for hit in found]


@contextlib.contextmanager
def layout(where: Path) -> Iterator[Layout]:
    nginx = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    need(nginx is not None, "nginx", "nginx")
    assert nginx is not None
    binary("redis-server")
    script, site = several_host_blocks()
    cert, key = self_signed(where)
    shared, other = where / "state-keys", where / "other-state-keys"
    shared.write_text("several-hosts-shared-key-0123456789\n")
    other.write_text("a-different-key-on-one-host-98765\n")
    port, tls = common_port(), free_port()
    rendered = site
    for page_host, address in zip(PAGE_HOSTS, ADDRESSES, strict=True):
        rendered = rendered.replace(f"{page_host}:8000", f"{address}:{port}")
    rendered = (
        rendered.replace("listen 443 ssl", f"listen 127.0.0.1:{tls} ssl")
        .replace("server_name mcp.example.com;", "server_name localhost;")
        .replace("/etc/mcp/tls/fullchain.pem", str(cert))
        .replace("/etc/mcp/tls/privkey.pem", str(key))
    )
    conf = nginx_conf(where / "nginx", rendered)
    redis = SentinelLayout()
    hosts: list[Host] = []
    front = None
    try:
        for address in ADDRESSES:
            hosts.append(start_host(script, address, port, shared, redis.url))
        odd = start_host(script, ODD, port, other, redis.url)
        hosts.append(odd)
        for host in hosts:
            wait_for(host, port)
        checked = subprocess.run(
            [
                nginx,
                "-t",
                "-e",
                str(conf.parent / "error.log"),
                "-p",
                str(conf.parent),
                "-c",
                str(conf),
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert checked.returncode == 0, checked.stderr
        flags = ["-e", str(conf.parent / "error.log"), "-p", str(conf.parent), "-c", str(conf)]
        front = subprocess.Popen(
            [nginx, *flags, "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"https://localhost:{tls}/mcp"
        deadline = time.monotonic() + 30
        while True:
            assert front.poll() is None, (conf.parent / "error.log").read_text()
            with contextlib.suppress(httpx.TransportError):
                httpx.get(url.replace("/mcp", "/healthz"), verify=tls_context(cert), timeout=2)
                break
            assert time.monotonic() < deadline, "nginx did not listen"
            time.sleep(0.1)
        yield Layout(url, port, cert, conf.parent, hosts[:3], odd)
    finally:
        if front is not None:
            front.send_signal(signal.SIGQUIT)
            front.wait(timeout=30)
        for host in hosts:
            host.stop()
        redis.close()
