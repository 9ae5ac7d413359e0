// The official TypeScript SDK v2 (@modelcontextprotocol/client, pinned in scripts/node.sh) as a
// client of the server under test, in either era. Test-only.
//
//   node ts_v2_client.mjs '<plan as JSON>'
//
// The plan: {"server": {"command": [...], "env": {...}} or {"url": "http://127.0.0.1:PORT/mcp"},
// "era": "legacy" (the SDK's default: initialize, 2025-11-25) or "auto" (versionNegotiation
// mode 'auto': server/discover, then 2026-07-28 with every request carrying its _meta),
// "capabilities": {...}, "answers": {message: ElicitResult, ...} (the answer to the question
// with that message; a list under one message is used in turn), "calls": [{"name": ...,
// "arguments": {...}} (a tool), {"prompt": ..., "arguments": {...}} or {"resource": uri}, ...]}.
// Prints one JSON object: what the SDK learned at connect, every message each way on the
// connection (and, over HTTP, every HTTP exchange: method, the MCP headers, status), what it
// was asked, what it reported through onerror, and each call's result (or its error).
//
// On stdio the SDK's 'auto' mode probes with server/discover in a short-lived sibling process
// of its own (then starts the session's process once the era is known), so the probe is not on
// the recorded connection; over HTTP it is.
//
// TS_SDK_V2_MODULES names the node_modules folder that holds the SDK (scripts/node.sh exports it).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { scriptedAnswer, tapped } from "./driver_support.mjs";

const modules = process.env.TS_SDK_V2_MODULES;
if (!modules) {
  console.error("TS_SDK_V2_MODULES is not set (source scripts/node.sh)");
  process.exit(2);
}
const pkg = (path) => import(pathToFileURL(join(modules, "@modelcontextprotocol/client/dist", path)).href);
const { Client, StreamableHTTPClientTransport } = await pkg("index.mjs");
const { StdioClientTransport } = await pkg("stdio.mjs");

const plan = JSON.parse(process.argv[2]);
const report = { wire: [], http: [], asked: [], errors: [], results: [] };

// Every HTTP exchange: the verb, the headers that carry MCP, and the status.
async function recordingFetch(url, init) {
  const headers = new Headers(init?.headers);
  const response = await fetch(url, init);
  report.http.push({
    method: init?.method ?? "GET",
    protocolVersion: headers.get("mcp-protocol-version"),
    mcpMethod: headers.get("mcp-method"),
    mcpName: headers.get("mcp-name"),
    sessionId: headers.get("mcp-session-id"),
    status: response.status,
    contentType: response.headers.get("content-type"),
  });
  return response;
}

function transportFor(server) {
  if (server.url) return new StreamableHTTPClientTransport(new URL(server.url), { fetch: recordingFetch });
  const [command, ...args] = server.command;
  return new StdioClientTransport({ command, args, env: { ...process.env, ...(server.env ?? {}) }, stderr: "inherit" });
}

const options = { capabilities: plan.capabilities };
if (plan.era === "auto") options.versionNegotiation = { mode: "auto" };
const client = new Client({ name: "ts-v2-interop", version: "2.4.0" }, options);
// What the SDK finds wrong in what it receives (an unknown id, a message its era has no place for).
client.onerror = (error) => report.errors.push(String(error?.message ?? error));
if (plan.capabilities.elicitation) {
  // The same handler answers a 2025-11-25 elicitation/create request and, at 2026-07-28, each
  // elicitation/create embedded in an input_required result (the SDK's auto-fulfilment).
  client.setRequestHandler("elicitation/create", async (request) => {
    report.asked.push(request.params);
    return scriptedAnswer(plan.answers, request.params);
  });
}

const transport = tapped(transportFor(plan.server), report.wire);
try {
  await client.connect(transport);
  report.era = client.getProtocolEra() ?? null;
  report.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  report.serverInfo = client.getServerVersion() ?? null;
  report.instructions = client.getInstructions() ?? null;
  report.capabilities = client.getServerCapabilities() ?? null;
  report.discover = client.getDiscoverResult() ?? null;
  report.sessionId = transport.sessionId ?? null;
  report.tools = (await client.listTools()).tools.map((tool) => tool.name);
  for (const call of plan.calls) {
    try {
      const options = { timeout: 20000 };
      let result;
      if (call.prompt) result = await client.getPrompt({ name: call.prompt, arguments: call.arguments ?? {} }, options);
      else if (call.resource) result = await client.readResource({ uri: call.resource }, options);
      else result = await client.callTool(call, options);
      report.results.push({ result });
    } catch (error) {
      report.results.push({
        error: { name: error.name ?? null, code: error.code ?? null, message: String(error.message ?? error), data: error.data ?? null },
      });
    }
  }
  if (transport.terminateSession && report.era === "legacy") await transport.terminateSession();
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(report) + "\n");
