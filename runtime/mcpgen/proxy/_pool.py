"""The proxy's upstream connections, one per set of input capabilities.

An upstream learns what its client can answer (elicitation in form or URL mode,
sampling, roots) from the capabilities that client declares: a legacy upstream once,
at `initialize`; a modern one with every request, but from the same `Client`. A
downstream client that lacks some of them must not look, upstream, as if it had them:
the upstream would ask for input the client cannot give instead of taking the path a
server takes for such a client. So each combination a downstream client declares gets
its own upstream connection, which declares exactly those; the first one (every
capability) also mirrors the upstream's lists and follows its changes. At most 8
connections, opened when a client with that combination first calls.

Only for a URL upstream: its sessions share one server, as any clients of it do. A
command upstream would need one process per combination, each with state of its own
(what one changes the others never see), so it has one connection, declaring every
capability; a client lacking one then gets the missing-capability error when the
upstream asks for it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from mcpgen._server._context import Context
from mcpgen.client._client import Client
from mcpgen.proxy._input import InputBridge

__all__ = ["ALL_INPUT", "Upstreams", "input_kinds"]

Kinds = tuple[bool, bool, bool, bool]  # elicitation form, elicitation url, sampling, roots
ALL_INPUT: Kinds = (True, True, True, True)


def input_kinds(ctx: Context) -> Kinds:
    """Which input requests the downstream client of `ctx` declared it can answer."""
    caps = msgspec.to_builtins(ctx.client_capabilities)
    elicitation = caps.get("elicitation")
    form = url = False
    if isinstance(elicitation, dict):
        form = not elicitation or "form" in elicitation
        url = "url" in elicitation
    return form, url, isinstance(caps.get("sampling"), dict), isinstance(caps.get("roots"), dict)


class Upstreams:
    """Makes, opens and closes the upstream clients (see the module docstring)."""

    def __init__(
        self, make: Callable[..., Client], bridge: InputBridge, pooled: bool, **options: Any
    ) -> None:
        self._make = make
        self._pooled = pooled
        self._bridge = bridge
        self._options = options
        self.main = self._client(ALL_INPUT)
        self._opened: dict[Kinds, asyncio.Future[Client]] = {}
        self._stack = contextlib.AsyncExitStack()

    def _client(self, kinds: Kinds) -> Client:
        form, url, sampling, roots = kinds
        modes: Sequence[str] = tuple(m for m, on in (("form", form), ("url", url)) if on)
        bridge = self._bridge
        return self._make(
            on_elicitation=bridge.elicit if modes else None,
            elicitation_modes=modes or ("form",),
            on_sampling=bridge.sample if sampling else None,
            on_roots=bridge.roots if roots else None,
            on_log=bridge.log,
            **self._options,
        )

    async def for_call(self, ctx: Context) -> Client:
        """The upstream client declaring what the caller of `ctx` declared."""
        if not self._pooled:
            return self.main
        kinds = input_kinds(ctx)
        if kinds == ALL_INPUT:
            return self.main
        opened = self._opened.get(kinds)
        if opened is None:
            opened = self._opened[kinds] = asyncio.ensure_future(self._open(kinds))
        try:
            return await asyncio.shield(opened)
        except Exception:
            if self._opened.get(kinds) is opened and opened.done():
                del self._opened[kinds]  # the next call tries again
            raise

    async def _open(self, kinds: Kinds) -> Client:
        return await self._stack.enter_async_context(self._client(kinds))

    async def close(self) -> None:
        for opened in self._opened.values():
            opened.cancel()
        self._opened.clear()
        await self._stack.aclose()
