// The workload on the TypeScript SDK (1.32) with Express, stateless with JSON
// responses: a new McpServer and transport per request, as the SDK's stateless
// example does. HTTP through Node's fetch (undici, keep-alive), Redis through one
// ioredis client shared by every request.
//
//   node bench/workload/servers/ts_server.mjs --port 8204 --api URL --redis URL [--workers N]
//
// With --workers N (N > 1) Node's cluster module forks N processes sharing the port
// (the primary hands out connections; it serves none itself).
//
// NODE_PATH must name the node_modules holding @modelcontextprotocol/sdk, express,
// zod and ioredis (bench/workload/run.sh installs them).
import cluster from "node:cluster";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_PATH || ".", "noop.js"));
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const express = require("express");
const { z } = require("zod");
const Redis = require("ioredis");

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, word, i, all) =>
    word.startsWith("--") ? [...pairs, [word.slice(2), all[i + 1]]] : pairs, []));
const api = args.api;
const redis = new Redis(args.redis);

async function getJson(url, init) {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`HTTP ${response.status} from ${url}`);
  return response.json();
}

function text(value) {
  return { content: [{ type: "text", text: JSON.stringify(value) }] };
}

function build() {
  const server = new McpServer({ name: "workload", version: "1.0.0" });
  server.tool("search_products", "Products of a category within a price range, with the ten most popular.",
    { category: z.string(), min_price: z.number(), max_price: z.number(), limit: z.number().int().default(10) },
    async ({ category, min_price, max_price, limit }) => {
      const query = new URLSearchParams({ category, min_price, max_price, limit });
      const [body, popular] = await Promise.all([
        getJson(`${api}/products/search?${query}`),
        redis.zrevrange("popularity", 0, 9, "WITHSCORES"),
      ]);
      const top = [];
      for (let i = 0; i < popular.length; i += 2) top.push({ product_id: Number(popular[i]), score: Number(popular[i + 1]) });
      return text({ total: body.total, products: body.products, popular: top });
    });
  server.tool("get_user_cart", "A user's cart, its first product and the user's recent items.",
    { user_id: z.number().int() },
    async ({ user_id }) => {
      const cart = await redis.hgetall(`cart:${user_id}`);
      const first = Object.keys(cart).sort()[0] || "1";
      const [product, recent] = await Promise.all([
        getJson(`${api}/products/${first}`), redis.lrange(`recent:${user_id}`, 0, 4),
      ]);
      const items = Object.fromEntries(Object.entries(cart).map(([k, v]) => [k, Number(v)]));
      return text({ items, product, recent: recent.map(Number) });
    });
  server.tool("checkout", "Price a cart and record the order.",
    { user_id: z.number().int(), items: z.array(z.record(z.number())) },
    async ({ user_id, items }) => {
      const first = String(items.length ? items[0].product_id : 1);
      const [priced, order] = await Promise.all([
        getJson(`${api}/cart/calculate`, {
          method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ items }),
        }),
        redis.incr("orders"),
        redis.lpush(`recent:${user_id}`, first),
        redis.zincrby("popularity", 1, first),
      ]);
      return text({ order_id: order, total: priced.total });
    });
  return server;
}

const app = express();
app.use(express.json({ limit: "4mb" }));
app.post("/mcp", async (req, res) => {
  const server = build();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
app.delete("/mcp", (req, res) => res.status(405).end());
const workers = Number(args.workers || 1);
if (workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
  process.on("SIGTERM", () => { for (const w of Object.values(cluster.workers)) w.kill("SIGTERM"); process.exit(0); });
} else {
  app.listen(Number(args.port), args.host || "127.0.0.1");
}
