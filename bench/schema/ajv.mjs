// The npm anchor: ajv 8 (ajv/dist/2020; its draft-07 class for a draft-07 schema) on the
// same schema and pool.
// Usage: node ajv.mjs SCHEMA.json POOL.json VALIDATIONS. Prints one JSON line like
// schema_bench; CPU time is the process's (node has no per-thread clock, so GC and JIT
// helper threads count against ajv), wall-clock rates beside it.
import { readFileSync } from 'node:fs';
import { ajvFor } from './ajv_dialect.mjs';

const [schemaPath, poolPath, countText] = process.argv.slice(2);
const count = Number(countText);
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
const pool = JSON.parse(readFileSync(poolPath, 'utf8'));
const texts = pool.map((instance) => JSON.stringify(instance));

const validate = ajvFor(schema, { allErrors: false, strict: false }).compile(schema);
const validInPool = pool.filter((instance) => validate(instance)).length;

function timeIt(body) {
  for (let i = 0; i < Math.min(count, 100000); ++i) body(i);  // warm-up (JIT)
  const wallBefore = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  let valid = 0;
  for (let i = 0; i < count; ++i) valid += body(i) ? 1 : 0;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    cpu: (cpu.user + cpu.system) / 1e6,
    wall: Number(process.hrtime.bigint() - wallBefore) / 1e9,
    valid,
  };
}

const size = pool.length;
const validateOnly = timeIt((i) => validate(pool[i % size]));
const parseAndValidate = timeIt((i) => validate(JSON.parse(texts[i % size])));
const poolBytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
console.log(JSON.stringify({
  validator: 'ajv 8.20.0 (dist/2020)',
  validations: count,
  valid_in_pool: validInPool,
  validate_per_cpu_s: Math.round(count / validateOnly.cpu),
  parse_validate_per_cpu_s: Math.round(count / parseAndValidate.cpu),
  parse_validate_mb_per_cpu_s: +((poolBytes / size) * count / parseAndValidate.cpu / 1e6).toFixed(1),
  validate_per_wall_s: Math.round(count / validateOnly.wall),
  parse_validate_per_wall_s: Math.round(count / parseAndValidate.wall),
}));
