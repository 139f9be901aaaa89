"""The workload on mcpgen: ``Server(lifespan=...)`` opens the stack's clients once and
every tool reaches them through ``ctx.lifespan``.

    python bench/workload/servers/mcpgen_server.py --port 8201 --api URL --redis URL [--stack fast]

One worker: ``server.run(transport="http")``. With ``--workers N`` (N > 1): ``mcpgen serve
this-file:server --workers N --redis URL``, the way a user scales out: N processes on
one port sharing legacy sessions through Redis (database 1 of the workload's Redis);
each worker builds its server from the settings left in the environment (the module's
``server`` attribute). With ``WORKLOAD_PROFILE=<file>``
the process profiles itself (cProfile) from SIGUSR1 on and writes the statistics
there when it stops.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _stacks

from mcpgen import Context, Server


def build(stack: str, api: str, redis_url: str) -> Server:
    server = Server("workload", "1.0.0", lifespan=_stacks.lifespan(stack, api, redis_url))

    @server.tool
    async def search_products(
        ctx: Context, category: str, min_price: float, max_price: float, limit: int = 10
    ) -> str:
        """Products of a category within a price range, with the ten most popular."""
        return await ctx.lifespan.search_products(category, min_price, max_price, limit)

    @server.tool
    async def get_user_cart(ctx: Context, user_id: int) -> str:
        """A user's cart, its first product and the user's recent items."""
        return await ctx.lifespan.get_user_cart(user_id)

    @server.tool
    async def checkout(ctx: Context, user_id: int, items: list[dict[str, int]]) -> str:
        """Price a cart and record the order."""
        return await ctx.lifespan.checkout(user_id, items)

    return server


def __getattr__(name: str) -> Server:
    """`server`, for `mcpgen serve` (built from the environment `_stacks.export` set)."""
    if name != "server":
        raise AttributeError(name)
    return build(*_stacks.settings())


def main() -> None:
    args: Any = _stacks.arguments(__doc__.splitlines()[0])
    if args.workers > 1:
        _stacks.export(args)
        state = args.redis.rsplit("/", 1)[0] + "/1"
        argv = [sys.executable, "-m", "mcpgen", "serve", f"{Path(__file__).resolve()}:server"]
        argv += ["--transport", "http", "--host", args.host, "--port", str(args.port)]
        argv += ["--workers", str(args.workers), "--redis", state]
        os.environ.setdefault("MCPGEN_STATE_KEYS", "workload-" + "k" * 40)
        os.execv(sys.executable, argv)
    server = build(args.stack, args.api, args.redis)
    profile = os.environ.get("WORKLOAD_PROFILE")
    if not profile:
        server.run(transport="http", host=args.host, port=args.port)
        return
    import cProfile  # noqa: PLC0415
    import signal  # noqa: PLC0415
    import time  # noqa: PLC0415

    # CPU time, not idle waits; switched on by SIGUSR1 (after the warm-up, so that the
    # imports and the first calls stay out), written when the server stops. uvicorn
    # re-raises the SIGTERM it stopped on: exit through Python instead.
    profiler = cProfile.Profile(time.process_time)
    signal.signal(signal.SIGUSR1, lambda *_: profiler.enable())
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.run(transport="http", host=args.host, port=args.port)
    finally:
        profiler.disable()
        profiler.dump_stats(profile)


if __name__ == "__main__":
    main()
