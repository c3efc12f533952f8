// Many sessions of the official TypeScript SDK client at once (issue #31: at 64 of them
// serve stopped answering new sessions, each session's GET stream holding a thread).
// Usage: node sdk_sessions.mjs URL COUNT
// Connects COUNT sessions and waits until the GET stream each opens after initialization
// has been answered; then one more session lists the tools and calls convert_units, and so
// does each of the COUNT sessions. Prints one JSON report on stdout.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [target, countText] = process.argv.slice(2);
const count = Number(countText);
const convert = { name: 'convert_units', arguments: { value: 2, from: 'kg', to: 'g' } };

// GET streams answered with 200, counted as their responses begin.
let streams = 0;
let allStreaming;
const streaming = new Promise((resolve) => { allStreaming = resolve; });
const countingFetch = async (url, init) => {
  const response = await fetch(url, init);
  if ((init?.method ?? 'GET') === 'GET' && response.status === 200 && ++streams === count) allStreaming();
  return response;
};

async function attempt(call) {
  try {
    return { ok: await call() };
  } catch (error) {
    return { error: String(error.message ?? error) };
  }
}

async function connect() {
  const client = new Client({ name: 'udon-sessions', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(target), { fetch: countingFetch }));
  return client;
}

const clients = [];
const report = { sessions: 0, streams: 0, callsOk: 0 };
for (let i = 0; i < count && report.failure === undefined; i += 1) {
  const connected = await attempt(connect);
  if (connected.ok) clients.push(connected.ok);
  else report.failure = `session ${i}: ${connected.error}`;
}
report.sessions = clients.length;
if (report.failure === undefined) {
  await streaming;
  report.streams = streams;
  report.newcomer = await attempt(async () => {
    const client = await connect();
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    const call = await client.callTool(convert);
    await client.close();
    return { tools, value: call.structuredContent?.value ?? null };
  });
  for (const client of clients) {
    const call = await attempt(() => client.callTool(convert));
    if (call.ok?.structuredContent?.value === 2000) report.callsOk += 1;
  }
}
await Promise.all(clients.map((client) => client.close()));
process.stdout.write(JSON.stringify(report) + '\n');
process.exit(0);
