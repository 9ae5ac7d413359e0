// The official TypeScript SDK v1 (@modelcontextprotocol/sdk, pinned in scripts/node.sh) as a
// 2025-11-25 server whose tools ask with server.elicitInput: each question is a real
// elicitation/create request to the client. Test-only.
//
//   node legacy_ts_server.mjs stdio
//   node legacy_ts_server.mjs PORT      (127.0.0.1; stateful Streamable HTTP, one session per initialize)
//
// TS_SDK_V1_MODULES names the node_modules folder that holds the SDK (scripts/node.sh exports it).
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.TS_SDK_V1_MODULES;
if (!modules) {
  console.error("TS_SDK_V1_MODULES is not set (source scripts/node.sh)");
  process.exit(2);
}
const sdk = (path) => import(pathToFileURL(join(modules, "@modelcontextprotocol/sdk/dist/esm", path)).href);
const { McpServer } = await sdk("server/mcp.js");
const { StdioServerTransport } = await sdk("server/stdio.js");
const { StreamableHTTPServerTransport } = await sdk("server/streamableHttp.js");

const BOOKING = {
  type: "object",
  properties: {
    guests: { type: "integer", minimum: 1, maximum: 12, default: 2 },
    time: { type: "string", enum: ["18:00", "19:30", "21:00"] },
  },
  required: ["time"],
};
const NAME = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

function build() {
  const server = new McpServer({ name: "legacy-ts", version: "1.32.2-tests" });
  const text = (value) => ({ content: [{ type: "text", text: value }] });
  server.registerTool("book_table", { description: "Asks when, then books." }, async () => {
    const answer = await server.server.elicitInput({ message: "When, and for how many?", requestedSchema: BOOKING });
    if (answer.action !== "accept") return text(`not booked (${answer.action})`);
    return text(`booked ${answer.content.guests} at ${answer.content.time}`);
  });
  server.registerTool("full_name", { description: "Two questions in a row." }, async () => {
    const first = await server.server.elicitInput({ message: "First name?", requestedSchema: NAME });
    if (first.action !== "accept") return text(`stopped at the first name (${first.action})`);
    const last = await server.server.elicitInput({ message: `Last name of ${first.content.name}?`, requestedSchema: NAME });
    if (last.action !== "accept") return text(`stopped at the last name (${last.action})`);
    return text(`Hello, ${first.content.name} ${last.content.name}!`);
  });
  server.registerTool("connect_account", { description: "A URL-mode question." }, async () => {
    const answer = await server.server.elicitInput({
      mode: "url",
      message: "Connect your account",
      url: "https://accounts.example.com/connect?flow=1",
      elicitationId: randomUUID(),
    });
    return text(`url answer: ${answer.action}`);
  });
  return server;
}

if (process.argv[2] === "stdio") {
  await build().connect(new StdioServerTransport());
} else {
  const port = Number(process.argv[2]);
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const parsed = body ? JSON.parse(body) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (req.method !== "POST" || parsed?.method !== "initialize") {
        res.writeHead(id ? 404 : 400, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: id ? "Session not found" : "Bad Request: no session" } }));
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, parsed);
  });
  http.listen(port, "127.0.0.1");
}
