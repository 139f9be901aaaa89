"""What a server serves, and registering it: the registry snapshot, the decorators and
the `add_*`/`remove_*` methods of `Server` (its base class, `Features`), and the swap
that puts each new snapshot in place.

Each registration is a function from one frozen `Registry` to the next
(`mcpgen.server._registry`); `_swap` installs the result, first in the servers this one
is mounted in (a name one of them already serves refuses the change), then in the
running core, which tells listening clients.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, Unpack, overload

import msgspec

from mcpgen._errors import ConfigurationError
from mcpgen._server import Registry, ServerCore
from mcpgen._server._apps import UI_EXTENSION, AppSource
from mcpgen._server._bus import PROMPTS, RESOURCES, TOOLS
from mcpgen._server._defs import (
    PromptOptions,
    ResourceOptions,
    TemplateOptions,
    ToolOptions,
    app_resource,
)
from mcpgen.server._mount import Watcher
from mcpgen.server._registry import (
    with_completion,
    with_prompt,
    with_resource,
    with_template,
    with_tool,
    without,
)
from mcpgen_types.ext_apps import McpUiResourceMeta

__all__ = ["Features"]


F = TypeVar("F", bound=Callable[..., Any])


class Features:
    """The registering half of `mcpgen.Server` (its only subclass, which sets these
    attributes up): tools, resources, resource templates, prompts and completions."""

    _registry: Registry
    _core: ServerCore | None
    _watchers: list[Watcher]  # the servers this one is mounted in
    _extensions: dict[str, dict[str, Any]]

    def _update(self, kind: str, **changes: Any) -> None:
        self._swap(kind, msgspec.structs.replace(self._registry, **changes))

    def _swap(self, kind: str, registry: Registry) -> None:
        previous, self._registry = self._registry, registry
        try:
            for watcher in self._watchers:  # mounted: the parents serve the change too
                watcher.changed(kind)
        except ConfigurationError:
            self._registry = previous  # a name a parent already serves: nothing changes
            raise
        if self._core is not None:  # serving: swap the snapshot, tell listeners
            self._core.swap(registry, [kind])

    # -- tools -------------------------------------------------------------------------------
    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(self, fn: None = None, /, **options: Unpack[ToolOptions]) -> Callable[[F], F]: ...

    def tool(self, fn: F | None = None, /, **options: Unpack[ToolOptions]) -> F | Callable[[F], F]:
        """Register a tool, as `@server.tool` or `@server.tool(...)`. Options (`ToolOptions`):
        name, title, description, annotations, input_schema (a raw JSON Schema; needs
        jsonschema-rs), output_schema, icons, meta, task, detach, tags, timeout (seconds).

        `task="optional"`: when the request declares the Tasks extension the call runs
        as a task (the client gets a CreateTaskResult at once and polls it); otherwise
        as an ordinary call. `task="required"`: only as a task (-32021 for a client
        without the extension). With `detach=True` (async handlers) the handler runs
        inside the request, input-required rounds included, until it awaits
        `ctx.detach()`; only then does the client get the task."""

        def register(f: F) -> F:
            self.add_tool(f, **options)
            return f

        return register(fn) if fn is not None else register

    def add_tool(self, fn: Callable[..., Any], **options: Unpack[ToolOptions]) -> None:
        """Register `fn` as a tool; the options are those of `tool`."""
        self._swap(TOOLS, with_tool(self._registry, fn, options))

    def remove_tool(self, name: str) -> None:
        """Unregister tool `name`; connected clients are told the list changed."""
        self._swap(TOOLS, without(self._registry, "tools", name, "tool"))

    # -- resources ---------------------------------------------------------------------------
    def resource(self, uri: str, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register a resource read by the decorated function (returns str, bytes or
        contents). Options (`ResourceOptions`): name, title, description, mime_type, size,
        annotations, icons, meta."""

        def register(f: F) -> F:
            self._swap(RESOURCES, with_resource(self._registry, uri, f, options))
            return f

        return register

    def add_resource(
        self, uri: str, content: str | bytes, **options: Unpack[ResourceOptions]
    ) -> None:
        """Register a static resource (text or bytes); the options are those of `resource`."""
        self._swap(RESOURCES, with_resource(self._registry, uri, None, options, content))

    def add_app_resource(
        self,
        uri: str,
        source: AppSource,
        *,
        ui: McpUiResourceMeta | None = None,
        **options: Unpack[ResourceOptions],
    ) -> None:
        """Register an MCP App: the HTML a host renders in a sandboxed frame for the tools
        linked to it (`@server.tool(app=uri)`). `source` is the HTML, a `Path` to a file
        (read at every read) or a function returning it (sync or async); `ui` what the
        host should allow the frame (CSP domains, permissions, its own origin, a border).
        The resource is served as `text/html;profile=mcp-app` with `_meta.ui`, in the list
        and on every read, and the server declares the extension. Other options are those
        of `resource` (name, title, description, scopes, ...)."""
        reader, resource = app_resource(uri, source, ui, options)
        self._extensions.setdefault(UI_EXTENSION, {})
        self._swap(RESOURCES, with_resource(self._registry, uri, reader, resource))

    def remove_resource(self, uri: str) -> None:
        """Unregister the resource at `uri`; connected clients are told the list changed."""
        self._swap(RESOURCES, without(self._registry, "resources", uri, "resource"))

    def resource_template(
        self, uri_template: str, **options: Unpack[TemplateOptions]
    ) -> Callable[[F], F]:
        """Register a resource template (RFC 6570 levels 1-3); the function receives the
        template's variables as keyword arguments. Exact resources win over templates.
        Options (`TemplateOptions`): name, title, description, mime_type, annotations,
        icons, meta."""

        def register(f: F) -> F:
            self._swap(RESOURCES, with_template(self._registry, uri_template, f, options))
            return f

        return register

    # -- prompts -----------------------------------------------------------------------------
    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(self, fn: None = None, /, **options: Unpack[PromptOptions]) -> Callable[[F], F]: ...

    def prompt(
        self, fn: F | None = None, /, **options: Unpack[PromptOptions]
    ) -> F | Callable[[F], F]:
        """Register a prompt, as `@server.prompt` or `@server.prompt(...)`; its parameters
        are the prompt's (string) arguments. Return a string, PromptMessage(s) or content
        blocks. Options (`PromptOptions`): name, title, description, icons, meta."""

        def register(f: F) -> F:
            self._swap(PROMPTS, with_prompt(self._registry, f, options))
            return f

        return register(fn) if fn is not None else register

    # -- completions -------------------------------------------------------------------------
    def completion(
        self,
        *,
        prompt: str | None = None,
        resource_template: str | None = None,
        threaded: bool = True,
    ) -> Callable[[F], F]:
        """Register argument completion. With `prompt=` or `resource_template=` the function
        is `(argument, value, context) -> list[str]`; with neither it is the fallback
        `(ref, argument, value, context)`. `threaded=False`: a sync function runs on the
        event loop's thread."""
        if prompt is not None and resource_template is not None:
            raise ConfigurationError("complete either a prompt or a resource template")

        def register(f: F) -> F:
            self._swap("", with_completion(self._registry, f, prompt, resource_template, threaded))
            return f

        return register
