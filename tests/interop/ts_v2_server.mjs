// The official TypeScript SDK v2 (@modelcontextprotocol/server, pinned in scripts/node.sh) as a
// server of both eras, from one definition. Test-only.
//
//   node ts_v2_server.mjs stdio
//   node ts_v2_server.mjs PORT      (Streamable HTTP on 127.0.0.1:PORT/mcp)
//
// Its tools ask the way the SDK documents for 2026-07-28 (docs/servers/input-required.md): a
// handler returns inputRequired({inputRequests, requestState}) and reads the answers on re-entry
// (inputResponse / acceptedContent); what it must remember between rounds goes in a requestState
// sealed with the SDK's createRequestStateCodec. The same handlers serve 2025-11-25 sessions:
// the SDK's legacy shim turns each embedded request into a real elicitation/create and re-enters
// the handler with the answers.
//
// stdio: serveStdio(factory), which pins each connection to the era of its first message.
// HTTP: the SDK's documented composition for a dual-era endpoint (docs/serving/legacy-clients.md):
// isLegacyRequest routes 2025-11-25 traffic to a sessionful WebStandardStreamableHTTPServerTransport
// (a session per initialize, so the shim has a back channel), everything else to the strict
// modern createMcpHandler(factory, {legacy: "reject"}). The SDK's own Node adapter is another npm
// package (@modelcontextprotocol/node), so the few lines that turn node:http into web
// Request/Response are here.
//
// TS_SDK_V2_MODULES names the node_modules folder that holds the SDK (scripts/node.sh exports it).
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.TS_SDK_V2_MODULES;
if (!modules) {
  console.error("TS_SDK_V2_MODULES is not set (source scripts/node.sh)");
  process.exit(2);
}
const load = (path) => import(pathToFileURL(join(modules, path)).href);
const sdk = await load("@modelcontextprotocol/server/dist/index.mjs");
const { serveStdio } = await load("@modelcontextprotocol/server/dist/stdio.mjs");
const { z } = await load("zod/index.js");
const { McpServer, inputRequired, inputResponse, acceptedContent, createRequestStateCodec } = sdk;

const BOOKING = z.object({
  guests: z.number().int().min(1).max(12).default(2),
  time: z.enum(["18:00", "19:30", "21:00"]),
});
const NAME = z.object({ name: z.string() });
// One key for the process: on HTTP every request has a fresh server instance from the factory.
const state = createRequestStateCodec({ key: "ts-v2-interop-request-state-key-0123456789", ttlSeconds: 600 });

const text = (value) => ({ content: [{ type: "text", text: value }] });

function build(era) {
  const server = new McpServer(
    { name: "ts-v2-interop", version: "2.4.0-tests" },
    { instructions: "TypeScript SDK v2 fixtures.", requestState: { verify: state.verify } },
  );

  server.registerTool("book_table", { description: "Asks when, and for how many; then books." }, async (ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, "booking");
    if (answer.kind === "elicit" && answer.action !== "accept") return text(`not booked (${answer.action})`);
    const booking = acceptedContent(ctx.mcpReq.inputResponses, "booking", BOOKING);
    if (booking === undefined) {
      return inputRequired({
        inputRequests: { booking: inputRequired.elicit({ message: "When, and for how many?", requestedSchema: BOOKING }) },
      });
    }
    return text(`booked ${booking.guests} at ${booking.time}; received ${JSON.stringify(answer.content)}`);
  });

  // Two questions in turn: the second names the first answer, which requestState carries.
  server.registerTool("full_name", { description: "Asks the first name, then the last name." }, async (ctx) => {
    const first = ctx.mcpReq.requestState()?.first;
    const key = first === undefined ? "first" : "last";
    const answer = inputResponse(ctx.mcpReq.inputResponses, key);
    if (answer.kind === "elicit" && answer.action !== "accept") return text(`stopped at the ${key} name (${answer.action})`);
    const named = acceptedContent(ctx.mcpReq.inputResponses, key, NAME);
    if (first === undefined && named === undefined) {
      return inputRequired({
        inputRequests: { first: inputRequired.elicit({ message: "First name?", requestedSchema: NAME }) },
      });
    }
    if (first === undefined || named === undefined) {
      const known = first ?? named.name;
      return inputRequired({
        inputRequests: { last: inputRequired.elicit({ message: `Last name of ${known}?`, requestedSchema: NAME }) },
        requestState: await state.mint({ first: known }),
      });
    }
    return text(`Hello, ${first} ${named.name}!`);
  });

  server.registerTool("connect_account", { description: "A URL-mode question." }, async (ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, "account");
    if (answer.kind === "elicit") return text(`url answer: ${answer.action}`);
    return inputRequired({
      inputRequests: {
        account: inputRequired.elicitUrl({ message: "Connect your account", url: "https://accounts.example.com/connect?flow=1" }),
      },
    });
  });

  server.registerTool(
    "echo",
    { description: "Asks nothing.", inputSchema: z.object({ text: z.string() }) },
    async ({ text: said }) => text(`echo: ${said}`),
  );

  // What this server instance sees of the request: the era it serves and the client's declared
  // capabilities (per request at 2026-07-28, from initialize at 2025-11-25).
  server.registerTool("whoami", { description: "The era and the client's capabilities, as JSON." }, async (ctx) => {
    const capabilities =
      era === "modern" ? ctx.mcpReq.envelope?.["io.modelcontextprotocol/clientCapabilities"] : server.server.getClientCapabilities();
    return text(JSON.stringify({ era, capabilities: capabilities ?? null }));
  });
  return server;
}

const factory = (context) => build(context.era);

if (process.argv[2] === "stdio") {
  serveStdio(factory);
} else {
  const port = Number(process.argv[2]);
  const modern = sdk.createMcpHandler(factory, { legacy: "reject" });
  const sessions = new Map();

  const legacy = async (request) => {
    const id = request.headers.get("mcp-session-id");
    if (id) {
      const transport = sessions.get(id);
      if (transport) return transport.handleRequest(request);
      return Response.json({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }, { status: 404 });
    }
    const body = request.method === "POST" ? await request.clone().json().catch(() => undefined) : undefined;
    if (!sdk.isInitializeRequest(body)) {
      return Response.json({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad Request: no session" } }, { status: 400 });
    }
    const transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
      onsessionclosed: (sid) => sessions.delete(sid),
    });
    await build("legacy").connect(transport);
    return transport.handleRequest(request);
  };

  const serve = async (request) => {
    const refused =
      sdk.hostHeaderValidationResponse(request, sdk.localhostAllowedHostnames()) ??
      sdk.originValidationResponse(request, sdk.localhostAllowedOrigins());
    if (refused) return refused;
    if (request.method !== "POST" || (await sdk.isLegacyRequest(request))) return legacy(request);
    return modern.fetch(request);
  };

  // node:http <-> web Request/Response, streaming the response body (SSE included).
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const aborted = new AbortController();
    res.on("close", () => aborted.abort());
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([name, value]) => [value].flat().map((v) => [name, v])),
      body: chunks.length ? Buffer.concat(chunks) : undefined,
      signal: aborted.signal,
    });
    try {
      const response = await serve(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.flushHeaders(); // an SSE stream (the 2025-11-25 GET stream) may write nothing for a while
      if (response.body) {
        const reader = response.body.getReader();
        res.on("close", () => reader.cancel().catch(() => {}));
        for (let part = await reader.read(); !part.done; part = await reader.read()) {
          if (!res.destroyed) res.write(part.value);
        }
      }
      res.end();
    } catch (error) {
      if (res.destroyed) return; // the client went away (a stream it closed): nothing to answer
      console.error(error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  http.listen(port, "127.0.0.1");
}
