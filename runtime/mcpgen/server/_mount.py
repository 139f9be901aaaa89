"""One server served inside another: `Server.mount` (live) and `Server.import_server`
(a copy made once).

The mounted server's registry entries are copied into the parent's registry under a
namespace: tools and prompts named `namespace + "_" + name`, resource URIs and URI
templates with the namespace as the first segment after the scheme (`prefixed_uri`),
completions keyed by the new names. The handlers are the mounted server's own
functions, run by the parent's core: MRTR rounds, await-style input, tasks and every
transport behave as for the parent's own entries. A handler's `Context` is adjusted
to its own server: `ctx.lifespan` is the mounted server's lifespan value, and
`ctx.read_resource` takes the mounted server's own URIs.

A mount stays live: every registration or removal on the mounted server swaps the
parent's entries again (and the parent's clients get the list-changed notification);
a change notification the mounted server publishes is forwarded, a resource update
under its prefixed URI. A name or URI taken in the parent raises `ConfigurationError`.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Protocol

import msgspec
from msgspec import UNSET

from mcpgen._errors import ConfigurationError
from mcpgen._server import Registry
from mcpgen._server._bus import RESOURCE, ChangeEvent
from mcpgen._server._call import Call, OwnReader
from mcpgen._server._defs import CompletionDef, PromptDef, ResourceDef, TemplateDef, ToolDef
from mcpgen._server._templates import UriTemplate
from mcpgen.server._apps import linked_meta, renamed_contents
from mcpgen.transports._lifespan import Lifespan, LifespanFactory
from mcpgen_types import latest as t

__all__ = [
    "SEPARATOR",
    "Mounted",
    "Watcher",
    "check_acyclic",
    "check_namespace",
    "holding",
    "imported",
    "copy_entries",
    "merged",
    "mounting",
    "prefixed_uri",
    "unprefixed_uri",
]

SEPARATOR = "_"  # valid in tool and prompt names of every revision, unlike "/" or ":"
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,63}$")


class Watcher(Protocol):
    """What a mounted server tells the servers it is mounted in (`parent`)."""

    @property
    def parent(self) -> object: ...

    def changed(self, kind: str) -> None: ...

    def published(self, event: ChangeEvent) -> None: ...


class Child(Protocol):
    """The mounted server, as far as a mount reads it (`mcpgen.Server`)."""

    _registry: Registry
    _lifespan_value: Any
    _watchers: list[Watcher]
    _extensions: dict[str, dict[str, Any]]


class Parent(Protocol):
    """The server a mount writes into (`mcpgen.Server`)."""

    _registry: Registry
    _extensions: dict[str, dict[str, Any]]

    def _swap(self, kind: str, registry: Registry) -> None: ...

    def _publish(self, event: ChangeEvent) -> None: ...


# -- names and URIs ----------------------------------------------------------------------------
def prefixed_uri(namespace: str, uri: str) -> str:
    """`uri` under `namespace`: the namespace becomes the first segment after the scheme
    (`weather://current` -> `weather://ns/current`, `urn:x` -> `urn:ns/x`); a URI
    without a scheme gets it in front (`notes` -> `ns/notes`)."""
    scheme, colon, rest = uri.partition(":")
    if not colon or not scheme or "/" in scheme or "{" in scheme:
        return f"{namespace}/{uri}"
    if rest.startswith("//"):
        return f"{scheme}://{namespace}/{rest[2:]}"
    return f"{scheme}:{namespace}/{rest}"


def unprefixed_uri(namespace: str, uri: str) -> str | None:
    """The mounted server's own URI for a parent's `uri` (the reverse of `prefixed_uri`),
    or None when `uri` is not under `namespace`."""
    scheme, colon, rest = uri.partition(":")
    if colon and scheme and "/" not in scheme:
        if rest.startswith(f"//{namespace}/"):
            return f"{scheme}://{rest[len(namespace) + 3 :]}"
        if rest.startswith(f"{namespace}/"):
            return f"{scheme}:{rest[len(namespace) + 1 :]}"
    if uri.startswith(f"{namespace}/"):
        return uri[len(namespace) + 1 :]
    return None


def check_acyclic(parent: object, child: object) -> None:
    """Refuse to mount `child` in `parent` when `child` is `parent` or a server
    `parent` is (perhaps indirectly) mounted in: changes would go round for ever."""
    seen: list[object] = [parent]
    while seen:
        server = seen.pop()
        if server is child:
            raise ConfigurationError("a server cannot be mounted in itself, even indirectly")
        seen.extend(watcher.parent for watcher in getattr(server, "_watchers", ()))


def check_namespace(namespace: str | None) -> str:
    if namespace is None or namespace == "":
        return ""
    if not _NAMESPACE.match(namespace):
        raise ConfigurationError(
            f"namespace {namespace!r}: use 1-64 of A-Z a-z 0-9 . - (starting with a letter "
            "or digit)"
        )
    return namespace


# -- the handler's own server ------------------------------------------------------------------
class _OwnReader:
    """`ctx.read_resource` of a mounted handler: its own URIs, read through the parent."""

    __slots__ = ("core", "mark", "namespace")

    def __init__(self, core: OwnReader, namespace: str, mark: object) -> None:
        self.core, self.namespace, self.mark = core, namespace, mark

    def read_own(self, call: Call, uri: str) -> Any:
        return self.core.read_own(call, prefixed_uri(self.namespace, uri))


def _adjust(call: Call, namespace: str, lifespan: Callable[[], Any] | None, mark: object) -> None:
    """Point `call` at the mounted server: its lifespan value, and (a server mounted in
    a mounted server: a reader per level) its URIs. A handler replayed on the same call
    (input rounds in a task) finds its own level there already."""
    if lifespan is not None:
        call.lifespan = lifespan()
    if not namespace or call.core is None:
        return
    level = call.core
    while isinstance(level, _OwnReader):
        if level.mark is mark:
            return
        level = level.core
    call.core = _OwnReader(call.core, namespace, mark)


def _own_context(
    fn: Callable[..., Any],
    is_async: bool,
    param: str | None,
    namespace: str,
    lifespan: Callable[[], Any] | None,
) -> Callable[..., Any]:
    """`fn`, handed a `Context` adjusted to the mounted server (unchanged without one)."""
    if param is None or (not namespace and lifespan is None):
        return fn
    mark = object()  # this wrapper's level, for `_adjust`
    if is_async:

        @functools.wraps(fn)
        async def run_async(**kwargs: Any) -> Any:
            _adjust(kwargs[param]._call, namespace, lifespan, mark)
            return await fn(**kwargs)

        return run_async

    @functools.wraps(fn)
    def run(**kwargs: Any) -> Any:
        _adjust(kwargs[param]._call, namespace, lifespan, mark)
        return fn(**kwargs)

    return run


# -- the entries -------------------------------------------------------------------------------
class _Renamer:
    def __init__(self, namespace: str, lifespan: Callable[[], Any] | None) -> None:
        self.namespace = namespace
        self.lifespan = lifespan

    def name(self, name: str) -> str:
        return f"{self.namespace}{SEPARATOR}{name}" if self.namespace else name

    def uri(self, uri: str) -> str:
        return prefixed_uri(self.namespace, uri) if self.namespace else uri

    def fn(self, entry: Any) -> Callable[..., Any]:
        return _own_context(
            entry.fn, entry.is_async, entry.context_param, self.namespace, self.lifespan
        )

    def tool(self, tool: ToolDef) -> ToolDef:
        name = self.name(tool.name)
        meta = linked_meta(tool.definition.meta, self.uri) if self.namespace else UNSET
        definition = msgspec.structs.replace(
            tool.definition, name=name, meta=meta or tool.definition.meta
        )
        return msgspec.structs.replace(tool, name=name, definition=definition, fn=self.fn(tool))

    def prompt(self, prompt: PromptDef) -> PromptDef:
        name = self.name(prompt.name)
        definition = msgspec.structs.replace(prompt.definition, name=name)
        return msgspec.structs.replace(prompt, name=name, definition=definition, fn=self.fn(prompt))

    def resource(self, resource: ResourceDef) -> ResourceDef:
        uri = self.uri(resource.uri)
        definition = msgspec.structs.replace(resource.definition, uri=uri)
        fn = None if resource.fn is None else self.fn(resource)
        if fn is not None and self.namespace:  # contents naming their own URI name ours
            fn = renamed_contents(fn, resource.is_async, resource.uri, uri)
        return msgspec.structs.replace(resource, uri=uri, definition=definition, fn=fn)

    def template(self, template: TemplateDef) -> TemplateDef:
        text = self.uri(template.template.template)
        definition = msgspec.structs.replace(template.definition, uri_template=text)
        return msgspec.structs.replace(
            template, template=UriTemplate(text), definition=definition, fn=self.fn(template)
        )

    def completion_key(self, key: tuple[str, str]) -> tuple[str, str]:
        kind, target = key
        return (kind, self.name(target) if kind == "ref/prompt" else self.uri(target))

    def fallback(self, child: Child, previous: CompletionDef | None) -> CompletionDef:
        """The parent's fallback completion: a reference under this namespace goes to the
        mounted server's fallback as it is at the time (with the reference as the mounted
        server names it), any other to `previous`."""
        names = self

        async def route(ref: Any, argument: str, value: str, context: dict[str, str]) -> Any:
            own: Any = None
            if isinstance(ref, t.PromptReference):
                prefix = names.name("")
                if ref.name.startswith(prefix):
                    own = msgspec.structs.replace(ref, name=ref.name[len(prefix) :])
            else:
                found = unprefixed_uri(names.namespace, ref.uri) if names.namespace else ref.uri
                own = None if found is None else msgspec.structs.replace(ref, uri=found)
            theirs = child._registry.fallback_completion
            if own is not None and theirs is not None:
                return await _call(theirs, own, argument, value, context)
            if previous is None:
                return []
            return await _call(previous, ref, argument, value, context)

        return CompletionDef(route, is_async=True)


async def _call(target: CompletionDef, *args: Any) -> Any:
    value = target.fn(*args)
    return await value if target.is_async else value


def copy_entries(
    source: Registry, namespace: str, lifespan: Callable[[], Any] | None
) -> dict[str, Any]:
    """The registry fields of `source`'s entries as served under `namespace`."""
    rename = _Renamer(namespace, lifespan)
    return {
        "tools": {x.name: x for x in map(rename.tool, source.tools.values())},
        "prompts": {x.name: x for x in map(rename.prompt, source.prompts.values())},
        "resources": {x.uri: x for x in map(rename.resource, source.resources.values())},
        "templates": tuple(map(rename.template, source.templates)),
        "completions": {rename.completion_key(k): v for k, v in source.completions.items()},
    }


def _key(field: str, entry: Any) -> Any:
    return entry.template.template if field == "templates" else entry


def merged(
    registry: Registry, entries: Mapping[str, Any], remove: Mapping[str, Any] | None = None
) -> Registry:
    """`registry` with `entries` added (and the `remove` ones, a previous copy, taken
    out first); a name or URI already taken raises ConfigurationError."""
    changes: dict[str, Any] = {}
    for field, added in entries.items():
        current = getattr(registry, field)
        old = (remove or {}).get(field, {} if field != "templates" else ())
        if field == "templates":
            gone = {x.template.template for x in old}
            kept = tuple(x for x in current if x.template.template not in gone)
            taken = {x.template.template for x in kept}
            clash = [x.template.template for x in added if x.template.template in taken]
            changes[field] = (*kept, *added)
        else:
            kept_map = {k: v for k, v in current.items() if k not in old}
            clash = [k for k in added if k in kept_map]
            changes[field] = {**kept_map, **added}
        if clash:
            what = field.removesuffix("s")
            raise ConfigurationError(f"{what} {clash[0]!r} is already served by this server")
    return msgspec.structs.replace(registry, **changes)


class Mounted:
    """`child` served live inside `parent` under `namespace` (a `Watcher` of the child)."""

    def __init__(self, parent: Parent, child: Child, namespace: str) -> None:
        self.parent, self.child, self.namespace = parent, child, namespace
        self.entries: dict[str, Any] = {}
        self.fallback: CompletionDef | None = None  # the parent's, installed by this mount

    def _lifespan(self) -> Any:
        return self.child._lifespan_value

    def attach(self) -> Registry:
        """The parent's registry with the child's entries added (not yet swapped in)."""
        entries = copy_entries(self.child._registry, self.namespace, self._lifespan)
        registry = merged(self.parent._registry, entries, self.entries)
        for key, value in self.child._extensions.items():  # e.g. MCP Apps: declared too
            self.parent._extensions.setdefault(key, value)
        registry = self._with_fallback(registry)
        self.entries = entries
        return registry

    def _with_fallback(self, registry: Registry) -> Registry:
        own = self.child._registry.fallback_completion
        current = registry.fallback_completion
        if current is not None and current is self.fallback:
            return registry  # already routed (the child's fallback is read at each call)
        if own is None:
            return registry
        rename = _Renamer(self.namespace, self._lifespan)
        self.fallback = rename.fallback(self.child, current)
        return msgspec.structs.replace(registry, fallback_completion=self.fallback)

    # -- Watcher ------------------------------------------------------------------------------
    def changed(self, kind: str) -> None:
        self.parent._swap(kind, self.attach())

    def published(self, event: ChangeEvent) -> None:
        if event.kind == RESOURCE and event.uri is not None:
            event = ChangeEvent(RESOURCE, prefixed_uri(self.namespace, event.uri))
        self.parent._publish(event)


# -- lifespans ---------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def _nothing(owner: object) -> AsyncIterator[None]:
    yield None


def holding(
    lifecycle: Lifespan | None, child: Lifespan, owner: object, publish: Callable[[Any], None]
) -> Lifespan:
    """The parent's lifespan (`lifecycle`, or a new one that yields None) made to hold
    the mounted server's `child` lifespan: entered before the parent's own, exited after
    it. A child served elsewhere too is entered once (a `Lifespan` counts its holders)."""
    if lifecycle is None:
        lifecycle = Lifespan(_nothing, owner, publish)
    lifecycle.factory = _enter_with(lifecycle.factory, child)
    return lifecycle


def _enter_with(factory: LifespanFactory, child: Lifespan) -> LifespanFactory:
    @contextlib.asynccontextmanager
    async def enter(owner: object) -> AsyncIterator[Any]:
        await child.acquire()
        try:
            async with factory(owner) as value:
                yield value
        finally:
            await child.release()

    return enter


def mounting(parent: Parent, child: Child, namespace: str | None) -> tuple[Mounted, Registry]:
    """The mount of `child` in `parent` and the parent's next registry (`Server.mount`:
    the parent swaps it in, then the mount watches the child)."""
    check_acyclic(parent, child)
    mounted = Mounted(parent, child, check_namespace(namespace))
    return mounted, mounted.attach()


def imported(parent: Parent, child: Child, namespace: str | None) -> Registry:
    """The parent's next registry with a copy of `child`'s entries (`Server.import_server`)."""
    entries = copy_entries(child._registry, check_namespace(namespace), None)
    registry = merged(parent._registry, entries)
    for key, value in child._extensions.items():
        parent._extensions.setdefault(key, value)
    if child._registry.fallback_completion is not None:
        registry = Mounted(parent, child, check_namespace(namespace))._with_fallback(registry)
    return registry
