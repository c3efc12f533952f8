// Writes schemas and instances for the schema benchmark from the drift study's real
// manifests: the SCHEMAS largest distinct tool inputSchemas (by their JSON text; ties by
// the text), each as NN.schema.json with NN.pool.json, INSTANCES instances generated from
// the schema with a fixed seed (about 80% valid: a value for every property the schema
// describes; the rest with one required property left out or a value of the wrong type).
// Usage: node drift.mjs DATA_DIR OUT_DIR SCHEMAS INSTANCES
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '../canonical/generator.mjs';

const [dataDir, outDir, schemaCountText, instanceCountText] = process.argv.slice(2);
const { next, pick, chance } = seededRandom(0x68e31da4);

function manifests(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...manifests(path));
    else if (entry.name.endsWith('.tools.json')) found.push(path);
  }
  return found;
}

const distinct = new Set();
for (const path of manifests(dataDir)) {
  const manifest = JSON.parse(readFileSync(path, 'utf8'));
  for (const server of Object.values(manifest.servers ?? {})) {
    for (const page of server.toolPages ?? []) {
      for (const tool of page.tools ?? []) {
        if (tool.inputSchema) distinct.add(JSON.stringify(tool.inputSchema));
      }
    }
  }
}
const chosen = [...distinct]
  .sort((a, b) => b.length - a.length || (a < b ? -1 : 1))
  .slice(0, Number(schemaCountText));

// Follows a local $ref (#/$defs/..., #/definitions/...) within the root schema.
function resolve(schema, root) {
  for (let depth = 0; schema && typeof schema.$ref === 'string' && schema.$ref.startsWith('#') && depth < 8; ++depth) {
    let target = root;
    for (const part of schema.$ref.slice(1).split('/').filter(Boolean)) target = target?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    schema = target;
  }
  return schema ?? {};
}

function text(schema) {
  if (schema.format === 'date-time') return '2026-12-07T10:00:00Z';
  if (schema.format === 'uri' || schema.format === 'url') return `https://example.com/${next() % 1000}`;
  if (schema.format === 'email') return `user${next() % 1000}@example.com`;
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? min + 24, min + 24);
  const length = min + (next() % (max - min + 1));
  let value = '';
  while (value.length < length) value += pick(['a', 'b', 'c', 'x', ' ', '-', 'é', '中']);
  return value;
}

function number(schema, integer) {
  const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
  const high = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : low + 1000);
  const value = low + (next() % Math.max(1, Math.floor(high - low) + 1));
  return integer || schema.multipleOf ? Math.floor(value) : value + (next() % 100) / 100;
}

// A value meant to be valid for schema (depth-limited).
function instance(schema, root, depth) {
  schema = resolve(schema, root);
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return pick(schema.enum);
  if (schema.default !== undefined && chance(20)) return schema.default;
  const choices = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(choices) && choices.length) return instance(choices[0], root, depth + 1);
  if (Array.isArray(schema.allOf) && schema.allOf.length) return instance(schema.allOf[0], root, depth + 1);
  let type = schema.type ?? (schema.properties ? 'object' : schema.items ? 'array' : 'string');
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? 'null';
  switch (type) {
    case 'object': {
      const value = {};
      const required = new Set(schema.required ?? []);
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        if (depth < 6 && (required.has(name) || chance(60))) value[name] = instance(property, root, depth + 1);
      }
      return value;
    }
    case 'array': {
      const min = schema.minItems ?? 0;
      const count = depth < 6 ? min + (next() % 3) : min;
      const items = Array.isArray(schema.items) ? schema.items : null;
      return Array.from({ length: count }, (_, i) => instance(items ? (items[i] ?? {}) : (schema.items ?? {}), root, depth + 1));
    }
    case 'integer': return number(schema, true);
    case 'number': return number(schema, false);
    case 'boolean': return chance(50);
    case 'null': return null;
    default: return text(schema);
  }
}

// Breaks a valid instance: a required property left out, or one given the wrong type.
function spoil(value, schema) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [value];
  const required = (schema.required ?? []).filter((name) => name in value);
  if (required.length && chance(50)) delete value[pick(required)];
  else {
    const names = Object.keys(value);
    if (names.length) value[pick(names)] = pick([12345, 'not the type', [true], { unexpected: 1 }]);
    else return [value];
  }
  return value;
}

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
chosen.forEach((schemaText, index) => {
  const schema = JSON.parse(schemaText);
  const pool = [];
  for (let i = 0; i < Number(instanceCountText); ++i) {
    const value = instance(schema, schema, 0);
    pool.push(chance(20) ? spoil(value, resolve(schema, schema)) : value);
  }
  const name = String(index).padStart(2, '0');
  writeFileSync(join(outDir, `${name}.schema.json`), `${schemaText}\n`);
  writeFileSync(join(outDir, `${name}.pool.json`), `${JSON.stringify(pool)}\n`);
});
