// Writes a deterministic tool catalog of about the requested size (default 20 MB) made of
// RFC 8785's slow paths, the worst case issue 41 section 4 describes:
// - member names outside ASCII whose UTF-16 order differs from their code point order
//   (U+E000..U+FFFF against supplementary characters, whose surrogates sort first), with
//   shared prefixes, some written as \u escapes (surrogate pairs too);
// - strings dense in escapes: control characters, quotes, backslashes, "\/", and non-ASCII
//   written as \u escapes that the canonical form turns back into UTF-8;
// - numbers that need the shortest round trip: doubles from random bits, exponent
//   boundaries (1e-7, 1e21), subnormals, -0, and spellings that change (1.0E+2, 0.50).
// Usage: node generate_hard.mjs OUT.json [MEGABYTES]
import { writeFileSync } from 'node:fs';
import { outputAndSize, seededRandom } from './generator.mjs';

const { outPath, targetBytes } = outputAndSize('generate_hard.mjs');
const { next, pick, chance } = seededRandom(0x85ebca6b);

// Name pieces: high BMP (after the surrogates in UTF-16), supplementary (surrogates),
// other scripts, and ASCII, so siblings compare on every kind of code unit.
const highBmp = ['ｱ', 'ﬀ', '￼', '�', 'ﾟ', '', 'ﹰ', '＄'];
const astral = ['😀', '𝄞', '🎬', '𠀀', '🚀', '𝒳', '🧊'];
const scripts = ['é', 'ß', 'Ω', 'Ж', 'ش', '中', 'ア', '한', 'ñ'];
const ascii = ['a', 'Z', '_', '0', 'k', 'x-'];
const words = ['render', 'scene', 'camera', 'frame', 'texture', 'queue', 'mesh', 'shader'];
const controls = ['\u0000', '\u0001', '\b', '\t', '\n', '\f', '\r', '\u001f', '"', '\\', '/', '\u007f'];

function name(index) {
  let text = pick(words);
  const pieces = 1 + (next() % 4);
  for (let i = 0; i < pieces; ++i) text += pick(pick([highBmp, astral, scripts, ascii]));
  return text + index;  // unique among siblings
}
function text() {
  const parts = [];
  const length = 3 + (next() % 10);
  for (let i = 0; i < length; ++i) {
    const roll = next() % 100;
    if (roll < 30) parts.push(pick(words));
    else if (roll < 55) parts.push(pick(controls) + pick(controls));
    else if (roll < 70) parts.push(pick(astral));
    else if (roll < 85) parts.push(pick(highBmp));
    else parts.push(pick(scripts));
  }
  return parts.join(chance(50) ? ' ' : '');
}

// A number as it is spelled in the input (its canonical spelling may differ).
function number() {
  switch (next() % 8) {
    case 0: {  // a double from random bits (finite)
      const bits = new DataView(new ArrayBuffer(8));
      bits.setUint32(0, (next() & 0x7fefffff) >>> 0);
      bits.setUint32(4, next());
      return String(bits.getFloat64(0));
    }
    case 1: return String(next() / (1 + (next() % 997)));
    case 2: return pick(['1e-7', '1e21', '1e20', '9.999999999999999e20', '1e-6', '5e-324', '2.2250738585072014e-308',
      '1.7976931348623157e308', '-0', '0.1', '0.30000000000000004', '123456789012345680000']);
    case 3: return `${next() % 1000}.${next() % 100}0E+${next() % 30}`;  // 1.50E+3 -> 1500
    case 4: return `${next() % 10}.${next()}e-${1 + (next() % 300)}`;
    case 5: return `-${next() % 100000}.${next() % 1000}`;
    case 6: return String(next() * 4294967296 + next());
    default: return `0.${String(next()).padStart(10, '0')}`;
  }
}

// A string in JSON, each character written raw or (non-ASCII, sometimes) as \u escapes.
function quote(value) {
  let out = '"';
  for (const character of value) {
    const code = character.codePointAt(0);
    if (character === '"') out += '\\"';
    else if (character === '\\') out += '\\\\';
    else if (character === '/' && chance(50)) out += '\\/';
    else if (code < 0x20) out += pick([`\\u${code.toString(16).padStart(4, '0')}`, JSON.stringify(character).slice(1, -1)]);
    else if (code > 0x7f && chance(35)) {
      for (let i = 0; i < character.length; ++i) out += `\\u${character.charCodeAt(i).toString(16).padStart(4, '0')}`;
    } else out += character;
  }
  return out + '"';
}

// Values are written straight to text, so numbers keep their input spelling.
function object(entries, indent) {
  if (entries.length === 0) return '{}';
  const pad = ' '.repeat(indent + 1);
  return '{\n' + entries.map(([key, value]) => `${pad}${quote(key)}: ${value}`).join(',\n') + '\n' + ' '.repeat(indent) + '}';
}
function array(values, indent) {
  if (values.length === 0) return '[]';
  const pad = ' '.repeat(indent + 1);
  return '[\n' + values.map((value) => pad + value).join(',\n') + '\n' + ' '.repeat(indent) + ']';
}

function schema(depth, indent) {
  const entries = [['description', quote(text())]];
  if (depth > 2 || chance(35)) {
    entries.push(['type', quote(pick(['string', 'number', 'integer']))]);
    entries.push(['default', number()]);
    if (chance(50)) entries.push(['enum', array([quote(text()), number(), quote(name(0))], indent + 1)]);
    if (chance(50)) entries.push(['examples', array([number(), number(), number()], indent + 1)]);
  } else {
    const properties = [];
    const count = 3 + (next() % 6);
    for (let i = 0; i < count; ++i) properties.push([name(i), schema(depth + 1, indent + 2)]);
    entries.push(['type', '"object"'], ['properties', object(properties, indent + 1)]);
    entries.push(['required', array(properties.filter(() => chance(50)).map(([key]) => quote(key)), indent + 1)]);
  }
  // Members in an order of their own (the canonical form sorts them).
  for (let i = entries.length - 1; i > 0; --i) {
    const j = next() % (i + 1);
    [entries[i], entries[j]] = [entries[j], entries[i]];
  }
  return object(entries.map(([key, value]) => [key, value]), indent);
}

function tool(index, indent) {
  const meta = [];
  for (let i = 0; i < 6; ++i) meta.push([name(i), chance(50) ? number() : quote(text())]);
  return object([
    ['name', quote(`${pick(words)}_${index}`)],
    ['description', quote(text() + text())],
    ['inputSchema', schema(0, indent + 1)],
    ['outputSchema', schema(1, indent + 1)],
    ['_meta', object(meta, indent + 1)],
  ], indent);
}

const pages = [];
let size = 0;
let index = 0;
while (size < targetBytes) {
  const tools = [];
  for (let i = 0; i < 50; ++i) tools.push(tool(index++, 6));
  const page = object([['tools', array(tools, 5)], ['nextCursor', quote(`cursor-${index}`)]], 4);
  size += Buffer.byteLength(page);
  pages.push(page);
}
const document = object([
  ['profile', '"openudon.mcp-tool-manifest.0.1"'],
  ['servers', object([['bench', object([
    ['toolPages', array(pages, 3)],
    ['serverInfo', '{"version": "1.0.0", "name": "bench-server"}'],
  ], 2)]], 1)],
  ['protocolVersion', '"2025-11-25"'],
], 0);
writeFileSync(outPath, document);
