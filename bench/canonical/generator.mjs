// What generate.mjs and generate_hard.mjs share: the command line (OUT.json [MEGABYTES],
// 20 MB by default) and a seeded xorshift32, which gives the same bytes on every machine
// and Node version.
export function outputAndSize(scriptName) {
  const [, , outPath, megabytesText = '20'] = process.argv;
  if (!outPath) {
    console.error(`usage: node ${scriptName} OUT.json [MEGABYTES]`);
    process.exit(2);
  }
  return { outPath, targetBytes: Number(megabytesText) * 1024 * 1024 };
}

export function seededRandom(seed) {
  let state = seed;
  function next() {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state;
  }
  const pick = (list) => list[next() % list.length];
  const chance = (percent) => next() % 100 < percent;
  return { next, pick, chance };
}
