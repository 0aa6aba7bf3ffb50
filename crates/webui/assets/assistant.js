// The in-app assistant, embeddable in any page: a button and a chat panel (in a shadow root on
// an element marked data-wright-assistant, styled by assistant.css, so a page's strict CSP and
// its own styles do not get in the way). The server holds the model; when the model calls a
// tool of the page (describe it, click, fill a field) the call runs here, in the browser, and
// its result goes back to the server, round after round, until the model answers in text.
//
//   <script type="module" src="…/assistant/assistant.js" data-endpoint="…" data-key="ek_…">
//
// mounts it (data-lang, data-open and data-manual are optional); mountAssistant() does the
// same from code. Everything a model or a person wrote goes in as text or through the safe
// Markdown renderer, never as markup.
//
// assistant-messages.js draws the conversation, assistant-server.js talks to the server.

import { ASSISTANT_ATTR, clickElement, describeWhenSettled, fillFormElement } from './a11y.js';
import {
  activeTools,
  capOutput,
  errorText,
  pickLang,
  planPending,
  runRound,
  toolDone,
  toolStatus,
  translator,
} from './assistant-core.js';
import { h, messageLog } from './assistant-messages.js';
import { HttpError, Server, messageOf } from './assistant-server.js';

const HERE = import.meta.url;
const TEXTAREA_MAX_PX = 160;

/// The built-in tools: the page through its accessibility tree.
const BUILTINS = {
  describe_app_ui: async () => {
    const d = await describeWhenSettled(document.body);
    const title = document.title ? `"${document.title}" ` : '';
    return `Page ${title}at ${location.pathname}${location.hash}\n${d.text || '(nothing with a role and a name is visible)'}`;
  },
  click_element: async (args, opts) => {
    const r = await clickElement(args, opts);
    if (!r.ok) throw new Error(r.error);
    return { changed: r.changed, settled_ms: r.settled_ms };
  },
  fill_form_element: async (args, opts) => {
    const r = await fillFormElement(args, opts);
    if (!r.ok) throw new Error(r.error);
    return { changed: r.changed, settled_ms: r.settled_ms };
  },
};

const mounted = new WeakMap();

/// Put the assistant in the page: a button that opens its panel. Returns {host, open(),
/// close(), destroy()}. `endpoint`: the wright server ('' for the same origin, with its session
/// cookie); `embedKey`: an embed key (then a visitor token is got and sent as a bearer);
/// `tools`: the page's own tools, {name: async (args) => output}; `open`: start opened.
export function mountAssistant({ endpoint = '', embedKey = null, container, lang, tools = {}, open = false } = {}) {
  const where = container || document.body;
  const existing = where.querySelector(`:scope > [${ASSISTANT_ATTR}]`);
  if (existing && mounted.has(existing)) return mounted.get(existing);
  const language = pickLang(lang || navigator.language);
  const t = translator(language);
  const acceptLanguage = language === 'pt' ? 'pt-BR, pt;q=0.9, en;q=0.5' : 'en';
  const server = new Server(endpoint, embedKey, acceptLanguage);
  const impls = { ...BUILTINS, ...tools };

  const host = h('div', { [ASSISTANT_ATTR]: '', lang: language === 'pt' ? 'pt-BR' : 'en' });
  const shadow = host.attachShadow({ mode: 'open' });
  const sheet = h('link', { rel: 'stylesheet', href: new URL('assistant.css', HERE).href });
  const root = h('div', { class: 'root', hidden: true });
  sheet.addEventListener('load', () => root.removeAttribute('hidden'));
  sheet.addEventListener('error', () => root.removeAttribute('hidden'));
  shadow.append(sheet, root);

  // ---- the panel -------------------------------------------------------------------------
  const launcher = h(
    'button',
    { type: 'button', class: 'launcher', 'aria-expanded': 'false', 'aria-controls': 'wa-panel', 'data-testid': 'assistant-launcher' },
    h('span', { class: 'launcher-icon', 'aria-hidden': 'true', text: '✦' }),
    h('span', { text: t('launcher') }),
  );
  const title = h('h2', { class: 'title', id: 'wa-title', text: t('title') });
  const newButton = h('button', { type: 'button', class: 'tool-button', 'data-testid': 'assistant-new', title: t('new'), text: t('new') });
  const historyButton = h('button', {
    type: 'button',
    class: 'tool-button',
    'aria-expanded': 'false',
    'aria-controls': 'wa-history',
    'data-testid': 'assistant-history',
    text: t('history'),
  });
  const closeButton = h('button', {
    type: 'button',
    class: 'close',
    'aria-label': t('close'),
    title: t('close'),
    'data-testid': 'assistant-close',
    text: '✕',
  });
  const historyList = h('ul', { class: 'history-list', 'aria-label': t('history') });
  const clearButton = h('button', { type: 'button', class: 'tool-button danger', 'data-testid': 'assistant-clear', text: t('clear') });
  const historyBox = h('div', { class: 'history', id: 'wa-history', hidden: true, 'data-testid': 'assistant-history-list' }, historyList, clearButton);
  const empty = h('p', { class: 'empty', text: t('empty') });
  const log = h(
    'div',
    { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': t('title'), tabindex: '0', 'data-testid': 'assistant-log' },
    empty,
  );
  const status = h('p', { class: 'status', role: 'status', 'data-testid': 'assistant-status' });
  const input = h('textarea', { rows: '1', 'aria-label': t('message'), placeholder: t('placeholder'), 'data-testid': 'assistant-input' });
  const sendButton = h(
    'button',
    { type: 'submit', class: 'send', 'aria-label': t('send'), title: t('send'), 'data-testid': 'assistant-send' },
    h('span', { 'aria-hidden': 'true', text: '➤' }),
  );
  const form = h('form', { class: 'compose' }, input, sendButton);
  const panel = h(
    'section',
    { class: 'panel', id: 'wa-panel', role: 'dialog', 'aria-labelledby': 'wa-title', hidden: true, 'data-testid': 'assistant-panel' },
    h('header', { class: 'head' }, title, newButton, historyButton, closeButton),
    historyBox,
    log,
    status,
    form,
  );
  root.append(panel, launcher);
  where.append(host);

  const state = {
    id: null,
    busy: false,
    config: null, // GET /api/assistant
    opening: 0,
    reply: null,
  };

  const saveOpen = (id) => {
    try {
      if (id) sessionStorage.setItem(server.keys.open, id);
      else sessionStorage.removeItem(server.keys.open);
    } catch {
      // no storage: a reload starts afresh
    }
  };
  const started = {
    get() {
      try {
        return new Set(JSON.parse(sessionStorage.getItem(server.keys.started) || '[]'));
      } catch {
        return new Set();
      }
    },
    set(ids) {
      try {
        if (ids.length) sessionStorage.setItem(server.keys.started, JSON.stringify(ids));
        else sessionStorage.removeItem(server.keys.started);
      } catch {
        // no storage
      }
    },
  };

  const setStatus = (text) => {
    status.textContent = text || '';
  };
  const setBusy = (busy) => {
    state.busy = busy;
    sendButton.disabled = busy;
    log.setAttribute('aria-busy', String(busy));
    newButton.disabled = busy;
    clearButton.disabled = busy || !state.id;
  };
  // The conversation in the log: the messages, the reply being written, an answer's events.
  const messages = messageLog({ log, empty, t, state, setStatus });
  const { add, chip, clearLog, newReply, note, read, scrollDown, settleReply, storedMessage, userBubble } = messages;
  const grow = () => {
    input.style.height = 'auto';
    input.style.height = `${Math.min(input.scrollHeight + 2, TEXTAREA_MAX_PX)}px`;
    input.style.overflowY = input.scrollHeight + 2 > TEXTAREA_MAX_PX ? 'auto' : 'hidden';
  };

  function showPanel(on) {
    panel.hidden = !on;
    launcher.setAttribute('aria-expanded', String(on));
    launcher.classList.toggle('open', on);
    // A reload mid-turn reopens the panel where the user left it.
    try {
      if (on) sessionStorage.setItem(`${server.keys.open}:panel`, '1');
      else sessionStorage.removeItem(`${server.keys.open}:panel`);
    } catch {
      // storage blocked: the panel starts closed
    }
    if (on) {
      grow();
      input.focus({ preventScroll: true });
      scrollDown(true);
    } else {
      showHistory(false);
    }
  }

  // ---- talking to the server ---------------------------------------------------------------

  /// An error in the chat, with a Retry that runs `retry`.
  function failure(message, retry) {
    const retryButton = h('button', { type: 'button', class: 'retry', 'data-testid': 'assistant-retry', text: t('retry') });
    const box = h('div', { class: 'msg error', role: 'alert' }, h('div', { class: 'bubble' }, h('p', { text: message }), retryButton));
    retryButton.addEventListener('click', () => {
      if (state.busy) return;
      box.remove();
      retry();
    });
    add(box);
    setStatus('');
    setBusy(false);
  }

  /// What went wrong, in the panel's words: the server's message, or that it was unreachable.
  const problem = (e) => (e instanceof HttpError ? t('error', { message: e.message }) : t('unreachable', { message: errorText(e) }));

  async function config() {
    if (!state.config) state.config = await server.json('/api/assistant');
    return state.config;
  }

  const conv = () => `/api/chat/${encodeURIComponent(state.id)}`;

  const readOnly = (name) => !!(state.config?.tools || []).find((tool) => tool.name === name)?.read_only;

  /// Make `request` (a POST whose answer is the turn's event stream) and follow the turn to
  /// its end: the browser's tool calls run and their results go back, round after round.
  async function run(reply, request) {
    setBusy(true);
    if (!reply || !reply.article.isConnected) reply = newReply(reply?.content);
    reply.article.classList.add('streaming');
    if (!status.textContent) setStatus(t('thinking'));
    let res;
    try {
      res = await request();
    } catch (e) {
      settleReply(reply);
      return failure(problem(e), () => run(reply, request));
    }
    if (!res.ok) {
      const message = await messageOf(res);
      settleReply(reply);
      return failure(t('error', { message }), () => run(reply, request));
    }
    const turn = res.headers.get('X-Wright-Run');
    if (turn) reply.article.dataset.run = turn;
    const outcome = await read(reply, res);
    if (outcome.error && (outcome.done === 'stop' || outcome.calls)) {
      // The turn went on: the error is a note in the reply.
      note(reply, `⚠ ${outcome.error}`);
    } else if (outcome.error) {
      settleReply(reply);
      const again = reply.content ? () => send(reply.content, { again: true }) : () => openConversation(state.id);
      return failure(t('error', { message: outcome.error }), again);
    }
    if (outcome.calls) {
      if (reply.streamed && !reply.streamed.endsWith('\n\n')) reply.streamed += '\n\n';
      reply.rounds += 1;
      const max = Number(state.config?.max_rounds) || 10;
      if (reply.rounds > max + 1) {
        settleReply(reply);
        return failure(t('round_limit'), () => openConversation(state.id));
      }
      const results =
        reply.rounds > max
          ? outcome.calls.map((c) => ({ id: c.id, error: 'stopped: the browser ran as many rounds as allowed' }))
          : await runCalls(reply, outcome.calls);
      setStatus(t('thinking'));
      return run(reply, () => postResults(results));
    }
    if (outcome.done) {
      if (outcome.done === 'round_limit') note(reply, t('round_limit'));
      else if (outcome.done === 'cancelled') note(reply, t('cancelled'));
      settleReply(reply);
      setStatus('');
      setBusy(false);
      refreshHistory();
      return undefined;
    }
    settleReply(reply);
    return failure(t('error', { message: outcome.broken }), () => openConversation(state.id));
  }

  function postResults(results) {
    return server.request(`${conv()}/tool-results`, { method: 'POST', body: { results }, stream: true }).then((res) => {
      if (res.ok) started.set([]);
      return res;
    });
  }

  /// Run a round of the model's calls here, all at once; their results in the calls' order.
  async function runCalls(reply, calls) {
    // Calls that change the page are noted first: if it reloads meanwhile, they are not re-run.
    started.set(calls.filter((c) => !readOnly(c.name)).map((c) => c.id));
    const running = new Set();
    const results = await runRound(calls, impls, {
      onStart: (call) => {
        running.add(call.id);
        const line = toolStatus(call.name, call.arguments, t);
        setStatus(line);
        chip(reply, call.id, line, 'running');
      },
      onEnd: (call, result) => {
        running.delete(call.id);
        chip(reply, call.id, toolDone(call.name, call.arguments, result, t), result.error !== undefined ? 'failed' : 'done');
        if (!running.size) setStatus(t('thinking'));
      },
    });
    return results.map((r) => (r.error !== undefined ? { id: r.id, error: capOutput(String(r.error)) } : r));
  }

  /// Send `content` as the person's message (a new conversation is made for the first one).
  async function send(content, { again = false } = {}) {
    if (state.busy) return;
    setBusy(true);
    if (!again) userBubble(content);
    setStatus(t('thinking'));
    let tools;
    try {
      const cfg = await config();
      if (!state.id) {
        const made = await server.json('/api/chat', { method: 'POST', body: {} });
        state.id = made.id;
        saveOpen(state.id);
      }
      tools = activeTools(cfg.tools, impls);
    } catch (e) {
      return failure(problem(e), () => send(content, { again: true }));
    }
    const reply = newReply(content);
    return run(reply, () => server.request(`${conv()}/messages`, { method: 'POST', body: { content, client_tools: tools }, stream: true }));
  }

  /// Show conversation `id` (its messages), then finish a turn a reload left waiting on calls.
  async function openConversation(id) {
    state.opening += 1;
    const opening = state.opening;
    state.id = id;
    saveOpen(id);
    clearLog();
    showHistory(false);
    setBusy(true);
    if (!id) {
      setBusy(false);
      return;
    }
    let messages;
    let pending;
    try {
      await config();
      messages = await server.json(`${conv()}/messages`);
      if (opening !== state.opening) return;
      for (const m of messages || []) storedMessage(m);
      pending = await server.json(`${conv()}/pending`);
    } catch (e) {
      if (opening !== state.opening) return;
      if (e instanceof HttpError && e.status === 404) {
        // A conversation that is gone: start afresh.
        state.id = null;
        saveOpen(null);
        setBusy(false);
        return;
      }
      failure(problem(e), () => openConversation(id));
      return;
    }
    if (opening !== state.opening) return;
    const calls = pending?.calls || [];
    if (!calls.length) {
      setBusy(false);
      scrollDown(true);
      return;
    }
    const reply = newReply(null);
    setStatus(t('resuming'));
    const plan = planPending(calls, { started: started.get() });
    const rerun = plan.filter((p) => p.rerun).map((p) => p.call);
    const ran = new Map((await runCalls(reply, rerun)).map((r) => [r.id, r]));
    const results = plan.map((p) => (p.rerun ? ran.get(p.call.id) : p.result));
    for (const p of plan) if (!p.rerun) chip(reply, p.call.id, toolDone(p.call.name, p.call.arguments, p.result, t), 'failed');
    await run(reply, () => postResults(results));
  }

  // ---- history -----------------------------------------------------------------------------

  async function refreshHistory() {
    if (historyBox.hidden) return;
    let list;
    try {
      list = await server.json('/api/chat');
    } catch (e) {
      historyList.replaceChildren(h('li', { class: 'muted', text: t('error', { message: errorText(e) }) }));
      return;
    }
    const items = (list || []).map((c) => {
      const when = c.updated_at ? new Date(c.updated_at) : null;
      const b = h(
        'button',
        { type: 'button', class: 'conv', 'aria-current': c.id === state.id ? 'true' : null },
        h('span', { class: 'conv-title', text: c.title || t('untitled') }),
        when && !Number.isNaN(when.getTime())
          ? h('span', { class: 'conv-when', text: when.toLocaleString(language === 'pt' ? 'pt-BR' : 'en') })
          : null,
      );
      b.addEventListener('click', () => {
        if (!state.busy) openConversation(c.id);
      });
      return h('li', {}, b);
    });
    historyList.replaceChildren(...(items.length ? items : [h('li', { class: 'muted', text: t('no_history') })]));
  }

  function showHistory(on) {
    historyBox.hidden = !on;
    historyButton.setAttribute('aria-expanded', String(on));
    if (on) refreshHistory();
  }

  async function clearHistory() {
    if (state.busy || !state.id) return;
    try {
      await server.json(`${conv()}/messages`, { method: 'DELETE' });
    } catch (e) {
      failure(t('error', { message: errorText(e) }), clearHistory);
      return;
    }
    clearLog();
    setStatus(t('cleared'));
    refreshHistory();
  }

  // ---- wiring ------------------------------------------------------------------------------

  launcher.addEventListener('click', () => showPanel(panel.hidden));
  closeButton.addEventListener('click', () => {
    showPanel(false);
    launcher.focus();
  });
  panel.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') {
      ev.stopPropagation();
      showPanel(false);
      launcher.focus();
    }
  });
  newButton.addEventListener('click', () => {
    if (state.busy) return;
    openConversation(null);
    setStatus('');
    input.focus();
  });
  historyButton.addEventListener('click', () => showHistory(historyBox.hidden));
  clearButton.addEventListener('click', clearHistory);
  input.addEventListener('input', grow);
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const content = input.value.trim();
    if (!content || state.busy) return;
    input.value = '';
    grow();
    send(content);
  });

  let remembered = null;
  try {
    remembered = sessionStorage.getItem(server.keys.open);
  } catch {
    remembered = null;
  }
  if (remembered) openConversation(remembered);
  let wasOpen = false;
  try {
    wasOpen = sessionStorage.getItem(`${server.keys.open}:panel`) === '1';
  } catch {
    wasOpen = false;
  }
  if (open || wasOpen) showPanel(true);

  const controller = {
    host,
    open: () => showPanel(true),
    close: () => showPanel(false),
    destroy: () => {
      host.remove();
      mounted.delete(host);
    },
  };
  mounted.set(host, controller);
  return controller;
}

/// The <script> that loaded this module, when a page included it by tag.
function ownScript() {
  for (const s of document.querySelectorAll('script[type="module"][src]')) {
    try {
      if (new URL(s.getAttribute('src'), document.baseURI).href === HERE) return s;
    } catch {
      // not an address
    }
  }
  return null;
}

const tag = typeof document !== 'undefined' ? ownScript() : null;
if (tag && !tag.hasAttribute('data-manual')) {
  const start = () =>
    mountAssistant({
      endpoint: tag.dataset.endpoint ?? new URL(HERE).origin,
      embedKey: tag.dataset.key || null,
      lang: tag.dataset.lang || undefined,
      open: tag.hasAttribute('data-open'),
    });
  if (document.body) start();
  else document.addEventListener('DOMContentLoaded', start, { once: true });
}
