// Writes the instance pool for the schema benchmark: 1,000 varied MCP-like tool arguments
// for schema.json, about 80% valid, from a fixed seed (the same pool every run).
// Usage: node generate.mjs OUT.json
import { writeFileSync } from 'node:fs';

let state = 0x2545f491;
function random() {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 0x100000000;
}
const pick = (list) => list[Math.floor(random() * list.length)];
const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
const word = (n) => Array.from({ length: n }, () => pick('abcdefghijklmnopqrstuvwxyz')).join('');

function validInstance() {
  const instance = {
    scene: word(int(1, 40)),
    engine: pick(['cycles', 'eevee', 'workbench']),
    width: int(16, 8192),
    height: int(16, 8192),
  };
  if (random() < 0.8) instance.camera = pick(['Cam', 'main_cam', 'Top-View', 'c1']) + int(0, 99);
  if (random() < 0.7) instance.quality = pick(['draft', 'preview', 'final']);
  if (random() < 0.7) instance.samples = int(1, 4096);
  if (random() < 0.5) instance.frame = int(0, 250000);
  if (random() < 0.5) instance.denoise = random() < 0.5;
  if (random() < 0.4) instance.note = word(int(0, 120));
  if (random() < 0.7) {
    instance.layers = Array.from({ length: int(0, 6) }, () => {
      const layer = { name: word(int(1, 20)), visible: random() < 0.8 };
      if (random() < 0.6) layer.opacity = Math.round(random() * 1000) / 1000;
      return layer;
    });
  }
  return instance;
}

// One defect per invalid instance, spread over the keywords.
const defects = [
  (x) => { x.width = 4; },
  (x) => { x.height = 9000.5; },
  (x) => { x.engine = 'povray'; },
  (x) => { x.camera = '9starts-with-digit'; },
  (x) => { x.scene = ''; },
  (x) => { delete x.scene; },
  (x) => { x.unexpected = true; },
  (x) => { x.samples = 0; },
  (x) => { x.layers = [{ name: 'bg', visible: true, extra: 1 }]; },
  (x) => { x.layers = [{ name: 'bg', visible: true, opacity: 1.5 }]; },
  (x) => { x.layers = [{ visible: true }]; },
  (x) => { x.denoise = 'yes'; },
  (x) => { x.note = word(201); },
];

const pool = [];
for (let i = 0; i < 1000; ++i) {
  const instance = validInstance();
  if (random() < 0.2) pick(defects)(instance);
  pool.push(instance);
}
writeFileSync(process.argv[2], JSON.stringify(pool));
