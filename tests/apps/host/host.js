// A minimal MCP Apps host for the browser test: the official TypeScript client
// (@modelcontextprotocol/client) talks to an mcpgen server over Streamable HTTP, and the
// ext-apps package's own host bridge (AppBridge) runs the tool's app in a sandboxed frame.
// Bundled by esbuild at test time; everything it does is written into the page so the
// driver (drive.mjs) and the screenshot can see it.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const params = new URLSearchParams(location.search);
const server = params.get("server");
const mode = params.get("mode") === "legacy" ? "legacy" : { pin: params.get("mode") };
const tool = params.get("tool") || "list_products";
const logBox = document.getElementById("log");
const state = (window.hostState = { calls: [], errors: [], era: null, ready: false });

function log(text) {
  const line = document.createElement("div");
  line.textContent = text;
  logBox.appendChild(line);
}

async function main() {
  const client = new Client(
    { name: "browser-host", version: "1.0" },
    {
      capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
      versionNegotiation: { mode },
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(server)));
  state.era = client.getNegotiatedProtocolVersion();
  log("connected: " + state.era);
  const { tools } = await client.listTools();
  const target = tools.find((t) => t.name === tool);
  const uri = target?._meta?.ui?.resourceUri;
  if (!uri) throw new Error(tool + " has no app");
  const read = await client.readResource({ uri });
  const contents = read.contents[0];
  log("app " + uri + " (" + contents.mimeType + ")");
  const frame = document.createElement("iframe");
  frame.id = "app";
  frame.setAttribute("sandbox", "allow-scripts");
  document.getElementById("stage").appendChild(frame);

  // No client for the bridge: this host forwards the app's tool calls itself (below), so
  // the test sees each one pass through it.
  const bridge = new AppBridge(
    null,
    { name: "browser-host", version: "1.0" },
    { serverTools: {}, logging: {} },
  );
  bridge.oncalltool = async (request) => {
    const result = await client.callTool(request);
    state.calls.push({ name: request.name, arguments: request.arguments, result });
    log("app called " + request.name + ": " + JSON.stringify(result.structuredContent));
    return result;
  };
  bridge.oninitialized = async () => {
    log("app initialized");
    const args = {};
    await bridge.sendToolInput({ arguments: args });
    const result = await client.callTool({ name: tool, arguments: args });
    await bridge.sendToolResult(result);
    state.ready = true;
    log("tool result sent to the app");
  };
  // Listen before the app loads: its first message (ui/initialize) comes at once.
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = contents.text;
}

main().catch((error) => {
  state.errors.push(String(error && error.stack ? error.stack : error));
  log("error: " + error);
});
