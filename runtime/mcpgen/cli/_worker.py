"""One worker of `mcpgen serve --workers N`: `python -m mcpgen.cli._worker SPEC
[--path DIR]... [--drain-seconds S] --fd K --ready-fd R`.

The supervisor starts N of these on the listening socket it inherits (`_workers`).
A worker needs the server and the HTTP stack, not the command line: started this way
it never imports typer, rich or click (about 10 MB less per worker). When the
supervisor exported `--auth-*` options (`MCPGEN_AUTH_*` variables) the worker goes
through `mcpgen serve ... --fd K --ready-fd R` instead, which reads and checks them
the way the supervisor did.

Exit status 2 with one line on stderr when SPEC names no server, as `mcpgen serve`.
"""

from __future__ import annotations

import argparse
import os
import sys

from mcpgen._errors import ConfigurationError
from mcpgen.cli._load import load_server
from mcpgen.cli._workers import serve_socket

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mcpgen.cli._worker")
    parser.add_argument("spec")
    parser.add_argument("--path", action="append", default=[])
    parser.add_argument("--drain-seconds", type=float)
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--ready-fd", type=int)
    args = parser.parse_args(argv)
    if any(name.startswith("MCPGEN_AUTH_") for name in os.environ):
        from mcpgen.cli import main as command_line  # noqa: PLC0415 (typer: only with auth)

        words = [word for extra in args.path for word in ("--path", extra)]
        if args.drain_seconds is not None:
            words += ["--drain-seconds", repr(args.drain_seconds)]
        if args.ready_fd is not None:
            words += ["--ready-fd", str(args.ready_fd)]
        sys.argv = ["mcpgen", "serve", args.spec, "--transport", "http", *words]
        sys.argv += ["--fd", str(args.fd)]
        command_line()
        return
    try:
        server = load_server(args.spec, args.path)
    except (LookupError, ConfigurationError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from None
    serve_socket(server, args.fd, ready_fd=args.ready_fd, drain_seconds=args.drain_seconds)


if __name__ == "__main__":
    main()
