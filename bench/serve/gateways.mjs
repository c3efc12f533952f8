// `udon-mcp serve` beside the ungated stdio->HTTP bridges people use (mcp-proxy and
// supergateway in stateful mode, pinned in bench/package.json), each fronting the same
// stdio demo server, driven by the same TypeScript SDK client program (sdk.mjs); and the
// two ratio rows: serve over stdio against the client spawning the demo server itself, and
// serve over HTTP in front of the demo server over HTTP against the client calling it.
//
//   node gateways.mjs SDK_DIR BENCH_DIR UDON DEMO DATA_DIR [STDIO_RELAY [HTTP_RELAY]]
// DATA_DIR/serve holds tools.json, pin and mcp.json from serve_bench. With STDIO_RELAY, the
// stdio row also times the client through that minimal relay (stdio_relay.cc) with one
// upstream exchange per call, with the gate's three, and with the gate's three on the
// threads the gate's rules keep: the floors under serve. With HTTP_RELAY, the http row also
// times the client through that relay (http_relay.cc: the gate's two exchanges). Environment:
//   BENCH_SERVE_CALLS    sequential calls per latency row (2000)
//   BENCH_SERVE_SECONDS  seconds of closed-loop calls per concurrency level (20)
//   BENCH_SERVE_LEVELS   concurrent sessions, space-separated ("1 8 64 256")
//   BENCH_SERVE_GATEWAYS which gateways ("serve mcp-proxy supergateway")
//   BENCH_SERVE_ROWS     which ratio rows ("stdio http")
//   BENCH_SERVE_JSON     a file to write every figure to as JSON (optional)
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import * as bench from './sdk.mjs';

const [sdkDir, benchDir, udon, demo, dataDir, relay, httpRelay] = process.argv.slice(2);
const env = process.env;
const seqCalls = Number(env.BENCH_SERVE_CALLS ?? 2000);
const seconds = Number(env.BENCH_SERVE_SECONDS ?? 20);
const levels = (env.BENCH_SERVE_LEVELS ?? '1 8 64 256').split(/\s+/).filter(Boolean).map(Number);
const gatewayNames = (env.BENCH_SERVE_GATEWAYS ?? 'serve mcp-proxy supergateway').split(/\s+/).filter(Boolean);
const rowNames = (env.BENCH_SERVE_ROWS ?? 'stdio http').split(/\s+/).filter(Boolean);
const dir = `${dataDir}/serve`;
const node = process.execPath;
const demoArgs = ['--synthetic-tools', '10'];
const callTimeoutMs = 10000;
const sdk = await bench.loadSdk(sdkDir);
const token = 'bench-serve-token-0123456789abcdef';
writeFileSync(`${dir}/token`, `${token}\n`, { mode: 0o600 });
const log = (text) => process.stderr.write(`${text}\n`);

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function portOpen(port) {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

// Starts a process; resolves with its child and URL once `ready` finds it (a regex on its
// stdout and stderr, or a port that accepts connections).
async function start(command, args, ready) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => { text += chunk; });
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (ready.pattern) {
      const match = text.match(ready.pattern);
      if (match) return { child, exited, url: match[1] };
    } else if (await portOpen(ready.port)) {
      return { child, exited, url: ready.url };
    }
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`${command} did not start: ${text.slice(0, 500)}`);
}

async function stop(started) {
  started.child.kill('SIGTERM');
  const killer = setTimeout(() => started.child.kill('SIGKILL'), 5000);
  await started.exited;
  clearTimeout(killer);
}

let stateDirs = 0;
const serveArgs = (config, transport) => [
  'serve', '--manifest', `${dir}/tools.json`, '--pin-file', `${dir}/pin`, '--config', config,
  '--state-dir', `${dir}/state-${transport}-${stateDirs++}`, '--transport', transport,
  ...(transport === 'http' ? ['--listen', '127.0.0.1:0', '--token-file', `${dir}/token`] : []),
];

const gateways = {
  serve: async () => start(udon, serveArgs(`${dir}/mcp.json`, 'http'), { pattern: /listening on (http:\S+)/ }),
  'mcp-proxy': async () => {
    const port = await freePort();
    const bin = `${benchDir}/node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs`;
    return start(node, [bin, '--host', '127.0.0.1', '--port', String(port), '--', demo, ...demoArgs],
      { port, url: `http://127.0.0.1:${port}/mcp` });
  },
  supergateway: async () => {
    const port = await freePort();
    const bin = `${benchDir}/node_modules/supergateway/dist/index.js`;
    return start(node, [bin, '--stdio', [demo, ...demoArgs].join(' '), '--outputTransport', 'streamableHttp',
      '--stateful', '--port', String(port), '--logLevel', 'none'], { port, url: `http://127.0.0.1:${port}/mcp` });
  },
};

const latency = ({ samples, failed }) => ({
  calls: samples.length, failed,
  p50: bench.percentile(samples, 50), p90: bench.percentile(samples, 90), p99: bench.percentile(samples, 99),
});

// Sequential calls on one session, after 50 warm-up calls; with the gateway's CPU per call.
async function sequential(url, pid) {
  const session = await bench.connectHttp(sdk, url, { token });
  await bench.sequentialCalls(session.client, 50);
  const cpu = bench.cpuMs(pid);
  const result = latency(await bench.sequentialCalls(session.client, seqCalls));
  result.cpuPerCall = (bench.cpuMs(pid) - cpu) / seqCalls;
  await session.close();
  return result;
}

// Opens `count` sessions, 8 at a time; the ones that did not start are counted.
async function openSessions(url, count) {
  let streams = 0;
  const sessions = [];
  let notStarted = 0;
  for (let i = 0; i < count; i += 8) {
    const batch = Array.from({ length: Math.min(8, count - i) }, () =>
      Promise.race([bench.connectHttp(sdk, url, { token, onStream: () => { streams++; } }),
        sleep(callTimeoutMs).then(() => { throw new Error('timeout'); })]));
    for (const outcome of await Promise.allSettled(batch)) {
      if (outcome.status === 'fulfilled') sessions.push(outcome.value);
      else notStarted++;
    }
  }
  for (let waited = 0; streams < sessions.length && waited < 5000; waited += 50) await sleep(50);
  return { sessions, notStarted, streams: () => streams };
}

// Closed loop: every session calls again as soon as its call returns, for `seconds`.
async function closedLoop(url, pid, count) {
  const { sessions, notStarted, streams } = await openSessions(url, count);
  const openStreams = streams();
  const samples = [];
  let failed = 0;
  let stopping = false;
  const cpu = bench.cpuMs(pid);
  const clientCpu = process.cpuUsage();
  const begin = performance.now();
  const loop = async ({ client }) => {
    while (!stopping) {
      const start = performance.now();
      if (await bench.callOnce(client, callTimeoutMs)) samples.push(performance.now() - start);
      else failed++;
    }
  };
  const timer = setTimeout(() => { stopping = true; }, seconds * 1000);
  await Promise.all(sessions.map(loop));
  clearTimeout(timer);
  const elapsed = (performance.now() - begin) / 1000;
  const gatewayCpu = bench.cpuMs(pid) - cpu;
  const { user, system } = process.cpuUsage(clientCpu);
  await Promise.all(sessions.map((session) => session.close().catch(() => {})));
  samples.sort((a, b) => a - b);
  return {
    sessions: count, started: sessions.length, notStarted, streams: openStreams, ok: samples.length, failed,
    callsPerSecond: samples.length / elapsed, p50: bench.percentile(samples, 50), p99: bench.percentile(samples, 99),
    cpuPerCall: gatewayCpu / Math.max(1, samples.length), clientCpuPerCall: (user + system) / 1000 / Math.max(1, samples.length),
  };
}

async function measureGateway(name) {
  log(`-- ${name}`);
  const started = await gateways[name]();
  const pid = started.child.pid;
  await sleep(200);
  const result = { name, rssBeforeKiB: bench.rssKiB(pid) };
  try {
    result.sequential = await sequential(started.url, pid);
    log(`   sequential p50 ${result.sequential.p50.toFixed(3)} ms`);
    result.levels = [];
    for (const count of levels) {
      const level = await closedLoop(started.url, pid, count);
      log(`   ${count} sessions: ${level.callsPerSecond.toFixed(1)} calls/s, ${level.failed} failed, ` +
        `${level.notStarted} not started, ${level.streams} streams`);
      result.levels.push(level);
    }
    result.rssAfterKiB = bench.rssKiB(pid);
    result.peakRssKiB = bench.peakRssKiB(pid);
    result.children = bench.descendants(pid).length;
  } finally {
    await stop(started);
  }
  return result;
}

// Two rounds, alternating direct, through serve and through each of `more` (name: connect);
// the samples of both rounds pooled.
async function ratioRow(label, connectDirect, connectServe, more = {}) {
  const ways = [['direct', connectDirect], ['serve', connectServe], ...Object.entries(more)];
  const pooled = Object.fromEntries(ways.map(([key]) => [key, { samples: [], failed: 0 }]));
  for (let round = 0; round < 2; round++) {
    for (const [key, connect] of ways) {
      const session = await connect();
      await bench.sequentialCalls(session.client, 50);
      const { samples, failed } = await bench.sequentialCalls(session.client, Math.ceil(seqCalls / 2));
      await session.close();
      pooled[key].samples.push(...samples);
      pooled[key].failed += failed;
    }
  }
  for (const key of Object.keys(pooled)) pooled[key].samples.sort((a, b) => a - b);
  const row = { label, direct: latency(pooled.direct), serve: latency(pooled.serve) };
  row.ratio = row.serve.p50 / row.direct.p50;
  log(`-- ${label}: ${row.serve.p50.toFixed(3)} vs ${row.direct.p50.toFixed(3)} ms (${row.ratio.toFixed(2)}x)`);
  for (const key of Object.keys(more)) {
    row[key] = latency(pooled[key]);
    row[key].ratio = row[key].p50 / row.direct.p50;
    log(`   ${key}: ${row[key].p50.toFixed(3)} ms (${row[key].ratio.toFixed(2)}x direct)`);
  }
  return row;
}

// With the relay: the floor, one exchange per call (relay), the gate's three (relay3) and
// the gate's three handed between the threads serve's rules keep (relay3threads).
async function stdioRow() {
  const more = relay ? {
    relay: () => bench.connectStdio(sdk, relay, ['0', demo, ...demoArgs]),
    relay3: () => bench.connectStdio(sdk, relay, ['2', demo, ...demoArgs]),
    relay3threads: () => bench.connectStdio(sdk, relay, ['--threads', '2', demo, ...demoArgs]),
  } : {};
  return ratioRow('stdio', () => bench.connectStdio(sdk, demo, demoArgs),
    () => bench.connectStdio(sdk, udon, serveArgs(`${dir}/mcp.json`, 'stdio')), more);
}

// The median milliseconds of each gate step serve recorded in its evidence (a JSON Lines
// file, one record per call), over the calls that succeeded.
function stepMedians(evidenceFile) {
  const byStep = {};
  if (!existsSync(evidenceFile)) return byStep;
  for (const line of readFileSync(evidenceFile, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const record = JSON.parse(line);
    const steps = record.steps ?? record.record?.steps ?? [];
    if (!steps.every((step) => step.outcome === 'ok')) continue;
    for (const { step, ms } of steps) (byStep[step] ??= []).push(ms);
  }
  const medians = {};
  for (const [step, samples] of Object.entries(byStep)) {
    samples.sort((a, b) => a - b);
    medians[step] = bench.percentile(samples, 50);
  }
  return medians;
}

// Sequential tools/list on one client (what the gate's re-list costs a client that asks
// for it directly): sorted milliseconds.
async function sequentialLists(client, n) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await client.listTools();
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b);
}

// Serve over HTTP in front of the demo server over HTTP, against the client calling it;
// with serve's step times (from its evidence) and a direct tools/list, so the time serve
// adds beyond the two upstream exchanges the gate requires (re-list, call) can be read.
async function httpRow() {
  const upstream = await start(demo, ['--transport', 'http', '--host', '127.0.0.1', '--port', '0', ...demoArgs],
    { pattern: /"url":"([^"]+)"/ });
  const config = `${dir}/mcp-http.json`;
  writeFileSync(config, JSON.stringify({ mcpServers: { demo: { type: 'http', url: upstream.url } } }));
  const evidence = `${dir}/evidence-http-${stateDirs}.jsonl`;
  const gateway = await start(udon, [...serveArgs(config, 'http'), '--evidence', evidence],
    { pattern: /listening on (http:\S+)/ });
  const floor = httpRelay ? await start(httpRelay, [upstream.url], { pattern: /listening on (http:\S+)/ }) : null;
  try {
    const more = floor ? { relay2: () => bench.connectHttp(sdk, floor.url) } : {};
    const row = await ratioRow('http', () => bench.connectHttp(sdk, upstream.url),
      () => bench.connectHttp(sdk, gateway.url, { token }), more);
    const session = await bench.connectHttp(sdk, upstream.url);
    await sequentialLists(session.client, 50);
    row.directList = bench.percentile(await sequentialLists(session.client, Math.ceil(seqCalls / 2)), 50);
    await session.close();
    row.steps = stepMedians(evidence);
    const stepSum = Object.values(row.steps).reduce((a, b) => a + b, 0);
    row.outsideSteps = row.serve.p50 - stepSum;
    // Beyond what the client pays calling the upstream itself, and the gate's re-list.
    row.ownBeyondExchanges = row.serve.p50 - row.direct.p50 - (row.steps.list ?? NaN);
    log(`   serve's steps (p50 ms): ${Object.entries(row.steps).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')}; ` +
      `outside the steps ${row.outsideSteps.toFixed(3)}; direct tools/list ${row.directList.toFixed(3)}; ` +
      `serve's own time beyond re-list and call ${row.ownBeyondExchanges.toFixed(3)} ms`);
    return row;
  } finally {
    if (floor) await stop(floor);
    await stop(gateway);
    await stop(upstream);
  }
}

const rows = { stdio: stdioRow, http: httpRow };
const report = { seqCalls, seconds, levels, rows: [], gateways: [] };
for (const name of rowNames) report.rows.push(await rows[name]());
for (const name of gatewayNames) report.gateways.push(await measureGateway(name));
if (env.BENCH_SERVE_JSON) writeFileSync(env.BENCH_SERVE_JSON, JSON.stringify(report, null, 2));
process.stdout.write((await import('./summary.mjs')).summarize(report));
