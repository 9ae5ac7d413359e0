// The official TypeScript SDK v1 (@modelcontextprotocol/sdk, pinned in scripts/node.sh) as a
// 2025-11-25 client of the server under test: initialize, then each question of a tool is a real
// elicitation/create request, answered here from a script. Test-only.
//
//   node ts_v1_client.mjs '<plan as JSON>'
//
// The plan: {"server": {"command": [...], "env": {...}} or {"url": "http://127.0.0.1:PORT/mcp"},
// "capabilities": {...}, "logLevel": "info" (optional), "answers": {message: ElicitResult, ...}
// (the answer to the question with that message; a list of answers under one message is used in
// turn), "calls": [{"name": ..., "arguments": {...}}, ...]}.
// Prints one JSON object: what the SDK learned at connect, every message each way, what it was
// asked, the logs and completion notices it got, and each call's result (or its error).
//
// TS_SDK_V1_MODULES names the node_modules folder that holds the SDK (scripts/node.sh exports it).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { scriptedAnswer, tapped } from "./driver_support.mjs";

const modules = process.env.TS_SDK_V1_MODULES;
if (!modules) {
  console.error("TS_SDK_V1_MODULES is not set (source scripts/node.sh)");
  process.exit(2);
}
const sdk = (path) => import(pathToFileURL(join(modules, "@modelcontextprotocol/sdk/dist/esm", path)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const types = await sdk("types.js");

const plan = JSON.parse(process.argv[2]);
const report = { wire: [], asked: [], logs: [], completed: [], results: [] };

function transportFor(server) {
  if (server.url) return new StreamableHTTPClientTransport(new URL(server.url));
  const [command, ...args] = server.command;
  return new StdioClientTransport({ command, args, env: { ...process.env, ...(server.env ?? {}) }, stderr: "inherit" });
}

const client = new Client({ name: "ts-v1-interop", version: "1.32.2" }, { capabilities: plan.capabilities });
client.setRequestHandler(types.ElicitRequestSchema, async (request) => {
  report.asked.push(request.params);
  return scriptedAnswer(plan.answers, request.params);
});
client.setNotificationHandler(types.LoggingMessageNotificationSchema, (notification) => {
  report.logs.push(notification.params);
});
client.setNotificationHandler(types.ElicitationCompleteNotificationSchema, (notification) => {
  report.completed.push(notification.params.elicitationId);
});

const transport = tapped(transportFor(plan.server), report.wire);
try {
  await client.connect(transport);
  report.serverInfo = client.getServerVersion();
  report.instructions = client.getInstructions() ?? null;
  report.capabilities = client.getServerCapabilities();
  report.sessionId = transport.sessionId ?? null;
  report.tools = (await client.listTools()).tools.map((tool) => tool.name);
  if (plan.logLevel) await client.setLoggingLevel(plan.logLevel);
  for (const call of plan.calls) {
    try {
      report.results.push({ result: await client.callTool(call, undefined, { timeout: 20000 }) });
    } catch (error) {
      report.results.push({ error: { code: error.code ?? null, message: String(error.message ?? error) } });
    }
  }
  if (transport.terminateSession) await transport.terminateSession();
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(report) + "\n");
