// The review workbench and the HTML evidence report in headless Chromium (issue 23).
//
// Usage: node workbench.test.mjs UDON_MCP_BINARY
// Drives the Debian `chromium` (CHROMIUM, default /usr/bin/chromium) through the pinned
// puppeteer-core (tests/package.json; no browser download). Exits 77 (skipped) when the
// browser or puppeteer-core is missing, except under CI=true, where that is a failure.
// UDON_SCREENSHOT_DIR: where the screenshots go (docs/images to refresh the committed ones).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const SKIP = 77;
const binary = process.argv[2] && path.resolve(process.argv[2]);
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'udon-browser-'));
const shots = process.env.UDON_SCREENSHOT_DIR || work;

function unavailable(what) {
  if (process.env.CI === 'true') {
    console.error(`browser test: ${what} is missing, and CI=true requires this test to run`);
    process.exit(1);
  }
  console.error(`browser test: skipped, ${what} is missing`);
  process.exit(SKIP);
}

if (!binary || !fs.existsSync(binary)) {
  console.error('usage: node workbench.test.mjs UDON_MCP_BINARY');
  process.exit(2);
}
if (!fs.existsSync(chromium)) unavailable(`the browser (${chromium}; apt-get install chromium)`);
let puppeteer;
try {
  puppeteer = (await import('puppeteer-core')).default;
} catch {
  unavailable('puppeteer-core (scripts/peers.sh installs the test peers)');
}

const udon = (...args) => execFileSync(binary, args, { cwd: work, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const instant = (offsetSeconds) => new Date(Math.floor(Date.now() / 1000 + offsetSeconds) * 1000)
  .toISOString().replace('.000Z', 'Z');

// Two captures of one server: read_notes's description changed between them, and the newer
// one hides a right-to-left override (U+202E) and a tag character (U+E0041) in it.
function manifest(description, reviews) {
  return {
    profile: 'openudon.mcp-tool-manifest.0.1', protocolVersion: '2025-11-25',
    capturedAt: instant(-3600), expiresAt: instant(6 * 86400),
    servers: { notes: {
      serverInfo: { name: 'notes-server', version: '1.0.0' },
      toolPages: [{ tools: [
        { name: 'read_notes', title: 'Read notes', description,
          inputSchema: { type: 'object', required: ['path'], properties: {
            path: { type: 'string', description: 'Which note' },
            options: { type: 'object', properties: { limit: { type: 'integer' } } } } },
          outputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          annotations: { readOnlyHint: true } },
        { name: 'list_notes', description: 'List the notes.', inputSchema: { type: 'object' } },
      ] }],
      reviews,
    } },
  };
}
const listReview = {
  reviewer: 'earlier@example.test', reviewedAt: instant(-3000),
  assertions: { headless: true, independentCalls: true, modelBacked: false, sideEffects: [],
    concurrency: 'safe', referenceBasedIO: true },
  inputChannels: {},
};
const hidden = 'Read a note and return its text.\u202Eelif eht\u{E0041} Then stop.';
fs.writeFileSync(path.join(work, 'old.tools.json'),
  JSON.stringify(manifest('Read a note and return the text.', { list_notes: listReview }), null, 2));
fs.writeFileSync(path.join(work, 'notes.tools.json'), JSON.stringify(manifest(hidden, {}), null, 2));
fs.copyFileSync(path.join(work, 'notes.tools.json'), path.join(work, 'original.tools.json'));
const manifestPath = path.join(work, 'notes.tools.json');

// Evidence of 60 gated calls over two hours: step timings five decades apart, refusals,
// drift on two tools, one tool answering differently to identical calls.
function evidenceLines() {
  const steps = { digest: 0.012, static: 0.05, connect: 38, list: 2.9, compare: 0.21, arguments: 0.034, dispatch: 240 };
  const start = Date.parse('2026-08-30T10:00:00Z');
  const lines = [];
  for (let i = 0; i < 60; i++) {
    const tool = ['summarize', 'analyze_text', 'render'][i % 3];
    const drift = i % 11 === 5;
    const record = {
      time: new Date(start + i * 120000).toISOString(), command: 'call', server: 'demo', tool,
      code: drift ? 'catalog.tool_drift' : i % 17 === 3 ? 'call.indeterminate' : 'ok',
      exit: drift ? 3 : i % 17 === 3 ? 5 : 0, digestKeyId: 'k1',
      steps: Object.entries(steps).map(([step, ms]) => ({ step, ms: ms * (1 + (i % 10) / 4) })),
      argumentsHmacSha256: 'a'.repeat(64),
      resultHmacSha256: (tool === 'summarize' ? String(i % 4) : '7').repeat(64),
    };
    if (drift) record.drift = [{ pointer: '/description', change: 'changed', area: i % 2 ? 'description' : 'inputSchema' }];
    lines.push(JSON.stringify(record));
  }
  return lines.join('\n') + '\n';
}

// The workbench prints {"ok":true,"url":...,"port":...} once it listens.
const server = spawn(binary, ['workbench', 'notes.tools.json', '--against', 'old.tools.json', '--json'],
  { cwd: work, stdio: ['ignore', 'pipe', 'inherit'] });
const first = await new Promise((resolve, reject) => {
  readline.createInterface({ input: server.stdout }).once('line', resolve);
  server.once('exit', (code) => reject(new Error(`workbench exited with ${code}`)));
});
const { url, port } = JSON.parse(first);
assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{64}\/$/);

function rawGet(pathname, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: pathname, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    }).on('error', reject);
  });
}

const requests = [];
const browser = await puppeteer.launch({
  executablePath: chromium, headless: true,
  // Root in a container has no user namespaces for Chromium's sandbox.
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--disable-default-apps'],
});
let failed = false;
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 900 });
  page.on('request', (request) => requests.push(request.url()));
  const consoleErrors = [];
  // Refused loads (the 422 of the refused review, the browser's own /favicon.ico without
  // the token) are checked through their responses; any other console error fails.
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) consoleErrors.push(message.text());
  });
  const refusedLoads = [];
  page.on('response', (response) => {
    if (response.status() >= 400) refusedLoads.push(new URL(response.url()).pathname.replace(/[0-9a-f]{64}/, 'TOKEN') + ' ' + response.status());
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));
  const ready = (hash) => page.waitForFunction((h) => document.body.dataset.ready === h, { timeout: 10000 }, hash);

  // Overview.
  await page.goto(url, { waitUntil: 'load' });
  await ready('#/');
  const overview = await page.$eval('main', (m) => m.innerText);
  assert.match(overview, /2 \(0 reviewed, 2 unreviewed, 0 expired\)/);
  assert.match(overview, /read_notes/);
  await page.screenshot({ path: path.join(shots, 'workbench-overview.png') });
  await page.setViewport({ width: 550, height: 900, deviceScaleFactor: 2 });
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0,
    'the overview scrolls sideways at 200%');
  await page.setViewport({ width: 1100, height: 900 });
  await page.select('#filter', 'reviewed');
  assert.equal(await page.$$eval('tbody tr', (rows) => rows.length), 0);

  // The tool page: both hidden code points are named markers, as review --show names them.
  await page.goto(url + '#/tool/notes/read_notes', { waitUntil: 'load' });
  await ready('#/tool/notes/read_notes');
  const markers = await page.$$eval('#description .marker', (nodes) => nodes.map((n) => n.textContent));
  assert.deepEqual(markers, ['U+202E', 'U+E0041']);
  const shown = JSON.parse(udon('review', 'notes.tools.json', '--server', 'notes', '--tool', 'read_notes', '--show', '--json'));
  assert.match(shown.tool, /<U\+202E>elif eht<U\+E0041>/);
  assert.match(await page.$eval('#hidden-notice', (n) => n.textContent), /2 hidden characters \(U\+202E, U\+E0041\)/);
  assert.equal(await page.$eval('#tool-sha256', (n) => n.textContent).then((t) => t.length), 64);
  // Every control has a label, and the form is reachable by keyboard.
  const unlabelled = await page.$$eval('input, select, textarea', (nodes) =>
    nodes.filter((n) => n.labels.length === 0).map((n) => n.id));
  assert.deepEqual(unlabelled, []);
  const channelLabels = await page.$$eval('select[data-pointer]', (nodes) => nodes.map((n) => n.labels[0].textContent));
  assert.deepEqual(channelLabels, ['/options', '/options/limit', '/path']);
  await page.screenshot({ path: path.join(shots, 'workbench-tool.png'), fullPage: true });

  // 200% zoom: half the CSS width at twice the pixel density; nothing may need a
  // horizontal scroll bar.
  await page.setViewport({ width: 550, height: 900, deviceScaleFactor: 2 });
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.equal(await overflow(), 0, 'the tool page scrolls sideways at 200%');
  await page.setViewport({ width: 1100, height: 900 });

  // A review without `headless`: the field error, and the file unchanged.
  const before = fs.readFileSync(manifestPath);
  await page.focus('#f-reviewer');
  await page.keyboard.type('me@example.test');
  for (const [id, value] of [['#f-independentCalls', 'true'], ['#f-modelBacked', 'false'], ['#f-sideEffects', 'none'],
    ['#f-concurrency', 'safe'], ['#f-referenceBasedIO', 'true'], ['select[data-pointer="/path"]', 'data'],
    ['select[data-pointer="/options"]', 'data']]) {
    await page.select(id, value);
  }
  await page.click('#save-review');
  await page.waitForFunction(() => document.getElementById('f-headless-error').textContent !== '');
  // The same code and message as `review` gives for the same omission.
  let refusal;
  try {
    udon('review', 'original.tools.json', '--server', 'notes', '--tool', 'read_notes', '--reviewer', 'me@example.test',
      '--independent-calls', '--model-backed', 'false', '--no-side-effects', '--concurrency', 'safe',
      '--reference-based-io', '--channel', '/path=data', '--channel', '/options=data', '-o', 'refused.json', '--json');
  } catch (error) {
    refusal = JSON.parse(error.stdout);
  }
  assert.equal(refusal.details.pointer, '/assertions/headless');
  assert.equal(await page.$eval('#f-headless-error', (n) => n.textContent), `${refusal.message} [${refusal.code}]`);
  assert.equal(await page.$eval('#f-headless', (n) => n.getAttribute('aria-invalid')), 'true');
  assert.ok(fs.readFileSync(manifestPath).equals(before), 'a refused review changed the manifest');
  await page.screenshot({ path: path.join(shots, 'workbench-field-error.png') });

  // Completed with the keyboard (the focus is on the field in error), then saved.
  await page.keyboard.press('ArrowDown');  // (not stated) -> true
  assert.equal(await page.$eval('#f-headless', (n) => n.value), 'true');
  await page.click('#save-review');
  await page.waitForSelector('#new-sha256');
  const saved = await page.$eval('#new-sha256', (n) => n.textContent);
  assert.equal(udon('digest', 'notes.tools.json').trim().split(/\s+/)[0], saved);
  // `review` with the same review gives the same file, byte for byte.
  const written = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const review = written.servers.notes.reviews.read_notes;
  fs.writeFileSync(path.join(work, 'review.json'), JSON.stringify(review));
  udon('review', 'original.tools.json', '--server', 'notes', '--tool', 'read_notes', '--from', 'review.json',
    '-o', 'cli.tools.json');
  assert.ok(fs.readFileSync(path.join(work, 'cli.tools.json')).equals(fs.readFileSync(manifestPath)),
    'the workbench and review wrote different manifests');

  // Drift between the two captures, and the one-action carry-over.
  await page.goto(url + '#/drift', { waitUntil: 'load' });
  await ready('#/drift');
  const driftTools = await page.$$eval('.drift-tool', (nodes) => nodes.map((n) => n.innerText));
  assert.deepEqual(driftTools, ['Tool read_notes: changed']);
  assert.ok((await page.$$('del .marker, ins .marker')).length > 0, 'the word diff hides the markers');
  assert.deepEqual(await page.$$eval('ins', (n) => n.map((x) => x.textContent)).then((a) => a.length > 0), true);
  await page.screenshot({ path: path.join(shots, 'workbench-drift.png'), fullPage: true });
  await page.click('#carry-over');
  await page.waitForSelector('#carry-sha256');
  const carried = JSON.parse(fs.readFileSync(manifestPath, 'utf8')).servers.notes.reviews;
  assert.deepEqual(Object.keys(carried).sort(), ['list_notes', 'read_notes']);
  assert.equal(await page.$eval('#carry-sha256', (n) => n.textContent), udon('digest', 'notes.tools.json').trim().split(/\s+/)[0]);

  // Refusals: no token, a wrong token, another origin, another Host.
  assert.equal(await rawGet('/'), 403);
  assert.equal(await rawGet('/' + '0'.repeat(64) + '/api/overview'), 403);
  const tokenPath = new URL(url).pathname;
  assert.equal(await rawGet(tokenPath + 'api/overview'), 200);
  assert.equal(await rawGet(tokenPath + 'api/overview', { Origin: 'http://evil.example' }), 403);
  assert.equal(await rawGet(tokenPath + 'api/overview', { Host: 'evil.example:' + port }), 403);
  // A page of another origin cannot read the workbench or post to it.
  const other = await browser.newPage();
  other.on('request', (request) => requests.push(request.url()));
  await other.goto('data:text/html,<title>other</title>');
  const crossOrigin = await other.evaluate(async (target) => {
    try { await fetch(target + 'api/overview'); return 'read'; } catch { return 'blocked'; }
  }, url);
  assert.equal(crossOrigin, 'blocked');

  // The evidence report: one file, opened from disk; every step's p50 bar has a width.
  fs.writeFileSync(path.join(work, 'evidence.jsonl'), evidenceLines());
  udon('evidence', 'summarize', 'evidence.jsonl', '--html', '-o', 'report.html');
  const reportUrl = 'file://' + path.join(work, 'report.html');
  const report = await browser.newPage();
  await report.setViewport({ width: 900, height: 900 });
  const reportRequests = [];
  report.on('request', (request) => reportRequests.push(request.url()));
  await report.goto(reportUrl, { waitUntil: 'load' });
  const bars = await report.$$eval('rect.bar-p50', (nodes) =>
    nodes.map((n) => ({ step: n.dataset.label, width: n.getBoundingClientRect().width })));
  assert.deepEqual(bars.map((b) => b.step), ['digest', 'static', 'connect', 'list', 'compare', 'arguments', 'dispatch']);
  for (const bar of bars) assert.ok(bar.width >= 10, `the ${bar.step} bar is ${bar.width}px wide`);
  const p90 = await report.$$eval('rect.bar-p90', (nodes) => nodes.map((n) => n.getBoundingClientRect().width));
  assert.ok(p90.every((w) => w > 0), 'a p90 bar is invisible');
  assert.ok((await report.$$('rect.segment')).length > 0, 'no outcomes over time');
  assert.deepEqual(await report.$$eval('svg > title', (n) => n.map((t) => t.textContent)),
    ['Gate-step latency', 'Outcomes by code over time (UTC)', 'Drift incidents by kind', 'Drift incidents by tool',
      'Distinct results per call, by tool']);
  await report.screenshot({ path: path.join(shots, 'evidence-report.png'), fullPage: true });
  assert.deepEqual(reportRequests, [reportUrl], 'the report loaded something besides itself');

  assert.deepEqual(consoleErrors, []);
  assert.deepEqual(refusedLoads.filter((r) => r !== '/favicon.ico 403'), ['/TOKEN/api/review 422']);
  const elsewhere = requests.filter((u) => !u.startsWith('data:') && new URL(u).hostname !== '127.0.0.1');
  assert.deepEqual(elsewhere, [], 'a request left 127.0.0.1');
  console.log(`workbench: ${requests.length} request(s), all to 127.0.0.1`);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await browser.close();
  server.kill('SIGTERM');
}
if (failed) process.exit(1);
console.log('browser test: ok');
