// The in-app assistant's logic that needs no page: its words (English, Portuguese), running a
// round of the model's tool calls (all at once, each with a timeout, answered as one batch in
// the calls' order, each output capped), what to do with the calls a reload left waiting, and
// the storage keys. assistant.js draws the panel (assistant-messages.js its conversation) and
// speaks to the server (assistant-server.js) with these.

export const OUTPUT_MAX = 48000; // characters of one tool's output sent back
export const TOOL_TIMEOUT_MS = 15000;
export const RELOADED = 'cancelled: the page was reloaded before this action ran';
export const RELOADED_WHILE =
  'cancelled: the page was reloaded while this action ran (it may have navigated); describe the page to see where things stand';

export const WORDS = {
  en: {
    title: 'Assistant',
    launcher: 'Assistant',
    new: 'New conversation',
    history: 'History',
    clear: 'Clear history',
    close: 'Close',
    message: 'Message',
    send: 'Send',
    placeholder: 'Ask about this app, or ask me to do something here…',
    empty: 'Ask anything about this app, or ask me to do something on this page.',
    no_history: 'No past conversations yet.',
    untitled: 'Untitled conversation',
    you: 'You',
    assistant: 'Assistant',
    thinking: 'Thinking…',
    writing: 'Writing…',
    reading: 'Reading the page…',
    clicking: 'Clicking "{name}"…',
    filling: 'Filling in "{name}"…',
    searching: 'Searching the docs…',
    running: 'Running {tool}…',
    resuming: 'Finishing what was left when the page reloaded…',
    read: 'Read the page',
    clicked: 'Clicked "{name}"',
    filled: 'Filled in "{name}"',
    searched: 'Searched the docs',
    ran: 'Ran {tool}',
    failed: '{what} failed: {message}',
    sources: 'Sources',
    retry: 'Retry',
    error: 'Something went wrong: {message}',
    unreachable: 'The assistant could not be reached ({message}).',
    round_limit: 'Stopped: that took more steps than allowed.',
    cancelled: 'The answer was cancelled.',
    cleared: 'History cleared.',
    element: 'the element',
    tool_error: '{tool} failed: {message}',
  },
  pt: {
    title: 'Assistente',
    launcher: 'Assistente',
    new: 'Nova conversa',
    history: 'Histórico',
    clear: 'Limpar histórico',
    close: 'Fechar',
    message: 'Mensagem',
    send: 'Enviar',
    placeholder: 'Pergunte sobre este app, ou peça para eu fazer algo aqui…',
    empty: 'Pergunte qualquer coisa sobre este app, ou peça para eu fazer algo nesta página.',
    no_history: 'Nenhuma conversa ainda.',
    untitled: 'Conversa sem título',
    you: 'Você',
    assistant: 'Assistente',
    thinking: 'Pensando…',
    writing: 'Escrevendo…',
    reading: 'Lendo a página…',
    clicking: 'Clicando em "{name}"…',
    filling: 'Preenchendo "{name}"…',
    searching: 'Buscando na documentação…',
    running: 'Rodando {tool}…',
    resuming: 'Terminando o que ficou pendente quando a página recarregou…',
    read: 'Leu a página',
    clicked: 'Clicou em "{name}"',
    filled: 'Preencheu "{name}"',
    searched: 'Buscou na documentação',
    ran: 'Rodou {tool}',
    failed: 'Falhou — {what}: {message}',
    sources: 'Fontes',
    retry: 'Tentar de novo',
    error: 'Algo deu errado: {message}',
    unreachable: 'Não foi possível falar com o assistente ({message}).',
    round_limit: 'Parei: foram necessários mais passos do que o permitido.',
    cancelled: 'A resposta foi cancelada.',
    cleared: 'Histórico limpo.',
    element: 'o elemento',
    tool_error: '{tool} falhou: {message}',
  },
};

/// 'pt' for a Portuguese language tag, else 'en'.
export function pickLang(tag) {
  return /^pt\b/i.test(String(tag || '')) ? 'pt' : 'en';
}

/// t(key, {vars}) in `lang`: the word, its {placeholders} filled; the key when there is none.
export function translator(lang) {
  const table = WORDS[lang] || WORDS.en;
  return (key, vars = {}) => {
    const text = table[key] ?? WORDS.en[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (m, k) => (vars[k] === undefined ? m : String(vars[k])));
  };
}

/// A tool call's arguments as an object (the server may send them as JSON text).
export function parseArgs(args) {
  if (args && typeof args === 'object') return args;
  if (typeof args === 'string' && args.trim()) {
    try {
      const v = JSON.parse(args);
      return v && typeof v === 'object' ? v : {};
    } catch {
      return {};
    }
  }
  return {};
}

/// An output as sent back: a string or a JSON value, at most `max` characters (a longer one
/// becomes its text cut, with how much was cut).
export function capOutput(output, max = OUTPUT_MAX) {
  if (output === undefined || output === null) return '';
  let text;
  if (typeof output === 'string') {
    text = output;
  } else {
    try {
      text = JSON.stringify(output);
    } catch {
      text = String(output);
    }
    if (text === undefined) text = String(output);
    if (text.length <= max) return output;
  }
  if (text.length <= max) return text;
  const tail = (n) => `\n… (cut: ${n} more characters)`;
  // The note's length depends on the number in it: settle both.
  let keep = Math.max(0, max - tail(text.length).length);
  while (keep > 0 && keep + tail(text.length - keep).length < max) keep += 1;
  while (keep > 0 && keep + tail(text.length - keep).length > max) keep -= 1;
  return text.slice(0, keep) + tail(text.length - keep);
}

/// The message of anything thrown or refused.
export function errorText(e) {
  if (e === undefined || e === null) return 'failed';
  if (typeof e === 'string') return e;
  return e.message || String(e);
}

/// Run one round of `calls` ([{id, name, arguments}]) with `tools` ({name: async (args,
/// {signal}) => output}): all at once, each given `timeoutMs`; one result per call, in the
/// calls' order: {id, output} or {id, error}. A tool that is not there is an error, as is one
/// that throws or times out. onStart(call) and onEnd(call, result) follow each.
export async function runRound(calls, tools, { timeoutMs = TOOL_TIMEOUT_MS, onStart = () => {}, onEnd = () => {} } = {}) {
  const one = async (call) => {
    const impl = Object.prototype.hasOwnProperty.call(tools, call.name) ? tools[call.name] : null;
    let result;
    if (typeof impl !== 'function') {
      result = { id: call.id, error: `unknown tool "${call.name}": this page does not offer it` };
      onEnd(call, result);
      return result;
    }
    onStart(call);
    const controller = new AbortController();
    let timer = 0;
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve({ id: call.id, error: 'timed out' });
      }, timeoutMs);
    });
    const work = (async () => {
      try {
        const output = await impl(parseArgs(call.arguments), { signal: controller.signal });
        return { id: call.id, output: capOutput(output) };
      } catch (e) {
        return { id: call.id, error: capOutput(errorText(e)) };
      }
    })();
    result = await Promise.race([work, timeout]);
    clearTimeout(timer);
    onEnd(call, result);
    return result;
  };
  return Promise.all((calls || []).map(one));
}

/// What to do with the calls a turn was waiting on when the page went away: read-only ones
/// run again; the others are never re-run (they change the page) and are answered with why.
/// `started`: ids of calls this page had begun running before it went away.
export function planPending(calls, { started = new Set() } = {}) {
  return (calls || []).map((call) =>
    call.read_only
      ? { call, rerun: true }
      : { call, rerun: false, result: { id: call.id, error: started.has(call.id) ? RELOADED_WHILE : RELOADED } },
  );
}

/// The tools to offer in a message: those the server lets this caller use that the page has.
export function activeTools(serverTools, impls) {
  return (serverTools || []).map((t) => t.name).filter((n) => typeof impls[n] === 'function');
}

/// What to call the target of a click or fill in the status line.
export function targetName(args, t) {
  const a = parseArgs(args);
  return String(a.description || a.ref || t('element'));
}

/// The status line while a tool runs: "Clicking "Build"…".
export function toolStatus(name, args, t) {
  switch (name) {
    case 'describe_app_ui':
      return t('reading');
    case 'click_element':
      return t('clicking', { name: targetName(args, t) });
    case 'fill_form_element':
      return t('filling', { name: targetName(args, t) });
    case 'search_documents':
      return t('searching');
    default:
      return t('running', { tool: name });
  }
}

/// What a finished tool did, for its chip: "Clicked "Build"", or what went wrong.
export function toolDone(name, args, result, t) {
  let did;
  switch (name) {
    case 'describe_app_ui':
      did = t('read');
      break;
    case 'click_element':
      did = t('clicked', { name: targetName(args, t) });
      break;
    case 'fill_form_element':
      did = t('filled', { name: targetName(args, t) });
      break;
    case 'search_documents':
      did = t('searched');
      break;
    default:
      did = t('ran', { tool: name });
  }
  if (result && result.error !== undefined) {
    const first = String(result.error).split('\n')[0];
    const doing = toolStatus(name, args, t).replace(/…$/, '');
    return t('failed', { what: doing, message: first.length > 160 ? `${first.slice(0, 159)}…` : first });
  }
  return did;
}

/// A stored part the panel has no drawing for, as text.
export function partText(part) {
  if (!part || typeof part !== 'object') return String(part ?? '');
  if (typeof part.text === 'string') return part.text;
  if (typeof part.message === 'string') return part.message;
  try {
    return JSON.stringify(part);
  } catch {
    return String(part.type || '');
  }
}

/// Where the panel keeps things: the visitor token (localStorage), the open conversation and
/// the calls begun (sessionStorage, this tab).
export function storageKeys(embedKey) {
  const who = embedKey || 'session';
  return {
    token: `wright-assistant:${embedKey || ''}`,
    open: `wright-assistant:open:${who}`,
    started: `wright-assistant:started:${who}`,
  };
}

/// A source of a documents part as one line: `source › heading`.
export function sourceLine(hit) {
  const parts = [hit?.source, hit?.heading].filter((p) => p && String(p).trim());
  return parts.join(' › ');
}
