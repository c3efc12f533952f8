// Reads client_bench and sdk_client.mjs JSON lines on stdin; prints udon vs SDK side by side.
import { readFileSync } from 'node:fs';

const rows = readFileSync(0, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
const find = (client, transport, mode) =>
  rows.find((r) => r.client === client && r.transport === transport && r.mode === mode);
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
