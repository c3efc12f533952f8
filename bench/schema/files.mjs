// Writes the first COUNT instances of the pool (repeating it) as one file each, pretty
// printed as a person or a tool would write them: the input of `schema-check` over many
// files. Usage: node files.mjs POOL.json DIR COUNT
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const [poolPath, dir, countText] = process.argv.slice(2);
const pool = JSON.parse(readFileSync(poolPath, 'utf8'));
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
for (let i = 0; i < Number(countText); ++i) {
  writeFileSync(`${dir}/${String(i).padStart(5, '0')}.json`, `${JSON.stringify(pool[i % pool.length], null, 2)}\n`);
}
