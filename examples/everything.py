"""A server exposing every fixture the official MCP conformance suite expects.

    python examples/everything.py --transport stdio
    python examples/everything.py --transport http --port 8000

The same handlers serve both eras: input requests written MRTR-style (return
`InputRequired`) become input-required results for 2026-07-28 requests and real
server-to-client requests for legacy (initialize) sessions. The task-enabled tools
(Tasks extension) run as tasks for 2026-07-28 requests that declare the extension.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
from typing import Annotated, Any

import msgspec

from mcpgen import (
    Context,
    Header,
    InputRequired,
    McpError,
    Server,
    audio,
    elicit_form,
    embedded_text,
    image,
    list_roots,
    sample,
    text,
    tool_error,
)
from mcpgen.types import PromptMessage

RED_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="  # noqa: E501
SILENT_WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

server = Server(
    "mcpgen-everything",
    "1.0.0",
    instructions="A test server exposing every feature of the MCP specification.",
)


# -- content -------------------------------------------------------------------------------
@server.tool
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> Any:
    """Returns an image."""
    return image(RED_PIXEL_PNG, "image/png")


@server.tool
def test_audio_content() -> Any:
    """Returns a short audio clip."""
    return audio(SILENT_WAV, "audio/wav")


@server.tool
def test_embedded_resource() -> Any:
    """Returns an embedded resource."""
    return embedded_text(
        "test://embedded-resource", "This is an embedded resource content.", "text/plain"
    )


@server.tool
def test_multiple_content_types() -> list[Any]:
    """Returns text, an image and an embedded resource."""
    return [
        text("Multiple content types test:"),
        image(RED_PIXEL_PNG, "image/png"),
        embedded_text(
            "test://mixed-content-resource",
            json.dumps({"test": "data", "value": 123}),
            "application/json",
        ),
    ]


@server.tool
def test_error_handling() -> Any:
    """Always fails, as a tool execution error."""
    return tool_error("This tool intentionally returns an error for testing")


# -- progress and logging ------------------------------------------------------------------------
@server.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress three times."""
    for step in (0, 50, 100):
        ctx.progress(step, 100, f"Completed step {step} of 100")
        await asyncio.sleep(0.05)
    return "Progress test completed"


@server.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three log messages while it runs."""
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        ctx.log("info", message, logger="conformance-test-server")
        await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@server.tool
def test_logging_tool(ctx: Context) -> str:
    """Logs only when the request asked for a log level."""
    ctx.info("logging tool called")
    return "Logging tool executed"


# -- sampling, elicitation, roots (both eras) ----------------------------------------------------
@server.tool
def test_sampling(ctx: Context, prompt: str) -> Any:
    """Asks the client's model to answer the prompt."""
    answer = ctx.input("llm")
    if answer is None:
        return InputRequired({"llm": sample(prompt, 100)})
    return f"LLM response: {answer.content.text}"


@server.tool
def test_elicitation(ctx: Context, message: str) -> Any:
    """Asks the user for a username and an email address."""
    answer = ctx.input("info")
    if answer is None:
        schema = {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }
        return InputRequired({"info": elicit_form(message, schema)})
    return f"User response: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool
def test_elicitation_sep1034_defaults(ctx: Context) -> Any:
    """Elicits a form whose fields carry default values."""
    answer = ctx.input("form")
    if answer is None:
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {
                    "type": "boolean",
                    "description": "Verification status",
                    "default": True,
                },
            },
            "required": [],
        }
        return InputRequired(
            {"form": elicit_form("Please review and update the form fields with defaults", schema)}
        )
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool
def test_elicitation_sep1330_enums(ctx: Context) -> Any:
    """Elicits single- and multi-select enums, titled and untitled."""
    answer = ctx.input("form")
    if answer is None:
        schema = {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                               "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {
                    "type": "array", "minItems": 1, "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]}},
            },
            "required": [],
        }  # fmt: skip
        return InputRequired(
            {"form": elicit_form("Please select options from the enum fields", schema)}
        )
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool
def test_streaming_elicitation(ctx: Context) -> Any:
    """Asks for a confirmation (an input-required result, never a server request)."""
    answer = ctx.input("confirm")
    if answer is None:
        return InputRequired(
            {
                "confirm": elicit_form(
                    "Continue?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
                )
            }
        )
    return f"Streaming elicitation: {answer.action}"


@server.tool
def test_missing_capability(ctx: Context) -> Any:
    """Needs the client's sampling capability."""
    answer = ctx.input("llm")
    if answer is None:
        return InputRequired({"llm": sample("Say hello", 20)})
    return f"Sampled: {answer.content.text}"


@server.tool
def test_reconnection() -> str:
    """Completes at once (SSE polling is not needed for it)."""
    return (
        "Reconnection test completed successfully. If you received this, "
        "the client properly reconnected after stream closure."
    )


# -- change notifications --------------------------------------------------------------------------
@server.tool
def test_trigger_tool_change() -> str:
    """Announces that the tool list changed."""
    server.notify_tools_changed()
    return "Tool list change notified"


@server.tool
def test_trigger_prompt_change() -> str:
    """Announces that the prompt list changed."""
    server.notify_prompts_changed()
    return "Prompt list change notified"


# -- multi round-trip requests (2026-07-28) -------------------------------------------------------
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool
def test_input_required_result_elicitation(ctx: Context) -> Any:
    """Asks for the user's name, then greets them."""
    answer = ctx.input("user_name")
    if answer is None or not isinstance(answer.content, dict) or "name" not in answer.content:
        return InputRequired({"user_name": elicit_form("What is your name?", NAME_FORM)})
    return f"Hello, {answer.content['name']}!"


@server.tool
def test_input_required_result_sampling(ctx: Context) -> Any:
    """Asks the client's model a question."""
    answer = ctx.input("capital_question")
    if answer is None:
        return InputRequired({"capital_question": sample("What is the capital of France?", 100)})
    return f"The model answered: {answer.content.text}"


@server.tool
def test_input_required_result_list_roots(ctx: Context) -> Any:
    """Asks for the client's roots."""
    answer = ctx.input("client_roots")
    if answer is None:
        return InputRequired({"client_roots": list_roots()})
    return "Roots: " + ", ".join(r.uri for r in answer.roots)


@server.tool
def test_input_required_result_request_state(ctx: Context) -> Any:
    """Keeps state across rounds in the sealed requestState."""
    answer = ctx.input("confirm")
    if answer is None or ctx.state != {"round": 1}:
        form = elicit_form(
            "Please confirm",
            {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        )
        return InputRequired({"confirm": form}, state={"round": 1})
    return f"state-ok: confirmed={answer.content}"


@server.tool
def test_input_required_result_multiple_inputs(ctx: Context) -> Any:
    """Asks for three inputs of three kinds at once."""
    name, greeting, roots = ctx.input("user_name"), ctx.input("greeting"), ctx.input("client_roots")
    if name is None or greeting is None or roots is None:
        return InputRequired(
            {
                "user_name": elicit_form("What is your name?", NAME_FORM),
                "greeting": sample("Generate a greeting", 50),
                "client_roots": list_roots(),
            },
            state={"round": 1},
        )
    return f"{greeting.content.text} {name.content.get('name')} ({len(roots.roots)} roots)"


@server.tool
def test_input_required_result_multi_round(ctx: Context) -> Any:
    """Two rounds of questions, then a result."""
    state = ctx.state or {}
    if "name" not in state:
        step1 = ctx.input("step1")
        if step1 is None:
            return InputRequired(
                {"step1": elicit_form("Step 1: What is your name?", NAME_FORM)}, state={"round": 1}
            )
        state = {"name": step1.content.get("name")}
    step2 = ctx.input("step2")
    if step2 is None:
        color = {
            "type": "object",
            "properties": {"color": {"type": "string"}},
            "required": ["color"],
        }
        return InputRequired(
            {"step2": elicit_form("Step 2: What is your favorite color?", color)}, state=state
        )
    return f"{state['name']} likes {step2.content.get('color')}"


@server.tool
def test_input_required_result_tampered_state(ctx: Context) -> Any:
    """Its state is sealed: a tampered copy is refused."""
    answer = ctx.input("confirm")
    if answer is None:
        form = elicit_form(
            "Please confirm", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return InputRequired({"confirm": form}, state={"issued": True})
    return "state verified"


@server.tool
def test_input_required_result_capabilities(ctx: Context) -> Any:
    """Asks only for what the client declared it can do."""
    caps = ctx.client_capabilities
    if ctx.input_responses:
        return "capabilities respected"
    if caps.elicitation is not msgspec.UNSET:
        return InputRequired(
            {"ask": elicit_form("Anything to add?", {"type": "object", "properties": {}})}
        )
    if caps.sampling is not msgspec.UNSET:
        return InputRequired({"ask": sample("Anything to add?", 20)})
    if caps.roots is not msgspec.UNSET:
        return InputRequired({"ask": list_roots()})
    return "no input capability declared"


# -- tasks (the io.modelcontextprotocol/tasks extension) -----------------------------------------
CONFIRM_FORM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}


def _content(answer: Any) -> dict[str, Any]:
    return answer.content if isinstance(answer.content, dict) else {}


@server.tool
def greet(name: str) -> str:
    """Greets someone (an ordinary tool: never a task)."""
    return f"Hello, {name}!"


@server.tool(task="optional")
async def slow_compute(seconds: float, label: str = "") -> str:
    """Works for `seconds`, then reports; a task when the client takes tasks."""
    await asyncio.sleep(seconds)
    return f"Computed {label or 'result'} in {seconds:g} s"


@server.tool(task="required")
async def failing_job() -> Any:
    """Runs for about a second, then reports a tool execution error (only as a task)."""
    await asyncio.sleep(1)
    return tool_error("job failed")


@server.tool(task="optional")
async def protocol_error_job() -> str:
    """Fails with a JSON-RPC error after a moment (a failed task)."""
    await asyncio.sleep(0.2)
    raise McpError(-32603, "protocol_error_job: internal failure")


@server.tool(task="optional")
def confirm_delete(ctx: Context, filename: str) -> Any:
    """Asks the user to confirm, then deletes (nothing, really)."""
    answer = ctx.input("confirm")
    if answer is None:
        return InputRequired({"confirm": elicit_form(f"Delete {filename}?", CONFIRM_FORM)})
    confirmed = answer.action == "accept" and _content(answer).get("confirm") is True
    return f"Deleted {filename}" if confirmed else f"Kept {filename}"


@server.tool(task="optional")
def multi_input(ctx: Context) -> Any:
    """Asks two questions at once."""
    name, confirm = ctx.input("name"), ctx.input("confirm")
    if name is None or confirm is None:
        return InputRequired(
            {
                "name": elicit_form("What is your name?", NAME_FORM),
                "confirm": elicit_form("Proceed?", CONFIRM_FORM),
            }
        )
    return f"{_content(name).get('name')}: confirm={_content(confirm).get('confirm')}"


@server.tool(task="required", detach=True)
async def test_tool_with_task(ctx: Context) -> Any:
    """Asks for the user's name in the request, then goes on as a task to greet them."""
    answer = ctx.input("user_name")
    if answer is None or "name" not in _content(answer):
        return InputRequired({"user_name": elicit_form("What is your name?", NAME_FORM)})
    await ctx.detach()
    await asyncio.sleep(0.2)
    return f"Hello, {_content(answer)['name']}!"


# -- headers and JSON Schema 2020-12 --------------------------------------------------------------
@server.tool
def test_custom_headers(region: Annotated[str, Header("Region")]) -> str:
    """Mirrors its region argument into the Mcp-Param-Region header."""
    return f"Region: {region}"


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(input_schema=JSON_SCHEMA_2020_12, description="Tool with JSON Schema 2020-12 features")
def json_schema_2020_12_tool(**arguments: Any) -> str:
    return f"Received {sorted(arguments)}"


# -- resources -------------------------------------------------------------------------------------
server.add_resource(
    "test://static-text",
    "This is the content of the static text resource.",
    name="static-text",
    description="A static text resource",
    mime_type="text/plain",
)
server.add_resource(
    "test://static-binary",
    base64.b64decode(RED_PIXEL_PNG),
    name="static-binary",
    description="A static binary resource (a PNG image)",
    mime_type="image/png",
)
server.add_resource(
    "test://watched-resource",
    "Watched resource content",
    name="watched-resource",
    description="A resource clients can subscribe to",
    mime_type="text/plain",
)


@server.resource_template(
    "test://template/{id}/data", name="template-data", mime_type="application/json"
)
def template_data(id: str) -> str:
    """Data for an id."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# -- prompts ---------------------------------------------------------------------------------------
@server.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt
def test_prompt_with_arguments(
    arg1: Annotated[str, msgspec.Meta(description="First test argument")],
    arg2: Annotated[str, msgspec.Meta(description="Second test argument")],
) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, msgspec.Meta(description="URI of the resource to embed")],  # noqa: N803
) -> list[Any]:
    """A prompt embedding a resource."""
    return [
        embedded_text(resourceUri, "Embedded resource content for testing.", "text/plain"),
        "Please process the embedded resource above.",
    ]


@server.prompt
def test_prompt_with_image() -> list[Any]:
    """A prompt with an image."""
    return [image(RED_PIXEL_PNG, "image/png"), "Please analyze the image above."]


@server.prompt
def test_input_required_result_prompt(ctx: Context) -> Any:
    """A prompt that first asks what context to use."""
    answer = ctx.input("user_context")
    if answer is None:
        schema = {
            "type": "object",
            "properties": {"context": {"type": "string"}},
            "required": ["context"],
        }
        return InputRequired(
            {"user_context": elicit_form("What context should the prompt use?", schema)}
        )
    return [
        PromptMessage(
            role="user", content=text(f"Use this context: {answer.content.get('context')}")
        )
    ]


@server.completion(prompt="test_prompt_with_arguments")
def complete_arguments(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [v for v in ("testValue1", "testValue2", "test") if v.startswith(value)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run()
    else:
        server.run(transport="http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
