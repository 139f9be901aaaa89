"""The data in `schema/`: pins (what to generate from), patches and policy."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Role = Literal["modern", "legacy", "extension"]
# app_to_host / host_to_app: the MCP Apps extension's messages between a view and its host.
Direction = Literal[
    "client_to_server", "server_to_client", "both", "input", "app_to_host", "host_to_app"
]


class GenerationError(Exception):
    """The generator cannot produce correct code; the message says what to change."""


@dataclass(frozen=True)
class Pin:
    version: str
    repo: str
    commit: str
    path: str
    local: str
    sha256: str
    role: Role
    module: str
    spec_url: str
    doc_url: str = ""
    extends: str | None = None
    extension_id: str | None = None

    def url(self, template: str) -> str:
        return template.format(repo=self.repo, commit=self.commit, path=self.path)


@dataclass(frozen=True)
class Pins:
    url_template: str
    revisions: tuple[Pin, ...]

    def get(self, version: str) -> Pin:
        for pin in self.revisions:
            if pin.version == version:
                return pin
        known = ", ".join(p.version for p in self.revisions)
        raise GenerationError(f"no pinned revision {version!r} (known: {known})")


@dataclass(frozen=True)
class Patch:
    revisions: tuple[str, ...]
    pointer: str
    old: Any
    new: Any
    reason: str


@dataclass(frozen=True)
class Policy:
    open_properties: frozenset[str] = frozenset()
    open_fields: frozenset[str] = frozenset()
    # nested `$defs` key -> the top-level name it is lifted to (hoist.py)
    local_definitions: dict[str, str] = field(default_factory=dict)
    documentation_only: frozenset[str] = frozenset()
    tag_preference: tuple[str, ...] = ()
    merged_names: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    direction_unions: dict[str, Direction] = field(default_factory=dict)
    directions: dict[str, Direction] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)
    input_required_result: str = ""
    cacheable_fields: tuple[str, ...] = ()
    base_error_codes: dict[str, int] = field(default_factory=dict)
    role_error_codes: dict[str, dict[str, int]] = field(default_factory=dict)
    lenient_roles: frozenset[str] = frozenset()
    lenient_keys: tuple[str, ...] = ()
    lenient_suffix: str = "Lenient"
    # extension revision -> core definition -> extension definitions whose keys it gains
    extend: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    # extension revisions whose schema inlines every reference (see lower.Builder)
    reuse_shapes: frozenset[str] = frozenset()
    # role -> definition -> property -> JSON Schema: keys the role's revisions gain
    added: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)


_PIN_KEYS = set(Pin.__dataclass_fields__)
_REQUIRED_PIN_KEYS = {"version", "repo", "commit", "path", "local", "sha256", "role", "module"}


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise GenerationError(f"{path} is missing") from None
    except tomllib.TOMLDecodeError as exc:
        raise GenerationError(f"{path}: {exc}") from None


def load_pins(path: Path) -> Pins:
    data = _read_toml(path)
    pins: list[Pin] = []
    seen: set[str] = set()
    for i, entry in enumerate(data.get("revision", [])):
        missing = _REQUIRED_PIN_KEYS - entry.keys()
        unknown = entry.keys() - _PIN_KEYS
        if missing or unknown:
            raise GenerationError(
                f"{path}: revision #{i + 1}: missing {sorted(missing)}, unknown {sorted(unknown)}"
            )
        if entry["role"] not in ("modern", "legacy", "extension"):
            raise GenerationError(
                f"{path}: revision {entry['version']}: bad role {entry['role']!r}"
            )
        if entry["role"] == "extension" and not entry.get("extends"):
            raise GenerationError(f"{path}: extension {entry['version']} needs `extends`")
        if entry["version"] in seen:
            raise GenerationError(f"{path}: revision {entry['version']} is pinned twice")
        seen.add(entry["version"])
        entry.setdefault(
            "spec_url", "https://modelcontextprotocol.io/specification/" + entry["version"]
        )
        entry.setdefault("doc_url", entry["spec_url"])
        pins.append(Pin(**entry))
    for pin in pins:
        if pin.extends and pin.extends not in seen:
            raise GenerationError(f"{path}: {pin.version} extends unknown revision {pin.extends}")
    template = data.get("url_template")
    if not isinstance(template, str):
        raise GenerationError(f"{path}: `url_template` is required")
    return Pins(url_template=template, revisions=tuple(pins))


def load_patches(path: Path) -> tuple[Patch, ...]:
    data = _read_toml(path)
    out = []
    for i, entry in enumerate(data.get("patch", [])):
        try:
            out.append(
                Patch(
                    revisions=tuple(entry["revisions"]),
                    pointer=entry["pointer"],
                    old=entry["old"],
                    new=entry["new"],
                    reason=entry["reason"],
                )
            )
        except KeyError as exc:
            raise GenerationError(f"{path}: patch #{i + 1} lacks {exc}") from None
    return tuple(out)


def load_policy(path: Path) -> Policy:
    data = _read_toml(path)
    return policy_from_dict(data)


def policy_from_dict(data: dict[str, Any]) -> Policy:
    objects = data.get("objects", {})
    unions = data.get("unions", {})
    methods = data.get("methods", {})
    codes = data.get("error_codes", {})
    lenient = data.get("lenient", {})
    extend = {
        revision: {core: tuple(sources) for core, sources in entry.get("extend", {}).items()}
        for revision, entry in data.get("extensions", {}).items()
    }
    return Policy(
        open_properties=frozenset(objects.get("open_properties", ())),
        open_fields=frozenset(objects.get("open_fields", ())),
        local_definitions=dict(objects.get("local_definitions", {})),
        documentation_only=frozenset(unions.get("documentation_only", ())),
        tag_preference=tuple(unions.get("tag_preference", ())),
        merged_names=dict(unions.get("merged_names", {})),
        defaults=dict(data.get("defaults", {})),
        direction_unions=dict(methods.get("direction_unions", {})),
        directions=dict(methods.get("direction", {})),
        results=dict(methods.get("results", {})),
        input_required_result=str(methods.get("input_required_result", "")),
        cacheable_fields=tuple(methods.get("cacheable_fields", ())),
        base_error_codes=dict(codes.get("base", {})),
        role_error_codes={k: dict(v) for k, v in codes.items() if k != "base"},
        lenient_roles=frozenset(lenient.get("roles", ())),
        lenient_keys=tuple(lenient.get("keys", ())),
        lenient_suffix=str(lenient.get("suffix", "Lenient")),
        extend=extend,
        reuse_shapes=frozenset(
            revision
            for revision, entry in data.get("extensions", {}).items()
            if entry.get("reuse_shapes", False)
        ),
        added={
            role: {name: dict(props) for name, props in entry.items()}
            for role, entry in data.get("added", {}).items()
        },
    )
