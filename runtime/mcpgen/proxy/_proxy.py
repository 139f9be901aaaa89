"""`Proxy`: one upstream MCP server served as an mcpgen `Server`, to clients of both eras
over every transport.

The upstream is reached with a `mcpgen.Client` (a subprocess over stdio, or a URL:
Streamable HTTP, falling back to HTTP+SSE), in the era it speaks (probed, or forced with
`upstream_era`). The downstream side is an ordinary `Server` whose registry mirrors the
upstream's lists (`_mirror`); each forwarded request runs as a pending upstream call
(`_input`), which is what carries input requests across eras. The registry is
refreshed when the upstream announces a change, and the downstream clients hear of it
as of any registration (listen streams, legacy list_changed notifications).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

import msgspec

from mcpgen._api import Server
from mcpgen._api_client import Client
from mcpgen._errors import ClientError, ConfigurationError, McpError
from mcpgen._server._bus import PROMPTS, RESOURCES, TOOLS
from mcpgen.proxy._input import InputBridge
from mcpgen.proxy._mirror import completion_def, prompt_def, resource_def, template_def, tool_def
from mcpgen.proxy._pool import Upstreams

__all__ = ["Proxy", "UpstreamEra"]

log = logging.getLogger("mcpgen.proxy")

UpstreamEra = Literal["auto", "legacy", "modern"]

_ALL = (TOOLS, PROMPTS, RESOURCES)
_LIST_CHANGED = {
    "notifications/tools/list_changed": TOOLS,
    "notifications/prompts/list_changed": PROMPTS,
    "notifications/resources/list_changed": RESOURCES,
}


class Proxy(Server):
    """Serve the MCP server `upstream` (a URL, or a command line as a list of strings)
    as this server, to clients of either era over any transport (`run`, `asgi_app`,
    `Client.memory`).

    `upstream_era`: "auto" probes the era the upstream speaks; "legacy" or "modern"
    forces one. `input_timeout`: seconds a downstream client gets to answer an input
    request the upstream sent before the upstream call is cancelled. `timeout`: of each
    upstream request. Other keywords are the `Server`'s (name, state_keys, keys, ...).
    The upstream is connected while the server serves (its lifespan).
    """

    def __init__(
        self,
        upstream: str | Sequence[str],
        *,
        upstream_era: UpstreamEra = "auto",
        name: str = "mcpgen-proxy",
        headers: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = 300.0,
        input_timeout: float = 300.0,
        **options: Any,
    ) -> None:
        if upstream_era not in ("auto", "legacy", "modern"):
            raise ConfigurationError("upstream_era must be 'auto', 'legacy' or 'modern'")
        if "lifespan" in options:
            raise ConfigurationError("a Proxy's lifespan is its upstream connection")
        options.setdefault("sync_workers", 0)  # every handler forwards: all async
        super().__init__(name, lifespan=_connected, **options)
        self.bridge = InputBridge(input_timeout)
        options_up: dict[str, Any] = {
            "era": upstream_era,
            "name": name,
            "log_level": "debug",  # every message upstream; each client's level filters
            "timeout": timeout,
            "cache": False,  # the downstream client keeps its own cache
        }
        if isinstance(upstream, str):
            make = functools.partial(Client.http, upstream, headers=headers)
        elif upstream:
            make = functools.partial(Client.stdio, list(upstream), env=env, cwd=cwd)
        else:
            raise ConfigurationError("upstream: a URL or a non-empty command")
        pooled = isinstance(upstream, str)
        self.upstreams = Upstreams(make, self.bridge, pooled, **options_up)
        self.upstream = self.upstreams.main

    # -- mirroring ------------------------------------------------------------------------
    async def refresh(self, kinds: Sequence[str] = _ALL) -> None:
        """List the upstream's features of `kinds` again and serve those."""
        up, bridge, pick = self.upstream, self.bridge, self.upstreams.for_call
        if up.era == "modern" and not up.server_capabilities:
            await up.discover()  # a modern server's capabilities come from server/discover
        caps = up.server_capabilities
        if up.era == "legacy" and "logging" in caps and kinds == _ALL:
            await up.set_log_level("debug")  # a legacy session's level is session-wide
        if "completions" in caps:
            self._update("", fallback_completion=completion_def(up))
        if TOOLS in kinds:
            tools = await up.list_tools(refresh=True) if "tools" in caps else []
            defs = (tool_def(pick, bridge, tool) for tool in tools)
            self._update(TOOLS, tools={d.name: d for d in defs if d is not None})
        if PROMPTS in kinds:
            prompts = await up.list_prompts(refresh=True) if "prompts" in caps else []
            self._update(PROMPTS, prompts={p.name: prompt_def(pick, bridge, p) for p in prompts})
        if RESOURCES in kinds:
            resources, templates = [], []
            if "resources" in caps:
                resources = await up.list_resources(refresh=True)
                templates = await up.list_resource_templates(refresh=True)
            found = (template_def(pick, bridge, x) for x in templates)
            self._update(
                RESOURCES,
                resources={r.uri: resource_def(pick, bridge, r) for r in resources},
                templates=tuple(x for x in found if x is not None),
            )

    async def watch(self) -> None:
        """Follow the upstream's change notifications until it stops sending them."""
        caps = self.upstream.server_capabilities
        resources = caps.get("resources")
        uris: list[str] = []
        if isinstance(resources, dict) and resources.get("subscribe"):
            uris = list(self._registry.resources)
        async for note in self.upstream.listen(
            tools=True, prompts=True, resources=True, resource_uris=uris
        ):
            method = (
                note.get("method") if isinstance(note, dict) else type(note).__struct_config__.tag
            )
            kind = _LIST_CHANGED.get(str(method))
            if kind is not None:
                await self.refresh((kind,))
            elif method == "notifications/resources/updated":
                raw = note if isinstance(note, dict) else msgspec.to_builtins(note)
                self.notify_resource_updated(str(raw["params"]["uri"]))

    async def _watch_quietly(self) -> None:
        try:
            await self.watch()
        except (McpError, msgspec.ValidationError) as exc:  # e.g. an upstream without listen
            log.info("not following upstream changes: %s", exc)
        except ClientError as exc:  # the upstream went away: calls fail on their own
            log.warning("stopped following upstream changes: %s", exc)


@contextlib.asynccontextmanager
async def _connected(proxy: Proxy) -> AsyncIterator[Proxy]:
    """The proxy's lifespan: connect the upstream, mirror it, follow its changes."""
    async with proxy.upstream:
        await proxy.refresh()
        watcher = asyncio.ensure_future(proxy._watch_quietly())
        try:
            yield proxy
        finally:
            watcher.cancel()
            proxy.bridge.close()
            await proxy.upstreams.close()
            with contextlib.suppress(BaseException):
                await watcher
