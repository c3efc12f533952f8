// The npm anchor: JSON.parse + canonicalize@5.1.0 + crypto SHA-256 over the same bytes,
// input already in memory. Prints one JSON line like canonical_bench.
// Usage: node canonicalize.mjs FILE
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

const path = process.argv[2];
const bytes = readFileSync(path);
const text = bytes.toString('utf8');

function digest() {
  return createHash('sha256').update(canonicalize(JSON.parse(text)), 'utf8').digest('hex');
}

// CPU time of the whole process (its GC and compiler threads included: that work is part of
// the pipeline's cost), wall time beside it, as canonical_bench does.
function cpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
const seconds = [];
const wallSeconds = [];
let result = '';
const start = process.hrtime.bigint();
while (seconds.length < 5 || Number(process.hrtime.bigint() - start) / 1e9 < 3) {
  const wallBefore = process.hrtime.bigint();
  const before = cpuSeconds();
  result = digest();
  seconds.push(cpuSeconds() - before);
  wallSeconds.push(Number(process.hrtime.bigint() - wallBefore) / 1e9);
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const cpu = median(seconds);
const megabytes = bytes.length / 1e6;
const peakBytes = process.resourceUsage().maxRSS * 1024;
console.log(JSON.stringify({
  pipeline: 'node JSON.parse+canonicalize',
  runs: seconds.length,
  best_cpu_ms: Number((Math.min(...seconds) * 1e3).toFixed(2)),
  cpu_ms: Number((cpu * 1e3).toFixed(2)),
  wall_ms: Number((median(wallSeconds) * 1e3).toFixed(2)),
  mb_per_s: Number((megabytes / cpu).toFixed(1)),
  best_mb_per_s: Number((megabytes / Math.min(...seconds)).toFixed(1)),
  input_mb: Number(megabytes.toFixed(2)),
  peak_rss_mb: Number((peakBytes / 1e6).toFixed(1)),
  peak_over_input: Number((peakBytes / bytes.length).toFixed(2)),
  sha256: result,
}));
