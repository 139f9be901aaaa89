"""The registration decorators' options are typed: mypy (the project's pinned version,
--strict) rejects a misspelt keyword or a wrong value at the user's call site, accepts
every documented option, and a decorated function keeps its own type. The same
declarations guard callers mypy does not see: unknown keywords raise at registration."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpgen import ConfigurationError, Server
from tests.typecheck import check_marks

# Uses of every option of every decorator and registration method: mypy must accept
# them all, and so must the registration itself at run time.
GOOD = """\
from __future__ import annotations

from mcpgen import Context, Server
from mcpgen_types import latest as t

server = Server("typed")


@server.tool
def plain(x: int) -> int:
    return x


@server.tool(
    name="render",
    title="Render",
    description="Render a scene.",
    annotations=t.ToolAnnotations(read_only_hint=True),
    output_schema={"type": "object"},
    icons=[t.Icon(src="https://example.com/i.png")],
    meta={"k": 1},
    task="optional",
    detach=True,
)
async def render(ctx: Context, scene: str) -> dict[str, str]:
    await ctx.detach()
    return {"scene": scene}


def raw(**arguments: object) -> str:
    return "raw"


server.add_tool(raw, input_schema={"type": "object"}, task="required", name=None)


@server.resource(
    "file:///a.txt",
    name="a",
    title="A",
    description="The letter a.",
    mime_type="text/plain",
    size=1,
    annotations=t.Annotations(priority=0.5),
    icons=None,
    meta={},
)
def letter_a() -> str:
    return "a"


server.add_resource("file:///b.bin", b"b", mime_type="application/octet-stream")


@server.resource_template("file:///{name}", title="Files", mime_type="text/plain")
def by_name(name: str) -> str:
    return name


@server.prompt
def brief(topic: str) -> str:
    return topic


@server.prompt(name="longer", title="Longer", description="d", icons=[], meta=None)
def longer(topic: str) -> str:
    return topic
"""

# Checked by mypy only. `# E: code` marks a line mypy must reject with that error code;
# `# R: type` the type mypy must reveal.
CHECKS = """
reveal_type(plain)  # R: def (x: int) -> int
reveal_type(brief)  # R: def (topic: str) -> str
reveal_type(letter_a)  # R: def () -> str
plain("1")  # E: arg-type
server.tool(task="optinal")  # E: call-overload
server.tool(titel="Render")  # E: call-overload
server.tool(plain, name="x")  # E: call-overload
server.add_tool(plain, detach="yes")  # E: arg-type
server.add_tool(plain, bogus=1)  # E: call-arg
server.resource("file:///c", sise=3)  # E: call-arg
server.add_resource("file:///d", "d", size="1")  # E: arg-type
server.add_resource("file:///e", "e", annotations=t.ToolAnnotations())  # E: arg-type
server.resource_template("file:///{x}", mime_type=1)  # E: arg-type
server.prompt(task="optional")  # E: call-overload
"""


@pytest.mark.slow
def test_mypy_checks_the_decorator_options(tmp_path: Path) -> None:
    check_marks(GOOD + CHECKS, tmp_path)


def test_every_typed_option_registers() -> None:
    namespace: dict[str, object] = {}
    exec(compile(GOOD, "typed.py", "exec"), namespace)
    server = namespace["server"]
    assert isinstance(server, Server)
    registry = server.core.registry
    assert sorted(registry.tools) == ["plain", "raw", "render"]
    render = registry.tools["render"]
    assert (render.task, render.detach, render.definition.title) == ("optional", True, "Render")
    assert registry.tools["raw"].task == "required"
    assert registry.resources["file:///a.txt"].definition.size == 1
    assert registry.resources["file:///b.bin"].definition.size == 1
    assert [x.definition.title for x in registry.templates] == ["Files"]
    assert sorted(registry.prompts) == ["brief", "longer"]


def test_unknown_options_raise_at_registration() -> None:
    """What mypy reports, an unchecked caller gets at run time."""
    server = Server("untyped")
    options: dict[str, object] = {"titel": "x"}

    def fn() -> str:
        return ""

    with pytest.raises(TypeError, match=r"tool\(\): unexpected keyword argument\(s\) titel"):
        server.tool(**options)(fn)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="titel"):
        server.add_tool(fn, **options)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^resource\(\): .* sise"):
        server.add_resource("file:///x", "x", sise=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"resource_template\(\): .* size"):
        server.resource_template("file:///{x}", size=1)(fn)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"prompt\(\): .* task"):
        server.prompt(task="optional")(fn)  # type: ignore[call-overload]
    with pytest.raises(ConfigurationError, match="task must be"):
        server.tool(task="optinal")(fn)  # type: ignore[call-overload]
    assert not server.core.registry.tools
    assert not server.core.registry.resources
    assert not server.core.registry.templates
    assert not server.core.registry.prompts
