-- wrk script for the MCP benchmark suite (bench/suite.py): one POST, fixed body and
-- headers, built once per thread (no request() function, so wrk does no Lua work per
-- request). Set by the suite through the environment:
--   MCP_BODY      the JSON-RPC request body
--   MCP_HEADERS   "Name: value" lines, one header a line
-- done() prints one line, "mcp-wrk-result " then a JSON object the suite reads.

wrk.method = "POST"
wrk.body = os.getenv("MCP_BODY") or ""
for line in (os.getenv("MCP_HEADERS") or ""):gmatch("[^\n]+") do
  local name, value = line:match("^%s*([^:]+):%s*(.-)%s*$")
  if name then
    wrk.headers[name] = value
  end
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
