// Reads client_bench and sdk_client.mjs JSON lines on stdin; prints udon vs SDK side by side:
// the server-everything runs (tool get-sum), then the medians of the CPU runs against the
// demo server (tool convert_units).
import { readFileSync } from 'node:fs';

const rows = readFileSync(0, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
const everything = rows.filter((r) => r.tool !== 'convert_units');
const demo = rows.filter((r) => r.tool === 'convert_units');
const find = (client, transport, mode) =>
  everything.find((r) => r.client === client && r.transport === transport && r.mode === mode);
console.log('server-everything (wall clock)');
console.log('transport  measure                          udon        sdk   udon/sdk');
for (const transport of ['stdio', 'http']) {
  const u = find('udon', transport, 'loop');
  const s = find('sdk', transport, 'loop');
  if (u && s) {
    console.log(transport.padEnd(10), `round trips/s (list+call, ${u.iterations})`.padEnd(32),
      String(u.iterations_per_s).padStart(6), String(s.iterations_per_s).padStart(10),
      (u.iterations_per_s / s.iterations_per_s).toFixed(2).padStart(10));
    console.log(''.padEnd(10), 'requests/s'.padEnd(32), String(u.requests_per_s).padStart(6),
      String(s.requests_per_s).padStart(10),
      (u.requests_per_s / s.requests_per_s).toFixed(2).padStart(10));
  }
  const uf = find('udon', transport, 'fresh');
  const sf = find('sdk', transport, 'fresh');
  if (uf && sf) {
    console.log(transport.padEnd(10), `ms per fresh connection (${uf.iterations})`.padEnd(32),
      String(uf.ms_per_connection).padStart(6), String(sf.ms_per_connection).padStart(10),
      (sf.ms_per_connection / uf.ms_per_connection).toFixed(2).padStart(10));
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor(sorted.length / 2)];
}

if (demo.length > 0) {
  console.log('\ndemo server: client process CPU and wall per request (median of runs)');
  console.log('transport  client            runs  cpu us/req  wall us/req  cpu: client/udon');
  for (const transport of ['stdio', 'http']) {
    const of = (client) => demo.filter((r) => r.client === client && r.transport === transport);
    const udonCpu = median(of('udon').map((r) => r.cpu_us_per_request));
    for (const client of ['udon', 'sdk', 'sdk-novalidate']) {
      const runs = of(client);
      if (runs.length === 0) continue;
      const cpu = median(runs.map((r) => r.cpu_us_per_request));
      const wall = median(runs.map((r) => r.wall_us_per_request));
      console.log(transport.padEnd(10), client.padEnd(16), String(runs.length).padStart(5),
        cpu.toFixed(1).padStart(11), wall.toFixed(1).padStart(12), (cpu / udonCpu).toFixed(2).padStart(18));
    }
  }
}
