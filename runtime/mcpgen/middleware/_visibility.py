"""Caller-aware visibility: what a caller may not use is absent from its lists and
refused, with the error an unknown name gets, when it asks for it anyway."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import msgspec

from mcpgen import _protocol as proto
from mcpgen._errors import McpError
from mcpgen._server._bus import PROMPTS, RESOURCES, TOOLS
from mcpgen._server._core import Registry, ServerCore
from mcpgen._server._middleware import CallNext, Middleware, MiddlewareContext
from mcpgen.stores import ChangeEvent

__all__ = ["Feature", "Visibility"]

Kind = Literal["tool", "resource", "template", "prompt"]
_CHANGES: dict[str, str] = {"tool": TOOLS, "resource": RESOURCES, "template": RESOURCES}
_CHANGES["prompt"] = PROMPTS


class Feature(msgspec.Struct, frozen=True):
    """What a visibility rule is told of a feature: its kind, name (a resource's URI,
    a template's URI template), tags and scopes."""

    kind: Kind
    name: str
    tags: frozenset[str]
    scopes: frozenset[str]


Rule = Callable[[MiddlewareContext[Any], Feature], bool]

# A list method -> (its result's field, the kind listed, the registry's entries by
# name, the definition's name field).
_LISTED: dict[str, tuple[str, Kind, Callable[[Registry], Mapping[str, Any]], str]] = {
    "tools/list": ("tools", "tool", lambda r: r.tools, "name"),
    "prompts/list": ("prompts", "prompt", lambda r: r.prompts, "name"),
    "resources/list": ("resources", "resource", lambda r: r.resources, "uri"),
    "resources/templates/list": (
        "resource_templates",
        "template",
        lambda r: {x.template.template: x for x in r.templates},
        "uri_template",
    ),
}


def _feature(kind: Kind, name: str, entry: Any) -> Feature:
    return Feature(kind, name, entry.tags, entry.scopes)


class Visibility(Middleware):
    """Hide and refuse features a caller may not use. A feature is usable when:
    it is not disabled (`disable`/`enable` by name, `disable_tags`/`enable_tags`),
    with `scopes=True` the caller's token grants every scope the feature was
    registered with (`scopes=[...]`; no token: such features are hidden), and
    `allow(ctx, feature)` (if given) says yes. A change made with `disable`/`enable`
    at run time is announced to clients as a list change of that kind.

    Lists lose the hidden entries (a page may then hold fewer than the page size);
    `tools/call`, `prompts/get`, `resources/read` and completions of a hidden feature
    get the error of an unknown name, so a caller cannot tell the two apart."""

    inline = True

    def __init__(
        self,
        *,
        allow: Rule | None = None,
        scopes: bool = True,
        disabled_tags: Iterable[str] = (),
    ) -> None:
        self.allow = allow
        self.scopes = scopes
        self.disabled_tags = set(disabled_tags)
        self.disabled: set[tuple[Kind, str]] = set()
        self._cores: list[ServerCore] = []

    # -- run-time switches ---------------------------------------------------------------
    def disable(self, kind: Kind, name: str) -> None:
        """Hide the `kind` ("tool", "resource", "template", "prompt") named `name`."""
        self.disabled.add((kind, name))
        self._announce({kind})

    def enable(self, kind: Kind, name: str) -> None:
        self.disabled.discard((kind, name))
        self._announce({kind})

    def disable_tags(self, *tags: str) -> None:
        """Hide every feature carrying one of `tags`."""
        self.disabled_tags.update(tags)
        self._announce({"tool", "resource", "prompt"})

    def enable_tags(self, *tags: str) -> None:
        self.disabled_tags.difference_update(tags)
        self._announce({"tool", "resource", "prompt"})

    def _announce(self, kinds: set[str]) -> None:
        for core in self._cores:
            for change in sorted({_CHANGES[k] for k in kinds}):
                core.bus.publish(ChangeEvent(change))

    # -- the rule ------------------------------------------------------------------------
    def usable(self, ctx: MiddlewareContext[Any], feature: Feature) -> bool:
        if (feature.kind, feature.name) in self.disabled or feature.tags & self.disabled_tags:
            return False
        if self.scopes and feature.scopes and not feature.scopes <= ctx.scopes:
            return False
        return self.allow is None or self.allow(ctx, feature)

    def _read_target(self, registry: Registry, uri: str) -> Feature | None:
        exact = registry.resources.get(uri)
        if exact is not None:
            return _feature("resource", uri, exact)
        for template in registry.templates:
            if template.template.match(uri) is not None:
                return _feature("template", template.template.template, template)
        return None

    async def on_request(self, ctx: MiddlewareContext[Any], call_next: CallNext) -> Any:
        if ctx.core not in self._cores:
            self._cores.append(ctx.core)
        registry = ctx.core.registry
        method, params = ctx.method, ctx.params
        target: Feature | None = None
        what = ""
        if method == "tools/call" and (tool := registry.tools.get(params.name)) is not None:
            target, what = _feature("tool", params.name, tool), f"tool: {params.name!r}"
        elif method == "prompts/get" and (prompt := registry.prompts.get(params.name)):
            target, what = _feature("prompt", params.name, prompt), f"prompt: {params.name!r}"
        elif method == "resources/read":
            target = self._read_target(registry, params.uri)
            if target is not None and not self.usable(ctx, target):
                raise McpError(
                    proto.INVALID_PARAMS, f"resource not found: {params.uri}", {"uri": params.uri}
                )
            target = None
        elif method == "completion/complete":
            ref = params.ref
            if getattr(ref, "type", "") == "ref/prompt" and ref.name in registry.prompts:
                target = _feature("prompt", ref.name, registry.prompts[ref.name])
                what = f"prompt: {ref.name!r}"
        if target is not None and not self.usable(ctx, target):
            raise McpError(proto.INVALID_PARAMS, f"unknown {what}")
        result = await call_next(ctx)
        listed = _LISTED.get(method)
        if listed is not None:
            field, kind, entries_of, key = listed
            entries = entries_of(registry)
            kept = []
            for definition in getattr(result, field):
                name = getattr(definition, key)
                entry = entries.get(name)
                if entry is None or self.usable(ctx, _feature(kind, name, entry)):
                    kept.append(definition)
            setattr(result, field, kept)
        return result
