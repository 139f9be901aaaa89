"""Which OAuth scopes a request for a tool, prompt or resource needs, from the live
registry (`@server.tool(scopes=[...])` and its kin). The HTTP app's auth gate asks
before it lets a call through; the core itself knows nothing of tokens."""

from __future__ import annotations

from collections.abc import Callable

from mcpgen._server._core import Registry

__all__ = ["RegistryScopes"]

_NONE: frozenset[str] = frozenset()
# Subscribing to a resource (legacy `resources/subscribe`, a `subscriptions/listen` filter)
# delivers its updates, so it needs what reading it needs.
_READS = frozenset({"resources/read", "resources/subscribe", "subscriptions/listen"})


class RegistryScopes:
    """The scopes each feature of the registry `current()` returns needs (the registry
    is a snapshot that registrations replace, so it is asked for on every use)."""

    def __init__(self, current: Callable[[], Registry]) -> None:
        self._current = current
        self._seen: Registry | None = None
        self._scoped = False

    @property
    def scoped(self) -> bool:
        registry = self._current()
        if registry is not self._seen:
            self._seen = registry
            self._scoped = (
                any(x.scopes for x in registry.tools.values())
                or any(x.scopes for x in registry.prompts.values())
                or any(x.scopes for x in registry.resources.values())
                or any(x.scopes for x in registry.templates)
            )
        return self._scoped

    def needed(self, method: str, name: str) -> frozenset[str]:
        registry = self._current()
        if method == "tools/call":
            tool = registry.tools.get(name)
            return _NONE if tool is None else tool.scopes
        if method == "prompts/get":
            prompt = registry.prompts.get(name)
            return _NONE if prompt is None else prompt.scopes
        if method in _READS:
            exact = registry.resources.get(name)
            if exact is not None:
                return exact.scopes
            for template in registry.templates:  # the one the core would serve it with
                if template.template.match(name) is not None:
                    return template.scopes
        return _NONE
