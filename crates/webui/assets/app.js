// The build page: ask for a build, watch it come alive, look at past builds. State lives on
// the server (the event log); the page is a view of it, so a reload or a dropped connection
// rebuilds exactly what was shown. The URL's #build=ID names the build on screen.

import { describe, translator, viewerLang, commandLine } from './narrate.js';
import { highlightInto } from './highlight.js';
import { follow } from './stream.js';
import { showDashboard } from './dashboard.js';
import { showSpend } from './spend.js';
import { showApps } from './apps.js';
import { mountClasses, showSharing, loadShared, showClasses } from './classes.js';
import { mountFeedback, showFeedback, offerFeedback, hideFeedback } from './feedback.js';
import { showChat, hideChat } from './chat.js';
import { $, api, el } from './dom.js';
import { plainError, showError } from './errors.js';
import { mountTaskForm, showTasks, taskEvent, clearTasks, offerProject } from './tasks.js';
import { watchLimit, refreshLimits, setLimitsLang } from './limits.js';

const lang = viewerLang();
const t = translator(lang);
const DRAFT_KEY = 'wright.draft';
/// Events older than this page are replayed history: they get their lines, not pop-ups.
const LOADED_AT = Date.now();

function translatePage() {
  document.documentElement.lang = lang === 'pt' ? 'pt-BR' : 'en';
  for (const node of document.querySelectorAll('[data-t]')) node.textContent = t(node.dataset.t);
  $('prompt').setAttribute('placeholder', t('ask.example'));
  $('lang').value = lang;
}

// ---- the build on screen -------------------------------------------------------------------

let current = null; // the build on screen: see `open`

function clearView() {
  if (current?.follower) current.follower.stop();
  for (const id of ['narration', 'tests', 'files', 'terminal']) $(id).replaceChildren();
  clearTasks();
  $('code').firstElementChild.replaceChildren();
  $('preview').removeAttribute('src');
  $('preview').hidden = false;
  $('no-preview').hidden = true;
  $('app-link').hidden = true;
  $('fixes').hidden = true;
  $('more').hidden = true;
  $('more-error').textContent = '';
  hideFeedback();
  $('explain').hidden = true;
  $('explain-left').hidden = true;
  $('download').hidden = false;
  $('explain-box').hidden = true;
  $('explanation').textContent = '';
  $('meter').textContent = '';
  $('phase').textContent = '';
  delete $('phase').dataset.phase;
  $('code-h').textContent = t('view.code');
  $('conn').textContent = '';
}

async function open(id) {
  clearView();
  // `pinned`: the person chose a file; until then the code view follows the latest write.
  const me = { id, files: new Map(), tokens: 0, cost: 0, selected: null, pinned: false, previewUrl: null, reloadTimer: null, codeTimer: null };
  current = me;
  $('view').hidden = false;
  $('download').href = `/api/builds/${encodeURIComponent(id)}/archive`;
  $('download').setAttribute('download', `${id}.zip`);
  let build;
  try {
    build = await api(`/api/builds/${encodeURIComponent(id)}`);
  } catch (err) {
    if (me === current) addLine({ ...plainError(err, t), tone: 'error' });
    return;
  }
  // Another build (or the dashboard) took the screen while this one was asked for.
  if (me !== current) return;
  $('view-title').textContent = build.prompt;
  me.kind = build.kind;
  me.previewUrl = build.preview_url || null;
  // A Python, Rust or Go program has no page: the pane says so instead of staying blank.
  const program = ['python', 'rust', 'go'].includes(build.template);
  $('preview').hidden = program;
  $('no-preview').hidden = !program;
  if (build.app) showApp(build.app);
  const ended = build.status === 'published' || build.status === 'failed';
  // Someone else's build (shared, or a student's) is read-only: it may be copied, not changed.
  me.own = showSharing(build, $('more').querySelector('label'), $('more-go'));
  showFeedback(build, me.own);
  $('cancel').hidden = ended || !me.own;
  // A task run's project is kept working on with another task file, not a prompt.
  $('more').hidden = !ended || me.kind === 'task';
  $('explain').hidden = !ended || !me.own;
  $('explain-left').hidden = !ended || !me.own;
  if (ended && me.own) offerProject(id);
  if (me.kind === 'task') {
    showTasks(id, t).catch((err) => me === current && addLine({ text: err.message, tone: 'error' }));
  }
  if (build.status === 'queued') $('phase').textContent = t('phase.queued');
  me.follower = follow(id, {
    after: 0,
    onEvent: (e) => me === current && show(e),
    onState: (s) => me === current && connection(s),
  });
}

function connection(state) {
  const conn = $('conn');
  conn.dataset.state = state;
  conn.textContent = state === 'live' ? t('conn.live') : state === 'reconnecting' ? t('conn.reconnecting') : '';
}

function addLine({ text, tone, detail }, seq) {
  const list = $('narration');
  const item = el('li', { class: `line ${tone}` }, text);
  if (detail) item.append(details(detail));
  if (seq !== undefined) item.dataset.seq = String(seq);
  list.append(item);
  list.scrollTop = list.scrollHeight;
}

/// The technical reason behind words meant for a person, folded away.
function details(text) {
  const box = el('details', { class: 'detail' });
  box.append(el('summary', {}, t('error.details')), el('pre', {}, text));
  return box;
}

function toast(text, tone) {
  const box = el('div', { class: `toast ${tone}`, role: 'status' }, text);
  $('toasts').append(box);
  setTimeout(() => box.remove(), 4000);
}

function show(e) {
  const line = describe(e, t, current);
  if (line) {
    addLine(line, e.seq);
    if (line.toast && Date.parse(e.ts) > LOADED_AT - 3000) toast(line.toast, line.tone);
  }
  switch (e.type) {
    case 'phase':
      $('phase').textContent = e.phase === 'FIXING' ? `${t('phase.FIXING')} · ${t('fix.attempt', { n: e.iteration })}` : t(`phase.${e.phase}`);
      $('phase').dataset.phase = e.phase;
      if (e.phase === 'FIXING') {
        $('fixes').hidden = false;
        $('fixes').textContent = t('fix.attempt', { n: e.iteration });
      }
      break;
    case 'file_written':
      fileChanged(e.path);
      break;
    case 'file_deleted':
      current.files.delete(e.path);
      renderFiles();
      break;
    case 'restarted':
      // The run starts again from the folder as it was before it: its files come again.
      current.files.clear();
      renderFiles();
      $('fixes').hidden = true;
      break;
    case 'command_started':
      terminal(`$ ${commandLine(e)}\n`, 'cmd');
      break;
    case 'command_output':
      terminal(e.chunk, e.stream);
      break;
    case 'command_finished':
      terminal(`[exit ${e.exit_code ?? 'killed'} · ${(e.duration_ms / 1000).toFixed(1)} s]\n`, 'cmd');
      break;
    case 'tests_finished':
      testRun(e);
      break;
    case 'task_started':
    case 'task_finished':
      taskEvent(e, t);
      break;
    case 'usage':
      current.tokens += e.input_tokens + e.output_tokens;
      current.cost += e.cost_usd;
      meter();
      break;
    case 'complete':
      current.tokens = e.input_tokens + e.output_tokens;
      current.cost = e.cost_usd;
      meter();
      $('cancel').hidden = true;
      $('more').hidden = current.kind === 'task';
      if (current.own) offerProject(current.id);
      if (current.kind !== 'task') offerFeedback(current.id, current.own);
      // A build that wrote nothing has no code to explain, no page to show and nothing to download.
      $('explain').hidden = e.files.length === 0 || !current.own;
      $('explain-left').hidden = e.files.length === 0 || !current.own;
      $('download').hidden = e.files.length === 0;
      for (const f of e.files) if (!current.files.has(f)) current.files.set(f, { fresh: false });
      renderFiles();
      // A task run's project may be no page at all (a library, a script).
      if (e.files.length > 0 && (current.kind !== 'task' || current.files.has('index.html'))) refreshPreview(true);
      loadHistory();
      if (e.app) showApp(e.app);
      break;
    default:
  }
}

/// A published build's address (docs/apps.md): `/apps/<slug>` sends the browser on to the
/// app's own origin.
function showApp(app) {
  const link = $('app-link');
  link.href = app.url_path;
  link.textContent = t('view.app', { path: app.url_path });
  link.title = app.description;
  link.hidden = false;
}

function meter() {
  $('meter').textContent = t('meter', { tokens: current.tokens.toLocaleString(lang), cost: current.cost.toFixed(4) });
}

function terminal(text, stream) {
  const term = $('terminal');
  term.append(el('span', { class: `out ${stream}` }, text));
  // Keep the pane bounded: the full output stays in the event log.
  while (term.childNodes.length > 2000) term.firstChild.remove();
  term.scrollTop = term.scrollHeight;
}

function testRun(e) {
  const box = el('div', { class: `run ${e.failed > 0 ? 'failed' : 'passed'}` });
  box.append(el('p', {}, t('line.tests', e)));
  if (e.errors?.length) {
    const list = el('ul');
    for (const err of e.errors) {
      const item = el('li');
      item.append(el('strong', {}, err.test || ''), document.createTextNode(' '), el('span', {}, err.error || ''));
      if (err.location) item.append(el('code', {}, ` ${err.location}`));
      list.append(item);
    }
    box.append(list);
  }
  $('tests').append(box);
}

function fileChanged(path) {
  current.files.set(path, { fresh: true });
  renderFiles();
  if (!current.pinned || current.selected === path) {
    // A replay writes many files in a row: fetch only the one the view settles on.
    clearTimeout(current.codeTimer);
    const me = current;
    current.codeTimer = setTimeout(() => me === current && showFile(path), 150);
  }
  refreshPreview(false);
}

function renderFiles() {
  const tree = $('files');
  tree.replaceChildren();
  for (const path of [...current.files.keys()].sort()) {
    const info = current.files.get(path);
    const depth = path.split('/').length - 1;
    const item = el('li', {
      role: 'treeitem',
      tabindex: '0',
      class: `file${info.fresh ? ' fresh' : ''}${current.selected === path ? ' selected' : ''}`,
      'aria-selected': String(current.selected === path),
    }, path);
    item.style.paddingLeft = `${0.5 + depth}rem`;
    item.addEventListener('click', () => showFile(path, true));
    item.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        showFile(path, true);
      } else if (ev.key === 'ArrowDown') item.nextElementSibling?.focus();
      else if (ev.key === 'ArrowUp') item.previousElementSibling?.focus();
    });
    tree.append(item);
    if (info.fresh) setTimeout(() => { info.fresh = false; item.classList.remove('fresh'); }, 1500);
  }
}

async function showFile(path, chosen = false) {
  const me = current;
  me.selected = path;
  me.pinned ||= chosen;
  for (const item of $('files').children) {
    const on = item.textContent === path;
    item.classList.toggle('selected', on);
    item.setAttribute('aria-selected', String(on));
  }
  try {
    const res = await fetch(`/api/builds/${encodeURIComponent(me.id)}/files/${path.split('/').map(encodeURIComponent).join('/')}`, { credentials: 'same-origin' });
    const text = res.ok ? await res.text() : `(${res.status})`;
    if (me !== current || me.selected !== path) return;
    $('code-h').textContent = `${t('view.code')} · ${path}`;
    highlightInto($('code').firstElementChild, text, path);
  } catch {
    // The next file_written shows it again.
  }
}

function refreshPreview(now) {
  if (!current.previewUrl) return;
  clearTimeout(current.reloadTimer);
  const me = current;
  current.reloadTimer = setTimeout(() => {
    if (me !== current) return;
    const frame = $('preview');
    const url = new URL(me.previewUrl);
    url.searchParams.set('v', String(Date.now()));
    frame.src = url.toString();
  }, now ? 0 : 600);
}

// ---- asking for a build --------------------------------------------------------------------

/// Ask for a build (or, with `body.continue`, a follow-up on that build's project) and show it.
async function startBuild(body, button, errorBox) {
  errorBox.textContent = '';
  if (body.prompt.length < 10) {
    errorBox.textContent = t('err.prompt');
    return false;
  }
  button.disabled = true;
  try {
    const made = await api('/api/builds', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': requestKey() },
      body: JSON.stringify(body),
    });
    location.hash = `build=${made.id}`;
    $('cancel').hidden = false;
    loadHistory();
    return true;
  } catch (err) {
    showError(errorBox, err, t);
    return false;
  } finally {
    button.disabled = false;
    refreshLimits();
  }
}

async function submit(ev) {
  ev.preventDefault();
  const body = { prompt: $('prompt').value.trim(), template: $('template').value, lang: $('lang').value };
  if ($('with-assistant').checked) body.assistant = true;
  if (await startBuild(body, $('build'), $('ask-error'))) {
    localStorage.removeItem(DRAFT_KEY);
    $('prompt').value = '';
  }
}

async function keepWorking(ev) {
  ev.preventDefault();
  if (!current) return;
  const body = { prompt: $('more-prompt').value.trim(), lang: $('lang').value, continue: current.id };
  if (await startBuild(body, $('more-go'), $('more-error'))) $('more-prompt').value = '';
}

/// A fresh key per request, so a retried POST returns the same build.
function requestKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function explain() {
  if (!current) return;
  const me = current;
  const button = $('explain');
  button.disabled = true;
  button.textContent = t('view.explaining');
  try {
    const body = await api(`/api/builds/${encodeURIComponent(me.id)}/explain`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ lang: $('lang').value }),
    });
    if (me !== current) return;
    $('explanation').textContent = body.explanation;
    $('explain-box').hidden = false;
  } catch (err) {
    toast(plainError(err, t).text, 'error');
  } finally {
    button.disabled = false;
    button.textContent = t('view.explain');
    refreshLimits();
  }
}

async function cancel() {
  if (!current) return;
  try {
    const runs = current.kind === 'task' ? 'tasks' : 'builds';
    await api(`/api/${runs}/${encodeURIComponent(current.id)}/cancel`, { method: 'POST' });
  } catch (err) {
    toast(plainError(err, t).text, 'error');
  }
}

// ---- history -------------------------------------------------------------------------------

async function loadHistory() {
  // Builds change what was spent: the header's line follows.
  showSpend(t);
  let builds;
  try {
    builds = await api('/api/builds');
  } catch {
    return;
  }
  const rows = $('history-rows');
  rows.replaceChildren();
  const list = Array.isArray(builds) ? builds : builds.builds || [];
  if (list.length === 0) {
    const row = el('tr');
    row.append(el('td', { colSpan: 6 }, t('history.none')));
    rows.append(row);
  }
  for (const b of list) {
    const row = el('tr');
    const link = el('a', { href: `#build=${b.id}` }, b.prompt);
    const what = el('td');
    what.append(link);
    row.append(
      what,
      el('td', { class: `status ${b.status}` }, t(`status.${b.status}`)),
      el('td', {}, b.template),
      el('td', {}, String(b.fix_attempts)),
      el('td', {}, b.duration_ms == null ? '' : `${(b.duration_ms / 1000).toFixed(1)} s`),
      el('td', {}, `$${(b.cost_usd || 0).toFixed(4)}`),
    );
    rows.append(row);
  }
  // Shown beside the builds only (the chat, the apps and the dashboard have the page to themselves).
  $('history').hidden = ownPage() !== null;
  loadShared();
}

// ---- start ---------------------------------------------------------------------------------

let admin = false;

/// The view that has the page to itself ('chat', 'apps', 'admin'), or null for the builds.
function ownPage() {
  if (location.hash === '#chat' || location.hash.startsWith('#chat=')) return 'chat';
  if (location.hash === '#apps') return 'apps';
  if (location.hash === '#classes') return 'classes';
  if (admin && location.hash === '#admin') return 'admin';
  return null;
}

function route() {
  const page = ownPage();
  const [onChat, onApps, onDashboard] = [page === 'chat', page === 'apps', page === 'admin'];
  $('dashboard').hidden = !onDashboard;
  $('apps').hidden = !onApps;
  $('classes').hidden = page !== 'classes';
  for (const id of ['ask', 'ask-tasks', 'history']) $(id).hidden = page !== null;
  const navs = [['nav-build', page === null], ['nav-apps', onApps], ['nav-chat', onChat], ['nav-admin', onDashboard], ['nav-classes', page === 'classes']];
  for (const [id, on] of navs) {
    if (on) $(id).setAttribute('aria-current', 'page');
    else $(id).removeAttribute('aria-current');
  }
  if (page !== null) {
    if (current?.follower) current.follower.stop();
    current = null;
    $('view').hidden = true;
  }
  if (onChat) {
    const m = /^#chat=([\w.-]+)/.exec(location.hash);
    showChat(t, lang, m ? m[1] : null);
    return;
  }
  hideChat();
  if (onDashboard) {
    showDashboard(t);
    return;
  }
  if (onApps) {
    showApps(t, lang);
    return;
  }
  if (page === 'classes') {
    showClasses(lang);
    return;
  }
  const m = /build=([\w.-]+)/.exec(location.hash);
  if (m && m[1] !== current?.id) open(m[1]);
  if (!m) {
    if (current?.follower) current.follower.stop();
    current = null;
    $('view').hidden = true;
  }
}

async function start() {
  translatePage();
  let me;
  try {
    me = await api('/api/me');
  } catch (err) {
    $('signin').hidden = false;
    return;
  }
  $('who').textContent = me.name;
  admin = me.role === 'admin';
  $('nav-admin').hidden = !admin;
  for (const node of [$('more').querySelector('label'), $('more-go')]) node.dataset.ownText = node.textContent;
  mountClasses(lang, me);
  mountFeedback(lang);
  showSpend(t);
  $('ask').hidden = false;
  $('prompt').value = localStorage.getItem(DRAFT_KEY) || '';
  $('prompt').addEventListener('input', () => localStorage.setItem(DRAFT_KEY, $('prompt').value));
  $('ask').addEventListener('submit', submit);
  $('cancel').addEventListener('click', cancel);
  $('more').addEventListener('submit', keepWorking);
  $('explain').addEventListener('click', explain);
  setLimitsLang(lang);
  watchLimit('explanations', $('explain'), $('explain-left'), () => t('view.explain'));
  watchLimit('builds', $('build'), $('build-left'), () => 'Build');
  watchLimit('chat_messages', $('chat-send'), $('chat-left'), () => t('chat.send'));
  refreshLimits();
  $('ask-tasks').hidden = false;
  mountTaskForm(t, requestKey, (id) => {
    location.hash = `build=${id}`;
    $('cancel').hidden = false;
    loadHistory();
  });
  window.addEventListener('hashchange', route);
  route();
  loadHistory();
  suggest();
  mountOwnAssistant();
}

/// wright's own in-app assistant (bottom right): it reads and operates this page and searches
/// wright's documents. Loaded from `/assistant/` so its accessibility library resolves there.
async function mountOwnAssistant() {
  try {
    const { mountAssistant } = await import('/assistant/assistant.js');
    mountAssistant({ endpoint: '', lang });
  } catch (err) {
    console.warn('the assistant could not be loaded', err);
  }
}

/// Requests the tested starters answer, at the foot of the form (so nothing above them moves
/// when they arrive): a click puts one in the prompt box.
async function suggest() {
  let starters;
  try {
    starters = await api('/api/starters');
  } catch (err) {
    return; // suggestions are a nicety; the page works without them
  }
  const lang = viewerLang();
  const box = $('suggestions');
  for (const s of starters.slice(0, 4)) {
    const text = s.example[lang] || s.example.en;
    if (!text) continue;
    const b = el('button', { type: 'button', className: 'suggestion' }, text);
    b.addEventListener('click', () => {
      $('prompt').value = text;
      localStorage.setItem(DRAFT_KEY, text);
      $('prompt').focus();
    });
    box.append(b);
  }
  $('try').hidden = box.childElementCount < 2;
}

start();
