// The anchor for client_bench: the same loops with the TypeScript SDK client
// (@modelcontextprotocol/sdk, from tests/node_modules).
//
//   node sdk_client.mjs SDK_DIR loop|fresh stdio N NODE ENTRY
//   node sdk_client.mjs SDK_DIR loop|fresh http N URL
import { pathToFileURL } from 'node:url';

const [sdkDir, mode, transport, countText, ...rest] = process.argv.slice(2);
const n = Number(countText);
const load = (path) => import(pathToFileURL(`${sdkDir}/dist/esm/${path}`).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');

function makeTransport() {
  if (transport === 'stdio') {
    return new StdioClientTransport({ command: rest[0], args: [rest[1], 'stdio'], stderr: 'ignore' });
  }
  return new StreamableHTTPClientTransport(new URL(rest[0]));
}

async function open() {
  const client = new Client({ name: 'sdk-bench', version: '1.0.0' }, { capabilities: {} });
  const t = makeTransport();
  await client.connect(t);
  return { client, t };
}

async function roundTrip(client, i) {
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const result = await client.callTool({ name: 'get-sum', arguments: { a: i, b: 1 } });
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
  for (let i = 0; i < n; i++) await roundTrip(connection.client, i);
  const seconds = (performance.now() - loopStart) / 1000;
  await close(connection);
  console.log(JSON.stringify({
    client: 'sdk', transport, mode, iterations: n, wall_ms: +(seconds * 1000).toFixed(1),
    iterations_per_s: +(n / seconds).toFixed(1), requests_per_s: +((2 * n) / seconds).toFixed(1),
  }));
} else {
  for (let i = 0; i < n; i++) {
    const connection = await open();
    await roundTrip(connection.client, i);
    await close(connection);
  }
  const ms = performance.now() - start;
  console.log(JSON.stringify({
    client: 'sdk', transport, mode, iterations: n, wall_ms: +ms.toFixed(1),
    ms_per_connection: +(ms / n).toFixed(2),
  }));
}
