// The chat view: conversations with wright's tutor. A message's answer streams back over the
// POST that sent it (read with fetch, not EventSource); the turn goes on on the server whatever
// the page does, so its run id is kept in sessionStorage and a reload (or a dropped connection)
// picks the stream up again and shows the answer. The URL's #chat=ID names the conversation.

import { $, api, el } from './dom.js';
import { showError } from './errors.js';
import { refreshLimits } from './limits.js';
import { readSse } from './sse.js';
import { renderMarkdown } from './markdown.js';
import { flashcards, renderPart, toolName, when } from './parts.js';

const TURN_KEY = 'wright.chat.turn';
const DRAFT_KEY = 'wright.chat.draft';
const SILENCE_MS = 40000; // the server sends a heartbeat well within this
const BACKOFF_MS = [300, 800, 1500, 3000, 5000, 8000];
const GIVE_UP_AFTER = 12;

let t = (k) => k;
let lang = 'en';
let wired = false;
const state = {
  id: null, // the conversation on screen (null: a new one, made on the first message)
  rendered: new Set(), // message ids on screen
  busy: false,
  stream: null, // the reply being followed
  opening: 0, // bumps on every open, so a slow answer for an old one is dropped
  shown: false, // the view is on screen
};

/// Show the chat view with conversation `id` (or a new one), in `translate`'s words.
export function showChat(translate, language, id) {
  t = translate;
  lang = language;
  $('chat').hidden = false;
  if (!wired) wire();
  $('chat-input').setAttribute('placeholder', t('chat.placeholder'));
  refreshList();
  refreshDeck();
  if (id !== state.id || !state.shown) open(id);
  state.shown = true;
}

/// Leave the chat view; a reply in flight goes on on the server and is picked up on return.
export function hideChat() {
  $('chat').hidden = true;
  if (state.stream) stopStream();
  state.shown = false;
}

function wire() {
  wired = true;
  $('chat-form').addEventListener('submit', send);
  $('chat-input').value = localStorage.getItem(DRAFT_KEY) || '';
  $('chat-input').addEventListener('input', () => localStorage.setItem(DRAFT_KEY, $('chat-input').value));
  $('chat-input').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      $('chat-form').requestSubmit();
    }
  });
  $('chat-new').addEventListener('click', () => {
    if (location.hash === '#chat') open(null);
    else location.hash = 'chat';
    $('chat-input').focus();
  });
  $('chat-clear').addEventListener('click', clear);
  $('deck-review').addEventListener('click', openDeck);
  $('deck-close').addEventListener('click', () => {
    $('deck').hidden = true;
    refreshDeck();
  });
}

function setBusy(busy) {
  state.busy = busy;
  $('chat-send').disabled = busy;
  $('chat-log').setAttribute('aria-busy', String(busy));
  if (!busy) refreshLimits(); // the messages left this hour, by the Send button
}

/// Keep the newest message in sight (the page scrolls; the message box stays at the bottom).
function scrollDown() {
  const last = $('chat-log').lastElementChild;
  if (last && !$('chat').hidden) last.scrollIntoView({ block: 'end' });
}

// ---- conversations -------------------------------------------------------------------------

async function refreshList() {
  let list;
  try {
    list = await api('/api/chat');
  } catch {
    return;
  }
  const ul = $('chat-list');
  ul.replaceChildren();
  for (const c of list) {
    const li = el('li');
    const a = el('a', { href: `#chat=${c.id}`, class: 'conv' });
    a.append(el('span', { class: 'conv-title' }, c.title || t('chat.untitled')));
    a.append(el('span', { class: 'conv-when' }, when(c.updated_at, lang)));
    if (c.id === state.id) a.setAttribute('aria-current', 'page');
    li.append(a);
    ul.append(li);
  }
  $('chat-none').hidden = list.length > 0;
  const here = list.find((c) => c.id === state.id);
  $('chat-title').textContent = here ? here.title || t('chat.untitled') : t('chat.untitled');
}

function markCurrent() {
  for (const a of $('chat-list').querySelectorAll('a')) {
    if (a.getAttribute('href') === `#chat=${state.id}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

async function open(id) {
  if (state.stream) stopStream();
  state.opening += 1;
  const opening = state.opening;
  state.id = id;
  state.rendered.clear();
  $('chat-log').replaceChildren($('chat-empty'));
  $('chat-empty').hidden = false;
  $('chat-error').textContent = '';
  $('chat-clear').disabled = !id;
  $('chat-title').textContent = t('chat.untitled');
  markCurrent();
  setBusy(false);
  if (!id) return;
  let messages;
  try {
    messages = await api(`/api/chat/${encodeURIComponent(id)}/messages`);
  } catch (err) {
    if (opening === state.opening) showError($('chat-error'), err, t);
    return;
  }
  if (opening !== state.opening) return;
  for (const m of messages) addMessage(m);
  scrollDown();
  // A reply that was still being written when the page went away: follow it again.
  const pending = savedTurn();
  if (pending && pending.conversation === id) {
    const answered = messages.some((m) => m.role === 'assistant' && m.run === pending.run);
    if (answered) sessionStorage.removeItem(TURN_KEY);
    else follow(newReply(pending.run, true), null);
  }
}

function savedTurn() {
  try {
    return JSON.parse(sessionStorage.getItem(TURN_KEY) || 'null');
  } catch {
    return null;
  }
}

async function clear() {
  if (!state.id || state.busy) return;
  try {
    const res = await api(`/api/chat/${encodeURIComponent(state.id)}/messages`, { method: 'DELETE' });
    state.rendered.clear();
    $('chat-log').replaceChildren($('chat-empty'));
    $('chat-empty').hidden = false;
    $('chat-error').textContent = '';
    toast(t('chat.cleared', { n: res?.deleted ?? 0 }));
    refreshList();
  } catch (err) {
    showError($('chat-error'), err, t);
  }
}

function toast(text) {
  const box = el('div', { class: 'toast success', role: 'status' }, text);
  $('toasts').append(box);
  setTimeout(() => box.remove(), 4000);
}

// ---- messages ------------------------------------------------------------------------------

function userBubble(text) {
  const article = el('article', { class: 'msg user' });
  article.append(el('div', { class: 'who' }, t('chat.you')));
  // The person's own words, exactly as typed: never Markdown, never markup.
  article.append(el('div', { class: 'bubble plain' }, text));
  return article;
}

function userText(m) {
  return (m.parts || []).map((p) => (p.type === 'text' ? p.text : '')).join('\n');
}

/// Add a stored message (history, or a reply that just arrived) to the log.
function addMessage(m, before = null) {
  if (state.rendered.has(m.id)) return;
  state.rendered.add(m.id);
  $('chat-empty').hidden = true;
  let article;
  if (m.role === 'user') {
    article = userBubble(userText(m));
  } else {
    article = el('article', { class: 'msg assistant' });
    fillAssistant(article, m, new Map());
  }
  article.dataset.id = m.id;
  if (m.run) article.dataset.run = m.run;
  $('chat-log').insertBefore(article, before);
}

/// Draw an assistant's stored reply into `article`: its text first, then its other parts.
function fillAssistant(article, m, choices) {
  const ctx = { t, lang, conversation: state.id, message: m.id, choices };
  const bubble = el('div', { class: 'bubble' });
  const parts = m.parts || [];
  const ordered = [...parts.filter((p) => p.type === 'text'), ...parts.filter((p) => p.type !== 'text')];
  for (const part of ordered) bubble.append(renderPart(part, ctx));
  article.replaceChildren(el('div', { class: 'who' }, t('chat.tutor')), bubble, feedback(m));
  article.classList.remove('streaming');
  article.dataset.id = m.id;
  if (m.run) article.dataset.run = m.run;
}

/// 👍/👎 on a reply: pressing the pressed one takes it back.
function feedback(m) {
  const row = el('div', { class: 'msg-actions' });
  let value = m.feedback === 1 ? 'up' : m.feedback === -1 ? 'down' : 'none';
  const buttons = {};
  const paint = () => {
    for (const [v, b] of Object.entries(buttons)) b.setAttribute('aria-pressed', String(value === v));
  };
  for (const [v, face] of [['up', '👍'], ['down', '👎']]) {
    const b = el('button', { type: 'button', class: `fb ${v}`, 'aria-label': t(`feedback.${v}`), title: t(`feedback.${v}`) }, face);
    b.addEventListener('click', async () => {
      const next = value === v ? 'none' : v;
      try {
        await api(`/api/chat/${encodeURIComponent(state.id)}/messages/${encodeURIComponent(m.id)}/feedback`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ value: next }),
        });
        value = next;
        paint();
      } catch (err) {
        showError($('chat-error'), err, t);
      }
    });
    buttons[v] = b;
    row.append(b);
  }
  paint();
  return row;
}

// ---- sending and following a reply ---------------------------------------------------------

async function send(ev) {
  ev.preventDefault();
  if (state.busy) return;
  const input = $('chat-input');
  const content = input.value.trim();
  if (!content) return;
  $('chat-error').textContent = '';
  setBusy(true);
  let id = state.id;
  if (!id) {
    try {
      id = (await api('/api/chat', { method: 'POST' })).id;
    } catch (err) {
      showError($('chat-error'), err, t);
      setBusy(false);
      return;
    }
    state.id = id;
    $('chat-clear').disabled = false;
    history.replaceState(null, '', `#chat=${id}`);
  }
  const asked = userBubble(content);
  $('chat-empty').hidden = true;
  $('chat-log').append(asked);
  input.value = '';
  localStorage.removeItem(DRAFT_KEY);
  const reply = newReply(null, false);
  reply.asked = asked;
  scrollDown();
  let res;
  try {
    res = await fetch(`/api/chat/${encodeURIComponent(id)}/messages`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ content }),
      signal: reply.connection.signal,
    });
  } catch (err) {
    res = null;
    reply.failed = err;
  }
  if (!res || !res.ok) {
    // Nothing was started: take the message back so it can be sent again.
    const refused = reply.failed || new Error('');
    if (res) {
      const body = res.headers.get('content-type')?.includes('json') ? await res.json().catch(() => null) : null;
      Object.assign(refused, {
        message: body?.error?.message || `HTTP ${res.status}`,
        status: res.status,
        code: body?.error?.code || null,
        retryAfter: res.headers.get('Retry-After'),
      });
    }
    asked.remove();
    reply.article.remove();
    state.stream = null;
    input.value = content;
    showError($('chat-error'), refused, t);
    setBusy(false);
    return;
  }
  reply.run = res.headers.get('X-Wright-Run');
  if (reply.run) sessionStorage.setItem(TURN_KEY, JSON.stringify({ conversation: id, run: reply.run }));
  follow(reply, res);
  refreshList();
}

/// A reply being written, shown as it streams.
function newReply(run, resumed) {
  if (state.stream) stopStream();
  const article = el('article', { class: 'msg assistant streaming' });
  const status = el('ul', { class: 'tools', 'aria-label': t('chat.progress') });
  const text = el('div', { class: 'streamed' });
  const parts = el('div', { class: 'parts' });
  const bubble = el('div', { class: 'bubble' });
  const note = el('p', { class: 'status-line' }, resumed ? t('chat.resuming') : t('chat.thinking'));
  bubble.append(note, status, text, parts);
  article.append(el('div', { class: 'who' }, t('chat.tutor')), bubble);
  if (run) article.dataset.run = run;
  $('chat-empty').hidden = true;
  $('chat-log').append(article);
  const reply = {
    run,
    conversation: state.id,
    article,
    note,
    status,
    text,
    parts,
    streamed: '',
    chips: new Map(),
    choices: new Map(),
    last: 0,
    final: null,
    finished: false,
    stopped: false,
    connection: new AbortController(),
  };
  state.stream = reply;
  setBusy(true);
  return reply;
}

function stopStream() {
  const s = state.stream;
  if (!s) return;
  s.stopped = true;
  s.connection.abort();
  state.stream = null;
  setBusy(false);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/// Follow `reply` from `res` (the POST's answer), or from the turn's stored events when `res`
/// is null; after a drop, from the last event seen.
async function follow(reply, res) {
  let failures = 0;
  let timer = null;
  const alive = () => {
    clearTimeout(timer);
    timer = setTimeout(() => reply.connection.abort(), SILENCE_MS);
  };
  for (;;) {
    if (res) {
      alive();
      try {
        await readSse(res, {
          onEvent: (e) => {
            alive();
            if (typeof e.id === 'number') {
              if (e.id <= reply.last) return true; // already shown
              reply.last = e.id;
            }
            failures = 0;
            handle(reply, e);
            return !reply.finished;
          },
          onBeat: alive,
        });
      } catch {
        // A dropped or stalled connection: resumed below.
      }
      clearTimeout(timer);
    }
    if (reply.finished || reply.stopped) return;
    if (res) reply.note.textContent = t('chat.reconnecting');
    if (failures >= GIVE_UP_AFTER) {
      reply.note.textContent = t('chat.stream_lost');
      finish(reply, false);
      return;
    }
    if (res || failures > 0) await sleep(BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)]);
    failures += 1;
    if (reply.stopped) return;
    reply.connection = new AbortController();
    try {
      res = await fetch(
        `/api/chat/${encodeURIComponent(reply.conversation)}/turns/${encodeURIComponent(reply.run)}/events?after=${reply.last}`,
        {
          credentials: 'same-origin',
          headers: { Accept: 'text/event-stream', 'Last-Event-ID': String(reply.last) },
          signal: reply.connection.signal,
        },
      );
      if (res.status === 401 || res.status === 403 || (res.status === 404 && failures > 3)) {
        reply.note.textContent = t('chat.stream_lost');
        sessionStorage.removeItem(TURN_KEY);
        finish(reply, false);
        return;
      }
      if (!res.ok || !res.body) res = null;
    } catch {
      res = null;
    }
  }
}

function chip(reply, tool, stateName) {
  let item = reply.chips.get(tool);
  if (!item) {
    item = el('li', { class: 'tool' });
    reply.chips.set(tool, item);
    reply.status.append(item);
  }
  item.className = `tool ${stateName}`;
  const name = toolName(tool, t);
  if (stateName === 'done') item.textContent = `✓ ${name}`;
  else if (stateName === 'failed') item.textContent = `✗ ${t('tool.failed', { tool: name })}`;
  else {
    const doing = t(`tool.${tool}`);
    item.textContent = doing === `tool.${tool}` ? t('tool.other', { tool: name }) : doing;
  }
}

let textFrame = 0;
function showStreamed(reply) {
  if (textFrame) return;
  textFrame = requestAnimationFrame(() => {
    textFrame = 0;
    if (reply.final) return;
    reply.text.replaceChildren(renderMarkdown(reply.streamed));
    scrollDown();
  });
}

function handle(reply, e) {
  const d = e.data && typeof e.data === 'object' ? e.data : {};
  switch (e.event) {
    case 'tool_selected':
      chip(reply, d.tool, 'running');
      break;
    case 'tool_result':
      chip(reply, d.tool, d.success ? 'done' : 'failed');
      if (![...reply.chips.values()].some((c) => c.classList.contains('running'))) reply.note.textContent = t('chat.writing');
      if (d.structured_data && !reply.final) {
        const ctx = { t, lang, conversation: reply.conversation, message: null, choices: reply.choices };
        reply.parts.append(renderPart(d.structured_data, ctx));
        scrollDown();
      }
      break;
    case 'text_delta':
      reply.note.textContent = t('chat.writing');
      reply.streamed += d.text || '';
      showStreamed(reply);
      break;
    case 'message':
      if (d.role === 'user') {
        if (reply.asked && !reply.asked.dataset.id) {
          reply.asked.dataset.id = d.id;
          if (d.run) reply.asked.dataset.run = d.run;
          state.rendered.add(d.id);
        } else {
          addMessage(d, reply.article);
        }
      } else if (state.rendered.has(d.id)) {
        reply.final = d;
        reply.article.remove();
      } else {
        reply.final = d;
        state.rendered.add(d.id);
        fillAssistant(reply.article, d, reply.choices);
        scrollDown();
      }
      break;
    case 'error': {
      const shown = reply.final?.parts?.some((p) => p.type === 'error' && p.message === d.message);
      if (!shown) {
        const warn = el('p', { class: 'part warn', role: 'note' }, `⚠ ${t('chat.error', { message: d.message || '' })}`);
        // The technical reason, one click away (the words above are for a person).
        if (d.detail) {
          const more = el('details', { class: 'detail' });
          more.append(el('summary', {}, t('error.details')), el('pre', {}, d.detail));
          warn.append(more);
        }
        (reply.final ? reply.article.querySelector('.bubble') : reply.parts)?.append(warn);
      }
      break;
    }
    case 'done':
      finish(reply, true);
      break;
    default:
  }
}

function finish(reply, done) {
  reply.finished = true;
  if (!reply.final) {
    // No stored reply came (it could not be saved): keep what was shown, as it was written.
    reply.article.classList.remove('streaming');
    if (done) reply.note.remove();
    if (reply.streamed) reply.text.replaceChildren(renderMarkdown(reply.streamed));
  }
  const saved = savedTurn();
  if (done && saved && saved.run === reply.run) sessionStorage.removeItem(TURN_KEY);
  if (state.stream === reply) {
    state.stream = null;
    setBusy(false);
  }
  refreshList();
  refreshDeck();
  scrollDown();
  // Background tools (a flashcard for a definition) finish after `done`: their parts come as
  // a follow-up message of the same run, fetched from the history.
  const running = [...reply.chips.values()].some((c) => c.classList.contains('running'));
  if (done && running) awaitBackground(reply);
}

const BACKGROUND_POLL_MS = 1500;
const BACKGROUND_WAIT_MS = 60000;

async function awaitBackground(reply) {
  const until = Date.now() + BACKGROUND_WAIT_MS;
  while (Date.now() < until && state.id === reply.conversation) {
    await sleep(BACKGROUND_POLL_MS);
    let messages;
    try {
      messages = await api(`/api/chat/${encodeURIComponent(reply.conversation)}/messages`);
    } catch {
      continue;
    }
    if (state.id !== reply.conversation) return;
    const later = messages.filter(
      (m) => m.role === 'assistant' && m.run === reply.run && m.id !== reply.final?.id && !state.rendered.has(m.id),
    );
    if (later.length) {
      let after = reply.final ? $('chat-log').querySelector(`[data-id="${CSS.escape(reply.final.id)}"]`) : null;
      for (const m of later) {
        addMessage(m, after ? after.nextSibling : null);
        after = $('chat-log').querySelector(`[data-id="${CSS.escape(m.id)}"]`);
      }
      refreshDeck();
      scrollDown();
      return;
    }
  }
}

// ---- the flashcard deck --------------------------------------------------------------------

let deck = [];

async function refreshDeck() {
  try {
    deck = await api('/api/flashcards');
  } catch {
    return;
  }
  const now = Date.now();
  const due = deck.filter((c) => Date.parse(c.due) <= now);
  $('deck-count').textContent = deck.length ? t('cards.count', { n: deck.length, due: due.length }) : t('cards.empty');
  $('deck-review').hidden = due.length === 0;
  $('deck-review').textContent = t('cards.review', { n: due.length });
}

async function openDeck() {
  await refreshDeck();
  const now = Date.now();
  const due = deck.filter((c) => Date.parse(c.due) <= now);
  const box = $('deck-cards');
  box.replaceChildren(
    due.length
      ? flashcards(due, { t, lang }, t('cards.due_n', { n: due.length }))
      : el('p', { class: 'muted' }, t('cards.none_due')),
  );
  $('deck').hidden = false;
  $('deck').scrollIntoView({ block: 'nearest' });
}
