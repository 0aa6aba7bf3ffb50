// Each model-backed route's hourly limit, shown where the person acts before it bites: "18 of
// 20 questions left this hour" by the Explain button, and the same for builds and chat
// messages. At 0 the button is disabled and says when it comes back. The counts come from
// `GET /api/limits` (a read: asking takes nothing); words are plain strings for textContent.

import { api } from './dom.js';

const WORDS = {
  en: {
    left: {
      explanations: '{left} of {limit} questions left this hour',
      builds: '{left} of {limit} builds left this hour',
      tasks: '{left} of {limit} task runs left this hour',
      chat_messages: '{left} of {limit} messages left this hour',
    },
    none: {
      explanations: 'No questions left this hour (at most {limit}): more at {time}',
      builds: 'No builds left this hour (at most {limit}): more at {time}',
      tasks: 'No task runs left this hour (at most {limit}): more at {time}',
      chat_messages: 'No messages left this hour (at most {limit}): more at {time}',
    },
    again: {
      explanations: 'Explain again at {time}',
      builds: 'Build again at {time}',
      tasks: 'Run again at {time}',
      chat_messages: 'Send again at {time}',
    },
  },
  pt: {
    left: {
      explanations: '{left} de {limit} perguntas restantes nesta hora',
      builds: '{left} de {limit} construções restantes nesta hora',
      tasks: '{left} de {limit} execuções de tarefas restantes nesta hora',
      chat_messages: '{left} de {limit} mensagens restantes nesta hora',
    },
    none: {
      explanations: 'Sem perguntas nesta hora (no máximo {limit}): mais às {time}',
      builds: 'Sem construções nesta hora (no máximo {limit}): mais às {time}',
      tasks: 'Sem execuções de tarefas nesta hora (no máximo {limit}): mais às {time}',
      chat_messages: 'Sem mensagens nesta hora (no máximo {limit}): mais às {time}',
    },
    again: {
      explanations: 'Explicar de novo às {time}',
      builds: 'Construir de novo às {time}',
      tasks: 'Executar de novo às {time}',
      chat_messages: 'Enviar de novo às {time}',
    },
  },
};

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, k) => String(values[k] ?? ''));
}

/// The local clock time `secs` seconds after `now` (ms), as HH:MM.
export function clockAfter(secs, now = Date.now()) {
  const at = new Date(now + secs * 1000);
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
}

/// What to show for `route` given its `usage` (one entry of `/api/limits`' routes): the hint's
/// text, and at 0 left the button's words (`again`, else null).
export function limitWords(route, usage, lang, now = Date.now()) {
  const words = WORDS[lang] || WORDS.en;
  if (!usage || !words.left[route]) return { hint: '', again: null };
  if (usage.remaining > 0) return { hint: fill(words.left[route], { left: usage.remaining, limit: usage.limit }), again: null };
  const time = clockAfter(usage.frees_in_secs ?? 3600, now);
  return { hint: fill(words.none[route], { limit: usage.limit, time }), again: fill(words.again[route], { time }) };
}

const watched = []; // { route, button, hint, label }
let lang = 'en';
let timer = null;

/// Show `route`'s limit in `hint` and, at 0 left, on `button` (whose own words `label()` gives).
export function watchLimit(route, button, hint, label) {
  watched.push({ route, button, hint, label });
}

export function setLimitsLang(l) {
  lang = l;
}

/// Ask the server for the caller's limits and show them; again when the first used-up limit
/// comes back.
export async function refreshLimits() {
  let shown;
  try {
    shown = await api('/api/limits');
  } catch {
    return; // the hints are a nicety: the server still says why when a request is refused
  }
  clearTimeout(timer);
  let soonest = null;
  for (const w of watched) {
    const usage = shown.routes[w.route];
    const { hint, again } = limitWords(w.route, usage, lang);
    w.hint.textContent = hint;
    w.hint.classList.toggle('limit-none', again !== null);
    w.button.dataset.limited = again === null ? '' : 'yes';
    w.button.disabled = again !== null;
    w.button.textContent = again ?? w.label();
    if (again !== null) soonest = Math.min(soonest ?? Infinity, usage.frees_in_secs ?? 3600);
  }
  if (soonest !== null) timer = setTimeout(refreshLimits, (soonest + 1) * 1000);
}
