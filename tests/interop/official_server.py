"""A small MCP server built on the official Python SDK (PyPI `mcp`, pinned in tests/tooling.py).

Runs under the interpreter from `tests.tooling.official_python()` (a venv holding the
official SDK and not mcpgen), never inside the test process:

    python official_server.py stdio [LABEL]
    python official_server.py http PORT      # Streamable HTTP on 127.0.0.1:PORT/mcp
    python official_server.py sse PORT       # HTTP+SSE (2024-11-05) on 127.0.0.1:PORT/sse

(LABEL is ignored: it only lets a test make its stdio command line unique.)

It uses the SDK's high-level `MCPServer` and exposes

* the tool `echo(text) -> text`;
* the tool `ask_name()`, whose `name` parameter is filled by a resolver that returns
  `Elicit(...)`. The SDK picks the mechanism by the request's protocol version: on an
  initialize-handshake session (<= 2025-11-25) it sends a real server-to-client
  `elicitation/create` request mid-call; on 2026-07-28 it answers with an
  input-required result (MRTR) and resumes when the client retries with
  `inputResponses` + `requestState`;
* the static resource `demo://hello` (text `hello`);
* the prompt `greet(name)`, with a completion handler for its `name` argument.

The SDK serves both eras on one endpoint: stdio answers `initialize` or a
`server/discover` probe; its Streamable HTTP session manager routes a POST whose
`MCP-Protocol-Version` header is not a handshake-era version to its 2026-07-28
single-exchange handler and everything else to the legacy session transport. Its
deprecated HTTP+SSE app (`sse`) streams from GET /sse, whose first event names
/messages/?session_id=... for the POSTs; a POST to /sse itself answers 405.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from mcp_types import Completion, PromptReference
from pydantic import BaseModel, Field

NAME = "official-interop"
VERSION = "2.3.0-test"
QUESTION = "What is your name?"

server = MCPServer(NAME, version=VERSION, log_level="WARNING")


class Person(BaseModel):
    name: str = Field(description="Your name")


def ask_for_name() -> Elicit[Person]:
    return Elicit(QUESTION, Person)


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def ask_name(person: Annotated[Person, Resolve(ask_for_name)]) -> str:
    """Ask the user for their name, then greet them."""
    return f"Hello, {person.name}!"


@server.resource("demo://hello", mime_type="text/plain")
def hello() -> str:
    return "hello"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Please greet {name} warmly."


@server.completion()
async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
    if isinstance(ref, PromptReference) and ref.name == "greet" and argument.name == "name":
        names = ["Alice", "Albert", "Bob"]
        return Completion(values=[n for n in names if n.startswith(argument.value)])
    return None


def main(argv: list[str]) -> int:
    if argv[:1] == ["stdio"] and len(argv) <= 2:
        server.run("stdio")
        return 0
    if len(argv) == 2 and argv[0] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
        return 0
    if len(argv) == 2 and argv[0] == "sse":
        server.run("sse", host="127.0.0.1", port=int(argv[1]))
        return 0
    print("usage: official_server.py stdio [LABEL] | http PORT | sse PORT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
