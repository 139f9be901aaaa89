"""Pydantic (v2) models as tool parameter and return types; pydantic stays optional.

Nothing here imports pydantic on its own account: `involves` first looks for it in
`sys.modules` (a user whose annotation names a pydantic model has imported pydantic
already) and only then walks the annotation. A tool with no pydantic in its signature
never reaches the rest of this module, and its calls keep the msgspec path.

A tool with pydantic in any parameter validates its whole argument set with one model
made from the signature (`create_model`), so one schema generator writes the whole
inputSchema (one `$defs`) and one validation pass reports every bad field. Its other
parameters are ordinary pydantic fields; the `Header` marker and `msgspec.Meta`
constraints at the top of an `Annotated` parameter are translated for pydantic.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

import msgspec

from mcpgen._server._content import ARGUMENTS_GUIDANCE, ArgumentsError

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic_core import ValidationError

__all__ = ["ArgumentsModel", "involves", "meta_keywords", "output_schema"]

# Annotated metadata only pydantic acts on (msgspec would silently ignore it).
_METADATA_PACKAGES = frozenset({"pydantic", "pydantic_core", "annotated_types"})
EMPTY = inspect.Parameter.empty


def involves(annotation: Any, default: Any = None) -> bool:
    """Whether a parameter (its annotation, or its default being a pydantic `Field`) or
    a return annotation needs pydantic: a model, a pydantic dataclass, pydantic or
    annotated-types metadata, anywhere inside (containers, unions, Annotated, the fields
    of dataclasses, TypedDicts and msgspec structs)."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or str(getattr(pydantic, "VERSION", "1")).startswith("1."):
        return False  # not imported, or pydantic 1 (its models stay unsupported)
    if _is_pydantic_metadata(default):
        return True
    return _walk(annotation, set())


def _is_pydantic_metadata(value: Any) -> bool:
    return type(value).__module__.partition(".")[0] in _METADATA_PACKAGES


def _walk(annotation: Any, seen: set[int]) -> bool:
    if id(annotation) in seen:
        return False
    seen.add(id(annotation))
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *extras = get_args(annotation)
        return any(map(_is_pydantic_metadata, extras)) or _walk(base, seen)
    if origin is not None:
        return any(_walk(arg, seen) for arg in get_args(annotation))
    if not isinstance(annotation, type):
        return False
    from pydantic import BaseModel  # noqa: PLC0415 (imported by the user already)
    from pydantic.dataclasses import is_pydantic_dataclass  # noqa: PLC0415

    if issubclass(annotation, BaseModel) or is_pydantic_dataclass(annotation):
        return True
    if not (
        dataclasses.is_dataclass(annotation)
        or typing.is_typeddict(annotation)
        or issubclass(annotation, msgspec.Struct)
    ):
        return False
    try:
        hints = typing.get_type_hints(annotation, include_extras=True)
    except Exception:  # unresolvable field annotations: msgspec will say so
        return False
    return any(_walk(hint, seen) for hint in hints.values())


Translate = Callable[[Any], Mapping[str, Any] | None]
"""Turns an `Annotated` extra pydantic does not know into `Field` keywords, or None."""


class ArgumentsModel:
    """The arguments of one tool as a pydantic model: its inputSchema and its `bind`,
    which validates a call's arguments and gives the handler's keyword arguments."""

    __slots__ = ("_model", "schema")

    def __init__(
        self, tool: str, fields: Sequence[tuple[str, Any, Any]], translate: Translate
    ) -> None:
        """`fields` holds (parameter, annotation, default), the default of a required
        parameter being `inspect.Parameter.empty`. Raises TypeError for what pydantic
        rejects."""
        from pydantic import ConfigDict, create_model  # noqa: PLC0415 (see involves)

        definitions: dict[str, Any] = {
            name: (_for_pydantic(annotation, translate), ... if default is EMPTY else default)
            for name, annotation, default in fields
        }
        # Parameter names are the handler's to choose: `model_name` or `schema` must
        # neither warn nor fail for clashing with pydantic's own namespace.
        config = ConfigDict(extra="ignore", protected_namespaces=())
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "Field name .* shadows", UserWarning)
                self._model: type[BaseModel] = create_model(
                    f"{tool}_arguments", __config__=config, **definitions
                )
            schema = self._model.model_json_schema()
        except Exception as exc:  # pydantic's errors are not TypeErrors
            raise TypeError(f"{type(exc).__name__}: {exc}") from None
        schema.pop("title", None)
        for name, prop in schema.get("properties", {}).items():
            # The titles pydantic derives from the parameter names are noise; a title the
            # user gave with Field(title=...) stays.
            if self._model.model_fields[name].title is None and isinstance(prop, dict):
                prop.pop("title", None)
        self.schema: dict[str, Any] = schema

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The handler's keyword arguments (model instances where annotated); raises
        ArgumentsError with every error pydantic found (up to ten)."""
        try:
            instance = self._model.model_validate(arguments)
        except ValueError as exc:  # pydantic_core.ValidationError
            raise ArgumentsError(_describe(typing.cast("ValidationError", exc))) from None
        return dict(instance.__dict__)


def _for_pydantic(annotation: Any, translate: Translate) -> Any:
    if get_origin(annotation) is not Annotated:
        return annotation
    from pydantic import Field  # noqa: PLC0415 (see involves)

    base, *extras = get_args(annotation)
    out = []
    for extra in extras:
        keywords = translate(extra)
        out.append(extra if keywords is None else Field(**keywords))
    return Annotated[(base, *out)]


_META = (
    *("gt", "ge", "lt", "le", "multiple_of", "pattern", "min_length", "max_length"),
    *("title", "description", "examples"),
)


def meta_keywords(meta: msgspec.Meta) -> dict[str, Any]:
    """`msgspec.Meta` constraints and documentation as pydantic `Field` keywords."""
    keywords = {name: getattr(meta, name) for name in _META if getattr(meta, name) is not None}
    if meta.extra_json_schema is not None:
        keywords["json_schema_extra"] = dict(meta.extra_json_schema)
    return keywords


def _describe(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    parts = [f"{e['msg']} - at `{_path(e['loc'])}`" for e in errors[:10]]
    if len(errors) > 10:
        parts.append(f"and {len(errors) - 10} more")
    return "; ".join(parts) + ". " + ARGUMENTS_GUIDANCE


def _path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location in msgspec's notation: `$.point.x`, `$.items[0]`."""
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def output_schema(annotation: Any) -> dict[str, Any] | None:
    """The JSON Schema of what a return annotation serialises to (None when pydantic
    cannot describe it); the top-level title goes, as for msgspec structs."""
    from pydantic import TypeAdapter  # noqa: PLC0415 (see involves)

    try:
        schema = TypeAdapter(annotation).json_schema(mode="serialization")
    except Exception:  # no schema for this type: then no output schema either
        return None
    schema.pop("title", None)
    return schema
