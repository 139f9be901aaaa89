"""What msgspec cannot decode in an OpenAPI document's schemas: the generator checks the
models and the tools' types with the stubs' machinery (mcpgen.stubs._decodable), so a
model field that is an untagged union of structs is typed `Any` in that struct alone,
and a parameter whose own type is such a union is `Any` with the tool saying so."""

from __future__ import annotations

from pathlib import Path

import msgspec

from mcpgen import Server
from mcpgen.stubs._decodable import undecodable
from tests.openapi.generated import load_generated

PETS = Path(__file__).with_name("pets.json")


def test_an_undecodable_field_loosens_only_its_struct(tmp_path: Path) -> None:
    text, module = load_generated(PETS, tmp_path / "pets_tools.py")
    # Owner.pet (Cat | Dog, untagged) is Any, so Owner itself decodes and stays typed.
    assert "    pet: Any\n" in text
    assert "async def create_owner(ctx: Context, body: Owner) -> Owner:" in text
    owner = msgspec.convert({"name": "Ann", "pet": {"meow": "purr"}}, module.Owner)
    assert owner.name == "Ann" and owner.pet == {"meow": "purr"}
    # A parameter that is itself the union has no msgspec type: Any, and said so.
    assert "async def create_pet(ctx: Context, body: Any) -> Cat:" in text
    assert "Untyped (body): the document's schema has no msgspec type." in text
    server = Server("pets", "1.0")
    module.register(server, module.Api("http://127.0.0.1:9", module.SCHEMES))


def test_undecodable_names_the_annotations_msgspec_refuses() -> None:
    code = (
        "import msgspec\n"
        "class Cat(msgspec.Struct):\n    meow: str\n"
        "class Dog(msgspec.Struct):\n    bark: int\n"
    )
    annotations = {
        "one": "Cat",
        "tagless": "Cat | Dog",
        "optional": "Cat | None",
        "mixed": "Literal[1, 'a']",  # not even defined in the module: refused, no crash
        "list": "list[Dog]",
    }
    assert undecodable(code, annotations) == {"tagless", "mixed"}
