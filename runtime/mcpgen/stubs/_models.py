"""The msgspec structs of a JSON Schema document's `$defs`, written by
datamodel-code-generator: what `mcpgen stubs` and `mcpgen openapi` both build their
modules on, each with its own few options over the shared ones."""

from __future__ import annotations

import warnings
from typing import Any

from mcpgen._errors import ConfigurationError
from mcpgen.stubs._mend import mend_members, mend_schema

__all__ = ["ROOT", "generate_models"]

ROOT = "StubsUnusedRoot"  # the generator's name for the document root, which is dropped


def generate_models(schema: dict[str, Any], command: str, extra: str, **options: Any) -> str:
    """The models' source (`options` add to or override the shared settings), mended
    (`mend_schema`, `mend_members`) where the generator's own would not pass; a missing
    generator or a schema it refuses is a `ConfigurationError` naming `command` and the
    extra that brings it."""
    try:
        import datamodel_code_generator as dcg  # noqa: PLC0415 (an optional dependency)
        from datamodel_code_generator.enums import DataModelType  # noqa: PLC0415
    except ImportError:
        raise ConfigurationError(
            f"`{command}` needs datamodel-code-generator: pip install 'mcpgen[{extra}]'"
        ) from None
    settings: dict[str, Any] = {
        "input_file_type": dcg.InputFileType.JsonSchema,
        "output_model_type": DataModelType.MsgspecStruct,
        "target_python_version": dcg.PythonVersion.PY_311,
        "output_datetime_class": dcg.DatetimeClassType.Datetime,
        "class_name": ROOT,
        "use_annotated": True,
        "field_constraints": True,
        "use_union_operator": True,
        "use_msgspec_tagged_unions": True,  # unions with a discriminator
        "use_standard_collections": True,
        "use_schema_description": True,
        "set_default_enum_member": True,
        "disable_timestamp": True,
        "formatters": [],
        "allow_remote_refs": False,  # a document must not make us fetch URLs
        **options,
    }
    with warnings.catch_warnings():
        # Its notes on unions msgspec cannot decode: the callers mend or type those Any.
        warnings.simplefilter("ignore", UserWarning)
        try:
            code = dcg.generate(mend_schema(schema), **settings)
        except dcg.Error as exc:  # a schema it cannot model: say which, without a traceback
            raise ConfigurationError(
                f"datamodel-code-generator refused the schemas: {exc}"
            ) from None
    return mend_members(code) if isinstance(code, str) and code else ""
