"""The client under test for the official conformance suite (client mode).

    conformance client --command "exec python examples/conformance_client.py" ...

The suite starts a mock server per scenario and runs this script with the server's
URL as the last argument; MCP_CONFORMANCE_SCENARIO names the scenario,
MCP_CONFORMANCE_PROTOCOL_VERSION the spec leg (2025-11-25: the initialize era;
2026-07-28: stateless), MCP_CONFORMANCE_CONTEXT carries scenario data. Built on the
public `mcpgen.Client` API only.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from mcpgen import Client, ClientError, McpError
from mcpgen.auth import ClientCredentials, HeadlessRedirect, OAuth
from mcpgen.types import CreateMessageResult, ElicitResult, TextContent

DEADLINE_SECONDS = 50.0
# The suite's mock authorization servers expect this client ID metadata document URL
# (they never fetch it) and approve at once: the redirect is read, not served.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"


async def on_elicitation(params: Any) -> ElicitResult:
    """Accept, with every field of the form filled (its default where it has one)."""
    content: dict[str, Any] = {}
    schema = params.requested_schema if params is not None else None
    for name, prop in (getattr(schema, "properties", None) or {}).items():
        if "default" in prop:
            content[name] = prop["default"]
        elif prop.get("type") == "boolean":
            content[name] = True
        elif prop.get("type") in ("number", "integer"):
            content[name] = 1
        elif "enum" in prop:
            content[name] = prop["enum"][0]
        else:
            content[name] = "conformance"
    return ElicitResult(action="accept", content=content)


async def on_sampling(params: Any) -> CreateMessageResult:
    return CreateMessageResult(
        role="assistant", content=TextContent(text="ok"), model="conformance-model"
    )


async def on_roots() -> list[str]:
    return ["file:///tmp/conformance-root"]


async def tools_call(c: Client) -> None:
    await c.list_tools()
    await c.call_tool("add_numbers", {"a": 2, "b": 3})


async def elicitation_defaults(c: Client) -> None:
    await c.list_tools()
    await c.call_tool("test_client_elicitation_defaults", {})


async def sse_retry(c: Client) -> None:
    await c.list_tools()
    await c.call_tool("test_reconnection", {})


async def schema_preservation(c: Client) -> None:
    tools = {tool.name: tool for tool in await c.list_tools()}
    schema = tools["json_schema_2020_12_tool"].input_schema  # kept verbatim
    await c.call_tool("json_schema_echo", {"schema": schema})


async def request_metadata(c: Client) -> None:
    await c.discover()
    await c.list_tools()


async def standard_headers(c: Client) -> None:
    await c.list_tools()
    await c.call_tool("test_headers", {})
    resources = await c.list_resources()
    await c.read_resource(resources[0].uri if resources else "file:///path/to/file%20name.txt")
    prompts = await c.list_prompts()
    await c.get_prompt(prompts[0].name if prompts else "test_prompt")


async def custom_headers(c: Client) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    await c.list_tools()
    for call in context.get("toolCalls", []):
        await c.call_tool(call["name"], call.get("arguments") or {})


async def invalid_tool_headers(c: Client) -> None:
    names = [tool.name for tool in await c.list_tools()]  # invalid annotations are dropped
    for name in names:
        await c.call_tool(name, {"region": "us-west1"})


async def list_only(c: Client) -> None:
    await c.list_tools()


async def request_state(c: Client) -> None:
    for name in (
        "test_mrtr_echo_state",
        "test_mrtr_no_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_result_type",
    ):
        await c.call_tool(name, {})


async def protected_tools(c: Client) -> None:
    await c.list_tools()
    await c.call_tool("test-tool", {})


def authorization(scenario: str) -> httpx.Auth | None:
    """The OAuth flow of an auth/* scenario (credentials from MCP_CONFORMANCE_CONTEXT)."""
    if not scenario.startswith("auth/"):
        return None
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if scenario.startswith("auth/client-credentials"):
        return ClientCredentials(
            context["client_id"],
            client_secret=context.get("client_secret"),
            private_key=context.get("private_key_pem"),
            algorithm=context.get("signing_algorithm", "ES256"),
        )
    return OAuth(
        redirect=HeadlessRedirect(REDIRECT_URI),
        client_name="mcpgen-conformance-client",
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_issuer=context.get("issuer"),
        client_metadata_url=CLIENT_METADATA_URL,
        dpop=True,  # used only where the authorization server offers it
    )


SCENARIOS: dict[str, Callable[[Client], Awaitable[None]]] = {
    "initialize": list_only,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": schema_preservation,
    "request-metadata": request_metadata,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": list_only,
    "sep-2322-client-request-state": request_state,
}


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    leg = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2026-07-28")
    era = "legacy" if leg < "2026-07-28" else "modern"
    auth = authorization(scenario)
    work = SCENARIOS.get(scenario, protected_tools if auth is not None else list_only)
    client = Client.http(
        url,
        auth=auth,
        era=era,
        name="mcpgen-conformance-client",
        version="1.0.0",
        on_elicitation=on_elicitation,
        on_sampling=on_sampling,
        on_roots=on_roots,
    )
    async with client:
        await work(client)
    return 0


if __name__ == "__main__":
    try:
        code = asyncio.run(asyncio.wait_for(main(sys.argv[-1]), DEADLINE_SECONDS))
    except (McpError, ClientError, TimeoutError, OSError) as exc:
        print(f"conformance client: {type(exc).__name__}: {exc}", file=sys.stderr)
        code = 1
    sys.exit(code)
