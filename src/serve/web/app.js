// The kforge page: runs, a run's graph (live), a node's code and diff, and steering of chat runs.
// Every API call carries the session token from the URL's fragment (never sent to the server).
'use strict';

const params = new URLSearchParams(location.hash.slice(1));
const token = params.get('token') || sessionStorage.getItem('kforge-token') || '';
sessionStorage.setItem('kforge-token', token);
const state = { run: params.get('run') || '', node: params.get('node') || '', events: null,
  graph: null, chart: null, editor: null };
const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const opts = { headers: { 'X-Kforge-Token': token } };
  if (body !== undefined) {
    opts.method = 'POST';
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  const json = await res.json().catch(() => ({ error: 'not JSON: HTTP ' + res.status }));
  if (!res.ok) throw new Error(json.error || 'HTTP ' + res.status);
  return json;
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

const ms = (s) => (s > 0 ? (1e3 * s).toFixed(3) + ' ms' : '-');

function setHash() {
  const p = new URLSearchParams({ token });
  if (state.run) p.set('run', state.run);
  if (state.node) p.set('node', state.node);
  history.replaceState(null, '', '#' + p.toString());
}

function say(text, bad) {
  $('status').textContent = text;
  $('status').className = bad ? 'bad' : 'sub';
}

async function loadRuns() {
  const { runs } = await api('/api/runs');
  const ul = $('runs');
  ul.replaceChildren();
  for (const r of runs) {
    const li = el('li');
    if (r.id === state.run) li.className = 'sel';
    const a = el('a', r.task + ' · ' + r.mode);
    a.dataset.run = r.id;
    a.addEventListener('click', () => openRun(r.id));
    li.append(a, el('div', r.id + ' · ' + r.state + ' · best ' + ms(r.best_median_s), 'sub'));
    ul.append(li);
  }
  say(runs.length + ' runs');
}

async function openRun(id) {
  if (state.run !== id) state.node = '';
  state.run = id;
  setHash();
  await showRun();
  if (state.events) state.events.close();
  state.events = new EventSource('/api/runs/' + encodeURIComponent(id) + '/events?token=' + encodeURIComponent(token));
  state.events.addEventListener('update', () => showRun().catch((e) => say(e.message, true)));
  loadRuns().catch(() => {});
}

async function showRun() {
  const r = await api('/api/runs/' + encodeURIComponent(state.run));
  $('run').hidden = false;
  $('run-title').textContent = r.run.task + ' — ' + r.run.mode + ' run ' + r.run.id;
  $('run-sub').textContent = r.run.state + ' · brain ' + r.run.brain + ' · ' + r.nodes.length +
      ' nodes · reference ' + ms(r.reference_s) + ' · library ' + ms(r.library_s);
  drawGraph(r);
  drawCurve(r);
  const body = $('nodes').tBodies[0];
  body.replaceChildren();
  for (const n of r.nodes) {
    const tr = el('tr');
    tr.dataset.key = n.key;
    if (n.key === r.current) tr.classList.add('cur');
    if (n.best) tr.classList.add('best');
    const a = el('a', n.label || n.key.slice(0, 10));
    a.addEventListener('click', () => showNode(n.key));
    const move = el('td');
    move.append(a);
    tr.append(el('td', '#' + n.n), move, el('td', n.proposer), el('td', n.verdict, n.verdict === 'ok' ? 'ok' : 'bad'),
        el('td', ms(n.median_s), 'r'), el('td', r.reference_s > 0 && n.median_s > 0 ? (r.reference_s / n.median_s).toFixed(2) + 'x' : '-', 'r'));
    body.append(tr);
  }
  $('steer').hidden = !r.steerable;
  $('editor').hidden = !r.steerable;
  const show = state.node || r.current || r.run.best_candidate;
  if (show) await showNode(show);
}

async function showNode(key) {
  state.node = key;
  setHash();
  const n = await api('/api/runs/' + encodeURIComponent(state.run) + '/nodes/' + encodeURIComponent(key));
  $('node').hidden = false;
  const move = n.move ? n.move.text + ' [' + n.move.proposer + ']' : n.origin;
  $('node-title').textContent = 'Node ' + key.slice(0, 12) + ': ' + move;
  const t = n.result.timing || {};
  const roof = n.result.roofline || {};
  $('node-sub').textContent = n.result.verdict + (n.result.message ? ' — ' + n.result.message : '') +
      ' · median ' + ms(t.median_s) + ' · min ' + ms(t.min_s) + ' · ' + n.kind +
      (roof.fraction !== undefined ? ' · ' + (100 * roof.fraction).toFixed(0) + '% of the roofline' : '');
  drawRoofline(roof);
  const plan = n.plan || {};
  $('plan').textContent = ['analysis', 'bottleneck', 'why'].filter((f) => plan[f]).map((f) => f + ': ' + plan[f]).join('\n');
  const findings = $('findings');
  findings.replaceChildren();
  const profile = n.profile || {};
  for (const f of profile.findings || []) findings.append(el('li', f));
  if (profile.bound && !(profile.findings || []).length)
    findings.append(el('li', profile.bound + '-bound at ' + (100 * profile.fraction).toFixed(0) + '% of the attainable roofline'));
  if (!n.profile) findings.append(el('li', 'no profile yet: the `profile` command makes one', 'sub'));
  $('code').innerHTML = n.code_html;  // highlighted by the server, every text escaped
  const diff = $('diff');
  diff.replaceChildren();
  for (const line of (n.diff || '(the first node: no parent)').split('\n')) {
    const cls = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : undefined;
    diff.append(el('span', line + '\n', cls));
  }
  editor().setValue(n.source);
  editor().refresh();  // it may have been made while its box was hidden
}

const verdictColour = (v) => (v === 'ok' ? '#2e7d32' : v === 'duplicate' ? '#9e9e9e' : '#c62828');

// The graph, laid out by cytoscape (a tree from the first node); a click opens a node. Labels are
// set as data, which cytoscape draws as text.
function drawGraph(r) {
  const keys = new Set(r.nodes.map((n) => n.key));
  const elements = [];
  for (const n of r.nodes) {
    // A short label under each node (its number and time): the moves are in the table beside it.
    elements.push({ data: { id: n.key, label: '#' + n.n + (n.median_s > 0 ? '\n' + ms(n.median_s) : ''),
      colour: verdictColour(n.verdict), border: n.best ? '#f9a825' : n.proposer === 'human' ? '#1565c0' : '#ffffff' } });
    if (n.parent && keys.has(n.parent) && n.parent !== n.key) elements.push({ data: { id: n.parent + '>' + n.key, source: n.parent, target: n.key } });
  }
  if (state.graph) state.graph.destroy();
  state.graph = cytoscape({
    container: $('graph'),
    elements,
    style: [
      { selector: 'node', style: { 'background-color': 'data(colour)', 'border-width': 3, 'border-color': 'data(border)', label: 'data(label)',
        'font-size': 9, 'text-valign': 'bottom', 'text-halign': 'center', 'text-wrap': 'wrap', 'text-margin-y': 2, width: 12, height: 12 } },
      { selector: 'edge', style: { width: 1, 'line-color': '#90a4ae', 'target-arrow-color': '#90a4ae', 'target-arrow-shape': 'triangle', 'curve-style': 'bezier', 'arrow-scale': 0.6 } },
    ],
    layout: { name: 'breadthfirst', directed: true, spacingFactor: 1.1, roots: r.nodes.length ? [r.nodes[0].key] : undefined },
    wheelSensitivity: 0.2,
  });
  state.graph.on('tap', 'node', (ev) => showNode(ev.target.id()).catch((e) => say(e.message, true)));
}

// Best so far over evaluations (Chart.js, log axis), every timed evaluation a dot, the reference
// and the library as dashed lines.
function drawCurve(r) {
  const dots = r.curve.filter((p) => p.median_s > 0).map((p) => ({ x: p.evaluation, y: 1e3 * p.median_s }));
  const best = [];
  let low = Infinity;
  for (const p of r.curve) {
    if (p.median_s > 0) low = Math.min(low, 1e3 * p.median_s);
    if (low < Infinity) best.push({ x: p.evaluation, y: low });
  }
  const n = Math.max(1, r.curve.length);
  const line = (s) => (s > 0 ? [{ x: 1, y: 1e3 * s }, { x: n, y: 1e3 * s }] : []);
  const data = { datasets: [
    { type: 'line', label: 'best so far', data: best, stepped: true, borderColor: '#2e7d32', pointRadius: 0 },
    { type: 'scatter', label: 'evaluations', data: dots, backgroundColor: '#78909c' },
    { type: 'line', label: 'reference', data: line(r.reference_s), borderColor: '#c62828', borderDash: [6, 4], pointRadius: 0 },
    { type: 'line', label: 'library', data: line(r.library_s), borderColor: '#1e88e5', borderDash: [6, 4], pointRadius: 0 },
  ] };
  if (state.chart) {
    state.chart.data = data;
    state.chart.update('none');
    return;
  }
  state.chart = new Chart($('curve-chart'), {
    data,
    options: { animation: false, maintainAspectRatio: false, scales: {
      x: { type: 'linear', title: { display: true, text: 'evaluation' }, ticks: { precision: 0 } },
      y: { type: 'logarithmic', title: { display: true, text: 'median (ms)' } } } },
  });
}

// The node on the roofline (Chart.js, log-log): the machine's roof, min(peak FLOP/s, bandwidth x
// intensity), and the node's achieved GFLOP/s at its arithmetic intensity.
function drawRoofline(roof) {
  const canvas = $('roofline-chart');
  if (state.roofChart) state.roofChart.destroy();
  state.roofChart = null;
  if (!(roof.flops > 0 && roof.bytes > 0 && roof.peak_gflops > 0 && roof.peak_gbps > 0)) return;
  const ai = roof.flops / roof.bytes, ridge = roof.peak_gflops / roof.peak_gbps;
  const lo = Math.min(ai, ridge) / 8, hi = Math.max(ai, ridge) * 8;
  const roofAt = (x) => Math.min(roof.peak_gflops, roof.peak_gbps * x);
  state.roofChart = new Chart(canvas, {
    data: { datasets: [
      { type: 'line', label: 'roof', data: [lo, ridge, hi].map((x) => ({ x, y: roofAt(x) })), borderColor: '#455a64', pointRadius: 0 },
      { type: 'scatter', label: 'this node (' + (100 * roof.fraction).toFixed(0) + '%)', data: [{ x: ai, y: roof.gflops }], backgroundColor: '#1e88e5', pointRadius: 6 },
    ] },
    options: { animation: false, maintainAspectRatio: false, scales: {
      x: { type: 'logarithmic', title: { display: true, text: 'FLOP per byte' } },
      y: { type: 'logarithmic', title: { display: true, text: 'GFLOP/s' } } } },
  });
}

// The code editor (CodeMirror, C++ mode) over the edit box, made once.
function editor() {
  if (!state.editor) state.editor = CodeMirror.fromTextArea($('edit-source'), { mode: 'text/x-c++src', lineNumbers: true, indentUnit: 2 });
  return state.editor;
}

async function command(line) {
  $('answer').textContent = '… ' + line;
  try {
    const r = await api('/api/runs/' + encodeURIComponent(state.run) + '/command', { line });
    $('answer').textContent = r.answer;
    state.node = r.current;
  } catch (e) {
    $('answer').textContent = 'error: ' + e.message;
  }
  await showRun();
}

$('command-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const line = $('command').value.trim();
  if (line) command(line);
});
for (const b of document.querySelectorAll('button[data-cmd]')) b.addEventListener('click', () => command(b.dataset.cmd));
$('stop').addEventListener('click', async () => {
  try {
    await api('/api/runs/' + encodeURIComponent(state.run) + '/stop', {});
  } catch (e) {
    say(e.message, true);
  }
});
$('edit-judge').addEventListener('click', async () => {
  $('answer').textContent = '… judging the edit';
  try {
    const r = await api('/api/runs/' + encodeURIComponent(state.run) + '/edit', { source: editor().getValue(), node: state.node });
    $('answer').textContent = r.answer;
    state.node = r.current;
  } catch (e) {
    $('answer').textContent = 'error: ' + e.message;
  }
  await showRun();
});

loadRuns().then(() => (state.run ? openRun(state.run) : null)).catch((e) => say(e.message, true));
