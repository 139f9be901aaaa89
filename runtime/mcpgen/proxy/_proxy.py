"""`Proxy`: one upstream MCP server served as an mcpgen `Server`, to clients of both eras
over every transport.

The upstream is reached with a `mcpgen.Client` (a subprocess over stdio, or a URL:
Streamable HTTP, falling back to HTTP+SSE), in the era it speaks (probed, or forced with
`upstream_era`). The downstream side is an ordinary `Server` whose registry mirrors the
upstream's lists (`_mirror`); each forwarded request runs as a pending upstream call
(`_input`), which is what carries input requests across eras. The registry is
refreshed when the upstream announces a change, and the downstream clients hear of it
as of any registration (listen streams, legacy list_changed notifications).

Once connected, the proxy answers with its upstream's identity (`_identity`): a proxy
of one upstream takes that upstream's serverInfo, with a description saying it is an
mcpgen proxy of it, and its instructions; an aggregating one keeps its own name and
joins the upstreams' instructions under a heading per prefix. A `name` or
`instructions` given to `Proxy` wins over the upstream's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Literal

import msgspec

from mcpgen._errors import ClientError, ConfigurationError, McpError
from mcpgen._protocol import META_SERVER_INFO
from mcpgen._server._bus import PROMPTS, RESOURCES, TOOLS
from mcpgen.proxy._mirror import completion_def, unlisted_def
from mcpgen.proxy._mount import ALL, Mount, Upstream, merge, routed_completion
from mcpgen.proxy._route import Router
from mcpgen.server._server import Server
from mcpgen_types import latest as t

__all__ = ["Proxy", "UpstreamEra"]

log = logging.getLogger("mcpgen.proxy")

UpstreamEra = Literal["auto", "legacy", "modern"]
"""Which era the proxy speaks to its upstream: `"auto"` probes it, `"modern"` or
`"legacy"` pins one."""

PROXY_NAME = "mcpgen-proxy"  # the serverInfo name of an aggregating proxy

_PREFIX = re.compile(r"[A-Za-z0-9-]+")
_LIST_CHANGED = {
    "notifications/tools/list_changed": TOOLS,
    "notifications/prompts/list_changed": PROMPTS,
    "notifications/resources/list_changed": RESOURCES,
}


class Proxy(Server):
    """Serve the MCP server `upstream` (a URL, or a command line as a list of strings)
    as this server, to clients of either era over any transport (`run`, `asgi_app`,
    `Client.memory`). A mapping of prefixes to upstreams serves them all (aggregation):
    tools and prompts named `prefix_name`, resources and templates under their URIs.

    `upstream_era`: "auto" probes the era each upstream speaks; "legacy" or "modern"
    forces one (for all, or per prefix in a mapping). `input_timeout`: seconds a downstream
    client gets to answer an input request the upstream sent before the upstream call is
    cancelled. `timeout`: of each upstream request. `roots`: root URIs the upstreams are
    given when they ask (without them, a call's own client is asked, and a request outside
    any call gets none). `name`: the serverInfo name; without
    it a proxy of one upstream answers with the upstream's serverInfo (its description
    noting the proxy) and an aggregating one is "mcpgen-proxy". The upstreams'
    instructions are served unless `instructions` is given. Other keywords are the
    `Server`'s (version, state_keys, keys, ...); with a shared bus (`redis=`, `bus=`) a
    continuation reaching a worker that does not hold its upstream call is carried to
    the one that does (`_route`). The upstreams are connected while the server serves
    (its lifespan).
    """

    def __init__(
        self,
        upstream: Upstream | Mapping[str, Upstream],
        *,
        upstream_era: UpstreamEra | Mapping[str, UpstreamEra] = "auto",
        name: str | None = None,
        headers: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = 300.0,
        input_timeout: float = 300.0,
        roots: Sequence[str] | None = None,
        **options: Any,
    ) -> None:
        targets = dict(upstream) if isinstance(upstream, Mapping) else {"": upstream}
        # A mapping names some upstreams' eras; the others are probed.
        eras = dict(upstream_era) if isinstance(upstream_era, Mapping) else {}
        default: UpstreamEra = "auto" if isinstance(upstream_era, Mapping) else upstream_era
        if any(eras.get(p, default) not in ("auto", "legacy", "modern") for p in targets):
            raise ConfigurationError("upstream_era must be 'auto', 'legacy' or 'modern'")
        if "lifespan" in options:
            raise ConfigurationError("a Proxy's lifespan is its upstream connection")
        options.setdefault("sync_workers", 0)  # every handler forwards: all async
        # What the proxy says of itself is the upstreams' unless the caller said it.
        self._own_name = name is not None
        self._own_instructions = options.get("instructions") is not None
        name = name or PROXY_NAME
        super().__init__(name, lifespan=_connected, **options)
        prefixed = isinstance(upstream, Mapping)  # even a mapping of one: names stay stable
        if not targets or (prefixed and not all(_PREFIX.fullmatch(p) for p in targets)):
            raise ConfigurationError(
                "upstreams: a mapping of prefixes (letters, digits, '-'; no '_') to upstreams"
            )
        self.mounts = [
            Mount(
                prefix,
                target,
                input_timeout=input_timeout,
                headers=headers,
                env=env,
                cwd=cwd,
                roots=roots,
                era=eras.get(prefix, default),
                name=name,
                log_level="debug",  # every message upstream; each client's level filters
                timeout=timeout,
                cache=False,  # the downstream client keeps its own cache
            )
            for prefix, target in targets.items()
        ]
        first = self.mounts[0]  # the upstream of a proxy of one
        self.bridge, self.upstreams, self.upstream = first.bridge, first.upstreams, first.upstream

    # -- identity -------------------------------------------------------------------------
    def identify(self) -> None:
        """Serve the connected upstreams' identity and instructions (see the module
        docstring); clients that connect from now on see them."""
        info, instructions = _identity(self.mounts, self.info)
        if not self._own_name:
            self.info = info
        if not self._own_instructions:
            self.instructions = instructions
        core = self._core
        if core is not None:  # already serving: the core copied both when it was built
            core.info, core.instructions = self.info, self.instructions
            core.server_meta = {META_SERVER_INFO: msgspec.to_builtins(self.info)}
            self._update("")  # drops results cached with the old identity

    # -- mirroring ------------------------------------------------------------------------
    async def refresh(self, kinds: Sequence[str] = ALL, mounts: Sequence[Mount] = ()) -> None:
        """List the features of `kinds` of `mounts` (all by default) again and serve them."""
        for mount in mounts or self.mounts:
            await mount.refresh(kinds)
        self._serve(kinds)

    def _serve(self, kinds: Sequence[str]) -> None:
        if len(self.mounts) == 1:
            up = self.upstream
            if "completions" in up.server_capabilities:
                self._update("", fallback_completion=completion_def(up))
            if "resources" in up.server_capabilities:
                mount = self.mounts[0]
                reader = unlisted_def(mount.upstreams.for_call, mount.bridge)
                self._update("", fallback_resource=reader)
        elif any("completions" in m.upstream.server_capabilities for m in self.mounts):
            self._update("", fallback_completion=routed_completion(self.mounts))
        for kind in kinds:
            self._update(kind, **merge(self.mounts, kind))

    async def watch(self, mount: Mount | None = None) -> None:
        """Follow `mount`'s (the first's) upstream change notifications until it stops
        sending them."""
        mount = mount or self.mounts[0]
        uris = _followed(mount)
        async for note in mount.upstream.listen(
            tools=True, prompts=True, resources=True, resource_uris=uris
        ):
            method = (
                note.get("method") if isinstance(note, dict) else type(note).__struct_config__.tag
            )
            kind = _LIST_CHANGED.get(str(method))
            if kind is not None:
                await self.refresh((kind,), (mount,))
            elif method == "notifications/resources/updated":
                raw = note if isinstance(note, dict) else msgspec.to_builtins(note)
                self.notify_resource_updated(str(raw["params"]["uri"]))

    async def _watch_quietly(self, mount: Mount) -> None:
        try:
            await self.watch(mount)
        except (McpError, msgspec.ValidationError) as exc:  # e.g. an upstream without listen
            log.info("not following upstream changes: %s", exc)
        except ClientError as exc:  # the upstream went away: calls fail on their own
            log.warning("stopped following upstream changes: %s", exc)


def _identity(
    mounts: Sequence[Mount], own: t.Implementation
) -> tuple[t.Implementation, str | None]:
    """The serverInfo and instructions of a proxy of `mounts` (connected); `own`: the
    proxy's serverInfo so far."""
    if len(mounts) == 1 and not mounts[0].prefix:
        up = mounts[0].upstream
        raw = dict(up.server_info or {})
        name, version = str(raw.get("name") or PROXY_NAME), str(raw.get("version") or "")
        note = f"mcpgen proxy of {name} {version}".rstrip()
        theirs = raw.get("description")
        raw.update(name=name, version=version, description=f"{note}: {theirs}" if theirs else note)
        try:
            info = msgspec.convert(raw, t.Implementation)
        except msgspec.ValidationError:  # odd extras (icons, say): the essentials only
            info = t.Implementation(name=name, version=version, description=raw["description"])
        return info, up.core.instructions
    parts, sections = [], []
    for mount in mounts:
        raw = mount.upstream.server_info or {}
        parts.append(f"{mount.prefix} ({raw.get('name', '?')} {raw.get('version', '')}".rstrip())
        text = mount.upstream.core.instructions
        if text:
            sections.append(f"## {mount.prefix}\n\n{text.strip()}")
    note = "mcpgen proxy of " + "), ".join(parts) + ")"
    info = msgspec.structs.replace(own, description=note)
    return info, "\n\n".join(sections) or None


def _followed(mount: Mount) -> list[str]:
    """The URIs whose updates the proxy follows upstream: the resources the upstream
    listed at the start, when it offers subscriptions."""
    resources = mount.upstream.server_capabilities.get("resources")
    return (
        list(mount.resources) if isinstance(resources, dict) and resources.get("subscribe") else []
    )


def _undeliverable(followed: set[str]) -> Callable[[str], str | None]:
    def why(uri: str) -> str | None:
        if uri in followed:
            return None
        return (
            f"the proxy cannot deliver updates of {uri}: it follows only the resources its "
            "upstream listed when the proxy started (a URI made from a template is not one), "
            "and only when that upstream offers subscriptions"
        )

    return why


@contextlib.asynccontextmanager
async def _connected(proxy: Proxy) -> AsyncIterator[Proxy]:
    """The proxy's lifespan: connect the upstreams, mirror them, follow their changes."""
    async with contextlib.AsyncExitStack() as stack:
        for mount in proxy.mounts:
            await stack.enter_async_context(mount.upstream)
        await proxy.refresh()  # a modern upstream's identity comes with its discover
        proxy.identify()
        followed = {uri for mount in proxy.mounts for uri in _followed(mount)}
        proxy.core.undeliverable = _undeliverable(followed)
        if proxy._bus is not None:  # shared: continuations go to the process holding them
            router = Router(proxy.core.bus, lambda: [m.bridge for m in proxy.mounts])
            stack.callback(router.close)
            for mount in proxy.mounts:
                mount.bridge.remote = router.remote
        watchers = [asyncio.ensure_future(proxy._watch_quietly(m)) for m in proxy.mounts]
        try:
            yield proxy
        finally:
            for watcher in watchers:
                watcher.cancel()
            for mount in proxy.mounts:
                mount.bridge.close()
                await mount.upstreams.close()
            for watcher in watchers:
                with contextlib.suppress(BaseException):
                    await watcher
