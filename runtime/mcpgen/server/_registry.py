"""What each registration of a `Server` does to its registry, without the server.

A registry is a frozen snapshot: every function here builds the feature's definition
from the handler, refuses a name or URI that is taken (or missing, for a removal), and
returns the next snapshot. The `Server` holds the snapshot and swaps it into a running
core; that is the only state, so these stay pure and the decorators stay thin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from mcpgen._errors import ConfigurationError
from mcpgen._server import Registry
from mcpgen._server._context import Context
from mcpgen._server._defs import (
    PromptOptions,
    ResourceOptions,
    TemplateOptions,
    ToolOptions,
    build_completion,
    build_prompt,
    build_resource,
    build_template,
    build_tool,
)

__all__ = [
    "with_completion",
    "with_prompt",
    "with_resource",
    "with_template",
    "with_tool",
    "without",
]


def _with(registry: Registry, field: str, key: str, entry: Any, what: str) -> Registry:
    """The registry with `entry` under `key` in its `field`, which must not hold one."""
    entries = getattr(registry, field)
    if key in entries:
        raise ConfigurationError(f"{what} {key!r} is registered twice")
    return msgspec.structs.replace(registry, **{field: {**entries, key: entry}})


def with_tool(registry: Registry, fn: Callable[..., Any], options: ToolOptions) -> Registry:
    tool = build_tool(fn, Context, **options)
    return _with(registry, "tools", tool.name, tool, "tool")


def with_resource(
    registry: Registry,
    uri: str,
    fn: Callable[..., Any] | None,
    options: ResourceOptions,
    static: str | bytes | None = None,
) -> Registry:
    """A resource read by `fn`, or (`fn` None) the `static` text or bytes."""
    resource = build_resource(uri, fn, Context, static=static, **options)
    return _with(registry, "resources", resource.uri, resource, "resource")


def without(registry: Registry, field: str, key: str, what: str) -> Registry:
    """The registry without the `what` (tool, resource) under `key` in its `field`."""
    entries = dict(getattr(registry, field))
    if entries.pop(key, None) is None:
        raise ConfigurationError(f"no {what} {key!r}")
    return msgspec.structs.replace(registry, **{field: entries})


def with_template(
    registry: Registry, uri_template: str, fn: Callable[..., Any], options: TemplateOptions
) -> Registry:
    template = build_template(uri_template, fn, Context, **options)
    if any(x.template.template == uri_template for x in registry.templates):
        raise ConfigurationError(f"template {uri_template!r} is registered twice")
    return msgspec.structs.replace(registry, templates=(*registry.templates, template))


def with_prompt(registry: Registry, fn: Callable[..., Any], options: PromptOptions) -> Registry:
    prompt = build_prompt(fn, Context, **options)
    return _with(registry, "prompts", prompt.name, prompt, "prompt")


def with_completion(
    registry: Registry,
    fn: Callable[..., Any],
    prompt: str | None,
    resource_template: str | None,
    threaded: bool,
) -> Registry:
    """The completion of `prompt`'s or `resource_template`'s arguments; with neither, the
    fallback for every reference."""
    target = build_completion(fn, threaded=threaded)
    if prompt is None and resource_template is None:
        return msgspec.structs.replace(registry, fallback_completion=target)
    key = (
        ("ref/prompt", prompt) if prompt is not None else ("ref/resource", resource_template or "")
    )
    completions = {**registry.completions, key: target}
    return msgspec.structs.replace(registry, completions=completions)
