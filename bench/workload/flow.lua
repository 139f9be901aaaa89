-- wrk script of the real-workload benchmark (bench/workload/run.py runs it).
-- Run with as many threads as connections (-t N -c N): each thread then owns one
-- connection, a virtual user, and walks its own flow, one request in flight.
-- WORKLOAD_FLOW:
--   legacy  every tool call is a whole session: initialize, notifications/initialized,
--           tools/call, then DELETE of the session (skipped when the server gave none)
--   modern  one 2026-07-28 tools/call per request, no handshake
-- WORKLOAD_PRODUCTS: how many products the API stand-in holds (100000).
-- The tool rotates search_products, get_user_cart, checkout with random arguments.
-- WORKLOAD_ECHO=<tool>: call only that tool, an echo taking {"text": ...}, instead
-- (bench/scaleout.py: no I/O in the tool, so the server's costs are mcpgen's own).
-- Every answer is checked: an unexpected status, or a tools/call answer without the
-- tool's marker or with "isError":true, is an error (its first one is kept).
-- done() prints "workload-wrk-result " then a JSON object.

local flow = os.getenv("WORKLOAD_FLOW") or "modern"
local MODERN, LEGACY = "2026-07-28", "2025-11-25"
local CATEGORIES = {"books", "music", "games", "garden", "kitchen", "sports", "toys",
  "tools", "audio", "video"}
local TOOLS = {"search_products", "get_user_cart", "checkout"}
local MARKERS = {search_products = "popular", get_user_cart = "recent",
  checkout = "order_id"}
local PRODUCTS = tonumber(os.getenv("WORKLOAD_PRODUCTS") or "100000")
local ECHO = os.getenv("WORKLOAD_ECHO")
if ECHO and ECHO ~= "" then
  TOOLS = {ECHO}
  MARKERS[ECHO] = "scale-out echo"
end
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("vu", #threads)
end

function init(args)
  calls, errors, requests, step, rid, iteration = 0, 0, 0, 1, 0, 0
  session, tool, first_error = nil, nil, ""
  math.randomseed(vu * 7919 + 1)
end

local function arguments(name)
  if name == ECHO then
    return '{"text":"scale-out echo"}'
  elseif name == "search_products" then
    local low = math.random(1, 800)
    return string.format('{"category":"%s","min_price":%d,"max_price":%d,"limit":10}',
      CATEGORIES[math.random(#CATEGORIES)], low, low + 150)
  elseif name == "get_user_cart" then
    return string.format('{"user_id":%d}', math.random(1, 1000))
  end
  return string.format(
    '{"user_id":%d,"items":[{"product_id":%d,"quantity":%d},{"product_id":%d,"quantity":1}]}',
    math.random(1, 1000), math.random(1, PRODUCTS), math.random(1, 3), math.random(1, PRODUCTS))
end

local function call_body(meta)
  iteration = iteration + 1
  tool = TOOLS[(iteration - 1) % #TOOLS + 1]
  rid = rid + 1
  local extra = ""
  if meta then
    extra = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. MODERN ..
      '","io.modelcontextprotocol/clientCapabilities":{}}'
  end
  return string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s%s}}',
    rid, tool, arguments(tool), extra)
end

local function headers(version)
  local h = {["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = version}
  if session then h["Mcp-Session-Id"] = session end
  return h
end

function request()
  if flow == "modern" then
    local body = call_body(true)
    local h = headers(MODERN)
    h["Mcp-Method"] = "tools/call"
    h["Mcp-Name"] = tool
    return wrk.format("POST", nil, h, body)
  end
  if step == 1 then
    session = nil
    rid = rid + 1
    local h = headers(LEGACY)
    h["MCP-Protocol-Version"] = nil
    return wrk.format("POST", nil, h, string.format(
      '{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"%s",' ..
      '"capabilities":{},"clientInfo":{"name":"workload","version":"1.0"}}}', rid, LEGACY))
  elseif step == 2 then
    return wrk.format("POST", nil, headers(LEGACY),
      '{"jsonrpc":"2.0","method":"notifications/initialized"}')
  elseif step == 3 then
    return wrk.format("POST", nil, headers(LEGACY), call_body(false))
  end
  return wrk.format("DELETE", nil, headers(LEGACY), nil)
end

local function fail(what, status, body)
  errors = errors + 1
  if first_error == "" then
    first_error = (what .. " HTTP " .. status .. " " .. string.sub(body or "", 1, 160))
      :gsub('[^%w%s%.:/_%-]', "?")
  end
end

local function check_call(status, body)
  if status ~= 200 then
    return fail("tools/call " .. tool, status, body)
  end
  if not string.find(body, MARKERS[tool], 1, true)
    or string.find(body, '"isError":true', 1, true) then
    return fail("tools/call " .. tool, status, body)
  end
  calls = calls + 1
end

function response(status, hdrs, body)
  requests = requests + 1
  if flow == "modern" then
    return check_call(status, body)
  end
  if step == 1 then
    for name, value in pairs(hdrs) do
      if string.lower(name) == "mcp-session-id" then session = value end
    end
    if status ~= 200 or not string.find(body, "protocolVersion", 1, true) then
      fail("initialize", status, body)
      return
    end
    step = 2
  elseif step == 2 then
    if status ~= 202 and status ~= 200 and status ~= 204 then
      fail("notifications/initialized", status, body)
      step = 1
      return
    end
    step = 3
  elseif step == 3 then
    check_call(status, body)
    step = session and 4 or 1
  else
    if status ~= 200 and status ~= 204 and status ~= 202 then
      fail("DELETE", status, body)
    end
    step = 1
  end
end

function done(summary, latency, reqs)
  local c, e, r, first = 0, 0, 0, ""
  for _, thread in ipairs(threads) do
    c = c + thread:get("calls")
    e = e + thread:get("errors")
    r = r + thread:get("requests")
    if first == "" then first = thread:get("first_error") end
  end
  local se = summary.errors
  io.write(string.format(
    'workload-wrk-result {"calls":%d,"errors":%d,"requests":%d,"duration_us":%d,' ..
    '"socket_errors":%d,"p50_us":%d,"p99_us":%d,"first_error":"%s"}\n',
    c, e, r, summary.duration, se.connect + se.read + se.write + se.timeout,
    latency:percentile(50), latency:percentile(99), first))
end
