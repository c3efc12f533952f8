// The anchor for serve_bench: a host's TypeScript SDK client (@modelcontextprotocol/sdk, from
// tests/node_modules) calling render_turntable N times on one stdio connection, to the
// command given (the demo server directly, or udon-mcp serve in front of it). Prints the
// median milliseconds per call as one JSON line.
//
//   node sdk_calls.mjs SDK_DIR LABEL N COMMAND [ARGS...]
import { pathToFileURL } from 'node:url';

const [sdkDir, label, countText, command, ...args] = process.argv.slice(2);
const n = Number(countText);
const load = (path) => import(pathToFileURL(`${sdkDir}/dist/esm/${path}`).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');

const client = new Client({ name: 'sdk-serve-bench', version: '1.0.0' }, { capabilities: {} });
await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
await client.listTools();  // the SDK validates structuredContent against listed outputSchemas
const samples = [];
for (let i = 0; i < n; i++) {
  const start = performance.now();
  const result = await client.callTool({
    name: 'render_turntable',
    arguments: { source: 'https://assets.example.test/a.blend', angles: 2, resolution: 1024 },
  });
  samples.push(performance.now() - start);
  if (result.isError) throw new Error(`${label}: the call failed`);
}
await client.close();
samples.sort((a, b) => a - b);
console.log(JSON.stringify({ client: 'sdk', label, calls: n, median_ms: +samples[Math.floor(n / 2)].toFixed(3) }));
