// The assistant panel's conversation (assistant.js builds the panel around it and runs the
// turns): the person's messages and the assistant's, drawn from their stored parts (text
// through the safe Markdown renderer, tool errors, sources), and a reply as it is written:
// its tool chips, its streamed text, the sources tools gave, notes, read from one answer's
// event stream. Everything goes in as text or through the Markdown renderer, never as markup.

import { renderMarkdown } from './markdown.js';
import { readSse } from './sse.js';
import { errorText, partText, sourceLine, toolDone, toolStatus } from './assistant-core.js';

/// An element: `props` are attributes (class, role, aria-*, data-*, type, …) except `text`
/// (its textContent) and `on` ({event: handler}).
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') node.textContent = v;
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

/// The conversation drawn in `log` (`empty` shows while it has no message), in the words of
/// `t`; `state.reply` is the reply being written; `setStatus` says what is going on.
export function messageLog({ log, empty, t, state, setStatus }) {
  const nearBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  const scrollDown = (force = false) => {
    if (force || nearBottom()) log.scrollTop = log.scrollHeight;
  };

  const clearLog = () => {
    log.replaceChildren(empty);
    empty.hidden = false;
  };
  const add = (node) => {
    empty.hidden = true;
    log.append(node);
    scrollDown(true);
    return node;
  };

  function userBubble(text) {
    return add(h('article', { class: 'msg user' }, h('div', { class: 'who', text: t('you') }), h('div', { class: 'bubble plain', text })));
  }

  function sources(part) {
    const box = h('div', { class: 'sources' }, h('p', { class: 'sources-title', text: t('sources') }));
    const list = h('ul');
    const seen = new Set();
    for (const hit of part.hits || []) {
      const line = sourceLine(hit);
      if (!line || seen.has(line)) continue;
      seen.add(line);
      list.append(h('li', { title: hit.snippet || '', text: line }));
    }
    if (!list.children.length) return null;
    box.append(list);
    return box;
  }

  function renderPart(part) {
    switch (part?.type) {
      case 'text':
        return renderMarkdown(part.text || '');
      case 'documents':
        return sources(part);
      case 'error':
        return h('p', { class: 'part warn', role: 'note', text: `⚠ ${t('tool_error', { tool: part.tool || '?', message: part.message || '' })}` });
      default:
        return h('p', { class: 'part other', text: partText(part) });
    }
  }

  /// Draw a stored reply's parts into `bubble`: text first, then the rest (sources last).
  function fillParts(bubble, parts) {
    const rank = (p) => (p?.type === 'text' ? 0 : p?.type === 'documents' ? 2 : 1);
    const ordered = parts.map((p, i) => [rank(p), i, p]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[2]);
    const nodes = ordered.map(renderPart).filter(Boolean);
    bubble.replaceChildren(...nodes);
  }

  function storedMessage(m) {
    if (m.role === 'user') {
      const text = (m.parts || []).filter((p) => p.type === 'text').map((p) => p.text).join('\n');
      if (text) userBubble(text);
      return;
    }
    if (m.role !== 'assistant') return;
    const bubble = h('div', { class: 'bubble' });
    fillParts(bubble, m.parts || []);
    if (!bubble.childNodes.length) return;
    add(h('article', { class: 'msg assistant', 'data-id': m.id }, h('div', { class: 'who', text: t('assistant') }), bubble));
  }

  /// A reply being written: its tool chips, its streamed text, the parts tools gave.
  function newReply(content) {
    const chips = h('ul', { class: 'chips' });
    const text = h('div', { class: 'streamed' });
    const extra = h('div', { class: 'extra' });
    const bubble = h('div', { class: 'bubble' }, chips, text, extra);
    const article = h('article', { class: 'msg assistant streaming' }, h('div', { class: 'who', text: t('assistant') }), bubble);
    add(article);
    const reply = { content, article, bubble, chips, text, extra, streamed: '', final: null, rounds: 0, frame: 0, chipOf: new Map() };
    state.reply = reply;
    return reply;
  }

  function chip(reply, key, text, kind) {
    let li = reply.chipOf.get(key);
    if (!li) {
      li = h('li');
      reply.chipOf.set(key, li);
      reply.chips.append(li);
    }
    li.className = `chip ${kind}`;
    li.textContent = text;
    scrollDown();
  }

  function showStreamed(reply) {
    if (reply.frame) return;
    reply.frame = requestAnimationFrame(() => {
      reply.frame = 0;
      if (reply.final) return;
      reply.text.replaceChildren(renderMarkdown(reply.streamed));
      scrollDown();
    });
  }

  /// The reply is over: keep what it showed (or drop it when it showed nothing).
  function settleReply(reply) {
    reply.article.classList.remove('streaming');
    if (!reply.final && reply.streamed) reply.text.replaceChildren(renderMarkdown(reply.streamed));
    if (!reply.final && !reply.streamed && !reply.chips.children.length && !reply.extra.children.length) reply.article.remove();
    if (state.reply === reply) state.reply = null;
  }

  function note(reply, text) {
    reply.extra.append(h('p', { class: 'part note', text }));
  }

  // ---- reading an answer -------------------------------------------------------------------

  /// Read one answer's events into `reply`: {calls} when the turn waits for the browser,
  /// {done: reason} when it is over, {broken} when the stream stopped short.
  async function read(reply, res) {
    const outcome = {};
    try {
      await readSse(res, {
        onEvent: (e) => {
          const d = e.data && typeof e.data === 'object' ? e.data : {};
          switch (e.event) {
            case 'text_delta':
              setStatus(t('writing'));
              reply.streamed += d.text || '';
              showStreamed(reply);
              break;
            case 'tool_selected':
              setStatus(toolStatus(d.tool, d.arguments, t));
              chip(reply, `server:${d.tool}`, toolStatus(d.tool, d.arguments, t), 'running');
              break;
            case 'tool_result': {
              const failed = d.success === false ? { error: d.error || '' } : null;
              chip(reply, `server:${d.tool}`, toolDone(d.tool, {}, failed, t), failed ? 'failed' : 'done');
              const sd = d.structured_data;
              if (sd && typeof sd === 'object' && !reply.final) {
                const part = sd.type === 'documents' || !Array.isArray(sd.hits) ? sd : { type: 'documents', ...sd };
                if (part.type === 'documents') {
                  const node = sources(part);
                  if (node) reply.extra.append(node);
                }
              }
              setStatus(t('thinking'));
              break;
            }
            case 'client_tool_calls':
              outcome.calls = Array.isArray(d.calls) ? d.calls : [];
              outcome.round = d.round;
              break;
            case 'message': {
              const m = d.message && typeof d.message === 'object' ? d.message : d;
              if (m.role === 'assistant') {
                reply.final = m;
                fillParts(reply.bubble, m.parts || []);
                reply.bubble.prepend(reply.chips);
                scrollDown();
              }
              break;
            }
            case 'error':
              outcome.error = d.message || t('error', { message: '' });
              break;
            case 'done':
              outcome.done = d.finish_reason || 'stop';
              return false;
            default:
          }
          return true;
        },
      });
    } catch (e) {
      outcome.broken = errorText(e);
    }
    if (!outcome.calls && !outcome.done && !outcome.broken) outcome.broken = 'the answer stopped before it was finished';
    return outcome;
  }

  return { add, chip, clearLog, newReply, note, read, scrollDown, settleReply, storedMessage, userBubble };
}
