// Interoperability peer: the official TypeScript SDK client against our demo server.
// Usage: node sdk_client.mjs stdio SERVER [ARGS...]   |   node sdk_client.mjs http URL
// Lists every page, calls a few tools and prints one JSON report on stdout.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, target, ...rest] = process.argv.slice(2);
const transport = mode === 'stdio'
  ? new StdioClientTransport({ command: target, args: rest, stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: 'udon-interop', version: '1.0.0' });
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged += 1; });
await client.connect(transport);

const pages = [];
let cursor;
do {
  const page = await client.listTools(cursor === undefined ? {} : { cursor });
  pages.push(page.tools.map((tool) => tool.name));
  cursor = page.nextCursor;
} while (cursor !== undefined);

async function attempt(call) {
  try {
    return { ok: await call() };
  } catch (error) {
    return { error: { code: error.code ?? null, message: String(error.message ?? error) } };
  }
}

const progress = [];
const calls = {
  render_turntable: await attempt(() => client.callTool({
    name: 'render_turntable',
    arguments: { source: 'file:///assets/teapot.blend', angles: 3, resolution: 2048 },
  })),
  analyze_text: await attempt(() => client.callTool({
    name: 'analyze_text', arguments: { text: 'Hello world. Bye.' },
  })),
  convert_units: await attempt(() => client.callTool({
    name: 'convert_units', arguments: { value: 2, from: 'kg', to: 'g' },
  })),
  slow_count: await attempt(() => client.callTool(
    { name: 'slow_count', arguments: { count: 3, delayMs: 10 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  )),
};
const ping = await attempt(() => client.ping());

const report = {
  serverVersion: client.getServerVersion(),
  protocolVersion: transport.protocolVersion ?? null,
  sessionId: transport.sessionId ?? null,
  pages,
  calls,
  progress,
  ping: ping.ok !== undefined,
  listChanged,
};
await client.close();
process.stdout.write(JSON.stringify(report) + '\n');
