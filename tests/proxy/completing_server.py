"""An upstream whose completions say what reached them: the reference's kind, the
argument, its value and the context, for a prompt and for a resource template. Run over
stdio by tests/proxy/test_completion.py."""

from __future__ import annotations

import json

from mcpgen import Server

server = Server("completing")
TEMPLATE = "notes://{owner}/{topic}"


@server.prompt
def greet(name: str, greeting: str) -> str:
    return f"{greeting}, {name}!"


@server.resource_template(TEMPLATE)
def note(owner: str, topic: str) -> str:
    return f"{owner} on {topic}"


def _echo(kind: str, argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [kind, f"{argument}={value}", json.dumps(context, sort_keys=True)]


@server.completion(prompt="greet")
def complete_greet(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return _echo("prompt", argument, value, context)


@server.completion(resource_template=TEMPLATE)
def complete_note(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return _echo("template", argument, value, context)


if __name__ == "__main__":
    server.run()
