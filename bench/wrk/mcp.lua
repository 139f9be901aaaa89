-- wrk script for the MCP benchmark suite (bench/suite.py): POSTs of one JSON-RPC
-- request with fixed headers. Set by the suite through the environment:
--   MCP_BODY      the JSON-RPC request body; its first `"id":<digits>` is replaced by a
--                 counter, so no two requests in flight share an id (a legacy session
--                 routes replies by id)
--   MCP_HEADERS   "Name: value" lines, one header a line
-- done() prints one line, "mcp-wrk-result " then a JSON object the suite reads.

wrk.method = "POST"
for line in (os.getenv("MCP_HEADERS") or ""):gmatch("[^\n]+") do
  local name, value = line:match("^%s*([^:]+):%s*(.-)%s*$")
  if name then
    wrk.headers[name] = value
  end
end

local body = os.getenv("MCP_BODY") or ""
local head, tail = body:match('^(.-"id":)%d+(.*)$')
if head == nil then
  error("MCP_BODY has no numeric \"id\"")
end
local counter = 0

function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil, head .. counter .. tail)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'mcp-wrk-result {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean, latency.max))
end
