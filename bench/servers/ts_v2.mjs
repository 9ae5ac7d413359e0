// Benchmark server: the official TypeScript MCP SDK v2 (@modelcontextprotocol/server 2.4.0, pinned
// in scripts/node.sh), same tool as ours.py and sdk.py.
//
// `create_ticket(title)` asks one form question (a required boolean `ok`) the way the SDK
// documents for 2026-07-28 (docs/servers/input-required.md, "Return input_required instead of
// pushing a request"): the handler reads the retry's `inputResponses` with `acceptedContent`
// (validated with the same zod schema) and, while the answer is missing, returns
// `inputRequired({ inputRequests: { confirm: inputRequired.elicit(...) } })`. It returns
// "Created <title>" when the answer is accepted with ok true, else "Not created".
//
// No requestState. A single-question handler needs none: the documented write-once pattern
// re-derives its position from `inputResponses` on every entry, and `requestState` (sealed with
// `createRequestStateCodec`, an HMAC) is what the SDK documents for rounds that must run in
// sequence. So the first answer carries no `requestState` and the retry sends none back (the
// load client follows the spec: no state in the result, none in the retry). ours.py and sdk.py
// both seal a state binding the answer to the call; this server does less work per flow.
//
// Usage:  node bench/servers/ts_v2.mjs PORT     (HTTP at http://127.0.0.1:PORT/mcp, loopback only)
//         node bench/servers/ts_v2.mjs stdio    (newline-delimited JSON-RPC on stdin/stdout)
//
// HTTP: the most performant configuration the SDK documents for a stateless 2026-07-28 server,
// `createMcpHandler(factory, { responseMode: 'json', legacy: 'reject' })`:
//   - `responseMode: 'json'`: never stream, one JSON body per request (the SDK's 'auto' default
//     answers this tool with a JSON body too, since it emits nothing before its result; with
//     `legacy: 'reject'` this did 1.38x the flows of the defaults in one run, bench/README.md);
//   - `legacy: 'reject'`: a modern-only strict endpoint, with no 2025-era stateless fallback
//     (the bench sends it only 2026-07-28 requests: a stateless 2025 fallback has no way to ask
//     a question mid-call, so this server is not in the 2025-11-25 HTTP part);
//   - the factory builds a fresh `McpServer` per request, as the SDK requires (an instance
//     connects to one transport; docs/serving/http.md "Understand the per-request factory");
//     the zod schemas, which are immutable, are built once outside it.
// It is mounted on plain `node:http` (127.0.0.1 only, path /mcp) through the same conversion
// `toNodeHandler` of `@modelcontextprotocol/node` performs (Node request -> web `Request` with a
// text body and an abort signal wired to the socket's close -> `handler.fetch` -> headers and
// body streamed back, so chunked). That package is not installed by scripts/node.sh, so the
// same steps are done below (as packages/middleware/node/src/toNodeHandler.ts in the SDK's
// repository does them), minus its `req.auth` / parsed-body pass-through, unused here. In front
// of it, the Host and Origin checks the SDK documents for a bare localhost endpoint
// (`hostHeaderValidationResponse` / `originValidationResponse` with the localhost allowlists).
//
// stdio: `serveStdio(factory)` from `@modelcontextprotocol/server/stdio`, the documented stdio
// entry: the opening request pins one instance for the connection. A 2026-07-28 opening (every
// request carries the `_meta` envelope) is served as above; an `initialize` opening (the
// 2025-11-25 stdio part) is served by the SDK's legacy shim, on by default, which sends the
// handler's `inputRequired` as a real `elicitation/create` and re-enters it with the answer.
//
// TS_SDK_V2_MODULES names the node_modules folder that holds the SDK (scripts/node.sh exports it;
// bench/run.py sets it).
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.TS_SDK_V2_MODULES;
if (!modules) {
  console.error("TS_SDK_V2_MODULES is not set (source scripts/node.sh)");
  process.exit(2);
}
const load = (path) => import(pathToFileURL(join(modules, path)).href);
const {
  McpServer,
  acceptedContent,
  createMcpHandler,
  hostHeaderValidationResponse,
  inputRequired,
  inputResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} = await load("@modelcontextprotocol/server/dist/index.mjs");
const { z } = await load("zod/v4/index.js");

const HOST = "127.0.0.1"; // loopback only, always
const TitleArgs = z.object({ title: z.string() });
const Confirm = z.object({ ok: z.boolean() });

function build() {
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  server.registerTool(
    "create_ticket",
    { description: "Create a ticket once the user confirms", inputSchema: TitleArgs },
    async ({ title }, ctx) => {
      const responses = ctx.mcpReq.inputResponses;
      if (inputResponse(responses, "confirm").kind === "missing") {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({ message: `Create ticket '${title}'?`, requestedSchema: Confirm }),
          },
        });
      }
      const answer = acceptedContent(responses, "confirm", Confirm);
      const text = answer?.ok === true ? `Created ${title}` : "Not created";
      return { content: [{ type: "text", text }] };
    },
  );
  return server;
}

async function serveStdioMode() {
  const { serveStdio } = await load("@modelcontextprotocol/server/dist/stdio.mjs");
  serveStdio(build, { onerror: (error) => console.error(`ts_v2 stdio: ${error.message}`) });
}

// ------------------------------------------------------------------ HTTP (node:http)

// The Node request as a web-standard Request, as toNodeHandler's toWebRequest builds it.
async function toWebRequest(req, signal) {
  const method = (req.method ?? "GET").toUpperCase();
  const host = req.headers.host ?? "localhost";
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(":")) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  let body;
  if (method !== "GET" && method !== "HEAD") {
    const decoder = new TextDecoder();
    let collected = "";
    for await (const chunk of req) {
      collected += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    }
    collected += decoder.decode();
    if (collected.length > 0) body = collected;
  }
  return new Request(`http://${host}${req.url ?? "/"}`, { method, headers, signal, ...(body !== undefined && { body }) });
}

// The web Response written back to the Node response, as toNodeHandler writes it; `exchange`
// is marked finished before the end goes out, so the end's own 'close' aborts nothing.
async function writeResponse(res, response, abort, exchange) {
  const headers = {};
  for (const [name, value] of response.headers) headers[name] = value;
  res.writeHead(response.status, headers);
  if (response.body === null) {
    exchange.finished = true;
    res.end();
    return;
  }
  let drained;
  res.on("drain", () => {
    drained?.();
    drained = undefined;
  });
  const closed = new Promise((resolve) => abort.signal.addEventListener("abort", () => resolve(), { once: true }));
  try {
    for await (const chunk of response.body) {
      if (abort.signal.aborted) break;
      if (res.write(chunk) === false) {
        await Promise.race([new Promise((resolve) => (drained = resolve)), closed]);
      }
    }
  } catch {
    // the stream was aborted upstream; the abort signal already cancelled the exchange
  }
  exchange.finished = true;
  res.end();
}

function serveHttp(port) {
  const handler = createMcpHandler(build, {
    responseMode: "json",
    legacy: "reject",
    onerror: (error) => console.error(`ts_v2 http: ${error.message}`),
  });
  const hosts = localhostAllowedHostnames();
  const origins = localhostAllowedOrigins();
  const server = createServer(async (req, res) => {
    if (req.url !== "/mcp" && !req.url?.startsWith("/mcp?")) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("Not Found");
      return;
    }
    const exchange = { finished: false };
    const abort = new AbortController();
    res.on("close", () => {
      if (!exchange.finished) abort.abort();
    });
    let response;
    try {
      const request = await toWebRequest(req, abort.signal);
      response =
        hostHeaderValidationResponse(request, hosts) ??
        originValidationResponse(request, origins) ??
        (await handler.fetch(request));
    } catch (error) {
      console.error(`ts_v2 http adapter: ${error?.message ?? error}`);
      response = Response.json(
        { jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id: null },
        { status: 500 },
      );
    }
    await writeResponse(res, response, abort, exchange);
  });
  server.listen(port, HOST);
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === undefined || rest.length > 0 || (mode !== "stdio" && !/^\d+$/.test(mode))) {
  console.error("usage: ts_v2.mjs PORT|stdio");
  process.exit(2);
}
if (mode === "stdio") await serveStdioMode();
else serveHttp(Number(mode));
