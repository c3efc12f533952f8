// Reads the JSON lines of the canonical benchmark on stdin and prints a table: throughput
// (MB of input per CPU second, median run and best run), the ratios to the npm pipeline,
// and peak memory.
import { readFileSync } from 'node:fs';

const rows = readFileSync(0, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
const anchor = rows.find((row) => row.pipeline.startsWith('node'));
const digests = new Set(rows.map((row) => row.sha256));
console.log(`input ${rows[0].input_mb} MB; digests ${digests.size === 1 ? 'agree' : 'DIFFER'}`);
console.log('pipeline                       median: MB/s  x npm   best: MB/s  x npm' +
            '   cpu ms  wall ms  peak RSS / input');
for (const row of rows) {
  console.log(
    row.pipeline.padEnd(30),
    String(row.mb_per_s).padStart(12),
    (row.mb_per_s / anchor.mb_per_s).toFixed(1).padStart(6),
    String(row.best_mb_per_s).padStart(12),
    (row.best_mb_per_s / anchor.best_mb_per_s).toFixed(1).padStart(6),
    String(row.cpu_ms).padStart(8),
    String(row.wall_ms).padStart(8),
    row.peak_over_input.toFixed(2).padStart(17),
  );
}
if (digests.size !== 1) process.exitCode = 1;
