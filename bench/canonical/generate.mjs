// Writes a deterministic tool-catalog-like JSON document of about the requested size
// (default 20 MB): MCP tools/list pages with nested input/output schemas, enums, CJK and
// emoji text, floats, integers beyond 2^53, escapes, and members in unsorted order.
// Usage: node generate.mjs OUT.json [MEGABYTES]
import { writeFileSync } from 'node:fs';
import { outputAndSize, seededRandom } from './generator.mjs';

const { outPath, targetBytes } = outputAndSize('generate.mjs');
const { next, pick, chance } = seededRandom(0x9e3779b9);

const words = ['render', 'scene', 'asset', 'camera', 'light', 'frame', 'texture', 'queue',
  'bake', 'export', 'mesh', 'node', 'shader', 'batch', 'upload', 'farm', 'job', 'preview'];
const cjk = ['渲染', '场景', '相机', '光源', '纹理', '队列', 'レンダリング', 'シーン', '렌더링', '장면'];
const emoji = ['🎬', '🖼️', '🚀', '✨', '🧊', '📦', '🔦', '🎥', '🟢'];
const accents = ['café', 'Größe', 'naïve', 'Ångström', 'señal', 'Ελληνικά', 'русский'];
const escapes = ['tab\there', 'line\nbreak', 'quote "q"', 'back\\slash', 'ctl\u0001x'];

function identifier() {
  return pick(words) + (chance(50) ? '_' + pick(words) : '') + (chance(30) ? String(next() % 100) : '');
}
function sentence() {
  const parts = [];
  const length = 4 + (next() % 12);
  for (let i = 0; i < length; ++i) {
    const roll = next() % 100;
    if (roll < 60) parts.push(pick(words));
    else if (roll < 75) parts.push(pick(cjk));
    else if (roll < 85) parts.push(pick(accents));
    else if (roll < 93) parts.push(pick(emoji));
    else parts.push(pick(escapes));
  }
  return parts.join(' ');
}
function number() {
  switch (next() % 6) {
    case 0: return next() % 1000;
    case 1: return (next() / 7) * 1e-3;
    case 2: return next() * 4096 + next();  // above 2^32, often above 2^53 once scaled
    case 3: return Number(BigInt(next()) * 1000003n * 4099n);  // large integers
    case 4: return (next() % 100000) / 100;
    default: return -(next() / 3) * 1e12;
  }
}

// Members are emitted in this deliberately unsorted order.
function schema(depth) {
  const roll = next() % 10;
  if (depth > 4 || roll < 4) {
    const type = pick(['string', 'integer', 'number', 'boolean']);
    const leaf = { type, description: sentence() };
    if (type === 'string' && chance(40)) leaf.enum = [identifier(), identifier(), pick(cjk), pick(emoji)];
    if (type === 'string' && chance(20)) leaf.format = pick(['uri', 'date-time', 'email']);
    if (type === 'integer') { leaf.minimum = next() % 10; leaf.maximum = 10 + next(); }
    if (type === 'number') { leaf.multipleOf = 0.25; leaf.default = number(); }
    if (chance(20)) leaf.examples = [number(), sentence()];
    return leaf;
  }
  if (roll < 6) {
    return { type: 'array', items: schema(depth + 1), minItems: next() % 3, description: sentence() };
  }
  const properties = {};
  const count = 2 + (next() % 6);
  for (let i = 0; i < count; ++i) properties[identifier() + i] = schema(depth + 1);
  const names = Object.keys(properties);
  return {
    type: 'object',
    properties,
    required: names.filter(() => chance(50)),
    additionalProperties: chance(50),
    description: sentence(),
  };
}

function tool(index) {
  return {
    name: `${identifier()}_${index}`,
    title: Array.from(sentence()).slice(0, 24).join(''),  // whole code points
    description: sentence() + ' ' + sentence(),
    inputSchema: schema(0),
    outputSchema: schema(1),
    annotations: { readOnlyHint: chance(50), openWorldHint: chance(30), idempotentHint: chance(60) },
    _meta: { 'x-cost': number(), 'x-id': Number(BigInt(next()) * 2147483647n), 'x-tags': [pick(cjk), pick(emoji)] },
  };
}

const pages = [];
let size = 0;
let index = 0;
while (size < targetBytes) {
  const tools = [];
  for (let i = 0; i < 50; ++i) tools.push(tool(index++));
  const page = { tools, nextCursor: `cursor-${index}` };
  const pageText = JSON.stringify(page, null, 1);
  // Inside the document every line of a page is indented 5 more spaces.
  size += Buffer.byteLength(pageText) + 5 * pageText.split('\n').length;
  pages.push(page);
}
const document = {
  profile: 'openudon.mcp-tool-manifest.0.1',
  servers: { bench: { toolPages: pages, serverInfo: { version: '1.0.0', name: 'bench-server' } } },
  protocolVersion: '2025-11-25',
};
writeFileSync(outPath, JSON.stringify(document, null, 1));
