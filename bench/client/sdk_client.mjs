// The anchor for client_bench: the same loops with the TypeScript SDK client
// (@modelcontextprotocol/sdk, from tests/node_modules).
//
//   node sdk_client.mjs SDK_DIR loop|fresh stdio N TOOL COMMAND ARGS...
//   node sdk_client.mjs SDK_DIR loop|fresh http N TOOL URL
//
// The loop reports this process's CPU time beside wall time: process.cpuUsage() (user +
// system of every thread of this process, GC and compiler included; never the server's,
// which is always another process).
//
// With SDK_OUTPUT_VALIDATION=off in the environment the client is given a validator that
// accepts everything, reported as client "sdk-novalidate": by default the SDK compiles an
// ajv validator for every tool's outputSchema on each tools/list (Client.cacheToolMetadata)
// and checks structuredContent against it, work udon's mcp::Client does not do (the gate
// validates, per call, with schemas cached by the reviewed Tool's digest). Without it the
// SDK's cost is its protocol and transport work alone, the like-for-like anchor.
import { pathToFileURL } from 'node:url';

const [sdkDir, mode, transport, countText, tool, ...rest] = process.argv.slice(2);
const n = Number(countText);
const load = (path) => import(pathToFileURL(`${sdkDir}/dist/esm/${path}`).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');

function makeTransport() {
  if (transport === 'stdio') {
    return new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'ignore' });
  }
  return new StreamableHTTPClientTransport(new URL(rest[0]));
}

const validate = process.env.SDK_OUTPUT_VALIDATION !== 'off';
const clientName = validate ? 'sdk' : 'sdk-novalidate';
const acceptAll = { getValidator: () => (input) => ({ valid: true, data: input, errorMessage: undefined }) };

async function open() {
  const options = validate ? { capabilities: {} } : { capabilities: {}, jsonSchemaValidator: acceptAll };
  const client = new Client({ name: 'sdk-bench', version: '1.0.0' }, options);
  const t = makeTransport();
  await client.connect(t);
  return { client, t };
}

// The arguments of the i-th call of `tool`; client_bench builds the same.
function args(i) {
  if (tool === 'convert_units') return { value: i, from: 'm', to: 'cm' };
  return { a: i, b: 1 };
}

async function roundTrip(client, i) {
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const result = await client.callTool({ name: tool, arguments: args(i) });
  if (!Array.isArray(result.content)) throw new Error('tools/call failed');
}

async function close({ client, t }) {
  if (transport === 'http' && t.sessionId) await t.terminateSession();
  await client.close();
}

const start = performance.now();
if (mode === 'loop') {
  const connection = await open();
  const loopStart = performance.now();
  const cpuStart = process.cpuUsage();
  for (let i = 0; i < n; i++) await roundTrip(connection.client, i);
  const cpuUsed = process.cpuUsage(cpuStart);
  const seconds = (performance.now() - loopStart) / 1000;
  const cpuMs = (cpuUsed.user + cpuUsed.system) / 1000;
  await close(connection);
  console.log(JSON.stringify({
    client: clientName, transport, mode, tool, iterations: n, wall_ms: +(seconds * 1000).toFixed(1),
    cpu_ms: +cpuMs.toFixed(1), iterations_per_s: +(n / seconds).toFixed(1),
    requests_per_s: +((2 * n) / seconds).toFixed(1),
    wall_us_per_request: +((seconds * 1e6) / (2 * n)).toFixed(2),
    cpu_us_per_request: +((cpuMs * 1000) / (2 * n)).toFixed(2),
  }));
} else {
  for (let i = 0; i < n; i++) {
    const connection = await open();
    await roundTrip(connection.client, i);
    await close(connection);
  }
  const ms = performance.now() - start;
  console.log(JSON.stringify({
    client: clientName, transport, mode, tool, iterations: n, wall_ms: +ms.toFixed(1),
    ms_per_connection: +(ms / n).toFixed(2),
  }));
}
