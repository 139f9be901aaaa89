"""Properties of the generated modules that the runtime builds on."""

from __future__ import annotations

import importlib
import json
from types import ModuleType

import msgspec
import pytest

import mcpgen_types
from mcpgen_types import v2024_11_05, v2025_03_26, v2025_11_25, v2026_07_28

MODULES = {v: importlib.import_module(m) for v, m in mcpgen_types.MODULES.items()}


def type_names(module: ModuleType) -> list[str]:
    return [
        n
        for n in module.__all__
        if isinstance(getattr(module, n), type) or (n[0].isupper() and not n.isupper())
    ]


@pytest.mark.parametrize("version", sorted(MODULES))
def test_every_definition_is_a_decode_target(version: str) -> None:
    module = MODULES[version]
    names = type_names(module)
    assert len(names) > 30
    for name in names:
        if name in module.CONTEXT_DEPENDENT:
            # Documented as context-dependent: prove the listing is needed.
            with pytest.raises(TypeError):
                msgspec.json.Decoder(getattr(module, name))
        else:
            msgspec.json.Decoder(getattr(module, name))


def test_context_dependent_unions_are_exactly_the_documented_ones() -> None:
    assert {
        "EnumSchema",
        "InputResponse",
        "JSONRPCMessage",
        "MultiSelectEnumSchema",
        "PrimitiveSchemaDefinition",
        "ServerResult",
    } == v2026_07_28.CONTEXT_DEPENDENT


def test_every_schema_definition_is_generated(schema_dir: object) -> None:
    from pathlib import Path

    from mcpgen_codegen.config import load_pins
    from tests.conftest import REPO

    for pin in load_pins(REPO / "schema" / "pins.toml").revisions:
        doc = json.loads((Path(str(schema_dir)) / pin.local).read_text())
        defs = doc.get("$defs") or doc["definitions"]
        module = MODULES[pin.version]
        missing = [d for d in defs if not hasattr(module, d)]
        assert not missing, f"{pin.version}: {missing}"


def test_content_blocks_are_a_tagged_union() -> None:
    data = (
        b'[{"type":"text","text":"hi"},{"type":"image","data":"AA==","mimeType":"image/png"},'
        b'{"type":"resource","resource":{"uri":"file:///a","blob":"AA=="}}]'
    )
    blocks = msgspec.json.decode(data, type=list[v2026_07_28.ContentBlock])
    assert [type(b).__name__ for b in blocks] == ["TextContent", "ImageContent", "EmbeddedResource"]
    assert blocks[2].resource.blob == "AA==" and blocks[2].resource.text is msgspec.UNSET
    assert json.loads(msgspec.json.encode(blocks)) == json.loads(data)


def test_requests_dispatch_on_method() -> None:
    line = (
        b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo",'
        b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{},"x.example/k":[1.5,null]}}}'
    )
    req = msgspec.json.decode(line, type=v2026_07_28.ClientRequest)
    assert isinstance(req, v2026_07_28.CallToolRequest) and req.id == "a"
    assert req.params.meta["x.example/k"] == [1.5, None]  # _meta keeps every key
    assert json.loads(msgspec.json.encode(req)) == json.loads(line)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(line.replace(b'"a"', b"true"), type=v2026_07_28.ClientRequest)


def test_result_type_is_defaulted_and_always_written() -> None:
    result = msgspec.json.decode(b'{"content":[]}', type=v2026_07_28.CallToolResult)
    assert result.result_type == "complete"  # older peers omit it
    assert json.loads(msgspec.json.encode(v2026_07_28.CallToolResult(content=[]))) == {
        "content": [],
        "resultType": "complete",
    }


def test_absent_optional_keys_are_never_written() -> None:
    tool = v2026_07_28.Tool(name="t", input_schema={"type": "object"})
    assert json.loads(msgspec.json.encode(tool)) == {"name": "t", "inputSchema": {"type": "object"}}


def test_number_keeps_integers_integral() -> None:
    note = msgspec.json.decode(
        b'{"progressToken":1,"progress":50}', type=v2026_07_28.ProgressNotificationParams
    )
    assert json.loads(msgspec.json.encode(note)) == {"progressToken": 1, "progress": 50}
    assert note.progress == 50 and isinstance(note.progress, int)


def test_patched_elicitation_answers_accept_floats() -> None:
    result = msgspec.json.decode(
        b'{"action":"accept","content":{"n":2.5}}', type=v2026_07_28.ElicitResult
    )
    assert result.content == {"n": 2.5}


def test_methods_table_modern() -> None:
    m = v2026_07_28.METHODS
    assert "initialize" not in m and "ping" not in m and "logging/setLevel" not in m
    call = m["tools/call"]
    assert (call.kind, call.direction, call.input_required, call.cacheable) == (
        "request",
        "client_to_server",
        True,
        False,
    )
    assert call.message is v2026_07_28.CallToolRequest
    assert call.params is v2026_07_28.CallToolRequestParams
    assert call.result is v2026_07_28.CallToolResult
    cacheable = {k for k, v in m.items() if v.cacheable}
    assert cacheable == {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
    assert {k for k, v in m.items() if v.input_required} == {
        "tools/call",
        "prompts/get",
        "resources/read",
    }
    assert {k for k, v in m.items() if v.direction == "input"} == {
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    }
    assert m["notifications/cancelled"].direction == "both"
    assert m["notifications/progress"].direction == "server_to_client"


def test_methods_table_legacy() -> None:
    m = v2025_11_25.METHODS
    assert m["initialize"].result is v2025_11_25.InitializeResult
    assert m["ping"].direction == "both" and m["ping"].result is v2025_11_25.Result
    assert m["elicitation/create"].direction == "server_to_client"
    assert "server/discover" not in m
    assert not any(v.input_required or v.cacheable for v in m.values())
    assert (
        "JSONRPCBatchRequest" in v2025_03_26.__all__
        and "JSONRPCBatchRequest" not in v2024_11_05.__all__
    )


def test_meta_keys_and_error_codes() -> None:
    assert v2026_07_28.META_PROTOCOL_VERSION == "io.modelcontextprotocol/protocolVersion"
    assert v2026_07_28.META_SUBSCRIPTION_ID == "io.modelcontextprotocol/subscriptionId"
    assert "progressToken" in v2026_07_28.META_KEYS
    assert (
        v2026_07_28.HEADER_MISMATCH,
        v2026_07_28.MISSING_REQUIRED_CLIENT_CAPABILITY,
        v2026_07_28.UNSUPPORTED_PROTOCOL_VERSION,
    ) == (-32020, -32021, -32022)
    assert "RESOURCE_NOT_FOUND" not in v2026_07_28.ERROR_CODES  # forbidden under 2026-07-28
    assert v2025_11_25.ERROR_CODES["RESOURCE_NOT_FOUND"] == -32002
    assert v2025_11_25.URL_ELICITATION_REQUIRED == -32042
    assert v2024_11_05.ERROR_CODES["METHOD_NOT_FOUND"] == -32601


def test_extension_module_shares_core_classes() -> None:
    from mcpgen_types import ext_tasks

    assert ext_tasks.TextContent is v2026_07_28.TextContent  # one type everywhere
    assert ext_tasks.EXTENSION_ID == "io.modelcontextprotocol/tasks"
    assert set(ext_tasks.METHODS) == {
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
        "notifications/tasks",
        # core methods holding a definition the extension adds keys to (policy.toml)
        "subscriptions/listen",
        "notifications/subscriptions/acknowledged",
    }
    created = msgspec.json.decode(
        b'{"resultType":"task","taskId":"t1","status":"working","createdAt":"x",'
        b'"lastUpdatedAt":"x","ttlMs":null}',
        type=ext_tasks.CreateTaskResult,
    )
    assert created.ttl_ms is None and created.result_type == "task"
    got = msgspec.json.decode(
        b'{"resultType":"complete","taskId":"t1","status":"completed","createdAt":"x",'
        b'"lastUpdatedAt":"x","ttlMs":1000,"result":{"content":[]}}',
        type=ext_tasks.GetTaskResult,
    )
    assert type(got).__name__ == "GetTaskResultCompleted" and got.result == {"content": []}


def test_tasks_params_carry_the_modern_meta() -> None:
    from mcpgen_types import ext_tasks

    raw = b'{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"taskId":"t1"}'
    params = msgspec.json.decode(raw, type=ext_tasks.METHODS["tasks/get"].params)
    assert params.task_id == "t1" and params.meta["io.modelcontextprotocol/protocolVersion"]
    assert json.loads(msgspec.json.encode(params)) == json.loads(raw)
    with pytest.raises(msgspec.ValidationError, match="_meta"):
        msgspec.json.decode(b'{"taskId":"t1"}', type=ext_tasks.CancelTaskRequestParams)


def test_extension_adds_task_ids_to_the_core_subscription_filter() -> None:
    from mcpgen_types import ext_tasks

    assert "SubscriptionFilter" in ext_tasks.CORE_EXTENDED
    assert ext_tasks.SubscriptionFilter is not v2026_07_28.SubscriptionFilter
    raw = (
        b'{"_meta":{},"notifications":{"toolsListChanged":true,"taskIds":["a"],'
        b'"resourceSubscriptions":["file:///x"]}}'
    )
    info = ext_tasks.METHODS["subscriptions/listen"]
    params = msgspec.json.decode(raw, type=info.params)
    assert params.notifications.task_ids == ["a"]
    assert params.notifications.tools_list_changed is True
    assert info.result is v2026_07_28.SubscriptionsListenResult  # untouched: imported
    core = msgspec.json.decode(raw, type=v2026_07_28.SubscriptionsListenRequestParams)
    assert not hasattr(core.notifications, "task_ids")  # the core revision stays as pinned
    ack = ext_tasks.SubscriptionsAcknowledgedNotification(
        params=ext_tasks.SubscriptionsAcknowledgedNotificationParams(
            notifications=ext_tasks.SubscriptionFilter(task_ids=["a"])
        )
    )
    assert json.loads(msgspec.json.encode(ack)) == {
        "method": "notifications/subscriptions/acknowledged",
        "jsonrpc": "2.0",
        "params": {"notifications": {"taskIds": ["a"]}},
    }


def test_lenient_params_let_legacy_requests_omit_meta() -> None:
    table = v2026_07_28.LENIENT_PARAMS
    assert table["tools/call"] is v2026_07_28.CallToolRequestParamsLenient
    assert table["tools/list"] is table["prompts/list"] is v2026_07_28.PaginatedRequestParamsLenient
    assert set(table) == {
        m
        for m, info in v2026_07_28.METHODS.items()
        if info.kind == "request"
        and isinstance(info.params, type)
        and any(
            f.encode_name == "_meta" and f.required for f in msgspec.structs.fields(info.params)
        )
    }
    for method, lenient in table.items():
        assert issubclass(lenient, v2026_07_28.METHODS[method].params)
    call = msgspec.json.decode(b'{"name":"echo"}', type=table["tools/call"])
    assert isinstance(call, v2026_07_28.CallToolRequestParams) and call.meta == {}
    with pytest.raises(msgspec.ValidationError, match="_meta"):
        msgspec.json.decode(b'{"name":"echo"}', type=v2026_07_28.CallToolRequestParams)
    assert not hasattr(v2025_11_25, "LENIENT_PARAMS")  # legacy types need no variant


def test_latest_reexports_the_newest_modern_revision() -> None:
    from mcpgen_types import latest

    assert mcpgen_types.LATEST == "2026-07-28"
    assert latest.CallToolRequest is v2026_07_28.CallToolRequest
    assert mcpgen_types.LEGACY == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def _subclasses(cls: type) -> set[type]:
    out = set(cls.__subclasses__())
    for sub in list(out):
        out |= _subclasses(sub)
    return out


def test_the_runtime_defines_no_message_types_of_its_own() -> None:
    """Every MCP message type the server decodes is generated: the runtime defines no
    subclass of a generated struct, statically or at run time."""
    import pkgutil

    import mcpgen
    from mcpgen._server._methods import METHODS
    from mcpgen_types._base import MCPStruct

    for info in pkgutil.walk_packages(mcpgen.__path__, "mcpgen."):
        importlib.import_module(info.name)
    lenient = {name: spec.lenient.type for name, spec in METHODS.items() if spec.lenient}
    assert lenient == {
        name: v2026_07_28.LENIENT_PARAMS[name]
        for name, spec in METHODS.items()
        if spec.legacy and spec.modern is not None
    }  # every method both eras call decodes legacy requests with a generated variant
    legacy = METHODS["tools/call"].legacy_params("2025-11-25", b'{"name":"n"}')
    assert type(legacy) is v2026_07_28.CallToolRequestParamsLenient
    foreign = sorted(
        f"{c.__module__}.{c.__qualname__}"
        for c in _subclasses(MCPStruct)
        if c.__module__.split(".")[0] == "mcpgen"  # other tests define their own: not ours
    )
    assert not foreign


def test_apps_extension_has_every_definition_and_shares_core_classes() -> None:
    from mcpgen_types import ext_apps

    assert ext_apps.EXTENSION_ID == "io.modelcontextprotocol/ui"
    own = [n for n in ext_apps.__all__ if n.startswith("McpUi") and "Request" not in n[5:]]
    assert {"McpUiResourceMeta", "McpUiToolMeta", "McpUiClientCapabilities"} <= set(own)
    # inline copies of core definitions are the core's classes
    assert ext_apps.TextContent is v2026_07_28.TextContent
    assert ext_apps.Implementation is v2026_07_28.Implementation
    # and inline copies of its own definitions are those definitions
    result = ext_apps.McpUiInitializeResult.__annotations__
    assert result["host_capabilities"] == "McpUiHostCapabilities"
    assert result["host_context"] == "McpUiHostContext"
    requests = {m for m, i in ext_apps.METHODS.items() if i.kind == "request"}
    assert requests == {
        "ui/initialize",
        "ui/message",
        "ui/open-link",
        "ui/download-file",
        "ui/request-display-mode",
        "ui/update-model-context",
        "ui/resource-teardown",
    }
    assert {i.direction for i in ext_apps.METHODS.values()} == {"app_to_host", "host_to_app"}
    assert ext_apps.METHODS["ui/update-model-context"].result is v2026_07_28.EmptyResult


def test_apps_messages_decode_to_typed_structs() -> None:
    from mcpgen_types import ext_apps

    message = {
        "method": "ui/message",
        "params": {"role": "user", "content": [{"type": "text", "text": "sort by price"}]},
    }
    decoded = msgspec.convert(message, ext_apps.McpUiMessageRequest)
    assert isinstance(decoded.params.content[0], v2026_07_28.TextContent)
    assert msgspec.to_builtins(decoded) == message
    meta = {
        "resourceUri": "ui://table/view.html",
        "visibility": ["app"],
    }
    tool_meta = msgspec.convert(meta, ext_apps.McpUiToolMeta)
    assert tool_meta.visibility == ["app"]
    resource = {
        "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": []},
        "prefersBorder": True,
    }
    assert msgspec.to_builtins(msgspec.convert(resource, ext_apps.McpUiResourceMeta)) == resource
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"visibility": ["everyone"]}, ext_apps.McpUiToolMeta)
