"""How `Server.run` serves until it is stopped, over stdio or under uvicorn.

Both ways turn a lifespan that fails to start into a clean exit carrying its message
(`SystemExit`, status 1) instead of a traceback: nothing was served, and the reason is
all an operator needs. Each transport is imported on first use: a server run on stdio
never loads the HTTP stack.

`mcpgen serve` imports a module to find its server and then runs it itself. A module
that runs its server when imported (an unguarded `server.run()` at the bottom) would
serve once during the import, on stdio whatever transport was asked, and then again:
while `importing_for_serve` holds, a run is refused with a `ConfigurationError` that
says how to guard the call.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from mcpgen._errors import ConfigurationError
from mcpgen.transports._lifespan import StartupError

if TYPE_CHECKING:
    from mcpgen.transports._http import McpAsgiApp
    from mcpgen.transports._port import ServerPort

__all__ = ["importing_for_serve", "run_http", "run_stdio"]

_importing: list[str] = []  # what `mcpgen serve` is importing, innermost last


@contextmanager
def importing_for_serve(where: str) -> Iterator[None]:
    """While `mcpgen serve` imports `where`: running a server then is refused."""
    _importing.append(where)
    try:
        yield
    finally:
        _importing.pop()


def _refuse_at_import() -> None:
    if _importing:
        raise ConfigurationError(
            f"{_importing[-1]} starts a server when it is imported (a run() call at module "
            "level); `mcpgen serve` runs the server itself, so put that call under "
            '`if __name__ == "__main__":`'
        )


def _event_loop_runner() -> Callable[[Any], Any]:
    """asyncio.run, on uvloop when it is installed (faster pipes and sockets)."""
    try:
        import uvloop  # noqa: PLC0415 (optional: the http extra)
    except ImportError:
        return asyncio.run
    return uvloop.run


def run_stdio(server: ServerPort) -> None:
    """Serve `server` on stdin/stdout until EOF."""
    _refuse_at_import()
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    from mcpgen.transports._stdio import serve_stdio  # noqa: PLC0415 (lazy)

    try:
        _event_loop_runner()(serve_stdio(server))
    except StartupError as exc:
        logging.getLogger("mcpgen.server").debug("%s", exc, exc_info=exc.__cause__)
        raise SystemExit(f"mcpgen: {exc}") from None


def run_http(app: McpAsgiApp, host: str, port: int, log_level: str) -> None:
    """Serve `app` under uvicorn (one worker), its URLs printed on stderr once it listens."""
    _refuse_at_import()
    from mcpgen.transports._http import uvicorn_server  # noqa: PLC0415 (lazy)

    server = uvicorn_server(app, host, port, log_level=log_level, announce=sys.stderr)
    try:
        server.run()  # a failed startup: uvicorn exits (or, in some versions, returns)
    except SystemExit:
        if app.life.failure is None:
            raise
    except KeyboardInterrupt:  # uvicorn stopped cleanly, then raised the Ctrl-C it caught
        raise SystemExit(130) from None
    if app.life.failure is not None:
        raise SystemExit(f"mcpgen: {app.life.failure}") from None
