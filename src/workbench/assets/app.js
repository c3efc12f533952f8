// udon-mcp review workbench: plain JavaScript, no framework, no request to any other origin.
// Every text that came from a server arrives as display segments made by the binary
// (json::DisplaySegments, the rules of `review --show`): [{t: text} | {h: "U+202E"}]. This
// file only draws them; it never decides which code points are hidden. Everything is
// built with createElement and textContent, never from HTML strings.
'use strict';

const state = { overview: null, csrf: '', filter: 'all' };
const ASSERTIONS = ['headless', 'independentCalls', 'modelBacked', 'referenceBasedIO'];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'text') node.textContent = value;
    else if (name === 'onclick') node.addEventListener('click', value);
    else if (name === 'onchange') node.addEventListener('change', value);
    else if (name === 'onsubmit') node.addEventListener('submit', value);
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

// Display segments as DOM nodes: text as it is, each hidden code point as a named marker.
function shown(segments, cls) {
  const span = el('span', { class: cls });
  for (const segment of segments || []) {
    if ('h' in segment) {
      span.append(el('span', { class: 'marker', title: 'hidden character ' + segment.h, text: segment.h }));
    } else {
      span.append(segment.t);
    }
  }
  return span;
}

async function api(path, body) {
  const options = { headers: {} };
  if (body !== undefined) {
    options.method = 'POST';
    options.headers['Content-Type'] = 'application/json';
    options.headers['X-Udon-Csrf'] = state.csrf;
    options.body = JSON.stringify(body);
  }
  const response = await fetch('api/' + path, options);
  const data = await response.json();
  return { ok: response.ok, status: response.status, data };
}

function main() { return document.getElementById('main'); }

function show(...nodes) {
  const m = main();
  m.replaceChildren(...nodes);
  m.focus();
}

function failure(error) {
  return el('p', { class: 'notice', role: 'alert', text: error.message + ' [' + error.code + ']' });
}

function facts(rows) {
  return el('dl', { class: 'facts' }, rows.flatMap(([name, value]) => [el('dt', { text: name }), el('dd', {}, value)]));
}

// ---- Overview ------------------------------------------------------------------------
async function loadOverview() {
  const result = await api('overview');
  if (!result.ok) { show(failure(result.data.error)); return null; }
  state.overview = result.data;
  state.csrf = result.data.csrf;
  document.getElementById('nav-drift').hidden = !result.data.baseline;
  return result.data;
}

function toolLink(server, tool) {
  return '#/tool/' + encodeURIComponent(server) + '/' + encodeURIComponent(tool);
}

function renderOverview(o) {
  const c = o.counts;
  const filter = el('select', { id: 'filter', onchange: (event) => { state.filter = event.target.value; renderOverview(o); } },
    ['all', 'reviewed', 'unreviewed', 'expired'].map((v) => el('option', { value: v, text: v, selected: v === state.filter })));
  const nodes = [
    el('h1', { text: 'Overview' }),
    facts([
      ['manifest', el('code', { text: o.manifest })],
      ['manifestSha256', el('code', { class: 'digest', id: 'manifest-sha256', text: o.sha256 })],
      ['protocolVersion', o.protocolVersion],
      ['captured', o.capturedAt],
      ['expires', o.expiresAt + (o.expired ? ' (expired)' : '')],
      ['policy review window', o.maxReviewWindowDays + ' days'],
      ['tools', c.tools + ' (' + c.reviewed + ' reviewed, ' + c.unreviewed + ' unreviewed, ' + c.expired + ' expired)'],
    ]),
  ];
  if (o.freshness) nodes.push(el('p', { class: 'notice', text: 'The gate would refuse this manifest now: ' + o.freshness.message + ' [' + o.freshness.code + ']' }));
  if (o.baseline) nodes.push(el('p', {}, el('a', { href: '#/drift', text: 'Drift against ' + o.baseline })));
  nodes.push(el('p', {}, el('label', { for: 'filter', text: 'Show tools: ' }), filter));
  for (const server of o.servers) {
    const tools = server.tools.filter((t) => state.filter === 'all' || t.status === state.filter);
    const info = server.serverInfo || {};
    nodes.push(el('h2', {}, 'Server ', shown(server.keyShown)));
    nodes.push(el('p', {}, 'serverInfo: ', shown(info.name), ' ', shown(info.version)));
    const rows = tools.map((t) => el('tr', {},
      el('td', {}, el('a', { href: toolLink(server.key, t.name) }, shown(t.nameShown))),
      el('td', {}, t.title ? shown(t.title) : ''),
      el('td', { class: 'status-' + t.status, text: t.status }),
      el('td', { text: t.hidden ? t.hidden + ' hidden' : '' })));
    nodes.push(el('table', {},
      el('caption', { text: tools.length + ' of ' + server.tools.length + ' tools' }),
      el('thead', {}, el('tr', {}, ['tool', 'title', 'status', 'hidden characters'].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, rows)));
  }
  show(...nodes);
  document.getElementById('filter').focus();
}

// ---- Tool page -----------------------------------------------------------------------
function tree(node, key) {
  const label = key === undefined ? [] : [el('span', { class: 'key' }, typeof key === 'number' ? String(key) : shown(key)), ': '];
  if (node.t === 'object' || node.t === 'array') {
    const open = node.t === 'object' ? '{' + node.c.length + '}' : '[' + node.c.length + ']';
    const children = node.c.map((child, i) => tree(child, node.t === 'object' ? child.k : i));
    return el('li', {}, el('details', { open: true }, el('summary', {}, label, open), el('ul', {}, children)));
  }
  return el('li', {}, label, shown(node.v, 'v-' + node.t));
}

function treeSection(title, node, note) {
  const section = [el('h2', { text: title })];
  if (note) section.push(el('p', { class: 'hint', text: note }));
  section.push(node ? el('ul', { class: 'tree' }, tree(node)) : el('p', { text: '(absent)' }));
  return section;
}

function stated(value) { return value === true ? 'true' : value === false ? 'false' : ''; }

function select(id, label, options, value) {
  return el('div', { class: 'field' },
    el('label', { for: id, text: label }),
    el('select', { id, 'aria-describedby': id + '-error' },
      options.map(([v, text]) => el('option', { value: v, text, selected: v === value }))),
    el('p', { class: 'field-error', id: id + '-error', 'aria-live': 'polite' }));
}

function textField(id, label, value, multiline) {
  const input = multiline ? el('textarea', { id, rows: 3 }) : el('input', { id, type: 'text', autocomplete: 'off' });
  input.value = value || '';
  input.setAttribute('aria-describedby', id + '-error');
  return el('div', { class: 'field' }, el('label', { for: id, text: label }), input,
    el('p', { class: 'field-error', id: id + '-error', 'aria-live': 'polite' }));
}

function reviewForm(tool) {
  const r = tool.review || {};
  const a = r.assertions || {};
  const yesNo = [['', '(not stated)'], ['true', 'true'], ['false', 'false']];
  const sideEffects = Array.isArray(a.sideEffects) ? (a.sideEffects.length ? 'listed' : 'none') : '';
  const channels = r.inputChannels || {};
  const channelFields = tool.argumentPointers.map((p, i) => {
    const id = 'f-channel-' + i;
    return el('div', { class: 'field' },
      el('label', { for: id }, shown(p.shown)),
      el('select', { id, 'data-pointer': p.pointer, 'aria-describedby': id + '-error' },
        [['', '(not classified)'], ['data', 'data'], ['instruction', 'instruction'], ['authority', 'authority']]
          .map(([v, text]) => el('option', { value: v, text, selected: channels[p.pointer] === v }))),
      el('p', { class: 'field-error', id: id + '-error', 'aria-live': 'polite' }));
  });
  const form = el('form', { class: 'review', id: 'review-form', novalidate: true, onsubmit: (e) => { e.preventDefault(); saveReview(tool); } },
    el('h2', { text: 'Review' }),
    textField('f-reviewer', 'reviewer', r.reviewer),
    el('fieldset', {}, el('legend', { text: 'Assertions' }),
      select('f-headless', 'headless', yesNo, stated(a.headless)),
      select('f-independentCalls', 'independentCalls', yesNo, stated(a.independentCalls)),
      select('f-modelBacked', 'modelBacked', yesNo, stated(a.modelBacked)),
      select('f-sideEffects', 'sideEffects', [['', '(not stated)'], ['none', 'none (no side effects)'], ['listed', 'the classes below']], sideEffects),
      textField('f-sideEffectsList', 'side-effect classes (comma separated)', Array.isArray(a.sideEffects) ? a.sideEffects.join(', ') : ''),
      select('f-concurrency', 'concurrency', [['', '(not stated)'], ['safe', 'safe'], ['serialize', 'serialize']], a.concurrency || ''),
      select('f-serializeScope', 'serializeScope', [['', '(default: tool)'], ['tool', 'tool'], ['server', 'server']], a.serializeScope || ''),
      select('f-referenceBasedIO', 'referenceBasedIO', yesNo, stated(a.referenceBasedIO))),
    el('fieldset', { id: 'f-channels', 'aria-describedby': 'f-channels-error' }, el('legend', { text: 'Input channels (class per argument pointer)' }),
      channelFields.length ? channelFields : el('p', { text: 'The inputSchema has no properties.' }),
      el('p', { class: 'field-error', id: 'f-channels-error', 'aria-live': 'polite' })),
    textField('f-notes', 'notes', r.notes, true),
    el('p', { class: 'field-error', id: 'f-form-error', role: 'alert' }),
    el('p', {}, el('button', { type: 'submit', class: 'primary', id: 'save-review', text: 'Save review' })),
    el('div', { id: 'save-result', role: 'status', 'aria-live': 'polite' }));
  return form;
}

function reviewFromForm() {
  const value = (id) => document.getElementById(id).value;
  const assertions = {};
  for (const name of ASSERTIONS) {
    const v = value('f-' + name);
    if (v !== '') assertions[name] = v === 'true';
  }
  const sideEffects = value('f-sideEffects');
  if (sideEffects === 'none') assertions.sideEffects = [];
  if (sideEffects === 'listed') assertions.sideEffects = value('f-sideEffectsList').split(',').map((s) => s.trim()).filter((s) => s);
  if (value('f-concurrency')) assertions.concurrency = value('f-concurrency');
  if (value('f-serializeScope')) assertions.serializeScope = value('f-serializeScope');
  const inputChannels = {};
  for (const control of document.querySelectorAll('select[data-pointer]')) {
    if (control.value) inputChannels[control.dataset.pointer] = control.value;
  }
  const review = { reviewer: value('f-reviewer'), assertions, inputChannels };
  if (value('f-notes')) review.notes = value('f-notes');
  return review;
}

function escapeToken(token) { return token.replace(/~/g, '~0').replace(/\//g, '~1'); }

// The field an error pointer (relative to the review object) belongs to.
function fieldFor(pointer) {
  if (pointer === '/reviewer') return 'f-reviewer';
  if (pointer === '/notes') return 'f-notes';
  const assertion = /^\/assertions\/([A-Za-z]+)/.exec(pointer);
  if (assertion && document.getElementById('f-' + assertion[1])) return 'f-' + assertion[1];
  if (pointer.startsWith('/inputChannels')) {
    for (const control of document.querySelectorAll('select[data-pointer]')) {
      if (pointer === '/inputChannels/' + escapeToken(control.dataset.pointer)) return control.id;
    }
    return 'f-channels';
  }
  return 'f-form';
}

async function saveReview(tool) {
  for (const node of document.querySelectorAll('.field-error')) node.textContent = '';
  for (const node of document.querySelectorAll('[aria-invalid]')) node.removeAttribute('aria-invalid');
  const result = await api('review', { server: tool.server, tool: tool.name, baseSha256: tool.manifestSha256, review: reviewFromForm() });
  const out = document.getElementById('save-result');
  out.replaceChildren();
  if (!result.ok) {
    const error = result.data.error;
    const field = fieldFor(error.pointer || '');
    document.getElementById(field + '-error').textContent = error.message + ' [' + error.code + ']';
    const control = document.getElementById(field);
    if (control) { control.setAttribute('aria-invalid', 'true'); control.focus(); }
    return;
  }
  tool.manifestSha256 = result.data.sha256;
  out.append(el('p', { class: 'ok' }, 'Saved. The new manifestSha256 to pin: ',
    el('code', { class: 'digest', id: 'new-sha256', text: result.data.sha256 })));
}

async function renderTool(server, name) {
  if (!state.overview && !(await loadOverview())) return;
  const result = await api('tool?server=' + encodeURIComponent(server) + '&name=' + encodeURIComponent(name));
  if (!result.ok) { show(failure(result.data.error)); return; }
  const t = result.data;
  const nodes = [
    el('p', {}, el('a', { href: '#/', text: '← Overview' })),
    el('h1', { id: 'tool-name' }, 'Tool ', shown(t.nameShown)),
  ];
  if (t.hiddenNotice) nodes.push(el('p', { class: 'notice', role: 'alert', id: 'hidden-notice', text: t.hiddenNotice + ', each shown as a marker naming its code point' }));
  nodes.push(facts([
    ['server', shown(t.serverShown)],
    ['title', t.title ? shown(t.title) : '(absent)'],
    ['Tool SHA-256 (canonical)', el('code', { class: 'digest', id: 'tool-sha256', text: t.toolSha256 })],
  ]));
  nodes.push(el('h2', { text: 'Description' }),
    t.description ? el('div', { class: 'description', id: 'description' }, shown(t.description)) : el('p', { text: '(absent)' }));
  nodes.push(...treeSection('inputSchema', t.inputSchema));
  nodes.push(...treeSection('outputSchema', t.outputSchema));
  nodes.push(...treeSection('annotations', t.annotations, 'Annotations are hints from the server, not facts: udon-mcp decides nothing from them, your review does.'));
  nodes.push(...treeSection('execution', t.execution));
  nodes.push(reviewForm(t));
  show(...nodes);
}

// ---- Drift ---------------------------------------------------------------------------
function valueCell(node) {
  return node ? el('ul', { class: 'tree' }, tree(node)) : el('span', { text: '(absent)' });
}

function words(ops) {
  return el('div', { class: 'description' }, ops.map((op) => {
    const span = shown(op.s, op.op === '-' ? 'word-del' : op.op === '+' ? 'word-ins' : '');
    if (op.op === '-') return el('del', { 'aria-label': 'removed' }, span);
    if (op.op === '+') return el('ins', { 'aria-label': 'added' }, span);
    return span;
  }));
}

function differencesTable(list) {
  return el('table', {},
    el('thead', {}, el('tr', {}, ['pointer', 'change', 'old', 'new'].map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, list.map((d) => el('tr', {},
      el('td', {}, el('code', {}, shown(d.pointer))),
      el('td', { text: d.change }),
      // A changed text side by side: the old with its removed words, the new with its added.
      el('td', {}, d.words ? words(d.words.filter((op) => op.op !== '+')) : valueCell(d.old)),
      el('td', {}, d.words ? words(d.words.filter((op) => op.op !== '-')) : valueCell(d.new))))));
}

async function renderDrift() {
  if (!state.overview && !(await loadOverview())) return;
  const result = await api('drift');
  if (!result.ok) { show(failure(result.data.error)); return; }
  const d = result.data;
  const nodes = [el('h1', { text: 'Drift against ' + d.baseline })];
  if (d.identical) nodes.push(el('p', { class: 'ok', text: 'The manifests are identical.' }));
  else if (!d.significant) nodes.push(el('p', { class: 'ok', text: 'Only the capture instants differ.' }));
  if (d.topLevel.length) nodes.push(el('h2', { text: 'Manifest' }), differencesTable(d.topLevel));
  for (const server of d.servers) {
    nodes.push(el('h2', {}, 'Server ', shown(server.server), ': ' + server.status));
    if (server.serverInfo.length) nodes.push(el('h3', { text: 'serverInfo' }), differencesTable(server.serverInfo));
    for (const tool of server.tools) {
      const heading = el('h3', { class: 'drift-tool' }, 'Tool ', shown(tool.nameShown), ': ' + tool.status);
      if (tool.renamedFrom) heading.append(' (from ', shown(tool.renamedFrom), ')');
      nodes.push(heading);
      if (tool.differences.length) nodes.push(differencesTable(tool.differences));
    }
  }
  const carry = d.carryOver;
  nodes.push(el('h2', { text: 'Carry over reviews' }),
    el('p', { text: carry.kept.length + ' review(s) of unchanged tools can be carried over; ' + carry.dropped.length +
      ' would be dropped (the tool changed, was removed or is ambiguous). The rule of capture --update.' }));
  if (carry.kept.length) {
    nodes.push(el('p', {}, el('button', { type: 'button', class: 'primary', id: 'carry-over', onclick: () => carryOver(d) }, 'Carry over ' + carry.kept.length + ' review(s)')));
  }
  nodes.push(el('div', { id: 'carry-result', role: 'status', 'aria-live': 'polite' }));
  show(...nodes);
}

async function carryOver(drift) {
  const result = await api('carry-over', { baseSha256: drift.manifestSha256 });
  const out = document.getElementById('carry-result');
  if (!result.ok) { out.replaceChildren(failure(result.data.error)); return; }
  out.replaceChildren(el('p', { class: 'ok' }, 'Carried over ' + result.data.report.kept.length + ' review(s). The new manifestSha256 to pin: ',
    el('code', { class: 'digest', id: 'carry-sha256', text: result.data.sha256 })));
}

// ---- Routing -------------------------------------------------------------------------
async function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  if (parts[0] === 'tool' && parts.length === 3) {
    await renderTool(decodeURIComponent(parts[1]), decodeURIComponent(parts[2]));
  } else if (parts[0] === 'drift') {
    await renderDrift();
  } else {
    const o = await loadOverview();
    if (o) renderOverview(o);
  }
  document.body.dataset.ready = location.hash || '#/';
}

window.addEventListener('hashchange', () => { document.body.dataset.ready = ''; route(); });
route();
