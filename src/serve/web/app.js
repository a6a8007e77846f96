// The kforge page: runs, a run's graph (live), a node's code and diff, and steering of chat runs.
// Every API call carries the session token from the URL's fragment (never sent to the server).
'use strict';

const params = new URLSearchParams(location.hash.slice(1));
const token = params.get('token') || sessionStorage.getItem('kforge-token') || '';
sessionStorage.setItem('kforge-token', token);
const state = { run: params.get('run') || '', node: params.get('node') || '', events: null };
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
  // The SVG is drawn by the server's report code, every text in it escaped.
  $('graph').innerHTML = r.tree_svg;
  $('curve').innerHTML = r.curve_svg;
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
  $('roofline').firstElementChild.style.width = Math.min(100, 100 * (roof.fraction || 0)) + '%';
  const plan = n.plan || {};
  $('plan').textContent = ['analysis', 'bottleneck', 'why'].filter((f) => plan[f]).map((f) => f + ': ' + plan[f]).join('\n');
  $('code').innerHTML = n.code_html;  // highlighted by the server, every text escaped
  const diff = $('diff');
  diff.replaceChildren();
  for (const line of (n.diff || '(the first node: no parent)').split('\n')) {
    const cls = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : undefined;
    diff.append(el('span', line + '\n', cls));
  }
  $('edit-source').value = n.source;
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
    const r = await api('/api/runs/' + encodeURIComponent(state.run) + '/edit', { source: $('edit-source').value, node: state.node });
    $('answer').textContent = r.answer;
    state.node = r.current;
  } catch (e) {
    $('answer').textContent = 'error: ' + e.message;
  }
  await showRun();
});

loadRuns().then(() => (state.run ? openRun(state.run) : null)).catch((e) => say(e.message, true));
