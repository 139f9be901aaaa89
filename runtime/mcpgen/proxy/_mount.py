"""One upstream of a proxy and what it lists: a `Mount`.

A proxy serves one upstream or several (aggregation). Each upstream is a `Mount` with
its own connections (`Upstreams`) and its own pending calls (`InputBridge`: an input
request a legacy upstream sends outside any call's task is matched among that
upstream's calls only). A mount keeps the registry entries built from its upstream's
last lists; the proxy merges the mounts' entries into its registry (`merge`), tools
and prompts named `prefix + SEPARATOR + name`, resources and templates under their own
URIs, the first mount listing a URI serving it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from mcpgen._errors import ConfigurationError
from mcpgen._server._bus import PROMPTS, RESOURCES, TOOLS
from mcpgen._server._defs import CompletionDef, PromptDef, ResourceDef, TemplateDef, ToolDef
from mcpgen.client._client import Client
from mcpgen.proxy._input import InputBridge
from mcpgen.proxy._mirror import prompt_def, resource_def, template_def, tool_def
from mcpgen.proxy._pool import Upstreams
from mcpgen_types import latest as t

__all__ = ["SEPARATOR", "Mount", "Upstream", "merge", "routed_completion"]

log = logging.getLogger("mcpgen.proxy")

SEPARATOR = "_"  # valid in tool and prompt names of both eras, unlike "/" or ":"
ALL = (TOOLS, PROMPTS, RESOURCES)

Upstream = str | Sequence[str]  # a URL, or a command line


class Mount:
    """The upstream `target` served under `prefix` ("" for a proxy of one upstream)."""

    def __init__(
        self,
        prefix: str,
        target: Upstream,
        *,
        input_timeout: float,
        headers: dict[str, str] | None,
        env: dict[str, str] | None,
        cwd: str | None,
        roots: Sequence[str] | None = None,
        **options: Any,
    ) -> None:
        self.prefix = prefix
        self.names = prefix + SEPARATOR if prefix else ""
        self.bridge = InputBridge(input_timeout, roots)
        if isinstance(target, str):
            make = functools.partial(Client.http, target, headers=headers)
        elif target:
            make = functools.partial(Client.stdio, list(target), env=env, cwd=cwd)
        else:
            raise ConfigurationError("upstream: a URL or a non-empty command")
        self.upstreams = Upstreams(make, self.bridge, isinstance(target, str), **options)
        self.upstream = self.upstreams.main
        self.tools: dict[str, ToolDef] = {}
        self.prompts: dict[str, PromptDef] = {}
        self.resources: dict[str, ResourceDef] = {}
        self.templates: tuple[TemplateDef, ...] = ()

    async def refresh(self, kinds: Sequence[str] = ALL) -> None:
        """List the upstream's features of `kinds` again and keep their entries."""
        up, bridge, pick, names = self.upstream, self.bridge, self.upstreams.for_call, self.names
        if up.era == "modern" and not up.server_capabilities:
            await up.discover()  # a modern server's capabilities come from server/discover
        caps = up.server_capabilities
        if up.era == "legacy" and "logging" in caps and kinds == ALL:
            await up.set_log_level("debug")  # a legacy session's level is session-wide
        if TOOLS in kinds:
            tools = await up.list_tools(refresh=True) if "tools" in caps else []
            defs = (tool_def(pick, bridge, tool, names) for tool in tools)
            self.tools = {d.name: d for d in defs if d is not None}
        if PROMPTS in kinds:
            prompts = await up.list_prompts(refresh=True) if "prompts" in caps else []
            defs_p = (prompt_def(pick, bridge, p, names) for p in prompts)
            self.prompts = {d.name: d for d in defs_p}
        if RESOURCES in kinds:
            resources, templates = [], []
            if "resources" in caps:
                resources = await up.list_resources(refresh=True)
                templates = await up.list_resource_templates(refresh=True)
            found = (template_def(pick, bridge, x) for x in templates)
            self.resources = {r.uri: resource_def(pick, bridge, r) for r in resources}
            self.templates = tuple(x for x in found if x is not None)

    def completes(self, ref: t.PromptReference | t.ResourceTemplateReference) -> Any:
        """`ref` as this upstream knows it, or None when it is not this upstream's."""
        if isinstance(ref, t.PromptReference):
            if ref.name in self.prompts:
                return {"type": "ref/prompt", "name": ref.name[len(self.names) :]}
            return None
        if any(x.definition.uri_template == ref.uri for x in self.templates):
            return msgspec.to_builtins(ref)
        return msgspec.to_builtins(ref) if ref.uri in self.resources else None


def merge(mounts: Sequence[Mount], kind: str) -> dict[str, Any]:
    """The registry fields of `kind` served for `mounts`; on a name or URI served by
    two, the first mount's wins (logged)."""
    if kind == RESOURCES:
        resources: dict[str, ResourceDef] = {}
        for mount in mounts:
            _first_wins(resources, mount.resources, mount.prefix, "resource")
        templates = tuple(x for mount in mounts for x in mount.templates)
        return {"resources": resources, "templates": templates}
    merged: dict[str, Any] = {}
    for mount in mounts:
        _first_wins(merged, getattr(mount, kind), mount.prefix, kind[:-1])
    return {kind: merged}


def _first_wins(into: dict[str, Any], entries: Mapping[str, Any], prefix: str, what: str) -> None:
    for key, entry in entries.items():
        if key in into:
            log.warning(
                "upstream %r: %s %r is already served by another upstream", prefix, what, key
            )
        else:
            into[key] = entry


def routed_completion(mounts: Sequence[Mount]) -> CompletionDef:
    """Completion requests go to the upstream that lists the referenced prompt or
    template (the prompt's name without its prefix); others complete nothing."""

    async def complete(
        ref: t.PromptReference | t.ResourceTemplateReference,
        argument: str,
        value: str,
        context: dict[str, str],
    ) -> Any:
        for mount in mounts:
            theirs = mount.completes(ref)
            if theirs is not None and "completions" in mount.upstream.server_capabilities:
                return await mount.upstream.complete(theirs, argument, value, context)
        return t.CompleteResult(completion=t.CompleteResultCompletion(values=[]))

    return CompletionDef(complete, is_async=True)
