// Reads the JSON lines of bench/schema/run.sh on stdin and prints, per validator, the
// median of each rate over the rounds, and udon's ratio to ajv (udon's text path against
// ajv's JSON.parse + validate). Both must agree on how many instances of the pool are
// valid.
import { readFileSync } from 'node:fs';

const lines = readFileSync(0, 'utf8').split('\n').filter((line) => line.startsWith('{'));
const byValidator = new Map();
for (const line of lines) {
  const result = JSON.parse(line);
  if (!byValidator.has(result.validator)) byValidator.set(result.validator, []);
  byValidator.get(result.validator).push(result);
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const fields = ['validate_per_cpu_s', 'parse_validate_per_cpu_s', 'validate_per_wall_s',
  'parse_validate_per_wall_s', 'parse_validate_text_per_cpu_s', 'parse_validate_text_per_wall_s'];
const summary = {};
for (const [validator, results] of byValidator) {
  summary[validator] = { valid_in_pool: results[0].valid_in_pool, rounds: results.length };
  for (const field of fields) {
    if (field in results[0]) summary[validator][field] = median(results.map((r) => r[field]));
  }
}
const [udon, ajv] = ['udon::schema', 'ajv 8.20.0 (dist/2020)'].map((name) => summary[name]);
if (udon && ajv) {
  if (udon.valid_in_pool !== ajv.valid_in_pool) {
    console.error('validators disagree on the pool');
    process.exitCode = 1;
  }
  // ajv has one parse + validate pipeline (JSON.parse then the compiled validator): udon's
  // text path is compared with it too.
  const ajvField = (field) => field.replace('parse_validate_text_', 'parse_validate_');
  summary.ratio_udon_over_ajv = Object.fromEntries(
    fields.filter((field) => field in udon)
      .map((field) => [field, +(udon[field] / ajv[ajvField(field)]).toFixed(2)]));
  // The same ratio taken within each round (udon and ajv run back to back) and then the
  // median: steadier than the ratio of medians when the machine's load changes from one
  // round to the next.
  const [udonRounds, ajvRounds] = ['udon::schema', 'ajv 8.20.0 (dist/2020)'].map(
    (name) => byValidator.get(name));
  const rounds = Math.min(udonRounds.length, ajvRounds.length);
  summary.ratio_udon_over_ajv_median_of_rounds = Object.fromEntries(
    fields.filter((field) => field in udon).map((field) => {
      const ratios = [];
      for (let i = 0; i < rounds; ++i) {
        ratios.push(udonRounds[i][field] / ajvRounds[i][ajvField(field)]);
      }
      return [field, +median(ratios).toFixed(2)];
    }));
}
console.log(JSON.stringify(summary, null, 2));
