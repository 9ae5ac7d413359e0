// The tsv2 worker of bench/client/run.py: the official TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned in scripts/node.sh) driving whole 2026-07-28 elicitation
// flows, measured like the Python workers in run.py.
//
//   TS_SDK_V2_MODULES=<node_modules> node ts_v2_client.mjs '<target as JSON>' FLOWS WARMUP
//
// The target: a list (argv of a stdio server the SDK spawns itself) or an
// "http://127.0.0.1:PORT/mcp" URL. The client connects with versionNegotiation mode 'auto', so it
// speaks 2026-07-28; its elicitation/create handler answers each input_required round the SDK
// fulfils on its own ({"ok": true}), and each flow's final text is checked to be
// "Created <title>". After WARMUP unmeasured flows, FLOWS sequential flows are timed with
// process.cpuUsage() (user + system CPU of this process only; the server is another process).
// Prints one JSON line, as run.py's Python workers do: {"cpu_us": ..., "wall_us": ...} per flow,
// "flows" and the negotiated "protocol"; a failed flow exits non-zero with the reason on stderr.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.TS_SDK_V2_MODULES;
if (!modules) {
  console.error("TS_SDK_V2_MODULES is not set (run bash scripts/node.sh)");
  process.exit(2);
}
const pkg = (path) => import(pathToFileURL(join(modules, "@modelcontextprotocol/client/dist", path)).href);
const { Client, StreamableHTTPClientTransport } = await pkg("index.mjs");
const { StdioClientTransport } = await pkg("stdio.mjs");

const target = JSON.parse(process.argv[2]);
const flows = Number(process.argv[3]);
const warmup = Number(process.argv[4] ?? 0);
if (!(flows > 0) || !(warmup >= 0)) {
  console.error("usage: node ts_v2_client.mjs '<target as JSON>' FLOWS WARMUP");
  process.exit(2);
}

function transportFor(target) {
  if (typeof target === "string") return new StreamableHTTPClientTransport(new URL(target));
  const [command, ...args] = target;
  return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "ignore" });
}

const client = new Client(
  { name: "bench-ts-v2", version: "2.4.0" },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } },
);
// At 2026-07-28 the SDK answers each elicitation/create embedded in an input_required result
// through this handler, then retries the call with inputResponses and the echoed requestState.
client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { ok: true } }));

async function flow(i) {
  const result = await client.callTool({ name: "create_ticket", arguments: { title: `T-${i}` } });
  const text = result?.content?.[0]?.text;
  if (text !== `Created T-${i}`) throw new Error(`flow ${i}: unexpected result ${JSON.stringify(result)}`);
}

await client.connect(transportFor(target));
try {
  if (client.getProtocolEra?.() !== "modern") {
    throw new Error(`expected 2026-07-28, the SDK negotiated ${client.getNegotiatedProtocolVersion?.()}`);
  }
  for (let i = 0; i < warmup; i++) await flow(-1 - i);
  const cpu0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  for (let i = 0; i < flows; i++) await flow(i);
  const cpu = process.cpuUsage(cpu0); // microseconds since cpu0
  const wall = Number(process.hrtime.bigint() - wall0) / 1000;
  const protocol = client.getNegotiatedProtocolVersion();
  const report = { cpu_us: (cpu.user + cpu.system) / flows, wall_us: wall / flows, flows, protocol };
  process.stdout.write(JSON.stringify(report) + "\n");
} finally {
  await client.close();
}
