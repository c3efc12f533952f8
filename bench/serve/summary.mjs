// The serve benchmark's figures (gateways.mjs's report) as Markdown tables, side by side,
// with the issue's goals judged: ratios of serve to each other gateway.
const ms = (value) => (Number.isFinite(value) ? value.toFixed(3) : '-');
const fixed = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const kib = (value) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '-');
const verdict = (met) => (met ? 'met' : 'not met');

function ratioRows(rows) {
  const goals = { stdio: 2.5, http: 1.3 };
  const lines = [
    '| row | through serve p50 / p90 / p99 ms | direct p50 / p90 / p99 ms | ratio (p50) | goal |',
    '|---|---:|---:|---:|---|',
  ];
  for (const row of rows) {
    const show = (l) => `${ms(l.p50)} / ${ms(l.p90)} / ${ms(l.p99)}${l.failed ? ` (${l.failed} failed)` : ''}`;
    const goal = goals[row.label];
    lines.push(`| ${row.label} | ${show(row.serve)} | ${show(row.direct)} | ${fixed(row.ratio, 2)}x | ` +
      `≤ ${goal}x: ${verdict(row.ratio <= goal)} |`);
  }
  for (const row of rows.filter((r) => r.relay3)) {
    lines.push('', `${row.label}: the floor, the same client through a minimal relay (stdio_relay.cc), p50: ` +
      `one upstream exchange per call ${ms(row.relay.p50)} ms (${fixed(row.relay.ratio, 2)}x direct), the gate's three ` +
      `(re-list, ping, call) ${ms(row.relay3.p50)} ms (${fixed(row.relay3.ratio, 2)}x direct); serve over that ` +
      `floor: ${ms(row.serve.p50 - row.relay3.p50)} ms`);
  }
  for (const row of rows.filter((r) => r.relay3threads)) {
    lines.push('', `${row.label}: the floor with the rules' threads (stdio_relay --threads: a front reader hands ` +
      `each request to a call thread, an upstream reader hands each answer over; the gate's three exchanges), p50: ` +
      `${ms(row.relay3threads.p50)} ms (${fixed(row.relay3threads.ratio, 2)}x direct); the hand-offs over the ` +
      `single-threaded relay: ${ms(row.relay3threads.p50 - row.relay3.p50)} ms; serve over this floor: ` +
      `${ms(row.serve.p50 - row.relay3threads.p50)} ms`);
  }
  for (const row of rows.filter((r) => r.relay2)) {
    lines.push('', `${row.label}: the floor: a relay making the gate's two exchanges (http_relay.cc: re-list, ` +
      `call; nothing checked), p50: ${ms(row.relay2.p50)} ms (${fixed(row.relay2.ratio, 2)}x direct); serve's own ` +
      `time over that floor: ${ms(row.serve.p50 - row.relay2.p50)} ms`);
  }
  for (const row of rows.filter((r) => r.steps)) {
    const steps = Object.entries(row.steps).map(([step, value]) => `${step} ${ms(value)}`).join(', ');
    lines.push('', `${row.label}: serve's step times (p50 ms, from its evidence): ${steps}; outside the steps ` +
      `${ms(row.outsideSteps)}; a direct tools/list ${ms(row.directList)}. Serve's own time beyond the ` +
      `re-list and the call (through-serve p50 - direct p50 - list step): ${ms(row.ownBeyondExchanges)} ms ` +
      `(goal ≤ 0.15 ms: ${row.ownBeyondExchanges < 0 ? 'not readable: the direct row was slower, noise' :
        verdict(row.ownBeyondExchanges <= 0.15)})`);
  }
  return lines;
}

function gatewayTable(gateways, levels) {
  const row = (label, pick) => `| ${label} | ${gateways.map((g) => pick(g)).join(' | ')} |`;
  const level = (g, count) => g.levels?.find((l) => l.sessions === count) ?? {};
  const lines = [
    `| | ${gateways.map((g) => g.name).join(' | ')} |`,
    `|---|${gateways.map(() => '---:').join('|')}|`,
    row('sequential p50 / p90 / p99 ms', (g) => `${ms(g.sequential?.p50)} / ${ms(g.sequential?.p90)} / ${ms(g.sequential?.p99)}`),
    row('sequential: gateway CPU ms per call', (g) => ms(g.sequential?.cpuPerCall)),
  ];
  for (const count of levels) {
    lines.push(row(`${count} sessions: calls/s`, (g) => fixed(level(g, count).callsPerSecond)));
    lines.push(row(`${count} sessions: failed calls / sessions not started`,
      (g) => `${level(g, count).failed ?? '-'} / ${level(g, count).notStarted ?? '-'}`));
    lines.push(row(`${count} sessions: p50 / p99 ms`, (g) => `${ms(level(g, count).p50)} / ${ms(level(g, count).p99)}`));
    lines.push(row(`${count} sessions: gateway / client CPU ms per call`,
      (g) => `${ms(level(g, count).cpuPerCall)} / ${ms(level(g, count).clientCpuPerCall)}`));
  }
  lines.push(row('gateway RSS KiB before / after / peak',
    (g) => `${kib(g.rssBeforeKiB)} / ${kib(g.rssAfterKiB)} / ${kib(g.peakRssKiB)}`));
  return lines;
}

function goals(gateways, levels) {
  const serve = gateways.find((g) => g.name === 'serve');
  if (!serve) return [];
  const level = (g, count) => g.levels?.find((l) => l.sessions === count) ?? {};
  const lines = ['| goal (serve over each) | ' + gateways.filter((g) => g !== serve).map((g) => g.name).join(' | ') + ' |',
    `|---|${gateways.filter((g) => g !== serve).map(() => '---').join('|')}|`];
  const others = gateways.filter((g) => g !== serve);
  const ratio = (label, pick, met) => lines.push(`| ${label} | ${others.map((g) => {
    const value = pick(serve) / pick(g);
    return `${fixed(value, 2)}x ${verdict(met(value))}`;
  }).join(' | ')} |`);
  ratio('p50 ≤ 1.0x', (g) => g.sequential?.p50, (v) => v <= 1.0);
  ratio('p99 ≤ 1.0x', (g) => g.sequential?.p99, (v) => v <= 1.0);
  for (const count of [8, 64].filter((c) => levels.includes(c))) {
    ratio(`calls/s at ${count} sessions ≥ 1.0x`, (g) => level(g, count).callsPerSecond, (v) => v >= 1.0);
  }
  for (const count of [64, 256].filter((c) => levels.includes(c))) {
    const l = level(serve, count);
    const failures = (l.failed ?? 0) + (l.notStarted ?? 0);
    lines.push(`| no failed call at ${count} (serve: ${l.failed} failed, ${l.notStarted} not started) | ` +
      `${others.map(() => verdict(failures === 0)).join(' | ')} |`);
  }
  return lines;
}

export function summarize(report) {
  return [
    `sequential calls ${report.seqCalls}, closed loop ${report.seconds} s per level, levels ${report.levels.join(' ')}`,
    '',
    ...ratioRows(report.rows),
    '',
    ...(report.gateways.length ? gatewayTable(report.gateways, report.levels) : []),
    '',
    ...goals(report.gateways, report.levels),
    '',
  ].join('\n');
}
