// What the serve benchmark's client does, shared by its drivers: the TypeScript SDK 1.x
// client (@modelcontextprotocol/sdk from tests/node_modules, as a host runs it) over stdio
// or Streamable HTTP, calling render_turntable; percentiles; a process's CPU and memory.
import { readFileSync, readdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const kCall = {
  name: 'render_turntable',
  arguments: { source: 'https://assets.example.test/a.blend', angles: 2, resolution: 1024 },
};

export async function loadSdk(sdkDir) {
  const load = (path) => import(pathToFileURL(`${sdkDir}/dist/esm/${path}`).href);
  const { Client } = await load('client/index.js');
  const { StdioClientTransport } = await load('client/stdio.js');
  const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
  return { Client, StdioClientTransport, StreamableHTTPClientTransport };
}

const newClient = (sdk) => new sdk.Client({ name: 'sdk-serve-bench', version: '1.0.0' }, { capabilities: {} });

// A client on a process it spawns over stdio, its tools listed (the SDK validates
// structuredContent against the listed outputSchema, as a host's client does).
export async function connectStdio(sdk, command, args) {
  const client = newClient(sdk);
  await client.connect(new sdk.StdioClientTransport({ command, args, stderr: 'ignore' }));
  await client.listTools();
  return { client, close: () => client.close() };
}

// A session over Streamable HTTP. The SDK opens the session's GET stream after
// initialization; `onStream` is called when one is answered with 200.
export async function connectHttp(sdk, url, { token, onStream } = {}) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const countingFetch = async (target, init) => {
    const response = await fetch(target, init);
    if ((init?.method ?? 'GET') === 'GET' && response.status === 200) onStream?.();
    return response;
  };
  const client = newClient(sdk);
  const transport = new sdk.StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    fetch: countingFetch,
  });
  await client.connect(transport);
  await client.listTools();
  const close = async () => {
    await transport.terminateSession().catch(() => {});
    await client.close();
  };
  return { client, close };
}

// One tools/call; true when it returned a result that is not an error.
export async function callOnce(client, timeoutMs) {
  try {
    const result = await client.callTool(kCall, undefined, { timeout: timeoutMs });
    return !result.isError;
  } catch {
    return false;
  }
}

// `n` sequential calls on one client: sorted milliseconds and the failures.
export async function sequentialCalls(client, n) {
  const samples = [];
  let failed = 0;
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    if (!(await callOnce(client, 10000))) failed++;
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { samples, failed };
}

export const percentile = (sorted, p) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

// utime + stime of one process (not its children), in milliseconds.
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;  // USER_HZ is 100 on Linux
}

const statusKiB = (pid, key) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${key}:`));
  return line ? Number(line.split(/\s+/)[1]) : NaN;
};

export const rssKiB = (pid) => statusKiB(pid, 'VmRSS');
export const peakRssKiB = (pid) => statusKiB(pid, 'VmHWM');

// The process ids below `pid` (its children, theirs, ...).
export function descendants(pid) {
  const parent = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const next = [];
    for (const [child, ppid] of parent) if (frontier.includes(ppid)) next.push(child);
    found.push(...next);
    frontier = next;
  }
  return found;
}
