// The npm anchor of `udon-mcp schema-check` over many files, in one process: ajv 8
// (ajv/dist/2020, or draft-07 by $schema) compiles the schema, then each file is read,
// parsed and validated (all errors, as schema-check reports them), and "PATH:
// valid|invalid" printed per file.
// Usage: node ajv_files.mjs [--time|--warm] SCHEMA.json FILE... ; exit 0 all valid, 1 any
// invalid. With --time, prints instead the time of that work alone (compile, then read,
// parse and validate every file; Node's start and module loading left out) as one JSON line.
// With --warm, the schema is compiled first, untimed, and the pass over the files (read,
// parse, validate, format the lines) runs 25 times: prints the median CPU and wall time of
// the last 20 passes (ajv warm: compiled and optimized by the JIT) as one JSON line.
import { readFileSync, writeSync } from 'node:fs';
import { ajvFor } from './ajv_dialect.mjs';

const mode = process.argv[2];
const timed = mode === '--time';
const warm = mode === '--warm';
const [schemaPath, ...files] = process.argv.slice(timed || warm ? 3 : 2);
const cpuMs = (usage) => (usage.user + usage.system) / 1e3;
const median = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)];
const wallBefore = process.hrtime.bigint();
const cpuBefore = process.cpuUsage();
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
const validate = ajvFor(schema, { allErrors: true, strict: false }).compile(schema);

// One pass: every file read, parsed, validated, its lines formatted.
function pass() {
  let out = '';
  let allValid = true;
  for (const file of files) {
    const valid = validate(JSON.parse(readFileSync(file, 'utf8')));
    allValid &&= valid;
    out += `${file}: ${valid ? 'valid' : 'invalid'}\n`;
    if (!valid) {
      for (const e of validate.errors) out += `  at "${e.instancePath}": ${e.message} (${e.schemaPath})\n`;
    }
  }
  return { out, allValid };
}

if (warm) {
  const cpu = [];
  const wall = [];
  for (let i = 0; i < 25; ++i) {
    const passWall = process.hrtime.bigint();
    const passCpu = process.cpuUsage();
    pass();
    if (i >= 5) {
      cpu.push(cpuMs(process.cpuUsage(passCpu)));
      wall.push(Number(process.hrtime.bigint() - passWall) / 1e6);
    }
  }
  console.log(JSON.stringify({ warm_wall_ms: median(wall), warm_cpu_ms: median(cpu), passes: cpu.length }));
} else {
  const { out, allValid } = pass();
  if (timed) {
    const wall = Number(process.hrtime.bigint() - wallBefore) / 1e6;
    console.log(JSON.stringify({ wall_ms: wall, cpu_ms: cpuMs(process.cpuUsage(cpuBefore)) }));
  } else {
    writeSync(1, out);
    process.exitCode = allValid ? 0 : 1;
  }
}
