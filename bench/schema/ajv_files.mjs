// The npm anchor of `udon-mcp schema-check` over many files, in one process: ajv 8
// (ajv/dist/2020) compiles the schema, then each file is read, parsed and validated (all
// errors, as schema-check reports them), and "PATH: valid|invalid" printed per file.
// Usage: node ajv_files.mjs [--time] SCHEMA.json FILE... ; exit 0 all valid, 1 any
// invalid. With --time, prints instead the time of that work alone (compile, then read,
// parse and validate every file; Node's start and module loading left out) as one JSON line.
import { readFileSync, writeSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';

const timed = process.argv[2] === '--time';
const [schemaPath, ...files] = process.argv.slice(timed ? 3 : 2);
const wallBefore = process.hrtime.bigint();
const cpuBefore = process.cpuUsage();
const ajv = new Ajv2020({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(readFileSync(schemaPath, 'utf8')));
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
if (timed) {
  const cpu = process.cpuUsage(cpuBefore);
  const wall = Number(process.hrtime.bigint() - wallBefore) / 1e6;
  console.log(JSON.stringify({ wall_ms: wall, cpu_ms: (cpu.user + cpu.system) / 1e3 }));
} else {
  writeSync(1, out);
  process.exitCode = allValid ? 0 : 1;
}
